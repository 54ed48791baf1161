"""The public UTBMS code sets as import tables (``toolkit.codesets``): validated, onboarded into
the sandbox (a second run sends nothing), and as code ranges per matter, from Python and the
command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.conftest import SAMPLE_DIR, write_client_env
from toolkit._cli import main
from toolkit.errors import ConfigError


def _requests(sandbox: Any) -> int:
    """Interface requests since the last reset, the token exchange left out."""
    routes = sandbox.admin.stats()["routes"]
    return sum(v["count"] for k, v in routes.items() if "oauth/token" not in k)


def test_the_litigation_set_is_the_abas_phases_tasks_activities_and_expenses() -> None:
    tables = toolkit.codesets.load("utbms-litigation")
    codes = tables["codes"].set_index("externalId")
    by_type = codes.groupby("codeTypeExternalId").size().to_dict()
    assert by_type == {"task-code": 29, "activity-code": 11, "expense-code": 24}
    tasks = codes[codes["codeTypeExternalId"] == "task-code"]
    assert tasks["group"].str[:4].unique().tolist() == ["L100", "L200", "L300", "L400", "L500"]
    assert codes.loc["L330", "description"] == "Depositions"
    assert codes.loc["L330", "group"] == "L300 Discovery"
    assert codes.index[codes.index.str.startswith("A")].tolist() == [
        f"A{n}" for n in range(101, 112)
    ]
    assert codes.index[codes.index.str.startswith("E")].tolist() == [
        f"E{n}" for n in range(101, 125)
    ]
    assert tables["code_types"].set_index("externalId")["semanticType"].tolist()[:2] == [
        "task",
        "activity",
    ]


def test_every_set_validates_and_sets_share_their_activities_once() -> None:
    tables = toolkit.codesets.load(*toolkit.codesets.SETS)
    report = toolkit.validate(**tables)
    assert report.ok and report.warnings.empty
    assert tables["codes"]["externalId"].is_unique
    assert len(tables["codes"]) == 29 + 21 + 4 + 11 + 24


def test_an_unknown_set_is_refused_naming_the_sets() -> None:
    with pytest.raises(ConfigError, match="code sets are utbms-litigation, utbms-bankruptcy"):
        toolkit.codesets.load("utbms-patent")


def test_code_ranges_give_every_task_of_the_set_to_each_matter() -> None:
    initiatives = pd.read_csv(SAMPLE_DIR / "initiatives.csv").head(2)
    ranges = toolkit.codesets.code_ranges("utbms-litigation", initiatives)
    assert ranges.groupby("initiativeExternalId").size().tolist() == [29, 29]
    both = toolkit.codesets.code_ranges(
        "utbms-litigation", ["M-1"], types=("task-code", "activity-code")
    )
    assert len(both) == 40


def test_the_litigation_set_onboards_into_the_sandbox_and_a_second_run_sends_nothing(
    firm_client: Any, sandbox: Any, tmp_path: Path
) -> None:
    tables = toolkit.codesets.load("utbms-litigation")
    matters = pd.read_csv(SAMPLE_DIR / "initiatives.csv")["externalId"].head(3)
    tables["code_ranges"] = toolkit.codesets.code_ranges("utbms-litigation", matters)
    known = {"initiatives": matters.tolist()}
    journal = tmp_path / "j.jsonl"
    first = firm_client.onboard(tables, journal=journal, known=known, progress=False)
    assert first.ok, first.failures
    sandbox.admin.reset_stats()
    again = firm_client.onboard(tables, journal=journal, known=known, progress=False)
    assert again.ok and _requests(sandbox) == 0
    assert set(again.results["action"]) == {"unchanged"}


def test_the_command_line_onboards_a_code_set_with_ranges_then_sends_nothing(
    firm_client: Any, sandbox: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = write_client_env(firm_client, sandbox, tmp_path / ".env")
    matters = tmp_path / "matters.csv"
    pd.read_csv(SAMPLE_DIR / "initiatives.csv").head(2).to_csv(matters, index=False)
    argv = ["-q", "--env-file", str(env), "onboard", "--codeset", "utbms-litigation"]
    argv += ["--codeset-matters", str(matters), "--journal", str(tmp_path / "j.jsonl")]
    assert main(argv) == 0
    sandbox.admin.reset_stats()
    assert main(argv) == 0
    assert _requests(sandbox) == 0
    assert main([*argv, "--dry-run"]) == 0
    assert "plan: 0 request(s)" in capsys.readouterr().out
    assert main(["onboard", "sample_data", "--codeset", "utbms-litigation", "--dry-run"]) == 2
