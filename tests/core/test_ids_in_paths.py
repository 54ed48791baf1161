"""Ids are addressable whatever they contain: the toolkit percent-encodes every path segment
(``.`` as ``%2E``, so no HTTP stack removes a ``.``/``..`` segment) and the sandbox routes on the
segments as sent. Each character goes through both halves: imports and code ranges of an
initiative with that id, acknowledgements of an entry of a user, starring."""

from __future__ import annotations

import pandas as pd
import pytest
import requests

from tests.conftest import TIMEOUT

ODD_IDS = ["a/b", ".", "..", "a?b", "a#b", "a%b", "a%2Fb", "a b", "../users", "é/ü"]


@pytest.fixture
def odd_firm(fresh_client, sandbox):  # noqa: ANN001, ANN201
    client = fresh_client
    client.import_clients(
        pd.DataFrame([{"externalId": "C1", "name": "C", "callSign": "1", "description": "d"}]),
        progress=False,
    )
    result = client.import_initiatives(
        pd.DataFrame(
            [
                {
                    "billingType": "billable",
                    "externalId": ext,
                    "name": f"M {ext}",
                    "description": "d",
                    "callSign": "1",
                    "clientExternalId": "C1",
                    "unitIncrements": 360,
                    "status": "active",
                }
                for ext in ODD_IDS
            ]
        ),
        progress=False,
    )
    assert result["ok"].all(), result
    client.import_code_types(
        pd.DataFrame(
            [
                {
                    "externalId": "T",
                    "name": "T",
                    "semanticType": "task",
                    "customerDefaultable": True,
                    "userDefaultable": False,
                }
            ]
        ),
        progress=False,
    )
    client.import_codes(
        pd.DataFrame(
            [{"externalId": "L1", "name": "L1", "description": "d", "codeTypeExternalId": "T"}]
        ),
        progress=False,
    )
    return client


def test_the_toolkit_encodes_every_reserved_character_and_the_dot() -> None:
    from toolkit._core.connection import Connection
    from toolkit._core.settings import Settings

    conn = Connection(Settings("c", "i", "s", "http://a", "http://t", audience="a"))
    url = conn.url("import_code_ranges", initiativeExternalId="../a?b#c%d e")
    assert url.endswith("/initiatives/%2E%2E%2Fa%3Fb%23c%25d%20e/codes")


@pytest.mark.parametrize("ext", ODD_IDS)
def test_code_ranges_reach_the_initiative_whatever_its_id(odd_firm, sandbox, ext) -> None:
    frame = pd.DataFrame([{"initiativeExternalId": ext, "codeExternalId": "L1"}])
    result = odd_firm.import_code_ranges(frame, progress=False)
    assert result["ok"].all(), result.to_dict("records")
    ranges = {
        r["initiativeExternalId"]: r["codeExternalIds"]
        for r in sandbox.admin.records("code-ranges", customer_id=odd_firm.customer_id)
    }
    assert ranges == {ext: ["L1"]}


@pytest.mark.parametrize("ext", ODD_IDS)
def test_starring_works_whatever_the_initiative_id(odd_firm, sandbox, ext) -> None:
    sandbox.admin.create_user("TK 1/a", "Ann", "ann@example.com", customer_id=odd_firm.customer_id)
    assert odd_firm.star("TK 1/a", [ext], progress=False)["status"].tolist() == ["sent"]
    assert odd_firm.starred("TK 1/a")["initiativeExternalId"].tolist() == [ext]
    assert odd_firm.unstar("TK 1/a", [ext], progress=False)["status"].tolist() == ["sent"]
    assert odd_firm.starred("TK 1/a").empty


def test_acknowledgements_reach_entries_through_raw_paths_with_encoded_ids(
    odd_firm, sandbox
) -> None:
    admin = sandbox.admin
    user = admin.create_user("TK", "Ann", "ann@example.com", customer_id=odd_firm.customer_id)
    entries = []
    for ext in ODD_IDS:
        entry = admin.create_entry(
            user["_id"],
            ext,
            work_date="2025-03-03",
            summary="w",
            increment_duration_in_seconds=60,
            customer_id=odd_firm.customer_id,
        )
        entries.append(
            admin.release_entry(user["_id"], entry["_id"], customer_id=odd_firm.customer_id)
        )
    frame = pd.DataFrame(
        [
            {
                "userId": user["_id"],
                "entryId": e["_id"],
                "outcome": "succeeded",
                "externalId": f"B-{i}",
            }
            for i, e in enumerate(entries)
        ]
    )
    result = odd_firm.acknowledge(frame, progress=False)
    assert result["ok"].all(), result.to_dict("records")


@pytest.mark.parametrize("user_id", ["a/b", "..", ".", "a?b", "a#b", "a%b", "a b"])
def test_a_user_id_with_odd_characters_is_one_segment_answered_404(odd_firm, user_id) -> None:
    reply = odd_firm.connection.send("user", path={"userId": user_id})
    assert reply.status == 404
    # the user route answered about this very id (not "no route", not another path)
    assert reply.body["type"].endswith("unknown-user"), reply.body
    assert reply.body["detail"] == f"no user {user_id!r} for this customer"


def test_the_sandbox_routes_encoded_slashes_and_dots_to_the_record(sandbox, tenant) -> None:
    # the code range answers its stored record under this switch (the default: no body)
    sandbox.admin.set_profile(customer_id=tenant.customer_id, importAnswer="201-record")
    body = {
        "billingType": "billable",
        "externalId": "x/..",
        "name": "n",
        "description": "",
        "callSign": "",
        "clientExternalId": "C",
        "unitIncrements": 6,
        "status": "active",
    }
    assert (
        tenant.api(
            "POST",
            "/api/v1/customers/{cid}/clients/import",
            json={"externalId": "C", "name": "", "callSign": "", "description": ""},
        ).status_code
        == 201
    )
    assert (
        tenant.api("POST", "/api/v1/customers/{cid}/initiatives/import", json=body).status_code
        == 201
    )
    assert (
        tenant.api(
            "POST",
            "/api/v1/customers/{cid}/code-types/import",
            json={
                "externalId": "T",
                "name": "T",
                "semanticType": None,
                "customerDefaultable": True,
                "userDefaultable": True,
            },
        ).status_code
        == 201
    )
    assert (
        tenant.api(
            "POST",
            "/api/v1/customers/{cid}/codes/import",
            json={"externalId": "K", "name": "K", "description": "", "codeTypeExternalId": "T"},
        ).status_code
        == 201
    )
    # requests would turn %2E back into "."; a prepared URL keeps the path as written
    url = tenant.url + f"/api/v1/customers/{tenant.customer_id}/initiatives/x%2F%2E%2E/codes"
    prepared = tenant.http.prepare_request(
        requests.Request("POST", url, json={"codeExternalIds": ["K"]}, headers=tenant.headers)
    )
    prepared.url = url
    response = tenant.http.send(prepared, timeout=TIMEOUT)
    assert response.status_code == 201, response.text
    assert response.json()["initiativeExternalId"] == "x/.."
