"""Reconcile exported time entries with a billing extract (toolkit._reconciliation)."""

from __future__ import annotations

import datetime as dt
import doctest
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import toolkit
import toolkit._reconciliation.api as reconcile_module
from toolkit._cli import main
from toolkit._reconciliation import (
    Reconciliation,
    acknowledgements_from_rows,
    reconcile,
    spoken_as_cli,
)
from toolkit._reconciliation.classify import ROW_COLUMNS, STATUSES
from toolkit._reconciliation.messages import advise
from toolkit._reconciliation.result import ACKNOWLEDGE_COLUMNS
from toolkit.errors import ConfigError, DuplicateKeyError, MissingColumnError, ValidationError

UTC = pd.Timestamp("2024-03-05T10:00:00Z")


def make_exported(rows: list[dict]) -> pd.DataFrame:
    """An exported-entries frame in the flattener's shape, from short row dicts."""
    full = []
    for i, row in enumerate(rows):
        full.append(
            {
                "_id": row["_id"],
                "externalId": row.get("externalId", f"X-{row['_id']}"),
                "userId": row.get("userId", "u1"),
                "workDate": pd.Timestamp(row.get("workDate", "2024-03-01")),
                "incrementDurationInSeconds": row.get("seconds", 3600),
                "summary": row.get("summary", f"work {i}"),
                "initiative.externalId": row.get("matter", "M-1"),
                "initiative.name": "Matter",
                "initiative.client.externalId": row.get("client", "C-1"),
                "initiative.client.name": "Client",
                "createdAt": UTC,
                "updatedAt": UTC,
            }
        )
    frame = pd.DataFrame(full)
    frame["incrementDurationInSeconds"] = frame["incrementDurationInSeconds"].astype("int64")
    return frame


@pytest.fixture
def exported() -> pd.DataFrame:
    return make_exported(
        [
            {"_id": "e1", "userId": "u1", "matter": "M-1"},  # matched
            {"_id": "e2", "userId": "u1", "matter": "M-1", "seconds": 1800},  # duration
            {"_id": "e3", "userId": "u2", "matter": "M-2", "client": "C-2"},  # date
            {"_id": "e4", "userId": "u2", "matter": "M-2", "client": "C-2"},  # matter
            {"_id": "e5", "userId": "u3", "matter": "M-3", "client": "C-3"},  # missing
            {"_id": "e6", "userId": "u3", "matter": "M-1"},  # duration and date
        ]
    )


@pytest.fixture
def billing() -> pd.DataFrame:
    """A billing extract with every kind of difference, on a non-default index."""
    return pd.DataFrame(
        {
            "entryId": ["e1", "e2", "e3", "e4", "e9", "e6"],
            "billingId": ["B-1", "B-2", "B-3", "B-4", "B-9", "B-6"],
            "duration": [3600, 2160, 3600, 3600, 900, 3900],
            "workDate": [
                "2024-03-01",
                "2024-03-01",
                "2024-03-02",
                "2024-03-01",
                "2024-03-01",
                "2024-03-03",
            ],
            "matter": ["M-1", "M-1", "M-2", "M-9", "M-7", "M-1"],
        },
        index=[101, 102, 103, 104, 105, 106],
    )


@pytest.fixture
def rec(exported: pd.DataFrame, billing: pd.DataFrame) -> Reconciliation:
    return reconcile(exported, billing)


def status_of(rec: Reconciliation) -> dict[str, str]:
    return dict(zip(rec.rows["key"], rec.rows["status"].astype(str), strict=True))


# --- classification ----------------------------------------------------------------------------


def test_classes_each_kind_of_difference(rec: Reconciliation) -> None:
    assert status_of(rec) == {
        "e1": "matched",
        "e2": "duration_differs",
        "e3": "date_or_matter_differs",
        "e4": "date_or_matter_differs",
        "e5": "missing_in_billing",
        "e6": "duration_differs",
        "e9": "only_in_billing",
    }


def test_rows_have_documented_columns_and_types(rec: Reconciliation) -> None:
    rows = rec.rows
    assert tuple(rows.columns) == ROW_COLUMNS
    assert list(rows["status"].cat.categories) == list(STATUSES)
    assert str(rows["exported_seconds"].dtype) == "Int64"
    assert str(rows["billed_seconds"].dtype) == "Int64"
    assert rows["exported_date"].dtype == "datetime64[us]"  # one unit in every frame
    assert rows["billed_date"].dtype == "datetime64[us]"
    assert str(rows["duration_differs"].dtype) == "boolean"
    assert isinstance(rows.index, pd.RangeIndex)


def test_entries_keep_export_order_then_billing_only_records(rec: Reconciliation) -> None:
    assert rec.rows["key"].tolist() == ["e1", "e2", "e3", "e4", "e5", "e6", "e9"]
    assert rec.rows["_id"].isna().tolist() == [False] * 6 + [True]


