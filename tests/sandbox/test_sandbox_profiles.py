"""Sandbox profiles: every setting of every switch, seen over HTTP from a running sandbox.

One sandbox for the module (``toolkit.sandbox.running``); each test works on fresh customers
and sets their profiles through the administration route (``Admin.set_profile`` or a plain
``PUT``), so no switch leaks into another test. Plain ``requests``, no mocks; windows of a
second and small numbers keep the module short.
"""

from __future__ import annotations

import email.utils
import json
import re
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import TIMEOUT, fetch_token, read_env, sandbox_process
from toolkit.sandbox import (
    DEFAULT_PROFILE,
    PROFILES,
    Admin,
    AdminError,
    Sandbox,
    SandboxError,
    running,
)
from toolkit.sandbox._admin import KEEP
from toolkit.sandbox._cli import main, read_profile
from toolkit.sandbox._profiles import Profile, published_value, validate_profile

PROBLEM = "application/problem+json"
NOBODY = "/api/v1/customers/{cid}/users/nobody"
CLIENT = {"externalId": "C1", "name": "Acme", "callSign": "A", "description": ""}
INITIATIVE = {
    "billingType": "billable",
    "externalId": "M1",
    "name": "Acme v. Roe",
    "description": "",
    "callSign": "M1",
    "clientExternalId": "C1",
    "unitIncrements": 360,
    "status": "active",
}
T0 = datetime(2025, 3, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with running() as sandbox:
        yield sandbox


@dataclass
class Customer:
    """A fresh customer of the module's sandbox: its token, an HTTP session, an admin client."""

    url: str
    customer_id: str
    client_id: str
    client_secret: str
    audience: str
    token: str
    http: requests.Session
    admin: Admin

    @property
    def profile_url(self) -> str:
        return f"{self.url}/sandbox/v1/customers/{self.customer_id}/profile"

    def api(
        self, method: str, path: str, *, token: str | None = "", **kwargs: Any
    ) -> requests.Response:
        """Call ``{url}{path}`` (``{cid}`` is the customer) with the token (None: none)."""
        kwargs.setdefault("timeout", TIMEOUT)
        headers = {} if token is None else {"Authorization": f"Bearer {token or self.token}"}
        headers.update(kwargs.pop("headers", None) or {})
        return self.http.request(
            method, self.url + path.format(cid=self.customer_id), headers=headers, **kwargs
        )

    def burst(self, n: int) -> list[requests.Response]:
        """``n`` quick requests that reach a route and answer 404 when let through."""
        return [self.api("GET", NOBODY) for _ in range(n)]

    def new_token(self) -> requests.Response:
        return self.http.post(
            f"{self.url}/api/v1/oauth/token",
            timeout=TIMEOUT,
            json={
                "audience": self.audience,
                "grant_type": "client_credentials",
                "client_id": self.client_id,
                "client_secret": self.client_secret,
            },
        )

    def imports(self, kind: str, body: dict[str, Any]) -> requests.Response:
        return self.api("POST", f"/api/v1/customers/{{cid}}/{kind}/import", json=body)

    def export(self, after: datetime, before: datetime) -> requests.Response:
        return self.api(
            "GET",
            "/api/v2/customers/{cid}/entries/export",
            params={"releasedAfter": after.isoformat(), "releasedOnOrBefore": before.isoformat()},
        )


@pytest.fixture
def new_customer(sb: Sandbox) -> Iterator[Callable[[], Customer]]:
    made: list[Customer] = []

    def make() -> Customer:
        creds = sb.admin.create_customer("Profile firm")
        token = fetch_token(sb.url, creds["clientId"], creds["clientSecret"], creds["audience"])
        customer = Customer(
            sb.url,
            creds["customerId"],
            creds["clientId"],
            creds["clientSecret"],
            creds["audience"],
            token,
            requests.Session(),
            Admin(sb.url, customer_id=creds["customerId"]),
        )
        made.append(customer)
        return customer

    yield make
    for customer in made:
        customer.http.close()
        customer.admin.close()


@pytest.fixture
def customer(new_customer: Callable[[], Customer]) -> Customer:
    return new_customer()


def released_entries(c: Customer, hours: list[int]) -> tuple[str, list[str]]:
    """Import C1 and M1, make a user and one entry released at ``T0 + h`` hours for each h."""
    assert c.imports("clients", CLIENT).status_code == 201
    assert c.imports("initiatives", INITIATIVE).status_code == 201
    user = c.admin.create_user("TK1", "Ann", "ann@example.com")["_id"]
    ids = []
    for h in hours:
        entry = c.admin.create_entry(
            user, "M1", work_date="2025-03-01", increment_duration_in_seconds=600
        )
        c.admin.release_entry(user, entry["_id"], at=T0 + timedelta(hours=h))
        ids.append(entry["_id"])
    return user, ids


# -- reading and setting profiles ------------------------------------------------------------


def test_a_new_customer_has_the_default_profile(customer: Customer) -> None:
    answer = customer.http.get(customer.profile_url, timeout=TIMEOUT)
    assert answer.status_code == 200
    assert answer.json() == DEFAULT_PROFILE
    assert DEFAULT_PROFILE["tokenLifetimeSeconds"] == 86400
    assert customer.admin.default_profile() == DEFAULT_PROFILE


def test_put_sets_the_given_switches_and_the_others_keep_their_value(customer: Customer) -> None:
    first = customer.http.put(customer.profile_url, json={"reimport": "conflict"}, timeout=TIMEOUT)
    assert first.status_code == 200
    assert (first.json()["reimport"], first.json()["ackRepeat"]) == ("conflict", "200")
    second = customer.http.put(customer.profile_url, json={"ackRepeat": "409"}, timeout=TIMEOUT)
    assert (second.json()["reimport"], second.json()["ackRepeat"]) == ("conflict", "409")
    assert customer.http.put(customer.profile_url, json={}, timeout=TIMEOUT).json() == second.json()
    assert customer.http.get(customer.profile_url, timeout=TIMEOUT).json() == second.json()
    assert customer.admin.get_profile() == second.json()


def test_a_nested_switch_is_replaced_whole_with_its_defaults(customer: Customer) -> None:
    profile = customer.admin.set_profile(
        rateLimit={"kind": "token-bucket", "perSecond": 2.5},
        tokenFaults={"rate": 0.5},
        latency={"p50Ms": 10},
    )
    assert profile["rateLimit"] == {"kind": "token-bucket", "perSecond": 2.5, "burst": 3}
    assert profile["tokenFaults"] == {"rate": 0.5, "statuses": [503], "retryAfterSeconds": 1}
    assert profile["latency"] == {"p50Ms": 10, "p99Ms": 10, "stallRate": 0.0, "stallMs": 0}


@pytest.mark.parametrize(
    "body",
    [
        {"nope": 1},
        {"reimport": "never"},
        {"errorBody": None},
        {"tokenLifetimeSeconds": 0},
        {"tokenLifetimeSeconds": "5"},
        {"tokenFaults": {"rate": 2}},
        {"tokenFaults": {"statuses": [404]}},
        {"rateLimit": {"kind": "leaky-bucket", "perSecond": 1}},
        {"rateLimit": {"kind": "fixed-window", "limit": 3}},
        {"rateLimit": {"kind": "concurrency", "maxInFlight": 1, "status": 500}},
        {"latency": {"p50Ms": 100, "p99Ms": 50}},
        {"exportRefusal": 404},
        {"exportMaxEntries": -1},
        {"importAnswer": "201"},
        [{"reimport": "conflict"}],
    ],
    ids=lambda body: json.dumps(body)[:40],
)
def test_unknown_switches_and_bad_values_are_422_problems_that_change_nothing(
    customer: Customer, body: Any
) -> None:
    before = customer.admin.get_profile()
    answer = customer.http.put(customer.profile_url, json=body, timeout=TIMEOUT)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["status"] == 422 and answer.json()["errors"]
    assert customer.admin.get_profile() == before


def test_the_profile_of_an_unknown_customer_is_404(sb: Sandbox) -> None:
    url = f"{sb.url}/sandbox/v1/customers/{'0' * 24}/profile"
    assert requests.get(url, timeout=TIMEOUT).status_code == 404
    assert requests.put(url, json={"reimport": "conflict"}, timeout=TIMEOUT).status_code == 404
    with pytest.raises(AdminError) as caught:
        sb.admin.set_profile(customer_id="0" * 24, reimport="conflict")
    assert caught.value.status == 404


def test_delete_forgets_the_customers_switches(customer: Customer) -> None:
    customer.admin.set_profile(reimport="conflict", importAnswer="204")
    answer = customer.http.delete(customer.profile_url, timeout=TIMEOUT)
    assert answer.status_code == 200 and answer.json() == DEFAULT_PROFILE
    assert customer.admin.reset_profile() == DEFAULT_PROFILE


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_preset_applies_as_a_whole_profile(customer: Customer, name: str) -> None:
    profile = customer.admin.set_profile(**PROFILES[name])
    for switch, value in PROFILES[name].items():
        assert profile[switch] == value, switch
    assert customer.admin.reset_profile() == DEFAULT_PROFILE


def test_profiles_are_per_customer(new_customer: Callable[[], Customer]) -> None:
    a, b = new_customer(), new_customer()
    a.admin.set_profile(importAnswer="204")
    assert a.imports("clients", CLIENT).status_code == 204
    assert b.imports("clients", CLIENT).status_code == 201


# -- tokenLifetimeSeconds, tokenFaults ---------------------------------------------------------


def test_a_5_second_token_expires_after_5_seconds(customer: Customer) -> None:
    customer.admin.set_profile(tokenLifetimeSeconds=5)
    issued = time.monotonic()
    answer = customer.new_token()
    assert answer.status_code == 200 and answer.json()["expires_in"] == 5
    token = answer.json()["access_token"]
    assert customer.api("GET", NOBODY, token=token).status_code == 404  # accepted
    time.sleep(max(0.0, issued + 5.2 - time.monotonic()))
    expired = customer.api("GET", NOBODY, token=token)
    assert expired.status_code == 401
    assert 'error="invalid_token"' in expired.headers["WWW-Authenticate"]
    assert customer.api("GET", NOBODY).status_code == 404  # a token from before: 86400 s


@pytest.mark.parametrize(
    "status, retry_after, header",
    [
        (429, 3, "3"),
        (503, 1, "1"),
        (503, None, None),
        (500, 2, None),
    ],
)
def test_token_faults_answer_their_status_and_retry_after(
    customer: Customer, status: int, retry_after: int | None, header: str | None
) -> None:
    customer.admin.set_profile(
        tokenFaults={"rate": 1, "statuses": [status], "retryAfterSeconds": retry_after}
    )
    answer = customer.new_token()
    assert answer.status_code == status
    assert answer.headers.get("Retry-After") == header
    assert answer.headers["content-type"] == PROBLEM and answer.json()["status"] == status
    assert customer.api("GET", NOBODY).status_code == 404  # the token route only


def test_seeded_token_faults_draw_the_same_way_every_time(
    new_customer: Callable[[], Customer],
) -> None:
    runs = []
    for _ in range(2):
        customer = new_customer()
        customer.admin.set_profile(tokenFaults={"rate": 0.5, "statuses": [503], "seed": 8})
        runs.append([customer.new_token().status_code for _ in range(8)])
    assert runs[0] == runs[1] == [503, 503, 503, 200, 200, 503, 503, 503]


def test_token_faults_rate_is_a_fraction_and_other_customers_are_spared(
    new_customer: Callable[[], Customer],
) -> None:
    faulty, spared = new_customer(), new_customer()
    faulty.admin.set_profile(tokenFaults={"rate": 0.5, "statuses": [503]})
    statuses = [faulty.new_token().status_code for _ in range(40)]
    assert set(statuses) == {200, 503}
    assert 5 <= statuses.count(503) <= 35
    assert {spared.new_token().status_code for _ in range(5)} == {200}


# -- rateLimit, retryAfter, rateLimitHeaders ---------------------------------------------------


def test_a_token_bucket_lets_a_burst_through_then_answers_429(
    new_customer: Callable[[], Customer],
) -> None:
    limited, other = new_customer(), new_customer()
    limited.admin.set_profile(rateLimit={"kind": "token-bucket", "perSecond": 1, "burst": 2})
    answers = limited.burst(3)
    assert [a.status_code for a in answers] == [404, 404, 429]
    assert answers[2].headers["Retry-After"] == "1"
    assert answers[2].headers["content-type"] == PROBLEM
    assert "rate limit" in answers[2].json()["detail"]
    assert {a.status_code for a in other.burst(3)} == {404}  # a bucket per customer


def test_a_fixed_window_counts_requests_per_window(customer: Customer) -> None:
    customer.admin.set_profile(
        rateLimit={"kind": "fixed-window", "limit": 3, "windowSeconds": 1},
        rateLimitHeaders="x-ratelimit",
    )
    opened = time.monotonic()
    answers = customer.burst(5)
    assert [a.status_code for a in answers] == [404, 404, 404, 429, 429]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0", "0"]
    assert {a.headers["X-RateLimit-Limit"] for a in answers} == {"3"}
    assert all(0 <= int(a.headers["X-RateLimit-Reset"]) <= 1 for a in answers)
    assert answers[3].headers["Retry-After"] == "1"
    time.sleep(max(0.0, opened + 1.05 - time.monotonic()))
    again = customer.api("GET", NOBODY)
    assert again.status_code == 404 and again.headers["X-RateLimit-Remaining"] == "2"


@pytest.mark.parametrize("status", [429, 503])
def test_a_concurrency_cap_answers_beyond_max_in_flight(customer: Customer, status: int) -> None:
    customer.admin.set_profile(
        rateLimit={"kind": "concurrency", "maxInFlight": 2, "status": status},
        latency={"p50Ms": 400},
    )
    url = customer.url + NOBODY.format(cid=customer.customer_id)
    headers = {"Authorization": f"Bearer {customer.token}"}
    with ThreadPoolExecutor(5) as pool:
        answers = list(
            pool.map(lambda _: requests.get(url, headers=headers, timeout=TIMEOUT), range(5))
        )
    codes = sorted(a.status_code for a in answers)
    assert codes == sorted([404, 404] + [status] * 3)
    refused = next(a for a in answers if a.status_code == status)
    assert refused.headers["Retry-After"] == "1"
    assert "in flight" in refused.json()["detail"]
    assert customer.api("GET", NOBODY).status_code == 404  # every place was given back


def test_rate_limit_null_is_no_limit(customer: Customer) -> None:
    customer.admin.set_profile(rateLimit={"kind": "token-bucket", "perSecond": 1, "burst": 1})
    assert [a.status_code for a in customer.burst(2)] == [404, 429]
    customer.admin.set_profile(rateLimit=None)
    assert {a.status_code for a in customer.burst(6)} == {404}


@pytest.mark.parametrize("style", ["seconds", "http-date", "absent"])
def test_retry_after_forms(customer: Customer, style: str) -> None:
    customer.admin.set_profile(
        rateLimit={"kind": "token-bucket", "perSecond": 0.5, "burst": 1}, retryAfter=style
    )
    limited = customer.burst(2)[1]
    assert limited.status_code == 429
    if style == "seconds":
        assert limited.headers["Retry-After"] == "2"
    elif style == "http-date":
        when = email.utils.parsedate_to_datetime(limited.headers["Retry-After"])
        ahead = (when - datetime.now(UTC)).total_seconds()
        assert -1 <= ahead <= 4, limited.headers["Retry-After"]
        assert limited.headers["Retry-After"].endswith(" GMT")
    else:
        assert "Retry-After" not in limited.headers


def test_retry_after_form_applies_to_token_faults_too(customer: Customer) -> None:
    customer.admin.set_profile(
        retryAfter="http-date", tokenFaults={"rate": 1, "statuses": [503], "retryAfterSeconds": 2}
    )
    answer = customer.new_token()
    assert answer.status_code == 503
    assert email.utils.parsedate_to_datetime(answer.headers["Retry-After"]).tzinfo is not None


def test_ietf_rate_limit_headers_on_every_answer(customer: Customer) -> None:
    customer.admin.set_profile(
        rateLimit={"kind": "token-bucket", "perSecond": 2, "burst": 4}, rateLimitHeaders="ietf"
    )
    missing = customer.api("GET", NOBODY)
    created = customer.imports("clients", CLIENT)
    assert (missing.status_code, created.status_code) == (404, 201)
    for answer, left in ((missing, 3), (created, 2)):
        assert answer.headers["RateLimit-Policy"] == '"token-bucket";q=4;w=2'
        assert re.fullmatch(rf'"token-bucket";r={left};t=\d+', answer.headers["RateLimit"])
        assert "X-RateLimit-Limit" not in answer.headers


def test_no_rate_limit_headers_with_none_or_without_a_limit(customer: Customer) -> None:
    customer.admin.set_profile(rateLimitHeaders="ietf")  # no limit set
    assert "RateLimit" not in customer.api("GET", NOBODY).headers
    customer.admin.set_profile(
        rateLimit={"kind": "token-bucket", "perSecond": 5}, rateLimitHeaders="none"
    )
    headers = customer.api("GET", NOBODY).headers
    assert not {"RateLimit", "RateLimit-Policy", "X-RateLimit-Limit"} & set(headers)


def test_the_rate_limit_route_sets_the_default_token_bucket(
    sb: Sandbox, new_customer: Callable[[], Customer]
) -> None:
    limited, exempt = new_customer(), new_customer()
    exempt.admin.set_profile(rateLimit=None)  # its own setting wins over the default
    try:
        settings = sb.admin.set_rate_limit(1, burst=2)
        assert (settings["perSecond"], settings["burst"]) == (1.0, 2)
        bucket = {"kind": "token-bucket", "perSecond": 1.0, "burst": 2}
        assert sb.admin.default_profile()["rateLimit"] == bucket
        assert limited.admin.get_profile()["rateLimit"] == bucket
        assert [a.status_code for a in limited.burst(3)] == [404, 404, 429]
        assert {a.status_code for a in exempt.burst(3)} == {404}
        assert sb.admin.rate_limit()["counters"]["limited"] >= 1
    finally:
        off = sb.admin.set_rate_limit(None)
    assert off["perSecond"] is None and sb.admin.default_profile()["rateLimit"] is None


# -- importAnswer, reimport --------------------------------------------------------------------


@pytest.mark.parametrize(
    "style, status",
    [
        ("201-record", 201),
        ("200-record", 200),
        ("204", 204),
        ("202", 202),
    ],
)
def test_import_answer_and_the_record_is_stored(
    customer: Customer, style: str, status: int
) -> None:
    customer.admin.set_profile(importAnswer=style)
    answers = [
        customer.imports("clients", CLIENT),
        customer.imports("initiatives", INITIATIVE),
        customer.imports(
            "code-types",
            {
                "externalId": "T",
                "name": "T",
                "semanticType": None,
                "customerDefaultable": True,
                "userDefaultable": True,
            },
        ),
        customer.imports(
            "codes", {"externalId": "K", "name": "K", "description": "", "codeTypeExternalId": "T"}
        ),
        customer.api(
            "POST", "/api/v1/customers/{cid}/initiatives/M1/codes", json={"codeExternalIds": ["K"]}
        ),
    ]
    for answer in answers:
        assert answer.status_code == status, answer.text
        if style == "204":
            assert answer.content == b""
        elif style == "202":
            assert answer.json() == {"status": "accepted"}
        else:
            assert answer.json().get("externalId", "M1") in ("C1", "M1", "T", "K")
    if style in ("201-record", "200-record"):
        assert answers[0].json()["_id"] and answers[0].json()["name"] == "Acme"
    assert [c["name"] for c in customer.admin.records("clients")] == ["Acme"]
    assert [i["externalId"] for i in customer.admin.records("initiatives")] == ["M1"]


def test_reimport_upsert_updates_the_record(customer: Customer) -> None:
    assert customer.imports("clients", CLIENT).status_code == 201
    again = customer.imports("clients", {**CLIENT, "name": "Acme Ltd"})
    assert (again.status_code, again.content) == (201, b"")  # importAnswer 201-empty
    assert [c["name"] for c in customer.admin.records("clients")] == ["Acme Ltd"]


def test_reimport_conflict_is_a_409_and_leaves_the_record_unchanged(customer: Customer) -> None:
    customer.admin.set_profile(reimport="conflict")
    assert customer.imports("clients", CLIENT).status_code == 201
    before = customer.admin.records("clients")
    again = customer.imports("clients", {**CLIENT, "name": "Acme Ltd"})
    assert again.status_code == 409
    assert again.headers["content-type"] == PROBLEM
    assert again.json()["type"].endswith("already-exists")
    assert again.json()["externalId"] == "C1"
    assert customer.admin.records("clients") == before  # name and updatedAt unchanged
    assert customer.imports("clients", {**CLIENT, "externalId": "C2"}).status_code == 201
    code_type = {
        "externalId": "C1",
        "name": "c1",
        "semanticType": None,
        "customerDefaultable": False,
        "userDefaultable": False,
    }
    assert customer.imports("code-types", code_type).status_code == 201  # another table
    assert customer.imports("code-types", code_type).status_code == 409


# -- errorBody ---------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["problem", "message", "text", "empty"])
def test_error_body_of_interface_errors(customer: Customer, style: str) -> None:
    customer.admin.set_profile(errorBody=style)
    answers = {
        404: customer.api("GET", NOBODY),
        422: customer.imports("clients", {"externalId": "C1"}),
        401: customer.api("GET", NOBODY, token=None),
    }
    for status, answer in answers.items():
        assert answer.status_code == status
        media = answer.headers.get("content-type", "")
        if style == "problem":
            assert media == PROBLEM and answer.json()["status"] == status
        elif style == "message":
            assert media == "application/json"
            assert list(answer.json()) == ["message"] and answer.json()["message"]
        elif style == "text":
            assert media.startswith("text/plain") and answer.text.strip()
        else:
            assert answer.content == b"" and not media
    if style == "text":
        assert answers[404].text == "no user 'nobody' for this customer"
    assert customer.api("GET", NOBODY.replace("nobody", "x")).status_code == 404
    # administration routes keep problem bodies
    bad = customer.http.put(customer.profile_url, json={"nope": 1}, timeout=TIMEOUT)
    assert bad.status_code == 422 and bad.headers["content-type"] == PROBLEM


def test_error_body_shapes_rate_limited_faulted_and_oversized_answers(customer: Customer) -> None:
    customer.admin.set_profile(
        errorBody="message",
        rateLimit={"kind": "token-bucket", "perSecond": 1, "burst": 1},
        tokenFaults={"rate": 1, "statuses": [503]},
    )
    limited = customer.burst(2)[1]
    assert limited.status_code == 429 and "rate limit" in limited.json()["message"]
    assert limited.headers["Retry-After"] == "1"
    faulted = customer.new_token()
    assert faulted.status_code == 503 and list(faulted.json()) == ["message"]
    customer.admin.set_profile(rateLimit=None)
    oversized = customer.api(
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        data=b"x" * (4 * 1024 * 1024 + 1),
        headers={"Content-Type": "application/json"},
    )
    assert oversized.status_code == 413 and list(oversized.json()) == ["message"]


# -- ackRepeat ---------------------------------------------------------------------------------


@pytest.mark.parametrize("setting, status", [("200", 200), ("409", 409), ("422", 422)])
def test_ack_repeat(customer: Customer, setting: str, status: int) -> None:
    user, (entry,) = released_entries(customer, [1])
    customer.admin.set_profile(ackRepeat=setting)
    path = f"/api/v1/customers/{{cid}}/users/{user}/entries/{entry}"
    first = customer.api("POST", path + "/release-succeeded", json={"externalId": "X1"})
    assert first.status_code == 200 and first.content == b""  # ackAnswer 200-empty
    assert customer.admin.records("entries")[0]["state"] == "succeeded"
    again = customer.api("POST", path + "/release-succeeded", json={"externalId": "X1"})
    assert again.status_code == status
    if status == 200:
        assert again.content == first.content
    else:
        assert again.json()["type"].endswith("already-acknowledged")
        assert again.json()["state"] == "succeeded"
    other = customer.api("POST", path + "/release-failed", json={"errors": ["x"]})
    assert other.status_code == 409  # another acknowledgement stays a conflict
    assert customer.admin.records("entries")[0]["externalId"] == "X1"


def test_ack_repeat_applies_to_release_failed_too(customer: Customer) -> None:
    user, (entry,) = released_entries(customer, [1])
    customer.admin.set_profile(ackRepeat="422")
    path = f"/api/v1/customers/{{cid}}/users/{user}/entries/{entry}/release-failed"
    assert customer.api("POST", path, json={"errors": ["no matter"]}).status_code == 200
    assert customer.api("POST", path, json={"errors": ["no matter"]}).status_code == 422


# -- exportMaxEntries, exportRefusal, exportMaxWindowDays --------------------------------------


def test_an_export_window_over_max_entries_is_refused_with_the_set_status(
    customer: Customer,
) -> None:
    released_entries(customer, [1, 2, 3])
    whole, two = (T0, T0 + timedelta(days=1)), (T0, T0 + timedelta(hours=2))
    for refusal in (400, 413, 422):
        customer.admin.set_profile(exportMaxEntries=2, exportRefusal=refusal)
        refused = customer.export(*whole)
        assert refused.status_code == refusal
        assert refused.headers["content-type"] == PROBLEM
        body = refused.json()
        assert body["type"].endswith("export-too-large")
        assert (body["entries"], body["maxEntries"]) == (3, 2)
        served = customer.export(*two)
        assert served.status_code == 200 and len(served.json()) == 2
    customer.admin.set_profile(exportMaxEntries=None)
    assert len(customer.export(*whole).json()) == 3


def test_an_export_window_longer_than_max_days_is_400(customer: Customer) -> None:
    released_entries(customer, [1])
    customer.admin.set_profile(exportMaxWindowDays=1)
    refused = customer.export(T0, T0 + timedelta(days=2))
    assert refused.status_code == 400 and refused.json()["type"].endswith("window-too-long")
    assert refused.json()["maxWindowDays"] == 1
    assert customer.export(T0, T0 + timedelta(days=1)).status_code == 200
    customer.admin.set_profile(exportMaxWindowDays=0.5)
    assert customer.export(T0, T0 + timedelta(days=1)).status_code == 400
    customer.admin.set_profile(exportMaxWindowDays=None)
    assert customer.export(T0, T0 + timedelta(days=3650)).status_code == 200


# -- latency -----------------------------------------------------------------------------------


def _timed(c: Customer, **kwargs: Any) -> tuple[float, requests.Response]:
    start = time.monotonic()
    answer = c.api("GET", NOBODY, **kwargs)
    return time.monotonic() - start, answer


def test_latency_adds_its_median_delay(customer: Customer) -> None:
    plain, _ = _timed(customer)
    customer.admin.set_profile(latency={"p50Ms": 300})
    slow, answer = _timed(customer)
    assert answer.status_code == 404
    assert slow >= 0.3 > plain


def test_latency_has_a_long_tail(customer: Customer) -> None:
    customer.admin.set_profile(latency={"p50Ms": 40, "p99Ms": 400})
    times = [_timed(customer)[0] for _ in range(12)]
    assert statistics.median(times) >= 0.01
    assert max(times) - min(times) > 0.005  # drawn, not constant
    assert max(times) < 1.6 + 1  # capped at four times p99Ms (plus the request itself)


def test_a_stall_outlasts_a_read_timeout_without_blocking_the_server(
    new_customer: Callable[[], Customer],
) -> None:
    stalled, other = new_customer(), new_customer()
    stalled.admin.set_profile(latency={"stallRate": 1, "stallMs": 1500})
    url = stalled.url + NOBODY.format(cid=stalled.customer_id)
    headers = {"Authorization": f"Bearer {stalled.token}"}
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(requests.get, url, headers=headers, timeout=0.6)
        time.sleep(0.1)
        quick, answer = _timed(other)
        assert answer.status_code == 404 and quick < 0.5  # served during the stall
        with pytest.raises(requests.exceptions.ReadTimeout):
            waiting.result()


# -- running(profile=...), toolkit sandbox --profile -------------------------------------------


def test_running_sets_the_demo_customers_profile() -> None:
    with running(profile={"importAnswer": "204", "reimport": "conflict"}) as sandbox:
        assert sandbox.admin.get_profile()["importAnswer"] == "204"
        token = fetch_token(sandbox.url, sandbox.client_id, sandbox.client_secret, sandbox.audience)
        answer = requests.post(
            f"{sandbox.url}/api/v1/customers/{sandbox.customer_id}/clients/import",
            json=CLIENT,
            headers={"Authorization": f"Bearer {token}"},
            timeout=TIMEOUT,
        )
        assert answer.status_code == 204
        other = sandbox.admin.create_customer()["customerId"]
        assert sandbox.admin.get_profile(customer_id=other) == DEFAULT_PROFILE


def test_running_refuses_a_bad_profile() -> None:
    with pytest.raises(SandboxError, match="nope"), running(profile={"nope": 1}):
        pass


def test_cli_profile_file_sets_the_default_profile(tmp_path: Path) -> None:
    switches = {"errorBody": "text", "importAnswer": "202"}
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(switches))
    env_file = tmp_path / ".env"
    with sandbox_process(tmp_path / "s.db", env_file, ["--profile", str(profile)]) as (_, url):
        admin = Admin(url)
        try:
            default = admin.default_profile()
            assert {k: default[k] for k in switches} == switches
            creds = read_env(env_file)
            cid = creds["TOOLKIT_CUSTOMER_ID"]
            assert admin.get_profile(customer_id=cid)["errorBody"] == "text"
            token = fetch_token(
                url,
                creds["TOOLKIT_CLIENT_ID"],
                creds["TOOLKIT_CLIENT_SECRET"],
                creds["TOOLKIT_AUDIENCE"],
            )
            auth = {"Authorization": f"Bearer {token}"}
            imported = requests.post(
                f"{url}/api/v1/customers/{cid}/clients/import",
                json=CLIENT,
                headers=auth,
                timeout=TIMEOUT,
            )
            assert imported.status_code == 202
            missing = requests.get(
                f"{url}/api/v1/customers/{cid}/users/nobody", headers=auth, timeout=TIMEOUT
            )
            assert missing.status_code == 404
            assert missing.headers["content-type"].startswith("text/plain")
        finally:
            admin.close()


