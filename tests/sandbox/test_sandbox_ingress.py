"""The five ingress operations: every rule of the spec's field tables, upsert, references."""

from __future__ import annotations

import pytest

from tests.conftest import Firm, Tenant
from toolkit.sandbox import Sandbox

PROBLEM = "application/problem+json"

VALID = {
    "clients": {"externalId": "C1", "name": "Acme", "callSign": "1001", "description": "A client"},
    "initiatives": {
        "billingType": "billable",
        "externalId": "M1",
        "name": "Acme v. Roe",
        "description": "Litigation",
        "callSign": "1001-001",
        "clientExternalId": "C1",
        "unitIncrements": 360,
        "status": "active",
    },
    "code-types": {
        "externalId": "task-code",
        "name": "task-code",
        "semanticType": "task",
        "customerDefaultable": True,
        "userDefaultable": False,
    },
    "codes": {
        "externalId": "L110",
        "name": "L110",
        "description": "Fact investigation",
        "codeTypeExternalId": "task-code",
    },
}
ORDER = ["clients", "initiatives", "code-types", "codes"]
REQUIRED = [(kind, field) for kind in ORDER for field in VALID[kind]]

# (kind, field, value that breaks the JSON type or the rule)
WRONG_TYPES = [
    ("clients", "externalId", 1001),
    ("clients", "name", None),
    ("clients", "callSign", 1001),
    ("clients", "description", ["x"]),
    ("initiatives", "billingType", True),
    ("initiatives", "externalId", {"id": "M1"}),
    ("initiatives", "name", 5),
    ("initiatives", "description", None),
    ("initiatives", "callSign", 1.5),
    ("initiatives", "clientExternalId", 1),
    ("initiatives", "unitIncrements", "360"),
    ("initiatives", "unitIncrements", True),
    ("initiatives", "unitIncrements", None),
    ("initiatives", "status", 1),
    ("code-types", "externalId", 7),
    ("code-types", "name", False),
    ("code-types", "semanticType", 1),
    ("code-types", "customerDefaultable", "yes"),
    ("code-types", "customerDefaultable", "true"),
    ("code-types", "customerDefaultable", 1),
    ("code-types", "userDefaultable", "no"),
    ("code-types", "userDefaultable", 0),
    ("code-types", "userDefaultable", None),
    ("codes", "externalId", 110),
    ("codes", "name", None),
    ("codes", "description", 3),
    ("codes", "codeTypeExternalId", ["task-code"]),
]

BAD_VALUES = [
    ("initiatives", "billingType", "Billable"),
    ("initiatives", "billingType", "BILLABLE"),
    ("initiatives", "billingType", "pro-bono"),
    ("initiatives", "billingType", "nonbillable"),
    ("initiatives", "status", "Active"),
    ("initiatives", "status", "closed"),
    ("initiatives", "unitIncrements", 0),
    ("initiatives", "unitIncrements", -360),
    ("initiatives", "unitIncrements", -0.5),
    ("code-types", "semanticType", "Task"),
    ("code-types", "semanticType", "expense"),
    ("code-types", "semanticType", ""),
    ("clients", "externalId", ""),
    ("initiatives", "externalId", ""),
    ("code-types", "externalId", ""),
    ("codes", "externalId", ""),
    ("initiatives", "clientExternalId", ""),
    ("codes", "codeTypeExternalId", ""),
]


def _import(t: Tenant, kind: str, body: object):
    return t.api("POST", f"/api/v1/customers/{{cid}}/{kind}/import", json=body)


def _with_references(t: Tenant, upto: str) -> None:
    """Import the valid records the kind ``upto`` depends on."""
    needs = {"initiatives": ["clients"], "codes": ["code-types"]}
    for kind in needs.get(upto, []):
        assert _import(t, kind, VALID[kind]).status_code == 201


def _assert_invalid_field(response, field: str, status: int = 422) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == status
    assert field in [e["field"] for e in body["errors"]], body


@pytest.fixture
def tenant(tenant: Tenant, sandbox: Sandbox) -> Tenant:
    """A fresh customer whose imports answer the stored record (the ``201-record`` switch;
    the default is a 201 with no body): these tests read the record from the answer."""
    sandbox.admin.set_profile(customer_id=tenant.customer_id, importAnswer="201-record")
    return tenant


