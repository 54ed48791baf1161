"""Every administration route (/sandbox/v1): customers, users, walls, entries, releases,
product initiatives and record listings."""

from __future__ import annotations

import pytest
import requests

from tests.conftest import TIMEOUT, Firm, fetch_token
from toolkit.sandbox import AdminError, Sandbox

ADMIN = "/sandbox/v1"


def test_create_customer_returns_working_credentials(sandbox: Sandbox) -> None:
    response = requests.post(
        f"{sandbox.url}{ADMIN}/customers", json={"name": "Firm B"}, timeout=TIMEOUT
    )
    assert response.status_code == 201
    creds = response.json()
    assert set(creds) == {"customerId", "clientId", "clientSecret", "audience"}
    assert len(creds["customerId"]) == 24 and len(creds["clientId"]) == 24
    assert creds["audience"] == sandbox.audience
    assert fetch_token(sandbox.url, creds["clientId"], creds["clientSecret"], creds["audience"])


@pytest.mark.parametrize("body", [None, {}], ids=["no-body", "empty-object"])
def test_create_customer_name_is_optional(sandbox: Sandbox, body: object) -> None:
    response = requests.post(f"{sandbox.url}{ADMIN}/customers", json=body, timeout=TIMEOUT)
    assert response.status_code == 201


def test_create_customer_rejects_a_bad_body(sandbox: Sandbox) -> None:
    response = requests.post(f"{sandbox.url}{ADMIN}/customers", json={"name": 5}, timeout=TIMEOUT)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"


def test_create_user_returns_the_user_record_and_allows_repeated_timekeepers(
    firm: Firm,
) -> None:
    first = firm.admin.create_user("TK9", "Ann", "ann@example.com")
    second = firm.admin.create_user("TK9", "Ann again", "ann2@example.com")
    assert set(first) == {"_id", "customerId", "timekeeperExternalId", "name", "email"}
    assert first["_id"] != second["_id"]
    assert first["customerId"] == firm.customer_id
    listed = [u["timekeeperExternalId"] for u in firm.admin.records("users")]
    assert listed.count("TK9") == 2


def test_create_user_for_unknown_customer_is_404(sandbox: Sandbox) -> None:
    with pytest.raises(AdminError) as err:
        sandbox.admin.create_user("TK1", customer_id="0" * 24)
    assert err.value.status == 404


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"timekeeperExternalId": "", "name": "", "email": ""},
        {"timekeeperExternalId": 5, "name": "", "email": ""},
    ],
)
def test_create_user_rejects_a_bad_body(firm: Firm, body: dict) -> None:
    response = requests.post(
        f"{firm.tenant.url}{ADMIN}/customers/{firm.customer_id}/users", json=body, timeout=TIMEOUT
    )
    assert response.status_code == 422


def test_set_walls_replaces_the_previous_walls(firm: Firm) -> None:
    user = firm.users["TK1"]
    assert firm.admin.set_walls(user, ["M1", "M2", "M1"]) == {
        "userId": user,
        "initiativeExternalIds": ["M1", "M2"],
    }
    assert firm.admin.set_walls(user, ["M3"])["initiativeExternalIds"] == ["M3"]
    star = firm.api(
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/star",
        json={"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1", "M3"]},
    )
    assert [i["status"] for i in star.json()["response"]] == [200, 403]


def test_set_walls_for_unknown_user_is_404(firm: Firm) -> None:
    with pytest.raises(AdminError) as err:
        firm.admin.set_walls("0" * 24, ["M1"])
    assert err.value.status == 404


def test_create_entry_is_editable(firm: Firm) -> None:
    entry = firm.admin.create_entry(
        firm.users["TK1"],
        "M1",
        work_date="2025-03-03",
        increment_duration_in_seconds=720,
        summary="Draft",
        codes=["L110", ("A101", "service")],
    )
    assert entry["state"] == "editable"
    assert entry["releasedAt"] is None
    assert entry["codes"] == [
        {"codeExternalId": "L110", "assignedBy": "user"},
        {"codeExternalId": "A101", "assignedBy": "service"},
    ]
    assert firm.admin.records("entries") == [entry]


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"initiativeExternalId": "M404"}, 422),
        (
            {
                "codes": [
                    {"codeExternalId": "X1", "assignedBy": "user"},
                    {"codeExternalId": "X2", "assignedBy": "user"},
                ]
            },
            422,
        ),
        ({"codes": [{"codeExternalId": "L110", "assignedBy": "robot"}]}, 422),
        ({"workDate": "03/03/2025"}, 422),
        ({"workDate": "2025-02-30"}, 422),
        ({"incrementDurationInSeconds": -1}, 422),
        ({"incrementDurationInSeconds": "60"}, 422),
        ({"summary": None}, 422),
    ],
    ids=[
        "unknown-initiative",
        "unknown-codes",
        "bad-assigned-by",
        "us-date",
        "impossible-date",
        "negative-duration",
        "duration-string",
        "null-summary",
    ],
)
def test_create_entry_rejects_bad_bodies(firm: Firm, changes: dict, status: int) -> None:
    body = {
        "initiativeExternalId": "M1",
        "workDate": "2025-03-03",
        "summary": "",
        "incrementDurationInSeconds": 60,
        "codes": [],
        **changes,
    }
    response = requests.post(
        f"{firm.tenant.url}{ADMIN}/customers/{firm.customer_id}/users/{firm.users['TK1']}/entries",
        json=body,
        timeout=TIMEOUT,
    )
    assert response.status_code == status, response.text
    if "codes" in changes and changes["codes"][0]["assignedBy"] == "user":
        assert response.json()["unknownIds"] == ["X1", "X2"]


