"""``toolkit reconcile EXPORT BILLING``: a synced or exported folder against a billing file."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
import toolkit.sandbox
from tests.conftest import T0, release_entries, write_client_env
from toolkit import Client
from toolkit._cli import main
from toolkit._reconciliation.classify import ROW_COLUMNS
from toolkit.sandbox import Sandbox, write_env_file
from toolkit.testing import fake_export_entries


@pytest.fixture
def released(firm_client: Client, sandbox) -> list[dict]:  # noqa: ANN001
    """Six entries released one per 6 hours after T0, on one fresh customer."""
    return release_entries(sandbox, firm_client, 6, every=timedelta(hours=6))


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
    report = firm_client.sync(path, after=T0, on_or_before=T0 + timedelta(days=2))
    assert report.inserted == len(released)
    entries = toolkit.read_sync(path).entries
    billing = _billing(entries)
    good = tmp_path / "billing.csv"
    billing.to_csv(good, index=False, sep=";")
    args = [
        "reconcile",
        str(path),
        str(good),
        "--duration-unit",
        "hours",
        "--tolerance-seconds",
        "1",
    ]
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
        code = main(
            [
                "reconcile",
                str(folder),
                str(billing_file),
                "--duration",
                "seconds",
                "--out",
                str(out),
            ]
        )
        assert code == 1  # the first entry is not billed
        text = capsys.readouterr().out
        assert "compared duration (not compared: date, matter)" in text
        assert f"wrote {len(released)} reconciliation rows to {out}" in text
        rows = (
            pd.read_excel(out)
            if suffix == "xlsx"
            else (pd.read_csv(out) if suffix == "csv" else pd.read_parquet(out))
        )
        assert list(rows.columns) == list(ROW_COLUMNS)
        assert rows["status"].astype(str).value_counts().to_dict() == {
            "matched": len(released) - 1,
            "missing_in_billing": 1,
        }

    # a CSV folder and a workbook written by toolkit export read the same
    csv_folder = export.to_csv(tmp_path / "export-csv")
    workbook = export.to_excel(tmp_path / "export.xlsx")
    for source in (csv_folder, workbook):
        assert main(["reconcile", str(source), str(billing_file), "--duration", "seconds"]) == 1
        assert "missing_in_billing               1" in capsys.readouterr().out

    billing_all = pd.concat(
        [
            billing,
            pd.DataFrame(
                {
                    "entryId": [export.entries["_id"].iloc[0]],
                    "seconds": [export.entries["incrementDurationInSeconds"].iloc[0]],
                }
            ),
        ]
    )
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
    ids=[
        "missing-file",
        "ambiguous-date",
        "named-column-absent",
        "bad-out",
        "bad-tolerance",
        "duplicate-keys",
        "unreadable-billing",
    ],
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
        [
            sys.executable,
            "-m",
            "toolkit",
            "--env-file",
            str(tmp_path / "none.env"),
            "reconcile",
            str(tmp_path / export),
            str(billing),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_reconcile_window_selects_by_release_time_also_after_acknowledging(
    firm_client: Client,
    released: list[dict],
    sandbox,
    tmp_path: Path,
    capsys,  # noqa: ANN001
) -> None:
    # released at T0 + 6 h, 12 h, ... 36 h: three of them in the window (T0, T0 + 20 h]
    env = ["--env-file", str(write_client_env(firm_client, sandbox, tmp_path / "firm.env")), "-q"]
    window = ["--after", "2026-10-01T00:00Z", "--on-or-before", "2026-10-01T20:00Z"]
    firm_client.sync(tmp_path / "before", after=T0, on_or_before=T0 + timedelta(days=2))
    billing = tmp_path / "billing.csv"
    _billing(toolkit.read_sync(tmp_path / "before").entries).to_csv(billing, index=False)
    rec = tmp_path / "rec.csv"
    argv = [
        *env,
        "reconcile",
        str(tmp_path / "before"),
        str(billing),
        "--duration-unit",
        "hours",
        "--tolerance-seconds",
        "1",
        *window,
    ]
    assert main([*argv, "--out", str(rec)]) == 1  # three billing records are outside it
    text = capsys.readouterr().out
    assert "released after 2026-10-01T00:00:00.000Z, on or before 2026-10-01T20:00:00.000Z" in text
    assert "(the service's export of that window): 3 of 6" in text
    assert re.search(r"^  matched +3$", text, re.MULTILINE)

    assert main([*env, "acknowledge", str(rec)]) == 0  # moves their updatedAt to now
    firm_client.sync(tmp_path / "after", after=T0, on_or_before=T0 + timedelta(days=2))
    after = toolkit.read_sync(tmp_path / "after").entries
    assert after["updatedAt"].max() > pd.Timestamp("2026-11-01", tz="UTC")
    argv[argv.index(str(tmp_path / "before"))] = str(tmp_path / "after")
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "(the service's export of that window): 3 of 6" in text  # the same entries
    assert re.search(r"^  matched +3$", text, re.MULTILINE)


def test_reconcile_window_with_a_bare_date_takes_the_whole_day(
    firm_client: Client,
    released: list[dict],
    sandbox,
    tmp_path: Path,
    capsys,  # noqa: ANN001
) -> None:
    env = ["--env-file", str(write_client_env(firm_client, sandbox, tmp_path / "firm.env")), "-q"]
    export = firm_client.export_entries(T0, T0 + timedelta(days=2)).to_parquet(tmp_path / "ex")
    billing = tmp_path / "billing.csv"
    _billing(toolkit.Export.read_parquet(export).entries).to_csv(billing, index=False)
    assert (
        main(
            [
                *env,
                "reconcile",
                str(export),
                str(billing),
                "--duration-unit",
                "hours",
                "--tolerance-seconds",
                "1",
                "--after",
                "2026-09-30",
                "--on-or-before",
                "2026-10-01",
            ]
        )
        == 1
    )
    captured = capsys.readouterr()
    assert "warning" not in captured.err  # one meaning everywhere: nothing to warn about
    assert "on or before 2026-10-01T23:59:59.999Z" in captured.out
    assert "3 of 6" in captured.out  # T0 + 6, 12, 18 h; not T0 + 24 h, the next midnight


def _reconciled(firm_client: Client, sandbox, tmp_path: Path) -> tuple[list[str], Path, list]:  # noqa: ANN001
    """Six released entries reconciled: one not billed, one billed 15 minutes more."""
    env = ["--env-file", str(write_client_env(firm_client, sandbox, tmp_path / "firm.env")), "-q"]
    entries = firm_client.export_entries(T0, T0 + timedelta(days=2)).entries
    entries.to_csv(tmp_path / "entries.csv", index=False)
    billing = _billing(entries)
    billing.loc[0, "duration"] = str(float(billing.loc[0, "duration"]) + 0.25)
    billing.drop(index=1).to_csv(tmp_path / "billing.csv", index=False)
    rec = tmp_path / "rec.xlsx"
    assert (
        main(
            [
                *env,
                "reconcile",
                str(tmp_path / "entries.csv"),
                str(tmp_path / "billing.csv"),
                "--duration-unit",
                "hours",
                "--tolerance-seconds",
                "1",
                "--out",
                str(rec),
            ]
        )
        == 1
    )
    return entries["_id"].tolist(), rec, env


def test_acknowledge_of_a_reconciliation_sends_only_the_matched_by_default(
    firm_client: Client,
    released: list[dict],
    sandbox,
    tmp_path: Path,
    capsys,  # noqa: ANN001
) -> None:
    ids, rec, env = _reconciled(firm_client, sandbox, tmp_path)
    capsys.readouterr()
    assert main([*env, "acknowledge", str(rec), "--out", str(tmp_path / "res.csv")]) == 0
    text = capsys.readouterr().out
    assert "4 matched entries to acknowledge as succeeded, 0 as failed" in text
    assert "left pending: 1 duration_differs, 1 missing_in_billing" in text
    res = pd.read_csv(tmp_path / "res.csv")
    assert set(res["entryId"]) == set(ids[2:]) and (res["outcome"] == "succeeded").all()
    assert set(firm_client.release_pending().entries["_id"]) == set(ids[:2])


def test_acknowledge_include_names_the_classes_to_acknowledge(
    firm_client: Client,
    released: list[dict],
    sandbox,
    tmp_path: Path,
    capsys,  # noqa: ANN001
) -> None:
    ids, rec, env = _reconciled(firm_client, sandbox, tmp_path)
    assert main([*env, "acknowledge", str(rec), "--include", "only_in_billing"]) == 2
    assert main([*env, "acknowledge", str(rec), "--include", "maybe"]) == 2
    assert "include takes 'matched', 'failed'" in capsys.readouterr().err
    assert (
        main(
            [
                *env,
                "acknowledge",
                str(rec),
                "--include",
                "missing_in_billing",
                "--out",
                str(tmp_path / "res.csv"),
            ]
        )
        == 0
    )
    res = pd.read_csv(tmp_path / "res.csv")
    assert res[["entryId", "outcome"]].values.tolist() == [[ids[1], "failed"]]
    assert main([*env, "acknowledge", str(rec), "--include", "matched,failed"]) == 0
    assert firm_client.release_pending().entries.empty


def test_acknowledge_help_says_the_default(capsys) -> None:  # noqa: ANN001
    assert main(["acknowledge", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--include STATUSES" in text
    assert "Default: matched only, what the billing extract proves" in text


def _ids_billing(tmp_path: Path, n: int = 40) -> tuple[Path, pd.DataFrame]:
    folder = toolkit.Export.from_records(fake_export_entries(n, seed=5)).to_parquet(
        tmp_path / "export"
    )
    entries = toolkit.Export.read_parquet(folder).entries
    return folder, entries


def test_reconcile_messages_name_the_options_as_flags(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    folder, entries = _ids_billing(tmp_path)
    billing = pd.DataFrame(
        {
            "Entry": entries["_id"],
            "Work Date": entries["workDate"].dt.strftime("%Y-%m-%d"),
            "Hours": (entries["incrementDurationInSeconds"] / 3600 + 1).round(2),
        }
    )
    path = tmp_path / "billing.csv"
    billing.to_csv(path, index=False)
    assert main(["reconcile", str(folder), str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        "billing file " + str(path) + " has no column 'entryId' (closest: 'Entry') (choose "
        "the key column with --billing-key)" in err
    )
    argv = ["reconcile", str(folder), str(path), "--billing-key", "Entry"]
    assert main(argv) == 0  # nothing compared but the keys
    captured = capsys.readouterr()
    assert "To compare them with it, add --date 'Work Date'" in captured.err
    assert (
        "did you mean its column 'Hours'? To compare them with it, add --duration Hours "
        "--duration-unit hours" in captured.err
    )
    assert "pass " not in captured.err and "Reconciliation(" not in captured.out
    assert captured.out.startswith(f"{folder} against {path}: 40 rows")

    argv += ["--duration", "Hours", "--duration-unit", "hours", "--date", "Work Date"]
    assert main(argv) == 1  # every duration billed an hour more
    assert "(write them all with --out FILE)" in capsys.readouterr().out
    out = tmp_path / "rec.csv"
    assert main([*argv, "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "--out FILE" not in text and f"... 10 more (all of them are in {out})" in text


def test_reconcile_reads_decimal_commas_with_the_decimal_option(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    folder, entries = _ids_billing(tmp_path)
    hours = (entries["incrementDurationInSeconds"] / 3600).round(2)
    billing = pd.DataFrame(
        {"entryId": entries["_id"], "duration": hours.map(lambda h: f"{h:.2f}".replace(".", ","))}
    )
    path = tmp_path / "billing.csv"
    billing.to_csv(path, index=False, sep=";")
    argv = [
        "reconcile",
        str(folder),
        str(path),
        "--duration-unit",
        "hours",
        "--tolerance-seconds",
        "18",
    ]
    assert main(argv) == 2
    assert "(decimal commas? add --decimal ,)" in capsys.readouterr().err
    assert main([*argv, "--decimal", ","]) == 0
    with pytest.raises(toolkit.errors.ValidationError, match=r"decimal commas\? pass decimal=','"):
        toolkit.reconcile(entries, billing, duration_unit="hours")
    rec = toolkit.reconcile(
        entries, billing, duration_unit="hours", decimal=",", tolerance_seconds=18
    )
    assert rec.summary["matched"] == len(entries)


# -- from reconcile to acknowledge on the command line -----------------------------------------


@pytest.fixture
def firm_env(firm: Any, sandbox: Sandbox, tmp_path: Path, no_toolkit_env: None) -> Path:
    """A .env of the ``firm`` customer."""
    t = firm.tenant
    return write_env_file(
        tmp_path / "firm.env",
        toolkit.sandbox.env_for(
            t.url, t.customer_id, t.client_id, t.client_secret, sandbox.audience
        ),
    )


def _reconciled_files(firm: Any, tmp_path: Path, env: Path) -> tuple[list[str], Path, Path]:
    """Three released entries of the firm reconciled with a billing file: e1 matched, e2's
    duration differs, e3 missing, one record only in billing."""
    ids = [firm.entry(duration=1800, released_at="2026-11-02T10:00:00Z")["_id"] for _ in range(3)]
    client = toolkit.Client.from_env(env)
    entries = client.export_entries("2026-11-01", "2026-11-03").entries
    entries.to_csv(tmp_path / "entries.csv", index=False)
    pd.DataFrame(
        {
            "entryId": [ids[0], ids[1], "nobody"],
            "billingId": ["B-1", "B-2", "B-9"],
            "duration": [1800, 3600, 60],
        }
    ).to_csv(tmp_path / "billing.csv", index=False)
    rec, acks = tmp_path / "rec.xlsx", tmp_path / "acks.csv"
    base = ["--env-file", str(env), "-q"]
    assert (
        main(
            [
                *base,
                "reconcile",
                str(tmp_path / "entries.csv"),
                str(tmp_path / "billing.csv"),
                "--out",
                str(rec),
                "--acknowledge-out",
                str(acks),
                "--include",
                "matched,failed",
            ]
        )
        == 1
    )
    return ids, rec, acks


def test_acknowledge_out_writes_the_matched_entries_unless_include_names_more(
    firm: Any, firm_env: Path, tmp_path: Path
) -> None:
    ids, rec, _ = _reconciled_files(firm, tmp_path, firm_env)
    base = ["--env-file", str(firm_env), "-q"]
    for include, expected in (
        ([], {ids[0]: "succeeded"}),
        (["--include", "matched,missing_in_billing"], {ids[0]: "succeeded", ids[2]: "failed"}),
    ):
        acks = tmp_path / f"acks{len(include)}.csv"
        assert (
            main(
                [
                    *base,
                    "reconcile",
                    str(tmp_path / "entries.csv"),
                    str(tmp_path / "billing.csv"),
                    "--acknowledge-out",
                    str(acks),
                    *include,
                ]
            )
            == 1
        )
        written = pd.read_csv(acks)
        assert dict(zip(written["entryId"], written["outcome"], strict=True)) == expected


def test_acknowledge_takes_the_file_reconcile_wrote(
    firm: Any, firm_env: Path, tmp_path: Path, capsys: Any
) -> None:
    ids, rec, acks = _reconciled_files(firm, tmp_path, firm_env)
    base = ["--env-file", str(firm_env), "-q"]
    capsys.readouterr()
    assert (
        main(
            [
                *base,
                "acknowledge",
                str(rec),
                "--out",
                str(tmp_path / "res.csv"),
                "--include",
                "matched,failed",
            ]
        )
        == 0
    )  # the default is matched only
    assert "1 matched entries to acknowledge as succeeded, 2 as failed" in capsys.readouterr().out
    res = pd.read_csv(tmp_path / "res.csv")
    assert dict(zip(res["entryId"], res["outcome"], strict=True)) == {
        ids[0]: "succeeded",
        ids[1]: "failed",
        ids[2]: "failed",
    }
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