@pytest.mark.parametrize("kind", ORDER)
def test_import_answers_201_with_the_stored_record(tenant: Tenant, kind: str) -> None:
    _with_references(tenant, kind)
    response = _import(tenant, kind, VALID[kind])
    assert response.status_code == 201
    record = response.json()
    assert len(record["_id"]) == 24 and int(record["_id"], 16) >= 0
    for field, value in VALID[kind].items():
        assert record[field] == value
    assert record["createdAt"].endswith("Z")
    assert tenant.api("GET", "/api/v1/customers/{cid}/users/x").status_code == 404
    assert record in _records(tenant, kind)


def _records(t: Tenant, kind: str) -> list[dict]:
    response = t.http.get(
        f"{t.url}/sandbox/v1/customers/{t.customer_id}/records/{kind}", timeout=10
    )
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("kind", ORDER)
def test_repeated_import_of_an_external_id_updates_it(tenant: Tenant, kind: str) -> None:
    _with_references(tenant, kind)
    first = _import(tenant, kind, VALID[kind]).json()
    changed = {**VALID[kind], "name": "Renamed"}
    second = _import(tenant, kind, changed)
    assert second.status_code == 201
    assert second.json()["_id"] == first["_id"]
    assert second.json()["name"] == "Renamed"
    assert second.json()["createdAt"] == first["createdAt"]
    assert [r["name"] for r in _records(tenant, kind)] == ["Renamed"]


@pytest.mark.parametrize(("kind", "field"), REQUIRED, ids=[f"{k}.{f}" for k, f in REQUIRED])
def test_missing_required_field_is_422_naming_it(tenant: Tenant, kind: str, field: str) -> None:
    body = {k: v for k, v in VALID[kind].items() if k != field}
    _assert_invalid_field(_import(tenant, kind, body), field)


@pytest.mark.parametrize(
    ("kind", "field", "value"), WRONG_TYPES, ids=[f"{k}.{f}={v!r}" for k, f, v in WRONG_TYPES]
)
def test_json_types_are_strict(tenant: Tenant, kind: str, field: str, value: object) -> None:
    _with_references(tenant, kind)
    name = field.split(".")[0]
    _assert_invalid_field(_import(tenant, kind, {**VALID[kind], name: value}), field)


@pytest.mark.parametrize(
    ("kind", "field", "value"), BAD_VALUES, ids=[f"{k}.{f}={v!r}" for k, f, v in BAD_VALUES]
)
def test_enums_are_case_sensitive_and_values_checked(
    tenant: Tenant, kind: str, field: str, value: object
) -> None:
    _with_references(tenant, kind)
    name = field.split(".")[0]
    _assert_invalid_field(_import(tenant, kind, {**VALID[kind], name: value}), field)


def test_every_invalid_field_is_listed(tenant: Tenant) -> None:
    _with_references(tenant, "initiatives")
    body = {**VALID["initiatives"], "unitIncrements": "360", "status": "Active"}
    del body["name"]
    response = _import(tenant, "initiatives", body)
    assert response.status_code == 422
    assert {e["field"] for e in response.json()["errors"]} == {"unitIncrements", "status", "name"}


@pytest.mark.parametrize("value", [360, 0.5, 600.0, 1e-3, 86400])
def test_unit_increments_accepts_any_positive_number(tenant: Tenant, value: float) -> None:
    _with_references(tenant, "initiatives")
    response = _import(tenant, "initiatives", {**VALID["initiatives"], "unitIncrements": value})
    assert response.status_code == 201
    assert response.json()["unitIncrements"] == value


@pytest.mark.parametrize("value", [None, "action", "activity", "location", "phase", "task"])
def test_semantic_type_is_null_or_one_of_five(tenant: Tenant, value: str | None) -> None:
    response = _import(tenant, "code-types", {**VALID["code-types"], "semanticType": value})
    assert response.status_code == 201
    assert response.json()["semanticType"] == value


@pytest.mark.parametrize("billing", ["billable", "non-billable"])
@pytest.mark.parametrize("status", ["active", "inactive"])
def test_initiative_enums_accept_each_value(tenant: Tenant, billing: str, status: str) -> None:
    _with_references(tenant, "initiatives")
    body = {**VALID["initiatives"], "billingType": billing, "status": status}
    assert _import(tenant, "initiatives", body).status_code == 201


@pytest.mark.parametrize("kind", ORDER)
def test_unknown_fields_are_rejected(tenant: Tenant, kind: str) -> None:
    _with_references(tenant, kind)
    _assert_invalid_field(_import(tenant, kind, {**VALID[kind], "extra": 1}), "extra")


