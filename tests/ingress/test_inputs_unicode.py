"""Text the service cannot take, cells too long to be meant, and ids that only look different
(issue 20, item 18): each is a failure row naming the row and the column."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from tests.conftest import check, check_frame
from toolkit import Client, ValidationError, load_folder
from toolkit._ingress.chunking import with_lines
from toolkit._ingress.readers import read_table
from toolkit._ingress.text import MAX_CELL
from toolkit._ingress.validation import validate
from toolkit.errors import InputWarning


def _clients(ids: list[str], names: list[str] | None = None) -> pd.DataFrame:
    n = len(ids)
    return pd.DataFrame(
        {
            "externalId": ids,
            "name": names or [f"Client {i}" for i in range(n)],
            "callSign": [f"{i}" for i in range(n)],
            "description": ["d"] * n,
        },
        dtype=object,
    )


# -- lone surrogates ----------------------------------------------------------------------------


def test_lone_surrogate_is_an_error_naming_row_and_column() -> None:
    report = validate(clients=_clients(["C-1", "C-2"], ["Acme", "Broken \ud83d name"]))
    errors = report.errors
    assert errors[["row", "column", "check"]].values.tolist() == [[1, "name", "encoding"]]
    assert "\\ud83d" in errors["message"].iloc[0]
    assert errors["value"].iloc[0] == "Broken \\ud83d name"  # escaped: printable, writable
    assert report.frames["clients"]["externalId"].tolist() == ["C-1"]


def test_lone_surrogate_in_an_id_is_reported_once_not_as_missing() -> None:
    failures = check_frame("clients", _clients(["C-1\udc80", "C-2"])).failures
    assert failures[["row", "column", "check", "severity"]].values.tolist() == [
        [0, "externalId", "encoding", "error"]
    ]


def test_check_raises_validation_error_not_unicode_error() -> None:
    with pytest.raises(ValidationError) as info:
        check("clients", _clients(["C-1"], ["\ud800"]))
    assert info.value.failure_cases["check"].tolist() == ["encoding"]
    str(info.value).encode("utf-8")  # the message itself can be printed


def test_import_with_lone_surrogate_sends_nothing(fresh_client: Client, sandbox) -> None:
    with pytest.raises(ValidationError) as info:
        fresh_client.import_clients(_clients(["C-1", "C-2"], ["Acme", "x\ud800"]), progress=False)
    cases = info.value.failure_cases
    assert cases[["row", "column", "check"]].values.tolist() == [[1, "name", "encoding"]]
    assert sandbox.admin.records("clients", customer_id=fresh_client.customer_id) == []


def test_workbook_of_a_report_with_a_lone_surrogate_is_written(tmp_path: Path) -> None:
    report = validate(clients=_clients(["C-1"], ["x\ud800"]))
    out = report.to_excel(tmp_path / "failures.xlsx")
    assert report.failures["check"].tolist() == ["encoding"]
    assert load_folder(out)["clients"]["name"].tolist() == ["x\\ud800"]  # shown escaped


# -- over-long cells -----------------------------------------------------------------------------


def test_csv_cell_over_131072_characters_is_read_and_reported(tmp_path: Path) -> None:
    long = "x" * (MAX_CELL + 1)
    (tmp_path / "clients.csv").write_text(
        f'externalId,name,callSign,description\nC-1,Acme,A,ok\nC-2,"{long}",B,d\n',
        encoding="utf-8",
    )
    report = validate(**load_folder(tmp_path))
    failures = with_lines(report.failures, report.inputs)
    assert failures[["row", "line", "column", "check", "severity"]].values.tolist() == [
        [1, 3, "name", "length", "warning"]
    ]
    assert f"{MAX_CELL + 1:,} characters" in failures["message"].iloc[0]
    assert report.ok  # the spec sets no maximum: the row is sent as given


def test_long_cell_holding_line_breaks_points_at_a_double_quote(tmp_path: Path) -> None:
    joined = "\n".join(f"C-{i},Name {i},{i},d" for i in range(3, 20_000))
    (tmp_path / "clients.csv").write_text(
        f'externalId,name,callSign,description\nC-1,"Acme,A,ok\n{joined}\nC-2",x,d\n',
        encoding="utf-8",
    )
    frame = read_table(tmp_path / "clients.csv")
    assert len(frame) == 1
    message = check_frame("clients", frame).failures.set_index("check").loc["length", "message"]
    assert "double quote" in message
    assert "line breaks" in message


def test_over_long_cell_in_a_pandas_string_column_is_reported() -> None:
    frame = _clients(["C-1"]).astype("str").assign(description=["y" * (MAX_CELL + 5)])
    failures = check_frame("clients", frame).failures
    assert failures[["row", "column", "check"]].values.tolist() == [[0, "description", "length"]]


def test_cell_at_the_limit_is_not_reported() -> None:
    failures = check_frame("clients", _clients(["C-1"], ["x" * MAX_CELL])).failures
    assert failures.empty


# -- look-alike ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "how"),
    [
        ("C-100", "c-100", "case"),
        ("C-100", "C-100\u200b", "a zero-width character"),
        ("\ufeffC-100", "C-100", "a zero-width character"),
        ("C-100", "Ｃ-100", "Unicode normalisation"),
        ("Café", "Cafe\u0301", "Unicode normalisation"),
    ],
)
def test_lookalike_ids_are_a_warning_naming_both_rows(first: str, second: str, how: str) -> None:
    report = validate(clients=_clients([first, "C-2", second]))
    assert report.ok
    warning = report.warnings
    assert warning[["row", "column", "check", "severity"]].values.tolist() == [
        [2, "externalId", "lookalike", "warning"]
    ]
    message = warning["message"].iloc[0]
    assert repr(first) in message and repr(second) in message
    assert "(row 0)" in message and how in message
    assert len(report.frames["clients"]) == 3  # all sent as given


def test_importing_lookalike_ids_warns_naming_both(fresh_client: Client) -> None:
    with pytest.warns(InputWarning, match="differ only by case"):
        fresh_client.import_clients(_clients(["c-1", "C-1"]), dry_run=True, progress=False)


def test_lookalike_ids_in_a_file_name_both_lines(tmp_path: Path) -> None:
    (tmp_path / "clients.csv").write_text(
        "externalId,name,callSign,description\nC-1,A,1,d\nC-2,B,2,d\nc-1,C,3,d\n",
        encoding="utf-8",
    )
    report = validate(**load_folder(tmp_path))
    failures = with_lines(report.failures, report.inputs)
    assert failures[["line", "check"]].values.tolist() == [[4, "lookalike"]]
    assert "(line 2)" in failures["message"].iloc[0]


def test_lookalike_parent_references_are_a_warning() -> None:
    initiatives = pd.DataFrame(
        {
            "billingType": ["billable"] * 3,
            "externalId": ["M-1", "M-2", "M-3"],
            "name": ["a", "b", "c"],
            "description": ["d"] * 3,
            "callSign": ["1", "2", "3"],
            "clientExternalId": ["C-1", "C-1", "c-1"],
            "unitIncrements": [360] * 3,
            "status": ["active"] * 3,
        }
    )
    report = validate(initiatives=initiatives, known={"clients": ["C-1", "c-1"]})
    assert report.ok
    assert report.warnings[["row", "column", "check"]].values.tolist() == [
        [2, "clientExternalId", "lookalike"]
    ]


def test_lookalike_code_range_codes_are_a_warning() -> None:
    ranges = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"], "codeExternalId": ["L1", "l1"]})
    failures = check_frame("code_ranges", ranges).failures
    assert failures[["row", "column", "check"]].values.tolist() == [
        [1, "codeExternalId", "lookalike"]
    ]


def test_same_id_written_the_same_is_not_a_lookalike() -> None:
    failures = check_frame("clients", _clients(["C-1", "C-1"])).failures
    assert failures["check"].tolist() == ["unique", "unique"]


@pytest.mark.parametrize("kind", ["polars", "arrow"])
def test_lookalike_ids_from_polars_and_arrow_frames(kind: str) -> None:
    data = {
        "externalId": ["C-1", "c-1"],
        "name": ["a", "b"],
        "callSign": ["1", "2"],
        "description": ["d", "d"],
    }
    frame = pl.DataFrame(data) if kind == "polars" else pa.table(data)
    report = validate(clients=frame)
    assert report.warnings[["row", "check"]].values.tolist() == [[1, "lookalike"]]


def test_import_warns_about_lookalike_ids(fresh_client: Client) -> None:
    with pytest.warns(InputWarning, match=r"clients: 1 id looks like another.*'c-1'.*'C-1'"):
        result = fresh_client.import_clients(_clients(["C-1", "c-1"]), progress=False)
    assert result["status"].tolist() == ["sent", "sent"]


def test_import_without_lookalikes_says_nothing(fresh_client: Client) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        fresh_client.import_clients(_clients(["C-1", "C-2"]), progress=False)
