"""One dtype per field in every frame and file the toolkit writes (issue 20, items 11, 15, 17):
``workDate`` a datetime in pandas, Polars and DuckDB from Parquet and Delta, ``str`` text,
``[us]`` timestamps, one column set for starred lists, the entries preview, unknown fields."""

from __future__ import annotations

import typing
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from toolkit import Client, Export
from toolkit._core.windows import TimeLike
from toolkit._egress.fetch import export_entries
from toolkit._egress.sync import PARTITION_COLS, _schemas, _write_window, read_sync, sync
from toolkit._starring.operations import STARRED_COLUMNS, starred, starred_many
from toolkit.errors import InputWarning
from toolkit.testing import fake_export_entries, fake_export_entry

AT = datetime(2026, 11, 3, tzinfo=UTC)


@pytest.fixture(scope="module")
def export() -> Export:
    return Export.from_records(fake_export_entries(20, codes_per_entry=2, seed=3))


def _dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {c: str(t) for c, t in frame.dtypes.items()}


# ----------------------------------------------------------------------------- Parquet


@pytest.mark.parametrize("partition_cols", [[], None])
def test_pandas_reads_an_exported_parquet_with_the_frames_dtypes(
    export: Export, tmp_path: Path, partition_cols: list[str] | None
) -> None:
    root = export.to_parquet(tmp_path / "ds", partition_cols=partition_cols)
    for name, frame in (("entries", export.entries), ("codes", export.codes)):
        back = pd.read_parquet(root / name)
        back = back.drop(columns=[c for c in ("workMonth",) if c in back])  # a partition
        assert _dtypes(back) == _dtypes(frame), name
    assert str(pd.read_parquet(root / "entries")["workDate"].dtype) == "datetime64[us]"


def test_polars_and_duckdb_read_work_date_from_parquet_as_a_timestamp(
    export: Export, tmp_path: Path
) -> None:
    root = export.to_parquet(tmp_path / "ds")
    files = str(root / "entries" / "**" / "*.parquet")
    assert pl.read_parquet(files).schema["workDate"] == pl.Datetime("us")
    kind = duckdb.sql(f"select typeof(workDate) from read_parquet('{files}') limit 1")
    assert kind.fetchall() == [("TIMESTAMP",)]


def test_csv_keeps_work_date_as_a_day(export: Export, tmp_path: Path) -> None:
    root = export.to_csv(tmp_path / "csv")
    text = pd.read_csv(root / "entries.csv", dtype=str)["workDate"]
    assert text.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    assert _dtypes(Export.read_csv(root).entries) == _dtypes(export.entries)


# ----------------------------------------------------------------------------- Delta


def _synced(path: Path, records: list[dict[str, Any]]) -> Path:
    from toolkit._egress.sync import create_tables

    create_tables(path)
    _write_window(path, Export.from_records(records), _schemas(path), pd.Timestamp(AT))
    return path


def test_a_new_delta_table_reads_work_date_as_a_timestamp_everywhere(tmp_path: Path) -> None:
    path = _synced(tmp_path / "time", fake_export_entries(5, seed=8))
    table = DeltaTable(str(path / "entries"))
    assert "timestampNtz" in (table.protocol().reader_features or [])
    frame = table.to_pandas()
    assert str(frame["workDate"].dtype) == "datetime64[us]"
    assert str(frame["updatedAt"].dtype) == "datetime64[us, UTC]"
    assert str(frame["summary"].dtype) == "str"  # deltalake's own default
    assert pl.read_delta(str(path / "entries")).schema["workDate"] == pl.Datetime("us")
    con = duckdb.connect()
    con.register("entries", table.to_pyarrow_dataset())
    assert con.execute("select typeof(workDate) from entries limit 1").fetchone() == ("TIMESTAMP",)
    back = read_sync(path)
    assert _dtypes(back.entries) == _dtypes(Export.empty().entries)
    assert _dtypes(back.codes) == _dtypes(Export.empty().codes)


