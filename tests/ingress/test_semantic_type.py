"""A code type of another kind against a service that validates as published (issue 39
finding 7).

interface.md says "use null" for ``semanticType``; the published import body has the field
optional and not nullable, so such a service (the sandbox's ``published`` preset, Prism in front
of the real one) refuses ``"semanticType": null`` with a 422 and ``onboard`` skips the codes of
that type. ``TOOLKIT_NULL_SEMANTIC_TYPE=omit`` (``Settings.null_semantic_type``) sends the
published form, the key left out; the default keeps interface.md's null.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from toolkit import Client
from toolkit._core.settings import Settings
from toolkit.errors import ConfigError
from toolkit.sandbox import PROFILES, Admin

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


def test_a_null_semantic_type_is_refused_by_a_service_validating_as_published(
    profiled_client: Callable[..., tuple[Client, Admin]],
) -> None:
    client, admin = profiled_client(PROFILES["published"], retries=0)
    result = client.onboard({"code_types": CODE_TYPES, "codes": CODES}, progress=False)
    stored = {r["externalId"] for r in admin.records("code-types")}
    rows = result.results.set_index(["table", "row"])
    assert rows.loc[("code_types", 0), "httpStatus"] == 422
    assert stored == {"task-code"}


def test_omit_sends_a_code_type_of_another_kind_without_semantic_type(
    profiled_client: Callable[..., tuple[Client, Admin]],
) -> None:
    client, admin = profiled_client(PROFILES["published"], retries=0, null_semantic_type="omit")
    result = client.onboard({"code_types": CODE_TYPES, "codes": CODES}, progress=False)
    types = {r["externalId"]: r["semanticType"] for r in admin.records("code-types")}
    codes = {r["externalId"] for r in admin.records("codes")}
    assert result.results["ok"].all(), result.results[["table", "status", "error"]]
    assert types == {"expense-code": None, "task-code": "task"}
    assert codes == {"E100", "L110"}


def test_omit_shows_the_body_it_sends_in_a_dry_run_and_the_plan(
    profiled_client: Callable[..., tuple[Client, Admin]], tmp_path: Path
) -> None:
    client, admin = profiled_client(
        {"codeTypeBody": "published"}, retries=0, null_semantic_type="omit"
    )
    source = {"code_types": CODE_TYPES, "codes": CODES}
    dry = client.onboard(source, dry_run=True, progress=False)
    shown = dict(zip(*dry.payloads["code_types"].to_dict("list").values(), strict=True))
    assert shown["expense-code"] == {
        "externalId": "expense-code",
        "name": "expense-code",
        "customerDefaultable": False,
        "userDefaultable": False,
    }
    assert shown["task-code"]["semanticType"] == "task"
    payloads = client.import_code_types(CODE_TYPES, dry_run=True)["payload"].tolist()
    assert "semanticType" not in payloads[0]
    planned = [
        c.json for calls, _ in client.plan(source).calls["code_types"].calls() for c in calls
    ]
    assert planned == payloads
    journal = tmp_path / "journal.jsonl"
    sent = client.onboard(source, journal=journal, progress=False)  # what was shown is sent
    assert sent.ok, sent.results[["table", "status", "error"]]
    assert client.plan(source, journal=journal).to_frame()["action"].eq("unchanged").all()
    assert {r["externalId"] for r in admin.records("code-types")} == set(shown)


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
