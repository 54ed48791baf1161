"""toolkit._ingress.validation: whole-firm validation, cross-table references, load_folder."""

from __future__ import annotations

import gc
import inspect
import re
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandera.errors import SchemaErrors, SchemaWarning

from tests.conftest import check_frame
from toolkit._cli import main as cli_main
from toolkit._core.failures import check_name
from toolkit._ingress import chunking, readers, validation
from toolkit._ingress.validation import ValidationReport, folder_sources, load_folder, validate
from toolkit.errors import ConfigError, ValidationError
from toolkit.schemas import FAILURE_COLUMNS, TABLES

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
BROKEN = Path(__file__).resolve().parents[2] / "sample_data" / "broken"


def triples(report: ValidationReport | pd.DataFrame) -> set[tuple[str, Any, str | None, str]]:
    fc = report if isinstance(report, pd.DataFrame) else report.failures
    rows = [None if pd.isna(r) else r for r in fc["row"]]  # row is Int64: <NA> when missing
    return set(zip(fc["table"], rows, fc["column"], fc["check"], strict=True))


def clients(*ids: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": list(ids),
            "name": [f"Client {i}" for i in ids],
            "callSign": list(ids),
            "description": "x",
        }
    )


def initiatives(*pairs: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": [p[0] for p in pairs],
            "name": "n",
            "description": "d",
            "callSign": [p[0] for p in pairs],
            "clientExternalId": [p[1] for p in pairs],
            "unitIncrements": 360,
            "status": "active",
        }
    )


def code_types(*ids: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": list(ids),
            "name": list(ids),
            "semanticType": None,
            "customerDefaultable": True,
            "userDefaultable": False,
        }
    )


def codes(*pairs: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": [p[0] for p in pairs],
            "name": [p[0] for p in pairs],
            "description": "d",
            "codeTypeExternalId": [p[1] for p in pairs],
        }
    )


def ranges(*pairs: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "initiativeExternalId": [p[0] for p in pairs],
            "codeExternalId": [p[1] for p in pairs],
        }
    )


# --- sample data ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> dict[str, pd.DataFrame]:
    return load_folder(SAMPLE)


def test_sample_data_validates_cleanly(sample: dict[str, pd.DataFrame]) -> None:
    report = validate(**sample)
    assert report.ok, report.failures.to_string()
    assert list(report.frames) == list(TABLES)
    assert {t: len(f) for t, f in report.frames.items()} == {t: len(f) for t, f in sample.items()}
    assert report.unchecked == ()


def test_sample_data_is_a_small_law_firm(sample: dict[str, pd.DataFrame]) -> None:
    frames = validate(**sample).frames
    assert 18 <= len(frames["clients"]) <= 22
    matters = frames["initiatives"]
    assert 55 <= len(matters) <= 65
    assert set(matters["billingType"]) == {"billable", "non-billable"}
    assert set(matters["status"]) == {"active", "inactive"}
    increments = matters["unitIncrements"].value_counts()
    assert increments.idxmax() == 360 and {600, 900} <= set(increments.index)
    assert set(frames["code_types"]["semanticType"].dropna()) == {"task", "activity"}
    assert frames["code_types"]["semanticType"].isna().any()
    assert len(frames["codes"]) >= 30
    assert frames["code_ranges"]["initiativeExternalId"].nunique() >= 3
    assert "Müller & Søn GmbH" in set(frames["clients"]["name"])
    assert matters["externalId"].str.fullmatch(r"M-\d{4}-\d{3}").all()
    assert len(pd.read_csv(SAMPLE / "timekeepers.csv")) == 8


def test_load_folder_keeps_na_text_and_unicode(sample: dict[str, pd.DataFrame]) -> None:
    assert "N/A" in set(sample["initiatives"]["description"])
    assert sample["code_types"]["semanticType"].tolist()[-1] == ""
    assert sample["clients"].attrs["source"].endswith("clients.csv")


# --- the broken copy ------------------------------------------------------------------------

