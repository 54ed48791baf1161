"""toolkit.schemas: every rule of the spec's field tables, the coercions, and the failure frame."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import toolkit
from tests.conftest import check, check_frame
from toolkit import schemas, validate
from toolkit.errors import ConfigError, ToolkitError, ValidationError
from toolkit.schemas import (
    FAILURE_COLUMNS,
    TABLES,
    ClientSchema,
    CodeRangeSchema,
    CodeSchema,
    CodeTypeSchema,
    InitiativeSchema,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"

VALID: dict[str, dict[str, Any]] = {
    "clients": {
        "externalId": "C-1",
        "name": "Acme",
        "callSign": "1",
        "description": "Widgets",
    },
    "initiatives": {
        "billingType": "billable",
        "externalId": "M-1",
        "name": "Acme v. Roadrunner",
        "description": "Product liability",
        "callSign": "1-001",
        "clientExternalId": "C-1",
        "unitIncrements": "360",
        "status": "active",
    },
    "code_types": {
        "externalId": "task-code",
        "name": "task-code",
        "semanticType": "task",
        "customerDefaultable": "true",
        "userDefaultable": "false",
    },
    "codes": {
        "externalId": "L110",
        "name": "L110",
        "description": "Fact Investigation/Development",
        "codeTypeExternalId": "task-code",
    },
    "code_ranges": {"initiativeExternalId": "M-1", "codeExternalId": "L110"},
}


def rows(table: str, *changes: dict[str, Any], index: list[Any] | None = None) -> pd.DataFrame:
    """One valid row per ``changes`` dict (with distinct keys), each changed as given."""
    spec = TABLES[table]
    out = []
    for i, change in enumerate(changes or ({},)):
        row = dict(VALID[table])
        row[spec.key[-1]] = f"{row[spec.key[-1]]}-{i}" if i else row[spec.key[-1]]
        row.update(change)
        out.append(row)
    return pd.DataFrame(out, index=index, dtype=object)


def failures_of(table: str, df: pd.DataFrame, **kwargs: Any) -> set[tuple[Any, Any, str]]:
    fc = check_frame(table, df, **kwargs).failures
    rows = [None if pd.isna(r) else r for r in fc["row"]]  # row is Int64: <NA> when missing
    return set(zip(rows, fc["column"], fc["check"], strict=True))


def one_failure(table: str, df: pd.DataFrame) -> pd.Series:
    fc = check_frame(table, df).failures
    assert len(fc) == 1, fc.to_string()
    one = fc.iloc[0].copy()
    one["row"] = None if pd.isna(one["row"]) else one["row"]  # row is Int64: <NA> when missing
    return one


# --- the registry ---------------------------------------------------------------------------


def test_tables_are_in_the_spec_import_order() -> None:
    assert list(TABLES) == ["clients", "initiatives", "code_types", "codes", "code_ranges"]


def _spec_columns(table: str) -> tuple[str, ...]:
    return tuple(c for c in TABLES[table].columns if c not in TABLES[table].optional)


def test_table_columns_follow_the_spec_field_tables() -> None:
    assert _spec_columns("clients") == ("externalId", "name", "callSign", "description")
    assert _spec_columns("initiatives") == (
        "billingType",
        "externalId",
        "name",
        "description",
        "callSign",
        "clientExternalId",
        "unitIncrements",
        "status",
    )
    assert _spec_columns("code_types") == (
        "externalId",
        "name",
        "semanticType",
        "customerDefaultable",
        "userDefaultable",
    )
    assert _spec_columns("codes") == ("externalId", "name", "description", "codeTypeExternalId")
    assert TABLES["code_ranges"].columns == ("initiativeExternalId", "codeExternalId")


def test_the_published_optional_fields_are_optional_columns_after_the_spec_s() -> None:
    assert {t: TABLES[t].columns[len(_spec_columns(t)) :] for t in TABLES} == {
        "clients": ("type",),
        "initiatives": ("externalGroupIds", "locale", "allowFrom", "allowTo"),
        "code_types": ("orderingSequence",),
        "codes": ("orderingSequence", "group", "userGroupExternalIds", "isDisabled"),
        "code_ranges": (),
    }
    assert {t: set(TABLES[t].optional) for t in TABLES} == {
        t: set(TABLES[t].columns[len(_spec_columns(t)) :]) for t in TABLES
    }


def test_table_keys_and_schemas() -> None:
    assert {t: s.key for t, s in TABLES.items()} == {
        "clients": ("externalId",),
        "initiatives": ("externalId",),
        "code_types": ("externalId",),
        "codes": ("externalId",),
        "code_ranges": ("initiativeExternalId", "codeExternalId"),
    }
    assert [s.schema for s in TABLES.values()] == [
        ClientSchema,
        InitiativeSchema,
        CodeTypeSchema,
        CodeSchema,
        CodeRangeSchema,
    ]


def test_public_names_are_all_exported_and_documented_with_an_example() -> None:
    from toolkit._core import failures, frames
    from toolkit._egress import schemas as exports
    from toolkit._ingress import checks
    from toolkit._ingress import models as imports

    public = {
        name
        for name, obj in vars(imports).items()
        if not name.startswith("_")
        and getattr(obj, "__module__", None) == imports.__name__
        and (inspect.isfunction(obj) or inspect.isclass(obj))
    }
    assert public <= set(schemas.__all__)
    homes = (imports, exports, checks, failures, frames)
    assert all(any(hasattr(home, name) for home in homes) for name in schemas.__all__)
    for name in schemas.__all__:
        assert hasattr(schemas, name)
        obj = getattr(schemas, name)
        if inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), name


# --- the happy path -------------------------------------------------------------------------


@pytest.mark.parametrize("table", list(TABLES))
def test_sample_data_passes_every_schema(table: str) -> None:
    df = pd.read_csv(SAMPLE / f"{table}.csv", dtype=str, keep_default_na=False)
    checked = check(table, df)
    assert len(checked) == len(df)
    TABLES[table].schema.validate(checked)


def test_checked_frame_has_the_spec_columns_types_and_the_input_index() -> None:
    df = rows("initiatives", {}, {"unitIncrements": "600.0"}, index=["a", "b"])
    df = df[list(reversed(df.columns))]
    out = check("initiatives", df)
    assert list(out.columns) == list(_spec_columns("initiatives"))  # no optional column given
    assert out.index.tolist() == ["a", "b"]
    assert out["unitIncrements"].dtype == np.dtype("int64")
    assert out["unitIncrements"].tolist() == [360, 600]
    assert pd.api.types.is_string_dtype(out["externalId"])


def test_checked_code_types_have_bool_columns_and_null_semantic_type() -> None:
    df = rows(
        "code_types",
        {},
        {"semanticType": "", "customerDefaultable": "FALSE", "userDefaultable": 1},
    )
    out = check("code_types", df)
    assert out["customerDefaultable"].dtype == np.dtype("bool")
    assert out["customerDefaultable"].tolist() == [True, False]
    assert out["userDefaultable"].tolist() == [False, True]
    assert out["semanticType"].iloc[0] == "task"
    assert pd.isna(out["semanticType"].iloc[1])


def test_empty_frame_with_the_right_columns_passes() -> None:
    df = pd.DataFrame({c: pd.Series([], dtype=object) for c in TABLES["codes"].columns})
    assert check("codes", df).empty


# --- required values --------------------------------------------------------------------------

REQUIRED = [
    (table, column)
    for table, spec in TABLES.items()
    for column in spec.columns
    if column not in spec.nullable and spec.kinds[column] != "free_text"
]
"""Ids, references, enums, numbers and booleans: a missing value is an error."""

FREE_TEXT = [
    (table, column)
    for table, spec in TABLES.items()
    for column in spec.columns
    if spec.kinds[column] == "free_text"
]
"""Required free text (name, callSign, description): the service accepts ``""``."""


def test_free_text_columns_are_the_spec_names_call_signs_and_descriptions() -> None:
    assert FREE_TEXT == [
        ("clients", "name"),
        ("clients", "callSign"),
        ("clients", "description"),
        ("initiatives", "name"),
        ("initiatives", "description"),
        ("initiatives", "callSign"),
        ("code_types", "name"),
        ("codes", "name"),
        ("codes", "description"),
    ]


@pytest.mark.parametrize(("table", "column"), REQUIRED)
@pytest.mark.parametrize("missing", ["", "   ", None, np.nan])
def test_every_required_field_reports_a_missing_value(
    table: str, column: str, missing: Any
) -> None:
    failure = one_failure(table, rows(table, {column: missing}))
    assert (failure["row"], failure["column"], failure["check"]) == (0, column, "required")
    assert column in failure["message"]
    assert ("empty" if isinstance(missing, str) else "missing") in failure["message"]
    assert failure["severity"] == "error"


@pytest.mark.parametrize(("table", "column"), FREE_TEXT)
@pytest.mark.parametrize("blank", ["", "   ", None, np.nan])
def test_blank_free_text_is_a_warning_and_is_sent_as_empty_text(
    table: str, column: str, blank: Any
) -> None:
    result = check_frame(table, rows(table, {column: blank}))
    assert result.ok
    failure = one_failure(table, rows(table, {column: blank}))
    assert (failure["row"], failure["column"], failure["check"], failure["severity"]) == (
        0,
        column,
        "blank",
        "warning",
    )
    assert "sent as ''" in failure["message"]
    assert check(table, rows(table, {column: blank}))[column].tolist() == [""]


def test_description_may_be_empty_and_may_hold_na_text() -> None:
    assert check("clients", rows("clients", {"description": "N/A"}))["description"].iloc[0] == (
        "N/A"
    )
    assert check("clients", rows("clients", {"description": ""}))["description"].iloc[0] == ""


# --- enums ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["billable", "non-billable"])
def test_billing_type_accepts_its_two_values(value: str) -> None:
    assert check("initiatives", rows("initiatives", {"billingType": value})).shape[0] == 1


@pytest.mark.parametrize(
    "value", ["Billable", "BILLABLE", "non_billable", "nonbillable", "pro bono"]
)
def test_billing_type_is_case_sensitive_and_closed(value: str) -> None:
    failure = one_failure("initiatives", rows("initiatives", {"billingType": value}))
    assert failure["check"] == "allowed_values"
    assert failure["value"] == value
    assert "billable, non-billable" in failure["message"]


def test_enum_message_suggests_the_right_case() -> None:
    failure = one_failure("initiatives", rows("initiatives", {"status": "Inactive"}))
    assert "did you mean 'inactive'?" in failure["message"]


@pytest.mark.parametrize("value", ["active", "inactive"])
def test_status_accepts_its_two_values(value: str) -> None:
    assert check("initiatives", rows("initiatives", {"status": value})).shape[0] == 1


@pytest.mark.parametrize("value", ["Active", "closed", "archived"])
def test_status_is_case_sensitive_and_closed(value: str) -> None:
    assert one_failure("initiatives", rows("initiatives", {"status": value}))["check"] == (
        "allowed_values"
    )


@pytest.mark.parametrize("value", ["action", "activity", "location", "phase", "task"])
def test_semantic_type_accepts_the_five_kinds(value: str) -> None:
    out = check("code_types", rows("code_types", {"semanticType": value}))
    assert out["semanticType"].iloc[0] == value


@pytest.mark.parametrize("value", ["", "  ", None, np.nan])
def test_semantic_type_missing_means_null(value: Any) -> None:
    out = check("code_types", rows("code_types", {"semanticType": value}))
    assert pd.isna(out["semanticType"].iloc[0])


@pytest.mark.parametrize("value", ["Task", "TASK", "expense", "null", "None"])
def test_semantic_type_other_text_is_reported(value: str) -> None:
    failure = one_failure("code_types", rows("code_types", {"semanticType": value}))
    assert failure["check"] == "allowed_values"
    assert "empty for null" in failure["message"]


# --- unitIncrements ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (360, 360),
        ("360", 360),
        ("360.0", 360),
        (360.0, 360),
        (" 600 ", 600),
        (np.int64(900), 900),
        (np.float64(900.0), 900),
        ("+360", 360),
        ("1e3", 1000),
    ],
)
def test_unit_increments_coerces_whole_numbers(value: Any, expected: int) -> None:
    out = check("initiatives", rows("initiatives", {"unitIncrements": value}))
    assert out["unitIncrements"].iloc[0] == expected
    assert isinstance(out["unitIncrements"].iloc[0], np.integer)


@pytest.mark.parametrize("value", ["abc", "1,000", "6 min", True, "inf", math.inf, "nan"])
def test_unit_increments_reports_what_is_not_a_number(value: Any) -> None:
    failure = one_failure("initiatives", rows("initiatives", {"unitIncrements": value}))
    assert (failure["column"], failure["check"]) == ("unitIncrements", "type")
    assert "whole number" in failure["message"]
    assert failure["value"] == value or (isinstance(value, float) and math.isinf(value))


@pytest.mark.parametrize(("value", "expected"), [("360.5", 360.5), (360.5, 360.5), (1e300, 1e300)])
def test_fractional_unit_increments_are_a_warning_and_kept_as_given(
    value: Any, expected: float
) -> None:
    df = rows("initiatives", {"unitIncrements": value})
    failure = one_failure("initiatives", df)
    assert (failure["column"], failure["check"], failure["severity"]) == (
        "unitIncrements",
        "fractional",
        "warning",
    )
    assert failure["value"] == value
    out = check("initiatives", df)
    assert out["unitIncrements"].dtype == np.dtype("float64")
    assert out["unitIncrements"].tolist() == [expected]


@pytest.mark.parametrize("value", [0, "0", -360, "-360", -0.0])
def test_unit_increments_must_be_positive(value: Any) -> None:
    failure = one_failure("initiatives", rows("initiatives", {"unitIncrements": value}))
    assert (failure["column"], failure["check"]) == ("unitIncrements", "positive")


@pytest.mark.parametrize(
    "series",
    [
        pd.Series([360, 600], dtype="int64"),
        pd.Series([360.0, 600.0]),
        pd.Series([360, 600], dtype="Int64"),
        pd.Series(["360", "600"], dtype="str"),
        pd.Series(["360", "600"], dtype="category"),
    ],
)
def test_unit_increments_accepts_the_dtypes_loading_yields(series: pd.Series) -> None:
    df = rows("initiatives", {}, {})
    df["unitIncrements"] = series.to_numpy()
    if isinstance(series.dtype, pd.CategoricalDtype):
        df["unitIncrements"] = series.astype("category")
    assert check("initiatives", df)["unitIncrements"].tolist() == [360, 600]


def test_unit_increments_bool_column_is_reported_per_row() -> None:
    df = rows("initiatives", {}, {})
    df["unitIncrements"] = [True, False]
    assert failures_of("initiatives", df) == {
        (0, "unitIncrements", "type"),
        (1, "unitIncrements", "type"),
    }


def test_unit_increments_float_column_with_nan_reports_required_and_fraction() -> None:
    df = rows("initiatives", {}, {}, {})
    df["unitIncrements"] = [360.0, np.nan, 0.5]
    assert failures_of("initiatives", df) == {
        (1, "unitIncrements", "required"),
        (2, "unitIncrements", "fractional"),
    }


# --- booleans ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (np.bool_(True), True),
        ("true", True),
        ("TRUE", True),
        ("True", True),
        (" false ", False),
        ("FALSE", False),
        (1, True),
        (0, False),
        ("1", True),
        ("0", False),
        (1.0, True),
        (0.0, False),
    ],
)
@pytest.mark.parametrize("column", ["customerDefaultable", "userDefaultable"])
def test_booleans_accept_true_false_in_any_case_and_one_zero(
    column: str, value: Any, expected: bool
) -> None:
    out = check("code_types", rows("code_types", {column: value}))
    assert out[column].iloc[0] is np.bool_(expected) or out[column].iloc[0] == expected
    assert out[column].dtype == np.dtype("bool")


@pytest.mark.parametrize("value", ["yes", "no", "Y", "t", "f", 2, "2", 0.5, "on"])
@pytest.mark.parametrize("column", ["customerDefaultable", "userDefaultable"])
def test_booleans_report_anything_else(column: str, value: Any) -> None:
    failure = one_failure("code_types", rows("code_types", {column: value}))
    assert (failure["column"], failure["check"], failure["value"]) == (column, "type", value)
    assert "true or false" in failure["message"]


def test_boolean_columns_of_numpy_dtypes_are_accepted() -> None:
    df = rows("code_types", {}, {})
    df["customerDefaultable"] = np.array([True, False])
    df["userDefaultable"] = np.array([1, 0])
    out = check("code_types", df)
    assert out["userDefaultable"].tolist() == [True, False]


# --- text -------------------------------------------------------------------------------------


def test_whole_numbers_in_text_columns_become_their_digits() -> None:
    df = rows("clients", {"externalId": 1001, "callSign": 1001.0})
    out = check("clients", df)
    assert out.iloc[0][["externalId", "callSign"]].tolist() == ["1001", "1001"]


@pytest.mark.parametrize(
    "value", [12.5, True, pd.Timestamp("2024-01-01"), ["a"], {"a": 1}, math.inf]
)
def test_non_text_values_in_text_columns_are_reported_not_raised(value: Any) -> None:
    failure = one_failure("clients", rows("clients", {"name": value}))
    assert (failure["column"], failure["check"]) == ("name", "type")
    assert "must be text" in failure["message"]


def test_unicode_and_punctuation_survive() -> None:
    name = 'Müller & Søn GmbH, "Ōtani" – Zoë'
    assert check("clients", rows("clients", {"name": name}))["name"].iloc[0] == name


# --- identifiers ------------------------------------------------------------------------------

IDENTIFIERS = [
    ("clients", "externalId"),
    ("initiatives", "externalId"),
    ("initiatives", "clientExternalId"),
    ("code_types", "externalId"),
    ("codes", "externalId"),
    ("codes", "codeTypeExternalId"),
    ("code_ranges", "initiativeExternalId"),
    ("code_ranges", "codeExternalId"),
]


@pytest.mark.parametrize(("table", "column"), IDENTIFIERS)
@pytest.mark.parametrize("value", [" X-1", "X-1 ", "\tX-1"])
def test_identifiers_with_surrounding_whitespace_are_reported(
    table: str, column: str, value: str
) -> None:
    failure = one_failure(table, rows(table, {column: value}))
    assert (failure["column"], failure["check"], failure["value"]) == (column, "whitespace", value)


@pytest.mark.parametrize(("table", "column"), IDENTIFIERS)
def test_identifiers_with_surrounding_whitespace_are_warnings_and_kept_as_given(
    table: str, column: str
) -> None:
    df = rows(table, {column: " X-1 "})
    result = check_frame(table, df)
    assert result.ok
    assert result.failures["severity"].tolist() == ["warning"]
    assert "sent as given" in result.failures["message"].iloc[0]
    assert check(table, df)[column].tolist() == [" X-1 "]


def test_names_may_have_surrounding_whitespace() -> None:
    assert check("clients", rows("clients", {"name": " Acme "}))["name"].iloc[0] == " Acme "


@pytest.mark.parametrize("table", ["clients", "initiatives", "code_types", "codes"])
def test_external_id_must_be_unique_and_every_occurrence_is_reported(table: str) -> None:
    df = rows(table, {}, {}, {})
    df.loc[2, "externalId"] = df.loc[0, "externalId"]
    df.index = ["a", "b", "c"]
    fc = check_frame(table, df).failures
    assert set(zip(fc["row"], fc["check"], strict=True)) == {("a", "unique"), ("c", "unique")}
    assert all("rows a, c" in m for m in fc["message"])


def test_external_id_uniqueness_is_case_sensitive() -> None:
    # two records, not a duplicate; the look-alike ids are a warning, never refused
    report = validate(clients=rows("clients", {"externalId": "c-1"}, {"externalId": "C-1"}))
    assert report.ok
    assert report.warnings["check"].tolist() == ["lookalike"]
    assert "differ only by case" in report.warnings["message"].iloc[0]
    assert report.frames["clients"].shape[0] == 2


def test_code_range_pair_listed_twice_is_a_warning_and_every_row_is_kept() -> None:
    df = pd.DataFrame(
        {
            "initiativeExternalId": ["M-1", "M-1", "M-2", "M-1"],
            "codeExternalId": ["L110", "L120", "L110", "L110"],
        }
    )
    result = check_frame("code_ranges", df)
    fc = result.failures
    assert set(zip(fc["row"], fc["column"], fc["check"], fc["severity"], strict=True)) == {
        (0, "codeExternalId", "repeated", "warning"),
        (3, "codeExternalId", "repeated", "warning"),
    }
    assert "'L110' is listed more than once for initiativeExternalId 'M-1'" in fc["message"][0]
    assert result.ok and len(result.valid_frame()) == 4


# --- columns ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "given", "expected"),
    [
        # headers that differ only in case, spaces, _ and - now match: tests/ingress/test_headers.py
        ("clients", "callSigns", "callSign"),
        ("clients", "extId", "externalId"),
        ("initiatives", "clientExtId", "clientExternalId"),
        ("initiatives", "unitIncrementz", "unitIncrements"),
        ("initiatives", "billingTyp", "billingType"),
        ("code_types", "semantic", "semanticType"),
        ("code_types", "user_default", "userDefaultable"),
        ("codes", "codeTypeExtId", "codeTypeExternalId"),
        ("code_ranges", "initiativeExtId", "initiativeExternalId"),
    ],
)
def test_misnamed_column_names_its_closest_match(table: str, given: str, expected: str) -> None:
    df = rows(table).rename(columns={expected: given})
    fc = check_frame(table, df).failures
    by_check = {
        c: (col, m) for col, c, m in zip(fc["column"], fc["check"], fc["message"], strict=True)
    }
    assert set(by_check) == {"column_missing", "column_unexpected"}
    assert by_check["column_missing"][0] == expected
    assert by_check["column_unexpected"][0] == given
    assert f"did you mean {expected!r}" in by_check["column_unexpected"][1]
    assert f"columns={{{given!r}: {expected!r}}}" in by_check["column_unexpected"][1]
    assert repr(given) in by_check["column_missing"][1]
    assert fc["row"].isna().all()


def test_misnamed_column_still_reports_every_row_problem_of_the_other_columns() -> None:
    df = rows("clients", {"name": ""}).rename(columns={"callSign": "callSigns"})
    assert failures_of("clients", df) == {
        (None, "callSign", "column_missing"),
        (None, "callSigns", "column_unexpected"),
        (0, "name", "blank"),
    }


def test_unrelated_extra_column_lists_the_expected_columns() -> None:
    df = rows("codes").assign(notes="x")
    failure = one_failure("codes", df)
    assert (failure["column"], failure["check"]) == ("notes", "column_unexpected")
    assert "externalId, name, description, codeTypeExternalId" in failure["message"]


def test_extra_column_close_to_a_present_one_says_drop_it() -> None:
    df = rows("clients").assign(call_sign="1")
    failure = one_failure("clients", df)
    assert "'callSign' is present" in failure["message"]


def test_missing_column_without_a_close_match() -> None:
    failure = one_failure("clients", rows("clients").drop(columns="description"))
    assert (failure["row"], failure["column"], failure["check"]) == (
        None,
        "description",
        "column_missing",
    )


def test_duplicated_column_is_reported() -> None:
    df = rows("clients")
    df = pd.concat([df, df[["name"]]], axis=1)
    failure = one_failure("clients", df)
    assert (failure["column"], failure["check"]) == ("name", "column_duplicate")


def test_column_failures_make_every_row_bad() -> None:
    result = check_frame("clients", rows("clients", {}, {}).assign(extra=1))
    assert result.bad_rows() == {0, 1}
    assert result.valid_frame().empty
    assert list(result.valid_frame().columns) == list(TABLES["clients"].columns)


def test_columns_argument_renames_on_the_way_in() -> None:
    df = rows("clients").rename(columns={"callSign": "Client Code", "name": "Client Name"})
    out = check("clients", df, columns={"Client Code": "callSign", "Client Name": "name"})
    assert out["callSign"].tolist() == ["1"]


def test_columns_argument_ignores_names_the_frame_does_not_have() -> None:
    assert len(check("clients", rows("clients"), columns={"nope": "name"})) == 1


# --- the failure frame ------------------------------------------------------------------------


def test_check_raises_validation_error_with_every_failure_at_once() -> None:
    df = rows(
        "initiatives",
        {"billingType": "Billable", "unitIncrements": "360.5"},
        {"status": "closed", "name": ""},
        {"clientExternalId": " C-1", "unitIncrements": "-6"},
        index=[10, 11, 12],
    )
    with pytest.raises(ValidationError) as info:
        check("initiatives", df)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, ToolkitError)
    fc = err.failure_cases
    assert list(fc.columns.drop("line")) == list(FAILURE_COLUMNS)  # and the row's file line
    assert list(zip(fc["row"], fc["column"], fc["check"], fc["severity"], strict=True)) == [
        (10, "billingType", "allowed_values", "error"),
        (10, "unitIncrements", "fractional", "warning"),
        (11, "name", "blank", "warning"),
        (11, "status", "allowed_values", "error"),
        (12, "clientExternalId", "whitespace", "warning"),
        (12, "unitIncrements", "positive", "error"),
    ]
    assert fc["table"].eq("initiatives").all()
    assert fc["externalId"].tolist() == ["M-1", "M-1", "M-1-1", "M-1-1", "M-1-2", "M-1-2"]
    assert fc["value"].tolist() == ["Billable", "360.5", "", "closed", " C-1", "-6"]
    assert "6 problems (3 errors, 3 warnings)" in str(err)
    assert "initiatives row 10 [M-1] billingType" in str(err)


def test_failure_frame_values_are_the_raw_input_and_missing_is_the_dtype_s_own() -> None:
    df = rows("clients", {"externalId": None, "name": ""})
    fc = check_frame("clients", df).failures
    assert str(fc["externalId"].dtype) == "string" and fc["externalId"].isna().all()
    assert fc["value"].tolist() == [pd.NA, ""]
    assert fc["row"].tolist() == [0, 0]


def test_failure_frame_uses_the_input_index_labels_even_when_repeated() -> None:
    df = rows("clients", {}, {"name": ""}, index=["x", "x"])
    fc = check_frame("clients", df).failures
    assert fc["row"].tolist() == ["x"]
    assert fc["externalId"].tolist() == ["C-1-1"]


def test_a_clean_frame_has_an_empty_failure_frame_with_the_columns() -> None:
    result = check_frame("codes", rows("codes"))
    assert result.ok
    assert list(result.failures.columns) == list(FAILURE_COLUMNS)


def test_not_a_frame_is_a_config_error_naming_the_table() -> None:
    with pytest.raises(ConfigError, match="clients must be a table"):
        check("clients", [{"externalId": "C-1"}])


def test_models_used_directly_warn_on_blank_text_and_raise_on_a_blank_id() -> None:
    import pandera.errors

    df = check("clients", rows("clients")).assign(name=" ")
    with pytest.warns(pandera.errors.SchemaWarning, match="name"):
        assert ClientSchema.validate(df)["name"].tolist() == [""]  # sent as "", never raised
    with pytest.raises(pandera.errors.SchemaError):
        ClientSchema.validate(df.assign(externalId=" "))


@pytest.mark.parametrize("value", [["360"], {"s": 360}, pd.Timestamp("2024-01-01"), b"360"])
def test_unit_increments_odd_objects_are_reported_not_raised(value: Any) -> None:
    failure = one_failure("initiatives", rows("initiatives", {"unitIncrements": value}))
    assert (failure["column"], failure["check"]) == ("unitIncrements", "type")


@pytest.mark.parametrize("value", [["true"], {"a": 1}, pd.Timestamp("2024-01-01")])
def test_boolean_odd_objects_are_reported_not_raised(value: Any) -> None:
    failure = one_failure("code_types", rows("code_types", {"userDefaultable": value}))
    assert (failure["column"], failure["check"]) == ("userDefaultable", "type")


def test_check_engine_names_are_exported_through_schemas_or_are_implementation() -> None:
    from toolkit._ingress import checks

    public = {
        name
        for name, obj in vars(checks).items()
        if not name.startswith("_")
        and getattr(obj, "__module__", None) == checks.__name__
        and (inspect.isfunction(obj) or inspect.isclass(obj))
    }
    # the engine's own entry points (retired from toolkit.schemas after one release)
    engine = {"check_chunks", "CheckResult"}
    assert public - set(schemas.__all__) == engine


def test_validating_a_table_has_one_way() -> None:
    # toolkit.validate is the one way; the schemas module's own checks were retired
    df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
    assert toolkit.validate(code_ranges=df).ok
    for name in ("check", "check_frame", "check_chunks", "CheckResult"):
        assert name not in schemas.__all__ and not hasattr(schemas, name)