def test_an_existing_date32_delta_table_keeps_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "time"
    entries, codes = _schemas()
    i = entries.get_field_index("workDate")
    old = entries.set(i, pa.field("workDate", pa.date32()))  # as an earlier version made it
    for name, schema in (("codes", codes), ("entries", old)):
        write_deltalake(str(path / name), schema.empty_table(), partition_by=list(PARTITION_COLS))
    record = fake_export_entry(_id="e1", updated_at=AT, codes=1)
    record["workDate"] = "2026-10-30"
    _write_window(path, Export.from_records([record]), _schemas(path), pd.Timestamp(AT))
    held = {f.name: repr(f.type) for f in DeltaTable(str(path / "entries")).schema().fields}
    assert held["workDate"] == 'PrimitiveType("date")'
    assert _schemas()[0] == entries  # the schema made once a process is not changed by it
    back = read_sync(path).entries
    assert str(back["workDate"].dtype) == "datetime64[us]"
    assert back["workDate"].tolist() == [pd.Timestamp("2026-10-30")]
    assert back["workDate"].dt.strftime("%Y-%m").tolist() == ["2026-10"]


# ----------------------------------------------------------------------------- unknown fields


class _Answers:
    """A connection stand-in: the export answers each window with the same entries."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def call(self, name: str, params: dict[str, str], raw: bool = False) -> bytes:
        assert name == "export" and raw
        return orjson.dumps(self.records)


def _with_unknown() -> list[dict[str, Any]]:
    first = fake_export_entry(_id="e1", updated_at=AT, codes=1)
    second = fake_export_entry(_id="e2", updated_at=AT, codes=1)
    second["futureField"] = {"flag": True}
    second["initiative"]["client"]["region"] = "EU"
    return [first, second]


def test_an_unknown_field_is_kept_as_a_column_and_warned_once_with_entry_and_window() -> None:
    conn: Any = _Answers(_with_unknown())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = export_entries(conn, "2026-11-01", "2026-11-03T00:00:00Z", window="1D", progress=False)
    assert ex.entries["futureField.flag"].tolist() == [pd.NA, True]
    assert ex.entries["initiative.client.region"].tolist()[1] == "EU"
    said = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert len(said) == 2  # two fields, two windows: once per name
    future = next(m for m in said if "'futureField'" in m)
    assert "'e2'" in future and "2026-11-01T00:00:00.000Z .. 2026-11-02T00:00:00.000Z" in future
    assert "futureField.flag" in future


def test_sync_leaves_an_unknown_field_out_of_the_delta_tables_and_says_so(
    tmp_path: Path,
) -> None:
    conn: Any = _Answers(_with_unknown())
    with pytest.warns(InputWarning, match="left out of the Delta tables"):
        sync(conn, tmp_path / "time", after=AT - timedelta(days=1), on_or_before=AT, progress=False)
    table = DeltaTable(str(tmp_path / "time" / "entries"))
    names = [f.name for f in table.schema().fields]
    assert names == _schemas()[0].names
    assert len(read_sync(tmp_path / "time")) == 2


# ----------------------------------------------------------------------------- frames


def test_the_entries_preview_leads_with_date_timekeeper_client_matter_hours(
    export: Export,
) -> None:
    lead = [
        "workDate",
        "userId",
        "initiative.client.externalId",
        "initiative.externalId",
        "hours",
        "incrementDurationInSeconds",
    ]
    assert export.preview().columns[:6].tolist() == lead
    assert "hours" not in export.entries  # shown, not a column of the table
    html = export._repr_html_()
    table = html[html.index("<code>.entries</code>") : html.index("<code>.codes</code>")]
    heads = [table.index(f"<th>{name}</th>") for name in lead]
    assert heads == sorted(heads) and table.index("<th>_id</th>") > heads[-1]


class _Starred:
    def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        if params["timekeeperExternalId"] == "TK-0":
            return {"initiativeExternalIds": [], "nextCursor": None}
        return {"initiativeExternalIds": ["M-1", "M-2"], "nextCursor": None}


def test_starred_and_starred_many_have_the_same_columns_and_dtypes() -> None:
    conn: Any = _Starred()
    one = starred(conn, "TK-1")
    many = starred_many(conn, ["TK-1", "TK-0"])
    assert one.columns.tolist() == many.columns.tolist() == STARRED_COLUMNS
    assert _dtypes(one) == _dtypes(many)
    assert _dtypes(one)["initiativeExternalId"] == "string"
    pd.testing.assert_frame_equal(many.iloc[:2], one)


def test_star_results_hold_text_as_string(fresh_client: Client) -> None:
    res = fresh_client.star("TK-NOBODY", ["M-1"], progress=False)
    types = _dtypes(res)
    assert types["timekeeperExternalId"] == types["error"] == "string"


def test_export_bounds_are_typed_time_like() -> None:
    for fn in (Client.export_entries, Client.export_to_parquet):
        hints = typing.get_type_hints(fn.operation)  # type: ignore[attr-defined]
        assert hints["after"] == hints["on_or_before"] == TimeLike


# ----------------------------------------------------------------------------- issue 25: counts

COUNTS = ("unitIncrementCount", "incrementDurationInSeconds")


def _fractional(client: Client, sandbox: Any) -> list[str]:
    """Two released entries of the client's customer: one whose counts are fractions."""
    sandbox.admin.set_profile(customer_id=client.customer_id, counts="double")
    sandbox.store.seed_entries_bulk(
        client.customer_id, 1, released_from=AT, released_to=AT + timedelta(hours=1)
    )
    user = sandbox.admin.records("users", customer_id=client.customer_id)[0]["_id"]
    entry = sandbox.admin.create_entry(
        user,
        "BENCH-M",
        work_date="2026-11-02",
        increment_duration_in_seconds=1234.5,
        unit_increment_count=2.5,
        customer_id=client.customer_id,
    )
    sandbox.admin.release_entry(
        user, entry["_id"], at=AT + timedelta(minutes=30), customer_id=client.customer_id
    )
    return [entry["_id"]]