def test_rows_name_the_entry_id_as_the_export_does(rec: Reconciliation) -> None:
    export_ids = ["e1", "e2", "e3", "e4", "e5", "e6"]
    assert rec.rows["_id"].tolist()[:6] == export_ids
    assert "entryId" not in rec.rows.columns
    with pytest.raises(KeyError, match="entryId"):  # the name before, retired after one release
        rec.rows["entryId"]


def test_duration_differs_wins_when_date_differs_too(rec: Reconciliation) -> None:
    row = rec.rows.set_index("key").loc["e6"]
    assert row["status"] == "duration_differs"
    assert row["differences"] == ["duration", "date"]
    assert bool(row["duration_differs"]) and bool(row["date_differs"])
    assert not bool(row["matter_differs"])
    assert row["detail"] == (
        "duration differs: exported 1.00 h (3600 s), billed 1.08 h (3900 s), "
        "difference +300 s; date differs: exported 2024-03-01, billed 2024-03-03"
    )


def test_differing_rows_explain_themselves(rec: Reconciliation) -> None:
    detail = rec.rows.set_index("key")["detail"]
    assert detail["e1"] == "matched"
    assert detail["e2"] == (
        "duration differs: exported 0.50 h (1800 s), billed 0.60 h (2160 s), difference +360 s"
    )
    assert detail["e3"] == "date differs: exported 2024-03-01, billed 2024-03-02"
    assert detail["e4"] == "matter differs: exported M-2, billed M-9"
    assert detail["e5"] == "missing in billing: no billing record has _id e5"
    assert detail["e9"] == "only in billing: no exported entry has _id e9 (billing record B-9)"


def test_carries_entry_and_billing_sides(rec: Reconciliation) -> None:
    e4 = rec.rows.set_index("key").loc["e4"]
    assert (e4["userId"], e4["initiative.externalId"], e4["initiative.client.externalId"]) == (
        "u2",
        "M-2",
        "C-2",
    )
    assert (e4["exported_matter"], e4["billed_matter"], e4["billingId"]) == ("M-2", "M-9", "B-4")
    assert e4["difference_seconds"] == 0
    e9 = rec.rows.set_index("key").loc["e9"]
    assert pd.isna(e9["userId"]) and pd.isna(e9["exported_seconds"])
    assert pd.isna(e9["duration_differs"])
    assert e9["billed_seconds"] == 900


