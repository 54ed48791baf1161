"""Excel sheets and Parquet files read a chunk at a time (issue 28, part 3): each chunk as
pandas reads the whole file, a workbook's sheets never held whole either."""

from __future__ import annotations

import datetime as dt
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from openpyxl import Workbook, load_workbook

from tests.conftest import line_numbers
from toolkit._ingress import chunking, readers, sheet_reader
from toolkit._ingress.readers import TableFile, read_chunks, read_table
from toolkit._ingress.validation import folder_sources, load_folder, validate
from toolkit.errors import ConfigError

#: What a data cell may hold: nothing, blank or padded text, numbers (2.0 is read as 2), booleans,
#: dates and times, and an error (openpyxl writes "#DIV/0!" as an error cell).
CELLS: tuple[Any, ...] = (
    None, None, "", "  ", "text", " padded ", "007", "#N/A text", 0, 7, -3, 2.5, 2.0, 1e20,
    True, False, dt.datetime(2024, 2, 29, 13, 5), dt.date(2021, 1, 1), dt.time(9, 30),
    "#DIV/0!", "=1+1",  # a formula, saved with its value (2) as Excel saves it
)  # fmt: skip
#: What a header cell may hold: names repeated (as written or once stripped), empty, numbers.
HEADERS: tuple[Any, ...] = (
    "externalId", "name", "name", " name ", "name.1", None, "  ", 1, "1", 2.0, "Unnamed: 1",
    dt.datetime(2020, 1, 2), "#REF!",
)  # fmt: skip


def _pandas_sheet(path: Path, sheet: str | int = 0) -> pd.DataFrame:
    """The oracle: the sheet as the reader read it before it streamed (pandas.read_excel whole)."""
    df = pd.read_excel(
        path, sheet_name=sheet, dtype=object, keep_default_na=False, engine="openpyxl"
    )
    df.columns = [str(c).strip() for c in df.columns]
    blank = df.map(lambda v: v is None or (isinstance(v, str) and not v.strip())).all(axis=1)
    return df.loc[~blank.to_numpy()].reset_index(drop=True)


def _blank(row: list[Any]) -> bool:
    return all(v is None or (isinstance(v, str) and not v.strip()) for v in row)


def _random_sheet(rng: random.Random) -> tuple[list[list[Any]], list[int]]:
    """A header that is not blank, then data rows no longer than it (shorter ones, blank ones in
    the middle and at the end); returns the rows and the sheet lines of the rows not blank."""
    width = rng.randint(1, 5)
    while True:
        header = [rng.choice(HEADERS) for _ in range(width)]
        if not _blank(header):
            break
    named = max(i for i, v in enumerate(header) if not _blank([v])) + 1
    rows = [header]
    lines = []
    for _ in range(rng.randint(0, 12)):
        if rng.random() < 0.2:
            rows.append([None] * rng.randint(0, named) if rng.random() < 0.5 else ["  "])
        else:
            rows.append([rng.choice(CELLS) for _ in range(rng.randint(1, named))])
        if not _blank(rows[-1]):
            lines.append(len(rows))
    rows += [[None, None]] * rng.randint(0, 2)  # blank rows at the end
    return rows, lines


def _save(path: Path, sheets: dict[str, list[list[Any]]]) -> Path:
    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for r, row in enumerate(rows, start=1):
            for c, value in enumerate(row, start=1):
                if value is not None:
                    sheet.cell(r, c, value)
    book.save(path)
    with zipfile.ZipFile(path) as saved:  # each formula's value, which openpyxl does not save
        parts = {item: saved.read(item) for item in saved.namelist()}
    with zipfile.ZipFile(path, "w") as out:
        for item, data in parts.items():
            out.writestr(item, data.replace(b"<f>1+1</f><v />", b"<f>1+1</f><v>2</v>"))
    return path


def _cell_types(frame: pd.DataFrame) -> list[list[str]]:
    return [[type(v).__name__ for v in row] for row in frame.to_numpy().tolist()]


def test_a_sheet_read_a_chunk_at_a_time_is_the_sheet_pandas_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(28)
    for case in range(100):
        rows, lines = _random_sheet(rng)
        path = _save(tmp_path / f"case{case}.xlsx", {"Clients": rows})
        chunk = rng.randint(1, 4)
        monkeypatch.setattr(chunking, "_CHUNK", chunk)
        chunks = list(read_chunks(path))
        expected = _pandas_sheet(path)
        got = pd.concat(chunks) if len(chunks) > 1 else chunks[0]
        where = f"case {case}: rows {rows}, chunks of {chunk}"
        assert all(len(c) <= chunk for c in chunks), where
        assert [c.index[0] for c in chunks if len(c)] == list(range(0, len(got), chunk)), where
        pd.testing.assert_frame_equal(got, expected, obj=where)
        assert _cell_types(got) == _cell_types(expected), where
        assert line_numbers(chunks[-1], range(len(got))) == lines, where
        (joined,) = (src.read() for src in folder_sources(path).values())
        pd.testing.assert_frame_equal(joined, expected, obj=where)