BROKEN_EXPECTED = {
    ("clients", 2, "externalId", "unique"),
    ("clients", 4, "name", "blank"),
    ("clients", 20, "externalId", "unique"),
    ("initiatives", 1, "billingType", "allowed_values"),
    ("initiatives", 5, "unitIncrements", "fractional"),
    ("initiatives", 13, "unitIncrements", "positive"),
    ("initiatives", 20, "status", "allowed_values"),
    ("initiatives", 26, "clientExternalId", "reference"),
    ("code_types", None, "userDefaultable", "column_missing"),
    ("code_types", None, "user_default", "column_unexpected"),
    ("code_types", 0, "semanticType", "allowed_values"),
    ("code_types", 1, "customerDefaultable", "type"),
    ("codes", 32, "externalId", "whitespace"),
    ("codes", 35, "codeTypeExternalId", "reference"),
    ("code_ranges", 3, "codeExternalId", "reference"),
    ("code_ranges", 12, "codeExternalId", "repeated"),
    ("code_ranges", 20, "initiativeExternalId", "reference"),
    ("code_ranges", 41, "codeExternalId", "repeated"),
}
BROKEN_WARNINGS = {
    ("clients", 4, "name", "blank"),
    ("initiatives", 5, "unitIncrements", "fractional"),
    ("codes", 32, "externalId", "whitespace"),
    ("code_ranges", 12, "codeExternalId", "repeated"),
    ("code_ranges", 41, "codeExternalId", "repeated"),
}


def test_broken_sample_reports_every_planted_error_in_one_pass() -> None:
    report = validate(**load_folder(BROKEN))
    assert not report.ok
    assert triples(report) == BROKEN_EXPECTED
    assert len(report.failures) == len(BROKEN_EXPECTED)
    assert triples(report.warnings) == BROKEN_WARNINGS
    assert len(report.errors) == len(BROKEN_EXPECTED - BROKEN_WARNINGS) == 13
    fc = report.failures
    assert list(fc.drop(columns="line").columns) == list(FAILURE_COLUMNS)
    assert fc["line"].notna().equals(fc["row"].notna())  # read from files: every row's line
    assert fc["message"].map(lambda m: isinstance(m, str) and len(m) > 10).all()
    row_level = fc[fc["row"].notna()]
    assert row_level["value"].notna().all()
    assert row_level["externalId"].notna().all()
    # table order, then row order
    assert fc["table"].drop_duplicates().tolist() == list(TABLES)


def test_broken_sample_failures_name_value_and_external_id() -> None:
    fc = validate(**load_folder(BROKEN)).failures.set_index(["table", "column", "check"])
    ref = fc.loc[("initiatives", "clientExternalId", "reference")]
    assert (ref["row"], ref["externalId"], ref["value"]) == (26, "M-1009-001", "C-9999")
    typo = fc.loc[("code_ranges", "initiativeExternalId", "reference")]
    assert typo["value"] == "M-1016-02"


def test_broken_sample_coercible_values_are_not_errors() -> None:
    report = validate(**load_folder(BROKEN))
    assert report.frames["initiatives"].loc[2, "unitIncrements"] == 360  # written "360.0"


def test_broken_sample_raise_if_failed_carries_the_same_frame() -> None:
    report = validate(**load_folder(BROKEN))
    with pytest.raises(ValidationError) as info:
        report.raise_if_failed()
    pd.testing.assert_frame_equal(info.value.failure_cases, report.failures)
    assert "18 problems" in str(info.value)


def test_broken_sample_report_frames_hold_only_importable_rows() -> None:
    report = validate(**load_folder(BROKEN))
    assert 4 in report.frames["clients"].index  # a blank name is only a warning
    assert 2 not in report.frames["clients"].index
    assert report.frames["code_types"].empty  # a column is wrong
    held = {"M-1001-001", "M-1016-02"}
    assert not set(report.frames["code_ranges"]["initiativeExternalId"]) & held
    assert "M-1016-002" in set(report.frames["code_ranges"]["initiativeExternalId"])
    assert "M-1006-002" in set(report.frames["code_ranges"]["initiativeExternalId"])