@pytest.mark.parametrize("body", [[], "C1", 5, None], ids=["array", "string", "number", "null"])
def test_body_must_be_one_json_object(tenant: Tenant, body: object) -> None:
    response = _import(tenant, "clients", body)
    assert response.status_code == 422
    assert response.headers["content-type"] == PROBLEM


def test_body_that_is_not_json_is_422(tenant: Tenant) -> None:
    response = tenant.api(
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        data=b'{"a":',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert "JSON" in response.json()["errors"][0]["detail"]


def test_initiative_of_unknown_client_is_422_naming_it(tenant: Tenant) -> None:
    response = _import(tenant, "initiatives", {**VALID["initiatives"], "clientExternalId": "C9"})
    assert response.status_code == 422
    body = response.json()
    assert body["unknownIds"] == ["C9"]
    assert "C9" in body["detail"]
    assert body["errors"][0]["field"] == "clientExternalId"
    assert _records(tenant, "initiatives") == []


def test_code_of_unknown_code_type_is_422_naming_it(tenant: Tenant) -> None:
    response = _import(tenant, "codes", {**VALID["codes"], "codeTypeExternalId": "phase-code"})
    assert response.status_code == 422
    assert response.json()["unknownIds"] == ["phase-code"]
    assert _records(tenant, "codes") == []


def test_references_do_not_cross_customers(tenant_factory) -> None:
    a, b = tenant_factory(), tenant_factory()
    assert _import(a, "clients", VALID["clients"]).status_code == 201
    assert _import(b, "initiatives", VALID["initiatives"]).status_code == 422
    assert _import(b, "clients", {**VALID["clients"], "name": "Other"}).status_code == 201
    assert [c["name"] for c in _records(a, "clients")] == ["Acme"]


def test_initiative_can_move_to_another_client_and_back_to_active(firm: Firm) -> None:
    assert (
        _import(firm.tenant, "clients", {**VALID["clients"], "externalId": "C2"}).status_code == 201
    )
    body = {
        **VALID["initiatives"],
        "externalId": "M3",
        "clientExternalId": "C2",
        "status": "active",
    }
    record = _import(firm.tenant, "initiatives", body).json()
    assert (record["clientExternalId"], record["status"]) == ("C2", "active")


# --- code ranges ------------------------------------------------------------------------------

RANGE = "/api/v1/customers/{cid}/initiatives/M1/codes"


def test_code_range_is_stored_for_the_initiative(firm: Firm) -> None:
    response = firm.api("POST", RANGE, json={"codeExternalIds": ["L110", "A101"]})
    assert response.status_code == 201
    assert response.json()["codeExternalIds"] == ["L110", "A101"]
    stored = _records(firm.tenant, "code-ranges")
    assert [(r["initiativeExternalId"], r["codeExternalIds"]) for r in stored] == [
        ("M1", ["L110", "A101"])
    ]


def test_code_range_replaces_the_previous_one_and_drops_duplicates(firm: Firm) -> None:
    firm.api("POST", RANGE, json={"codeExternalIds": ["L110", "A101"]})
    response = firm.api("POST", RANGE, json={"codeExternalIds": ["L120", "L120", "L110"]})
    assert response.json()["codeExternalIds"] == ["L120", "L110"]
    assert _records(firm.tenant, "code-ranges")[0]["codeExternalIds"] == ["L120", "L110"]


def test_a_code_range_carries_1_to_2500_ids(firm: Firm) -> None:
    # published: codeExternalIds has 1 to 2500 items (removal is a separate DELETE)
    firm.api("POST", RANGE, json={"codeExternalIds": ["L110"]})
    _assert_invalid_field(firm.api("POST", RANGE, json={"codeExternalIds": []}), "codeExternalIds")
    too_many = firm.api("POST", RANGE, json={"codeExternalIds": [f"X{i}" for i in range(2501)]})
    _assert_invalid_field(too_many, "codeExternalIds")
    assert "at most 2500" in too_many.json()["detail"]
    at_most = firm.api("POST", RANGE, json={"codeExternalIds": [f"X{i}" for i in range(2500)]})
    assert at_most.status_code == 422 and len(at_most.json()["unknownIds"]) == 2500
    assert _records(firm.tenant, "code-ranges")[0]["codeExternalIds"] == ["L110"]


def test_code_range_max_and_post_are_profile_switches(firm: Firm) -> None:
    firm.admin.set_profile(codeRangeMax=2)
    three = firm.api("POST", RANGE, json={"codeExternalIds": ["L110", "L120", "A101"]})
    _assert_invalid_field(three, "codeExternalIds")
    assert firm.api("POST", RANGE, json={"codeExternalIds": ["L110", "L120"]}).status_code == 201
    firm.admin.set_profile(codeRangePost="add")
    added = firm.api("POST", RANGE, json={"codeExternalIds": ["A101", "L110"]})
    assert added.status_code == 201
    assert added.json()["codeExternalIds"] == ["L110", "L120", "A101"]
    assert _records(firm.tenant, "code-ranges")[0]["codeExternalIds"] == ["L110", "L120", "A101"]
    firm.admin.set_profile(codeRangePost="replace")
    firm.api("POST", RANGE, json={"codeExternalIds": ["A101"]})
    assert _records(firm.tenant, "code-ranges")[0]["codeExternalIds"] == ["A101"]


def test_code_range_of_unknown_initiative_is_404(firm: Firm) -> None:
    response = firm.api(
        "POST", "/api/v1/customers/{cid}/initiatives/M404/codes", json={"codeExternalIds": ["L110"]}
    )
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM
    assert "M404" in response.json()["detail"]


def test_code_range_with_unknown_codes_is_422_listing_every_one(firm: Firm) -> None:
    response = firm.api("POST", RANGE, json={"codeExternalIds": ["L110", "X1", "A101", "X2", "X1"]})
    assert response.status_code == 422
    body = response.json()
    assert body["unknownIds"] == ["X1", "X2"]
    assert [e["field"] for e in body["errors"]] == ["codeExternalIds.1", "codeExternalIds.3"]
    assert _records(firm.tenant, "code-ranges") == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"codeExternalIds": "L110"},
        {"codeExternalIds": [110]},
        {"codeExternalIds": [""]},
        {"codeExternalIds": None},
        {"codeExternalIds": ["L110"], "initiative": "M1"},
    ],
    ids=["missing", "string", "number-item", "empty-item", "null", "extra-field"],
)
def test_code_range_body_is_validated(firm: Firm, body: dict) -> None:
    assert firm.api("POST", RANGE, json=body).status_code == 422


