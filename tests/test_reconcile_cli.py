"""``toolkit reconcile EXPORT BILLING``: a synced or exported folder against a billing file."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from test_sync import SAMPLE, T0, _release

import toolkit
from toolkit import Client
from toolkit.cli.app import main
from toolkit.reconciliation.classify import ROW_COLUMNS
from toolkit.testing import fake_export_entries


@pytest.fixture
def firm_client(fresh_client: Client) -> Client:
    assert fresh_client.onboard(SAMPLE, progress=False).ok
    return fresh_client


@pytest.fixture
def released(firm_client: Client, sandbox) -> list[dict]:  # noqa: ANN001
    """Six entries released one per 6 hours after T0, on one fresh customer."""
    return _release(sandbox, firm_client, 6, every=timedelta(hours=6))


def _billing(entries: pd.DataFrame) -> pd.DataFrame:
    """A billing extract (text cells, as from a CSV) that agrees with every entry."""
    return pd.DataFrame(
        {
            "entryId": entries["_id"].to_numpy(),
            "billingId": [f"B-{i}" for i in range(len(entries))],
            "duration": (entries["incrementDurationInSeconds"] / 3600).round(4).astype(str),
            "workDate": entries["workDate"].dt.strftime("%Y-%m-%d").to_numpy(),
            "matter": entries["initiative.externalId"].to_numpy(),
        }
    )


def test_cli_reconciles_a_synced_folder(
    firm_client: Client, released: list[dict], tmp_path: Path, capsys
) -> None:
    path = tmp_path / "time"
    report = firm_client.sync(path, since=T0, until=T0 + timedelta(days=2))
    assert report.inserted == len(released)
    entries = toolkit.read_sync(path).entries
    billing = _billing(entries)
    good = tmp_path / "billing.csv"
    billing.to_csv(good, index=False, sep=";")
    args = ["reconcile", str(path), str(good), "--duration-unit", "hours",
            "--tolerance-seconds", "1"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert re.search(rf"^  matched +{len(entries)}$", text, re.MULTILINE)
    assert "compared duration, date, matter" in text

    # one record billed for 15 minutes more, one not billed at all
    billing.loc[0, "duration"] = str(float(billing.loc[0, "duration"]) + 0.25)
    billing = billing.drop(index=1)
    bad = tmp_path / "billing-bad.csv"
    billing.to_csv(bad, index=False)
    assert main([*args[:2], str(bad), *args[3:]]) == 1
    text = capsys.readouterr().out
    assert "duration_differs" in text and "missing_in_billing" in text
    assert f"missing in billing: no billing record has _id {entries['_id'].iloc[1]}" in text
    assert "difference +900 s" in text


def test_cli_reconciles_an_exported_folder_with_id_and_duration_only_and_writes_out(
    firm_client: Client, released: list[dict], tmp_path: Path, capsys
) -> None:
    export = firm_client.export_entries(T0, T0 + timedelta(days=2))
    folder = export.to_parquet(tmp_path / "export")
    billing = pd.DataFrame(
        {
            "entryId": export.entries["_id"].to_numpy(),
            "seconds": export.entries["incrementDurationInSeconds"].to_numpy(),
        }
    ).iloc[1:]
    billing_file = tmp_path / "billing.parquet"
    billing.to_parquet(billing_file)
    for suffix in ("xlsx", "csv", "parquet"):
        out = tmp_path / f"rec.{suffix}"
        code = main(["reconcile", str(folder), str(billing_file), "--duration", "seconds",
                     "--out", str(out)])
        assert code == 1  # the first entry is not billed
        text = capsys.readouterr().out
        assert "compared duration (not compared: date, matter)" in text
        assert f"wrote {len(released)} reconciliation rows to {out}" in text
        rows = pd.read_excel(out) if suffix == "xlsx" else (
            pd.read_csv(out) if suffix == "csv" else pd.read_parquet(out))
        assert list(rows.columns) == list(ROW_COLUMNS)
        assert rows["status"].astype(str).value_counts().to_dict() == {
            "matched": len(released) - 1, "missing_in_billing": 1}

    # a CSV folder and a workbook written by toolkit export read the same
    csv_folder = export.to_csv(tmp_path / "export-csv")
    workbook = export.to_excel(tmp_path / "export.xlsx")
    for source in (csv_folder, workbook):
        assert main(["reconcile", str(source), str(billing_file), "--duration", "seconds"]) == 1
        assert "missing_in_billing               1" in capsys.readouterr().out

    billing_all = pd.concat([billing, pd.DataFrame(
        {"entryId": [export.entries["_id"].iloc[0]],
         "seconds": [export.entries["incrementDurationInSeconds"].iloc[0]]})])
    billing_all.to_parquet(billing_file)
    assert main(["reconcile", str(folder), str(billing_file), "--duration", "seconds"]) == 0


def _entries_folder(tmp_path: Path) -> Path:
    """A small exported folder, written without a service."""
    return toolkit.Export.from_records(fake_export_entries(3)).to_parquet(tmp_path / "export")


@pytest.mark.parametrize(
    ("make_billing", "extra", "message"),
    [
        (None, [], "no such file"),
        ("ambiguous", [], "'03/04/2026'"),
        ("ids", ["--date", "Date worked"], "no column 'Date worked'"),
        ("ids", ["--out", "rec.txt"], "write .csv, .xlsx or .parquet"),
        ("ids", ["--tolerance-seconds", "-5"], "tolerance_seconds"),
        ("duplicates", [], "duplicated key"),
        ("garbage", [], "not a readable Excel workbook"),
    ],
    ids=["missing-file", "ambiguous-date", "named-column-absent", "bad-out", "bad-tolerance",
         "duplicate-keys", "unreadable-billing"],
)
def test_cli_bad_input_is_exit_2_with_a_message_and_no_traceback(
    tmp_path: Path, capsys, make_billing: str | None, extra: list[str], message: str
) -> None:
    folder = _entries_folder(tmp_path)
    ids = toolkit.Export.read_parquet(folder).entries["_id"].tolist()
    billing = tmp_path / "billing.csv"
    if make_billing == "ambiguous":
        pd.DataFrame({"entryId": ids, "workDate": ["03/04/2026"] * 3}).to_csv(billing, index=False)
    elif make_billing == "ids":
        pd.DataFrame({"entryId": ids}).to_csv(billing, index=False)
    elif make_billing == "duplicates":
        pd.DataFrame({"entryId": [ids[0], ids[0]]}).to_csv(billing, index=False)
    elif make_billing == "garbage":
        billing = tmp_path / "billing.xlsx"
        billing.write_bytes(b"not a workbook")
    extra = [str(tmp_path / e) if e == "rec.txt" else e for e in extra]
    assert main(["reconcile", str(folder), str(billing), *extra]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err + captured.out


@pytest.mark.parametrize(
    ("export", "message"),
    [("stuff", "neither a synced folder"), ("export.xlsx", "cannot read it as exported entries")],
    ids=["other-folder", "broken-workbook"],
)
def test_cli_export_that_is_not_an_export_is_exit_2_without_traceback(
    tmp_path: Path, export: str, message: str
) -> None:
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("hello")
    (tmp_path / "export.xlsx").write_bytes(b"PK not really a workbook")
    billing = tmp_path / "billing.csv"
    billing.write_text("entryId,duration\ne1,60\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolkit", "--env-file", str(tmp_path / "none.env"),
         "reconcile", str(tmp_path / export), str(billing)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