def test_fractional_counts_are_kept_exactly_in_every_frame_and_file(
    fresh_client: Client, sandbox: Any, tmp_path: Path
) -> None:
    [odd] = _fractional(fresh_client, sandbox)
    ex = fresh_client.export_entries(AT, AT + timedelta(hours=1))
    pending = fresh_client.release_pending()
    report = fresh_client.sync(tmp_path / "time", after=AT, on_or_before=AT + timedelta(hours=1))
    assert report.inserted == 2
    synced = read_sync(tmp_path / "time")
    parquet = Export.read_parquet(ex.to_parquet(tmp_path / "ds"))
    csv = Export.read_csv(ex.to_csv(tmp_path / "csv"))
    for name, frame in (
        ("export", ex.entries),
        ("pending", pending.entries),
        ("sync", synced.entries),
        ("parquet", parquet.entries),
        ("csv", csv.entries),
    ):
        row = frame.set_index("_id").loc[odd]
        assert (row["unitIncrementCount"], row["incrementDurationInSeconds"]) == (2.5, 1234.5), name
        assert {str(frame[c].dtype) for c in COUNTS} == {"Float64"}, name
    files = pd.read_parquet(tmp_path / "ds" / "entries")
    assert {str(files[c].dtype) for c in COUNTS} == {"Float64"}
    delta = DeltaTable(str(tmp_path / "time" / "entries")).schema().fields
    assert {repr(f.type) for f in delta if f.name in COUNTS} == {'PrimitiveType("double")'}


def _old_tables(path: Path) -> None:
    """Empty tables with long counts, as an earlier version created them."""
    entries, codes = _schemas()
    for name in COUNTS:
        entries = entries.set(entries.get_field_index(name), pa.field(name, pa.int64()))
    for name, schema in (("codes", codes), ("entries", entries)):
        write_deltalake(str(path / name), schema.empty_table(), partition_by=list(PARTITION_COLS))


