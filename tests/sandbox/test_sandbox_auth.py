"""Token exchange, bearer authentication, customer scoping and persistence of credentials."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.conftest import TIMEOUT, Tenant, fetch_token
from toolkit.sandbox import Sandbox, running

TOKEN = "/api/v1/oauth/token"
PROBLEM = "application/problem+json"

# Every interface operation but the token: (method, path template with {cid}, body).
INTERFACE = [
    ("POST", "/api/v1/customers/{cid}/clients/import", {}),
    ("POST", "/api/v1/customers/{cid}/initiatives/import", {}),
    ("POST", "/api/v1/customers/{cid}/code-types/import", {}),
    ("POST", "/api/v1/customers/{cid}/codes/import", {}),
    ("POST", "/api/v1/customers/{cid}/initiatives/M1/codes", {}),
    ("GET", "/api/v2/customers/{cid}/entries/export", None),
    ("GET", "/api/v1/customers/{cid}/entries/release-pending", None),
    ("POST", "/api/v1/customers/{cid}/users/u/entries/e/release-succeeded", {}),
    ("POST", "/api/v1/customers/{cid}/users/u/entries/e/release-failed", {}),
    ("GET", "/api/v1/customers/{cid}/users/u", None),
    ("POST", "/api/v1/public/customers/{cid}/initiative-props/star", {}),
    ("POST", "/api/v1/public/customers/{cid}/initiative-props/unstar", {}),
    ("GET", "/api/v1/public/customers/{cid}/initiative-props/starred", None),
]
IDS = [f"{m} {p.split('{cid}')[1]}" for m, p, _ in INTERFACE]


def _token_body(sb: Sandbox, **changes: object) -> dict[str, object]:
    body: dict[str, object] = {
        "audience": sb.audience,
        "grant_type": "client_credentials",
        "client_id": sb.client_id,
        "client_secret": sb.client_secret,
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def _post_token(sb: Sandbox, body: object) -> requests.Response:
    return requests.post(sb.url + TOKEN, json=body, timeout=TIMEOUT)


def test_token_exchange_returns_a_bearer_token_valid_86400_seconds(sandbox: Sandbox) -> None:
    response = _post_token(sandbox, _token_body(sandbox))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"access_token", "expires_in", "token_type"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 86400
    assert isinstance(body["access_token"], str) and len(body["access_token"]) >= 32
    assert response.headers["Cache-Control"] == "no-store"


def test_each_token_exchange_issues_a_new_token(sandbox: Sandbox) -> None:
    first = _post_token(sandbox, _token_body(sandbox)).json()["access_token"]
    second = _post_token(sandbox, _token_body(sandbox)).json()["access_token"]
    assert first != second


@pytest.mark.parametrize(
    ("changes", "status", "error"),
    [
        ({"client_secret": "wrong"}, 401, "invalid_client"),
        ({"client_id": "0" * 24}, 401, "invalid_client"),
        ({"grant_type": "password"}, 400, "unsupported_grant_type"),
        ({"grant_type": "authorization_code"}, 400, "unsupported_grant_type"),
        ({"audience": "https://elsewhere.example"}, 400, "invalid_request"),
        ({"audience": None}, 400, "invalid_request"),
        ({"grant_type": None}, 400, "invalid_request"),
        ({"client_id": None}, 400, "invalid_request"),
        ({"client_secret": None}, 400, "invalid_request"),
        ({"client_secret": 12345}, 400, "invalid_request"),
        ({"client_id": ["x"]}, 400, "invalid_request"),
    ],
    ids=[
        "bad-secret",
        "unknown-client",
        "password-grant",
        "code-grant",
        "wrong-audience",
        "no-audience",
        "no-grant-type",
        "no-client-id",
        "no-client-secret",
        "secret-not-string",
        "client-id-not-string",
    ],
)
def test_token_errors_follow_rfc6749(
    sandbox: Sandbox, changes: dict[str, object], status: int, error: str
) -> None:
    response = _post_token(sandbox, _token_body(sandbox, **changes))
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == error


def test_token_body_that_is_not_json_is_invalid_request(sandbox: Sandbox) -> None:
    response = requests.post(
        sandbox.url + TOKEN,
        data="grant_type=client_credentials",
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_token_ignores_unknown_request_fields(sandbox: Sandbox) -> None:
    response = _post_token(sandbox, _token_body(sandbox, scope="read"))
    assert response.status_code == 200


@pytest.mark.parametrize(("method", "path", "body"), INTERFACE, ids=IDS)
def test_interface_path_without_token_is_401_with_bearer_challenge(
    tenant: Tenant, method: str, path: str, body: object
) -> None:
    response = tenant.http.request(
        method, tenant.url + path.format(cid=tenant.customer_id), json=body, timeout=TIMEOUT
    )
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["status"] == 401


@pytest.mark.parametrize(
    "header",
    ["Bearer not-a-token", "Basic dXNlcjpwYXNz", "Bearer", "bearer  "],
    ids=["unknown", "basic-scheme", "empty", "blank"],
)
def test_unknown_or_malformed_token_is_401(tenant: Tenant, header: str) -> None:
    response = tenant.http.get(
        f"{tenant.url}/api/v1/customers/{tenant.customer_id}/entries/release-pending",
        headers={"Authorization": header},
        timeout=TIMEOUT,
    )
    assert response.status_code == 401
    assert "Bearer" in response.headers["WWW-Authenticate"]


def test_bearer_scheme_is_case_insensitive(tenant: Tenant) -> None:
    response = tenant.http.get(
        f"{tenant.url}/api/v1/customers/{tenant.customer_id}/entries/release-pending",
        headers={"Authorization": f"bearer {tenant.token}"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 200


def test_unauthenticated_request_with_a_broken_body_is_401_not_422(tenant: Tenant) -> None:
    response = tenant.http.post(
        f"{tenant.url}/api/v1/customers/{tenant.customer_id}/clients/import",
        data="{not json",
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), INTERFACE, ids=IDS)
def test_token_of_another_customer_is_403(
    tenant_factory, method: str, path: str, body: object
) -> None:
    mine, other = tenant_factory(), tenant_factory()
    response = mine.http.request(
        method,
        mine.url + path.format(cid=other.customer_id),
        json=body,
        headers=mine.headers,
        timeout=TIMEOUT,
    )
    assert response.status_code == 403
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["status"] == 403


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_token_expires_after_its_lifetime() -> None:
    clock = FakeClock()
    with running(clock=clock, token_ttl=60) as sb:
        token_response = _post_token(sb, _token_body(sb)).json()
        assert token_response["expires_in"] == 60
        url = f"{sb.url}/api/v1/customers/{sb.customer_id}/entries/release-pending"
        headers = {"Authorization": f"Bearer {token_response['access_token']}"}
        clock.now += timedelta(seconds=59)
        assert requests.get(url, headers=headers, timeout=TIMEOUT).status_code == 200
        clock.now += timedelta(seconds=1)
        expired = requests.get(url, headers=headers, timeout=TIMEOUT)
        assert expired.status_code == 401
        assert 'error="invalid_token"' in expired.headers["WWW-Authenticate"]


def test_restart_on_the_same_file_keeps_tokens_data_and_customer(tmp_path) -> None:
    db = tmp_path / "sandbox.db"
    with running(db=db) as first:
        token = fetch_token(first.url, first.client_id, first.client_secret, first.audience)
        headers = {"Authorization": f"Bearer {token}"}
        assert (
            requests.post(
                f"{first.url}/api/v1/customers/{first.customer_id}/clients/import",
                json={"externalId": "C1", "name": "Acme", "callSign": "A", "description": ""},
                headers=headers,
                timeout=TIMEOUT,
            ).status_code
            == 201
        )
        created = first.admin.records("clients")[0]
        old_secret = first.client_secret
        customer_id, client_id = first.customer_id, first.client_id
    with running(db=db) as second:
        assert (second.customer_id, second.client_id) == (customer_id, client_id)
        assert second.client_secret != old_secret
        clients = requests.get(
            f"{second.url}/api/v1/customers/{customer_id}/entries/release-pending",
            headers=headers,
            timeout=TIMEOUT,
        )
        assert clients.status_code == 200  # the token issued before the restart still works
        assert second.admin.records("clients") == [created]
        # Both the old and the new secret of the demo client are accepted.
        for secret in (old_secret, second.client_secret):
            assert fetch_token(second.url, client_id, secret, second.audience)


def test_secrets_and_tokens_are_stored_only_as_hashes(tmp_path) -> None:
    db = tmp_path / "sandbox.db"
    with running(db=db) as sb:
        token = fetch_token(sb.url, sb.client_id, sb.client_secret, sb.audience)
        secret = sb.client_secret
    raw = db.read_bytes()
    for suffix in ("-wal", "-shm"):
        extra = db.with_name(db.name + suffix)
        if extra.exists():
            raw += extra.read_bytes()
    assert secret.encode() not in raw
    assert token.encode() not in raw
    with sqlite3.connect(db) as conn:
        hashes = [row[0] for row in conn.execute("SELECT token_hash FROM tokens")]
    assert hashes and all(len(h) == 64 for h in hashes)
