"""Problem bodies for every whole-request failure, and an OpenAPI document that shows them."""

from __future__ import annotations

import re

import pytest
import requests

from tests.conftest import TIMEOUT, Tenant
from toolkit.sandbox import Sandbox

PROBLEM = "application/problem+json"
PROBLEM_MEMBERS = {"type", "title", "status", "detail", "instance"}


@pytest.fixture(scope="module")
def openapi(sandbox: Sandbox) -> dict:
    response = requests.get(f"{sandbox.url}/openapi.json", timeout=TIMEOUT)
    assert response.status_code == 200
    return response.json()


def test_unknown_route_is_a_404_problem(sandbox: Sandbox) -> None:
    response = requests.get(f"{sandbox.url}/api/v1/nothing/here", timeout=TIMEOUT)
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert PROBLEM_MEMBERS <= set(body)
    assert body["instance"] == "/api/v1/nothing/here"


def test_wrong_method_is_a_405_problem_with_allow(sandbox: Sandbox) -> None:
    response = requests.delete(f"{sandbox.url}/sandbox/v1/faults", timeout=TIMEOUT)
    assert response.status_code == 405
    assert response.headers["content-type"] == PROBLEM
    assert set(response.headers["Allow"].split(", ")) == {"GET", "PUT"}


def test_problem_body_members(tenant: Tenant) -> None:
    response = tenant.api(
        "POST", "/api/v1/customers/{cid}/initiatives/NOPE/codes", json={"codeExternalIds": ["L1"]}
    )
    assert response.status_code == 404
    body = response.json()
    assert PROBLEM_MEMBERS <= set(body)
    assert body["type"].startswith("tag:")
    assert body["status"] == 404
    assert body["instance"] == f"/api/v1/customers/{tenant.customer_id}/initiatives/NOPE/codes"


def test_openapi_documents_every_interface_path(openapi: dict) -> None:
    paths = openapi["paths"]
    expected = {
        ("post", "/api/v1/oauth/token"),
        ("post", "/api/v1/customers/{customerId}/clients/import"),
        ("post", "/api/v1/customers/{customerId}/initiatives/import"),
        ("post", "/api/v1/customers/{customerId}/code-types/import"),
        ("post", "/api/v1/customers/{customerId}/codes/import"),
        ("post", "/api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes"),
        ("get", "/api/v2/customers/{customerId}/entries/export"),
        ("get", "/api/v1/customers/{customerId}/entries/release-pending"),
        (
            "post",
            "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-succeeded",
        ),
        ("post", "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-failed"),
        ("get", "/api/v1/customers/{customerId}/users/{userId}"),
        ("post", "/api/v1/public/customers/{customerId}/initiative-props/star"),
        ("post", "/api/v1/public/customers/{customerId}/initiative-props/unstar"),
        ("get", "/api/v1/public/customers/{customerId}/initiative-props/starred"),
    }
    assert expected <= {(m, p) for p, ops in paths.items() for m in ops}


def test_openapi_documents_207_with_its_item_schema(openapi: dict) -> None:
    op = openapi["paths"]["/api/v1/public/customers/{customerId}/initiative-props/star"]["post"]
    ref = op["responses"]["207"]["content"]["application/json"]["schema"]["$ref"]
    schemas = openapi["components"]["schemas"]
    response = schemas[ref.rsplit("/", 1)[1]]
    item_ref = response["properties"]["response"]["items"]["$ref"]
    item = schemas[item_ref.rsplit("/", 1)[1]]
    assert set(item["properties"]) == {
        "initiativeExternalId",
        "status",
        "errorCode",
        "errorMessage",
    }
    assert set(item["required"]) == {"initiativeExternalId", "status"}


def test_openapi_error_responses_are_problem_json(openapi: dict) -> None:
    for path, operations in openapi["paths"].items():
        for method, op in operations.items():
            for status, response in op["responses"].items():
                if int(status) < 400:
                    continue
                content = response.get("content", {})
                if path == "/api/v1/oauth/token" and status in ("400", "401"):
                    assert "application/json" in content
                else:
                    assert list(content) == [PROBLEM], (method, path, status)


def test_interface_operations_declare_auth_fault_and_retry_responses(openapi: dict) -> None:
    for path, operations in openapi["paths"].items():
        if not path.startswith("/api/") or path == "/api/v1/oauth/token":
            continue
        for op in operations.values():
            assert {"401", "403", "429", "500", "503"} <= set(op["responses"]), path
            assert "Retry-After" in op["responses"]["503"]["headers"]
            assert "WWW-Authenticate" in op["responses"]["401"]["headers"]
            assert op["security"] == [{"clientCredentials": []}]


