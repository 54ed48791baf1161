"""The workbook the analyst fixes: ``toolkit validate DIR --out failures.xlsx`` marks exactly the
failing cells; the fixed workbook validates with no manual reshaping."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook

from toolkit._cli import main
from toolkit._ingress.models import TABLES
from toolkit._ingress.readers import read_table
from toolkit._ingress.validation import folder_sources, load_folder, validate
from toolkit._ingress.writer import ERROR_FILL, WARNING_FILL
from toolkit.errors import ConfigError, InputWarning

BROKEN = Path(__file__).resolve().parents[2] / "sample_data" / "broken"

#: (sheet, cell) -> severity of what is planted in sample_data/broken (see its README): the row's
#: sheet line is the data row + 2; the header row holds the column-level failures.
BROKEN_CELLS: dict[tuple[str, str], str] = {
    ("clients", "A4"): "error",  # row 2: C-1003, twice
    ("clients", "A22"): "error",  # row 20: the second C-1003
    ("clients", "B6"): "warning",  # row 4: empty name
    ("initiatives", "A3"): "error",  # row 1: Billable
    ("initiatives", "G7"): "warning",  # row 5: 900.5
    ("initiatives", "G15"): "error",  # row 13: 0
    ("initiatives", "H22"): "error",  # row 20: closed
    ("initiatives", "F28"): "error",  # row 26: C-9999
    ("code_types", "E1"): "error",  # header user_default: missing and unexpected
    ("code_types", "C2"): "error",  # row 0: Task
    ("code_types", "D3"): "error",  # row 1: yes
    ("codes", "A34"): "warning",  # row 32: 'E106 '
    ("codes", "D37"): "error",  # row 35: fee-code
    ("code_ranges", "B5"): "error",  # row 3: L999
    ("code_ranges", "B14"): "warning",  # row 12: a pair listed twice ...
    ("code_ranges", "B43"): "warning",  # row 41: ... here again
    ("code_ranges", "A22"): "error",  # row 20: M-1016-02
}

#: the analyst's corrections of every error: (sheet, cell) -> the new value
FIXES: dict[tuple[str, str], Any] = {
    ("clients", "A22"): "C-1021",
    ("initiatives", "A3"): "billable",
    ("initiatives", "G15"): 360,  # typed as a number in Excel
    ("initiatives", "H22"): "inactive",
    ("initiatives", "F28"): "C-1009",
    ("code_types", "E1"): "userDefaultable",
    ("code_types", "C2"): "task",
    ("code_types", "D3"): "true",
    ("codes", "D37"): "expense-code",
    ("code_ranges", "B5"): "L130",
    ("code_ranges", "A22"): "M-1016-002",
}


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    out = tmp_path / "failures.xlsx"
    assert main(["validate", str(BROKEN), "--out", str(out)]) == 1
    return out


def marked(path: Path) -> dict[tuple[str, str], str]:
    """(sheet, cell) -> severity, read from the fill of every filled cell of the table sheets."""
    colours = {ERROR_FILL: "error", WARNING_FILL: "warning"}
    book = load_workbook(path)
    out = {}
    for name in book.sheetnames:
        if name in ("errors", "summary"):
            continue
        for row in book[name].iter_rows():
            for cell in row:
                if cell.fill.fill_type == "solid":
                    out[(name, cell.coordinate)] = colours[cell.fill.start_color.rgb[-6:]]
    return out


def test_the_workbook_marks_exactly_the_failing_cells(workbook: Path) -> None:
    assert marked(workbook) == BROKEN_CELLS
    book = load_workbook(workbook)
    commented = {
        (name, cell.coordinate)
        for name in book.sheetnames
        for row in book[name].iter_rows()
        for cell in row
        if cell.comment is not None
    }
    assert commented == set(BROKEN_CELLS)


def test_each_comment_holds_the_message(workbook: Path) -> None:
    book = load_workbook(workbook)
    assert "Billable" in book["initiatives"]["A3"].comment.text
    assert "did you mean 'billable'" in book["initiatives"]["A3"].comment.text
    header = book["code_types"]["E1"].comment.text
    assert "missing column 'userDefaultable'" in header
    assert "unexpected column 'user_default'" in header
    assert book["clients"]["B6"].comment.text.startswith("warning: ")


def test_the_table_sheets_are_the_rows_as_read(workbook: Path) -> None:
    book = load_workbook(workbook)
    assert book.sheetnames == ["errors", "summary", *TABLES]
    frames = {t: source.read() for t, source in folder_sources(BROKEN).items()}  # raw text
    for table, frame in frames.items():
        sheet = book[table]
        rows = list(sheet.iter_rows(values_only=True))
        assert list(rows[0]) == list(frame.columns)
        assert len(rows) == len(frame) + 1
        expected = [[v if v != "" else None for v in r] for r in frame.to_numpy().tolist()]
        assert [list(r) for r in rows[1:]] == expected, table
    # every cell was text in the CSV and is text (and formatted as text) in the sheet
    cell = book["clients"]["C2"]
    assert (cell.value, cell.data_type, cell.number_format) == ("1001", "s", "@")


def test_the_errors_and_summary_sheets(workbook: Path) -> None:
    report = validate(**load_folder(BROKEN))
    errors = pd.read_excel(workbook, sheet_name="errors")
    assert list(errors.columns) == [
        "table", "row", "line", "externalId", "column", "check", "severity", "value", "message",
    ]  # fmt: skip
    assert len(errors) == len(report.failures) == 18
    assert errors.loc[errors["check"] == "reference", "line"].notna().all()
    summary = pd.read_excel(workbook, sheet_name="summary")
    assert list(summary.columns) == ["table", "check", "severity", "failures"]
    assert summary["failures"].sum() == 18
    row = summary[(summary["table"] == "clients") & (summary["check"] == "unique")]
    assert row[["severity", "failures"]].values.tolist() == [["error", 2]]
    # the first sheet is still the failure frame, as --out .xlsx wrote before
    assert read_table(workbook)["message"].tolist() == errors["message"].tolist()


def test_fixing_the_marked_cells_in_the_workbook_validates_with_no_error(
    workbook: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = load_workbook(workbook)
    for (sheet, cell), value in FIXES.items():
        assert BROKEN_CELLS[(sheet, cell)] == "error"
        book[sheet][cell] = value
    # every error cell is fixed, but the first C-1003: renaming the second settles both
    assert {k for k, v in BROKEN_CELLS.items() if v == "error"} - set(FIXES) == {("clients", "A4")}
    book.save(workbook)

    report = validate(**load_folder(workbook))
    assert report.ok, report.errors.to_string()
    assert set(report.warnings["check"]) == {"blank", "fractional", "whitespace", "repeated"}
    assert report.frames["initiatives"].loc[13, "unitIncrements"] == 360
    assert "C-1021" in set(report.frames["clients"]["externalId"])
    capsys.readouterr()
    assert main(["validate", str(workbook)]) == 0
    assert "ValidationReport: ok" in capsys.readouterr().out


def test_ids_that_look_like_numbers_stay_text_through_the_workbook(tmp_path: Path) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    (folder / "clients.csv").write_text(
        "externalId,name,callSign,description\n007,=SUM(A1:A2),0042,\n1001,Acme,1.50,TRUE\n",
        encoding="utf-8",
    )
    report = validate(**load_folder(folder))
    out = report.to_excel(tmp_path / "failures.xlsx")
    back = folder_sources(out)["clients"].read()
    assert back.to_dict("records") == [
        {"externalId": "007", "name": "=SUM(A1:A2)", "callSign": "0042", "description": ""},
        {"externalId": "1001", "name": "Acme", "callSign": "1.50", "description": "TRUE"},
    ]
    again = validate(**load_folder(out))
    pd.testing.assert_frame_equal(again.frames["clients"], report.frames["clients"])
    assert marked(out) == {("clients", "D2"): "warning"}  # the blank description


def test_headers_as_written_are_kept_and_their_cells_marked(tmp_path: Path) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    (folder / "clients.csv").write_text(
        "External ID;Client Name;Client Code;Description\nC-1;;1;x\n", encoding="utf-8"
    )
    report = validate(**load_folder(folder))
    out = report.to_excel(tmp_path / "failures.xlsx")
    sheet = load_workbook(out)["clients"]
    assert [c.value for c in sheet[1]] == [
        "External ID",
        "Client Name",
        "Client Code",
        "Description",
    ]
    assert marked(out) == {("clients", "B2"): "warning"}
    assert "name is empty" in sheet["B2"].comment.text


def test_a_missing_column_marks_a_header_cell(tmp_path: Path) -> None:
    clients = pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"], "callSign": ["1"]})
    out = validate(clients=clients).to_excel(tmp_path / "failures.xlsx")
    sheet = load_workbook(out)["clients"]
    assert marked(out) == {("clients", "A1"): "error"}
    assert "missing column 'description'" in sheet["A1"].comment.text


def test_a_workbook_is_a_folder_of_table_sheets(tmp_path: Path) -> None:
    book = tmp_path / "firm.xlsx"
    with pd.ExcelWriter(book) as writer:
        pd.DataFrame({"Matter ID": ["M-1"], "Code": ["L1"]}).to_excel(
            writer, sheet_name="Ranges", index=False
        )
        pd.DataFrame({"x": [1]}).to_excel(writer, sheet_name="notes", index=False)
        pd.DataFrame({"x": [1]}).to_excel(writer, sheet_name="summary", index=False)
    with pytest.warns(InputWarning, match="notes"):
        frames = load_folder(book)
    assert list(frames) == ["code_ranges"]
    report = validate(**frames, known={"initiatives": ["M-1"], "codes": ["L1"]})
    assert report.ok and report.frames["code_ranges"]["initiativeExternalId"].tolist() == ["M-1"]
    assert frames["code_ranges"].attrs["sheet"] == "Ranges"


def test_a_workbook_without_table_sheets_is_a_config_error(tmp_path: Path) -> None:
    book = tmp_path / "other.xlsx"
    pd.DataFrame({"x": [1]}).to_excel(book, sheet_name="errors", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConfigError, match="no sheet names an import table"):
            load_folder(book)


def test_to_excel_refuses_another_format(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.xlsx"):
        validate().to_excel(tmp_path / "failures.csv")


def test_validate_out_csv_still_writes_the_failure_frame(tmp_path: Path) -> None:
    out = tmp_path / "failures.csv"
    assert main(["validate", str(BROKEN), "--out", str(out)]) == 1
    assert len(read_table(out)) == 18
