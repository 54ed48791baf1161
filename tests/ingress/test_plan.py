"""The plan before sending, against the journal: only what changed goes out, what failed is
retried until it succeeds, what disappeared is deactivated (mirror, opt-in and capped), and a
kill -9 mid-push costs nothing but the rows in flight."""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from tests.conftest import client_env, kill_9_when, settle, write_client_env
from toolkit import Client
from toolkit._bulk.journal import read_ledger
from toolkit._cli import main
from toolkit._cli import onboard as cli_onboard
from toolkit._core.failures import row_warnings
from toolkit._ingress.plan import call_batches, table_calls
from toolkit.errors import ConfigError
from toolkit.sandbox import Sandbox, write_env_file

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"
TABLE_FILES = ("clients", "initiatives", "code_types", "codes", "code_ranges")
#: active, and in no code range: the initiative a test removes
REMOVED = "M-1001-002"
RENAMED = ["M-1003-001", "M-1005-002", "M-1012-003"]


def _requests(sandbox) -> int:
    """Interface requests since the last reset, the token exchange left out."""
    routes = sandbox.admin.stats()["routes"]
    return sum(v["count"] for k, v in routes.items() if "oauth/token" not in k)


def _folder(tmp_path: Path, name: str = "firm") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for table in TABLE_FILES:
        shutil.copy(SAMPLE / f"{table}.csv", folder / f"{table}.csv")
    return folder