def test_broken_sample_bad_rows_and_bad_ids() -> None:
    report = validate(**load_folder(BROKEN))
    assert report.bad_rows("clients") == {2, 20}
    assert report.bad_rows("code_types") == {0, 1, 2}
    assert report.bad_ids("clients") == {"C-1003"}
    assert report.bad_ids("code_ranges") == {"M-1001-001", "M-1016-02"}
    assert report.bad_rows("nothing-given") == set()


# --- severity: what the service refuses is an error, what only looks wrong a warning -----------


def test_a_firm_with_blank_text_spaced_ids_and_fractional_increments_has_warnings_only(
    firm_with_warnings: dict[str, pd.DataFrame],
) -> None:
    report = validate(**firm_with_warnings)
    assert report.ok, report.errors.to_string()
    report.raise_if_failed()
    assert report.errors.empty and set(report.failures["severity"]) == {"warning"}
    assert triples(report) == {
        ("clients", 0, "externalId", "whitespace"),
        ("clients", 0, "callSign", "blank"),
        ("clients", 0, "description", "blank"),
        ("clients", 1, "callSign", "blank"),
        ("initiatives", 0, "externalId", "whitespace"),
        ("initiatives", 0, "description", "blank"),
        ("initiatives", 0, "callSign", "blank"),
        ("initiatives", 0, "clientExternalId", "whitespace"),
        ("initiatives", 0, "unitIncrements", "fractional"),
        ("initiatives", 1, "description", "blank"),
        ("initiatives", 1, "unitIncrements", "fractional"),
        ("codes", 0, "description", "blank"),
        ("codes", 1, "externalId", "whitespace"),
        ("code_ranges", 0, "initiativeExternalId", "whitespace"),
        ("code_ranges", 0, "codeExternalId", "repeated"),
        ("code_ranges", 1, "initiativeExternalId", "whitespace"),
        ("code_ranges", 1, "codeExternalId", "whitespace"),
        ("code_ranges", 2, "initiativeExternalId", "whitespace"),
        ("code_ranges", 2, "codeExternalId", "repeated"),
    }
    # every row is kept, as given; a blank cell becomes ""
    assert {t: len(f) for t, f in report.frames.items()} == {
        t: len(f) for t, f in firm_with_warnings.items()
    }
    assert report.frames["clients"]["callSign"].tolist() == ["", ""]
    assert report.frames["initiatives"]["unitIncrements"].tolist() == [360.5, 90.25]
    assert report.frames["initiatives"]["clientExternalId"].tolist() == [" C-1 ", "C-2"]
    assert repr(report).startswith("ValidationReport: ok, 10 rows in 5 table(s), 19 warnings")
    assert report.summary()["warnings"].sum() == 19


def test_warnings_are_counted_beside_errors_in_the_message() -> None:
    df = clients("C-1", "C-1")
    df.loc[0, "description"] = ""
    report = validate(clients=df)
    assert not report.ok
    with pytest.raises(ValidationError, match=r"3 problems \(2 errors, 1 warning\)") as info:
        report.raise_if_failed()
    assert "warning: description is empty; it is sent as ''" in str(info.value)


# --- references -------------------------------------------------------------------------------


def test_initiative_client_must_exist_in_the_clients_frame() -> None:
    report = validate(
        clients=clients("C-1"), initiatives=initiatives(("M-1", "C-1"), ("M-2", "C-2"))
    )
    assert triples(report) == {("initiatives", 1, "clientExternalId", "reference")}
    assert "'C-2' is not an externalId of clients" in report.failures["message"][0]


def test_known_ids_satisfy_references() -> None:
    report = validate(
        clients=clients("C-1"),
        initiatives=initiatives(("M-1", "C-1"), ("M-2", "C-2")),
        known={"clients": ["C-2"]},
    )
    assert report.ok


def test_known_ids_alone_are_enough_to_check_references() -> None:
    report = validate(initiatives=initiatives(("M-1", "C-1")), known={"clients": {"C-9"}})
    assert triples(report) == {("initiatives", 0, "clientExternalId", "reference")}


def test_known_ids_may_be_a_series_or_numbers() -> None:
    df = initiatives(("M-1", "1001"))
    assert validate(initiatives=df, known={"clients": pd.Series([1001])}).ok
    assert validate(initiatives=df, known={"clients": np.array(["1001"])}).ok