def test_cli_profile_takes_a_preset_name() -> None:
    assert read_profile("stingy") == PROFILES["stingy"]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read"),
        ("{not json", "not JSON"),
        ("[1]", "one JSON object"),
        ('{"reimport": "never"}', "reimport"),
    ],
)
def test_cli_refuses_an_unreadable_or_invalid_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "profile.json"
    if content is not None:
        path.write_text(content)
    assert main(["--port", "0", "--profile", str(path)]) == 1
    assert message in capsys.readouterr().err


# -- one declaration: every switch is declared once, in Profile --------------------------------


def _captured_admin(monkeypatch: pytest.MonkeyPatch) -> tuple[Admin, list[Any]]:
    """An Admin whose calls are recorded instead of sent."""
    admin, sent = Admin("http://127.0.0.1:9", customer_id="c1"), []
    monkeypatch.setattr(admin, "_call", lambda method, path, body=None: sent.append(body) or {})
    return admin, sent


def test_set_profile_takes_exactly_the_declared_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    admin, sent = _captured_admin(monkeypatch)
    admin.set_profile(**{name: DEFAULT_PROFILE[name] for name in Profile.model_fields})
    assert list(sent[0]) == list(Profile.model_fields) == list(DEFAULT_PROFILE)
    admin.set_profile(reimport="conflict", ackRepeat=KEEP)
    assert sent[1] == {"reimport": "conflict"}
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        admin.set_profile(nope=1)
    assert len(sent) == 2


