"""schemathesis over the sandbox's own /openapi.json: its default checks find nothing.

The schema is built from the app at import time: the document does not depend on the data, a
test below checks it equals what /openapi.json serves, and schemathesis' lazy ``from_fixture``
loader does not work with pytest 9. It runs against a sandbox of its own (fault injection off),
with the demo customer's token and customerId. Requests the schema cannot express as invalid
(unknown referenced ids, an inverted export window, a cursor no list issued) are rejected with
400/422 by design; those operations allow these statuses for schema-valid data, as
schemathesis documents for "an unknown id or a cross-field rule".
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from tests.conftest import fetch_token
from toolkit.sandbox import Sandbox, Store, create_app, running

_REJECTS_VALID_DATA = {
    # operation id: statuses it gives for schema-valid data it cannot accept
    "import_clients": "422",  # unknown parentClientExternalId
    "import_initiatives": "422",  # unknown clientExternalId
    "import_codes": "422",  # unknown codeTypeExternalId
    "set_code_range": "422",  # unknown codeExternalIds
    "export_entries": "400",  # inverted window, impossible dates
    "starred": "400",  # cursor the list did not issue
    "admin_create_entry": "422",  # unknown initiative or codes
    "admin_release_entry": "422",  # impossible date
}


def _config() -> SchemathesisConfig:
    lines = ["[generation]", "max-examples = 60"]
    for operation, extra in _REJECTS_VALID_DATA.items():
        lines += [
            "[[operations]]",
            f'include-operation-id = "{operation}"',
            "checks.positive_data_acceptance.expected-statuses = "
            f'["2xx", "401", "403", "404", "409", "429", "5xx", "{extra}"]',
        ]
    return SchemathesisConfig.from_str("\n".join(lines))


def _openapi_document() -> dict:
    """The sandbox's OpenAPI document (it does not depend on the data)."""
    store = Store(":memory:")
    try:
        return create_app(store).openapi()
    finally:
        store.close()


# Fault injection stays off and the profile stays the default: schemathesis must not switch
# them (a profile changes error bodies, statuses and latency away from the document).
schema = (
    schemathesis.openapi.from_dict(_openapi_document(), config=_config())
    .exclude(path="/sandbox/v1/faults", method="PUT")
    .exclude(path="/sandbox/v1/customers/{customerId}/profile", method="PUT")
    .exclude(path="/sandbox/v1/customers/{customerId}/profile", method="DELETE")
)


@pytest.fixture(scope="module")
def st_sandbox() -> Iterator[Sandbox]:
    with running() as sb:
        yield sb


@pytest.fixture(scope="module")
def auth_headers(st_sandbox: Sandbox) -> dict[str, str]:
    token = fetch_token(
        st_sandbox.url, st_sandbox.client_id, st_sandbox.client_secret, st_sandbox.audience
    )
    return {"Authorization": f"Bearer {token}"}


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_openapi_default_checks_find_nothing(case, st_sandbox, auth_headers) -> None:
    if "customerId" in (case.path_parameters or {}):
        case.path_parameters["customerId"] = st_sandbox.customer_id
    case.call_and_validate(base_url=st_sandbox.url, headers=auth_headers, timeout=10)


def test_schema_under_test_is_the_served_openapi_document(st_sandbox: Sandbox) -> None:
    served = requests.get(f"{st_sandbox.url}/openapi.json", timeout=10).json()
    assert served == _openapi_document()