def test_code_type_reference_is_checked() -> None:
    report = validate(
        code_types=code_types("task-code"), codes=codes(("L1", "task-code"), ("E1", "x"))
    )
    assert triples(report) == {("codes", 1, "codeTypeExternalId", "reference")}


def test_code_range_references_initiatives_and_codes() -> None:
    report = validate(
        initiatives=initiatives(("M-1", "C-1")),
        codes=codes(("L1", "t")),
        code_ranges=ranges(("M-1", "L1"), ("M-9", "L1"), ("M-1", "L9")),
        known={"clients": ["C-1"], "code_types": ["t"]},
    )
    assert triples(report) == {
        ("code_ranges", 1, "initiativeExternalId", "reference"),
        ("code_ranges", 2, "codeExternalId", "reference"),
    }


def test_reference_message_suggests_an_id_differing_only_in_case_or_spaces() -> None:
    report = validate(clients=clients("C-1001"), initiatives=initiatives(("M-1", "c-1001")))
    assert "did you mean 'C-1001'?" in report.failures["message"][0]


def test_a_parent_row_that_failed_still_counts_as_existing() -> None:
    parents = clients("C-1").astype({"name": object})
    parents.loc[0, "name"] = 2.5
    report = validate(clients=parents, initiatives=initiatives(("M-1", "C-1")))
    assert triples(report) == {("clients", 0, "name", "type")}
    assert report.bad_ids("clients") == {"C-1"}


def test_references_without_a_parent_are_listed_as_unchecked() -> None:
    report = validate(initiatives=initiatives(("M-1", "C-1")), code_ranges=ranges(("M-1", "L1")))
    assert report.ok
    assert report.unchecked == (
        "initiatives.clientExternalId -> clients",
        "code_ranges.codeExternalId -> codes",
    )
    assert "unchecked references" in repr(report)


def test_a_reference_with_surrounding_spaces_warns_and_must_match_the_parent_as_given() -> None:
    report = validate(clients=clients("C-1"), initiatives=initiatives(("M-1", " C-1")))
    assert triples(report.warnings) == {("initiatives", 0, "clientExternalId", "whitespace")}
    assert triples(report.errors) == {("initiatives", 0, "clientExternalId", "reference")}
    assert "did you mean 'C-1'?" in report.errors["message"].iloc[0]
    spaced = validate(clients=clients(" C-1"), initiatives=initiatives(("M-1", " C-1")))
    assert spaced.ok and set(spaced.failures["check"]) == {"whitespace"}


def test_known_with_an_unknown_table_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="client"):
        validate(clients=clients("C-1"), known={"client": ["C-1"]})


def test_known_as_a_single_string_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        validate(initiatives=initiatives(("M-1", "C-1")), known={"clients": "C-1"})


# --- columns= ---------------------------------------------------------------------------------


def test_columns_mapping_applies_to_every_table() -> None:
    report = validate(
        clients=clients("C-1").rename(columns={"callSign": "call_sign"}),
        codes=codes(("L1", "t")).rename(columns={"codeTypeExternalId": "code_type"}),
        columns={"call_sign": "callSign", "code_type": "codeTypeExternalId"},
        known={"code_types": ["t"]},
    )
    assert report.ok


def test_columns_mapping_per_table() -> None:
    report = validate(
        clients=clients("C-1").rename(columns={"name": "Client"}),
        initiatives=initiatives(("M-1", "C-1")).rename(columns={"clientExternalId": "Client"}),
        columns={"clients": {"Client": "name"}, "initiatives": {"Client": "clientExternalId"}},
    )
    assert report.ok


def test_columns_per_table_with_an_unknown_table_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        validate(clients=clients("C-1"), columns={"clientz": {"a": "b"}})


# --- the report -------------------------------------------------------------------------------


def test_clean_report_is_ok_and_does_not_raise() -> None:
    report = validate(clients=clients("C-1", "C-2"))
    assert report.ok
    report.raise_if_failed()
    assert report.failures.empty
    assert list(report.failures.columns) == ["table", "row", "line", *FAILURE_COLUMNS[2:]]
    assert repr(report).startswith("ValidationReport: ok, 2 rows in 1 table(s)")