def test_create_entry_respects_the_code_range(firm: Firm) -> None:
    firm.api(
        "POST", "/api/v1/customers/{cid}/initiatives/M1/codes", json={"codeExternalIds": ["L110"]}
    )
    firm.admin.create_entry(
        firm.users["TK1"],
        "M1",
        work_date="2025-03-03",
        increment_duration_in_seconds=60,
        codes=["L110"],
    )
    with pytest.raises(AdminError) as err:
        firm.admin.create_entry(
            firm.users["TK1"],
            "M1",
            work_date="2025-03-03",
            increment_duration_in_seconds=60,
            codes=["L120"],
        )
    assert err.value.status == 422
    assert err.value.body["unknownIds"] == ["L120"]


def test_create_entry_for_unknown_user_is_404(firm: Firm) -> None:
    with pytest.raises(AdminError) as err:
        firm.admin.create_entry(
            "0" * 24, "M1", work_date="2025-03-03", increment_duration_in_seconds=60
        )
    assert err.value.status == 404


def test_release_makes_an_entry_pending_at_the_given_time(firm: Firm) -> None:
    entry = firm.entry()
    released = firm.admin.release_entry(
        entry["userId"], entry["_id"], at="2025-03-01T10:00:00+01:00"
    )
    assert released["state"] == "pending"
    assert released["releasedAt"] == released["updatedAt"] == "2025-03-01T09:00:00.000Z"


def test_release_defaults_to_now(firm: Firm) -> None:
    entry = firm.entry()
    released = firm.admin.release_entry(entry["userId"], entry["_id"])
    assert released["state"] == "pending"
    assert released["releasedAt"] >= entry["createdAt"]


def test_release_of_a_pending_or_succeeded_entry_is_409(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    with pytest.raises(AdminError) as err:
        firm.admin.release_entry(entry["userId"], entry["_id"])
    assert err.value.status == 409
    firm.api(
        "POST",
        f"/api/v1/customers/{{cid}}/users/{entry['userId']}/entries/"
        f"{entry['_id']}/release-succeeded",
        json={"externalId": "B"},
    )
    with pytest.raises(AdminError) as err:
        firm.admin.release_entry(entry["userId"], entry["_id"])
    assert err.value.status == 409


def test_release_of_unknown_entry_is_404_and_bad_time_is_422(firm: Firm) -> None:
    with pytest.raises(AdminError) as err:
        firm.admin.release_entry(firm.users["TK1"], "0" * 24)
    assert err.value.status == 404
    entry = firm.entry()
    with pytest.raises(AdminError) as err:
        firm.admin.release_entry(entry["userId"], entry["_id"], at="tomorrow")
    assert err.value.status == 422


def test_release_body_is_optional(firm: Firm) -> None:
    entry = firm.entry()
    response = requests.post(
        f"{firm.tenant.url}{ADMIN}/customers/{firm.customer_id}/users/{entry['userId']}"
        f"/entries/{entry['_id']}/release",
        timeout=TIMEOUT,
    )
    assert response.status_code == 200
    assert response.json()["state"] == "pending"


def test_product_initiative_is_created_and_pinned(firm: Firm) -> None:
    created = firm.admin.create_product_initiative(firm.users["TK1"], "Business development")
    assert created == {
        "_id": created["_id"],
        "name": "Business development",
        "userId": firm.users["TK1"],
        "pinned": True,
    }
    [record] = [i for i in firm.admin.records("initiatives") if i["source"] == "product"]
    assert (record["_id"], record["externalId"]) == (created["_id"], None)
    assert firm.admin.records("stars")[0]["initiativeId"] == created["_id"]


def test_product_initiative_for_unknown_user_is_404(firm: Firm) -> None:
    with pytest.raises(AdminError) as err:
        firm.admin.create_product_initiative("0" * 24, "X")
    assert err.value.status == 404


@pytest.mark.parametrize(
    ("kind", "count"),
    [
        ("clients", 1),
        ("initiatives", 3),
        ("code-types", 2),
        ("codes", 3),
        ("code-ranges", 0),
        ("entries", 0),
        ("users", 2),
        ("stars", 0),
    ],
)
def test_records_lists_every_stored_record_of_a_kind(firm: Firm, kind: str, count: int) -> None:
    assert len(firm.admin.records(kind)) == count


def test_records_of_unknown_kind_is_400_and_unknown_customer_404(sandbox: Sandbox) -> None:
    with pytest.raises(AdminError) as err:
        sandbox.admin.records("widgets")
    assert err.value.status == 400
    with pytest.raises(AdminError) as err:
        sandbox.admin.records("clients", customer_id="0" * 24)
    assert err.value.status == 404


def test_admin_errors_do_not_leak_requests_exceptions() -> None:
    from toolkit.sandbox import Admin

    with pytest.raises(AdminError) as err:
        Admin("http://127.0.0.1:9", customer_id="c", timeout=2).stats()
    assert err.value.status is None
