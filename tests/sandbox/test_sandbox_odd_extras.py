"""Odd values in release-pending's fields outside interface.md (the profile's ``oddExtras``):
``allowed`` (the ``published`` preset) gives a fractional ``releaseCount``, which the published
documents let through; ``mistyped`` adds a numeric code type ``orderingSequence``, which they do
not (a mock generated it). The toolkit's readers meet them end to end: they read every entry and
warn naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import requests

from tests.conftest import SAMPLE_DIR, TIMEOUT, fetch_token
from toolkit import Client
from toolkit._cli import main
from toolkit.errors import InputWarning
from toolkit.sandbox import PROFILES, Sandbox, running


@pytest.fixture(scope="module")
def published() -> Iterator[Sandbox]:
    """A sandbox whose demo customer (the sample firm, its released entries) is ``published``,
    with mistyped extras too."""
    profile = {**PROFILES["published"], "oddExtras": "mistyped"}
    with running(seed=SAMPLE_DIR, profile=profile) as sb:
        yield sb


def _pending(sb: Sandbox) -> list[dict]:
    token = fetch_token(sb.url, sb.client_id, sb.client_secret, sb.audience)
    return requests.get(
        f"{sb.env()['TOOLKIT_TIME_URL']}/api/v1/customers/{sb.customer_id}/entries/release-pending",
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    ).json()


def _pending_ids(sb: Sandbox) -> list[str]:
    return [e["_id"] for e in sb.admin.records("entries") if e["state"] == "pending"]


def test_mistyped_extras_are_a_fractional_release_count_and_a_numeric_ordering(
    published: Sandbox,
) -> None:
    answer = _pending(published)
    assert {e["releaseCount"] for e in answer} == {1, 1.5}
    kinds = [c["type"] for e in answer for c in e["codes"]]
    assert kinds and {k["orderingSequence"] for k in kinds} == {1}


def test_the_published_preset_sends_only_what_the_documents_allow(published: Sandbox) -> None:
    published.admin.set_profile(oddExtras=PROFILES["published"]["oddExtras"])
    try:
        answer = _pending(published)
    finally:
        published.admin.set_profile(oddExtras="mistyped")
    assert {e["releaseCount"] for e in answer} == {1, 1.5}
    assert {c["type"]["orderingSequence"] for e in answer for c in e["codes"]} == {None}


def test_the_toolkit_reads_every_pending_entry_and_warns_naming_the_odd_fields(
    published: Sandbox,
) -> None:
    with Client.from_env(None, environ=published.env(), retries=3) as client:
        with pytest.warns(InputWarning) as caught:
            export = client.release_pending()
    assert sorted(export.entries["_id"]) == sorted(_pending_ids(published))
    messages = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert any("releaseCount 1.5" in m and "outside the interface" in m for m in messages)
    assert any("codes.type.orderingSequence 1" in m for m in messages)
    assert export.entries["releaseCount"].isna().any()  # a fraction is no count: read as null
    assert (export.entries["releaseCount"].dropna() == 1).all()
    assert set(export.codes["code.type.orderingSequence"].dropna()) == {"1"}  # kept as text


def test_toolkit_pending_writes_every_entry_and_warns_naming_the_fields(
    published: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = published.write_env(tmp_path / ".env")
    out = tmp_path / "pending"
    args = ["--env-file", str(env_file), "-q", "pending", "--out", str(out), "--format", "csv"]
    assert main(args) == 0
    entries = pd.read_csv(out / "entries.csv")
    assert sorted(entries["_id"]) == sorted(_pending_ids(published))
    err = capsys.readouterr().err
    assert "holds releaseCount 1.5" in err and "holds codes.type.orderingSequence 1" in err
