"""The files of an export: a Parquet dataset, a CSV folder, an Excel workbook, and back.

:class:`toolkit._egress.export.Export` is the public face; this module writes and reads its two
Arrow tables with pyarrow (types: docs/toolkit.md). :func:`claim_target` refuses to write over
data unless asked (``overwrite=True``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from toolkit._egress.flatten import DAY_TYPE, Kind, parse_answer, to_frame
from toolkit.errors import ConfigError

#: Partitioning of ``Export.to_parquet`` by default: ``workMonth``, the month of ``workDate``.
DEFAULT_PARTITION_COLS: tuple[str, ...] = ("workMonth",)
#: Rows per Parquet row group (and the size a streamed export buffers before writing a file).
ROWS_PER_GROUP = 100_000

_META_FILE = "_toolkit_export.json"
_TAG_SEPARATOR = ";"
_OUR_FILES = ("entries", "codes", _META_FILE, "entries.csv", "codes.csv")


@cache
def empty_schemas(kind: Kind) -> tuple[pa.Schema, pa.Schema]:
    """The schemas of the two tables: those of an empty answer."""
    entries, codes = parse_answer(b"[]", kind)
    return entries.schema, codes.schema


def _work_date(column: pa.ChunkedArray[Any]) -> pa.ChunkedArray[Any]:
    """``workDate`` as naive midnight ``timestamp[us]`` (from text, a zoned time or ``date32``)."""
    if pa.types.is_string(column.type):  # a hive partition value: "2026-11-02 00:00:00"
        column = pc.cast(column, DAY_TYPE)
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = cast("pa.ChunkedArray[Any]", pc.local_timestamp(column))
    return cast("pa.ChunkedArray[Any]", pc.cast(pc.cast(column, pa.date32(), safe=False), DAY_TYPE))


def typed(table: pa.Table, kind: Kind, table_name: str, drop: Iterable[str] = ()) -> pa.Table:
    """A table cast to its schema's types, the spec's columns first, the others at the end."""
    schema = empty_schemas(kind)[table_name == "codes"]
    table = table.drop_columns([c for c in drop if c in table.column_names])
    held = [f for f in schema if f.name in table.column_names]
    columns = [
        _work_date(table[f.name]) if f.name == "workDate" else table[f.name].cast(f.type)
        for f in held
    ]
    extra = [n for n in table.column_names if n not in schema.names]
    return pa.table([*columns, *(table[n] for n in extra)], names=[f.name for f in held] + extra)


def as_stored(entries: pa.Table, codes: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """Tables as written (``to_arrow(partition_cols=...)``, Parquet, Delta) cast back to their
    types: ``workMonth`` and the partition columns copied onto the codes dropped."""
    known = set(empty_schemas(kind)[1].names)  # made once a process
    drop = [c for c in codes.column_names if c not in known]
    return typed(entries, kind, "entries", ["workMonth"]), typed(codes, kind, "codes", drop)


def from_frame(frame: pd.DataFrame, kind: Kind, table_name: str) -> pa.Table:
    """A frame (an analyst's, or a view changed and assigned back) as a typed Arrow table.

    Its numbers are copied into Arrow's memory: converted from pandas they share numpy's, and
    an Arrow writer thread (``ds.write_dataset``, deltalake) that frees numpy memory needs the
    GIL, which it cannot take once the interpreter is exiting: the process aborted
    (``terminate called without an active exception``) after its work was done (issue 39
    finding 8).
    """
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = pa.table(
        [c.combine_chunks() if pa.types.is_primitive(c.type) else c for c in table.columns],
        schema=table.schema,
    )
    missing = [
        n for n in empty_schemas(kind)[table_name == "codes"].names if n not in frame.columns
    ]
    if missing:
        raise ConfigError(f"column {missing[0]!r} is missing from the {table_name} table")
    return typed(table, kind, table_name)


def with_partitions(
    entries: pa.Table, codes: pa.Table, parts: Sequence[str]
) -> tuple[pa.Table, pa.Table]:
    """Append the partition columns to the entries and copy them onto each code."""
    for col in parts:
        if col in entries.column_names:
            continue
        if col != "workMonth":
            raise ConfigError(
                f"cannot partition by {col!r}: not a column of the entries"
                " (nor 'workMonth', the month of workDate)"
            )
        entries = entries.append_column(
            "workMonth", pc.strftime(entries["workDate"], format="%Y-%m")
        )
    if parts:
        at = pc.index_in(codes["entryId"], value_set=entries["_id"].combine_chunks())
        for col in parts:
            codes = codes.drop_columns([col]) if col in codes.column_names else codes
            codes = codes.append_column(col, entries[col].take(at))
    return entries, codes


def _pandas_metadata(table: pa.Table) -> pa.Table:
    """Attach the pandas metadata of the table's frame (list columns noted as ``object``)."""
    frame = to_frame(table.schema.empty_table())
    meta = pa.Schema.from_pandas(frame, preserve_index=False).metadata or {}
    if b"pandas" in meta:
        described = json.loads(meta[b"pandas"])
        for column in described["columns"]:
            if str(column.get("numpy_type", "")).startswith(("list<", "large_list<", "struct<")):
                column["numpy_type"] = "object"
        meta = {**meta, b"pandas": json.dumps(described).encode()}
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})