# --- optional fields the service publishes beyond the spec ------------------------------------

OPTIONAL = {
    "clients": {"type": "parent"},
    "initiatives": {
        "externalGroupIds": ["G1", "G2"],
        "locale": "fr-CA",
        "allowFrom": "2026-01-01",
        "allowTo": "2026-12-31",
    },
    "code-types": {"orderingSequence": "010"},
    "codes": {
        "orderingSequence": "a1",
        "group": "litigation",
        "isDisabled": True,
        "userGroupExternalIds": ["UG1"],
    },
}


@pytest.mark.parametrize("kind", list(OPTIONAL))
def test_published_optional_fields_are_stored_and_shown_only_when_sent(
    tenant: Tenant, kind: str
) -> None:
    _with_references(tenant, kind)
    response = _import(tenant, kind, {**VALID[kind], **OPTIONAL[kind]})
    assert response.status_code == 201, response.text
    for field, value in OPTIONAL[kind].items():
        assert response.json()[field] == value
        assert _records(tenant, kind)[0][field] == value
    plain = _import(tenant, kind, VALID[kind])  # an import without them no longer holds them
    assert plain.status_code == 201 and not set(OPTIONAL[kind]) & set(plain.json())
    assert not set(OPTIONAL[kind]) & set(_records(tenant, kind)[0])


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("clients", "type", "Parent"),
        ("clients", "type", None),
        ("initiatives", "locale", "fr-BE"),
        ("initiatives", "allowFrom", "2026-02-30"),
        ("initiatives", "allowTo", "31/12/2026"),
        ("initiatives", "externalGroupIds", "G1"),
        ("initiatives", "externalGroupIds.0", [1]),
        ("code-types", "orderingSequence", 10),
        ("code-types", "orderingSequence", None),
        ("codes", "isDisabled", "true"),
        ("codes", "group", None),
        ("codes", "userGroupExternalIds", None),
    ],
)
def test_published_optional_fields_are_validated(
    tenant: Tenant, kind: str, field: str, value: object
) -> None:
    _with_references(tenant, kind)
    name = field.split(".")[0]
    _assert_invalid_field(_import(tenant, kind, {**VALID[kind], name: value}), field)


def test_nullable_published_fields_take_null(tenant: Tenant) -> None:
    _with_references(tenant, "initiatives")
    body = {
        **VALID["initiatives"],
        "locale": None,
        "allowFrom": None,
        "allowTo": None,
        "externalGroupIds": None,
    }
    assert _import(tenant, "initiatives", body).status_code == 201
