"""The command line, run in-process against the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import write_client_env
from toolkit._cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"


@pytest.fixture
def env_file(fresh_client, sandbox, tmp_path, no_toolkit_env) -> Path:
    """A .env file for a fresh customer; no TOOLKIT_* variable leaks in from outside."""
    return write_client_env(fresh_client, sandbox, tmp_path / ".env")


def test_validate_exit_status_tells_good_from_broken(capsys) -> None:
    assert main(["validate", str(SAMPLE)]) == 0
    assert main(["validate", str(REPO / "sample_data" / "broken")]) == 1
    out = capsys.readouterr().out
    assert "externalId" in out and "column" in out


def test_validate_shows_warnings_but_exits_zero(firm_with_warnings, tmp_path, capsys) -> None:
    for table, frame in firm_with_warnings.items():
        frame.to_csv(tmp_path / f"{table}.csv", index=False)
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "19 warnings" in out and "fractional" in out and "severity" in out


def test_onboard_prints_the_warnings_of_the_rows_it_sent_and_strict_sends_nothing(
    firm_with_warnings, env_file, tmp_path, sandbox, capsys
) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    for table, frame in firm_with_warnings.items():
        frame.to_csv(folder / f"{table}.csv", index=False)
    base = ["--env-file", str(env_file), "-q", "onboard", str(folder)]
    sandbox.admin.reset_stats()
    assert main([*base, "--strict"]) == 1
    assert sandbox.admin.stats()["total"] == 0
    err = capsys.readouterr().err
    assert "validation failed, nothing sent: 19 warning(s) and --strict\n" in err
    assert main([*base, "--out", str(tmp_path / "results.csv")]) == 0
    out = capsys.readouterr().out
    assert "with a warning" in out and "warned" in out
    assert "19 warning(s) on 9 row(s) sent as given" in out
    assert (
        "initiatives line 2 [M-1 ] unitIncrements: unitIncrements '360.5' is not a whole "
        "number of seconds; it is sent as given; unitIncrements is in SECONDS" in out
    )
    assert "clients line 2 [ C-1 ] description: description is empty" in out
    assert "... and 9 more" in out  # the first 10 shown, the rest counted
    written = pd.read_csv(tmp_path / "results.csv")
    assert written["warning"].notna().sum() == 9


def test_onboard_dry_run_then_real_run_with_journal(env_file, tmp_path, sandbox, capsys) -> None:
    base = ["--env-file", str(env_file), "-q"]
    sandbox.admin.reset_stats()
    assert main([*base, "onboard", str(SAMPLE), "--dry-run"]) == 0
    assert sandbox.admin.stats()["total"] == 0
    journal = tmp_path / "j.jsonl"
    assert main([*base, "onboard", str(SAMPLE), "--journal", str(journal)]) == 0
    assert main([*base, "onboard", str(SAMPLE), "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "journaled" in out
    assert main([*base, "onboard", str(REPO / "sample_data" / "broken")]) == 1


def test_star_starred_export_pending_and_acknowledge(env_file, tmp_path, sandbox, capsys):
    base = ["--env-file", str(env_file), "-q"]
    assert main([*base, "onboard", str(SAMPLE)]) == 0
    cid = Path(env_file).read_text().split("TOOLKIT_CUSTOMER_ID=")[1].split("\n")[0]
    user = sandbox.admin.create_user("TK-CLI", "Cli User", customer_id=cid)
    assert main([*base, "star", "TK-CLI", "M-1001-002", "M-1001-003"]) == 0
    assert main([*base, "star", "TK-CLI", "M-NOPE"]) == 1
    out_csv = tmp_path / "starred.csv"
    assert main([*base, "starred", "TK-CLI", "--out", str(out_csv)]) == 0
    assert sorted(pd.read_csv(out_csv)["initiativeExternalId"]) == ["M-1001-002", "M-1001-003"]
    entry = sandbox.admin.create_entry(
        user["_id"],
        "M-1001-002",
        work_date="2026-10-01",
        increment_duration_in_seconds=720,
        customer_id=cid,
    )
    sandbox.admin.release_entry(
        user["_id"], entry["_id"], at="2026-10-02T10:00:00Z", customer_id=cid
    )
    assert (
        main(
            [
                *base,
                "export",
                "--after",
                "2026-10-01",
                "--on-or-before",
                "2026-10-03",
                "--out",
                str(tmp_path / "exp"),
                "--window",
                "1D",
            ]
        )
        == 0
    )
    assert (tmp_path / "exp" / "entries").is_dir()
    assert main([*base, "pending", "--out", str(tmp_path / "pend"), "--format", "csv"]) == 0
    acks = tmp_path / "acks.csv"
    pd.DataFrame(
        {
            "userId": [user["_id"]],
            "entryId": [entry["_id"]],
            "outcome": ["succeeded"],
            "externalId": ["INV-9"],
        }
    ).to_csv(acks, index=False)
    journal = tmp_path / "acks.jsonl"
    assert main([*base, "acknowledge", str(acks), "--journal", str(journal)]) == 0
    assert journal.is_file() and list(tmp_path.glob("*.lock")) == []  # no lock left behind
    assert main([*base, "acknowledge", str(acks)]) == 0  # the same acknowledgement: a no-op
    pd.DataFrame(
        {
            "userId": [user["_id"]],
            "entryId": [entry["_id"]],
            "outcome": ["failed"],
            "errors": ["late"],
        }
    ).to_csv(acks, index=False)
    assert main([*base, "acknowledge", str(acks)]) == 1  # conflicting: 409 reported
    assert "409" in capsys.readouterr().out


def test_missing_configuration_is_exit_2_with_a_message(tmp_path, no_toolkit_env, capsys):
    assert main(["--env-file", str(tmp_path / "nope.env"), "starred", "TK"]) == 2
    assert "TOOLKIT_CLIENT_SECRET" in capsys.readouterr().err


def test_a_missing_input_file_is_exit_2_with_one_line(env_file, tmp_path, capsys) -> None:
    code = main(["--env-file", str(env_file), "acknowledge", str(tmp_path / "nope.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "Traceback" not in err


def test_common_options_may_follow_the_command(env_file, sandbox) -> None:
    sandbox.admin.reset_stats()
    assert main(["onboard", str(SAMPLE), "--dry-run", "-q", "--env-file", str(env_file)]) == 0
    assert sandbox.admin.stats()["total"] == 0


@pytest.mark.parametrize("out", ["exp", "exp.xlsx"], ids=["parquet", "xlsx"])
def test_export_with_a_bare_date_takes_that_whole_day_and_prints_its_window(
    env_file, fresh_client, sandbox, tmp_path, capsys, out
) -> None:
    user = sandbox.admin.create_user("TK-DAY", "Day User", customer_id=fresh_client.customer_id)
    assert fresh_client.onboard(SAMPLE, progress=False).ok
    for at in (
        "2026-11-21T18:00:00Z",
        "2026-11-22T09:30:00Z",
        "2026-11-22T23:59:59.500Z",
        "2026-11-23T00:00:00Z",
    ):
        entry = sandbox.admin.create_entry(
            user["_id"],
            "M-1001-002",
            work_date="2026-11-21",
            increment_duration_in_seconds=600,
            customer_id=fresh_client.customer_id,
        )
        sandbox.admin.release_entry(
            user["_id"], entry["_id"], at=at, customer_id=fresh_client.customer_id
        )
    assert (
        main(
            [
                "--env-file",
                str(env_file),
                "-q",
                "export",
                "--after",
                "2026-11-22",
                "--on-or-before",
                "2026-11-22",
                "--out",
                str(tmp_path / out),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "warning" not in captured.err  # one meaning everywhere: nothing to warn about
    assert (
        "export window: entries released after 2026-11-22T00:00:00.000Z, on or before "
        "2026-11-22T23:59:59.999Z"
    ) in captured.out
    assert "wrote 2 entries" in captured.out  # 09:30 and 23:59:59.5 of the 22nd


# -- export --out infers the format, never a folder named like a file --------------------------


def test_export_to_an_xlsx_name_writes_a_workbook(project: Path) -> None:
    out = project / "march.xlsx"
    assert (
        main(
            [
                "--env-file",
                str(project / ".env"),
                "-q",
                "export",
                "--after",
                "2026-11-01",
                "--on-or-before",
                "2026-11-03",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert out.is_file()
    assert sorted(pd.read_excel(out, sheet_name=None)) == ["codes", "entries"]


@pytest.mark.parametrize("name", ["march.csv", "march.parquet"])
def test_export_to_another_file_name_is_refused_before_any_request(
    project: Path, name: str, capsys: Any
) -> None:
    out = project / name
    env = ["--env-file", str(project / ".env")]
    assert (
        main(
            [
                *env,
                "-q",
                "export",
                "--after",
                "2026-11-01",
                "--on-or-before",
                "2026-11-03",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert not out.exists()
    assert "two tables" in capsys.readouterr().err
    assert main([*env, "-q", "pending", "--out", str(out)]) == 2
    assert not out.exists()


def test_acknowledge_counts_the_entries_acknowledged_earlier_before_sending(
    env_file, fresh_client, sandbox, tmp_path, capsys
) -> None:
    # issue 39: the entries release-pending no longer lists are counted before anything is sent
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 10, 1, tzinfo=UTC)
    sandbox.store.seed_entries_bulk(
        fresh_client.customer_id, 5, released_from=t0, released_to=t0 + timedelta(days=7)
    )
    pending = fresh_client.release_pending().entries
    acks = pd.DataFrame(
        {
            "userId": pending["userId"],
            "entryId": pending["_id"],
            "outcome": "succeeded",
            "externalId": [f"INV-{i}" for i in range(5)],
        }
    )
    fresh_client.acknowledge(acks.iloc[:3], progress=False)
    acks.loc[0, "externalId"] = "INV-OTHER"
    acks.to_csv(tmp_path / "acks.csv", index=False)
    args = ["acknowledge", str(tmp_path / "acks.csv"), "--out", str(tmp_path / "res.csv")]
    assert main(["--env-file", str(env_file), "-q", *args]) == 1
    assert "3 of 5 entries are no longer pending (acknowledged earlier" in capsys.readouterr().out
    res = pd.read_csv(tmp_path / "res.csv")
    assert res["status"].tolist() == ["conflict", "sent", "sent", "sent", "sent"]
    assert "acknowledged earlier as succeeded with externalId 'INV-0'" in res.loc[0, "error"]


def test_a_dry_run_without_settings_plans_the_body_the_configured_service_is_sent(
    tmp_path, no_toolkit_env, monkeypatch
) -> None:
    # the placeholder client of a dry run with no settings keeps TOOLKIT_NULL_SEMANTIC_TYPE, so
    # its plan compares the journal with the body that is sent (a helper found it left out)
    import argparse

    from toolkit._cli.onboard import _offline_client

    monkeypatch.setenv("TOOLKIT_NULL_SEMANTIC_TYPE", "omit")
    args = argparse.Namespace(env_file=str(tmp_path / "none.env"))
    client = _offline_client(args)
    assert client.connection.settings.null_semantic_type == "omit"
