"""The sandbox refuses, never breaks: lone surrogates, out-of-range numbers, oversized bodies and
huge values give 4xx problems that echo no more than a prefix; afterwards the export and
release-pending still answer 200 with valid JSON. Also: export date-time forms, strict
``limit``, and the token endpoint through standard OAuth 2.0 clients."""

from __future__ import annotations

import json

import pytest
import requests

from tests.conftest import TIMEOUT, Firm
from toolkit.sandbox._exceptions import MAX_ECHO

SURROGATE = "\\ud800"  # as JSON text: the escape of a lone surrogate

# (method, path, JSON body with @ where the bad string goes) for every interface body route
BODY_ROUTES = [
    (
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        '{"externalId": "@", "name": "", "callSign": "", "description": ""}',
    ),
    (
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        '{"externalId": "C9", "name": "@", "callSign": "", "description": ""}',
    ),
    (
        "POST",
        "/api/v1/customers/{cid}/initiatives/import",
        '{"billingType": "billable", "externalId": "M9", "name": "n", "description": "@", '
        '"callSign": "", "clientExternalId": "C1", "unitIncrements": 6, "status": "active"}',
    ),
    (
        "POST",
        "/api/v1/customers/{cid}/code-types/import",
        '{"externalId": "@", "name": "", "semanticType": null, "customerDefaultable": true, '
        '"userDefaultable": true}',
    ),
    (
        "POST",
        "/api/v1/customers/{cid}/codes/import",
        '{"externalId": "X", "name": "", "description": "", "codeTypeExternalId": "@"}',
    ),
    ("POST", "/api/v1/customers/{cid}/initiatives/M1/codes", '{"codeExternalIds": ["L110", "@"]}'),
    (
        "POST",
        "/api/v1/customers/{cid}/users/{uid}/entries/{eid}/release-succeeded",
        '{"externalId": "@"}',
    ),
    (
        "POST",
        "/api/v1/customers/{cid}/users/{uid}/entries/{eid}/release-failed",
        '{"errors": ["ok", "@"]}',
    ),
    (
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/star",
        '{"timekeeperExternalId": "TK1", "initiativeExternalIds": ["@"]}',
    ),
    (
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/unstar",
        '{"timekeeperExternalId": "@", "initiativeExternalIds": ["M1"]}',
    ),
    (
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/star",
        '{"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1"], "@": 1}',
    ),
]


def _released_entry(firm: Firm) -> dict:
    return firm.entry(released_at="2025-03-03T10:00:00Z")


