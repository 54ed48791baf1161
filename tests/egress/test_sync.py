"""Incremental sync into Delta tables, against the sandbox: overlaps, re-releases, kill -9,
empty ranges, other engines, bad input."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from deltalake import DeltaTable

import toolkit
from tests.conftest import T0, client_env, kill_9_when, release_entries, write_client_env
from toolkit import Client, ConcurrentWriteError, ConfigError
from toolkit._cli import main
from toolkit._core.connection import Connection
from toolkit._egress import sync as syncing
from toolkit._egress.export import Export
from toolkit._egress.sync import (
    LOCK_NAME,
    WATERMARK_KEY,
    SyncReport,
    create_tables,
    read_watermark,
    sync_status,
)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _codes_commits(path: Path) -> int:
    """The commits of the codes table a sync into ``path`` has written."""
    log = path / "codes" / "_delta_log"
    return len(list(log.glob("*.json"))) if log.exists() else 0


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.sort_values(keys).reset_index(drop=True)


def test_overlapping_syncs_with_a_rerelease_hold_each_entry_once(
    firm_client: Client, sandbox, tmp_path: Path
) -> None:
    entries = release_entries(sandbox, firm_client, 10, every=timedelta(hours=6))
    path = tmp_path / "time"
    first = firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=36))
    assert (first.inserted, first.updated, first.windows) == (6, 0, 2)
    assert first.watermark == pd.Timestamp(T0 + timedelta(hours=36))

    # entry 2 fails in billing, is fixed and released again later
    again = entries[2]
    res = firm_client.acknowledge(
        pd.DataFrame(
            {
                "userId": [again["userId"]],
                "entryId": [again["_id"]],
                "outcome": ["failed"],
                "errors": ["rate missing"],
            }
        ),
        progress=False,
    )
    assert res["ok"].all()
    rereleased_at = T0 + timedelta(hours=63)
    sandbox.admin.release_entry(
        again["userId"], again["_id"], at=rereleased_at, customer_id=firm_client.customer_id
    )

    until = T0 + timedelta(hours=66)
    second = firm_client.sync(path, after=T0 + timedelta(hours=12), on_or_before=until)
    assert second.updated == 1 and second.inserted == 4
    ex = toolkit.read_sync(path)
    ids = ex.entries["_id"]
    assert len(ids) == ids.nunique() == len(entries)
    assert set(ids) == {e["_id"] for e in entries}
    updated = ex.entries.set_index("_id").loc[again["_id"], "updatedAt"]
    assert updated == pd.Timestamp(rereleased_at)
    assert len(ex.codes) == sum(len(e["codes"]) for e in entries)
    assert set(ex.codes["entryId"]) <= set(ids)
    assert not ex.codes.duplicated(["entryId", "position"]).any()
    assert read_watermark(DeltaTable(str(path / "entries"))) == pd.Timestamp(until)
    assert "Müller" in ex.entries["summary"].iloc[0]

    # a third sync with nothing new adds no row, from the watermark or over the same range
    before = sync_status(path)
    third = firm_client.sync(path, on_or_before=until + timedelta(hours=12))
    again_all = firm_client.sync(path, after=T0, on_or_before=until)
    assert third.rows_written == again_all.rows_written == 0
    assert again_all.unchanged == len(entries)
    after = sync_status(path)
    assert (after["entries"], after["codes"]) == (before["entries"], before["codes"])
    assert after["watermark"] == pd.Timestamp(until + timedelta(hours=12))
    assert after["codes_version"] == before["codes_version"]  # nothing rewritten


def test_watermark_is_the_newest_commits_metadata(
    firm_client: Client, sandbox, tmp_path: Path
) -> None:
    release_entries(sandbox, firm_client, 3, every=timedelta(hours=1))
    path = tmp_path / "time"
    firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=5), window="2h")
    history = DeltaTable(str(path / "entries")).history(1)
    assert history[0][WATERMARK_KEY] == "2026-10-01T05:00:00Z"
    firm_client.compact(path)
    assert sync_status(path)["watermark"] == pd.Timestamp(T0 + timedelta(hours=5))


def test_sync_killed_with_sigkill_resumes_to_the_uninterrupted_tables(
    firm_client: Client, sandbox, tmp_path: Path
) -> None:
    n = 40
    release_entries(sandbox, firm_client, n, every=timedelta(hours=1))
    until = (T0 + timedelta(hours=n)).isoformat()
    env = {**os.environ, **client_env(firm_client, sandbox)}
    killed = tmp_path / "killed"
    cmd = [
        sys.executable,
        "-m",
        "toolkit",
        "--env-file",
        str(tmp_path / "none.env"),
        "-q",
        "sync",
        str(killed),
        "--on-or-before",
        until,
        "--window",
        "1h",
        "--batch-rows",
        "1",
    ]
    first = [*cmd, "--after", T0.isoformat()]
    kills = 0
    for target in (2, 6, 11):  # kill right after the codes commit of these windows
        proc = kill_9_when(
            first if kills == 0 else cmd,
            env,
            lambda target=target: _codes_commits(killed) > target,
            poll=0.005,
            stderr=subprocess.PIPE,
        )
        kills += _codes_commits(killed) > target
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
        # the killed tables open and read
        assert len(toolkit.read_sync(killed)) < n
    assert kills == 3
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    straight = tmp_path / "straight"
    firm_client.sync(straight, after=T0, on_or_before=until, window="1h")
    a, b = toolkit.read_sync(killed), toolkit.read_sync(straight)
    pd.testing.assert_frame_equal(_sorted(a.entries, ["_id"]), _sorted(b.entries, ["_id"]))
    pd.testing.assert_frame_equal(
        _sorted(a.codes, ["entryId", "position"]), _sorted(b.codes, ["entryId", "position"])
    )
    assert len(a) == n
    assert sync_status(killed)["watermark"] == sync_status(straight)["watermark"]


def test_empty_range_creates_both_tables_that_every_engine_reads(
    fresh_client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "time"
    report = fresh_client.sync(path, after=T0, on_or_before=T0 + timedelta(days=3))
    assert report.windows == 3 and report.rows_written == 0
    assert report.watermark == pd.Timestamp(T0 + timedelta(days=3))
    empty = toolkit.Export.empty()
    back = toolkit.read_sync(path)
    assert list(back.entries.columns) == list(empty.entries.columns)
    assert list(back.codes.columns) == list(empty.codes.columns)
    _engines_read(path, entries=0, codes=0)


def test_a_long_backfill_of_empty_windows_counts_each_window_once(
    fresh_client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backfill of years of daily windows holds its empty answers until ``batch_rows``
    entries gather: the entries held are counted as each answer comes, never summed again
    over every answer held (which made a 27-year backfill take minutes of CPU)."""
    sized, size = [0], Export.__len__

    def counted(self: Export) -> int:
        sized[0] += 1
        return size(self)

    monkeypatch.setattr(Export, "__len__", counted)
    days = 400
    report = fresh_client.sync(
        tmp_path / "time", after=T0, on_or_before=T0 + timedelta(days=days), progress=False
    )
    assert report.windows == days and report.rows_written == 0
    assert sized[0] <= 3 * days, sized[0]  # summing anew each window: days**2 / 2, 80,000