def test_openapi_security_scheme_is_client_credentials(openapi: dict) -> None:
    scheme = openapi["components"]["securitySchemes"]["clientCredentials"]
    assert scheme["flows"]["clientCredentials"]["tokenUrl"] == "/api/v1/oauth/token"


def test_openapi_body_schemas_are_strict(openapi: dict) -> None:
    schemas = openapi["components"]["schemas"]
    initiative = schemas["InitiativeIn"]
    assert initiative["additionalProperties"] is False
    unit = initiative["properties"]["unitIncrements"]
    assert (unit["minimum"], unit["maximum"]) == (1e-6, 1e9)  # the documented bounds
    assert initiative["properties"]["status"]["enum"] == ["active", "inactive"]
    star = schemas["StarRequest"]["properties"]["initiativeExternalIds"]
    assert (star["minItems"], star["maxItems"]) == (1, 100)


def test_body_without_json_content_type_says_so(tenant: Tenant) -> None:
    response = tenant.api(
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        data='{"externalId": "C1", "name": "", "callSign": "", "description": ""}',
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 422
    assert "Content-Type: application/json" in response.json()["errors"][-1]["detail"]


# -- every bound the sandbox enforces is stated (issue 20, item 19) ----------------------------


def _query(openapi: dict, path: str, name: str) -> dict:
    params = openapi["paths"][path]["get"]["parameters"]
    return next(p for p in params if p["name"] == name and p["in"] == "query")


def test_openapi_states_the_starred_limit_bounds(openapi: dict) -> None:
    limit = _query(
        openapi, "/api/v1/public/customers/{customerId}/initiative-props/starred", "limit"
    )["schema"]
    assert limit["type"] == "integer"
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 2500, 2500)


@pytest.mark.parametrize("name", ["releasedAfter", "releasedOnOrBefore"])
def test_openapi_states_the_export_years_0001_to_9999(openapi: dict, name: str) -> None:
    param = _query(openapi, "/api/v2/customers/{customerId}/entries/export", name)
    pattern = re.compile(param["schema"]["pattern"])
    assert not pattern.match("0000-01-01T00:00:00Z")
    assert pattern.match("0001-01-01T00:00:00Z") and pattern.match("9999-12-31T23:59:59Z")
    assert "0001 to 9999" in param["description"]


def test_openapi_states_the_body_size_limit_on_every_body(openapi: dict) -> None:
    for path, operations in openapi["paths"].items():
        for method, op in operations.items():
            if "requestBody" not in op:
                continue
            response = op["responses"].get("413")
            assert response is not None, (method, path)
            assert "4194304 bytes" in response["description"]
            assert list(response["content"]) == [PROBLEM]


def test_stated_bounds_are_the_enforced_ones(tenant: Tenant) -> None:
    path = "/api/v1/public/customers/{cid}/initiative-props/starred"
    for limit, status in (("2500", 404), ("2501", 400), ("1", 404), ("0", 400)):
        response = tenant.api(
            "GET", path, params={"timekeeperExternalId": "NOBODY", "limit": limit}
        )
        assert response.status_code == status, (limit, response.text)
    response = tenant.api(
        "GET",
        "/api/v2/customers/{cid}/entries/export",
        params={
            "releasedAfter": "0000-01-01T00:00:00Z",
            "releasedOnOrBefore": "2025-01-01T00:00:00Z",
        },
    )
    assert response.status_code == 400


# -- every enforced bound in the OpenAPI document ----------------------------------------------


def test_openapi_states_the_starred_limit_bound(openapi: dict) -> None:
    op = openapi["paths"]["/api/v1/public/customers/{customerId}/initiative-props/starred"]
    (limit,) = [p for p in op["get"]["parameters"] if p["name"] == "limit"]
    schema = limit["schema"]  # an integer from 1 to 2500
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 1, 2500)


def test_openapi_refuses_year_zero_in_date_patterns(openapi: dict) -> None:
    op = openapi["paths"]["/api/v2/customers/{customerId}/entries/export"]["get"]
    patterns = [
        p["schema"]["pattern"]
        for p in op["parameters"]
        if p["name"] in ("releasedAfter", "releasedOnOrBefore")
    ]
    patterns += [
        found for found in _patterns(openapi["components"]["schemas"]) if "(0[1-9]|1[0-2])" in found
    ]
    assert len(patterns) >= 3
    for pattern in patterns:
        sample = "0000-01-01T00:00Z" if "T" in pattern or ":" in pattern else "0000-01-01"
        assert not re.match(pattern, sample), pattern
        assert re.match(pattern, sample.replace("0000", "0001")), pattern


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return found + [p for value in node.values() for p in _patterns(value)]
    if isinstance(node, list):
        return [p for value in node for p in _patterns(value)]
    return []
