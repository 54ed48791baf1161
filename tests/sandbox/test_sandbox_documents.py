"""Where interface.md is silent, the sandbox answers as the published documents say (issue 39):
a client import takes ``parentClientId`` (time) or ``parentClientExternalId`` (ingestion); the
batch answer's ``errorCode`` is a number; an entry on an initiative made in the product carries
``billingType`` and ``unitIncrements``; the code range's ``DELETE`` is served. Where the two
cannot both be met (a code type's null ``semanticType``), the profile's ``codeTypeBody`` says
which, and the ``published`` preset refuses what the documents refuse. Answers are checked
against the published documents' own schemas (``tests/contract/published.json``)."""

from __future__ import annotations

import pytest

from tests.conftest import Firm
from tests.contract.published import answer_problems, request_problems
from toolkit.sandbox import PROFILES, Sandbox

CLIENT = {"externalId": "C2", "name": "Beta", "callSign": "2002", "description": ""}
CODE_TYPE = {"externalId": "other-code", "name": "other-code"}
BOOLEANS = {"customerDefaultable": False, "userDefaultable": True}
PENDING = "/api/v1/customers/{cid}/entries/release-pending"
BATCH = "/api/v1/customers/{cid}/entries/release-succeeded/batch"


def _parent_of(firm: Firm) -> object:
    firm.entry(released_at="2025-03-01T10:00:00Z")
    pending = firm.api("GET", "/time" + PENDING).json()
    return pending[0]["initiativeProps"]["initiative"]["client"].get("parentClientId", "absent")


# -- a client's parent ---------------------------------------------------------------------------


def test_a_client_import_takes_a_parent_client_id_and_the_digest_carries_it(firm: Firm) -> None:
    parent = firm.admin.records("clients")[0]["_id"]
    body = {**CLIENT, "externalId": "C1", "type": "client", "parentClientId": parent}
    assert request_problems("time", "POST", "/api/v1/customers/c/clients/import", {}, body) == []
    answer = firm.api("POST", "/time/api/v1/customers/{cid}/clients/import", json=body)
    assert (answer.status_code, answer.content) == (201, b"")
    firm.admin.set_profile(digests="published")
    assert _parent_of(firm) == parent


@pytest.mark.parametrize("parent", [None, "6553f1c0a1b2c3d4e5f60718"])
def test_a_parent_client_id_may_be_null_or_any_object_id(firm: Firm, parent: str | None) -> None:
    body = {**CLIENT, "parentClientId": parent}
    answer = firm.api("POST", "/api/v1/customers/{cid}/clients/import", json=body)
    assert answer.status_code == 201, answer.text


def test_a_parent_client_id_that_is_no_object_id_is_refused_naming_it(firm: Firm) -> None:
    answer = firm.api(
        "POST", "/api/v1/customers/{cid}/clients/import", json={**CLIENT, "parentClientId": "C1"}
    )
    assert answer.status_code == 422
    assert [e["field"] for e in answer.json()["errors"]] == ["parentClientId"]


def test_an_ingestion_client_import_names_its_parent_by_external_id(firm: Firm) -> None:
    parent = firm.admin.records("clients")[0]
    body = {**CLIENT, "externalId": "C1", "type": "client", "parentClientExternalId": "C1"}
    path = "/api/v1/customers/c/clients/import"
    assert request_problems("ingestion", "POST", path, {}, body) == []
    answer = firm.api("POST", "/ingestion/api/v1/customers/{cid}/clients/import", json=body)
    assert (answer.status_code, answer.content) == (201, b"")
    stored = next(c for c in firm.admin.records("clients") if c["externalId"] == "C1")
    assert stored["parentClientId"] == parent["_id"]
    assert "parentClientExternalId" not in stored
    firm.admin.set_profile(digests="published")
    assert _parent_of(firm) == parent["_id"]  # the same parent as its parentClientId


@pytest.mark.parametrize(
    ("extra", "unknown"),
    [
        ({"parentClientExternalId": "NO-SUCH"}, ["NO-SUCH"]),
        ({"parentClientExternalId": "C1", "parentClientId": "6553f1c0a1b2c3d4e5f60718"}, None),
    ],
    ids=["unknown", "another-client"],
)
def test_a_parent_client_external_id_must_name_the_parent(
    firm: Firm, extra: dict, unknown: list[str] | None
) -> None:
    path = "/ingestion/api/v1/customers/{cid}/clients/import"
    answer = firm.api("POST", path, json={**CLIENT, **extra})
    assert answer.status_code == 422
    assert [e["field"] for e in answer.json()["errors"]] == ["parentClientExternalId"]
    assert answer.json().get("unknownIds") == unknown
    assert "C2" not in {c["externalId"] for c in firm.admin.records("clients")}


def test_a_null_parent_client_external_id_names_no_parent(firm: Firm) -> None:
    body = {**CLIENT, "parentClientExternalId": None}
    answer = firm.api("POST", "/ingestion/api/v1/customers/{cid}/clients/import", json=body)
    assert answer.status_code == 201, answer.text
    stored = next(c for c in firm.admin.records("clients") if c["externalId"] == "C2")
    assert "parentClientId" not in stored