def _engines_read(path: Path, *, entries: int, codes: int) -> None:
    """The README's snippets: pandas through deltalake, Polars, DuckDB over Arrow datasets."""
    import duckdb
    import polars as pl

    # pandas
    frame = DeltaTable(str(path / "entries")).to_pandas()
    assert len(frame) == entries and "_id" in frame.columns and "workMonth" in frame.columns
    # Polars
    assert pl.read_delta(str(path / "codes")).height == codes
    lazy = pl.scan_delta(str(path / "entries")).select(pl.len()).collect()
    assert lazy.item() == entries
    # DuckDB over the Arrow datasets (no extension download)
    con = duckdb.connect()
    con.register("entries", DeltaTable(str(path / "entries")).to_pyarrow_dataset())
    con.register("codes", DeltaTable(str(path / "codes")).to_pyarrow_dataset())
    n = con.execute("select count(*) from entries").fetchone()[0]
    joined = con.execute(
        "select count(*) from codes c join entries e on c.entryId = e._id"
    ).fetchone()[0]
    assert (n, joined) == (entries, codes)


def test_engines_read_a_synced_table(firm_client: Client, sandbox, tmp_path: Path) -> None:
    entries = release_entries(sandbox, firm_client, 6, every=timedelta(hours=2))
    path = tmp_path / "time"
    firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(days=1))
    _engines_read(path, entries=6, codes=sum(len(e["codes"]) for e in entries))


