"""LEDES invoices: read as billing systems write them, refused with a message naming the file,
line and field, and reconciled with exported entries by timekeeper, date and matter."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import toolkit
from toolkit._cli import main
from toolkit._reconciliation.ledes import FIELDS
from toolkit.errors import ConfigError, InputWarning, ValidationError

HERE = Path(__file__).parent / "ledes"
B, BI = "LEDES1998B", "LEDES98BI V2"


def read(name: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a file that adds up reads without a warning
        return toolkit.read_ledes(HERE / name)


def test_reads_the_public_1998b_example_typed() -> None:
    lines = read("public_1998b.txt")
    assert lines.attrs["format"] == B
    assert lines.columns.tolist() == [*FIELDS[B], "line"]
    assert lines["INVOICE_NUMBER"].tolist() == ["96542"] * 5 + ["96543"]
    assert lines["LINE_ITEM_NUMBER_OF_UNITS"].tolist() == [2.0, 2.0, 0.2, 1.0, 1.0, 1.0]
    assert lines["LINE_ITEM_ADJUSTMENT_AMOUNT"].tolist()[-1] == 1250.0  # written "1250."
    assert lines["LINE_ITEM_DATE"].iloc[2] == pd.Timestamp("1999-01-16")
    assert lines["LINE_ITEM_DESCRIPTION"].iloc[0] == "Research Attorney\u2019s fees, Set off claim"
    assert str(lines["INVOICE_TOTAL"].dtype) == "Float64"
    assert lines["CLIENT_ID"].tolist()[0] == "00711"  # an id keeps its zeros
    assert lines["LINE_ITEM_UNIT_COST"].isna().tolist() == [False] * 5 + [True]
    assert lines["line"].tolist() == [3, 4, 5, 6, 7, 8]


def test_reads_the_public_98bi_v2_example_with_its_tax() -> None:
    lines = read("public_98bi_v2.txt")
    assert lines.attrs["format"] == BI and len(lines.columns) == 52 + 1
    assert lines["LINE_ITEM_TAX_TOTAL"].tolist()[:3] == [87.63, 92.6, 5.29]
    assert lines["INVOICE_CURRENCY"].unique().tolist() == ["GBP"]
    assert lines["LAW_FIRM_ADDRESS_2"].isna().all()


@pytest.mark.parametrize(
    ("name", "like"),
    [
        ("variant_bom_crlf_blank_lines.txt", "public_1998b.txt"),
        ("variant_98bi_v2_crlf_no_brackets.txt", "public_98bi_v2.txt"),
    ],
)
def test_reads_crlf_a_bom_blank_lines_and_no_brackets_as_the_same_lines(
    name: str, like: str
) -> None:
    ours, theirs = read(name).drop(columns="line"), read(like).drop(columns="line")
    pd.testing.assert_frame_equal(ours, theirs)


def test_reads_several_invoices_without_brackets_and_lf() -> None:
    lines = read("variant_lf_no_brackets_three_invoices.txt")
    assert lines["INVOICE_NUMBER"].unique().tolist() == ["96542", "96543", "INV-3"]
    assert lines["CLIENT_MATTER_ID"].tolist()[-2:] == ["425-936", "CM-1001"]


def test_reads_windows_1252_text() -> None:
    lines = read("variant_cp1252.txt")
    assert lines["LINE_ITEM_DESCRIPTION"].iloc[1].endswith("caf\u00e9 meeting \u2019")


def test_reads_bytes_and_open_files_alike() -> None:
    data = (HERE / "public_1998b.txt").read_bytes()
    expected = read("public_1998b.txt")
    for source in (data, io.BytesIO(data), io.StringIO(data.decode()), data.decode()):
        pd.testing.assert_frame_equal(toolkit.read_ledes(source), expected)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_field_count.txt", "line 5 has 23 fields, LEDES1998B has 24"),
        (
            "bad_date.txt",
            "line 4, field LINE_ITEM_DATE: '1999-01-15' is not a date written YYYYMMDD",
        ),
        ("bad_amount.txt", "line 4, field LINE_ITEM_NUMBER_OF_UNITS: '0,2' is not a number"),
        (
            "bad_header.txt",
            "line 2 is not LEDES1998B's header: field 13 is 'LINE_TOTAL', LEDES1998B has "
            "'LINE_ITEM_TOTAL'",
        ),
        (
            "not_ledes.txt",
            "line 1 is not a LEDES file: it starts 'invoice,line,hours', not LEDES1998B[] or "
            "LEDES98BI V2[]",
        ),
    ],
)
def test_a_bad_file_is_one_message_naming_file_line_and_field(name: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        toolkit.read_ledes(HERE / name)
    assert str(caught.value) == f"{HERE / name} {message}"
    assert caught.value.failure_cases["row"].notna().all()


def test_the_command_line_says_the_message_without_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    entries = tmp_path / "entries.csv"
    pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}).to_csv(entries, index=False)
    assert main(["reconcile", str(entries), str(HERE / "bad_date.txt")]) == 2
    err = capsys.readouterr().err
    assert "line 4, field LINE_ITEM_DATE: '1999-01-15' is not a date written YYYYMMDD" in err
    assert "Traceback" not in err


def test_an_invoice_that_does_not_add_up_warns_naming_it() -> None:
    with pytest.warns(InputWarning) as caught:
        lines = toolkit.read_ledes(HERE / "bad_math.txt")
    assert len(lines) == 6 and len(caught) == 1
    said = str(caught[0].message)
    assert (
        "invoice 96542 does not add up: INVOICE_TOTAL 1,684.45 but its LINE_ITEM_TOTALs add "
        in said
    )
    assert (
        "up to 1,704.45; line 3 (item 1): LINE_ITEM_TOTAL 650.00 but units x unit cost + " in said
    )
    assert "96543" not in said


def ledes_text(lines: pd.DataFrame) -> str:
    """A LEDES 1998B file of ``lines`` (one row per line item, the fields as columns)."""
    rows = lines.reindex(columns=list(FIELDS[B])).astype("object")
    rows = rows.where(rows.notna(), "")
    body = ["|".join(str(v) for v in row) + "[]" for row in rows.to_numpy().tolist()]
    return "\r\n".join(["LEDES1998B[]", "|".join(FIELDS[B]) + "[]", *body]) + "\r\n"


def invoice_of(entries: pd.DataFrame, tk: dict[str, str], codes: pd.DataFrame) -> pd.DataFrame:
    """The fee lines a billing system writes for the entries: hours to 0.01, 250 an hour."""
    first = codes.drop_duplicates(["entryId", "code.type.semanticType"])
    task = first[first["code.type.semanticType"] == "task"].set_index("entryId")
    activity = first[first["code.type.semanticType"] == "activity"].set_index("entryId")
    hours = (entries["incrementDurationInSeconds"].astype(float) / 3600).round(2)
    lines = pd.DataFrame(
        {
            "INVOICE_DATE": "20261130",
            "INVOICE_NUMBER": "HL-2026-11",
            "CLIENT_ID": entries["initiative.client.externalId"],
            "LAW_FIRM_MATTER_ID": entries["initiative.externalId"],
            "LINE_ITEM_NUMBER": [str(n) for n in range(1, len(entries) + 1)],
            "EXP/FEE/INV_ADJ_TYPE": "F",
            "LINE_ITEM_NUMBER_OF_UNITS": hours.map("{:.2f}".format),
            "LINE_ITEM_ADJUSTMENT_AMOUNT": "0",
            "LINE_ITEM_TOTAL": (hours * 250).round(2).map("{:.2f}".format),
            "LINE_ITEM_DATE": entries["workDate"].dt.strftime("%Y%m%d"),
            "LINE_ITEM_TASK_CODE": entries["_id"].map(task["code.externalId"]),
            "LINE_ITEM_ACTIVITY_CODE": entries["_id"].map(activity["code.externalId"]),
            "TIMEKEEPER_ID": entries["userId"].map(tk),
            "LINE_ITEM_DESCRIPTION": entries["summary"].str.replace("|", "/"),
            "LAW_FIRM_ID": "12-3456789",
            "LINE_ITEM_UNIT_COST": "250",
        }
    ).reset_index(drop=True)
    return lines


def test_reconciles_repeated_keys_longest_with_longest() -> None:
    exported = pd.DataFrame(
        {
            "_id": ["e1", "e2", "e3"],
            "userId": ["u1"] * 3,
            "workDate": pd.to_datetime(["2026-11-02"] * 3),
            "incrementDurationInSeconds": [3600, 7200, 1800],
            "initiative.externalId": ["M-1"] * 3,
        }
    )
    lines = pd.DataFrame(
        {
            "INVOICE_NUMBER": "I-1",
            "LINE_ITEM_NUMBER": ["1", "2"],
            "EXP/FEE/INV_ADJ_TYPE": "F",
            "LINE_ITEM_NUMBER_OF_UNITS": ["1.5", "1.0"],  # 2 h written down to 1.5; 0.5 h unbilled
            "LINE_ITEM_DATE": "20261102",
            "LAW_FIRM_MATTER_ID": "M-1",
            "TIMEKEEPER_ID": "TK-1",
        }
    )
    text = ledes_text(lines.assign(INVOICE_TOTAL="0", LINE_ITEM_TOTAL="0", LINE_ITEM_UNIT_COST="0"))
    rec = toolkit.reconcile(exported, toolkit.read_ledes(text.encode()), timekeepers={"u1": "TK-1"})
    status = dict(zip(rec.rows["_id"], rec.rows["status"], strict=True))
    assert status == {"e1": "matched", "e2": "duration_differs", "e3": "missing_in_billing"}
    assert rec.rows["written"].tolist() == [pd.NA, "down", pd.NA]
    assert rec.rows["billingId"].tolist() == ["I-1/2", "I-1/1", pd.NA]
    assert "1 line(s) written down by 0.50 h" in rec.describe()


def test_a_ledes_invoice_needs_the_timekeepers() -> None:
    exported = pd.DataFrame(
        {
            "_id": ["e1"],
            "userId": ["u1"],
            "workDate": ["2026-11-02"],
            "incrementDurationInSeconds": [60],
            "initiative.externalId": ["M"],
        }
    )
    with pytest.raises(ConfigError, match=r"pass timekeepers=client.users\(entries\['userId'\]\)"):
        toolkit.reconcile(exported, read("public_1998b.txt"))
    with pytest.raises(ConfigError, match="reads the exported column 'initiative.callSign'"):
        toolkit.reconcile(exported, read("public_1998b.txt"), timekeepers={}, matters="callSign")


@pytest.fixture(scope="module")
def sample(client: Any) -> dict[str, Any]:
    """The sample firm's export (the entries on its matters), users and an invoice of them."""
    now = pd.Timestamp.now(tz="UTC").floor("s")
    export = client.export_entries(now - pd.Timedelta(days=35), now, progress=False)
    entries = export.entries[export.entries["initiative.externalId"].notna()]  # billable ones
    entries = entries.sort_values("_id").reset_index(drop=True)
    users = client.users(entries["userId"].unique())
    tk = dict(zip(users["_id"], users["timekeeperExternalId"], strict=True))
    return {
        "entries": entries,
        "codes": export.codes,
        "users": users,
        "lines": invoice_of(entries, tk, export.codes),
    }