def _read(folder: Path, table: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{table}.csv", dtype=str, keep_default_na=False)


def _change(folder: Path) -> dict[str, str]:
    """Rename 3 initiatives, add 2, remove 1; return the old names of the renamed ones."""
    df = _read(folder, "initiatives")
    old = dict(zip(df["externalId"], df["name"], strict=True))
    df.loc[df["externalId"].isin(RENAMED), "name"] += " (renamed)"
    new = df[df["externalId"] == "M-1001-001"].copy()
    new = pd.concat([new, new], ignore_index=True)
    new["externalId"] = ["M-NEW-1", "M-NEW-2"]
    new["callSign"] = ["9999-001", "9999-002"]
    df = pd.concat([df[df["externalId"] != REMOVED], new], ignore_index=True)
    df.to_csv(folder / "initiatives.csv", index=False)
    return {k: old[k] for k in RENAMED}


def test_a_dry_run_has_the_results_rows_of_a_run_and_counts_them(
    fresh_client: Client, tmp_path: Path
) -> None:
    folder, journal = _folder(tmp_path), tmp_path / "j.jsonl"
    assert fresh_client.onboard(folder, journal=journal, progress=False).ok
    _change(folder)  # 2 to send, 3 to update, 1 gone from the source
    for mirror in (False, True):
        dry = fresh_client.onboard(
            folder, journal=journal, progress=False, mirror=mirror, dry_run=True
        )
        res = dry.results
        gone = res[res["externalId"] == REMOVED]  # a deactivation has a result row, no source row
        expected = [["deactivate", "skipped", "dry run"]] if mirror else []  # missing: none
        assert gone[["action", "status", "error"]].values.tolist() == expected
        assert gone["row"].isna().all()
        sending = res["action"].isin(["send", "update", "deactivate"])
        assert set(res.loc[sending, "error"]) == {"dry run"} and sending.sum() == 5 + mirror
        assert set(res.loc[~sending, "status"]) == {"journaled"}
        counted = res.groupby("table", observed=True)["status"].value_counts().unstack()
        for table, n in res["table"].value_counts().items():
            assert dry.counts.loc[table, "rows"] == n
            for status in ("journaled", "skipped"):
                assert dry.counts.loc[table, status] == counted.get(status, {}).get(table, 0)
    run = fresh_client.onboard(folder, journal=journal, progress=False, mirror=True)
    cols = ["table", "row", "externalId", "action"]
    pd.testing.assert_frame_equal(run.results[cols], dry.results[cols])
    assert run.counts["rows"].equals(dry.counts["rows"])


def test_an_unchanged_folder_costs_no_request_the_second_time(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    folder, journal = _folder(tmp_path), tmp_path / "j.jsonl"
    assert fresh_client.onboard(folder, journal=journal, progress=False).ok
    sandbox.admin.reset_stats()
    again = fresh_client.onboard(folder, journal=journal, progress=False)
    assert _requests(sandbox) == 0
    assert again.ok and set(again.results["action"]) == {"unchanged"}
    assert set(again.results["status"]) == {"journaled"}
    assert fresh_client.plan(folder, journal=journal).requests == 0


def test_the_plan_says_2_send_3_update_1_deactivate_and_the_run_sends_exactly_that(
    sandbox, tmp_path, no_toolkit_env, capsys
) -> None:
    runs = {}
    for mirror in (False, True):
        creds = sandbox.admin.create_customer("Plan firm")
        client = Client(
            creds["customerId"],
            creds["clientId"],
            creds["clientSecret"],
            sandbox.url,
            sandbox.url,
            audience=creds["audience"],
            retries=3,
        )
        folder = _folder(tmp_path, f"firm-{mirror}")
        journal = tmp_path / f"j-{mirror}.jsonl"
        assert client.onboard(folder, journal=journal, progress=False).ok
        old_names = _change(folder)

        plan = client.plan(folder, journal=journal, mirror=mirror)
        rows = plan.rows
        ini = rows[rows["table"] == "initiatives"]
        assert sorted(ini.loc[ini["action"] == "send", "externalId"]) == ["M-NEW-1", "M-NEW-2"]
        updates = ini[ini["action"] == "update"]
        assert sorted(updates["externalId"]) == sorted(RENAMED)
        for key, changed in zip(updates["externalId"], updates["changed"], strict=True):
            assert changed == {
                "name": {"old": old_names[key], "new": old_names[key] + " (renamed)"}
            }
        gone = rows[rows["externalId"] == REMOVED]
        assert gone["action"].tolist() == (["deactivate"] if mirror else ["missing"])
        others = rows[~rows["externalId"].isin([*RENAMED, "M-NEW-1", "M-NEW-2", REMOVED])]
        assert set(others["action"]) == {"unchanged"}
        changed = ("update", "deactivate", "missing")  # any iterable, a generator too
        chosen = plan.select(a for a in changed)
        assert sorted(chosen["externalId"]) == sorted(
            rows.loc[rows["action"].isin(changed), "externalId"]
        )
        assert plan.requests == (6 if mirror else 5)
        assert "<table" in plan._repr_html_() and "update" in plan._repr_html_()

        # the same plan from the command line: no request, and written with --out
        env_file = write_client_env(client, sandbox, tmp_path / f"{mirror}.env")
        out = tmp_path / f"plan-{mirror}.csv"
        argv = [
            "--env-file",
            str(env_file),
            "-q",
            "onboard",
            str(folder),
            "--journal",
            str(journal),
            "--dry-run",
            "--out",
            str(out),
        ] + (["--mirror"] if mirror else [])
        sandbox.admin.reset_stats()
        assert main(argv) == 0
        assert _requests(sandbox) == 0
        assert "nothing sent" in capsys.readouterr().out
        written = pd.read_csv(out)
        assert written["action"].value_counts()["update"] == 3
        assert json.loads(written.loc[written["action"] == "update", "changed"].iloc[0])["name"]

        sandbox.admin.reset_stats()
        report = client.onboard(folder, journal=journal, progress=False, mirror=mirror)
        runs[mirror] = _requests(sandbox)
        assert report.ok, report.failures
        assert (report.results["action"] == "deactivate").sum() == int(mirror)
        stored = {
            r["externalId"]: r
            for r in sandbox.admin.records("initiatives", customer_id=client.customer_id)
        }
        assert stored[REMOVED]["status"] == ("inactive" if mirror else "active")
        assert stored[RENAMED[0]]["name"].endswith("(renamed)")
        sandbox.admin.reset_stats()
        assert client.onboard(folder, journal=journal, progress=False, mirror=mirror).ok
        assert _requests(sandbox) == 0
    assert runs == {False: 5, True: 6}


def _small_firm(n: int = 30, prefix: str = "F") -> dict[str, pd.DataFrame]:
    clients = pd.DataFrame(
        {"externalId": [f"{prefix}C1"], "name": ["Acme"], "callSign": ["1"], "description": ["d"]}
    )
    initiatives = pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": [f"{prefix}M{i:02d}" for i in range(n)],
            "name": [f"Matter {i}" for i in range(n)],
            "description": "d",
            "callSign": [f"1-{i:02d}" for i in range(n)],
            "clientExternalId": f"{prefix}C1",
            "unitIncrements": 360,
            "status": "active",
        }
    )
    return {"clients": clients, "initiatives": initiatives}