def test_moved_workdate_moves_the_row_and_its_codes_to_the_new_partition(tmp_path: Path) -> None:
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    old = fake_export_entry(_id="e1", updated_at=at, codes=3)
    old["workDate"] = "2026-10-30"
    new = fake_export_entry(_id="e1", updated_at=at + timedelta(hours=1), codes=1)
    new["workDate"] = "2026-11-02"
    _write_window(path, Export.from_records([old]), _schemas(), pd.Timestamp(at))
    unchanged = _write_window(path, Export.from_records([old]), _schemas(), pd.Timestamp(at))
    assert unchanged == (0, 0, 1, 0)
    _write_window(path, Export.from_records([new]), _schemas(), pd.Timestamp(at))
    entries = DeltaTable(str(path / "entries")).to_pandas()
    codes = DeltaTable(str(path / "codes")).to_pandas()
    assert entries["workMonth"].tolist() == ["2026-11"]
    assert codes["workMonth"].tolist() == ["2026-11"] and codes["position"].tolist() == [0]
    # an older updatedAt changes nothing
    older = _write_window(path, Export.from_records([old]), _schemas(), pd.Timestamp(at))
    assert older == (0, 0, 1, 0)


def test_an_entry_without_workdate_is_updated_in_place_beside_dated_ones(tmp_path: Path) -> None:
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    undated = fake_export_entry(_id="e1", updated_at=at, codes=2)
    undated["workDate"] = None
    dated = fake_export_entry(_id="e2", updated_at=at, codes=1)
    dated["workDate"] = "2026-10-30"
    _write_window(path, Export.from_records([undated]), _schemas(), pd.Timestamp(at))
    later = (at + timedelta(hours=1)).isoformat()
    both = [dict(undated, updatedAt=later), dict(dated, updatedAt=later)]
    assert _write_window(path, Export.from_records(both), _schemas(), pd.Timestamp(at)) == (
        1,
        1,
        0,
        3,
    )
    entries = DeltaTable(str(path / "entries")).to_pandas().sort_values("_id")
    assert entries["_id"].tolist() == ["e1", "e2"]
    assert entries["workMonth"].isna().tolist() == [True, False]
    codes = DeltaTable(str(path / "codes")).to_pandas()
    assert sorted(codes["entryId"]) == ["e1", "e1", "e2"]


def test_a_sync_of_a_folder_another_process_holds_fails_at_once_naming_it(
    firm_client: Client, sandbox, tmp_path: Path
) -> None:
    entries = release_entries(sandbox, firm_client, 4, every=timedelta(hours=1))
    path = tmp_path / "time"
    path.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, str(os.getpid()).encode())\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
            str(path / LOCK_NAME),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConcurrentWriteError, match=f"process {holder.pid}"):
            firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=5))
        assert not (path / "entries").exists()  # stopped before writing anything
    finally:
        holder.kill()
        holder.wait(timeout=10)
    firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=5))
    ex = toolkit.read_sync(path)
    assert len(ex) == ex.entries["_id"].nunique() == len(entries)


def test_two_sync_processes_started_at_once_never_double_a_row(
    firm_client: Client, sandbox, tmp_path: Path
) -> None:
    entries = release_entries(sandbox, firm_client, 12, every=timedelta(hours=1))
    path = tmp_path / "time"
    env = {**os.environ, **client_env(firm_client, sandbox)}
    cmd = [
        sys.executable,
        "-m",
        "toolkit",
        "--env-file",
        str(tmp_path / "none.env"),
        "-q",
        "sync",
        str(path),
        "--after",
        T0.isoformat(),
        "--on-or-before",
        (T0 + timedelta(hours=13)).isoformat(),
        "--window",
        "1h",
    ]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] == 0, outs
    if codes[1] != 0:  # they overlapped: the loser says why and wrote nothing of its own
        assert codes[1] == 1
        assert any("another writer" in err for _, err in outs)
    ex = toolkit.read_sync(path)
    assert len(ex) == ex.entries["_id"].nunique() == len(entries)
    assert len(ex.codes) == sum(len(e["codes"]) for e in entries)
    assert not ex.codes.duplicated(["entryId", "position"]).any()