def test_missing_billing_duration_is_a_difference(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [None], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    row = reconcile(exported.head(1), billing).rows.iloc[0]
    assert row["status"] == "duration_differs"
    assert "billed nothing" in row["detail"]


# --- units and tolerance -----------------------------------------------------------------------


def test_hours_unit_converts_to_seconds(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {
            "entryId": ["e1", "e2", "e3"],
            "hours": [1.0, 0.5, 0.1],
            "workDate": ["2024-03-01"] * 3,
            "matter": ["M-1", "M-1", "M-2"],
        }
    )
    rec = reconcile(exported.head(3), billing, duration="hours", duration_unit="hours")
    assert rec.rows["billed_seconds"].tolist() == [3600, 1800, 360]
    assert rec.rows["status"].tolist() == ["matched", "matched", "duration_differs"]


def test_minutes_unit_converts_to_seconds(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [60], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    rec = reconcile(exported.head(1), billing, duration_unit="minutes")
    assert rec.rows.loc[0, "status"] == "matched"


def test_timedelta_duration_is_read_as_is(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {
            "entryId": ["e1"],
            "duration": pd.to_timedelta(["1h"]),
            "workDate": ["2024-03-01"],
            "matter": ["M-1"],
        }
    )
    rec = reconcile(exported.head(1), billing, duration_unit="hours")
    assert rec.rows.loc[0, "billed_seconds"] == 3600
    assert rec.rows.loc[0, "status"] == "matched"


@pytest.mark.parametrize(
    ("billed", "tolerance", "status"),
    [
        (3600, 0, "matched"),
        (3601, 0, "duration_differs"),
        (3660, 60, "matched"),
        (3540, 60, "matched"),
        (3661, 60, "duration_differs"),
        (3539, 60, "duration_differs"),
    ],
)
def test_tolerance_bounds_duration_equality(
    exported: pd.DataFrame, billed: int, tolerance: int, status: str
) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [billed], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    rec = reconcile(exported.head(1), billing, tolerance_seconds=tolerance)
    assert rec.rows.loc[0, "status"] == status


def test_match_within_tolerance_says_so(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [3630], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    rec = reconcile(exported.head(1), billing, tolerance_seconds=60)
    assert rec.rows.loc[0, "detail"] == "matched (duration within tolerance: +30 s)"
    assert rec.to_acknowledge().loc[0, "outcome"] == "succeeded"


# --- keys --------------------------------------------------------------------------------------


def test_key_auto_picks_id_when_billing_values_are_entry_ids(rec: Reconciliation) -> None:
    assert (rec.key, rec.billing_key, rec.billing_id) == ("_id", "entryId", "billingId")


def test_key_auto_picks_external_id_when_billing_values_are_external_ids(
    exported: pd.DataFrame,
) -> None:
    billing = pd.DataFrame(
        {
            "entryId": ["X-e1", "X-e2"],  # named like an entry id, holds externalIds
            "duration": [3600, 1800],
            "workDate": ["2024-03-01"] * 2,
            "matter": ["M-1", "M-1"],
        }
    )
    rec = reconcile(exported, billing)
    assert rec.key == "externalId"
    assert rec.rows["status"].tolist()[:2] == ["matched", "matched"]


@pytest.mark.parametrize("column", ["entryId", "_id", "externalId"])
def test_billing_key_column_is_detected(exported: pd.DataFrame, column: str) -> None:
    values = ["X-e1"] if column == "externalId" else ["e1"]
    billing = pd.DataFrame(
        {column: values, "duration": [3600], "workDate": ["2024-03-01"], "matter": ["M-1"]}
    )
    rec = reconcile(exported, billing)
    assert rec.billing_key == column
    assert rec.rows.loc[0, "status"] == "matched"


def test_explicit_key_and_billing_key(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {
            "ref": ["X-e1"],
            "secs": [3600],
            "day": [dt.date(2024, 3, 1)],
            "matterNo": ["M-1"],
            "recordNo": ["R-1"],
        }
    )
    rec = reconcile(
        exported,
        billing,
        key="externalId",
        billing_key="ref",
        billing_id="recordNo",
        duration="secs",
        date="day",
        matter="matterNo",
    )
    assert (rec.key, rec.billing_key, rec.billing_id) == ("externalId", "ref", "recordNo")
    assert rec.rows.loc[0, "status"] == "matched"
    assert rec.to_acknowledge(include="matched").loc[0, "externalId"] == "R-1"


def test_entry_without_external_id_is_missing_and_never_pairs_with_a_keyless_record() -> None:
    exported = make_exported([{"_id": "e1", "externalId": None}, {"_id": "e2"}])
    billing = pd.DataFrame(
        {
            "externalId": [None, "X-e2"],
            "duration": [3600, 3600],
            "workDate": ["2024-03-01"] * 2,
            "matter": ["M-1", "M-1"],
        }
    )
    rec = reconcile(exported, billing, key="externalId")
    assert rec.rows["status"].tolist() == ["missing_in_billing", "matched", "only_in_billing"]
    assert rec.rows.loc[0, "detail"] == (
        "missing in billing: the entry has no externalId, so no billing record can refer to it"
    )
    assert rec.rows.loc[2, "detail"] == "only in billing: the billing record has no key"


def test_numeric_identifiers_from_a_spreadsheet_match_strings() -> None:
    exported = make_exported([{"_id": "e1", "externalId": "1234", "matter": "5001"}])
    billing = pd.DataFrame(
        {
            "externalId": [1234.0, np.nan],
            "duration": [3600, 60],
            "workDate": ["2024-03-01"] * 2,
            "matter": [5001, 5002],
        }
    )
    rec = reconcile(exported, billing)
    assert rec.key == "externalId"
    assert rec.rows["status"].tolist() == ["matched", "only_in_billing"]


# --- date-like inputs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "work_dates",
    [
        pd.Series(pd.to_datetime(["2024-03-01", "2024-03-02"])),
        pd.Series([dt.date(2024, 3, 1), dt.date(2024, 3, 2)], dtype=object),
        pd.Series(["2024-03-01", "2024-03-02"]),
        pd.Series(pd.to_datetime(["2024-03-01T00:00Z", "2024-03-02T00:00Z"])),
        pd.Series(
            pd.arrays.ArrowExtensionArray(pa.array([dt.date(2024, 3, 1), dt.date(2024, 3, 2)]))
        ),
    ],
    ids=["datetime64", "date", "iso-string", "tz-aware", "arrow-date32"],
)
def test_work_date_accepts_datetimes_dates_and_strings(work_dates: pd.Series) -> None:
    exported = make_exported([{"_id": "e1"}, {"_id": "e2"}])
    exported["workDate"] = work_dates
    billing = pd.DataFrame(
        {
            "entryId": ["e1", "e2"],
            "duration": [3600, 3600],
            "workDate": [pd.Timestamp("2024-03-01 17:30"), dt.date(2024, 3, 2)],
            "matter": ["M-1", "M-1"],
        }
    )
    rec = reconcile(exported, billing)
    assert rec.rows["status"].tolist() == ["matched", "matched"]


def test_arrow_backed_frames_are_read() -> None:
    exported = pa.table(
        {
            "_id": ["e1", "e2"],
            "externalId": ["X-1", None],
            "userId": ["u1", "u2"],
            "workDate": pa.array([dt.date(2024, 3, 1), dt.date(2024, 3, 2)], pa.date32()),
            "incrementDurationInSeconds": pa.array([3600, 60], pa.int64()),
            "initiative.externalId": ["M-1", "M-2"],
            "initiative.client.externalId": ["C-1", "C-2"],
        }
    ).to_pandas(types_mapper=pd.ArrowDtype)
    billing = pa.table(
        {
            "entryId": ["e1", "e2"],
            "hours": pa.array([1.0, None], pa.float64()),
            "workDate": pa.array([dt.date(2024, 3, 1), dt.date(2024, 3, 2)], pa.date32()),
            "matter": ["M-1", "M-2"],
        }
    ).to_pandas(types_mapper=pd.ArrowDtype)
    rec = reconcile(exported, billing, duration="hours", duration_unit="hours")
    assert rec.rows["status"].tolist() == ["matched", "duration_differs"]


# --- acknowledgements --------------------------------------------------------------------------


def test_to_acknowledge_has_exactly_the_acknowledge_columns(rec: Reconciliation) -> None:
    ack = rec.to_acknowledge()
    assert (
        tuple(ack.columns)
        == ACKNOWLEDGE_COLUMNS
        == (
            "userId",
            "entryId",
            "outcome",
            "externalId",
            "errors",
        )
    )
    assert ack["entryId"].tolist() == ["e1", "e2", "e3", "e4", "e5", "e6"]
    assert ack["outcome"].tolist() == ["succeeded"] + ["failed"] * 5
    assert ack["userId"].tolist() == ["u1", "u1", "u2", "u2", "u3", "u3"]
    assert all(isinstance(e, list) for e in ack["errors"])
    assert isinstance(ack.index, pd.RangeIndex)


def test_to_acknowledge_excludes_billing_only_records(rec: Reconciliation) -> None:
    assert "e9" not in rec.to_acknowledge()["entryId"].tolist()


def test_succeeded_carries_billing_record_id_and_no_errors(rec: Reconciliation) -> None:
    ack = rec.to_acknowledge().set_index("entryId")
    assert ack.loc["e1", "externalId"] == "B-1"
    assert ack.loc["e1", "errors"] == []


def test_failed_carries_reasons_and_no_external_id(rec: Reconciliation) -> None:
    ack = rec.to_acknowledge().set_index("entryId")
    assert ack["externalId"].drop("e1").isna().all()
    assert ack.loc["e5", "errors"] == ["missing in billing: no billing record has _id e5"]
    assert ack.loc["e6", "errors"] == [
        "duration differs: exported 1.00 h (3600 s), billed 1.08 h (3900 s), difference +300 s",
        "date differs: exported 2024-03-01, billed 2024-03-03",
    ]
    assert ack.loc["e4", "errors"] == ["matter differs: exported M-2, billed M-9"]


def test_to_acknowledge_frame_passes_the_acknowledge_checks(rec: Reconciliation) -> None:
    from toolkit._egress.acknowledgements import check_acknowledgements

    checked = check_acknowledgements(rec.to_acknowledge())
    assert checked["entryId"].tolist() == ["e1", "e2", "e3", "e4", "e5", "e6"]


def test_succeeded_external_id_falls_back_to_entry_external_id_then_key() -> None:
    exported = make_exported(
        [{"_id": "e1", "externalId": "X-1"}, {"_id": "e2", "externalId": None}]
    )
    billing = pd.DataFrame(
        {
            "entryId": ["e1", "e2"],
            "duration": [3600, 3600],
            "workDate": ["2024-03-01"] * 2,
            "matter": ["M-1", "M-1"],
        }
    )
    ack = reconcile(exported, billing).to_acknowledge()
    assert ack["externalId"].tolist() == ["X-1", "e2"]


@pytest.mark.parametrize(
    ("include", "entry_ids"),
    [
        (("matched",), ["e1"]),
        ("failed", ["e2", "e3", "e4", "e5", "e6"]),
        (("missing_in_billing",), ["e5"]),
        (("matched", "duration_differs"), ["e1", "e2", "e6"]),
    ],
)
def test_to_acknowledge_include_selects_rows(
    rec: Reconciliation, include: tuple[str, ...] | str, entry_ids: list[str]
) -> None:
    assert rec.to_acknowledge(include=include)["entryId"].tolist() == entry_ids


@pytest.mark.parametrize("include", [("only_in_billing",), ("bogus",)])
def test_to_acknowledge_rejects_unknown_include(rec: Reconciliation, include: tuple) -> None:
    with pytest.raises(ConfigError, match=include[0]):
        rec.to_acknowledge(include=include)


# --- summaries ---------------------------------------------------------------------------------


def test_summary_counts_every_status(rec: Reconciliation) -> None:
    assert rec.summary.to_dict() == {
        "matched": 1,
        "missing_in_billing": 1,
        "only_in_billing": 1,
        "duration_differs": 2,
        "date_or_matter_differs": 2,
        "code_differs": 0,
    }
    assert rec.summary.index.tolist() == list(STATUSES)


def test_by_user_counts_statuses_and_hours(rec: Reconciliation) -> None:
    table = rec.by_user()
    assert table.loc["u1", list(STATUSES)].tolist() == [1, 0, 0, 1, 0, 0]
    assert table.loc["u1", "entries"] == 2
    assert table.loc["u1", "hours_exported"] == pytest.approx(1.5)
    assert table.loc["u1", "hours_billed"] == pytest.approx(1.6)
    assert table.loc["u1", "hours_difference"] == pytest.approx(0.1)
    assert table.loc["u3", "missing_in_billing"] == 1
    assert table["only_in_billing"].sum() == 1  # counted on the row with no user
    assert table["hours_billed"].sum() == pytest.approx(rec.rows["billed_seconds"].sum() / 3600)


def test_by_initiative_groups_billing_only_records_by_their_matter(rec: Reconciliation) -> None:
    table = rec.by_initiative()
    assert table.index.tolist() == ["M-1", "M-2", "M-3", "M-7"]
    assert table.loc["M-7", "only_in_billing"] == 1
    assert table.loc["M-7", "hours_billed"] == pytest.approx(0.25)
    assert table.loc["M-2", "date_or_matter_differs"] == 2
    assert table.loc["M-2", "initiative.client.externalId"] == "C-2"
    assert table.loc["M-1", "entries"] == 3


def test_repr_shows_counts_and_hours(rec: Reconciliation) -> None:
    text = repr(rec)
    assert text.startswith("Reconciliation(key='_id', billing_key='entryId'")
    assert "7 rows" in text
    assert "duration_differs" in text and "hours exported 5.50, billed 4.93" in text


def test_empty_frames_give_empty_results() -> None:
    exported = make_exported([{"_id": "e1"}]).iloc[0:0]
    billing = pd.DataFrame(columns=["entryId", "duration", "workDate", "matter"])
    rec = reconcile(exported, billing)
    assert rec.rows.empty and tuple(rec.rows.columns) == ROW_COLUMNS
    assert tuple(rec.to_acknowledge().columns) == ACKNOWLEDGE_COLUMNS
    assert rec.summary.sum() == 0
    assert rec.by_user().empty


# --- errors ------------------------------------------------------------------------------------


def test_missing_billing_column_names_the_closest(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "durationHours": [1.0], "workDate": ["2024-03-01"], "matter": ["M"]}
    )
    with pytest.raises(MissingColumnError) as info:  # named: a missing one is an error
        reconcile(exported, billing, duration="duration")
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, ValidationError)
    assert err.table == "billing" and err.missing == ["duration"]
    assert err.suggestions == {"duration": "durationHours"}
    assert "'duration' (closest: 'durationHours')" in str(err)
    assert err.failure_cases["column"].tolist() == ["duration"]