def _still_healthy(firm: Firm) -> None:
    export = firm.api(
        "GET",
        "/api/v2/customers/{cid}/entries/export",
        params={
            "releasedAfter": "2000-01-01T00:00:00Z",
            "releasedOnOrBefore": "2100-01-01T00:00:00Z",
        },
    )
    assert export.status_code == 200 and isinstance(json.loads(export.content), list)
    pending = firm.api("GET", "/api/v1/customers/{cid}/entries/release-pending")
    assert pending.status_code == 200 and isinstance(json.loads(pending.content), list)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    BODY_ROUTES,
    ids=[f"{i}-{p.rsplit('/', 1)[1]}" for i, (_, p, _) in enumerate(BODY_ROUTES)],
)
def test_a_lone_surrogate_in_any_body_is_refused_with_a_problem(
    firm: Firm, method: str, path: str, body: str
) -> None:
    entry = _released_entry(firm)
    url = path.format(cid="{cid}", uid=entry["userId"], eid=entry["_id"])
    response = firm.api(
        method,
        url,
        data=body.replace("@", "x" + SURROGATE).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code in (400, 422), response.text
    problem = response.json()
    assert problem["status"] == response.status_code
    assert "surrogate" in json.dumps(problem)
    _still_healthy(firm)


def test_a_lone_surrogate_in_a_token_request_is_invalid_request(sandbox) -> None:
    body = (
        '{"grant_type": "client_credentials", "client_id": "x' + SURROGATE + '", '
        f'"client_secret": "s", "audience": "{sandbox.audience}"}}'
    )
    response = requests.post(
        sandbox.url + "/api/v1/oauth/token",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_a_lone_surrogate_on_the_administration_routes_is_refused(sandbox, firm: Firm) -> None:
    response = requests.post(
        f"{sandbox.url}/sandbox/v1/customers/{firm.customer_id}/users",
        data=('{"timekeeperExternalId": "T' + SURROGATE + '", "name": "", "email": ""}').encode(),
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 422


INITIATIVE = {
    "billingType": "billable",
    "externalId": "M-num",
    "name": "n",
    "description": "",
    "callSign": "",
    "clientExternalId": "C1",
    "status": "active",
}


@pytest.mark.parametrize("value", ["1e-16", "1e-7", "1e20", "1000000001", "0", "-1", "1e400"])
def test_unit_increments_outside_the_documented_bounds_are_422(firm: Firm, value: str) -> None:
    text = json.dumps({**INITIATIVE, "unitIncrements": 1}).replace(
        '"unitIncrements": 1', f'"unitIncrements": {value}'
    )
    response = firm.api(
        "POST",
        "/api/v1/customers/{cid}/initiatives/import",
        data=text,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "unitIncrements"
    _still_healthy(firm)


@pytest.mark.parametrize(
    ("value", "back"),
    [(360, "360"), (0.3, "0.3"), (1e-6, "1e-6"), (1e9, "1000000000"), (2.5, "2.5")],
)
def test_unit_increments_inside_the_bounds_come_back_as_sent(firm: Firm, value, back) -> None:
    firm.admin.set_profile(importAnswer="201-record")  # the answer holds the stored record
    response = firm.api(
        "POST",
        "/api/v1/customers/{cid}/initiatives/import",
        json={**INITIATIVE, "unitIncrements": value},
    )
    assert response.status_code == 201, response.text
    assert json.loads(response.content)["unitIncrements"] == value
    assert f'"unitIncrements":{back}' in response.text.replace(" ", "")
    firm.api(
        "POST",
        "/api/v1/customers/{cid}/initiatives/import",
        json={**INITIATIVE, "externalId": "M1", "unitIncrements": value},
    )
    _released_entry(firm)
    _still_healthy(firm)


@pytest.mark.parametrize("value", [2**63, 2**31, -1])
def test_durations_outside_the_bounds_are_422_on_the_administration_route(
    sandbox, firm: Firm, value: int
) -> None:
    response = requests.post(
        f"{sandbox.url}/sandbox/v1/customers/{firm.customer_id}/users/{firm.users['TK1']}/entries",
        json={
            "initiativeExternalId": "M1",
            "workDate": "2025-03-03",
            "summary": "",
            "incrementDurationInSeconds": value,
            "codes": [],
        },
        timeout=TIMEOUT,
    )
    assert response.status_code == 422, response.text
    _still_healthy(firm)


def test_a_body_over_the_limit_is_413_and_nothing_is_stored(sandbox, firm: Firm) -> None:
    huge = "x" * (5 * 1024 * 1024)
    response = firm.api(
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        json={"externalId": "BIG", "name": huge, "callSign": "", "description": ""},
    )
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["limitBytes"] == 4 * 1024 * 1024
    assert "BIG" not in {
        c["externalId"] for c in sandbox.admin.records("clients", customer_id=firm.customer_id)
    }


def test_a_huge_value_is_echoed_as_a_short_prefix_only(firm: Firm) -> None:
    huge = "TK" + "9" * 1_000_000
    response = firm.api(
        "POST",
        "/api/v1/public/customers/{cid}/initiative-props/star",
        json={"timekeeperExternalId": huge, "initiativeExternalIds": ["M1"]},
    )
    assert response.status_code == 404
    assert len(response.content) < 4 * MAX_ECHO
    assert response.json()["detail"].endswith("…")


@pytest.mark.parametrize("limit", ["5.0", "+5", " 5", "5 ", "05", "0", "2501", "1e3", "ten"])
def test_starred_limit_is_parsed_strictly(firm: Firm, limit: str) -> None:
    response = firm.api(
        "GET",
        "/api/v1/public/customers/{cid}/initiative-props/starred",
        params={"timekeeperExternalId": "TK1", "limit": limit},
    )
    assert response.status_code == 400, (limit, response.text)


@pytest.mark.parametrize("limit", ["1", "5", "2500"])
def test_starred_limit_accepts_plain_integers(firm: Firm, limit: str) -> None:
    response = firm.api(
        "GET",
        "/api/v1/public/customers/{cid}/initiative-props/starred",
        params={"timekeeperExternalId": "TK1", "limit": limit},
    )
    assert response.status_code == 200


# -- export date-times ---------------------------------------------------------------------------

SAME_INSTANT = [
    "2025-03-03T10:00:00Z",
    "2025-03-03T10:00:00z",
    "2025-03-03t10:00:00Z",
    "2025-03-03 10:00:00Z",
    "2025-03-03T10:00:00.000000000Z",
    "2025-03-03T10:00:00.0009999Z",  # 7 digits, truncated to microseconds
    "2025-03-03T11:00:00+01:00",
    "2025-03-03T11:00:00+0100",
    "2025-03-03T11:00:00+01",
    "2025-03-03T09:00:00-01:00",
    "2025-03-03T09:00:00-0100",
    "2025-03-03T09:00:00-01",
    "2025-03-03T10:00",
    "2025-03-03T10:00:00,000Z",
]


@pytest.mark.parametrize("bound", SAME_INSTANT)
def test_export_bounds_accept_rfc3339_and_iso8601_forms(firm: Firm, bound: str) -> None:
    entry = _released_entry(firm)  # released at 10:00:00.000Z exactly
    on_or_before = firm.api(
        "GET",
        "/api/v2/customers/{cid}/entries/export",
        params={"releasedAfter": "2025-03-03T09:59:59Z", "releasedOnOrBefore": bound},
    )
    assert on_or_before.status_code == 200, on_or_before.text
    assert [e["_id"] for e in on_or_before.json()] == [entry["_id"]]
    after = firm.api(
        "GET",
        "/api/v2/customers/{cid}/entries/export",
        params={"releasedAfter": bound, "releasedOnOrBefore": "2025-03-03T10:00:01Z"},
    )
    assert after.status_code == 200 and after.json() == []


def test_a_plus_sent_unencoded_in_the_query_is_read_as_plus(firm: Firm) -> None:
    entry = _released_entry(firm)
    url = (
        f"{firm.tenant.url}/api/v2/customers/{firm.customer_id}/entries/export?"
        "releasedAfter=2025-03-03T10:59:59+01:00&releasedOnOrBefore=2025-03-03T11:00:00+01:00"
    )
    response = firm.tenant.http.get(url, headers=firm.tenant.headers, timeout=TIMEOUT)
    assert [e["_id"] for e in response.json()] == [entry["_id"]]


@pytest.mark.parametrize(
    "bound",
    [
        "2025-03-03",
        "2025-03-03T10:00:00.1234567890Z",
        "2025-02-30T10:00:00Z",
        "2025-03-03T10:00:00+24:00",
        "2025-03-03T10Z",
        "yesterday",
    ],
)
def test_export_bounds_that_name_no_instant_are_400(firm: Firm, bound: str) -> None:
    response = firm.api(
        "GET",
        "/api/v2/customers/{cid}/entries/export",
        params={"releasedAfter": bound, "releasedOnOrBefore": "2025-03-04T00:00:00Z"},
    )
    assert response.status_code == 400


# -- standard OAuth 2.0 clients ------------------------------------------------------------------


def _user_with(token: str, sandbox) -> int:
    return requests.get(
        f"{sandbox.url}/api/v1/public/customers/{sandbox.customer_id}"
        "/initiative-props/starred?timekeeperExternalId=nobody",
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    ).status_code


def test_requests_oauthlib_backend_client_gets_a_token_that_works(sandbox, monkeypatch) -> None:
    from oauthlib.oauth2 import BackendApplicationClient
    from requests_oauthlib import OAuth2Session

    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the sandbox is plain http on loopback
    session = OAuth2Session(client=BackendApplicationClient(client_id=sandbox.client_id))
    token = session.fetch_token(
        sandbox.token_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        audience=sandbox.audience,
        timeout=TIMEOUT,
    )
    assert token["token_type"] == "Bearer"
    assert _user_with(token["access_token"], sandbox) == 404  # authenticated: no such timekeeper


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_authlib_gets_a_token_that_works(sandbox, method: str) -> None:
    from authlib.integrations.requests_client import OAuth2Session

    with OAuth2Session(
        sandbox.client_id, sandbox.client_secret, token_endpoint_auth_method=method
    ) as session:
        token = session.fetch_token(
            sandbox.token_url,
            grant_type="client_credentials",
            audience=sandbox.audience,
            timeout=TIMEOUT,
        )
    assert _user_with(token["access_token"], sandbox) == 404


def test_wrong_basic_credentials_are_401_invalid_client_with_a_basic_challenge(sandbox) -> None:
    response = requests.post(
        sandbox.token_url,
        auth=(sandbox.client_id, "wrong"),
        data={"grant_type": "client_credentials", "audience": sandbox.audience},
        timeout=TIMEOUT,
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert response.headers["WWW-Authenticate"].startswith("Basic")


@pytest.mark.parametrize(
    ("data", "auth", "error"),
    [
        ({"grant_type": "password", "audience": "A"}, True, "unsupported_grant_type"),
        ({"grant_type": "client_credentials", "audience": "elsewhere"}, True, "invalid_request"),
        ({"grant_type": "client_credentials"}, True, "invalid_request"),
        (
            {"grant_type": "client_credentials", "audience": "A", "client_secret": "x"},
            True,
            "invalid_request",
        ),  # two authentication methods
        (
            {
                "grant_type": "client_credentials",
                "audience": "A",
                "client_id": "ID",
                "client_secret": "SECRET",
            },
            False,
            None,
        ),  # credentials in the form body
    ],
    ids=["grant", "audience", "no-audience", "two-methods", "form-body"],
)
def test_form_token_requests_follow_rfc6749(sandbox, data, auth, error) -> None:
    data = {
        k: {"A": sandbox.audience, "ID": sandbox.client_id, "SECRET": sandbox.client_secret}.get(
            v, v
        )
        for k, v in data.items()
    }
    response = requests.post(
        sandbox.token_url,
        data=data,
        timeout=TIMEOUT,
        auth=(sandbox.client_id, sandbox.client_secret) if auth else None,
    )
    if error is None:
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 400, response.text
        assert response.json()["error"] == error