def test_failed_rows_are_retried_alone_and_listed_until_they_succeed(
    fresh_client: Client, sandbox, tmp_path, no_toolkit_env, capsys
) -> None:
    journal = tmp_path / "j.jsonl"
    firm = _small_firm()
    # 10 initiatives name a client the service does not have yet: it refuses them
    firm["initiatives"].loc[firm["initiatives"].index[:10], "clientExternalId"] = "LATER"
    source = {"initiatives": firm["initiatives"]}
    assert fresh_client.onboard({"clients": firm["clients"]}, journal=journal, progress=False).ok
    first = fresh_client.onboard(source, journal=journal, progress=False)
    failed = set(first.results.loc[~first.results["ok"], "externalId"])
    assert len(failed) == 10

    plan = fresh_client.plan(source, journal=journal)
    retry = plan.rows[plan.rows["action"] == "retry"]
    assert set(retry["externalId"]) == failed and retry["failingSince"].notna().all()
    assert set(plan.rows["action"]) == {"retry", "unchanged"}
    listed = fresh_client.failures(journal)
    assert set(listed["externalId"]) == failed and (listed["failures"] == 1).all()
    since = dict(zip(listed["externalId"], listed["failingSince"], strict=True))
    assert listed["failingSince"].is_monotonic_increasing

    sandbox.admin.reset_stats()
    second = fresh_client.onboard(source, journal=journal, progress=False)
    assert _requests(sandbox) == 10
    assert set(second.results.loc[~second.results["ok"], "externalId"]) == failed
    listed = fresh_client.failures(journal)
    assert (listed["failures"] == 2).all()
    assert dict(zip(listed["externalId"], listed["failingSince"], strict=True)) == since
    again = fresh_client.plan(source, journal=journal).rows
    assert set(again.loc[again["action"] == "retry", "externalId"]) == failed

    env_file = write_client_env(fresh_client, sandbox, tmp_path / ".env")
    base = ["--env-file", str(env_file), "-q", "onboard", "--journal", str(journal)]
    assert main([*base, "--failures"]) == 1
    assert "10 record(s) still failing" in capsys.readouterr().out

    fresh_client.import_clients(
        pd.DataFrame(
            {"externalId": ["LATER"], "name": ["Later"], "callSign": ["2"], "description": ["d"]}
        ),
        progress=False,
    )
    sandbox.admin.reset_stats()
    third = fresh_client.onboard(source, journal=journal, progress=False)
    assert third.ok and _requests(sandbox) == 10
    assert fresh_client.failures(journal).empty
    assert main([*base, "--failures"]) == 0
    assert fresh_client.plan(source, journal=journal).requests == 0


