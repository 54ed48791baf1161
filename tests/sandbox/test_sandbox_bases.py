"""Each service on its own base: ``{url}/identity``, ``{url}/time``, ``{url}/ingestion``.

The real service has three hosts; the sandbox serves each under a path prefix of its one server
(the paths published.md lists for that host) and keeps serving every path at the root. A path
under a prefix is the root path to every layer: profile answers, rate limit, request counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.conftest import TIMEOUT, Firm
from toolkit import Client
from toolkit.sandbox import DEFAULT_AUDIENCE, Sandbox

#: operation -> (method, path under a base, JSON body, the bases that serve it)
OPERATIONS = {
    "token": ("POST", "/api/v1/oauth/token", "creds", {"identity"}),
    "user": ("GET", "/api/v1/customers/{cid}/users/{uid}", None, {"identity"}),
    "import": (
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        {"externalId": "C1", "name": "Acme Corp", "callSign": "1001", "description": "A client"},
        {"time", "ingestion"},
    ),
    "code range": (
        "POST",
        "/api/v1/customers/{cid}/initiatives/M1/codes",
        {"codeExternalIds": ["L110"]},
        {"time", "ingestion"},
    ),
    "export": (
        "GET",
        "/api/v2/customers/{cid}/entries/export?releasedAfter=2025-01-01T00:00:00Z"
        "&releasedOnOrBefore=2025-02-01T00:00:00Z",
        None,
        {"time"},
    ),
    "release-pending": (
        "GET",
        "/api/v1/customers/{cid}/entries/release-pending",
        None,
        {"time", "ingestion"},
    ),
    "release-failed": (
        "POST",
        "/api/v1/customers/{cid}/users/{uid}/entries/nope/release-failed",
        {"errors": ["x"]},
        {"time"},
    ),
    "star": (
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/star",
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1"]},
        {"time"},
    ),
    "starred": (
        "GET",
        "/api/v1/public/customers/{cid}/initiative-props/starred?timekeeperExternalId=TK1",
        None,
        {"time"},
    ),
}
BASES = ["identity", "time", "ingestion"]


def _call(firm: Firm, base: str, operation: str) -> requests.Response:
    method, path, body, _ = OPERATIONS[operation]
    path = path.replace("{uid}", firm.users["TK1"])
    if body == "creds":
        t = firm.tenant
        body = {
            "audience": DEFAULT_AUDIENCE,
            "grant_type": "client_credentials",
            "client_id": t.client_id,
            "client_secret": t.client_secret,
        }
    return firm.api(method, base + path, json=body)


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("base", BASES)
def test_a_base_serves_its_services_paths_and_404s_the_others(
    firm: Firm, base: str, operation: str
) -> None:
    root = _call(firm, "", operation)
    answer = _call(firm, "/" + base, operation)
    if base in OPERATIONS[operation][3]:
        assert answer.status_code == root.status_code, answer.text
        if answer.status_code == 404:  # an unknown entry: the route answered, not "no route"
            assert answer.json()["type"].endswith("unknown-entry")
    else:
        assert answer.status_code == 404, answer.text
        assert answer.json()["detail"].startswith(f"no route for /{base}/api/"), answer.text


def test_the_user_record_is_on_identity_only_as_on_the_service(firm: Firm) -> None:
    path = f"/api/v1/customers/{{cid}}/users/{firm.users['TK1']}"
    assert firm.api("GET", "/identity" + path).status_code == 200
    assert firm.api("GET", path).status_code == 200  # the root serves everything
    on_time = firm.api("GET", "/time" + path)
    assert on_time.status_code == 404
    assert on_time.json()["title"] == "Not Found"


def test_the_root_still_serves_every_path(firm: Firm) -> None:
    for operation in OPERATIONS:
        answer = _call(firm, "", operation)
        assert answer.status_code in (200, 201, 207) or (
            operation == "release-failed" and answer.json()["type"].endswith("unknown-entry")
        ), (operation, answer.text)


def test_an_id_sent_percent_encoded_stays_one_segment_under_a_base(firm: Firm) -> None:
    url = firm.tenant.url + f"/identity/api/v1/customers/{firm.customer_id}/users/a%2F%2E%2E"
    prepared = firm.tenant.http.prepare_request(
        requests.Request("GET", url, headers=firm.tenant.headers)
    )
    prepared.url = url  # requests would turn %2E back into "."
    answer = firm.tenant.http.send(prepared, timeout=TIMEOUT)
    assert answer.status_code == 404
    assert answer.json()["detail"] == "no user 'a/..' for this customer"


def test_requests_under_a_base_count_under_the_root_route_templates(
    firm: Firm, sandbox: Sandbox
) -> None:
    sandbox.admin.reset_stats()
    for base in ("", "/time", "/ingestion"):
        _call(firm, base, "release-pending")
    _call(firm, "/identity", "user")
    _call(firm, "/time", "user")  # no such route there: not counted, as any unknown path
    routes = sandbox.admin.stats()["routes"]
    assert routes["GET /api/v1/customers/{customerId}/entries/release-pending"]["count"] == 3
    assert routes["GET /api/v1/customers/{customerId}/users/{userId}"]["count"] == 1
    assert all("/time/" not in key and "/ingestion/" not in key for key in routes)


def test_the_customers_profile_shapes_answers_under_a_base(firm: Firm) -> None:
    firm.admin.set_profile(
        errorBody="text", rateLimit={"kind": "fixed-window", "limit": 2, "windowSeconds": 60}
    )
    invalid = firm.api("POST", "/ingestion/api/v1/customers/{cid}/clients/import", json={})
    assert invalid.status_code == 422
    assert invalid.headers["content-type"].startswith("text/plain")
    missing = firm.api("GET", f"/time/api/v1/customers/{{cid}}/users/{firm.users['TK1']}")
    assert missing.status_code == 404  # no route, shaped all the same
    assert missing.headers["content-type"].startswith("text/plain")
    assert firm.api("GET", "/api/v1/customers/{cid}/entries/release-pending").status_code == 200
    limited = firm.api("GET", "/time/api/v1/customers/{cid}/entries/release-pending")
    assert limited.status_code == 429  # one limit for the customer, whatever the base


def test_a_body_over_the_limit_is_413_under_a_base(firm: Firm) -> None:
    big = b'{"externalId": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    answer = firm.api(
        "POST",
        "/ingestion/api/v1/customers/{cid}/clients/import",
        data=big,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 413


def test_env_names_a_base_per_service(sandbox: Sandbox) -> None:
    env = sandbox.env()
    assert (env["TOOLKIT_AUTH_URL"], env["TOOLKIT_TIME_URL"], env["TOOLKIT_INGESTION_URL"]) == (
        f"{sandbox.url}/identity",
        f"{sandbox.url}/time",
        f"{sandbox.url}/ingestion",
    )
    assert sandbox.token_url == f"{sandbox.url}/identity/api/v1/oauth/token"


def test_a_client_from_the_sandboxs_env_file_reads_user_records(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    env_file = sandbox.write_env(tmp_path / ".env")
    user = sandbox.admin.records("users")[0]
    with Client.from_env(env_file) as client:
        assert client.connection.url("user", userId="u").startswith(sandbox.url + "/identity/")
        record = client.user(user["_id"])
        frame = client.users([user["_id"]])
        pending = client.release_pending()  # the time base, through its own prefix
    assert {"type": "external-billing-system", "value": user["timekeeperExternalId"]} in (
        record["identities"]
    )
    assert frame["timekeeperExternalId"].tolist() == [user["timekeeperExternalId"]]
    assert pending.entries is not None


def test_one_base_for_everything_still_works(sandbox: Sandbox) -> None:
    user = sandbox.admin.records("users")[0]
    env = {**sandbox.env(), "TOOLKIT_AUTH_URL": sandbox.url, "TOOLKIT_TIME_URL": sandbox.url}
    del env["TOOLKIT_INGESTION_URL"]
    with Client.from_env(None, environ=env) as client:
        assert client.users([user["_id"]])["timekeeperExternalId"].tolist() == [
            user["timekeeperExternalId"]
        ]