# -- the batch answer ----------------------------------------------------------------------------


def test_the_batch_answers_error_code_is_a_number_as_published(firm: Firm) -> None:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    items = [
        {"entryId": entry["_id"], "userId": entry["userId"], "externalId": "A-1"},
        {"entryId": "0" * 24, "userId": entry["userId"]},
    ]
    firm.api("POST", BATCH, json={"request": items[:1]})
    clash = {**items[0], "externalId": "A-2"}
    answer = firm.api("POST", "/time" + BATCH, json={"request": [clash, items[1]]})
    assert answer.status_code == 207
    body = answer.json()
    assert [(r["status"], r["errorCode"]) for r in body["response"]] == [
        ("CONFLICT", 409),
        ("NOT_FOUND", 404),
    ]
    assert answer_problems("time", "POST", BATCH.format(cid=firm.customer_id), 207, body) == []


# -- an initiative made in the product -----------------------------------------------------------


def test_an_entry_on_a_product_initiative_carries_billing_type_and_unit_increments(
    sandbox: Sandbox,
) -> None:
    pending = sandbox.store.release_pending(sandbox.customer_id)
    [entry] = [e for e in pending if e["initiativeProps"]["type"] == "user"]
    initiative = entry["initiativeProps"]["initiative"]
    assert (initiative["billingType"], initiative["unitIncrements"]) == ("non-billable", 360)
    # its counts follow its increment, as on any initiative
    assert entry["unitIncrementCount"] == -(-entry["incrementDurationInSeconds"] // 360)
    path = PENDING.format(cid=sandbox.customer_id)
    assert answer_problems("time", "GET", path, 200, [entry]) == []


def test_a_product_initiative_made_by_the_administration_route_has_them_too(firm: Firm) -> None:
    made = firm.admin.create_product_initiative(firm.users["TK1"], "Internal")
    [record] = [r for r in firm.admin.records("initiatives") if r["_id"] == made["_id"]]
    assert (record["billingType"], record["unitIncrements"]) == ("non-billable", 360)


# -- the code range's DELETE ---------------------------------------------------------------------


def _range_of(firm: Firm, initiative: str) -> list[str]:
    ranges = firm.admin.records("code-ranges")
    return next(
        (r["codeExternalIds"] for r in ranges if r["initiativeExternalId"] == initiative), []
    )


@pytest.mark.parametrize("base", ["/time", "/ingestion"])
def test_the_code_range_delete_removes_the_initiatives_range(firm: Firm, base: str) -> None:
    path = base + "/api/v1/customers/{cid}/initiatives/M1/codes"
    assert firm.api("POST", path, json={"codeExternalIds": ["L110", "L120"]}).status_code == 201
    assert _range_of(firm, "M1") == ["L110", "L120"]
    answer = firm.api("DELETE", path)
    assert (answer.status_code, answer.content) == (200, b"")
    assert _range_of(firm, "M1") == []
    assert firm.api("DELETE", path).status_code == 200  # an empty range: nothing to remove


def test_the_code_range_delete_of_an_unknown_initiative_is_a_404(firm: Firm) -> None:
    answer = firm.api("DELETE", "/api/v1/customers/{cid}/initiatives/NOPE/codes")
    assert answer.status_code == 404


# -- a code type's semanticType (issue 39 finding 7) ---------------------------------------------


def _code_type(firm: Firm, body: dict) -> tuple[int, list[str]]:
    answer = firm.api("POST", "/api/v1/customers/{cid}/code-types/import", json=body)
    fields = [e["field"] for e in answer.json().get("errors", [])] if answer.content else []
    return answer.status_code, fields


def test_the_published_preset_refuses_a_null_semantic_type_as_the_documents_do(
    firm: Firm,
) -> None:
    body = {**CODE_TYPE, "semanticType": None, **BOOLEANS}
    firm.admin.set_profile(**PROFILES["published"])
    firm.admin.set_profile(errorBody="problem")  # the problem body names the field
    assert _code_type(firm, body) == (422, ["semanticType"])
    assert "other-code" not in {r["externalId"] for r in firm.admin.records("code-types")}


def test_the_published_preset_takes_a_code_type_of_another_kind_left_out(firm: Firm) -> None:
    firm.admin.set_profile(codeTypeBody="published")
    assert _code_type(firm, CODE_TYPE) == (201, [])
    [stored] = [r for r in firm.admin.records("code-types") if r["externalId"] == "other-code"]
    assert (stored["semanticType"], stored["customerDefaultable"]) == (None, False)


def test_by_default_a_null_semantic_type_is_taken_and_a_missing_one_refused(firm: Firm) -> None:
    assert _code_type(firm, {**CODE_TYPE, "semanticType": None, **BOOLEANS}) == (201, [])
    status, fields = _code_type(firm, {**CODE_TYPE, "externalId": "x-code"})
    assert (status, sorted(fields)) == (
        422,
        ["customerDefaultable", "semanticType", "userDefaultable"],
    )