def test_a_mirror_deactivating_40_percent_is_refused_before_any_request(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    journal = tmp_path / "j.jsonl"
    firm = _small_firm(20, prefix="X")
    assert fresh_client.onboard(firm, journal=journal, progress=False).ok
    shrunk = {**firm, "initiatives": firm["initiatives"].head(12)}  # 8 of 20 gone
    sandbox.admin.reset_stats()
    with pytest.raises(ConfigError, match="deactivates 8 initiatives"):
        fresh_client.onboard(shrunk, journal=journal, progress=False, mirror=True)
    assert sandbox.admin.stats()["total"] == 0
    assert fresh_client.plan(shrunk, journal=journal, mirror=True).refused
    assert fresh_client.onboard(shrunk, journal=journal, progress=False).ok  # no mirror: kept
    assert _requests(sandbox) == 0
    report = fresh_client.onboard(
        shrunk, journal=journal, progress=False, mirror=True, max_deactivate=8
    )
    assert report.ok and _requests(sandbox) == 8
    stored = sandbox.admin.records("initiatives", customer_id=fresh_client.customer_id)
    assert sum(r["status"] == "inactive" for r in stored) == 8


def test_kill_9_mid_push_then_the_same_command_ends_as_an_uninterrupted_run(
    fresh_client: Client, sandbox, tmp_path, no_faults
) -> None:
    n = 1500
    folder, journal = tmp_path / "firm", tmp_path / "j.jsonl"
    folder.mkdir()
    clients = pd.DataFrame(
        {
            "externalId": [f"K{i:05d}" for i in range(n)],
            "name": [f"Client {i}" for i in range(n)],
            "callSign": [str(i) for i in range(n)],
            "description": "d",
        }
    )
    clients.to_csv(folder / "clients.csv", index=False)
    assert fresh_client.onboard(folder, journal=journal, progress=False).ok
    clients["name"] += " v2"  # the next push changes every row
    clients.to_csv(folder / "clients.csv", index=False)
    env = {**os.environ, **client_env(fresh_client, sandbox)}
    cmd = [
        sys.executable,
        "-m",
        "toolkit",
        "--env-file",
        str(tmp_path / "none.env"),
        "-q",
        "onboard",
        str(folder),
        "--journal",
        str(journal),
        "--workers",
        "4",
    ]
    start_lines = journal.read_bytes().count(b"\n")
    sandbox.admin.set_faults(latency_ms=5)
    try:
        kill_9_when(cmd, env, lambda: journal.read_bytes().count(b"\n") - start_lines >= n // 4)
    finally:
        sandbox.admin.clear_faults()
    # answers of requests the dead process had in flight: let them land before counting
    settle(sandbox)
    ledger = read_ledger(journal)
    done = sum(
        1
        for e in ledger.entries.values()
        if not e.failing and str(e.payload["name"]).endswith(" v2")
    )
    assert 0 < done < n, "the kill did not land mid-push"
    plan = fresh_client.plan(folder, journal=journal)
    assert plan.requests == n - done
    sandbox.admin.reset_stats()
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert _requests(sandbox) == n - done  # each row not acknowledged: once, no more
    stored = sandbox.admin.records("clients", customer_id=fresh_client.customer_id)
    got = pd.DataFrame(stored)[["externalId", "name", "callSign", "description"]]
    want = clients.astype(str)
    pd.testing.assert_frame_equal(
        got.sort_values("externalId").reset_index(drop=True),
        want.sort_values("externalId").reset_index(drop=True),
    )
    sandbox.admin.reset_stats()
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=120).returncode == 0
    assert _requests(sandbox) == 0


def test_a_journal_of_the_old_form_still_skips_what_it_holds(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    journal = tmp_path / "old.jsonl"
    firm = _small_firm(5, prefix="O")
    assert fresh_client.onboard(firm, journal=journal, progress=False).ok
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    old = [{k: d[k] for k in ("id", "endpoint", "key", "status")} for d in lines if "id" in d]
    journal.write_text("".join(json.dumps(d) + "\n" for d in old))  # as written before
    assert len(read_ledger(journal)) == 6
    sandbox.admin.reset_stats()
    assert set(fresh_client.plan(firm, journal=journal).rows["action"]) == {"unchanged"}
    assert fresh_client.onboard(firm, journal=journal, progress=False).ok
    assert _requests(sandbox) == 0


# -- a dry run reads the .env of a parent folder -----------------------------------------------


def test_a_dry_run_plan_in_a_subfolder_reads_the_env_file_above(
    project: Path, sandbox: Sandbox, capsys: Any
) -> None:
    no_secret = {k: v for k, v in sandbox.env().items() if k != "TOOLKIT_CLIENT_SECRET"}
    write_env_file(project / ".env", no_secret)  # a dry run needs no secret
    journal = project / "j.jsonl"
    assert (
        main(["-q", "onboard", str(REPO / "sample_data"), "--journal", str(journal), "--dry-run"])
        == 0
    )
    assert "dry run: nothing sent" in capsys.readouterr().out
    offline = cli_onboard._offline_client(argparse.Namespace(env_file=None))
    assert offline.customer_id == sandbox.customer_id  # the .env above's, not a placeholder


def _clients(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": [f"C-{i}" for i in range(n)],
            "name": [f"Client {i}" for i in range(n)],
            "callSign": [str(i) for i in range(n)],
            "description": [f"Client number {i}" for i in range(n)],
        }
    )


def test_a_plan_holds_no_request_per_row(fresh_client: Client) -> None:
    """Issue 28: the plan keeps an action per request; its requests are built when sent."""
    fresh_client.plan({"clients": _clients(10)})  # schemas and caches built
    held = {}
    for n in (4_000, 24_000):
        frame = _clients(n)
        gc.collect()
        tracemalloc.start()
        plan = fresh_client.plan({"clients": frame})
        gc.collect()
        held[n] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert plan.requests == n
        del plan
    per_row = (held[24_000] - held[4_000]) / 20_000
    assert per_row < 200, f"the plan holds {per_row:.0f} bytes of Python objects per row"


def test_a_plan_holds_its_rows_in_a_few_bytes_each(fresh_client: Client, tmp_path) -> None:
    """Issue 28 (3): a plan keeps a byte of action per row (the key is the validation's); its
    rows are built when asked for, and written a chunk at a time, as they would be whole."""
    fresh_client.plan({"clients": _clients(10)})  # schemas and caches built
    held = {}
    for n in (4_000, 24_000):
        frame = _clients(n)
        gc.collect()
        arrow = pa.total_allocated_bytes()
        tracemalloc.start()
        plan = fresh_client.plan({"clients": frame})
        gc.collect()
        held[n] = tracemalloc.get_traced_memory()[0] + pa.total_allocated_bytes() - arrow
        tracemalloc.stop()
        assert plan.requests == n
    per_row = (held[24_000] - held[4_000]) / 20_000  # the whole frame: 85 bytes a row
    assert per_row < 30, f"the plan holds {per_row:.0f} bytes per row (Python and Arrow)"
    plan.write(tmp_path / "chunked.csv")
    plan.rows.to_csv(tmp_path / "whole.csv", index=False)
    assert (tmp_path / "chunked.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


@pytest.mark.parametrize("post", ["replace", "add"])
def test_calls_in_batches_are_the_calls_of_the_whole_table(post: str) -> None:
    """Batches end where an initiative does; the calls and their rows come as for the whole."""
    rng = range(40)
    ranges = pd.DataFrame(
        {
            "initiativeExternalId": [f"M-{i % 7}" for i in rng],
            "codeExternalId": [f"L{i}" for i in rng],
        },
        index=[100 + i for i in rng],
    )

    def shown(calls: list[Any], rows: list[list[Any]]) -> list[Any]:
        return [(c.key, c.path, c.json, r) for c, r in zip(calls, rows, strict=True)]

    whole = shown(*table_calls("code_ranges", ranges, post))
    for size in (1, 3, 8, 100):
        batches = list(call_batches("code_ranges", ranges, post, size=size))
        assert [c for calls, rows in batches for c in shown(calls, rows)] == whole
        assert len(batches) == {1: 7, 3: 7, 8: 4, 100: 1}[size]  # whole initiatives
    clients = _clients(25)
    assert [
        c.key for calls, _ in call_batches("clients", clients, size=10) for c in calls
    ] == clients["externalId"].tolist()


def test_plan_and_result_rows_name_their_table_in_a_byte(fresh_client: Client) -> None:
    """Issue 28: at a million rows a table name per row costs 18 MB; a category costs 1 MB."""
    report = fresh_client.onboard({"clients": _clients(5)}, dry_run=True, progress=False)
    assert report.plan is not None
    for rows in (report.plan.rows, report.results):
        assert isinstance(rows["table"].dtype, pd.CategoricalDtype)
        assert rows["table"].tolist() == ["clients"] * 5


def test_a_dry_run_builds_its_results_from_the_plan_when_asked(
    fresh_client: Client, tmp_path: Path
) -> None:
    """Issue 28: a dry run's counts need no result rows; ``results`` is built on first access."""
    journal = tmp_path / "j.jsonl"
    sent = fresh_client.onboard({"clients": _clients(2)}, journal=journal, progress=False)
    assert sent.ok and sent.results["attempts"].tolist() == [1, 1]
    for col in ("httpStatus", "attempts"):  # 3 bytes a row, not 9: the values fit
        assert str(sent.results[col].dtype) == "Int16"
    clients = _clients(4)
    clients.loc[1, "name"] = "Renamed"  # update
    clients.loc[3, "externalId"] = None  # invalid
    report = fresh_client.onboard(
        {"clients": clients}, journal=journal, dry_run=True, on_invalid="skip", progress=False
    )
    assert "results" not in vars(report)  # the counts, ok and repr build no result row
    assert report.counts.loc["clients", ["rows", "journaled", "skipped"]].tolist() == [4, 1, 3]
    assert not report.ok and "OnboardReport(dry run): NOT ok" in repr(report)
    assert "results" not in vars(report)
    res = report.results
    assert res is report.results  # built once
    assert res["action"].tolist() == ["unchanged", "update", "send", "invalid"]
    assert res["status"].tolist() == ["journaled", "skipped", "skipped", "skipped"]
    assert res["ok"].tolist() == [True, False, False, False]
    assert res["error"].isna().tolist() == [True, False, False, False]
    assert res["error"].tolist()[1:3] == ["dry run", "dry run"]
    assert res["error"].iloc[3].startswith("invalid: ")
    assert res["attempts"].tolist() == [0] * 4 and res["httpStatus"].isna().all()
    assert str(res["attempts"].dtype) == "Int16" and str(res["row"].dtype) == "Int64"


def test_all_empty_text_columns_hold_no_value_per_row(fresh_client: Client) -> None:
    """Issue 28: a plan's empty ``reason``, ``lastAccepted``, ``failingSince`` and a run's empty
    ``warning`` are one null Arrow column each: no 8-byte offset per row (24 MB at 1M rows)."""
    n = 20_000
    plan = fresh_client.plan({"clients": _clients(n)})
    for col in ("reason", "lastAccepted", "failingSince"):
        column = plan.rows[col]
        assert str(column.dtype) == "string" and column.isna().all()
        assert column.array.__arrow_array__().get_total_buffer_size() < n // 4, col
    warning = row_warnings(plan.validation.failures, plan.rows["row"], plan.rows["table"])
    assert str(warning.dtype) == "string" and warning.isna().all()
    assert warning.array.__arrow_array__().get_total_buffer_size() < n // 4
