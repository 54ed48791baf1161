"""``toolkit demo`` runs the whole flow and leaves a Parquet dataset and a PNG in its folder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.dataset as ds
import pytest

from tests.conftest import fetch_token, sandbox_process
from toolkit import _demo
from toolkit._cli import main
from toolkit._demo import hours_by_client_chart, planted_billing_extract, run_demo

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """One run of ``toolkit demo --out <tmp>``: its folder, exit status and output."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("demo")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["demo", "--out", str(out), "--workers", "4"])
    return out, status, buffer.getvalue()


def test_demo_succeeds_and_reports_every_step(demo_out: tuple[Path, int, str]) -> None:
    _, status, printed = demo_out
    assert status == 0, printed
    for step in (
        "validate",
        "onboard",
        "users",
        "entries",
        "export",
        "chart",
        "acknowledge",
        "pending",
        "star",
        "reconcile",
    ):
        assert f"] {step}" in printed
    assert "FAILED" not in printed
    assert "0 pending now" in printed


def test_demo_never_prints_the_secret(demo_out: tuple[Path, int, str]) -> None:
    _, _, printed = demo_out
    assert "secret" not in printed.lower()
    assert "sandbox at http://127.0.0.1:" in printed


def test_demo_writes_a_parquet_dataset(demo_out: tuple[Path, int, str]) -> None:
    out, _, _ = demo_out
    entries = ds.dataset(out / "export" / "entries", format="parquet", partitioning="hive")
    codes = ds.dataset(out / "export" / "codes", format="parquet", partitioning="hive")
    assert entries.count_rows() == 200
    assert codes.count_rows() > 0
    frame = pd.read_parquet(out / "export" / "entries")
    assert frame["_id"].is_unique
    assert {
        "userId",
        "workDate",
        "incrementDurationInSeconds",
        "initiative.client.externalId",
    } <= set(frame.columns)
    assert frame["incrementDurationInSeconds"].gt(0).all()
    assert set(pd.read_parquet(out / "export" / "codes")["entryId"]) <= set(frame["_id"])


def test_demo_writes_the_chart(demo_out: tuple[Path, int, str]) -> None:
    out, _, _ = demo_out
    png = out / "hours_by_client.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000


def test_demo_starts_from_a_fresh_sandbox_database(demo_out: tuple[Path, int, str]) -> None:
    out, _, _ = demo_out
    assert (out / "sandbox.db").is_file()