def test_each_chunk_has_the_cells_as_pandas_types_them_and_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        ["externalId", None, "name", "name", " Name "],
        [2.0, 2.5, True, dt.datetime(2024, 1, 2), "#DIV/0!"],
        [None, None],
        ["  ", "x"],
    ]
    monkeypatch.setattr(chunking, "_CHUNK", 1)
    first, second = read_chunks(_save(tmp_path / "c.xlsx", {"Sheet": rows}))
    assert first.columns.tolist() == ["externalId", "Unnamed: 1", "name", "name.1", "Name"]
    assert first.iloc[0, :4].tolist() == [2, 2.5, True, dt.datetime(2024, 1, 2)]
    assert type(first.iloc[0, 0]) is int and np.isnan(first.iloc[0, 4])
    assert second.index.tolist() == [1]
    assert second.iloc[0].tolist() == ["  ", "x", "", "", ""]
    assert line_numbers(second, [0, 1]) == [2, 4]


def test_a_value_right_of_the_header_names_its_line_and_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [["externalId", "name", None], ["C-1", "Acme", " "], [], ["C-2", "Bolt", None, "x"]]
    path = _save(tmp_path / "c.xlsx", {"Clients": rows})
    monkeypatch.setattr(chunking, "_CHUNK", 1)
    first = next(read_chunks(path))  # a blank cell right of the header is dropped, as in CSV
    assert first.to_dict("records") == [{"externalId": "C-1", "name": "Acme"}]
    with pytest.raises(ConfigError, match=r"c\.xlsx, line 4: a value in column D, right of"):
        read_table(path)
    with pytest.raises(ConfigError, match=r"c\.xlsx, sheet Clients, line 4: a value in col"):
        load_folder(path)


def test_rows_above_the_header_are_passed_over_and_counted_in_lines(tmp_path: Path) -> None:
    rows = [[], [None, "  "], ["externalId", "name"], ["C-1", "Acme"], [], ["C-2", "Bolt"]]
    got = read_table(_save(tmp_path / "c.xlsx", {"Clients": rows}))
    assert got.to_dict("records") == [
        {"externalId": "C-1", "name": "Acme"},
        {"externalId": "C-2", "name": "Bolt"},
    ]
    assert line_numbers(got, [0, 1]) == [4, 6]


def test_an_empty_sheet_and_a_header_alone(tmp_path: Path) -> None:
    path = _save(tmp_path / "c.xlsx", {"Empty": [], "Header": [["externalId", "name"]]})
    empty = read_table(path)
    assert empty.shape == (0, 0)
    header = read_table(path, sheet="Header")
    pd.testing.assert_frame_equal(header, _pandas_sheet(path, "Header"))
    assert header.attrs["sheet"] == "Header"


def test_without_openpyxl_a_workbook_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _save(tmp_path / "c.xlsx", {"Clients": [["externalId"], ["C-1"]]})
    monkeypatch.setattr(sheet_reader, "_EXCEL", False)
    with pytest.raises(ConfigError, match=r"c\.xlsx: reading \.xlsx needs openpyxl"):
        read_table(path)
    with pytest.raises(ConfigError, match="needs openpyxl"):
        folder_sources(path)


def _spy_on_sheets(
    monkeypatch: pytest.MonkeyPatch, chunk: int, parsed: list[str | None] | None = None
) -> list[int]:
    """Read sheets ``chunk`` rows at a time; return the rows of each frame the reader makes
    (and add each sheet's name to ``parsed`` when the reader starts on it)."""
    monkeypatch.setattr(chunking, "_CHUNK", chunk)
    made: list[int] = []
    real = sheet_reader.read_excel_table

    def spy(path: Path, sheet: str | None = None) -> Iterator[pd.DataFrame]:
        if parsed is not None:
            parsed.append(sheet)
        for frame in real(path, sheet):
            made.append(len(frame))
            yield frame

    monkeypatch.setattr(readers, "read_excel_table", spy)
    return made


