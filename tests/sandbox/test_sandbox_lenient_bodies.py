"""What the published documents allow in a request body and the sandbox refuses by default, its
own choice: empty identifiers and an empty ``errors`` list (``emptyValues: accept`` takes them as
any other value), unknown fields (``unknownFields: ignore`` drops them) and a ``unitIncrements``
beyond the sandbox's bounds (``unitBounds: none`` takes any finite number). The ``published``
preset sets all three, since neither interface.md nor the documents bound or close these bodies
(schemathesis over the published time document: "Schema-valid request rejected")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Firm
from toolkit.sandbox import PROFILES, Store
from toolkit.sandbox._exceptions import Unprocessable

_IMPORTS = "/time/api/v1/customers/{cid}/"

EMPTY_BODIES = [
    # (path under the customer, body, the fields a refusal names)
    (
        "clients/import",
        {"externalId": "", "name": "", "callSign": "", "description": ""},
        {"externalId"},
    ),
    (
        "initiatives/import",
        {
            "billingType": "billable",
            "externalId": "",
            "name": "Empty",
            "description": "",
            "callSign": "",
            "clientExternalId": "",
            "unitIncrements": 360,
            "status": "active",
        },
        {"externalId", "clientExternalId"},
    ),
    (
        "code-types/import",
        {
            "externalId": "",
            "name": "x",
            "semanticType": "task",
            "customerDefaultable": False,
            "userDefaultable": False,
        },
        {"externalId"},
    ),
    (
        "codes/import",
        {"externalId": "", "name": "", "description": "", "codeTypeExternalId": ""},
        {"externalId", "codeTypeExternalId"},
    ),
    ("initiatives/M1/codes", {"codeExternalIds": ["L110", ""]}, {"codeExternalIds.1"}),
]


def _import_empty_records(firm: Firm) -> None:
    """Import, in order, a client, initiative, code type and code whose ids are all empty."""
    for path, body, _ in EMPTY_BODIES[:4]:
        answer = firm.api("POST", _IMPORTS + path, json=body)
        assert answer.status_code == 201, answer.text


@pytest.mark.parametrize(
    ("path", "body", "fields"), EMPTY_BODIES, ids=[p for p, *_ in EMPTY_BODIES]
)
def test_an_empty_identifier_is_refused_by_default_naming_it(
    firm: Firm, path: str, body: dict, fields: set[str]
) -> None:
    answer = firm.api("POST", _IMPORTS + path, json=body)
    assert answer.status_code == 422
    assert {e["field"] for e in answer.json()["errors"]} == fields


def test_empty_identifiers_are_taken_as_any_other_under_accept(firm: Firm) -> None:
    firm.admin.set_profile(emptyValues="accept")
    _import_empty_records(firm)
    code_range = firm.api("POST", _IMPORTS + "initiatives/M1/codes", json=EMPTY_BODIES[4][1])
    assert code_range.status_code == 201, code_range.text
    initiative = next(i for i in firm.admin.records("initiatives") if i["externalId"] == "")
    assert initiative["clientExternalId"] == ""
    code = next(c for c in firm.admin.records("codes") if c["externalId"] == "")
    assert code["codeTypeExternalId"] == ""
    ranges = {
        r["initiativeExternalId"]: r["codeExternalIds"] for r in firm.admin.records("code-ranges")
    }
    assert ranges["M1"] == ["L110", ""]


def test_an_empty_reference_must_still_name_a_record_under_accept(firm: Firm) -> None:
    firm.admin.set_profile(emptyValues="accept")
    body = {**EMPTY_BODIES[1][1], "externalId": "M-EMPTY-CLIENT"}
    answer = firm.api("POST", _IMPORTS + "initiatives/import", json=body)
    assert answer.status_code == 422
    assert answer.json()["unknownIds"] == [""]


def _ack_path(firm: Firm, kind: str) -> str:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    return f"/time/api/v1/customers/{{cid}}/users/{entry['userId']}/entries/{entry['_id']}/{kind}"


@pytest.mark.parametrize(
    ("kind", "body", "field"),
    [
        ("release-failed", {"errors": []}, "errors"),
        ("release-succeeded", {"externalId": ""}, "externalId"),
    ],
)
def test_an_empty_acknowledgement_is_refused_by_default(
    firm: Firm, kind: str, body: dict, field: str
) -> None:
    answer = firm.api("POST", _ack_path(firm, kind), json=body)
    assert answer.status_code == 422
    assert [e["field"] for e in answer.json()["errors"]] == [field]
    assert firm.admin.records("entries")[0]["state"] == "pending"


@pytest.mark.parametrize(
    ("kind", "body", "held"),
    [
        ("release-failed", {"errors": []}, ("failed", None, [])),
        ("release-succeeded", {"externalId": ""}, ("succeeded", "", None)),
    ],
)
def test_an_empty_acknowledgement_is_stored_under_accept(
    firm: Firm, kind: str, body: dict, held: tuple
) -> None:
    firm.admin.set_profile(emptyValues="accept")
    path = _ack_path(firm, kind)
    answer = firm.api("POST", path, json=body)
    assert (answer.status_code, answer.content) == (200, b"")
    entry = firm.admin.records("entries")[0]
    assert (entry["state"], entry["externalId"], entry["errors"]) == held
    assert firm.api("POST", path, json=body).status_code == 200  # the same again: a no-op


def test_an_empty_batch_id_is_an_unknown_entry_under_accept(firm: Firm) -> None:
    item = {"entryId": "", "userId": firm.users["TK1"], "externalId": "INV-1"}
    path = "/time/api/v1/customers/{cid}/entries/release-succeeded/batch"
    refused = firm.api("POST", path, json={"request": [item]})
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["request.0.entryId"]
    firm.admin.set_profile(emptyValues="accept")
    answer = firm.api("POST", path, json={"request": [item]})
    assert answer.status_code == 207
    assert [r["status"] for r in answer.json()["response"]] == ["NOT_FOUND"]


def test_the_published_preset_accepts_empty_values() -> None:
    assert PROFILES["published"]["emptyValues"] == "accept"


def test_seeding_follows_the_profile_on_an_empty_identifier(tmp_path: Path) -> None:
    (tmp_path / "clients.csv").write_text(
        "externalId,name,callSign,description\nC1,One,1,\n,Nameless,0,\n", encoding="utf-8"
    )
    store = Store(tmp_path / "s.db")
    try:
        refusing = store.create_customer()["customerId"]
        with pytest.raises(Unprocessable, match="clients.csv line 3"):
            store.seed_sample(tmp_path, refusing, entries=0)
        accepting = store.create_customer()["customerId"]
        store.set_profile(accepting, {"emptyValues": "accept"})
        assert store.seed_sample(tmp_path, accepting, entries=0)["clients"] == 2
    finally:
        store.close()


# -- unknown fields ------------------------------------------------------------------------------

UNKNOWN = [
    ("clients/import", {**EMPTY_BODIES[0][1], "externalId": "C7", "clientCode": "7"}, "clientCode"),
    ("initiatives/M1/codes", {"codeExternalIds": ["L110"], "mode": "add"}, "mode"),
]


@pytest.mark.parametrize(("path", "body", "field"), UNKNOWN, ids=[p for p, *_ in UNKNOWN])
def test_an_unknown_field_is_refused_by_default_naming_it(
    firm: Firm, path: str, body: dict, field: str
) -> None:
    answer = firm.api("POST", _IMPORTS + path, json=body)
    assert answer.status_code == 422
    assert [(e["field"], e["detail"]) for e in answer.json()["errors"]] == [
        (field, "Extra inputs are not permitted")
    ]


def test_unknown_fields_are_dropped_under_ignore(firm: Firm) -> None:
    firm.admin.set_profile(unknownFields="ignore", importAnswer="201-record")
    answer = firm.api("POST", _IMPORTS + UNKNOWN[0][0], json=UNKNOWN[0][1])
    assert answer.status_code == 201, answer.text
    assert "clientCode" not in answer.json()
    stored = next(c for c in firm.admin.records("clients") if c["externalId"] == "C7")
    assert "clientCode" not in stored
    assert firm.api("POST", _IMPORTS + UNKNOWN[1][0], json=UNKNOWN[1][1]).status_code == 201


def test_an_unknown_field_of_a_batch_item_is_named_and_dropped_under_ignore(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    item = {"entryId": entry["_id"], "userId": entry["userId"], "externalID": "INV-1"}
    path = "/time/api/v1/customers/{cid}/entries/release-succeeded/batch"
    refused = firm.api("POST", path, json={"request": [item], "dryRun": True})
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["dryRun", "request.0.externalID"]
    firm.admin.set_profile(unknownFields="ignore")
    answer = firm.api("POST", path, json={"request": [item], "dryRun": True})
    assert [r["status"] for r in answer.json()["response"]] == ["OK"]
    stored = firm.admin.records("entries")[0]
    assert (stored["state"], stored["externalId"]) == ("succeeded", None)


def test_the_published_preset_ignores_unknown_fields() -> None:
    assert PROFILES["published"]["unknownFields"] == "ignore"


def test_the_served_document_keeps_the_interface_bodies_closed(firm: Firm) -> None:
    schemas = firm.api("GET", "/openapi.json").json()["components"]["schemas"]
    for name in ("ClientIn", "InitiativeIn", "CodeTypeIn", "CodeIn", "CodeRangeIn", "AckFailedIn"):
        assert schemas[name]["additionalProperties"] is False, name


# -- unitIncrements beyond the sandbox's bounds --------------------------------------------------


@pytest.mark.parametrize("unit", [0, -360, 1e-16, 1e20])
def test_a_unit_beyond_the_sandboxs_bounds_is_refused_by_default(firm: Firm, unit: float) -> None:
    body = {
        **EMPTY_BODIES[1][1],
        "externalId": "M8",
        "clientExternalId": "C1",
        "unitIncrements": unit,
    }
    answer = firm.api("POST", _IMPORTS + "initiatives/import", json=body)
    assert answer.status_code == 422
    assert [e["field"] for e in answer.json()["errors"]] == ["unitIncrements"]


@pytest.mark.parametrize("unit", [0, -360, 1e-16, 1e20])
def test_any_finite_unit_is_taken_as_sent_under_none(firm: Firm, unit: float) -> None:
    firm.admin.set_profile(unitBounds="none", importAnswer="201-record")
    body = {
        **EMPTY_BODIES[1][1],
        "externalId": "M8",
        "clientExternalId": "C1",
        "unitIncrements": unit,
    }
    answer = firm.api("POST", _IMPORTS + "initiatives/import", json=body)
    assert answer.status_code == 201, answer.text
    assert answer.json()["unitIncrements"] == unit
    firm.entry(initiative="M8", duration=900, released_at="2025-03-01T10:00:00Z")
    window = {"releasedAfter": "2025-03-01T00:00:00Z", "releasedOnOrBefore": "2025-03-02T00:00:00Z"}
    export = firm.api("GET", "/time/api/v2/customers/{cid}/entries/export", params=window).json()
    assert [e["unitIncrementCount"] for e in export] == [1 if unit > 1e-6 else 0]


def test_the_published_preset_takes_any_unit() -> None:
    assert PROFILES["published"]["unitBounds"] == "none"