def test_an_existing_int64_delta_table_keeps_working_and_a_fraction_stops_before_writing(
    tmp_path: Path,
) -> None:
    from toolkit._egress.sync import widen_counts
    from toolkit.errors import ConfigError

    path = tmp_path / "time"
    _old_tables(path)
    whole = fake_export_entry(_id="e1", updated_at=AT, codes=1)
    _write_window(path, Export.from_records([whole]), _schemas(path), pd.Timestamp(AT))
    held = {f.name: repr(f.type) for f in DeltaTable(str(path / "entries")).schema().fields}
    assert {held[c] for c in COUNTS} == {'PrimitiveType("long")'}
    back = read_sync(path).entries
    assert {str(back[c].dtype) for c in COUNTS} == {"Float64"}
    assert back["unitIncrementCount"].tolist() == [whole["unitIncrementCount"]]

    odd = fake_export_entry(_id="e2", updated_at=AT, codes=1)
    odd["unitIncrementCount"] = 2.5
    version = DeltaTable(str(path / "entries")).version()
    with pytest.raises(ConfigError, match=r"entry 'e2' has unitIncrementCount 2\.5.*widen_counts"):
        _write_window(path, Export.from_records([odd]), _schemas(path), pd.Timestamp(AT))
    assert DeltaTable(str(path / "entries")).version() == version  # nothing written

    assert widen_counts(path) is True
    _write_window(path, Export.from_records([odd]), _schemas(path), pd.Timestamp(AT))
    back = read_sync(path).entries.set_index("_id")
    assert back.loc["e2", "unitIncrementCount"] == 2.5
    assert back.loc["e1", "unitIncrementCount"] == whole["unitIncrementCount"]
    assert widen_counts(path) is False


def test_a_laurel_assigner_is_accepted_and_an_unknown_one_warned_once() -> None:
    records = [fake_export_entry(_id=f"e{i}", updated_at=AT, codes=2) for i in range(2)]
    records[0]["codes"][0]["assignedBy"] = "laurel"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = export_entries(
            _Answers(records), "2026-11-01", "2026-11-03T00:00:00Z", window="1D", progress=False
        )  # type: ignore[arg-type]
    assert not [w for w in caught if issubclass(w.category, InputWarning)]
    assert ex.validate() is ex
    records[1]["codes"][1]["assignedBy"] = "robot"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = export_entries(
            _Answers(records), "2026-11-01", "2026-11-04T00:00:00Z", window="1D", progress=False
        )  # type: ignore[arg-type]
    said = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert len(said) == 1 and "'robot'" in said[0] and "'e1'" in said[0]  # 3 windows, once
    assert "robot" in set(ex.codes["assignedBy"])
    assert ex.validate() is ex


def test_an_entry_on_a_user_initiative_is_kept_with_empty_initiative_columns(
    client: Client, sandbox: Any
) -> None:
    answer = client.release_pending()
    assert answer.validate() is answer
    pending = answer.entries
    assert not pending.attrs.get("unknownFields")  # the published extras are known columns
    assert str(pending["releaseCount"].dtype) == "Int64"
    assert str(pending["firstReleaseAttemptedAt"].dtype) == "datetime64[us, UTC]"
    assert str(pending["isShared"].dtype) == "boolean"
    mine = pending[pending["initiativeProps.type"] == "user"]
    assert len(mine) == 1
    row = mine.iloc[0]
    assert pd.notna(row["initiativeProps.initiative._id"])
    assert pd.notna(row["initiativeProps.initiative.name"])
    empty = [
        c
        for c in pending.columns
        if c.startswith("initiativeProps.initiative.")
        and c
        not in (
            "initiativeProps.initiative.type",
            "initiativeProps.initiative._id",
            "initiativeProps.initiative.name",
            "initiativeProps.initiative.billingType",  # published: on both forms
            "initiativeProps.initiative.unitIncrements",
        )
    ]
    assert mine[empty].isna().all().all()
    assert (
        row["initiativeProps.initiative.billingType"],
        row["initiativeProps.initiative.unitIncrements"],
    ) == ("non-billable", 360)
    now = pd.Timestamp.now("UTC")
    ex = client.export_entries(now - pd.Timedelta(days=40), now)
    kept = ex.entries.set_index("_id").loc[row["_id"]]
    assert pd.isna(kept["initiative.externalId"]) and pd.isna(kept["initiative.client._id"])
    assert kept["initiative.name"] == row["initiativeProps.initiative.name"]
    assert not ex.entries.attrs.get("unknownFields")