def _kind_of(columns: Iterable[str]) -> Kind:
    return "pending" if any(str(c).startswith("initiativeProps.") for c in columns) else "export"


def _has_parquet(folder: Path) -> bool:
    return folder.is_dir() and any(
        f.endswith(".parquet") for _, _, files in os.walk(folder) for f in files
    )


def claim_target(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Make sure an export may write to ``path``: new or empty, or ``overwrite`` (removes ours).

    Returns:
        The target path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     claim_target(tmp) == Path(tmp)
    True
    """
    root = Path(path)
    if root.is_file():
        if not overwrite:
            raise ConfigError(
                f"{root} already exists; pass overwrite=True (--overwrite) to replace it"
            )
        root.unlink()
        return root
    if not root.is_dir():
        return root
    held = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
    if held and not overwrite:
        raise ConfigError(
            f"{root} already holds data ({', '.join(held[:5])}); pass overwrite=True"
            " (--overwrite) to replace it"
        )
    for name in _OUR_FILES:
        target = root / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    return root


def write_parquet(
    entries: pa.Table,
    codes: pa.Table,
    kind: Kind,
    path: str | os.PathLike[str],
    partition_cols: Sequence[str] | None = None,
    *,
    overwrite: bool = False,
    basename_template: str | None = None,
) -> Path:
    """``path/entries/``, ``path/codes/`` and the metadata file (``Export.to_parquet``)."""
    root = Path(path)
    parts = list(DEFAULT_PARTITION_COLS if partition_cols is None else partition_cols)
    entries, codes = with_partitions(entries, codes, parts)
    if basename_template is None:
        claim_target(root, overwrite=overwrite)
    root.mkdir(parents=True, exist_ok=True)
    (root / _META_FILE).write_text(
        json.dumps({"kind": kind, "partition_cols": parts, "format": 1}) + "\n"
    )
    for sub, table in (("entries", entries), ("codes", codes)):
        table = _pandas_metadata(table.replace_schema_metadata({"toolkit.kind": str(kind)}))
        if table.num_rows == 0:
            if not _has_parquet(root / sub):  # the schema, for every reader
                (root / sub).mkdir(parents=True, exist_ok=True)
                pq.write_table(table.drop_columns(parts), root / sub / "part-empty.parquet")
            continue
        ds.write_dataset(
            table,
            root / sub,
            format="parquet",
            partitioning=parts or None,
            partitioning_flavor="hive" if parts else None,
            basename_template=basename_template or "part-{i}.parquet",
            existing_data_behavior="overwrite_or_ignore",
            max_rows_per_group=ROWS_PER_GROUP,
            min_rows_per_group=min(ROWS_PER_GROUP, table.num_rows),
        )
    return root


def read_parquet(path: str | os.PathLike[str]) -> tuple[pa.Table, pa.Table, Kind]:
    """``(entries, codes, kind)`` of a dataset :func:`write_parquet` wrote, with their types."""
    root = Path(path)
    meta_path = root / _META_FILE
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if not meta and not _has_parquet(root / "entries"):
        raise ConfigError(f"{root} is not an exported Parquet dataset (no entries/ folder)")
    found: list[pa.Table | None] = []
    hive = ds.HivePartitioning.discover(infer_dictionary=True)  # partition values as text
    for sub in ("entries", "codes"):
        if not _has_parquet(root / sub):
            found.append(None)
            continue
        data = ds.dataset(root / sub, format="parquet", partitioning=hive).to_table()
        text = [
            pa.field(f.name, pa.string()) if pa.types.is_dictionary(f.type) else f
            for f in data.schema
        ]
        found.append(data.cast(pa.schema(text)))
    kind: Kind = meta.get("kind") or _kind_of(found[0].column_names if found[0] else [])
    empty = (schema.empty_table() for schema in empty_schemas(kind))
    entries, codes = (t if t is not None else e for t, e in zip(found, empty, strict=True))
    return *as_stored(entries, codes, kind), kind


def write_csv(
    entries: pa.Table,
    codes: pa.Table,
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    overwrite: bool = False,
) -> Path:
    """``path/entries.csv`` and ``path/codes.csv`` (see ``Export.to_csv``)."""
    try:
        "".encode(encoding)
    except LookupError:
        raise ConfigError(f"unknown encoding {encoding!r}") from None
    root = claim_target(path, overwrite=overwrite)
    root.mkdir(parents=True, exist_ok=True)
    for name, table in (("entries", entries), ("codes", codes)):
        for i, field in enumerate(table.schema):
            column: Any = table[field.name]
            if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
                column = pc.binary_join(column, _TAG_SEPARATOR)
            elif field.name == "workDate":
                column = pc.strftime(column, format="%Y-%m-%d")
            elif pa.types.is_timestamp(field.type):  # ISO 8601, only the fraction digits needed
                text = pc.strftime(
                    pc.cast(column, pa.timestamp("us", tz="UTC")), format="%Y-%m-%dT%H:%M:%S"
                )
                column = pc.replace_substring_regex(
                    text, pattern=r"\.?0*$", replacement="Z", max_replacements=1
                )
            table = table.set_column(i, field.name, column)
        sink = pa.BufferOutputStream()
        pa_csv.write_csv(table.replace_schema_metadata(None), sink)
        data = sink.getvalue().to_pybytes()
        if encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
            try:
                data = data.decode("utf-8").encode(encoding)
            except UnicodeEncodeError as exc:
                raise ConfigError(
                    f"{name}.csv: {encoding} cannot encode {exc.object[exc.start : exc.end]!r};"
                    " use utf-8 or utf-8-sig"
                ) from None
        (root / f"{name}.csv").write_bytes(data)
    return root


def read_csv(
    path: str | os.PathLike[str], kind: Kind | None = None
) -> tuple[pa.Table, pa.Table, Kind]:
    """``(entries, codes, kind)`` of a folder :func:`write_csv` wrote, with their types."""
    root = Path(path)
    header = (root / "entries.csv").open(encoding="utf-8").readline()
    kind = kind or _kind_of(header.strip().replace('"', "").split(","))
    tables = []
    for name, schema in zip(("entries", "codes"), empty_schemas(kind), strict=True):
        types = {f.name: pa.string() if pa.types.is_list(f.type) else f.type for f in schema}
        table = pa_csv.read_csv(
            root / f"{name}.csv",
            parse_options=pa_csv.ParseOptions(newlines_in_values=True),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False
            ),
        )
        for field in schema:
            if pa.types.is_list(field.type) and field.name in table.column_names:
                text = table[field.name]
                split = pc.split_pattern(text, _TAG_SEPARATOR)  # type: ignore[call-overload]  # stubs: takes a ChunkedArray too
                lists = pc.if_else(pc.equal(text, pa.scalar("")), pc.list_slice(split, 0, 0), split)
                table = table.set_column(
                    table.schema.get_field_index(field.name), field.name, lists
                )
        tables.append(typed(table, kind, name))
    return tables[0], tables[1], kind


def write_excel(
    entries: pd.DataFrame,
    codes: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
) -> Path:
    """One ``.xlsx`` workbook, a sheet per table (see ``Export.to_excel``)."""
    target = claim_target(path, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    with pd.ExcelWriter(target, engine="openpyxl") as writer:
        for name, frame in (("entries", entries), ("codes", codes)):
            out = frame.copy()
            for col in out.columns:
                dtype = out[col].dtype
                if isinstance(dtype, pd.DatetimeTZDtype):
                    out[col] = out[col].dt.tz_convert("UTC").dt.tz_localize(None)
                elif isinstance(dtype, pd.ArrowDtype) and pa.types.is_list(dtype.pyarrow_dtype):
                    out[col] = out[col].map(lambda v: None if v is None else _TAG_SEPARATOR.join(v))
            out.to_excel(writer, sheet_name=name, index=False)
    return target