def _firm_book(path: Path) -> Path:
    clients = [
        ["externalId", "name", "callSign", "description"],
        ["C-1", "Acme", 1, "a"],
        ["C-2", "Bolt", 2, "b"],
        [None, None],  # a blank row: the rows after it a line further down
        ["C-3", "Crane", 3, "c"],
        ["C-1", "Dune", 4, "d"],
    ]
    initiatives = [
        ["billingType", "externalId", "name", "description", "callSign", "clientExternalId",
         "unitIncrements", "status"],
        ["billable", "M-1", "One", "x", "1-1", "C-1", 360, "active"],
        ["billable", "M-2", "Two", "x", "1-2", "C-2", 360, "active"],
        ["billable", "M-3", "Three", "x", "3-1", "C-3", 360, "active"],
        ["billable", "M-4", "Four", "x", "9-1", "C-9", 360, "active"],
    ]  # fmt: skip
    return _save(path, {"Clients": clients, "notes": [["x"]], "Matters": initiatives})


def test_a_workbook_as_the_folder_is_read_a_sheet_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = _firm_book(tmp_path / "firm.xlsx")
    made = _spy_on_sheets(monkeypatch, 2)
    with pytest.warns(UserWarning, match="notes"):
        sources = folder_sources(book)
    assert sources == {
        "clients": TableFile(book, sheet="Clients"),
        "initiatives": TableFile(book, sheet="Matters"),
    }
    assert not made  # nothing read yet
    report = validate(**sources)
    assert made and max(made) <= 2
    got = report.failures[["table", "row", "line", "column", "check"]].values.tolist()
    assert got == [
        ["clients", 0, 2, "externalId", "unique"],
        ["clients", 3, 6, "externalId", "unique"],
        ["initiatives", 3, 5, "clientExternalId", "reference"],
    ]
    assert report.frames["initiatives"]["externalId"].tolist() == ["M-1", "M-2", "M-3"]
    assert report.inputs["initiatives"].attrs["sheet"] == "Matters"


def test_a_sheet_changed_after_its_check_gives_the_rows_checked_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = _firm_book(tmp_path / "firm.xlsx")
    parsed: list[str | None] = []
    _spy_on_sheets(monkeypatch, 2, parsed)
    with pytest.warns(UserWarning, match="notes"):
        sources = folder_sources(book)
    report = validate(**sources)  # checked: rows 0 and 3 share C-1
    wb = load_workbook(book)
    wb["Clients"]["B5"] = "Crane Ltd"  # row 2, in the second chunk
    wb["Clients"].delete_rows(6)  # row 3: the file cut short
    wb.save(book)
    assert report.frames["clients"]["name"].tolist() == ["Bolt", "Crane"]
    assert report.inputs["clients"]["name"].tolist() == ["Acme", "Bolt", "Crane", "Dune"]
    assert sorted(parsed, key=str) == ["Clients", "Matters"]  # each sheet parsed once


def test_a_parquet_file_read_a_chunk_at_a_time_is_what_pandas_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 11
    frame = pd.DataFrame(
        {
            "externalId": [f"C-{i}" for i in range(n)],
            "name": [None if i % 4 == 0 else f"n{i}" for i in range(n)],
            "count": range(n),
            "rate": [np.nan if i % 3 == 0 else i / 2 for i in range(n)],
            "flag": [i % 2 == 0 for i in range(n)],
            "maybe": pd.array([None if i % 5 == 0 else i for i in range(n)], dtype="Int64"),
            "at": pd.date_range("2024-01-01", periods=n, freq="h", tz="Europe/Berlin"),
            "day": [dt.date(2024, 1, 1 + i) for i in range(n)],
        }
    )
    path = tmp_path / "clients.parquet"
    pq.write_table(pa.Table.from_pandas(frame), path, row_group_size=4)
    monkeypatch.setattr(chunking, "_CHUNK", 3)
    chunks = list(read_chunks(path))
    assert [len(c) for c in chunks] == [3, 3, 3, 2]  # across its row groups of 4
    assert [c.index[0] for c in chunks] == [0, 3, 6, 9]
    expected = pd.read_parquet(path)
    pd.testing.assert_frame_equal(pd.concat(chunks), expected)
    pd.testing.assert_frame_equal(read_table(path), expected)
    assert line_numbers(chunks[0], [0]) == [None]
    empty = tmp_path / "codes.parquet"
    frame.iloc[:0].to_parquet(empty)
    (chunk,) = read_chunks(empty)  # no rows: one chunk, the columns typed
    pd.testing.assert_frame_equal(chunk, pd.read_parquet(empty))


def test_a_partitioned_parquet_folder_is_read_as_pandas_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame(
        {"externalId": [f"C-{i}" for i in range(9)], "region": ["eu", "us", "ap"] * 3}
    )
    folder = tmp_path / "clients.parquet"
    frame.to_parquet(folder, partition_cols=["region"])
    monkeypatch.setattr(chunking, "_CHUNK", 2)
    chunks = list(read_chunks(folder))
    assert max(len(c) for c in chunks) == 2 and len(chunks) == 6
    expected = pd.read_parquet(folder)
    pd.testing.assert_frame_equal(pd.concat(chunks), expected)