def test_missing_exported_column_is_reported(exported: pd.DataFrame, billing) -> None:
    with pytest.raises(MissingColumnError, match="'userId' \\(closest: 'userid'\\)"):
        reconcile(exported.rename(columns={"userId": "userid"}), billing)


def test_missing_billing_key_column_is_reported(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entry_id": ["e1"], "duration": [1], "workDate": ["2024-03-01"], "matter": ["M"]}
    )
    with pytest.raises(MissingColumnError, match="'entryId' \\(closest: 'entry_id'\\)"):
        reconcile(exported, billing)


def test_duplicate_billing_keys_are_listed(exported: pd.DataFrame, billing) -> None:
    doubled = pd.concat([billing, billing.iloc[[0, 0, 2]]])
    with pytest.raises(DuplicateKeyError) as info:
        reconcile(exported, doubled)
    err = info.value
    assert err.table == "billing" and err.column == "entryId"
    assert err.keys == ["e1", "e3"]
    assert len(err.failure_cases) == 5
    assert "'e1', 'e3'" in str(err)


def test_duplicate_exported_ids_are_rejected(exported: pd.DataFrame, billing) -> None:
    with pytest.raises(DuplicateKeyError, match="exported frame .* '_id': 'e1'"):
        reconcile(pd.concat([exported, exported.head(1)]), billing)