def planted(sample: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The sample invoice with a line written down, one left out, a wrong task code on one,
    and one of an unknown timekeeper: the line (or entry) each is on."""
    lines = sample["lines"].copy()
    down, gone, coded, stranger = 3, 10, 20, 30
    hours = float(lines.loc[down, "LINE_ITEM_NUMBER_OF_UNITS"]) - 0.5
    lines.loc[down, ["LINE_ITEM_NUMBER_OF_UNITS", "LINE_ITEM_TOTAL"]] = [
        f"{hours:.2f}",
        f"{hours * 250:.2f}",
    ]
    task = lines.loc[coded, "LINE_ITEM_TASK_CODE"]
    lines.loc[coded, "LINE_ITEM_TASK_CODE"] = "L130" if str(task) == "L120" else "L120"
    extra = lines.loc[[stranger]].assign(TIMEKEEPER_ID="TK-999", LINE_ITEM_NUMBER="9001")
    ids = sample["entries"]["_id"]
    where = {"down": ids[down], "gone": ids[gone], "coded": ids[coded]}
    lines = pd.concat([lines.drop(index=gone), extra], ignore_index=True)
    total = lines["LINE_ITEM_TOTAL"].astype(float).sum()
    return lines.assign(INVOICE_TOTAL=f"{total:.2f}"), where


def test_every_planted_difference_of_the_sample_firm_is_found_and_nothing_else(
    sample: dict[str, Any], tmp_path: Path
) -> None:
    lines, where = planted(sample)
    path = tmp_path / "invoice.txt"
    path.write_bytes(ledes_text(lines).encode())
    entries = sample["entries"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        invoice = toolkit.read_ledes(path)
    rec = toolkit.reconcile(
        entries, invoice, timekeepers=sample["users"], codes=sample["codes"], tolerance_seconds=18
    )
    rows = rec.rows.set_index(rec.rows["_id"].fillna("(none)"))
    assert rec.summary.to_dict() == {
        "matched": len(entries) - 3,
        "missing_in_billing": 1,
        "only_in_billing": 1,
        "duration_differs": 1,
        "date_or_matter_differs": 0,
        "code_differs": 1,
    }
    assert rows.loc[where["gone"], "status"] == "missing_in_billing"
    assert rows.loc[where["down"], "status"] == "duration_differs"
    assert rows.loc[where["down"], "written"] == "down"
    assert abs(rows.loc[where["down"], "difference_seconds"] + 1800) <= 18  # 0.01 h rounding
    assert rows.loc[where["coded"], "status"] == "code_differs"
    assert "codes (task/activity) differ" in rows.loc[where["coded"], "detail"]
    stranger = rows.loc["(none)"]
    assert stranger["billingId"] == "HL-2026-11/9001"
    assert "timekeeper TK-999 is no exported entry's user" in stranger["detail"]
    assert "1 line(s) written down by 0.50 h" in rec.describe()
    acks = rec.to_acknowledge()
    assert set(acks.loc[acks["outcome"] == "failed", "entryId"]) == {
        where["gone"],
        where["down"],
        where["coded"],
    }


def test_the_command_line_reconciles_an_export_with_a_ledes_invoice(
    sample: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, where = planted(sample)
    invoice = tmp_path / "invoice.txt"
    invoice.write_bytes(ledes_text(lines).encode())
    folder = tmp_path / "export"
    toolkit.Export(sample["entries"], sample["codes"]).to_parquet(folder)
    users = tmp_path / "timekeepers.csv"
    sample["users"][["_id", "timekeeperExternalId"]].to_csv(users, index=False)
    out = tmp_path / "rec.csv"
    argv = ["reconcile", str(folder), str(invoice), "--timekeepers", str(users)]
    assert main([*argv, "--tolerance-seconds", "18", "--out", str(out)]) == 1
    said = capsys.readouterr().out
    assert "1 line(s) written down by 0.50 h" in said
    assert "LEDES fee lines paired by timekeeper, date and matter" in said
    rows = pd.read_csv(out)
    assert rows["status"].value_counts().drop("matched").to_dict() == {
        "missing_in_billing": 1,
        "only_in_billing": 1,
        "duration_differs": 1,
        "code_differs": 1,
    }
    assert np.isin(list(where.values()), rows["_id"]).all()