@pytest.fixture
def in_a_broken_firm(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo run in a folder whose ``./sample_data`` is the broken sample: it stops at
    validate."""
    here = tmp_path_factory.mktemp("firm")
    shutil.copytree(REPO / "sample_data" / "broken", here / "sample_data")
    monkeypatch.chdir(here)


@pytest.mark.usefixtures("in_a_broken_firm")
def test_demo_stops_at_a_failing_step(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status = run_demo(tmp_path, workers=2)
    printed = capsys.readouterr().out
    assert status == 1
    assert "validate     FAILED" in printed
    assert "] onboard" not in printed


def test_planted_billing_extract_is_reproducible() -> None:
    entries = pd.DataFrame(
        {
            "_id": [f"e{i:03d}" for i in range(200)],
            "workDate": pd.Timestamp("2026-03-02"),
            "initiative.externalId": "M-1",
            "incrementDurationInSeconds": 3600,
        }
    )
    first = planted_billing_extract(entries, seed=3)
    assert first.equals(planted_billing_extract(entries, seed=3))
    assert len(first) == 200 - 6 + 2
    assert (first["hours"] == 1.5).sum() == 8 + 1  # written up, plus one typed-in record


def test_hours_by_client_chart_writes_a_png(tmp_path: Path) -> None:
    entries = pd.DataFrame(
        {"initiative.client.name": ["Acme", "Globex"], "incrementDurationInSeconds": [3600, 7200]}
    )
    path = hours_by_client_chart(entries, tmp_path / "sub" / "chart.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def _records(db: Path) -> dict[str, int]:
    """Rows per table of a sandbox database, read-only (it may be served meanwhile)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def test_demo_refuses_a_database_a_running_sandbox_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    db, env_file = tmp_path / "sandbox.db", tmp_path / ".env"
    with sandbox_process(db, env_file, ["--seed", str(REPO / "sample_data")]) as (proc, url):
        held = _records(db)
        assert held["clients"] > 0
        assert run_demo(tmp_path, workers=2) == 2
        printed = capsys.readouterr().out
        assert f"{db} is open in another process, a running sandbox" in printed
        assert "changes nothing" in printed
        assert _records(db) == held
        assert proc.poll() is None  # still serving the same customer
        creds = dict(line.split("=", 1) for line in env_file.read_text().splitlines())
        assert fetch_token(
            url,
            creds["TOOLKIT_CLIENT_ID"],
            creds["TOOLKIT_CLIENT_SECRET"],
            creds["TOOLKIT_AUDIENCE"],
        )
    assert not (tmp_path / "export").exists()
    assert sorted(p.name for p in tmp_path.glob("sandbox*.db")) == ["sandbox.db"]


@pytest.mark.usefixtures("in_a_broken_firm")
def test_demo_keeps_an_earlier_database_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import sqlite3

    con = sqlite3.connect(tmp_path / "sandbox.db")
    con.execute("CREATE TABLE clients (externalId TEXT)")
    con.execute("INSERT INTO clients VALUES ('C-mine')")
    con.commit()
    con.close()
    run_demo(tmp_path, workers=2)  # stops at validate
    printed = capsys.readouterr().out
    kept = [p for p in tmp_path.glob("sandbox.*.db") if p.name != "sandbox.db"]
    assert len(kept) == 1
    assert re.fullmatch(r"sandbox\.\d{8}T\d{6}Z\.db", kept[0].name)  # as Makefile and README say
    assert f"{tmp_path / 'sandbox.db'} existed: moved to {kept[0]}" in printed
    assert _records(kept[0]) == {"clients": 1}
    # a second run keeps both earlier databases: none is ever replaced
    run_demo(tmp_path, workers=2)
    assert len([p for p in tmp_path.glob("sandbox.*.db") if p.name != "sandbox.db"]) == 2


# -- the demo leaves a batch pending -----------------------------------------------------------


def test_the_demo_leaves_a_batch_pending(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_demo, "DEMO_ENTRIES", 20)  # a shorter run, the same steps
    assert run_demo(tmp_path, workers=8) == 0
    printed = capsys.readouterr().out
    assert "0 pending now" in printed  # the reconcile step acknowledged every pending entry
    assert "12 new entries released and left pending (12 pending now)" in printed


@pytest.mark.usefixtures("in_a_broken_firm")
def test_a_demo_stopped_before_its_export_keeps_the_earlier_export_and_chart(
    tmp_path: Path,
) -> None:
    # an earlier run's results are replaced when the new ones are written, never before
    (tmp_path / "export" / "entries").mkdir(parents=True)
    (tmp_path / "export" / "entries" / "part-0.parquet").write_bytes(b"earlier")
    (tmp_path / "hours_by_client.png").write_bytes(b"earlier")
    run_demo(tmp_path, workers=2)  # stops at validate
    assert (tmp_path / "export" / "entries" / "part-0.parquet").read_bytes() == b"earlier"
    assert (tmp_path / "hours_by_client.png").read_bytes() == b"earlier"


def test_the_makefile_and_the_readme_name_the_database_the_demo_keeps() -> None:
    kept = "out/sandbox.<when it was last written>.db"
    makefile = " ".join(line.lstrip("# ") for line in (REPO / "Makefile").read_text().splitlines())
    assert kept in makefile and "previous.db" not in makefile
    assert kept in (REPO / "README.md").read_text()
