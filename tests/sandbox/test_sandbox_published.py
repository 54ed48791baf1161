"""Where interface.md is silent, the sandbox answers as the service publishes (published.md),
and today's answers stay behind profile switches: import and acknowledgement answers, the user
record, NestJS error bodies, ``expires_in`` as a double, the ``published`` preset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from tests.conftest import SAMPLE_DIR, TIMEOUT, Firm, fetch_token, read_env, sandbox_process
from toolkit import Client
from toolkit.sandbox import DEFAULT_AUDIENCE, PROFILES, Admin, Sandbox
from toolkit.sandbox._cli import read_profile

IMPORTS = [
    ("clients/import", {"externalId": "C9", "name": "Nine", "callSign": "9", "description": ""}),
    (
        "initiatives/import",
        {
            "billingType": "billable",
            "externalId": "M9",
            "name": "Nine",
            "description": "",
            "callSign": "9-1",
            "clientExternalId": "C1",
            "unitIncrements": 360,
            "status": "active",
        },
    ),
    (
        "code-types/import",
        {
            "externalId": "phase-code",
            "name": "phase-code",
            "semanticType": "phase",
            "customerDefaultable": False,
            "userDefaultable": False,
        },
    ),
    (
        "codes/import",
        {
            "externalId": "L190",
            "name": "L190",
            "description": "Other",
            "codeTypeExternalId": "task-code",
        },
    ),
    ("initiatives/M1/codes", {"codeExternalIds": ["L110"]}),
]
USER_FIELDS = {
    "_id",
    "createdAt",
    "updatedAt",
    "email",
    "firstName",
    "lastName",
    "nickname",
    "jobTitle",
    "status",
    "identities",
    "roles",
    "delegators",
    "delegates",
    "customer",
}


def _token_answer(sandbox: Sandbox, firm: Firm) -> requests.Response:
    return requests.post(
        sandbox.token_url,
        json={
            "audience": DEFAULT_AUDIENCE,
            "grant_type": "client_credentials",
            "client_id": firm.tenant.client_id,
            "client_secret": firm.tenant.client_secret,
        },
        timeout=TIMEOUT,
    )


# -- import answers ------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), IMPORTS, ids=[p for p, _ in IMPORTS])
def test_an_import_answers_201_with_no_body_by_default(firm: Firm, path: str, body: dict) -> None:
    answer = firm.api("POST", "/ingestion/api/v1/customers/{cid}/" + path, json=body)
    assert (answer.status_code, answer.content) == (201, b"")
    assert "content-type" not in answer.headers


@pytest.mark.parametrize(("path", "body"), IMPORTS, ids=[p for p, _ in IMPORTS])
def test_the_201_record_switch_answers_the_stored_record(firm: Firm, path: str, body: dict) -> None:
    firm.admin.set_profile(importAnswer="201-record")
    answer = firm.api("POST", "/api/v1/customers/{cid}/" + path, json=body)
    assert answer.status_code == 201
    assert answer.headers["content-type"] == "application/json"
    assert {k: answer.json()[k] for k in body} == body


# -- acknowledgement answers ---------------------------------------------------------------------


def _ack(firm: Firm, kind: str, body: dict) -> requests.Response:
    entry = firm.entry(released_at="2025-03-01T10:00:00Z")
    path = f"/time/api/v1/customers/{{cid}}/users/{entry['userId']}/entries/{entry['_id']}/{kind}"
    return firm.api("POST", path, json=body)


@pytest.mark.parametrize(
    ("kind", "body"),
    [("release-succeeded", {"externalId": "INV-1"}), ("release-failed", {"errors": ["closed"]})],
)
def test_an_acknowledgement_answers_200_with_no_body_by_default(
    firm: Firm, kind: str, body: dict
) -> None:
    answer = _ack(firm, kind, body)
    assert (answer.status_code, answer.content) == (200, b"")
    state = firm.admin.records("entries")[0]["state"]
    assert state == kind.removeprefix("release-")


def test_the_200_record_switch_answers_the_entrys_state(firm: Firm) -> None:
    firm.admin.set_profile(ackAnswer="200-record")
    answer = _ack(firm, "release-succeeded", {"externalId": "INV-1"})
    assert answer.status_code == 200
    assert set(answer.json()) == {"_id", "userId", "state", "externalId", "errors", "updatedAt"}
    assert (answer.json()["state"], answer.json()["externalId"]) == ("succeeded", "INV-1")


# -- the user record -----------------------------------------------------------------------------


def test_the_user_record_has_the_identity_services_published_shape(firm: Firm) -> None:
    user_id = firm.users["TK1"]
    answer = firm.api("GET", f"/identity/api/v1/customers/{{cid}}/users/{user_id}")
    assert answer.status_code == 200
    record = answer.json()
    assert set(record) == USER_FIELDS
    assert (record["_id"], record["email"]) == (user_id, "tk1@example.com")
    assert (record["firstName"], record["lastName"], record["status"]) == ("User", "TK1", "active")
    assert record["identities"] == [
        {"type": "external-billing-system", "value": "TK1"},
        {"type": "email", "value": "tk1@example.com"},
    ]
    assert record["createdAt"].endswith("Z") and record["updatedAt"] == record["createdAt"]
    assert (record["roles"], record["delegators"], record["delegates"]) == ([], [], [])
    assert record["customer"]["_id"] == firm.customer_id
    assert {"_id", "fullName", "tenant"} <= set(record["customer"])


def test_the_legacy_switch_answers_the_former_user_record(firm: Firm) -> None:
    firm.admin.set_profile(userRecord="legacy")
    user_id = firm.users["TK1"]
    record = firm.api("GET", f"/identity/api/v1/customers/{{cid}}/users/{user_id}").json()
    assert record == {
        "_id": user_id,
        "customerId": firm.customer_id,
        "timekeeperExternalId": "TK1",
        "name": "User TK1",
        "email": "tk1@example.com",
    }


# -- NestJS error bodies -------------------------------------------------------------------------


def test_nestjs_error_bodies_list_the_reasons_of_an_invalid_body(firm: Firm) -> None:
    firm.admin.set_profile(errorBody="nestjs")
    answer = firm.api(
        "POST",
        "/ingestion/api/v1/customers/{cid}/clients/import",
        json={"externalId": "C2", "name": 5},
    )
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert set(body) == {"statusCode", "message", "error"}
    assert (body["statusCode"], body["error"]) == (422, "Unprocessable Entity")
    assert isinstance(body["message"], list) and len(body["message"]) == 3
    assert any(m.startswith("name: ") for m in body["message"])


def test_nestjs_error_bodies_carry_one_message_otherwise(firm: Firm) -> None:
    firm.admin.set_profile(errorBody="nestjs")
    missing = firm.api("GET", "/identity/api/v1/customers/{cid}/users/nobody")
    assert missing.json() == {
        "statusCode": 404,
        "error": "Not Found",
        "message": "no user 'nobody' for this customer",
    }
    anonymous = firm.api(
        "GET", "/time/api/v1/customers/{cid}/entries/release-pending", headers={"Authorization": ""}
    )
    assert anonymous.status_code == 401
    assert (anonymous.json()["statusCode"], anonymous.json()["error"]) == (401, "Unauthorized")
    assert isinstance(anonymous.json()["message"], str)


# -- expires_in ----------------------------------------------------------------------------------


def test_expires_in_is_an_integer_by_default_and_a_double_under_the_switch(
    sandbox: Sandbox, firm: Firm
) -> None:
    plain = _token_answer(sandbox, firm)
    assert '"expires_in":86400,' in plain.text.replace(" ", "")
    firm.admin.set_profile(expiresIn="double")
    double = _token_answer(sandbox, firm)
    assert double.status_code == 200
    assert '"expires_in":86400.0,' in double.text.replace(" ", "")
    assert isinstance(json.loads(double.text)["expires_in"], float)


# -- the published preset ------------------------------------------------------------------------


def test_the_published_preset_holds_the_published_answers() -> None:
    preset = read_profile("published")
    assert preset == PROFILES["published"]
    assert {
        "errorBody": "nestjs",
        "expiresIn": "double",
        "importAnswer": "201-empty",
        "ackAnswer": "200-empty",
        "userRecord": "published",
    }.items() <= preset.items()


def test_toolkit_sandbox_takes_the_published_profile(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    with sandbox_process(
        tmp_path / "s.db", env_file, ["--profile", "published", "--seed", str(SAMPLE_DIR)]
    ) as (_, url):
        env = read_env(env_file)
        assert env["TOOLKIT_AUTH_URL"] == url + "/identity"
        admin = Admin(url)
        try:
            default = admin.default_profile()
            users = admin.records("users", customer_id=env["TOOLKIT_CUSTOMER_ID"])
        finally:
            admin.close()
        assert {k: default[k] for k in PROFILES["published"]} == PROFILES["published"]
        token = requests.post(
            env["TOOLKIT_AUTH_URL"] + "/api/v1/oauth/token",
            json={
                "audience": env["TOOLKIT_AUDIENCE"],
                "grant_type": "client_credentials",
                "client_id": env["TOOLKIT_CLIENT_ID"],
                "client_secret": env["TOOLKIT_CLIENT_SECRET"],
            },
            timeout=TIMEOUT,
        )
        assert isinstance(token.json()["expires_in"], float)
        assert fetch_token(
            url, env["TOOLKIT_CLIENT_ID"], env["TOOLKIT_CLIENT_SECRET"], env["TOOLKIT_AUDIENCE"]
        )
        with Client.from_env(env_file) as client:
            frame = client.users([users[0]["_id"]])
        assert frame["timekeeperExternalId"].tolist() == [users[0]["timekeeperExternalId"]]