def test_failures_give_the_line_of_the_file_each_row_came_from(tmp_path: Path) -> None:
    (tmp_path / "clients.csv").write_text(
        "externalId,name,callSign,description\nC-1,Acme,1,\n\nC-2,Beta,2,\n", encoding="utf-8"
    )
    report = validate(**load_folder(tmp_path))
    assert report.failures[["row", "line", "check"]].values.tolist() == [
        [0, 2, "blank"],
        [1, 4, "blank"],  # the blank line 3 counts
    ]
    assert str(report.failures["line"].dtype) == "Int64"
    built = validate(clients=clients("C-1").assign(description=""))
    assert built.failures["line"].isna().all()  # a frame built in Python has no lines


def test_empty_call_is_ok() -> None:
    report = validate()
    assert report.ok and report.frames == {}
    assert "nothing to validate" in repr(report)


def test_report_summary_and_html() -> None:
    report = validate(**load_folder(BROKEN))
    summary = report.summary()
    assert list(summary.columns) == ["rows", "valid", "bad", "errors", "warnings"]
    assert summary.loc["clients"].tolist() == [21, 19, 2, 2, 1]
    assert summary.loc["code_types"].tolist() == [3, 0, 3, 4, 0]
    assert repr(report).startswith("ValidationReport: NOT ok, 18 problems")
    html = report._repr_html_()
    assert "<table" in html and "user_default" in html


def test_report_frames_are_typed_and_keep_the_input_index() -> None:
    df = initiatives(("M-1", "C-1"), ("M-2", "C-1"))
    df["unitIncrements"] = ["360.0", "x"]
    df.index = ["first", "second"]
    report = validate(initiatives=df, known={"clients": ["C-1"]})
    frame = report.frames["initiatives"]
    assert frame.index.tolist() == ["first"]
    assert frame["unitIncrements"].dtype == np.dtype("int64")


def test_public_names_are_exported_and_documented_with_an_example() -> None:
    for name, obj in vars(validation).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != validation.__name__:
            continue
        assert ">>>" in (obj.__doc__ or ""), name
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and not attr.startswith("_"):
                    assert ">>>" in (member.__doc__ or ""), f"{name}.{attr}"


# --- load_folder ------------------------------------------------------------------------------


def test_load_folder_reads_parquet_and_excel_like_csv(tmp_path: Path) -> None:
    frames = validate(**load_folder(SAMPLE)).frames
    frames["clients"].to_parquet(tmp_path / "clients.parquet")
    with pd.ExcelWriter(tmp_path / "initiatives.xlsx") as writer:
        frames["initiatives"].to_excel(writer, index=False)
    typed_types = frames["code_types"].astype({"semanticType": object})
    with pd.ExcelWriter(tmp_path / "code_types.xlsx") as writer:
        typed_types.to_excel(writer, index=False)
    shutil.copy(SAMPLE / "codes.csv", tmp_path / "codes.csv")
    loaded = load_folder(tmp_path)
    assert list(loaded) == ["clients", "initiatives", "code_types", "codes"]
    report = validate(**loaded)
    assert report.ok, report.failures.to_string()
    assert report.frames["initiatives"]["unitIncrements"].tolist() == (
        frames["initiatives"]["unitIncrements"].tolist()
    )
    assert report.frames["code_types"]["semanticType"].isna().sum() == 1
    assert report.unchecked == ()


def test_load_folder_excel_keeps_na_text_and_reports_empty_cells(tmp_path: Path) -> None:
    df = clients("C-1", "NA")
    df.loc[1, "description"] = None
    df.to_excel(tmp_path / "clients.xlsx", index=False)
    report = validate(**load_folder(tmp_path))
    assert triples(report) == {("clients", 1, "description", "blank")}
    assert report.ok and report.failures["severity"].tolist() == ["warning"]
    assert report.failures["externalId"].tolist() == ["NA"]
    assert report.frames["clients"]["description"].tolist() == ["x", ""]


