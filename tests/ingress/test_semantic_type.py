"""A code type of another kind against a service that validates as published (issue 39
finding 7).

interface.md says "use null" for ``semanticType``; the published import body has the field
optional and not nullable, so such a service (the sandbox's ``published`` preset, Prism in front
of the real one) refuses ``"semanticType": null`` with a 422 and ``onboard`` skips the codes of
that type. ``TOOLKIT_NULL_SEMANTIC_TYPE=omit`` (``Settings.null_semantic_type``) sends the
published form, the key left out; the default keeps interface.md's null.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import pandas as pd
import pytest

from toolkit import Client
from toolkit._core.settings import Settings
from toolkit.errors import ConfigError
from toolkit.sandbox import PROFILES, Admin, Sandbox

CODE_TYPES = pd.DataFrame(
    {
        "externalId": ["expense-code", "task-code"],
        "name": ["expense-code", "task-code"],
        "semanticType": [None, "task"],
        "customerDefaultable": [False, True],
        "userDefaultable": [False, True],
    }
)
CODES = pd.DataFrame(
    {
        "externalId": ["E100", "L110"],
        "name": ["E100", "L110"],
        "description": ["Copies", "Analysis"],
        "codeTypeExternalId": ["expense-code", "task-code"],
    }
)


def _published_customer(sandbox: Sandbox, **given: Any) -> tuple[Client, Admin]:
    creds = sandbox.admin.create_customer("Published firm")
    admin = Admin(sandbox.url, customer_id=creds["customerId"])
    admin.set_profile(**PROFILES["published"])
    client = Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sandbox.url,
        sandbox.url,
        audience=creds["audience"],
        retries=0,
        **given,
    )
    return client, admin


def test_a_null_semantic_type_is_refused_by_a_service_validating_as_published(
    sandbox: Sandbox,
) -> None:
    client, admin = _published_customer(sandbox)
    with client, closing(admin):
        result = client.onboard({"code_types": CODE_TYPES, "codes": CODES}, progress=False)
        stored = {r["externalId"] for r in admin.records("code-types")}
    rows = result.results.set_index(["table", "row"])
    assert rows.loc[("code_types", 0), "httpStatus"] == 422
    assert stored == {"task-code"}


def test_omit_sends_a_code_type_of_another_kind_without_semantic_type(sandbox: Sandbox) -> None:
    client, admin = _published_customer(sandbox, null_semantic_type="omit")
    with client, closing(admin):
        result = client.onboard({"code_types": CODE_TYPES, "codes": CODES}, progress=False)
        types = {r["externalId"]: r["semanticType"] for r in admin.records("code-types")}
        codes = {r["externalId"] for r in admin.records("codes")}
    assert result.results["ok"].all(), result.results[["table", "status", "error"]]
    assert types == {"expense-code": None, "task-code": "task"}
    assert codes == {"E100", "L110"}


def test_by_default_the_null_is_sent_as_interface_md_says(fresh_client: Client) -> None:
    payload = fresh_client.import_code_types(CODE_TYPES, dry_run=True)["payload"][0]
    assert payload["semanticType"] is None
    result = fresh_client.import_code_types(CODE_TYPES, progress=False)
    assert result["ok"].all()


def test_the_setting_is_read_from_the_environment_and_checked() -> None:
    env = {
        "TOOLKIT_CUSTOMER_ID": "c",
        "TOOLKIT_CLIENT_ID": "i",
        "TOOLKIT_CLIENT_SECRET": "s",
        "TOOLKIT_AUTH_URL": "http://127.0.0.1:9",
        "TOOLKIT_TIME_URL": "http://127.0.0.1:9",
        "TOOLKIT_AUDIENCE": "a",
    }
    assert Settings.from_env(None, environ=env).null_semantic_type == "null"
    omit = {**env, "TOOLKIT_NULL_SEMANTIC_TYPE": "omit"}
    assert Settings.from_env(None, environ=omit).null_semantic_type == "omit"
    with pytest.raises(ConfigError, match="TOOLKIT_NULL_SEMANTIC_TYPE"):
        Settings.from_env(None, environ={**env, "TOOLKIT_NULL_SEMANTIC_TYPE": "none"})
