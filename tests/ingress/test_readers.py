"""Table files as people have them: delimiters, encodings, Excel, Parquet, folder names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import line_numbers
from toolkit._ingress.chunking import with_lines
from toolkit._ingress.names import table_for
from toolkit._ingress.readers import read_table
from toolkit._ingress.validation import load_folder, validate
from toolkit._ingress.writer import write_table
from toolkit.errors import ConfigError, InputWarning

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
IMPORT_FILES = ("clients", "initiatives", "code_types", "codes", "code_ranges")


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_the_delimiter_is_sniffed(tmp_path, delimiter) -> None:
    d = delimiter
    f = _write(tmp_path / "c.csv", f'externalId{d}name\nC-1{d}"Acme{d} Inc."\nC-2{d}Beta\n')
    df = read_table(f)
    assert df.columns.tolist() == ["externalId", "name"]
    assert df["name"].tolist() == [f"Acme{d} Inc.", "Beta"]


def test_a_semicolon_csv_with_commas_in_values_keeps_its_columns(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", "a;b;c\n1,5;x, y;z\n2,0;u;v\n")
    assert read_table(f).to_dict("records")[0] == {"a": "1,5", "b": "x, y", "c": "z"}


def test_a_bom_is_not_part_of_the_first_column(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", "\ufeffexternalId,name\nC-1,Zoë\n")
    assert read_table(f).columns.tolist() == ["externalId", "name"]
    assert read_table(f).loc[0, "name"] == "Zoë"


def test_cp1252_is_read_with_a_warning(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", "externalId;name\nC-1;Müller & Søn\n", encoding="cp1252")
    with pytest.warns(InputWarning, match="Windows-1252"):
        df = read_table(f)
    assert df.loc[0, "name"] == "Müller & Søn"


def test_values_stay_text_and_empty_stays_empty(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", "a,b\n001,NA\n,\n")
    df = read_table(f)
    assert df.to_dict("records") == [{"a": "001", "b": "NA"}]  # a line of only commas is blank


def test_a_line_with_too_many_fields_names_file_and_line(tmp_path) -> None:
    f = _write(tmp_path / "clients.csv", "a,b\n1,2\n3,4,5\n")
    with pytest.raises(ConfigError, match=r"clients\.csv, line 3: 3 fields where the header has 2"):
        read_table(f)


def test_a_stray_quote_names_file_and_line(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", 'a,b\n1,2\n3,"x"y\n')
    with pytest.raises(ConfigError, match=r"c\.csv, line 3: cannot read it as comma-separated"):
        read_table(f)
    f = _write(tmp_path / "c.csv", 'a,b\n1,2\n3,"x\n4,5\n')
    with pytest.raises(ConfigError, match=r"c\.csv, line 3 \(to line 4\)"):
        read_table(f)


def test_binary_and_empty_files_are_one_clear_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="binary"):
        read_table(_write(tmp_path / "b.csv", "a,b\n\x00\x01,2\n"))
    (tmp_path / "e.csv").write_bytes(b"")
    with pytest.raises(ConfigError, match="empty file"):
        read_table(tmp_path / "e.csv")
    (tmp_path / "x.xlsx").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match=r"x\.xlsx: not a readable Excel"):
        read_table(tmp_path / "x.xlsx")
    (tmp_path / "p.parquet").write_bytes(b"not parquet")
    with pytest.raises(ConfigError, match=r"p\.parquet: not a readable Parquet"):
        read_table(tmp_path / "p.parquet")
    with pytest.raises(ConfigError, match="no such file"):
        read_table(tmp_path / "nope.csv")


def test_line_numbers_count_blank_lines_and_quoted_line_breaks(tmp_path) -> None:
    f = _write(tmp_path / "c.csv", 'a,b\n1,"two\nlines"\n\n3,x\n4,y\n')
    df = read_table(f)
    assert df["a"].tolist() == ["1", "3", "4"]
    assert line_numbers(df, [0, 1, 2]) == [2, 5, 6]


def test_excel_and_parquet_are_read(tmp_path) -> None:
    frame = pd.DataFrame({"externalId": ["C-1", "C-2"], "name": ["A", "B"]})
    frame.to_excel(tmp_path / "c.xlsx", index=False)
    frame.to_parquet(tmp_path / "c.parquet")
    from_excel = read_table(tmp_path / "c.xlsx").to_dict("records")
    assert from_excel == read_table(tmp_path / "c.parquet").to_dict("records")
    assert line_numbers(read_table(tmp_path / "c.xlsx"), [1]) == [3]
    assert line_numbers(read_table(tmp_path / "c.parquet"), [1]) == [None]


@pytest.mark.parametrize(
    ("name", "table"),
    [
        ("Clients.csv", "clients"),
        ("matters.csv", "initiatives"),
        ("Projects.xlsx", "initiatives"),
        ("code-types.csv", "code_types"),
        ("CodeTypes.csv", "code_types"),
        ("code_types.parquet", "code_types"),
        ("ranges.csv", "code_ranges"),
        ("Code Ranges.csv", "code_ranges"),
        ("CODES.TSV", "codes"),
        ("clients.json", None),
        ("notes.csv", None),
    ],
)
def test_folder_names_match_case_insensitively_and_through_aliases(name, table) -> None:
    assert table_for(name) == table


def test_a_folder_as_people_name_it_validates(tmp_path) -> None:
    names = {
        "clients": "Clients.csv",
        "initiatives": "matters.csv",
        "code_types": "Code-Types.csv",
        "codes": "codes.csv",
        "code_ranges": "ranges.csv",
    }
    for table, name in names.items():
        shutil.copy(SAMPLE / f"{table}.csv", tmp_path / name)
    _write(tmp_path / "notes.csv", "a\n1\n")
    with pytest.warns(InputWarning, match=r"notes\.csv"):
        frames = load_folder(tmp_path)
    assert list(frames) == list(IMPORT_FILES)
    assert validate(**frames).ok


def test_the_sample_folder_loads_without_a_warning(recwarn) -> None:
    load_folder(SAMPLE)
    assert not [w for w in recwarn if issubclass(w.category, InputWarning)]


def test_a_folder_where_nothing_matches_is_an_error(tmp_path) -> None:
    _write(tmp_path / "notes.csv", "a\n1\n")
    with pytest.raises(ConfigError, match="no import table found"), pytest.warns(InputWarning):
        load_folder(tmp_path)


def test_two_files_for_one_table_are_an_error(tmp_path) -> None:
    shutil.copy(SAMPLE / "clients.csv", tmp_path / "clients.csv")
    shutil.copy(SAMPLE / "clients.csv", tmp_path / "Client.csv")
    with pytest.raises(ConfigError, match="more than one file"):
        load_folder(tmp_path)


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".parquet"])
def test_write_table_writes_each_format_with_lines(tmp_path, suffix) -> None:
    src = read_table(_write(tmp_path / "in.csv", "a\nx\n\ny\n"))
    frame = with_lines(pd.DataFrame({"row": [0, 1], "value": ["x", 3]}), src)
    out = write_table(frame, tmp_path / f"out{suffix}")
    back = read_table(out)
    assert [int(v) for v in back["line"]] == [2, 4]
    assert [str(v) for v in back["value"]] == ["x", "3"]


def test_an_unknown_output_format_is_refused(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"\.csv, \.xlsx or \.parquet"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "out.json")


# -- one bad byte in a UTF-8 CSV ---------------------------------------------------------------


def test_one_bad_byte_keeps_the_file_utf8_and_names_the_line(tmp_path: Path) -> None:
    from toolkit._ingress.readers import read_table
    from toolkit._ingress.validation import load_folder
    from toolkit.errors import InputWarning

    f = tmp_path / "clients.csv"
    f.write_bytes(
        "externalId,name\nC-1,Müller & Søn GmbH\n".encode()
        + b"C-2,Caf\xe9 Noir\n"
        + "C-3,Zoë\n".encode()
    )
    with pytest.warns(InputWarning, match=r"line 3"):
        df = read_table(f)
    assert list(df["name"]) == ["Müller & Søn GmbH", "Caf\ufffd Noir", "Zoë"]
    with pytest.warns(InputWarning, match=r"line 3"):
        frames = load_folder(tmp_path)
    assert frames["clients"]["name"].iloc[0] == "Müller & Søn GmbH"
    # encoding= overrides the guess
    assert read_table(f, encoding="cp1252")["name"].iloc[0] == "MÃ¼ller & SÃ¸n GmbH"
    assert load_folder(tmp_path, encoding="latin-1")["clients"]["name"].iloc[1] == "Café Noir"


def test_a_windows_1252_file_still_falls_back_with_a_warning(tmp_path: Path) -> None:
    from toolkit._ingress.readers import read_table
    from toolkit.errors import InputWarning

    f = tmp_path / "clients.csv"
    f.write_bytes("externalId,name\nC-1,Müller & Søn GmbH\n".encode("cp1252"))
    with pytest.warns(InputWarning, match="Windows-1252"):
        df = read_table(f)
    assert df["name"].iloc[0] == "Müller & Søn GmbH"


def test_load_folder_gives_the_same_dtypes_from_csv_excel_and_parquet(tmp_path) -> None:
    """Issue 37: text as ``str``, whole numbers ``Int64``, booleans ``boolean``, whatever the file
    type; Excel's and Parquet's typed cells (an ``int`` callSign) are the CSV's text."""
    csv = load_folder(SAMPLE)
    for kind in ("xlsx", "parquet"):
        folder = tmp_path / kind
        folder.mkdir()
        for table in csv:
            # numbers and booleans typed, text as written ("N/A" too), as a tool writes them
            typed = pd.read_csv(SAMPLE / f"{table}.csv", keep_default_na=False)
            path = folder / f"{table}.{kind}"
            typed.to_excel(path, index=False) if kind == "xlsx" else typed.to_parquet(path)
        other = load_folder(folder)
        for table, frame in csv.items():
            assert other[table].dtypes.to_dict() == frame.dtypes.to_dict(), (kind, table)
            pd.testing.assert_frame_equal(other[table], frame, check_index_type=False, obj=table)
    dtypes = csv["initiatives"].dtypes.astype(str)
    assert dtypes["callSign"] == dtypes["externalId"] == "string"
    assert dtypes["unitIncrements"] == "Int64"
    assert csv["code_types"].dtypes.astype(str)["customerDefaultable"] == "boolean"
