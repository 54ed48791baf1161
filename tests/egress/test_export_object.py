"""The Export result object: windows, concatenation, Parquet and CSV round trips, summaries."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import orjson
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from toolkit._core.windows import MAX_WINDOWS, TimeLike, Window
from toolkit._egress.export import Export
from toolkit._egress.schemas import (
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit.errors import ConfigError, ValidationError
from toolkit.testing import fake_export_entries, fake_export_entry, fake_pending_entries

SAMPLES = Path(__file__).parent / "sample_payloads"
UTC = dt.UTC


def ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


@pytest.fixture(scope="module")
def export() -> Export:
    sample = orjson.loads((SAMPLES / "export_entries.json").read_bytes())
    return Export.from_records(sample + fake_export_entries(300, seed=21))


@pytest.fixture(scope="module")
def pending() -> Export:
    sample = orjson.loads((SAMPLES / "pending_entries.json").read_bytes())
    return Export.from_records(sample + fake_pending_entries(200, seed=22), kind="pending")


def _sorted(ex: Export) -> tuple[pd.DataFrame, pd.DataFrame]:
    return (
        ex.entries.sort_values("_id").reset_index(drop=True),
        ex.codes.sort_values(["entryId", "position"]).reset_index(drop=True),
    )


def assert_same_export(got: Export, want: Export, *, ordered: bool = False) -> None:
    assert got.kind == want.kind
    if ordered:
        pd.testing.assert_frame_equal(got.entries, want.entries)
        pd.testing.assert_frame_equal(got.codes, want.codes)
        return
    for g, w in zip(_sorted(got), _sorted(want), strict=True):
        pd.testing.assert_frame_equal(g, w)


# ----------------------------------------------------------------------------- Window.split


def split_windows(
    after: TimeLike, on_or_before: TimeLike, window: str | None = None
) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    return Window.of(after, on_or_before).split(window)


def test_no_window_gives_the_whole_range():
    assert split_windows("2026-11-01", "2026-11-08T00:00") == [(ts("2026-11-01"), ts("2026-11-08"))]


def test_windows_are_consecutive_and_cover_the_range():
    windows = split_windows("2026-11-01T06:00", "2026-11-08T06:00", "1D")
    assert len(windows) == 8
    assert windows[0] == (ts("2026-11-01T06:00"), ts("2026-11-02"))
    assert windows[-1] == (ts("2026-11-08"), ts("2026-11-08T06:00"))
    assert all(a < b for a, b in windows)
    assert all(prev[1] == nxt[0] for prev, nxt in zip(windows, windows[1:], strict=False))


def test_an_exact_multiple_leaves_no_empty_tail_window():
    windows = split_windows("2026-11-01", "2026-11-15T00:00", "7D")
    assert windows == [
        (ts("2026-11-01"), ts("2026-11-08")),
        (ts("2026-11-08"), ts("2026-11-15")),
    ]


def test_the_last_window_is_cut_at_on_or_before():
    windows = split_windows("2026-11-01", "2026-11-02T01:30", "12h")
    assert windows[-1] == (ts("2026-11-02T00:00"), ts("2026-11-02T01:30"))


def test_sub_day_windows_step_from_after_exactly():
    windows = split_windows("2026-11-01T01:15", "2026-11-01T10:00", "4h")
    assert [b for _, b in windows] == [
        ts("2026-11-01T05:15"),
        ts("2026-11-01T09:15"),
        ts("2026-11-01T10:00"),
    ]


def test_day_windows_end_at_midnight_utc():
    windows = split_windows("2026-11-01T18:00", "2026-11-15T00:00", "7D")
    assert windows == [
        (ts("2026-11-01T18:00"), ts("2026-11-08")),
        (ts("2026-11-08"), ts("2026-11-15")),
    ]


def test_a_window_longer_than_the_range_gives_one_window():
    assert split_windows("2026-11-01", "2026-11-02T00:00", "7D") == [
        (ts("2026-11-01"), ts("2026-11-02"))
    ]


def test_calendar_offsets_put_inner_edges_at_midnight_of_the_offset_dates():
    windows = split_windows("2026-01-15T10:00", "2026-04-01T00:00", "MS")
    assert [b for _, b in windows] == [ts("2026-02-01"), ts("2026-03-01"), ts("2026-04-01")]
    assert windows[0][0] == ts("2026-01-15T10:00")


@pytest.mark.parametrize(
    "after",
    [
        "2026-11-01T00:00:00",
        "2026-11-01T00:00:00Z",
        "2026-11-01T01:00:00+01:00",
        dt.datetime(2026, 11, 1),
        dt.datetime(2026, 11, 1, tzinfo=UTC),
        dt.date(2026, 11, 1),
        pd.Timestamp("2026-11-01"),
        pd.Timestamp("2026-10-31T20:00", tz="America/New_York"),
    ],
)
def test_bounds_accept_datetime_timestamp_or_text_and_naive_means_utc(after):
    (start, end), *_ = split_windows(after, "2026-11-02T00:00", "1D")
    assert start == ts("2026-11-01") and str(start.tz) == "UTC"
    assert end == ts("2026-11-02")


@pytest.mark.parametrize(
    ("after", "before"),
    [
        ("2026-11-02", "2026-11-01"),
        ("2026-11-01", "2026-11-01T00:00"),
        ("2026-11-01T00:00:00Z", "2026-11-01T00:00"),
    ],
)
def test_after_not_before_on_or_before_raises_a_value_error(after, before):
    with pytest.raises(ConfigError, match="must be before on_or_before") as info:
        split_windows(after, before, "1D")
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("window", ["fortnight", "0D", "-1D"])
def test_an_invalid_window_raises(window):
    with pytest.raises(ConfigError, match="window"):
        split_windows("2026-11-01", "2026-11-02T00:00", window)


def test_an_unreadable_bound_raises():
    with pytest.raises(ConfigError, match="after"):
        split_windows("last tuesday", "2026-11-02T00:00")


def test_too_many_windows_raises():
    with pytest.raises(ConfigError, match=str(MAX_WINDOWS)):
        split_windows("2026-01-01", "2027-01-01T00:00", "1s")


# ----------------------------------------------------------------------------- the object


def test_len_and_repr_summarise_the_export(export):
    assert len(export) == 304
    text = repr(export)
    assert text.startswith("Export(kind='export', entries=304, codes=")
    assert "workDate=" in text and "users=" in text and "hours=" in text


def test_kind_must_be_export_or_pending(export):
    with pytest.raises(ConfigError, match="kind"):
        Export(export.entries, export.codes, kind="other")  # type: ignore[arg-type]


def test_from_json_equals_from_records():
    records = fake_export_entries(50, seed=2)
    assert_same_export(
        Export.from_json(orjson.dumps(records)), Export.from_records(records), ordered=True
    )


def test_empty_exports_have_every_column(export, pending):
    # the sample's futureField (not in the spec) is a further column of its own
    known = export.entries.columns.drop("futureField.ignored")
    assert list(Export.empty().entries.columns) == list(known)
    assert list(Export.empty("pending").codes.columns) == list(pending.codes.columns)


def test_codes_wide_method(export):
    wide = export.codes_wide()
    assert len(wide) == len(export)
    assert wide.index.tolist() == export.entries["_id"].tolist()


def test_validate_passes_good_tables_and_collects_failures(export):
    assert export.validate() is export
    broken = Export(
        export.entries.assign(unitIncrementCount=-1),
        export.codes.assign(**{"code.type.semanticType": "mood"}),
    )
    with pytest.raises(ValidationError) as info:
        broken.validate()
    cases = info.value.failure_cases
    assert set(cases["table"]) == {"entries", "codes"}
    assert {"unitIncrementCount", "code.type.semanticType"} <= set(cases["column"])
    assert cases["externalId"].notna().any()


# ----------------------------------------------------------------------------- concat


def test_concat_drops_repeated_entries_keeping_the_last_with_its_codes():
    first = Export.from_records(
        [fake_export_entry(_id="a", codes=3), fake_export_entry(_id="b", codes=1)]
    )
    second = Export.from_records(
        [fake_export_entry(_id="b", codes=2, summary="updated"), fake_export_entry(_id="c")]
    )
    both = Export.concat([first, second])
    assert both.entries["_id"].tolist() == ["a", "b", "c"]
    assert both.entries.set_index("_id").loc["b", "summary"] == "updated"
    per_entry = both.codes.groupby("entryId")["position"].apply(list).to_dict()
    assert per_entry == {"a": [0, 1, 2], "b": [0, 1], "c": [0, 1, 2]}
    assert both.entries.index.equals(pd.RangeIndex(3))


def test_concat_keeps_dtypes_and_handles_empty_windows(export):
    both = Export.concat([Export.empty(), export, Export.empty()])
    assert_same_export(both, export, ordered=True)
    known = export.entries.dtypes.drop("futureField.ignored")  # the sample's unknown field
    assert Export.concat([Export.empty()]).entries.dtypes.equals(known)


def test_concat_of_windows_of_one_export_equals_the_export():
    records = fake_export_entries(90, seed=6)
    windows = [Export.from_records(records[i : i + 30]) for i in range(0, 90, 30)]
    assert_same_export(Export.concat(windows), Export.from_records(records), ordered=True)


def test_concat_refuses_nothing_and_mixed_kinds(export, pending):
    with pytest.raises(ConfigError, match="at least one"):
        Export.concat([])
    with pytest.raises(ConfigError, match="different kinds"):
        Export.concat([export, pending])


# ----------------------------------------------------------------------------- Parquet


def test_parquet_round_trip_keeps_rows_and_types(export, tmp_path):
    back = Export.read_parquet(export.to_parquet(tmp_path / "ds"))
    assert_same_export(back, export)
    ExportEntriesSchema.validate(back.entries, lazy=True)
    ExportCodesSchema.validate(back.codes, lazy=True)


def test_parquet_round_trip_of_pending_keeps_the_tags_list(pending, tmp_path):
    back = Export.read_parquet(pending.to_parquet(tmp_path / "ds"))
    assert back.kind == "pending"
    assert_same_export(back, pending)
    assert str(back.entries["initiativeProps.tags"].dtype) == "list<item: string>[pyarrow]"
    PendingEntriesSchema.validate(back.entries, lazy=True)
    PendingCodesSchema.validate(back.codes, lazy=True)


def _listed(value: object) -> list[object] | None:
    """A list cell as a plain list (None when missing), however the reader holds it."""
    if value is None or value is pd.NA:
        return None
    return list(value)  # type: ignore[call-overload]


def test_pandas_and_polars_read_the_pending_files_with_their_tags_list(pending, tmp_path):
    root = pending.to_parquet(tmp_path / "ds")
    entries = pd.read_parquet(root / "entries")
    assert len(entries) == len(pending.entries)
    tags = entries.set_index("_id")["initiativeProps.tags"]
    for entry_id, held in zip(
        pending.entries["_id"], pending.entries["initiativeProps.tags"], strict=True
    ):
        assert _listed(tags[entry_id]) == _listed(held)
    assert pl.read_parquet(root / "entries" / "**" / "*.parquet").height == len(entries)


def test_parquet_default_partitions_both_tables_by_work_month(export, tmp_path):
    root = export.to_parquet(tmp_path / "ds")
    months = sorted(os.listdir(root / "entries"))
    assert months == sorted(os.listdir(root / "codes"))
    assert all(m.startswith("workMonth=") for m in months)
    assert "workMonth=2026-11" in months
    codes_file = next((root / "codes" / "workMonth=2026-11").glob("*.parquet"))
    ids = set(pq.read_table(codes_file)["entryId"].to_pylist())
    nov = export.entries.loc[export.entries["workDate"].dt.strftime("%Y-%m") == "2026-11", "_id"]
    assert ids <= set(nov)


def test_parquet_stores_work_date_as_a_date(export, tmp_path):
    root = export.to_parquet(tmp_path / "ds", partition_cols=[])
    schema = pq.read_schema(next((root / "entries").glob("*.parquet")))
    assert str(schema.field("workDate").type) == "timestamp[us]"  # issue 20: was date32
    assert str(schema.field("createdAt").type) == "timestamp[us, tz=UTC]"


@pytest.mark.parametrize(
    "partition_cols",
    [[], ["userId"], ["workDate"], ["unitIncrementCount"], ["initiative.client.externalId"]],
)
def test_parquet_round_trip_with_any_partitioning(export, tmp_path, partition_cols):
    back = Export.read_parquet(export.to_parquet(tmp_path / "ds", partition_cols=partition_cols))
    assert_same_export(back, export)


def test_parquet_rejects_an_unknown_partition_column(export, tmp_path):
    with pytest.raises(ConfigError, match="cannot partition"):
        export.to_parquet(tmp_path / "ds", partition_cols=["nope"])


def test_parquet_refuses_a_folder_holding_data_unless_overwrite(export, tmp_path):
    root = tmp_path / "ds"
    export.to_parquet(root, partition_cols=["userId"])
    small = Export.from_records([fake_export_entry(_id="only")])
    with pytest.raises(ConfigError, match="already holds data"):
        small.to_parquet(root)
    assert len(Export.read_parquet(root)) == len(export)
    back = Export.read_parquet(small.to_parquet(root, overwrite=True))
    assert back.entries["_id"].tolist() == ["only"]


def test_csv_refuses_a_folder_holding_data_and_writes_excel_friendly_utf8(export, tmp_path):
    root = export.to_csv(tmp_path / "csv", encoding="utf-8-sig")
    assert (root / "entries.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    with pytest.raises(ConfigError, match="already holds data"):
        export.to_csv(root)
    header, first = (root / "entries.csv").read_text(encoding="utf-8-sig").splitlines()[:2]
    assert header.startswith('"_id"')
    assert "+00:00" not in first and "Z" in first  # ISO 8601 UTC, e.g. 2026-03-01T10:00:00Z
    assert_same_export(Export.read_csv(root), export)


def test_empty_export_writes_both_tables_with_their_schema(tmp_path):
    import pyarrow.parquet as pq

    root = Export.empty().to_parquet(tmp_path / "ds")
    for sub in ("entries", "codes"):
        schema = pq.read_schema(next((root / sub).rglob("*.parquet")))
        assert "_id" in schema.names or "entryId" in schema.names
    assert len(pd.read_parquet(root / "entries")) == 0


def test_excel_has_one_sheet_per_table(export, tmp_path):
    out = export.to_excel(tmp_path / "x.xlsx")
    sheets = pd.read_excel(out, sheet_name=None)
    assert len(sheets["entries"]) == len(export) and len(sheets["codes"]) == len(export.codes)
    with pytest.raises(ConfigError):
        export.to_excel(out)


def test_parquet_with_a_template_appends_window_after_window(tmp_path):
    records = fake_export_entries(60, seed=7)
    root = tmp_path / "ds"
    for i in range(3):
        window = Export.from_records(records[i * 20 : (i + 1) * 20])
        window.to_parquet(root, basename_template=f"part-w{i}-{{i}}.parquet")
    assert_same_export(Export.read_parquet(root), Export.from_records(records))


def test_parquet_round_trip_of_an_empty_export(tmp_path):
    back = Export.read_parquet(Export.empty("pending").to_parquet(tmp_path / "ds"))
    assert back.kind == "pending" and len(back) == 0
    assert back.entries.dtypes.equals(Export.empty("pending").entries.dtypes)


def test_read_parquet_of_a_folder_without_a_dataset_raises(tmp_path):
    with pytest.raises(ConfigError, match="not an exported Parquet dataset"):
        Export.read_parquet(tmp_path)


def test_parquet_keeps_columns_the_analyst_added(export, tmp_path):
    extra = Export(
        export.entries.assign(hours=export.entries["unitIncrementCount"] / 10), export.codes
    )
    back = Export.read_parquet(extra.to_parquet(tmp_path / "ds"))
    assert back.entries.columns[-1] == "hours"


# ----------------------------------------------------------------------------- CSV


def test_csv_round_trip_keeps_rows_order_and_types(export, tmp_path):
    root = export.to_csv(tmp_path / "csv")
    assert sorted(os.listdir(root)) == ["codes.csv", "entries.csv"]
    assert_same_export(Export.read_csv(root), export, ordered=True)


def test_csv_round_trip_of_pending_joins_tags_with_semicolons(pending, tmp_path):
    root = pending.to_csv(tmp_path / "csv")
    text = (root / "entries.csv").read_text(encoding="utf-8")
    assert '"pinned"' in text
    back = Export.read_csv(root)
    assert back.kind == "pending"
    assert_same_export(back, pending, ordered=True)


def test_csv_tells_empty_text_from_missing_and_keeps_line_breaks(export, tmp_path):
    back = Export.read_csv(export.to_csv(tmp_path / "csv"))
    summaries = back.entries["summary"].tolist()
    assert summaries[2] == ""
    assert summaries[3] == 'Réunion "stratégie"\nligne 2'
    assert pd.isna(back.entries["externalId"].iloc[0])


def test_csv_multi_tag_lists_round_trip(tmp_path):
    records = fake_pending_entries(3, seed=1)
    records[0]["initiativeProps"]["tags"] = ["pinned", "urgent", "日本"]
    records[1]["initiativeProps"]["tags"] = []
    records[2]["initiativeProps"]["tags"] = None
    ex = Export.from_records(records, kind="pending")
    back = Export.read_csv(ex.to_csv(tmp_path / "csv"))
    tags = back.entries["initiativeProps.tags"].tolist()
    assert tags[:2] == [["pinned", "urgent", "日本"], []]
    assert pd.isna(tags[2])


# ----------------------------------------------------------------------------- Arrow and Polars

TYPED_COLUMNS = ("workDate", "incrementDurationInSeconds", "createdAt", "updatedAt")


def _python_values(series: pd.Series) -> list[object]:
    """pandas values as plain Python: a datetime for workDate (issue 20: was a date), None
    for a missing value."""
    if isinstance(series.dtype, pd.DatetimeTZDtype) or series.name == "workDate":
        return [None if pd.isna(v) else v.to_pydatetime() for v in series]
    return [None if pd.isna(v) else int(v) for v in series]


def test_to_arrow_gives_the_typed_tables_by_name(export):
    tables = export.to_arrow()
    assert list(tables._fields) == ["entries", "codes"]
    entries = tables.entries
    assert str(entries.schema.field("workDate").type) == "timestamp[us]"  # issue 20: was date32
    assert str(entries.schema.field("incrementDurationInSeconds").type) == "double"  # issue 25
    assert str(entries.schema.field("createdAt").type) == "timestamp[us, tz=UTC]"
    assert entries.column_names == list(export.entries.columns)
    assert tables.codes.column_names == list(export.codes.columns)
    assert (entries.num_rows, tables.codes.num_rows) == (len(export), len(export.codes))


def test_to_arrow_values_equal_the_pandas_values(export):
    entries = export.to_arrow().entries
    for col in TYPED_COLUMNS:
        assert entries[col].to_pylist() == _python_values(export.entries[col]), col


def test_to_arrow_adds_partition_columns_only_when_asked(export):
    assert "workMonth" not in export.to_arrow().entries.column_names
    tables = export.to_arrow(partition_cols=["workMonth"])
    assert "workMonth" in tables.entries.column_names
    assert "workMonth" in tables.codes.column_names


@pytest.mark.parametrize("name", ["export", "pending"])
def test_to_arrow_round_trips_through_from_arrow(name, request):
    ex = request.getfixturevalue(name)
    assert_same_export(Export.from_arrow(*ex.to_arrow(), kind=ex.kind), ex, ordered=True)


def test_to_polars_gives_frames_with_the_arrow_types(export, pending):
    pl = pytest.importorskip("polars")
    frames = export.to_polars()
    assert list(frames._fields) == ["entries", "codes"]
    schema = frames.entries.schema
    assert schema["workDate"] == pl.Datetime("us")  # issue 20: was pl.Date
    assert schema["incrementDurationInSeconds"] == pl.Float64  # issue 25: was Int64
    assert schema["createdAt"] == pl.Datetime("us", "UTC")
    assert frames.codes.height == len(export.codes)
    tags = pending.to_polars().entries.schema["initiativeProps.tags"]
    assert tags == pl.List(pl.String)


def test_to_polars_values_equal_the_pandas_values(export):
    entries = export.to_polars().entries
    for col in TYPED_COLUMNS:
        assert entries[col].to_list() == _python_values(export.entries[col]), col


@pytest.mark.parametrize("name", ["export", "pending"])
def test_to_polars_round_trips_through_from_arrow(name, request):
    ex = request.getfixturevalue(name)
    frames = ex.to_polars()
    back = Export.from_arrow(frames.entries.to_arrow(), frames.codes.to_arrow(), ex.kind)
    assert_same_export(back, ex, ordered=True)


def test_to_polars_without_polars_says_how_to_install_it(export, monkeypatch):
    monkeypatch.setitem(sys.modules, "polars", None)  # import polars now raises ImportError
    with pytest.raises(ConfigError, match="pip install polars"):
        export.to_polars()


def test_to_arrow_still_unpacks_as_the_pair_it_always_was(export):
    entries, codes = export.to_arrow()
    assert (entries.num_rows, codes.num_rows) == (len(export), len(export.codes))
    assert export.to_arrow()._asdict().keys() == {"entries", "codes"}


def test_concat_keeps_an_unknown_field_whose_json_type_changes_between_windows_as_json_text():
    # as flatten keeps a field whose values mix JSON types within one answer
    first = Export.from_json(b'[{"_id": "a", "futureField": [1]}]')
    second = Export.from_json(b'[{"_id": "b", "futureField": "x"}]')
    both = Export.concat([first, second])
    assert both.entries["futureField"].tolist() == ["[1]", '"x"']
    assert both.entries.attrs["unknownFields"] == {"futureField": "a"}