def test_load_folder_reads_csv_with_a_bom(tmp_path: Path) -> None:
    text = (SAMPLE / "clients.csv").read_text(encoding="utf-8")
    (tmp_path / "clients.csv").write_text(text, encoding="utf-8-sig")
    loaded = load_folder(tmp_path)
    assert loaded["clients"].columns[0] == "externalId"


def test_load_folder_skips_missing_tables_and_ignores_other_files(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "codes.csv", tmp_path / "codes.csv")
    shutil.copy(SAMPLE / "timekeepers.csv", tmp_path / "timekeepers.csv")
    assert list(load_folder(tmp_path)) == ["codes"]


def test_load_folder_refuses_two_files_for_one_table(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "codes.csv", tmp_path / "codes.csv")
    pd.read_csv(SAMPLE / "codes.csv").to_parquet(tmp_path / "codes.parquet")
    with pytest.raises(ConfigError, match="more than one file"):
        load_folder(tmp_path)


def test_load_folder_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_folder(tmp_path / "nope")


# --- scale ------------------------------------------------------------------------------------


def test_validates_tens_of_thousands_of_rows_quickly() -> None:
    n = 30_000
    parents = clients(*[f"C-{i}" for i in range(3_000)])
    matters = initiatives(*[(f"M-{i}", f"C-{i % 3_000}") for i in range(n)])
    matters["unitIncrements"] = np.where(np.arange(n) % 1000 == 0, "36.5", "360")
    started = time.perf_counter()
    report = validate(clients=parents, initiatives=matters)
    elapsed = time.perf_counter() - started
    assert len(report.failures) == 30 and set(report.failures["check"]) == {"fractional"}
    assert report.ok and len(report.frames["initiatives"]) == n
    assert elapsed < 10, elapsed


# -- the optional fields the service publishes beyond the spec ---------------------------------


def test_published_optional_fields_are_validated_as_published() -> None:
    clients = pd.DataFrame(
        {
            "externalId": ["C1", "C2"],
            "name": "n",
            "callSign": "x",
            "description": "d",
            "type": ["Parent", ""],
        }
    )
    initiatives = pd.DataFrame(
        {
            "billingType": ["billable"] * 3,
            "externalId": ["M1", "M2", "M3"],
            "name": "n",
            "description": "d",
            "callSign": "x",
            "clientExternalId": "C1",
            "unitIncrements": 360,
            "status": "active",
            "locale": ["fr-BE", "en-US", ""],
            "allowFrom": ["2026-02-30", "2026-01-01", ""],
            "allowTo": ["", "31/12/2026", ""],
            "externalGroupIds": ["[1]", "G1;G2", ""],
        }
    )
    codes = pd.DataFrame(
        {
            "externalId": ["L1", "L2"],
            "name": "n",
            "description": "d",
            "codeTypeExternalId": "T",
            "isDisabled": ["yes", "false"],
        }
    )
    code_types = pd.DataFrame(
        {
            "externalId": ["T"],
            "name": ["T"],
            "semanticType": ["task"],
            "customerDefaultable": [True],
            "userDefaultable": [True],
        }
    )
    report = validate(clients=clients, initiatives=initiatives, code_types=code_types, codes=codes)
    found = {
        (t, r, c, k)
        for t, r, c, k in report.errors[["table", "row", "column", "check"]].itertuples(index=False)
    }
    assert found == {
        ("clients", 0, "type", "allowed_values"),
        ("initiatives", 0, "locale", "allowed_values"),
        ("initiatives", 0, "allowFrom", "type"),
        ("initiatives", 0, "externalGroupIds", "type"),
        ("initiatives", 1, "allowTo", "type"),
        ("codes", 0, "isDisabled", "type"),
    }
    message = report.errors.set_index(["table", "column"]).loc[("initiatives", "locale"), "message"]
    assert "fr-CA" in message and "not sent" in message
    # a frame without them is complete: they are optional columns
    assert validate(clients=clients.drop(columns="type")).ok