def test_every_preset_sets_declared_switches_only() -> None:
    for name, preset in PROFILES.items():
        assert set(preset) <= set(Profile.model_fields), name
        assert validate_profile(preset) == preset


def test_the_published_preset_is_every_declared_published_value() -> None:
    declared = {name: published_value(name) for name in Profile.model_fields}
    assert PROFILES["published"] == {k: v for k, v in declared.items() if v is not None}
    # what published.md states: doubles, laurel, the batch route, at most 2500 ids per range
    assert {"expiresIn": "double", "counts": "double", "codeAssigner": "laurel"}.items() <= (
        PROFILES["published"].items()
    )
    assert (PROFILES["published"]["batchAck"], PROFILES["published"]["codeRangeMax"]) == (
        True,
        2500,
    )
    schema = Profile.model_json_schema()["properties"]
    assert {k: schema[k]["x-published"] for k in PROFILES["published"]} == PROFILES["published"]


def test_the_cli_help_lists_every_declared_switch_with_its_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for name, field in Profile.model_fields.items():
        assert f"{name} = {json.dumps(DEFAULT_PROFILE[name])}" in shown, name
        assert " ".join(str(field.description).split()) in shown, name


def test_the_docs_describe_every_declared_switch_in_order() -> None:
    text = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text(encoding="utf-8")
    table = text.split("### Switches", 1)[1].split("\n\n", 2)[1]
    assert re.findall(r"^\| `(\w+)` \|", table, flags=re.M) == list(Profile.model_fields)
    block = text.split("The profile as JSON Schema", 1)[1].split("```json", 1)[1]
    schema = json.loads(block.split("```", 1)[0])
    assert list(schema["properties"]) == list(Profile.model_fields)
    for name, member in schema["properties"].items():
        assert member.get("default", DEFAULT_PROFILE[name]) == DEFAULT_PROFILE[name], name
