"""Small rules of the bottom layer: error reasons, failure kinds, dates, locks, secrets, URLs."""

from __future__ import annotations

import datetime as dt
import os
import pickle
import warnings

import pandas as pd
import pytest
import requests

from toolkit._core.auth import Secret, TokenProvider
from toolkit._core.connection import Connection
from toolkit._core.http import Reply, _failure, _limit_headers, error_text, problem_of
from toolkit._core.lock import FileLock
from toolkit._core.settings import Settings
from toolkit._core.windows import Window, _ambiguous_date, iso, to_utc
from toolkit.errors import ApiError, AuthError, ConfigError, Interrupted


def test_error_text_puts_a_problems_errors_after_its_detail_and_falls_back_to_the_status() -> None:
    problem = {"detail": "invalid request: body.name", "errors": [{"field": "name", "detail": "x"}]}
    assert error_text(problem, 422) == "invalid request: body.name (name: x)"
    assert error_text(None, 503) == "HTTP 503 Service Unavailable"
    assert error_text(None, None) == "no answer"


def test_problem_of_keeps_a_json_body_and_has_none_without_text() -> None:
    assert problem_of(Reply(409, {"detail": "exists"})) == {"detail": "exists"}
    assert problem_of(Reply(409, None, "HTTP 409")) is None


def test_a_bad_url_is_invalid_and_a_read_timeout_is_lost() -> None:
    assert _failure(requests.exceptions.MissingSchema("no scheme"))[0] == "invalid_url"
    assert _failure(requests.exceptions.ReadTimeout("read timed out"))[0] == "lost"


def test_only_the_rate_limit_headers_are_kept() -> None:
    headers = requests.structures.CaseInsensitiveDict({"RateLimit": "r=0", "Server": "x"})
    assert _limit_headers(headers) == {"ratelimit": "r=0"}


def test_api_errors_say_the_detail_and_which_credentials_are_refused() -> None:
    assert str(ApiError(404, {"title": "Not Found", "detail": "gone"}, "GET", "/x")) == (
        "GET /x -> 404: gone"
    )
    assert AuthError(401, {"error": "invalid_client"}).refuses_credentials
    interrupted = Interrupted("stopped")
    assert interrupted.result is None and interrupted.replies == [] and interrupted.report is None


def test_dates_read_one_way_only_are_not_ambiguous() -> None:
    assert _ambiguous_date("2026-11-12") is None and _ambiguous_date("13/12/2026") is None
    assert to_utc("12/13/2026", "since") == pd.Timestamp("2026-12-13", tz="UTC")
    end = iso(to_utc(dt.date(2026, 11, 22), "on_or_before", end=True))
    assert end == "2026-11-22T23:59:59.999Z"
    assert to_utc(pd.Timestamp("2026-11-22"), "on_or_before", end=True) == pd.Timestamp(
        "2026-11-22", tz="UTC"
    )
    assert iso(to_utc("2026-11-22T12:00", "on_or_before", end=True)) == "2026-11-22T12:00:00.000Z"
    assert iso(pd.Timestamp("2026-03-01 10:30:00.123456789+01:00")) == (
        "2026-03-01T09:30:00.123456Z"
    )


def test_day_windows_end_at_midnight_and_hour_windows_step_from_the_start() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        days = Window.of("2026-11-01T18:00", "2026-11-03T12:00").split("1D")
        hours = Window.of("2026-11-01T01:00", "2026-11-01T12:00").split("4h")
    assert [b.strftime("%d %H") for _, b in days] == ["02 00", "03 00", "03 12"]
    assert [b.strftime("%H:%M") for _, b in hours] == ["05:00", "09:00", "12:00"]


def test_a_released_lock_leaves_no_file(tmp_path) -> None:
    path = tmp_path / "x.lock"
    with FileLock(path):
        assert path.exists()
    assert not os.path.exists(path)


def test_secrets_pickle_as_the_mask_and_a_token_needs_an_audience() -> None:
    assert pickle.loads(pickle.dumps(Secret("hunter2"))).reveal() == "********"
    with pytest.raises(ConfigError, match="TOOLKIT_AUDIENCE"):
        TokenProvider("http://127.0.0.1:9/t", "id", "secret", "")
    provider = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
    provider._token = Secret("abc")
    provider.invalidate(Secret("abc"))
    assert provider._token is None
    with pytest.raises(ConfigError, match=r"missing setting\(s\): audience"):
        Settings("c", "app", "s", "http://127.0.0.1:1", "http://127.0.0.1:2")


def test_ids_with_slashes_and_spaces_address_their_own_record() -> None:
    conn = Connection(Settings("c1", "i", "s", "http://a", "http://t", audience="aud"))
    assert conn.url("user", userId="a/b") == "http://a/api/v1/customers/c1/users/a%2Fb"
    assert conn.url("user", userId="u 1") == "http://a/api/v1/customers/c1/users/u%201"