def test_a_list_cell_goes_to_the_workbook_as_a_json_list_and_reads_back(tmp_path) -> None:
    codes = pd.DataFrame(
        {
            "externalId": ["L1"],
            "name": ["n"],
            "description": ["d"],
            "codeTypeExternalId": ["T"],
            "userGroupExternalIds": [["UG1", "U;G2"]],
            "isDisabled": ["maybe"],
        }
    )
    report = validate(codes=codes)
    assert set(report.errors["column"]) == {"isDisabled"}
    back = load_folder(report.to_excel(tmp_path / "fix.xlsx"))
    assert back["codes"]["userGroupExternalIds"].tolist() == ['["UG1", "U;G2"]']
    again = validate(codes=back["codes"])
    assert set(again.errors["column"]) == {"isDisabled"}
    assert again.frames["codes"].empty
    fixed = validate(codes=back["codes"].assign(isDisabled="false"))
    assert fixed.frames["codes"]["userGroupExternalIds"].tolist() == [["UG1", "U;G2"]]


# -- row and line: nullable integers everywhere; messages name the line ------------------------


def _clients_csv(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "clients.csv"
    path.write_text(
        "externalId,name,callSign\n"  # a missing column: a failure with no row
        "C1,Acme,AC\n"
        "\n"  # a blank line: lines and rows part ways
        "C1,Acme again,AG\n",
        encoding="utf-8",
    )
    return path


def test_failure_rows_are_nullable_integers_and_messages_name_the_lines(tmp_path) -> None:
    from toolkit import load_folder, validate

    _clients_csv(tmp_path)
    report = validate(**load_folder(tmp_path))
    failures = report.failures
    assert str(failures["row"].dtype) == "Int64"
    assert failures["row"].isna().any()  # the column-level failure
    unique = failures[failures["check"] == "unique"]
    assert unique["row"].tolist() == [0, 1]
    assert set(unique["message"]) == {"externalId 'C1' is not unique: lines 2, 4 share it"}


def test_a_frame_built_in_pandas_names_rows_in_messages() -> None:
    df = pd.DataFrame(
        {
            "externalId": ["C1", "C1"],
            "name": ["a", "b"],
            "callSign": ["a", "b"],
            "description": ["", ""],
        }
    )
    failures = check_frame("clients", df).failures
    assert str(failures["row"].dtype) == "Int64"
    assert "rows 0, 1 share it" in failures["message"].iloc[0]


def test_the_cli_prints_and_writes_row_and_line_as_integers(tmp_path, capsys) -> None:
    _clients_csv(tmp_path / "firm")
    out = tmp_path / "failures.csv"
    assert cli_main(["validate", str(tmp_path / "firm"), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "NaN" not in printed and "1.0" not in printed and "<NA>" not in printed
    written = out.read_text().splitlines()
    assert written[0].startswith("table,row,line,")
    assert any(line.startswith("clients,1,4,C1,") for line in written)
    assert any(line.startswith("clients,,,") for line in written)
    back = pd.read_csv(out, dtype={"row": "Int64", "line": "Int64"})
    assert back["row"].dropna().tolist() == [0, 1]


def _model_errors(table: str, df: pd.DataFrame) -> set[tuple[Any, str | None, str]]:
    """(row, column, check) of every error the table's pandera model raises on ``df``
    (lazily), with pandera's check names in the failure frame's words."""
    schema = TABLES[table].schema.to_schema()
    try:
        schema.validate(df, lazy=True)
    except SchemaErrors as exc:
        fc = exc.failure_cases
    else:
        return set()
    found = set()
    for context, column, check, number, index, case in zip(
        fc["schema_context"],
        fc["column"],
        fc["check"],
        fc["check_number"],
        fc["index"],
        fc["failure_case"],
        strict=True,
    ):
        if number is not None and not pd.isna(number):  # the check object, by its position
            checks = (
                schema.checks if context == "DataFrameSchema" else schema.columns[column].checks
            )
            check = checks[int(number)].name
        name = check_name(str(check))
        name = {
            "column_in_dataframe": "column_missing",
            "column_in_schema": "column_unexpected",
        }.get(name, name)
        if name in ("column_missing", "column_unexpected"):
            column = case  # pandera names the table there, and the column as the failure case
        found.add((None if index is None or pd.isna(index) else int(index), column, name))
    return found


@pytest.mark.parametrize("table", list(TABLES))
def test_the_pandera_model_and_validate_agree_on_every_broken_table(table: str) -> None:
    df = load_folder(BROKEN)[table]
    report = validate(**{table: df})
    errors = report.errors
    expected = {
        (None if pd.isna(r) else int(r), c, k)
        for r, c, k in zip(errors["row"], errors["column"], errors["check"], strict=True)
    }
    assert _model_errors(table, df) == expected
    if errors["row"].isna().any():
        return  # a wrong column: nothing of the table validates
    kept = df.drop(index=list(report.bad_rows(table)))
    left = report.warnings[report.warnings["row"].isin(kept.index)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(TABLES[table].schema.validate(kept, lazy=True)) == len(
            kept
        )  # warnings never raise
    said = {str(w.message) for w in caught if issubclass(w.category, SchemaWarning)}
    assert bool(said) == (not left.empty)
    assert not [m for m in said if re.search(r"\{[a-z_]+[:}]", m)]  # prose, not a template


@pytest.mark.parametrize("table", list(TABLES))
def test_a_model_used_alone_says_its_checks_in_prose(table: str) -> None:
    schema = TABLES[table].schema.to_schema()
    every = [*schema.checks, *(c for col in schema.columns.values() for c in col.checks)]
    said = {str(c.name): c.error for c in every}
    assert said and not {n: e for n, e in said.items() if not e or "{" in e}


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_a_chunk_of_rows_at_a_time_finds_what_the_whole_table_does(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: the files are read and checked a chunk of rows at a time; duplicates, repeated
    pairs and references across chunks are still found, with the same messages, lines and order,
    and the rows safe to import are the same."""
    whole = validate(**{t: source.read() for t, source in folder_sources(BROKEN).items()})
    monkeypatch.setattr(chunking, "_CHUNK", chunk)
    chunked = validate(**folder_sources(BROKEN))
    pd.testing.assert_frame_equal(chunked.failures, whole.failures)
    assert {"unique", "repeated", "reference"} <= set(chunked.failures["check"])
    for table, frame in whole.frames.items():
        pd.testing.assert_frame_equal(chunked.frames[table], frame)


def test_the_checks_and_the_rows_to_send_leave_the_inputs_attrs_behind(tmp_path) -> None:
    # pandas deep-copies a frame's attrs at every step: the checks of the cells work on a copy
    # without them (a 3-row frame's attrs were copied 155 times, about once a pandas step)
    class Probe:
        copies = 0

        def __deepcopy__(self, memo: dict[int, Any]) -> Probe:
            Probe.copies += 1
            return self

    ids = {"initiativeExternalId": ["M-1", " M-2", ""], "codeExternalId": ["L1", "L2", "L3"]}
    df = pd.DataFrame(ids, dtype="str")
    df.attrs["probe"] = Probe()
    result = check_frame("code_ranges", df)
    assert result.bad_rows() == {2}
    assert result.valid_frame().attrs == {}  # the rows to send: nor after
    assert Probe.copies < 20
    path = tmp_path / "code_ranges.csv"
    path.write_text("initiativeExternalId,codeExternalId\nM-1,L1\n\n,L3\n")  # row 1: line 4
    report = validate(code_ranges=readers.TableFile(path))
    assert report.errors[["row", "line", "check"]].values.tolist() == [[1, 4, "required"]]


def test_load_folder_leaves_no_file_open() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        frames = load_folder(SAMPLE)
        gc.collect()
    assert len(frames) == 5
    assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)] == []


def test_the_raised_summary_names_a_row_and_an_id_only_where_a_failure_has_them() -> None:
    codes = pd.DataFrame(
        {"externalId": ["L1", " L2"], "name": ["a", "b"], "description": ["c", "d"]}
    )
    with pytest.raises(ValidationError) as raised:
        validate(codes=codes).raise_if_failed()
    lines = str(raised.value).splitlines()[1:]
    assert "  codes codeTypeExternalId: missing column 'codeTypeExternalId'" in lines
    assert any(line.startswith("  codes row 1 [ L2] externalId: warning: ") for line in lines)
    assert not [line for line in lines if "<NA>" in line or "None" in line]
