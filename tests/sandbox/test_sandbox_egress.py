"""Egress: the v2 export, release-pending, the acknowledgement state machine, the user record."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.conftest import Firm, Tenant, sample_dir
from toolkit.sandbox._store import Store

EXPORT = "/api/v2/customers/{cid}/entries/export"
PENDING = "/api/v1/customers/{cid}/entries/release-pending"
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

EXPORT_KEYS = {
    "_id",
    "codes",
    "createdAt",
    "customerId",
    "externalId",
    "incrementDurationInSeconds",
    "initiative",
    "summary",
    "unitIncrementCount",
    "updatedAt",
    "userId",
    "workDate",
}
CLIENT_KEYS = {"_id", "externalId", "name", "description", "callSign"}
CODE_KEYS = {"_id", "externalId", "name", "description", "type"}
TYPE_KEYS = {"_id", "externalId", "name", "semanticType"}
DETAILED_KEYS = {
    "_id",
    "customerId",
    "userId",
    "workDate",
    "summary",
    "unitIncrementCount",
    "incrementDurationInSeconds",
    "initiativeProps",
    "externalId",
    "codes",
    # the published extras (interface.md is silent on them)
    "notes",
    "releaseCount",
    "lastSyncedAt",
    "firstReleaseAttemptedAt",
    "isShared",
    "sharedFrom",
}
PROPS_KEYS = {"type", "colorHex", "tags", "nickname", "initiative"}
PROPS_INITIATIVE_KEYS = {
    "type",
    "_id",
    "billingType",
    "callSign",
    "unitIncrements",
    "externalId",
    "name",
    "description",
    "client",
}


def export(t: Tenant | Firm, after: str, before: str):
    return t.api("GET", EXPORT, params={"releasedAfter": after, "releasedOnOrBefore": before})


def ack(firm: Firm, entry: dict, kind: str, body: object, user: str | None = None):
    user_id = user or entry["userId"]
    return firm.api(
        "POST",
        f"/api/v1/customers/{{cid}}/users/{user_id}/entries/{entry['_id']}/{kind}",
        json=body,
    )


# --- export -----------------------------------------------------------------------------------


def test_export_window_excludes_after_and_includes_on_or_before(firm: Firm) -> None:
    times = [
        "2025-03-01T10:00:00.000Z",
        "2025-03-01T11:00:00.000Z",
        "2025-03-01T12:00:00.000Z",
        "2025-03-01T12:00:00.001Z",
    ]
    ids = [firm.entry(released_at=t, summary=t)["_id"] for t in times]
    got = export(firm, "2025-03-01T10:00:00Z", "2025-03-01T12:00:00Z").json()
    assert [e["_id"] for e in got] == ids[1:3]
    assert [
        e["_id"] for e in export(firm, "2025-03-01T09:59:59.999Z", "2025-03-01T10:00:00Z").json()
    ] == ids[:1]
    assert export(firm, "2025-03-01T12:00:00Z", "2025-03-01T12:00:00Z").json() == []


def test_export_orders_by_release_time(firm: Firm) -> None:
    late = firm.entry(released_at="2025-03-02T09:00:00Z")
    early = firm.entry(released_at="2025-03-01T09:00:00Z")
    got = export(firm, "2025-03-01T00:00:00Z", "2025-03-03T00:00:00Z").json()
    assert [e["_id"] for e in got] == [early["_id"], late["_id"]]


def test_export_honours_offsets_and_takes_naive_times_as_utc(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    for after, before in [
        ("2025-03-01T10:30:00+01:00", "2025-03-01T11:00:00+01:00"),
        ("2025-03-01T09:30:00", "2025-03-01T10:00:00"),
        ("2025-03-01T09:30", "2025-03-01T10:00"),
        ("2025-03-01t09:30:00z", "2025-03-01T05:00:00-05:00"),
    ]:
        got = export(firm, after, before)
        assert got.status_code == 200, (after, before, got.text)
        assert [e["_id"] for e in got.json()] == [entry["_id"]], (after, before)


def test_export_selects_by_release_time_whatever_the_acknowledgement(firm: Firm) -> None:
    ok = firm.entry(released_at="2025-03-01T10:00:00Z")
    failed = firm.entry(released_at="2025-03-01T10:05:00Z")
    assert ack(firm, ok, "release-succeeded", {"externalId": "B-1"}).status_code == 200
    assert ack(firm, failed, "release-failed", {"errors": ["locked"]}).status_code == 200
    got = export(firm, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z").json()
    assert [e["_id"] for e in got] == [ok["_id"], failed["_id"]]
    assert got[0]["externalId"] == "B-1"


def test_export_leaves_out_editable_entries(firm: Firm) -> None:
    firm.entry()  # never released
    assert export(firm, "1970-01-01T00:00:00Z", "2999-01-01T00:00:00Z").json() == []


def test_re_released_entry_moves_to_its_new_release_time(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    ack(firm, entry, "release-failed", {"errors": ["closed period"]})
    firm.admin.release_entry(entry["userId"], entry["_id"], at="2025-03-05T10:00:00Z")
    assert export(firm, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z").json() == []
    again = export(firm, "2025-03-05T00:00:00Z", "2025-03-06T00:00:00Z").json()
    assert [e["_id"] for e in again] == [entry["_id"]]
    assert again[0]["updatedAt"] == "2025-03-05T10:00:00.000Z"


def test_export_form_has_exactly_the_spec_fields(firm: Firm) -> None:
    entry = firm.entry(
        duration=1000,
        codes=("L110", ("A101", "service")),
        summary="Réunion — 会议",
        work_date="2025-02-28",
        released_at="2025-03-01T10:00:00.250Z",
    )
    [got] = export(firm, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z").json()
    assert set(got) == EXPORT_KEYS
    assert got["_id"] == entry["_id"]
    assert got["customerId"] == firm.customer_id
    assert got["userId"] == firm.users["TK1"]
    assert got["workDate"] == "2025-02-28"
    assert got["summary"] == "Réunion — 会议"
    assert got["incrementDurationInSeconds"] == 1000
    assert got["unitIncrementCount"] == 3  # ceil(1000 / 360)
    assert got["externalId"] is None
    assert got["createdAt"] == entry["createdAt"]
    assert got["updatedAt"] == "2025-03-01T10:00:00.250Z"  # pending: the release time
    assert TIMESTAMP.match(got["createdAt"]) and TIMESTAMP.match(got["updatedAt"])
    assert set(got["initiative"]) == {"client", "externalId", "name"}
    assert (got["initiative"]["externalId"], got["initiative"]["name"]) == ("M1", "Acme v. Roe")
    client = got["initiative"]["client"]
    assert set(client) == CLIENT_KEYS
    assert (client["externalId"], client["name"], client["callSign"]) == ("C1", "Acme Corp", "1001")
    assert [set(c) for c in got["codes"]] == [{"code", "assignedBy"}] * 2
    assert [c["assignedBy"] for c in got["codes"]] == ["user", "service"]
    first = got["codes"][0]["code"]
    assert set(first) == CODE_KEYS
    assert (first["externalId"], first["name"], first["description"]) == (
        "L110",
        "L110",
        "Fact investigation",
    )
    assert set(first["type"]) == TYPE_KEYS
    assert (first["type"]["externalId"], first["type"]["semanticType"]) == ("task-code", "task")


@pytest.mark.parametrize(
    ("initiative", "duration", "count"),
    [
        ("M1", 0, 0),
        ("M1", 1, 1),
        ("M1", 360, 1),
        ("M1", 361, 2),
        ("M1", 3600, 10),
        ("M2", 900, 1),
        ("M2", 901, 2),
        ("M2", 1799, 2),
    ],
)
def test_unit_increment_count_is_the_ceiling(
    firm: Firm, initiative: str, duration: int, count: int
) -> None:
    firm.entry(initiative=initiative, duration=duration, released_at="2025-03-01T10:00:00Z")
    [got] = export(firm, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z").json()
    assert got["unitIncrementCount"] == count


def test_unit_increment_count_with_fractional_increments(tenant: Tenant, firm: Firm) -> None:
    body = {
        "billingType": "billable",
        "externalId": "MF",
        "name": "F",
        "description": "",
        "callSign": "F",
        "clientExternalId": "C1",
        "unitIncrements": 0.3,
        "status": "active",
    }
    assert (
        firm.api("POST", "/api/v1/customers/{cid}/initiatives/import", json=body).status_code == 201
    )
    firm.entry(initiative="MF", duration=3, released_at="2025-03-01T10:00:00Z")
    [got] = export(firm, "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z").json()
    assert got["unitIncrementCount"] == 10


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"releasedAfter": "2025-03-01T00:00:00Z"},
        {"releasedOnOrBefore": "2025-03-01T00:00:00Z"},
        {"releasedAfter": "yesterday", "releasedOnOrBefore": "2025-03-01T00:00:00Z"},
        {"releasedAfter": "2025-03-01", "releasedOnOrBefore": "2025-03-02T00:00:00Z"},
        {"releasedAfter": "2025-02-30T00:00:00Z", "releasedOnOrBefore": "2025-03-02T00:00:00Z"},
        {"releasedAfter": "2025-03-01T00:00:00Z", "releasedOnOrBefore": "1709251200"},
        {"releasedAfter": "2025-03-02T00:00:00Z", "releasedOnOrBefore": "2025-03-01T00:00:00Z"},
        {"releasedAfter": "", "releasedOnOrBefore": ""},
    ],
    ids=[
        "none",
        "no-upper",
        "no-lower",
        "words",
        "date-only",
        "impossible-date",
        "epoch",
        "inverted",
        "empty",
    ],
)
def test_missing_unparseable_or_inverted_window_is_400(firm: Firm, params: dict) -> None:
    response = firm.api("GET", EXPORT, params=params)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 400


# --- release-pending --------------------------------------------------------------------------


def test_release_pending_lists_only_pending_entries(firm: Firm) -> None:
    pending = firm.entry(released_at="2025-03-01T10:00:00Z")
    succeeded = firm.entry(released_at="2025-03-01T10:01:00Z")
    failed = firm.entry(released_at="2025-03-01T10:02:00Z")
    firm.entry()  # editable
    ack(firm, succeeded, "release-succeeded", {"externalId": "B-1"})
    ack(firm, failed, "release-failed", {"errors": ["x"]})
    got = firm.api("GET", PENDING).json()
    assert [e["_id"] for e in got] == [pending["_id"]]


def test_release_pending_detailed_form_has_the_spec_and_published_fields(firm: Firm) -> None:
    firm.entry(duration=700, codes=("L120",), released_at="2025-03-01T10:00:00Z", summary="Draft")
    [got] = firm.api("GET", PENDING).json()
    assert set(got) == DETAILED_KEYS
    assert (got["customerId"], got["userId"]) == (firm.customer_id, firm.users["TK1"])
    assert (got["workDate"], got["summary"]) == ("2025-03-03", "Draft")
    assert (got["incrementDurationInSeconds"], got["unitIncrementCount"]) == (700, 2)
    assert got["externalId"] is None
    props = got["initiativeProps"]
    assert set(props) == PROPS_KEYS
    assert props["type"] == "pms"
    assert re.fullmatch(r"[0-9a-f]{6}", props["colorHex"])
    assert props["tags"] == []
    assert props["nickname"] == "Acme v. Roe"
    initiative = props["initiative"]
    assert set(initiative) == PROPS_INITIATIVE_KEYS
    assert initiative["type"] == "pms"
    assert (
        initiative["externalId"],
        initiative["billingType"],
        initiative["callSign"],
        initiative["unitIncrements"],
        initiative["description"],
    ) == ("M1", "billable", "1001-001", 360, "Litigation")
    assert set(initiative["client"]) == CLIENT_KEYS
    [code] = got["codes"]
    assert set(code) == CODE_KEYS  # flat: no assignedBy wrapper
    assert code["externalId"] == "L120"
    assert set(code["type"]) == TYPE_KEYS


def test_release_pending_tags_pinned_when_the_user_starred_the_initiative(firm: Firm) -> None:
    firm.entry(user="TK1", released_at="2025-03-01T10:00:00Z")
    firm.entry(user="TK2", released_at="2025-03-01T10:01:00Z")
    star = {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1"]}
    assert (
        firm.api(
            "POST", "/api/v1/public/customers/{cid}/initiative-props/star", json=star
        ).status_code
        == 207
    )
    got = firm.api("GET", PENDING).json()
    assert [(e["userId"], e["initiativeProps"]["tags"]) for e in got] == [
        (firm.users["TK1"], ["pinned"]),
        (firm.users["TK2"], []),
    ]


# --- acknowledgements -------------------------------------------------------------------------


def _state(firm: Firm, entry_id: str) -> dict:
    return next(e for e in firm.admin.records("entries") if e["_id"] == entry_id)


def test_release_succeeded_moves_pending_to_succeeded_and_stores_external_id(
    firm: Firm,
) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    response = ack(firm, entry, "release-succeeded", {"externalId": "BILL-77"})
    assert (response.status_code, response.content) == (200, b"")  # ackAnswer 200-empty
    stored = _state(firm, entry["_id"])
    assert (stored["state"], stored["externalId"]) == ("succeeded", "BILL-77")


def test_release_failed_moves_pending_to_failed_and_stores_errors(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    errors = ["Matter closed for time entry", "Rate missing — 税率"]
    response = ack(firm, entry, "release-failed", {"errors": errors})
    assert (response.status_code, response.content) == (200, b"")
    stored = _state(firm, entry["_id"])
    assert (stored["state"], stored["errors"]) == ("failed", errors)


@pytest.mark.parametrize(
    ("kind", "body"),
    [("release-succeeded", {"externalId": "B-1"}), ("release-failed", {"errors": ["x", "y"]})],
)
def test_repeating_the_same_acknowledgement_is_a_200_no_op(
    firm: Firm, kind: str, body: dict
) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    first = ack(firm, entry, kind, body)
    again = ack(firm, entry, kind, body)
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.content == first.content == b""


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            ("release-succeeded", {"externalId": "B-1"}),
            ("release-succeeded", {"externalId": "B-2"}),
        ),
        (("release-succeeded", {"externalId": "B-1"}), ("release-failed", {"errors": ["x"]})),
        (("release-failed", {"errors": ["x"]}), ("release-succeeded", {"externalId": "B-1"})),
        (("release-failed", {"errors": ["x"]}), ("release-failed", {"errors": ["y"]})),
    ],
    ids=["other-external-id", "failed-after-succeeded", "succeeded-after-failed", "other-errors"],
)
def test_conflicting_acknowledgement_is_409_and_changes_nothing(
    firm: Firm, first: tuple, second: tuple
) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    assert ack(firm, entry, *first).status_code == 200
    before = _state(firm, entry["_id"])
    response = ack(firm, entry, *second)
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    assert _state(firm, entry["_id"]) == before


@pytest.mark.parametrize(
    "kind,body", [("release-succeeded", {"externalId": "B"}), ("release-failed", {"errors": ["x"]})]
)
def test_acknowledging_an_entry_not_yet_released_is_409(firm: Firm, kind: str, body: dict) -> None:
    entry = firm.entry()
    assert ack(firm, entry, kind, body).status_code == 409
    assert _state(firm, entry["_id"])["state"] == "editable"


@pytest.mark.parametrize(
    "kind,body", [("release-succeeded", {"externalId": "B"}), ("release-failed", {"errors": ["x"]})]
)
def test_unknown_entry_or_entry_of_another_user_is_404(firm: Firm, kind: str, body: dict) -> None:
    entry = firm.entry(user="TK1", released_at="2025-03-01T10:00:00Z")
    assert ack(firm, {**entry, "_id": "f" * 24}, kind, body).status_code == 404
    assert ack(firm, entry, kind, body, user=firm.users["TK2"]).status_code == 404
    assert ack(firm, entry, kind, body, user="0" * 24).status_code == 404
    assert _state(firm, entry["_id"])["state"] == "pending"


def test_entry_of_another_customer_is_404(firm: Firm, tenant_factory) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    other = tenant_factory()
    response = other.api(
        "POST",
        f"/api/v1/customers/{{cid}}/users/{entry['userId']}/entries/"
        f"{entry['_id']}/release-succeeded",
        json={"externalId": "B"},
    )
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("release-succeeded", {"externalId": ""}),
        ("release-succeeded", {"externalId": 77}),
        ("release-succeeded", {"externalId": None}),
        ("release-succeeded", {"externalId": "B", "note": "x"}),
        ("release-succeeded", ["B"]),
        ("release-failed", {}),
        ("release-failed", {"errors": []}),
        ("release-failed", {"errors": "x"}),
        ("release-failed", {"errors": [1]}),
        ("release-failed", {"errors": [None]}),
        ("release-failed", {"errors": ["closed", ""]}),
        ("release-failed", {"errors": ["x"], "a": 1}),
    ],
    ids=[
        "ok-empty",
        "ok-number",
        "ok-null",
        "ok-extra",
        "ok-array",
        "failed-missing",
        "failed-empty-list",
        "failed-string",
        "failed-number-item",
        "failed-null-item",
        "failed-empty-item",
        "failed-extra",
    ],
)
def test_bad_acknowledgement_body_is_422(firm: Firm, kind: str, body: object) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    response = ack(firm, entry, kind, body)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert _state(firm, entry["_id"])["state"] == "pending"


def test_failed_entry_released_again_can_then_succeed(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    ack(firm, entry, "release-failed", {"errors": ["x"]})
    again = firm.admin.release_entry(entry["userId"], entry["_id"], at="2025-03-02T10:00:00Z")
    assert (again["state"], again["errors"]) == ("pending", None)
    assert ack(firm, entry, "release-succeeded", {"externalId": "B-9"}).status_code == 200


# --- user record ------------------------------------------------------------------------------


def test_user_record_has_id_customer_timekeeper_name_email(firm: Firm) -> None:
    firm.admin.set_profile(userRecord="legacy")  # the default is the identity service's shape
    user_id = firm.users["TK1"]
    response = firm.api("GET", f"/api/v1/customers/{{cid}}/users/{user_id}")
    assert response.status_code == 200
    assert response.json() == {
        "_id": user_id,
        "customerId": firm.customer_id,
        "timekeeperExternalId": "TK1",
        "name": "User TK1",
        "email": "tk1@example.com",
    }


def test_unknown_user_is_404(firm: Firm, tenant_factory) -> None:
    assert firm.api("GET", "/api/v1/customers/{cid}/users/" + "0" * 24).status_code == 404
    other = tenant_factory()
    path = f"/api/v1/customers/{{cid}}/users/{firm.users['TK1']}"
    assert other.api("GET", path).status_code == 404


# --- issue 25: the published contract (profile switches, the batch route) ---------------------

BATCH = "/api/v1/customers/{cid}/entries/release-succeeded/batch"
DAY = ("2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z")


def test_counts_double_sends_doubles_and_keeps_a_stored_fraction(firm: Firm) -> None:
    firm.admin.create_entry(
        firm.users["TK1"],
        "M1",
        work_date="2025-03-03",
        increment_duration_in_seconds=1234.5,
        unit_increment_count=2.5,
    )
    entry = firm.admin.records("entries")[0]
    firm.admin.release_entry(firm.users["TK1"], entry["_id"], at="2025-03-01T10:00:00Z")
    [spec] = export(firm, *DAY).json()
    assert (spec["unitIncrementCount"], spec["incrementDurationInSeconds"]) == (3, 1235)
    assert isinstance(spec["unitIncrementCount"], int)
    firm.admin.set_profile(counts="double")
    [got] = export(firm, *DAY).json()
    [pending] = firm.api("GET", PENDING).json()
    for answer in (got, pending):
        assert (answer["unitIncrementCount"], answer["incrementDurationInSeconds"]) == (2.5, 1234.5)
    raw = firm.api("GET", PENDING).text
    assert '"unitIncrementCount":2.5' in raw.replace(" ", "")


def test_counts_double_seeds_some_fractions(tmp_path) -> None:
    folder = sample_dir()
    if folder is None:
        pytest.skip("no sample_data/")
    store = Store(tmp_path / "s.db")
    try:
        cid = store.create_customer()["customerId"]
        store.set_profile(cid, {"counts": "double"})
        store.seed_sample(folder, cid, entries=100)
        pending = store.release_pending(cid)
        counts = [e["unitIncrementCount"] for e in pending]
        seconds = [e["incrementDurationInSeconds"] for e in pending]
        assert all(isinstance(c, float) for c in counts + seconds)
        assert sum(c % 1 == 0.5 for c in counts) >= 5
        assert sum(s % 1 == 0.5 for s in seconds) >= 2
    finally:
        store.close()


def test_code_assigner_laurel_names_the_service_laurel(firm: Firm) -> None:
    firm.entry(codes=("L110", ("A101", "service")), released_at="2025-03-01T10:00:00Z")
    firm.admin.set_profile(codeAssigner="laurel")
    [got] = export(firm, *DAY).json()
    assert [c["assignedBy"] for c in got["codes"]] == ["user", "laurel"]


def test_published_digests_carry_the_published_extras(firm: Firm) -> None:
    body = {
        "externalId": "misc",
        "name": "misc",
        "semanticType": None,
        "customerDefaultable": False,
        "userDefaultable": False,
    }
    assert (
        firm.api("POST", "/api/v1/customers/{cid}/code-types/import", json=body).status_code == 201
    )
    body = {"externalId": "X1", "name": "X1", "description": "", "codeTypeExternalId": "misc"}
    assert firm.api("POST", "/api/v1/customers/{cid}/codes/import", json=body).status_code == 201
    firm.entry(codes=("L110", "X1"), released_at="2025-03-01T10:00:00Z")
    [spec] = firm.api("GET", PENDING).json()
    assert set(spec["initiativeProps"]["initiative"]) == PROPS_INITIATIVE_KEYS
    firm.admin.set_profile(digests="published")
    [got] = firm.api("GET", PENDING).json()
    initiative = got["initiativeProps"]["initiative"]
    assert set(initiative) == PROPS_INITIATIVE_KEYS | {"status", "locale"}
    assert (initiative["status"], initiative["locale"]) == ("active", None)
    assert set(initiative["client"]) == CLIENT_KEYS | {"type", "parentClientId"}
    task, misc = (code["type"] for code in got["codes"])
    assert set(task) == TYPE_KEYS | {"orderingSequence"}
    assert set(misc) == TYPE_KEYS - {"semanticType"} | {"orderingSequence"}


def test_the_seeded_entries_include_one_on_a_user_initiative(sandbox) -> None:
    cid = sandbox.customer_id
    pending = sandbox.store.release_pending(cid)
    users = [e for e in pending if e["initiativeProps"]["type"] == "user"]
    assert len(users) == 1
    [entry] = users
    assert set(entry["initiativeProps"]["initiative"]) == {
        "type",
        "_id",
        "billingType",
        "unitIncrements",
        "name",
    }
    assert entry["initiativeProps"]["initiative"]["type"] == "user"
    released = sandbox.store.export_entries(
        cid, datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
    )
    [exported] = [e for e in released if e["_id"] == entry["_id"]]
    assert "externalId" not in exported["initiative"] and "client" not in exported["initiative"]
    assert exported["initiative"]["name"] == entry["initiativeProps"]["initiative"]["name"]


def test_batch_release_succeeded_answers_207_with_one_status_per_item(firm: Firm) -> None:
    a = firm.entry(released_at="2025-03-01T10:00:00Z")
    b = firm.entry(released_at="2025-03-01T10:00:00Z")
    editable = firm.entry()
    ack(firm, b, "release-succeeded", {"externalId": "B-1"})
    items = [
        {"entryId": a["_id"], "userId": a["userId"], "externalId": "A-1"},
        {"entryId": b["_id"], "userId": b["userId"], "externalId": "B-2"},
        {"entryId": editable["_id"], "userId": editable["userId"]},
        {"entryId": "0" * 24, "userId": a["userId"], "reReleaseFailedMessages": ["x"]},
    ]
    response = firm.api("POST", BATCH, json={"request": items})
    assert response.status_code == 207
    answer = response.json()["response"]
    assert [r["entryId"] for r in answer] == [i["entryId"] for i in items]
    assert [r["status"] for r in answer] == ["OK", "CONFLICT", "CONFLICT", "NOT_FOUND"]
    assert set(answer[0]) == {"entryId", "status"}
    assert all({"errorCode", "errorMessage"} <= set(r) for r in answer[1:])
    assert (_state(firm, a["_id"])["state"], _state(firm, a["_id"])["externalId"]) == (
        "succeeded",
        "A-1",
    )
    again = firm.api("POST", BATCH, json={"request": items[:1]}).json()["response"]
    assert again == [{"entryId": a["_id"], "status": "OK"}]  # a repeat, as the single route


@pytest.mark.parametrize("n", [0, 21])
def test_batch_release_succeeded_takes_1_to_20_items(firm: Firm, n: int) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    item = {"entryId": entry["_id"], "userId": entry["userId"]}
    response = firm.api("POST", BATCH, json={"request": [item] * n})
    assert response.status_code == 422
    assert _state(firm, entry["_id"])["state"] == "pending"


def test_batch_release_succeeded_is_404_when_the_profile_turns_it_off(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    firm.admin.set_profile(batchAck=False)
    item = {"entryId": entry["_id"], "userId": entry["userId"], "externalId": "B"}
    assert firm.api("POST", BATCH, json={"request": [item]}).status_code == 404
    assert _state(firm, entry["_id"])["state"] == "pending"


def test_batch_release_succeeded_is_counted_and_documented(firm: Firm, sandbox) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    sandbox.admin.reset_stats()
    firm.api(
        "POST", BATCH, json={"request": [{"entryId": entry["_id"], "userId": entry["userId"]}]}
    )
    routes = sandbox.admin.stats()["routes"]
    [(key, value)] = [(k, v) for k, v in routes.items() if k.endswith("/batch")]
    assert key.startswith("POST ") and value["count"] == 1 and value["statuses"] == {"207": 1}
    paths = firm.api("GET", "/openapi.json").json()["paths"]
    assert "207" in paths[BATCH.replace("{cid}", "{customerId}")]["post"]["responses"]


def test_release_succeeded_takes_no_external_id(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    response = ack(firm, entry, "release-succeeded", {})
    assert response.status_code == 200
    stored = _state(firm, entry["_id"])
    assert (stored["state"], stored["externalId"]) == ("succeeded", None)