def test_two_syncs_past_their_lookups_at_once_never_double_a_row(
    firm_client: Client, sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two machines syncing one Delta folder: each holds its own lock (so none holds the other
    off), and both have looked up the stored rows of the same new batch before either writes."""
    release_entries(sandbox, firm_client, 12, every=timedelta(hours=1))
    until = T0 + timedelta(hours=13)
    path = create_tables(tmp_path / "time")
    monkeypatch.setattr(syncing, "_locked", lambda root: contextlib.nullcontext())
    both_looked_up = threading.Barrier(2, timeout=30)
    first = threading.local()
    write = syncing.write_deltalake

    def after_both_lookups(*args: Any, **kwargs: Any) -> None:
        if not getattr(first, "passed", False):
            first.passed = True
            both_looked_up.wait()
        write(*args, **kwargs)

    monkeypatch.setattr(syncing, "write_deltalake", after_both_lookups)
    reports: list[SyncReport] = []

    def one_sync() -> None:
        kw = {"since": T0, "until": until, "window": "1h", "batch_rows": 4, "progress": False}
        reports.append(firm_client.sync(path, **kw))

    threads = [threading.Thread(target=one_sync) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(reports) == 2  # both ended well: the one that lost a commit redid its batch
    monkeypatch.undo()
    straight = firm_client.sync(tmp_path / "straight", after=T0, on_or_before=until, progress=False)
    a, b = toolkit.read_sync(path), toolkit.read_sync(tmp_path / "straight")
    pd.testing.assert_frame_equal(_sorted(a.entries, ["_id"]), _sorted(b.entries, ["_id"]))
    pd.testing.assert_frame_equal(
        _sorted(a.codes, ["entryId", "position"]), _sorted(b.codes, ["entryId", "position"])
    )
    assert sync_status(path)["watermark"] == straight.watermark == pd.Timestamp(until)
    assert sum(r.inserted for r in reports) == straight.inserted == 12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--after", "yesterday-ish"], "--after: cannot read 'yesterday-ish'"),
        (["--after", "2026-10-01", "--window", "fortnight"], "window"),
        (["--after", "2026-10-01", "--lag", "soon"], "lag"),
        ([], "needs after"),
    ],
)
def test_bad_sync_input_exits_2_and_writes_nothing(
    argv: list[str], message: str, tmp_path: Path, sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / ".env"
    sandbox.write_env(env_file)
    path = tmp_path / "time"
    code = main(["--env-file", str(env_file), "-q", "sync", str(path), *argv])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not path.exists()


def test_sync_refuses_a_folder_holding_something_else(fresh_client: Client, tmp_path: Path) -> None:
    path = tmp_path / "export"
    path.mkdir()
    (path / "entries.csv").write_text("_id\n")
    with pytest.raises(ConfigError, match="something other"):
        fresh_client.sync(path, after=T0, on_or_before=T0 + timedelta(days=1))
    assert sorted(p.name for p in path.iterdir()) == ["entries.csv"]


def test_sync_refuses_a_table_of_another_schema(fresh_client: Client, tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    path = tmp_path / "time"
    fresh_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=1))
    write_deltalake(
        str(path / "codes"),
        pa.table({"entryId": ["x"], "workMonth": ["2026-10"]}),
        mode="overwrite",
        schema_mode="overwrite",
        partition_by=["workMonth"],
    )
    version = DeltaTable(str(path / "codes")).version()
    with pytest.raises(ConfigError, match="another schema"):
        fresh_client.sync(path, on_or_before=T0 + timedelta(hours=2))
    assert DeltaTable(str(path / "codes")).version() == version


def test_after_later_than_the_watermark_is_refused(fresh_client: Client, tmp_path: Path) -> None:
    path = tmp_path / "time"
    fresh_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=1))
    with pytest.raises(ConfigError, match="skipped"):
        fresh_client.sync(path, after=T0 + timedelta(days=2), on_or_before=T0 + timedelta(days=3))


def test_cli_sync_prints_a_summary_and_status(
    firm_client: Client, sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release_entries(sandbox, firm_client, 3, every=timedelta(hours=1))
    env_file = write_client_env(firm_client, sandbox, tmp_path / ".env")
    path = tmp_path / "time"
    base = ["--env-file", str(env_file), "-q", "sync", str(path)]
    assert main([*base, "--after", T0.isoformat(), "--on-or-before", "2026-10-02"]) == 0
    assert "3 inserted" in capsys.readouterr().out
    assert main([*base, "--compact"]) == 0
    out = capsys.readouterr().out
    assert "watermark 2026-10-02T23:59:59.999000+00:00" in out and "entries: 3 rows" in out
    assert main([*base, "--status"]) == 0
    assert "entries: 3 rows" in capsys.readouterr().out


def _readme_block(marker: str) -> str:
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    after = text.split(f"<!-- readme-test: {marker} -->", 1)[1]
    return after.split("```python\n", 1)[1].split("\n```", 1)[0]


def test_readme_reader_snippets_run_on_a_synced_table(
    firm_client: Client, sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = release_entries(sandbox, firm_client, 5, every=timedelta(hours=2))
    monkeypatch.chdir(tmp_path)
    firm_client.sync("out/time", after=T0, on_or_before=T0 + timedelta(days=1))
    scope: dict[str, object] = {}
    exec(compile(_readme_block("sync-readers"), "README.md", "exec"), scope)  # noqa: S102
    assert len(scope["entries"]) == 5  # type: ignore[arg-type]
    n_codes = sum(len(e["codes"]) for e in entries)
    assert len(scope["codes"]) == scope["codes_pl"].height == n_codes  # type: ignore[attr-defined,arg-type]
    total = sum(600 + 60 * i for i in range(5)) / 3600
    assert scope["hours"]["hours"].sum() == pytest.approx(total)  # type: ignore[index]
    assert len(scope["per_code"]) == len({c for e in entries for c in e["codes"]})  # type: ignore[arg-type]


def test_cli_export_twice_refuses_and_keeps_the_first_unless_overwrite(
    firm_client: Client, sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release_entries(sandbox, firm_client, 6, every=timedelta(hours=12))
    env_file = write_client_env(firm_client, sandbox, tmp_path / ".env")
    out = tmp_path / "exp"
    base = ["--env-file", str(env_file), "-q", "export", "--out", str(out)]
    first = ["--after", T0.isoformat(), "--on-or-before", "2026-10-02T12:00:00Z"]
    assert main([*base, *first]) == 0
    assert "to " + str(out) + "/entries" in capsys.readouterr().out
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    second = ["--after", "2026-10-02T12:00:00Z", "--on-or-before", "2026-10-05"]
    assert main([*base, *second]) == 2
    assert "already holds data" in capsys.readouterr().err
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == files
    assert len(pd.read_parquet(out / "entries")) == 3
    assert main([*base, *second, "--overwrite"]) == 0
    entries = pd.read_parquet(out / "entries")
    assert len(entries) == 3 and len(pd.read_parquet(out / "codes")) == len(
        toolkit.Export.read_parquet(out).codes
    )
    # an empty range still writes both tables with their schema
    empty = tmp_path / "empty"
    assert (
        main(
            [
                "--env-file",
                str(env_file),
                "-q",
                "export",
                "--out",
                str(empty),
                "--after",
                "2027-01-01",
                "--on-or-before",
                "2027-01-02",
            ]
        )
        == 0
    )
    assert list(pd.read_parquet(empty / "codes").columns)[:2] == ["entryId", "position"]
    assert len(pd.read_parquet(empty / "entries")) == 0
    # CSV for Excel, and one workbook
    assert (
        main(
            [
                *base[:-1],
                str(tmp_path / "csv"),
                *first,
                "--format",
                "csv",
                "--encoding",
                "utf-8-sig",
            ]
        )
        == 0
    )
    assert (tmp_path / "csv" / "entries.csv").read_bytes()[:3] == b"\xef\xbb\xbf"
    assert "Müller" in (tmp_path / "csv" / "entries.csv").read_text(encoding="utf-8-sig")
    assert main([*base[:-1], str(tmp_path / "x.xlsx"), *first, "--format", "xlsx"]) == 0
    assert len(pd.read_excel(tmp_path / "x.xlsx", sheet_name="entries")) == 3


# -- SyncReport in Jupyter; an empty sync says what the lag holds back -------------------------


def test_sync_report_has_an_html_table_with_iso_times() -> None:
    report = SyncReport(
        "out/time",
        pd.Timestamp("2026-11-01", tz="UTC"),
        pd.Timestamp("2026-11-21 09:00", tz="UTC"),
        3,
        12,
        1,
        0,
        20,
        pd.Timestamp("2026-11-21 09:00", tz="UTC"),
    )
    html = report._repr_html_()
    assert html.startswith("<table") and "</table>" in html
    assert "Timestamp(" not in html
    assert "2026-11-21T09:00:00Z" in html
    for name in ("inserted", "updated", "unchanged", "watermark", "out/time"):
        assert name in html


def test_sync_report_counts_rows_written_and_says_when_there_was_nothing_to_do() -> None:
    assert SyncReport("out", None, None, 1, 2, 3, 0, 9, None).rows_written == 5
    nothing = SyncReport("out", None, None, 0, 0, 0, 0, 0, None)
    assert str(nothing) == "sync out: nothing to do; watermark none"
    at = pd.Timestamp("2026-11-21 09:50", tz="UTC")
    lagged = SyncReport("out", None, None, 0, 0, 0, 0, 0, at, pd.Timedelta("10min"))
    assert lagged.held_back() == (
        "nothing new up to 2026-11-21 09:50 UTC; entries released in the last 10min are held"
        " back by lag=10min and come with the next sync."
    )


def test_an_empty_sync_says_what_the_lag_holds_back(fresh_client: Client, tmp_path: Path) -> None:
    since = pd.Timestamp.now("UTC") - pd.Timedelta("1h")
    report = fresh_client.sync(tmp_path / "time", after=since, progress=False)
    assert report.rows_written == 0
    text = str(report)
    assert "nothing new up to" in text and " UTC" in text
    assert "held back by lag=10min" in text and "next sync" in text
    assert "held back by lag=10min" in report._repr_html_()
    # from the watermark, with the range already covered: the same words
    again = fresh_client.sync(tmp_path / "time", progress=False)
    assert "held back by lag=10min" in str(again)


def test_a_window_goes_from_arrow_to_delta_in_one_commit_per_table_without_pandas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit._egress import export
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    def refuse(table: object) -> pd.DataFrame:
        raise AssertionError("a pandas frame was made on the way to Delta")

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    first = [fake_export_entry(_id=f"e{i}", updated_at=at, codes=2) for i in range(3)]
    _write_window(path, Export.from_records(first), _schemas(), pd.Timestamp(at))
    later = (at + timedelta(hours=1)).isoformat()
    second = [dict(first[0], updatedAt=later), fake_export_entry(_id="e9", updated_at=at)]
    window = Export.from_records(second)
    versions = [DeltaTable(str(path / n)).version() for n in ("entries", "codes")]
    monkeypatch.setattr(export, "to_frame", refuse)
    assert _write_window(path, window, _schemas(), pd.Timestamp(at)) == (1, 1, 0, 5)
    after = [DeltaTable(str(path / n)).version() for n in ("entries", "codes")]
    assert after == [v + 1 for v in versions]  # one merge per table


def test_a_batch_of_newer_ids_reads_no_stored_file(tmp_path: Path) -> None:
    """The lookups read only the files whose id statistics a batch's ids fall within."""
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    older = [fake_export_entry(_id=f"a{i}", updated_at=at, codes=2) for i in range(3)]
    _write_window(path, Export.from_records(older), _schemas(), pd.Timestamp(at))
    for name in ("entries", "codes"):  # a file the lookups opened would fail them
        for uri in DeltaTable(str(path / name)).file_uris():
            Path(uri).unlink()
    newer = [fake_export_entry(_id=f"b{i}", updated_at=at, codes=1) for i in range(3)]
    assert _write_window(path, Export.from_records(newer), _schemas(), pd.Timestamp(at)) == (
        3,
        0,
        0,
        3,
    )
    # an id within a stored file's range is looked up there: the missing file is read
    with pytest.raises(OSError):
        _write_window(path, Export.from_records(older[:1]), _schemas(), pd.Timestamp(at))


def test_a_batch_into_tables_whose_every_code_has_its_entry_reads_no_codes_file(
    tmp_path: Path,
) -> None:
    """While every codes commit has its entries commit, no batch looks codes up."""
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    stored = [fake_export_entry(_id=f"a{i}", updated_at=at, codes=2) for i in (0, 2)]
    _write_window(path, Export.from_records(stored), _schemas(), pd.Timestamp(at))
    for uri in DeltaTable(str(path / "codes")).file_uris():  # a codes lookup would fail
        Path(uri).unlink()
    within = [fake_export_entry(_id=f"a1{i}", updated_at=at, codes=1) for i in range(3)]
    counts = _write_window(path, Export.from_records(within), _schemas(), pd.Timestamp(at))
    assert counts == (3, 0, 0, 3)


def test_codes_a_killed_sync_left_are_replaced_by_every_later_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill between a batch's codes commit and its entries commit leaves codes without their
    entry: every later batch looks them up, also after one that replaced only some of them."""
    from toolkit._egress.export import Export
    from toolkit._egress.sync import _schemas, _write_window, create_tables
    from toolkit.testing import fake_export_entry

    class Killed(Exception):
        pass

    path = create_tables(tmp_path / "time")
    at = datetime(2026, 11, 3, tzinfo=UTC)
    pair = [fake_export_entry(_id=f"e{i}", updated_at=at, codes=2) for i in range(2)]
    write, calls = syncing.write_deltalake, []

    def killed_after_the_codes(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        if len(calls) == 2:
            raise Killed
        write(*args, **kwargs)

    monkeypatch.setattr(syncing, "write_deltalake", killed_after_the_codes)
    with pytest.raises(Killed):
        _write_window(path, Export.from_records(pair), _schemas(), pd.Timestamp(at))
    monkeypatch.undo()
    assert len(toolkit.read_sync(path).codes) == 4 and len(toolkit.read_sync(path)) == 0
    for entry in pair:  # the resumed sync's batches hold one of them each
        _write_window(path, Export.from_records([entry]), _schemas(), pd.Timestamp(at))
    ex = toolkit.read_sync(path)
    assert len(ex) == 2
    assert len(ex.codes) == 4 and not ex.codes.duplicated(["entryId", "position"]).any()


def test_a_sync_allocates_arrow_memory_from_jemalloc_and_restores_the_pool(
    firm_client: Client, sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc")
    release_entries(sandbox, firm_client, 2, every=timedelta(hours=1))
    seen: list[str] = []
    write = syncing._write_window

    def watched(*args: Any) -> Any:
        seen.append(pa.default_memory_pool().backend_name)
        return write(*args)

    monkeypatch.setattr(syncing, "_write_window", watched)
    decays: list[int] = []  # freed pages wait for reuse: each batch hands them back itself
    monkeypatch.setattr(pa, "jemalloc_set_decay_ms", decays.append)
    before = pa.default_memory_pool().backend_name
    firm_client.sync(tmp_path / "time", after=T0, on_or_before=T0 + timedelta(hours=3))
    assert seen == ["jemalloc"]
    assert decays == [1000]
    assert pa.default_memory_pool().backend_name == before


def test_a_sync_keeps_one_request_at_the_service_and_sends_the_next_while_flattening(
    firm_client: Client, sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never two requests at once (they compete for the service), never none while an answer
    is flattened: the next window is asked for as soon as an answer is in; written in order."""
    release_entries(sandbox, firm_client, 4, every=timedelta(hours=1))
    lock, in_flight, most, sent = threading.Lock(), [0], [0], []
    second = threading.Event()
    call, from_json = Connection.call, Export.from_json

    def counted(self: Connection, endpoint: str, **kwargs: Any) -> Any:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
            sent.append(endpoint)
            if sent.count("export") == 2:
                second.set()
        try:
            if endpoint == "export" and sent.count("export") == 1:
                second.wait(timeout=1)  # a second request sent meanwhile would be in flight now
            return call(self, endpoint, **kwargs)
        finally:
            with lock:
                in_flight[0] -= 1

    flattening: list[bool] = []

    def flatten(raw: Any, kind: Any = "export") -> Export:
        if threading.current_thread().name.startswith("toolkit-sync") and not flattening:
            flattening.append(second.wait(timeout=10))  # the next request goes out meanwhile
        return from_json(raw, kind=kind)

    monkeypatch.setattr(Connection, "call", counted)
    monkeypatch.setattr(Export, "from_json", flatten)
    path = tmp_path / "time"
    report = firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(hours=5), window="1h")
    assert most[0] == 1
    assert flattening == [True]
    assert report.inserted == 4
    assert report.watermark == pd.Timestamp(T0 + timedelta(hours=5))
    assert sorted(toolkit.read_sync(path).entries["_id"]) == sorted(
        firm_client.export_entries(T0, T0 + timedelta(hours=5)).entries["_id"]
    )