def test_unreadable_date_is_a_validation_error(exported: pd.DataFrame, billing) -> None:
    billing = billing.assign(workDate=["2024-03-01", "not a date", "2024-03-02", "x", "y", "z"])
    with pytest.raises(ValidationError, match="billing column 'workDate': 4 value") as info:
        reconcile(exported, billing)
    assert info.value.failure_cases["row"].tolist() == [102, 104, 105, 106]


def test_unreadable_duration_is_a_validation_error(exported: pd.DataFrame, billing) -> None:
    billing = billing.assign(duration=["1", "2", "three", "4", "5", "6"])
    with pytest.raises(ValidationError, match="'three'"):
        reconcile(exported, billing)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"key": "entry"}, "key must be"),
        ({"duration_unit": "days"}, "duration_unit"),
        ({"tolerance_seconds": -1}, "tolerance_seconds"),
        ({"tolerance_seconds": float("nan")}, "tolerance_seconds"),
        ({"billing_id": "nope"}, "no column 'nope'"),
    ],
)
def test_bad_arguments_raise_value_errors(exported, billing, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        reconcile(exported, billing, **kwargs)


def test_non_frames_raise_type_error(exported: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="billing must be a pandas DataFrame, got list"):
        reconcile(exported, [{"entryId": "e1"}])


def test_a_polars_export_and_a_pyarrow_billing_table_reconcile_like_pandas(
    exported: pd.DataFrame, billing: pd.DataFrame
) -> None:
    expected = reconcile(exported, billing)
    rec = reconcile(pl.from_pandas(exported), pa.Table.from_pandas(billing, preserve_index=False))
    assert isinstance(rec.rows, pd.DataFrame)
    pd.testing.assert_frame_equal(rec.rows, expected.rows)
    pd.testing.assert_frame_equal(rec.to_acknowledge(), expected.to_acknowledge())
    assert (rec.key, rec.billing_key, rec.billing_id, rec.compared) == (
        expected.key,
        expected.billing_key,
        expected.billing_id,
        expected.compared,
    )


# --- scale and module hygiene ------------------------------------------------------------------


def test_reconciles_a_large_frame_vectorised() -> None:
    n = 200_000
    ids = pd.Series([f"e{i}" for i in range(n)])
    exported = pd.DataFrame(
        {
            "_id": ids,
            "externalId": "X-" + ids,
            "userId": "u" + (pd.Series(np.arange(n)) % 97).astype(str),
            "workDate": pd.Timestamp("2024-01-01"),
            "incrementDurationInSeconds": np.full(n, 360, dtype="int64"),
            "initiative.externalId": "M-" + (pd.Series(np.arange(n)) % 501).astype(str),
            "initiative.client.externalId": "C-1",
        }
    )
    billing = pd.DataFrame(
        {
            "entryId": ids.iloc[1:].to_numpy(),
            "duration": np.full(n - 1, 0.1),
            "workDate": "2024-01-01",
            "matter": exported["initiative.externalId"].iloc[1:].to_numpy(),
        }
    )
    billing.loc[5, "duration"] = 0.2
    rec = reconcile(exported, billing, duration_unit="hours")
    assert rec.summary.to_dict() == {
        "matched": n - 2,
        "missing_in_billing": 1,
        "only_in_billing": 0,
        "duration_differs": 1,
        "date_or_matter_differs": 0,
        "code_differs": 0,
    }
    assert len(rec.to_acknowledge()) == n


def test_package_level_reconcile_is_callable(exported: pd.DataFrame, billing) -> None:
    import toolkit

    rec = toolkit.reconcile(exported, billing, tolerance_seconds=0)
    assert isinstance(rec, Reconciliation)
    assert rec.summary["matched"] == 1


def test_docstring_examples_run() -> None:
    result = doctest.testmod(reconcile_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# --- value columns present on one side only, and text dates ---------------------------------


def test_id_and_duration_only_billing_extract_reconciles(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1", "e2", "e3", "e9"], "duration": [3600, 2160, 3600, 60]}
    )
    rec = reconcile(exported, billing)
    assert rec.compared == ("duration",)
    assert status_of(rec) == {
        "e1": "matched",
        "e2": "duration_differs",
        "e3": "matched",  # its date differs in the full extract: not compared here
        "e4": "missing_in_billing",
        "e5": "missing_in_billing",
        "e6": "missing_in_billing",
        "e9": "only_in_billing",
    }
    paired = rec.rows[rec.rows["key"].isin(["e1", "e2", "e3"])]
    assert paired["date_differs"].isna().all() and paired["matter_differs"].isna().all()
    assert paired["billed_date"].isna().all() and paired["billed_matter"].isna().all()
    assert "compared duration (not compared: date, matter)" in repr(rec)
    assert "not compared: date, matter" in rec._repr_html_()


def test_skipped_comparisons_never_make_a_difference(exported: pd.DataFrame) -> None:
    exported = exported.drop(columns=["workDate", "incrementDurationInSeconds"])
    rec = reconcile(exported, pd.DataFrame({"entryId": ["e1"], "matter": ["M-1"]}))
    assert rec.compared == ("matter",)
    assert rec.rows.loc[0, "status"] == "matched"
    assert rec.to_acknowledge().iloc[0]["outcome"] == "succeeded"


def test_key_only_billing_extract_compares_presence_only(exported: pd.DataFrame) -> None:
    rec = reconcile(exported, pd.DataFrame({"entryId": ["e1", "e2"]}))
    assert rec.compared == ()
    assert rec.summary[["matched", "missing_in_billing"]].tolist() == [2, 4]
    assert "compared nothing but the keys" in repr(rec)


@pytest.mark.parametrize("argument", ["duration", "date", "matter"])
def test_a_named_value_column_that_is_missing_is_an_error(
    exported: pd.DataFrame, argument: str
) -> None:
    billing = pd.DataFrame({"entryId": ["e1"], "duration": [3600]})
    with pytest.raises(MissingColumnError, match="billing frame has no column 'billed'"):
        reconcile(exported, billing, **{argument: "billed"})


def test_a_default_column_missing_with_a_similar_one_warns_how_to_compare_it(
    exported: pd.DataFrame,
) -> None:
    billing = pd.DataFrame({"entryId": ["e1"], "durationHours": [1.0]})
    with pytest.warns(UserWarning, match="pass duration='durationHours'"):
        rec = reconcile(exported, billing)
    assert rec.compared == ()


def test_a_compared_value_needs_its_exported_column(exported: pd.DataFrame, billing) -> None:
    with pytest.raises(MissingColumnError, match="exported frame has no column 'workDate'"):
        reconcile(exported.drop(columns=["workDate"]), billing)


def _dated(dates: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    exported = make_exported(
        [{"_id": "e1", "workDate": "2026-04-03"}, {"_id": "e2", "workDate": "2026-04-13"}]
    )
    billing = pd.DataFrame(
        {
            "entryId": ["e1", "e2"],
            "duration": [3600, 3600],
            "workDate": dates,
            "matter": ["M-1", "M-1"],
        }
    )
    return exported, billing


def test_ambiguous_dates_are_refused_naming_the_column_and_the_value() -> None:
    exported, billing = _dated(["03/04/2026", "13/04/2026"])
    billing = billing.rename(columns={"workDate": "Date worked"})
    with pytest.raises(ValidationError) as info:
        reconcile(exported, billing, date="Date worked")
    message = str(info.value)
    assert "'Date worked'" in message and "'03/04/2026'" in message
    assert "dayfirst" in message
    assert info.value.failure_cases["row"].tolist() == [0]
    assert info.value.failure_cases["value"].tolist() == ["03/04/2026"]


def test_dayfirst_reads_ambiguous_dates() -> None:
    exported, billing = _dated(["03/04/2026", "13/04/2026"])
    assert reconcile(exported, billing, dayfirst=True).summary["matched"] == 2
    month_first = reconcile(exported, billing, dayfirst=False)
    assert status_of(month_first) == {"e1": "date_or_matter_differs", "e2": "matched"}
    assert month_first.rows.loc[0, "billed_date"] == pd.Timestamp("2026-03-04")


@pytest.mark.parametrize(
    "dates",
    [["3 Apr 2026", "Apr 13, 2026"], ["2026-04-03", "13/04/2026"], [" 2026-04-03 ", "13.04.2026"]],
    ids=["named-month", "iso-and-one-order-only", "padded-iso-and-dots"],
)
def test_dates_that_read_the_same_both_ways_are_accepted(dates: list[str]) -> None:
    exported, billing = _dated(dates)
    rec = reconcile(exported, billing)
    assert rec.summary["matched"] == 2


def test_iso_dates_ignore_dayfirst() -> None:
    exported, billing = _dated(["2026-04-03", "2026-04-13T09:00:00+02:00"])
    assert reconcile(exported, billing, dayfirst=True).summary["matched"] == 2


def test_blank_billing_cells_are_missing_values(exported: pd.DataFrame) -> None:
    billing = pd.DataFrame(
        {"entryId": ["e1"], "duration": [" "], "workDate": [""], "matter": ["M-1"]}
    )
    row = reconcile(exported, billing).rows.iloc[0]
    assert row["status"] == "duration_differs"
    assert pd.isna(row["billed_seconds"]) and pd.isna(row["billed_date"])


def test_dayfirst_must_be_a_boolean(exported: pd.DataFrame, billing) -> None:
    with pytest.raises(ConfigError, match="dayfirst"):
        reconcile(exported, billing, dayfirst="yes")


def test_every_timestamp_of_the_result_is_in_microseconds(rec: Reconciliation) -> None:
    # one unit in every frame the toolkit returns: that of pd.read_parquet of its own files
    frames = {"rows": rec.rows, "acknowledge": rec.to_acknowledge()}
    units = {
        f"{name}.{col}": str(frame[col].dtype)
        for name, frame in frames.items()
        for col in frame
        if pd.api.types.is_datetime64_any_dtype(frame[col])
    }
    assert units and all("[us" in u for u in units.values()), units


def test_rows_written_before_the_rename_still_read_as_a_reconciliation() -> None:
    from toolkit._reconciliation import acknowledgements_from_rows, is_reconciliation

    old = pd.DataFrame(
        {
            "key": ["e1", "e2"],
            "entryId": ["e1", "e2"],
            "userId": ["u1", "u1"],
            "status": ["matched", "missing_in_billing"],
            "detail": ["matched", "x"],
        }
    )
    assert is_reconciliation(old)
    acks = acknowledgements_from_rows(old)
    assert acks[["entryId", "outcome"]].values.tolist() == [["e1", "succeeded"], ["e2", "failed"]]


def test_a_bare_date_upper_bound_is_the_whole_day_without_a_warning() -> None:
    exported = pd.DataFrame(
        {
            "_id": ["e1", "e2", "e3"],
            "userId": ["u1", "u1", "u1"],
            "updatedAt": ["2026-11-22T00:00:00Z", "2026-11-22T23:59:59.999Z", "2026-11-23"],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = reconcile(exported, pd.DataFrame({"entryId": ["e1"]}), on_or_before="2026-11-22")
    assert rec.rows["_id"].tolist() == ["e1", "e2"]  # as pandas reads a day: all of it


# -- reconcile compares only the entries released in a window ----------------------------------


def _synced_and_weekly() -> tuple[pd.DataFrame, pd.DataFrame]:
    """213 exported entries released over a month, and a billing extract of the 12 released in
    the week after 2026-11-16."""
    released = [pd.Timestamp("2026-10-20T09:00Z") + pd.Timedelta(hours=3 * i) for i in range(201)]
    released += [pd.Timestamp("2026-11-17T09:00Z") + pd.Timedelta(hours=8 * i) for i in range(12)]
    ids = [f"e{i:03d}" for i in range(len(released))]
    exported = pd.DataFrame(
        {
            "_id": ids,
            "userId": "u1",
            "workDate": [r.strftime("%Y-%m-%d") for r in released],
            "incrementDurationInSeconds": 3600,
            "initiative.externalId": "M-1",
            "updatedAt": pd.Series(released, dtype="datetime64[us, UTC]"),
        }
    )
    week = exported.tail(12)
    billing = pd.DataFrame(
        {"entryId": week["_id"], "duration": 3600, "workDate": week["workDate"], "matter": "M-1"}
    )
    return exported, billing


def test_reconcile_in_a_release_window_leaves_the_other_weeks_out() -> None:
    exported, billing = _synced_and_weekly()
    assert toolkit.reconcile(exported, billing).summary["missing_in_billing"] == 201
    rec = toolkit.reconcile(exported, billing, after="2026-11-16", on_or_before="2026-11-23")
    assert rec.summary.to_dict() == {
        "matched": 12,
        "missing_in_billing": 0,
        "only_in_billing": 0,
        "duration_differs": 0,
        "date_or_matter_differs": 0,
        "code_differs": 0,
    }
    assert (
        "entries released after 2026-11-16T00:00:00.000Z, on or before "
        "2026-11-23T23:59:59.999Z by updatedAt: "
        "12 of 213" in repr(rec)
    )


def test_reconcile_cli_takes_the_release_window(tmp_path: Path, capsys: Any) -> None:
    exported, billing = _synced_and_weekly()
    exported.to_csv(tmp_path / "entries.csv", index=False)
    billing.to_csv(tmp_path / "week.csv", index=False)
    argv = ["reconcile", str(tmp_path / "entries.csv"), str(tmp_path / "week.csv")]
    assert main(argv) == 1
    # the window's entries are the service's export of it (tests/cli/test_reconcile_cli.py);
    # an ambiguous bound is refused before any request
    assert main([*argv, "--after", "11/12/2026"]) == 2
    assert "reads differently day first" in capsys.readouterr().err


def test_messages_speak_the_command_line_and_rows_acknowledge_what_is_asked() -> None:
    with spoken_as_cli():
        assert advise(("duration", "Hours"), ("duration_unit", "hours")) == (
            "add --duration Hours --duration-unit hours"
        )
    rows = pd.DataFrame(
        {
            "key": ["e1", "e2"],
            "_id": ["e1", "e2"],
            "userId": ["u1", "u1"],
            "billingId": ["B-1", None],
            "status": ["matched", "missing_in_billing"],
            "detail": ["matched", "missing"],
        }
    )
    acks = acknowledgements_from_rows(rows)
    assert acks["externalId"].tolist()[0] == "B-1"
    assert acknowledgements_from_rows(rows, include=["matched"])["entryId"].tolist() == ["e1"]
    exported = pd.DataFrame({"_id": ["e1", "e2"], "userId": ["u1", "u1"]})
    exported["incrementDurationInSeconds"] = [3600, 60]
    only = reconcile(exported, pd.DataFrame({"entryId": ["e1"], "duration": [3600]}))
    assert only.compared == ("duration",)
    assert only.rows["status"].tolist() == ["matched", "missing_in_billing"]
