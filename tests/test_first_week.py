"""What a newcomer's first week ran into (issue 20, items 1-5, 8, 9, 12 and 14), each kept fixed.

The README walk-through (item 12) is ``tests/test_readme_walkthrough.py``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
import toolkit.sandbox
import toolkit.sandbox.cli
from toolkit.cli import onboard as cli_onboard
from toolkit.cli.app import main
from toolkit.core.settings import ENV_KEYS
from toolkit.core.windows import to_utc
from toolkit.demo import run_demo
from toolkit.errors import ConfigError, ValidationError
from toolkit.sandbox import Sandbox, write_env_file

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_toolkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TOOLKIT_* variable leaks in from outside: the settings come from files only."""
    for var in (*ENV_KEYS.values(), "TOOLKIT_USE_ENV"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def project(tmp_path: Path, sandbox: Sandbox, no_toolkit_env: None,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project folder whose .env names the running sandbox, with the cwd in its notebooks/."""
    write_env_file(tmp_path / ".env", sandbox.env())
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    yield tmp_path


# -- 1: make lab reuses a running sandbox and never writes over .env -----------------------------


def _capture_jupyter(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """Replace the JupyterLab process by a recorder of its environment."""
    calls: list[dict[str, str]] = []

    def call(cmd: list[str], env: dict[str, str]) -> int:
        assert cmd[1:4] == ["-m", "jupyter", "lab"]
        calls.append(env)
        return 0

    monkeypatch.setattr(subprocess, "call", call)  # what toolkit.cli.sandbox starts
    return calls


def test_lab_reuses_the_running_sandbox_the_env_file_names(
    project: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    before = (project / ".env").read_bytes()
    calls = _capture_jupyter(monkeypatch)

    def no_new_sandbox(**kwargs: Any) -> None:
        raise AssertionError("make lab started a sandbox of its own")

    monkeypatch.setattr(toolkit.sandbox, "running", no_new_sandbox)
    assert main(["lab"]) == 0
    assert (project / ".env").read_bytes() == before
    assert calls[0]["TOOLKIT_USE_ENV"] == "1"
    assert f"using the sandbox running at {sandbox.url}" in capsys.readouterr().out


def test_lab_with_no_sandbox_running_leaves_the_env_file_alone(
    tmp_path: Path, no_toolkit_env: None, unused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    env = toolkit.sandbox.env_for(dead, "c", "i", "s", "aud")
    write_env_file(tmp_path / ".env", env)
    before = (tmp_path / ".env").read_bytes()
    monkeypatch.chdir(tmp_path)
    calls = _capture_jupyter(monkeypatch)
    assert main(["lab", "--seed", str(REPO / "sample_data")]) == 0
    assert (tmp_path / ".env").read_bytes() == before
    assert calls[0]["TOOLKIT_TIME_URL"] not in (dead, "")
    assert calls[0]["TOOLKIT_USE_ENV"] == "1"


# -- 2: .env is found as find_dotenv finds it, and the settings say which file -------------------


def test_from_env_in_a_subfolder_finds_the_env_file_above_and_connects(
    project: Path, sandbox: Sandbox
) -> None:
    client = toolkit.Client.from_env()
    assert client.settings.source == str((project / ".env").resolve())
    assert client.customer_id == sandbox.customer_id
    assert client.auth.secret_token().reveal()


def test_from_env_without_a_file_says_environment_or_that_none_was_found(
    tmp_path: Path, sandbox: Sandbox, no_toolkit_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert toolkit.Client.from_env(environ=sandbox.env()).settings.source == "environment"
    with pytest.raises(ConfigError, match=r"no \.env file in this folder or a parent"):
        toolkit.Client.from_env(environ={})


def test_the_cli_in_a_subfolder_reads_the_env_file_above(project: Path, capsys: Any) -> None:
    assert main(["-q", "pending", "--out", "pending", "--format", "csv"]) == 0
    assert (project / "notebooks" / "pending" / "entries.csv").is_file()


# -- 8: messages name the setting that is wrong ---------------------------------------------------


def test_a_wrong_audience_names_toolkit_audience(
    project: Path, sandbox: Sandbox, capsys: Any
) -> None:
    write_env_file(project / ".env", {**sandbox.env(), "TOOLKIT_AUDIENCE": "wrong"})
    assert main(["--env-file", str(project / ".env"), "-q", "pending", "--out", "p"]) == 2
    err = capsys.readouterr().err
    assert "TOOLKIT_AUDIENCE" in err and str(project / ".env") in err
    assert "TOOLKIT_CLIENT_SECRET" not in err


def test_a_missing_env_file_is_named_as_absent(project: Path, capsys: Any) -> None:
    assert main(["--env-file", "nope.env", "-q", "pending", "--out", "p"]) == 2
    assert f"{project / 'notebooks' / 'nope.env'}: no such file" in capsys.readouterr().err


def test_an_unreachable_service_says_could_not_reach_the_host(
    tmp_path: Path, no_toolkit_env: None, unused_port: int, monkeypatch: pytest.MonkeyPatch,
    capsys: Any
) -> None:
    write_env_file(tmp_path / ".env",
                   toolkit.sandbox.env_for(f"http://127.0.0.1:{unused_port}", "c", "i", "s", "a"))
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "pending", "--out", "p"]) == 2
    err = capsys.readouterr().err
    assert f"could not reach 127.0.0.1:{unused_port}" in err
    assert "failed after" not in err and "TOOLKIT_AUTH_URL" in err


# -- 5: ambiguous dates are refused everywhere, with one message ----------------------------------


def test_export_refuses_an_ambiguous_date_before_any_request(unused_port: int) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    client = toolkit.Client("c", "i", "s", dead, dead, audience="a")
    with pytest.raises(ConfigError) as info:
        client.export_entries("11/12/2026", "2026-12-20")
    assert str(info.value) == (
        "after: '11/12/2026' reads differently day first (2026-12-11) and month first "
        "(2026-11-12), so it is refused, never guessed; write it as ISO 8601 (YYYY-MM-DD)")


def test_export_sync_and_reconcile_refuse_ambiguous_dates_with_the_same_words(
    tmp_path: Path, unused_port: int
) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    client = toolkit.Client("c", "i", "s", dead, dead, audience="a")
    core = re.escape("'11/12/2026' reads differently day first (2026-12-11) and month first "
                     "(2026-11-12), so it is refused, never guessed")
    with pytest.raises(ConfigError, match=core):
        client.sync(tmp_path / "time", since="11/12/2026")
    exported = pd.DataFrame({"_id": ["e1"], "userId": ["u1"], "workDate": ["2026-11-12"]})
    with pytest.raises(ValidationError, match=core):
        toolkit.reconcile(exported, pd.DataFrame({"entryId": ["e1"], "workDate": ["11/12/2026"]}))
    assert main(["export", "--after", "11/12/2026", "--on-or-before", "2026-12-20",
                 "--out", str(tmp_path / "x")]) == 2
    assert to_utc("13/12/2026", "after") == pd.Timestamp("2026-12-13", tz="UTC")


# -- 4: export --out infers the format, never a folder named like a file -------------------------


def test_export_to_an_xlsx_name_writes_a_workbook(project: Path) -> None:
    out = project / "march.xlsx"
    assert main(["--env-file", str(project / ".env"), "-q", "export", "--after", "2026-11-01",
                 "--on-or-before", "2026-11-03", "--out", str(out)]) == 0
    assert out.is_file()
    assert sorted(pd.read_excel(out, sheet_name=None)) == ["codes", "entries"]


@pytest.mark.parametrize("name", ["march.csv", "march.parquet"])
def test_export_to_another_file_name_is_refused_before_any_request(
    project: Path, name: str, capsys: Any
) -> None:
    out = project / name
    env = ["--env-file", str(project / ".env")]
    assert main([*env, "-q", "export", "--after", "2026-11-01", "--on-or-before", "2026-11-03",
                 "--out", str(out)]) == 2
    assert not out.exists()
    assert "two tables" in capsys.readouterr().err
    assert main([*env, "-q", "pending", "--out", str(out)]) == 2
    assert not out.exists()


# -- 3: reconcile compares only the entries released in a window ----------------------------------


def _synced_and_weekly() -> tuple[pd.DataFrame, pd.DataFrame]:
    """213 exported entries released over a month, and a billing extract of the 12 released in
    the week after 2026-11-16."""
    released = [pd.Timestamp("2026-10-20T09:00Z") + pd.Timedelta(hours=3 * i) for i in range(201)]
    released += [pd.Timestamp("2026-11-17T09:00Z") + pd.Timedelta(hours=8 * i) for i in range(12)]
    ids = [f"e{i:03d}" for i in range(len(released))]
    exported = pd.DataFrame({
        "_id": ids, "userId": "u1", "workDate": [r.strftime("%Y-%m-%d") for r in released],
        "incrementDurationInSeconds": 3600, "initiative.externalId": "M-1",
        "updatedAt": pd.Series(released, dtype="datetime64[us, UTC]"),
    })
    week = exported.tail(12)
    billing = pd.DataFrame({"entryId": week["_id"], "duration": 3600,
                            "workDate": week["workDate"], "matter": "M-1"})
    return exported, billing


def test_reconcile_in_a_release_window_leaves_the_other_weeks_out() -> None:
    exported, billing = _synced_and_weekly()
    assert toolkit.reconcile(exported, billing).summary["missing_in_billing"] == 201
    rec = toolkit.reconcile(exported, billing, after="2026-11-16", on_or_before="2026-11-23")
    assert rec.summary.to_dict() == {"matched": 12, "missing_in_billing": 0, "only_in_billing": 0,
                                     "duration_differs": 0, "date_or_matter_differs": 0}
    assert "entries released in (2026-11-16T00:00:00Z, 2026-11-23T00:00:00Z] by updatedAt: " \
           "12 of 213" in repr(rec)


def test_reconcile_cli_takes_the_release_window(tmp_path: Path, capsys: Any) -> None:
    exported, billing = _synced_and_weekly()
    exported.to_csv(tmp_path / "entries.csv", index=False)
    billing.to_csv(tmp_path / "week.csv", index=False)
    argv = ["reconcile", str(tmp_path / "entries.csv"), str(tmp_path / "week.csv")]
    assert main(argv) == 1
    # the window's entries are the service's export of it (tests/test_reconcile_cli.py);
    # an ambiguous bound is refused before any request
    assert main([*argv, "--after", "11/12/2026"]) == 2
    assert "reads differently day first" in capsys.readouterr().err


# -- 9: onboard validates before any token or request ---------------------------------------------


def test_onboard_with_the_service_down_shows_the_data_errors(
    tmp_path: Path, no_toolkit_env: None, unused_port: int, monkeypatch: pytest.MonkeyPatch,
    capsys: Any
) -> None:
    write_env_file(tmp_path / ".env",
                   toolkit.sandbox.env_for(f"http://127.0.0.1:{unused_port}", "c", "i", "s", "a"))
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "onboard", str(REPO / "sample_data" / "broken")]) == 1
    captured = capsys.readouterr()
    assert "validation failed, nothing sent" in captured.err
    assert "could not reach" not in captured.err and "externalId" in captured.out
    assert main(["-q", "onboard", str(REPO / "sample_data")]) == 2  # valid: then the service
    assert "could not reach" in capsys.readouterr().err


# -- 14: from reconcile to acknowledge on the command line ----------------------------------------


@pytest.fixture
def firm_env(firm: Any, sandbox: Sandbox, tmp_path: Path, no_toolkit_env: None) -> Path:
    """A .env of the ``firm`` customer."""
    t = firm.tenant
    return write_env_file(tmp_path / "firm.env", toolkit.sandbox.env_for(
        t.url, t.customer_id, t.client_id, t.client_secret, sandbox.audience))


def _reconciled_files(firm: Any, tmp_path: Path, env: Path) -> tuple[list[str], Path, Path]:
    """Three released entries of the firm reconciled with a billing file: e1 matched, e2's
    duration differs, e3 missing, one record only in billing."""
    ids = [firm.entry(duration=1800, released_at="2026-11-02T10:00:00Z")["_id"]
           for _ in range(3)]
    client = toolkit.Client.from_env(env)
    entries = client.export_entries("2026-11-01", "2026-11-03").entries
    entries.to_csv(tmp_path / "entries.csv", index=False)
    pd.DataFrame({"entryId": [ids[0], ids[1], "nobody"], "billingId": ["B-1", "B-2", "B-9"],
                  "duration": [1800, 3600, 60]}).to_csv(tmp_path / "billing.csv", index=False)
    rec, acks = tmp_path / "rec.xlsx", tmp_path / "acks.csv"
    base = ["--env-file", str(env), "-q"]
    assert main([*base, "reconcile", str(tmp_path / "entries.csv"), str(tmp_path / "billing.csv"),
                 "--out", str(rec), "--acknowledge-out", str(acks)]) == 1
    return ids, rec, acks


def test_acknowledge_takes_the_file_reconcile_wrote(
    firm: Any, firm_env: Path, tmp_path: Path, capsys: Any
) -> None:
    ids, rec, acks = _reconciled_files(firm, tmp_path, firm_env)
    base = ["--env-file", str(firm_env), "-q"]
    capsys.readouterr()
    assert main([*base, "acknowledge", str(rec), "--out", str(tmp_path / "res.csv"),
                 "--include", "matched,failed"]) == 0  # the default is matched only
    assert "1 matched entries to acknowledge as succeeded, 2 as failed" in capsys.readouterr().out
    res = pd.read_csv(tmp_path / "res.csv")
    assert dict(zip(res["entryId"], res["outcome"], strict=True)) == {
        ids[0]: "succeeded", ids[1]: "failed", ids[2]: "failed"}
    assert sorted(res["row"]) == [0, 1, 2] and (res["line"] == res["row"] + 2).all()
    assert res["ok"].all()
    client = toolkit.Client.from_env(firm_env)
    assert client.release_pending().entries.empty
    written = pd.read_csv(acks).set_index("entryId")
    assert written.loc[ids[0], "externalId"] == "B-1"
    assert "duration differs" in str(written.loc[ids[1], "errors"])
    assert main([*base, "acknowledge", str(acks)]) == 0  # the same acknowledgements: no-ops


def test_acknowledge_of_a_file_that_is_neither_is_an_input_error(
    firm_env: Path, tmp_path: Path, capsys: Any
) -> None:
    path = tmp_path / "rec.csv"
    pd.DataFrame({"entryId": ["e1"], "status": ["matched"]}).to_csv(path, index=False)
    assert main(["--env-file", str(firm_env), "-q", "acknowledge", str(path)]) == 2
    assert "missing column(s) userId, outcome" in capsys.readouterr().err


# -- 12: after make demo, make sandbox has entries pending, or says there are none ---------------


class _Entries:
    """A store holding entries in the given states."""

    def __init__(self, *states: str) -> None:
        self.states = states

    def records(self, customer_id: str, kind: str) -> list[dict[str, str]]:
        return [{"state": state} for state in self.states]


def test_the_sandbox_banner_says_what_is_pending_and_how_to_release_more() -> None:
    _pending_line = toolkit.sandbox.cli._pending_line
    assert _pending_line(_Entries("pending", "succeeded"), "c") == (  # type: ignore[arg-type]
        "1 of its 2 entries are pending: release-pending and the acknowledgements act on them")
    nothing = _pending_line(_Entries("succeeded", "failed"), "c")  # type: ignore[arg-type]
    assert nothing.startswith("Nothing is pending") and "make demo" in nothing
    assert "/release" in nothing


def test_the_demo_leaves_a_batch_pending(tmp_path: Path, capsys: Any) -> None:
    assert run_demo(tmp_path, workers=8, entries=20) == 0
    printed = capsys.readouterr().out
    assert "0 pending now" in printed  # the reconcile step acknowledged every pending entry
    assert "12 new entries released and left pending (12 pending now)" in printed


def test_a_dry_run_plan_in_a_subfolder_reads_the_env_file_above(
    project: Path, sandbox: Sandbox, capsys: Any
) -> None:
    no_secret = {k: v for k, v in sandbox.env().items() if k != "TOOLKIT_CLIENT_SECRET"}
    write_env_file(project / ".env", no_secret)  # a dry run needs no secret
    journal = project / "j.jsonl"
    assert main(["-q", "onboard", str(REPO / "sample_data"), "--journal", str(journal),
                 "--dry-run"]) == 0
    assert "dry run: nothing sent" in capsys.readouterr().out
    offline = cli_onboard._offline_client(argparse.Namespace(env_file=None))
    assert offline.customer_id == sandbox.customer_id  # the .env above's, not a placeholder
