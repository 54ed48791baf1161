"""The main flows against the service's published contract (``published.json``).

A sandbox customer under the ``published`` preset is reached through a :class:`RecordingProxy`
on three base addresses, as the service's hosts: ``/identity``, ``/time`` and ``/ingestion``.
Every request the toolkit sends in the main flows (token, user record, the five imports, export,
release-pending, acknowledgements single and in batches) must be one its service publishes, with
only published fields, every required one, and the published types, enums, bounds and formats;
every answer the sandbox gives with a declared status must match its declared schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from tests.contract.published import answer_problems, contract, request_problems
from tests.contract.recorder import Exchange, RecordingProxy
from toolkit import Client
from toolkit.sandbox import PROFILES, Admin, Sandbox, running

SERVICES = ("identity", "time", "ingestion")
TIMEOUT = (5.0, 30.0)

FIRM: dict[str, pd.DataFrame] = {
    "clients": pd.DataFrame(
        {
            "externalId": ["C1", "C2"],
            "name": ["Acme", "Beta"],
            "callSign": ["1001", "1002"],
            "description": ["A client", ""],
        }
    ),
    "initiatives": pd.DataFrame(
        {
            "billingType": ["billable", "non-billable"],
            "externalId": ["M1", "M2"],
            "name": ["Acme v. Roe", "Pro bono"],
            "description": ["", ""],
            "callSign": ["1001-001", "1002-001"],
            "clientExternalId": ["C1", "C2"],
            "unitIncrements": [360, 900],
            "status": ["active", "inactive"],
        }
    ),
    "code_types": pd.DataFrame(
        {
            "externalId": ["task-code", "place"],
            "name": ["task-code", "place"],
            "semanticType": ["task", None],
            "customerDefaultable": [True, False],
            "userDefaultable": [False, True],
        }
    ),
    "codes": pd.DataFrame(
        {
            "externalId": ["L110", "L120"],
            "name": ["L110", "L120"],
            "description": ["Facts", "Analysis"],
            "codeTypeExternalId": ["task-code"] * 2,
        }
    ),
    "code_ranges": pd.DataFrame(
        {"initiativeExternalId": ["M1", "M1"], "codeExternalId": ["L110", "L120"]}
    ),
}


@pytest.fixture(scope="module")
def sb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with running(db=tmp_path_factory.mktemp("contract") / "sandbox.db") as sandbox:
        yield sandbox


def _split(exchange: Exchange) -> tuple[str, str]:
    """(service, path on that service's base) of a recorded request."""
    for service in SERVICES:
        prefix = f"/{service}"
        if exchange.path.startswith(prefix + "/"):
            return service, exchange.path.removeprefix(prefix)
    return "root", exchange.path


def _json(data: bytes) -> Any:
    return json.loads(data) if data else None


def _run_main_flows(sb: Sandbox, switches: dict[str, Any]) -> tuple[list[Exchange], Admin]:
    """Onboard, export, release-pending, acknowledge and read a user through the proxy."""
    creds = sb.admin.create_customer("Contract firm")
    admin = Admin(sb.url, customer_id=creds["customerId"])
    admin.set_profile(**switches)
    user = admin.create_user("TK1", "Ann Lee", "ann@example.com")
    with RecordingProxy(sb.url) as proxy:
        client = Client(
            creds["customerId"],
            creds["clientId"],
            creds["clientSecret"],
            auth_url=f"{proxy.url}/identity",
            time_url=f"{proxy.url}/time",
            ingestion_url=f"{proxy.url}/ingestion",
            audience=creds["audience"],
            timeout=TIMEOUT,
            null_semantic_type="omit",  # the published body: that service refuses a null
        )
        report = client.onboard(FIRM, progress=False)
        assert report.ok, report.failures
        entries = []
        for day in ("2025-03-01", "2025-03-02", "2025-03-03", "2025-03-04"):
            e = admin.create_entry(
                user["_id"], "M1", work_date=day, summary="Work", increment_duration_in_seconds=720
            )
            entries.append(admin.release_entry(user["_id"], e["_id"], at=f"{day}T10:00:00Z"))
        export = client.export_entries("2025-02-28T00:00:00Z", "2025-03-05T00:00:00Z")
        assert len(export.entries) == len(entries)
        pending = client.release_pending()
        assert set(pending.entries["_id"]) >= {e["_id"] for e in entries}
        acks = pd.DataFrame(
            {
                "userId": [user["_id"]] * 3,
                "entryId": [e["_id"] for e in entries[:3]],
                "outcome": ["succeeded", "succeeded", "failed"],
                "externalId": ["INV-1", None, None],
                "errors": [None, None, ["rate missing"]],
            }
        )
        with pytest.warns(UserWarning):  # the succeeded row without externalId is warned about
            result = client.acknowledge(acks, progress=False)
        assert result["ok"].all(), result
        record = client.user(user["_id"])
        assert record["_id"] == user["_id"]
    return proxy.exchanges, admin


@pytest.mark.parametrize("batch", [True, False], ids=["batch-route", "single-route"])
def test_every_request_and_answer_of_the_main_flows_is_as_published(
    sb: Sandbox, batch: bool
) -> None:
    exchanges, _ = _run_main_flows(sb, {**PROFILES["published"], "batchAck": batch})
    problems = []
    used: set[tuple[str, str, str]] = set()
    for ex in exchanges:
        service, path = _split(ex)
        if service == "root":
            problems.append(f"{ex.method} {ex.path}: sent to no service's base address")
            continue
        if "/public/" in path:  # starring: interface.md is its only source
            continue
        if batch and ex.status == 404:
            problems.append(f"{ex.method} {path}: 404")
        body = _json(ex.body)
        found = request_problems(service, ex.method, path, ex.query, body)
        if "/oauth/" not in path and not ex.headers.get("Authorization", "").startswith("Bearer "):
            found.append("no Authorization: Bearer header")
        answer = _json(ex.answer) if "json" in ex.answer_type else ex.answer or None
        found += answer_problems(service, ex.method, path, ex.status, answer)
        problems += [f"{service} {ex.method} {path}: {p}" for p in found]
        for op in contract()[service]:
            if (
                op["method"] == ex.method
                and request_problems(service, ex.method, path, ex.query, body) == []
            ):
                used.add((service, ex.method, op["path"]))
    assert problems == []
    ops = {(m, p.rsplit("/", 1)[-1]) for _, m, p in used}
    expected = {
        ("POST", "token"),
        ("GET", "{userId}"),
        ("POST", "import"),
        ("POST", "codes"),
        ("GET", "export"),
        ("GET", "release-pending"),
        ("POST", "release-failed"),
        ("POST", "batch" if batch else "release-succeeded"),
    }
    assert expected <= ops, expected - ops


def test_the_checks_refuse_what_the_documents_do_not_publish() -> None:
    # the user record on the time service, an undeclared field, a count as text
    assert request_problems("time", "GET", "/api/v1/customers/c/users/u", {}, None)
    assert request_problems(
        "identity",
        "POST",
        "/api/v1/oauth/token",
        {},
        {"client_id": "a", "client_secret": "b", "grant_type": "x"},
    )
    assert request_problems(
        "time",
        "POST",
        "/api/v1/customers/c/clients/import",
        {},
        {"externalId": "C", "name": "n", "callSign": "s", "description": "d", "colour": "red"},
    )
    assert request_problems(
        "time",
        "POST",
        "/api/v1/customers/c/initiatives/C1/codes",
        {},
        {"codeExternalIds": [f"K{i}" for i in range(2501)]},
    )
    assert request_problems(
        "time", "GET", "/api/v2/customers/c/entries/export", {"releasedAfter": ["2025-03-01"]}, None
    )
    # where interface.md speaks, it wins: a null semanticType; a kind outside the enum does not
    code_type = {
        "externalId": "place",
        "name": "place",
        "semanticType": None,
        "customerDefaultable": True,
        "userDefaultable": False,
    }
    path = "/api/v1/customers/c/code-types/import"
    assert request_problems("time", "POST", path, {}, code_type) == []
    assert request_problems("time", "POST", path, {}, {**code_type, "semanticType": "venue"})
    pending = [{"_id": "0" * 24, "unitIncrementCount": "2"}]
    assert answer_problems(
        "time", "GET", "/api/v1/customers/c/entries/release-pending", 200, pending
    )


def test_the_fixture_holds_no_descriptions_and_every_operation_of_the_interface() -> None:
    text = json.dumps(contract())
    assert '"description":' not in text.replace('"description": {', "")
    paths = {(s, op["method"], op["path"]) for s, ops in contract().items() for op in ops}
    assert ("identity", "GET", "/api/v1/customers/{customerId}/users/{userId}") in paths
    assert not any(s == "time" and p.endswith("/users/{userId}") for s, _, p in paths)
    assert len(paths) == 18
