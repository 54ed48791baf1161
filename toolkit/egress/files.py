"""The files of an export: a Parquet dataset, a CSV folder, an Excel workbook, and back.

:class:`toolkit.egress.export.Export` is the public face (``to_parquet``, ``read_parquet``,
``to_csv``, ``read_csv``, ``to_excel``, ``to_arrow``, ``from_arrow``); this module does the work
on the two frames of an export (``entries`` and ``codes``) and its ``kind`` (``"export"`` or
``"pending"``), so the types survive the trip to disk and back::

    pandas  --to_arrow_tables-->  Arrow (file types)  --write_parquet / write_csv-->  files
    pandas  <--from_arrow_tables--  Arrow (file types)  <--read_parquet / read_csv--  files

On disk ``workDate`` is a naive ``timestamp[us]`` at midnight (pandas reads
``datetime64[us]``, Polars ``Datetime("us")``, DuckDB ``TIMESTAMP``: the type of
:attr:`Export.entries`, in every reader), timestamps are UTC, ``initiativeProps.tags`` a
``list<string>`` (joined with ``;`` in CSV and Excel), and the pandas dtypes ride along in the
files' pandas metadata, so ``pd.read_parquet(path / "entries")`` gives the frame's dtypes
(``Float64`` counts, ``str`` text). A file written as ``date32`` by an earlier version reads
back as ``datetime64[us]`` too. :func:`claim_target` refuses to write
over data unless asked (``overwrite=True``), like ``write_deltalake``'s ``mode="error"``.

>>> import tempfile
>>> from toolkit.egress.flatten import flatten_export
>>> from toolkit.testing import fake_export_entries
>>> entries, codes = flatten_export(fake_export_entries(3))
>>> with tempfile.TemporaryDirectory() as tmp:
...     back, back_codes, kind = read_parquet(write_parquet(entries, codes, "export", tmp))
>>> len(back), len(back_codes), kind
(3, 9, 'export')
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from toolkit.egress.flatten import (
    arrow_to_pandas,
    flatten_export,
    flatten_export_arrow,
    flatten_pending,
    flatten_pending_arrow,
)
from toolkit.errors import ConfigError

__all__ = [
    "DEFAULT_PARTITION_COLS",
    "ROWS_PER_GROUP",
    "Kind",
    "claim_target",
    "from_arrow_tables",
    "read_csv",
    "read_parquet",
    "to_arrow_tables",
    "write_csv",
    "write_excel",
    "write_parquet",
]

Kind = Literal["export", "pending"]

#: Partitioning of :meth:`~toolkit.egress.export.Export.to_parquet` when ``partition_cols`` is
#: ``None``: the month of ``workDate`` (``"2026-11"``), a derived column written as the
#: ``workMonth=...`` folders.
DEFAULT_PARTITION_COLS: tuple[str, ...] = ("workMonth",)
#: Rows per Parquet row group (and the size a streamed export buffers before writing a file).
ROWS_PER_GROUP = 100_000

_DERIVED = {"workMonth"}
_META_FILE = "_toolkit_export.json"
_TAG_SEPARATOR = ";"
_DAY = pa.timestamp("us")
_OUR_FILES = ("entries", "codes", _META_FILE, "entries.csv", "codes.csv")


# --------------------------------------------------------------------------- file types


def _file_schemas(kind: str) -> tuple[pa.Schema, pa.Schema]:
    """Arrow schemas of the tables on disk: those of the flattened tables."""
    entries, codes = (flatten_export_arrow if kind == "export" else flatten_pending_arrow)([])
    return entries.schema, codes.schema


def _work_date(column: pa.ChunkedArray[Any]) -> pa.ChunkedArray[Any]:
    """``workDate`` as naive midnight ``timestamp[us]``: a time of day is dropped, a zone's
    wall clock kept, a ``date32`` (an earlier version's files) taken as its midnight."""
    if pa.types.is_string(column.type):  # a hive partition value: "2026-11-02 00:00:00"
        column = pc.cast(column, _DAY)
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = cast("pa.ChunkedArray[Any]", pc.local_timestamp(column))
    day = pc.cast(column, pa.date32(), safe=False)
    return cast("pa.ChunkedArray[Any]", pc.cast(day, _DAY))


def _pandas_metadata(table: pa.Table) -> pa.Table:
    """Attach the pandas metadata of the frame the table reads back as (``Float64``, ``str``).

    A nested column (``initiativeProps.tags``, a list of text) is noted as ``object``: pandas
    writes its ``ArrowDtype`` as ``list<item: string>[pyarrow]``, which its own
    ``read_parquet`` cannot read back, so every reader of the file would fail.
    """
    frame = arrow_to_pandas(table.schema.empty_table())
    meta = pa.Schema.from_pandas(frame, preserve_index=False).metadata or {}
    if b"pandas" in meta:
        described = json.loads(meta[b"pandas"])
        for column in described["columns"]:
            if str(column.get("numpy_type", "")).startswith(("list<", "large_list<", "struct<")):
                column["numpy_type"] = "object"
        meta = {**meta, b"pandas": json.dumps(described).encode()}
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})


def _to_arrow(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """pandas -> Arrow with the file types; unknown (user-added) columns are kept at the end."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    columns, fields = [], []
    for field in schema:
        if field.name not in table.column_names:
            raise ConfigError(f"column {field.name!r} is missing from the table")
        if field.name == "workDate":
            columns.append(_work_date(table[field.name]))
        else:
            columns.append(pc.cast(table[field.name], field.type))
        fields.append(field)
    for name in table.column_names:
        if name not in schema.names:
            columns.append(table[name])
            fields.append(table.schema.field(name))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _from_arrow(table: pa.Table, schema: pa.Schema, drop: Iterable[str] = ()) -> pd.DataFrame:
    """Arrow (as read from a file) -> pandas with the documented dtypes and column order."""
    table = table.drop_columns([c for c in drop if c in table.column_names])
    known = [f for f in schema if f.name in table.column_names]
    extra = [n for n in table.column_names if n not in schema.names]
    columns = [
        _work_date(table[f.name]) if f.name == "workDate" else pc.cast(table[f.name], f.type)
        for f in known
    ] + [table[n] for n in extra]
    names = [f.name for f in known] + extra
    return arrow_to_pandas(pa.table(columns, names=names))


def _iso_text(column: pa.ChunkedArray[Any]) -> pa.ChunkedArray[Any]:
    """UTC timestamps as ISO 8601 text with only the fraction digits they need, and ``Z``."""
    utc: pa.ChunkedArray[Any] = pc.cast(column, pa.timestamp("us", tz="UTC"))
    # %S carries the fraction; chunked in, chunked out (the stubs say Array)
    text = cast("pa.ChunkedArray[Any]", pc.strftime(utc, format="%Y-%m-%dT%H:%M:%S"))
    # the fraction's trailing zeros (and its dot when all are) become the "Z"
    return pc.replace_substring_regex(text, pattern=r"\.?0*$", replacement="Z", max_replacements=1)


def _kind_of(columns: Iterable[str]) -> Kind:
    return "pending" if any(str(c).startswith("initiativeProps.") for c in columns) else "export"


def _empty(kind: Kind) -> tuple[pd.DataFrame, pd.DataFrame]:
    return (flatten_export if kind == "export" else flatten_pending)([])


def _hive_keys(folder: Path) -> list[str]:
    """Partition keys of a hive-partitioned folder, from the path of its first Parquet file."""
    for dirpath, _, files in os.walk(folder):
        if any(f.endswith(".parquet") for f in files):
            rel = Path(dirpath).relative_to(folder)
            return [unquote(part.split("=", 1)[0]) for part in rel.parts if "=" in part]
    return []


def _has_parquet(folder: Path) -> bool:
    return folder.is_dir() and any(
        f.endswith(".parquet") for _, _, files in os.walk(folder) for f in files
    )


# --------------------------------------------------------------------------- the target


def claim_target(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Make sure an export may write to ``path``: it is new or empty, or ``overwrite`` is set.

    With ``overwrite``, what an earlier export wrote there (``entries/``, ``codes/``, the
    CSV files, or the file itself) is removed first; other files are left alone.

    Args:
        path: The target folder (or file, for one-file formats such as ``.xlsx``).
        overwrite: Replace an earlier export instead of refusing.

    Returns:
        The target path.

    Raises:
        ConfigError: The target holds data and ``overwrite`` is false.

    >>> import tempfile
    >>> from toolkit.egress.flatten import flatten_export
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_csv(*flatten_export([]), "export", tmp)
    ...     claim_target(tmp)
    Traceback (most recent call last):
    ...
    toolkit.errors.ConfigError: ... already holds data (codes.csv, entries.csv); pass ...
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


# --------------------------------------------------------------------------- Arrow


def to_arrow_tables(
    entries: pd.DataFrame,
    codes: pd.DataFrame,
    kind: Kind,
    partition_cols: Sequence[str] = (),
) -> tuple[pa.Table, pa.Table]:
    """The two frames as Arrow tables with the file types (see the module docstring).

    Args:
        entries: The entries frame.
        codes: The codes frame.
        kind: ``"export"`` or ``"pending"``.
        partition_cols: Columns appended to the entries (``workMonth``, the ``YYYY-MM`` of
            ``workDate``, is derived) and copied onto each code from its entry.

    Returns:
        ``(entries, codes)``.

    Raises:
        ConfigError: A partition column is not a column of ``entries``, or a column of the
            contract is missing.

    >>> from toolkit.egress.flatten import flatten_export
    >>> from toolkit.testing import fake_export_entries
    >>> e, c = to_arrow_tables(*flatten_export(fake_export_entries(2)), "export", ["workMonth"])
    >>> str(e.schema.field("workDate").type), "workMonth" in c.column_names
    ('timestamp[us]', True)
    """
    parts = list(partition_cols)
    entries_schema, codes_schema = _file_schemas(kind)
    entries_table = _to_arrow(entries, entries_schema)
    codes_table = _to_arrow(codes, codes_schema)
    for col in parts:
        if col in entries_table.column_names:
            continue
        if col == "workMonth":
            month = pc.strftime(entries_table["workDate"], format="%Y-%m")
            entries_table = entries_table.append_column("workMonth", month)
        else:
            raise ConfigError(
                f"cannot partition by {col!r}: not a column of the entries"
                " (nor 'workMonth', the month of workDate)"
            )
    if parts:
        ids = entries_table["_id"].combine_chunks()
        at = pc.index_in(codes_table["entryId"], value_set=ids)
        for col in parts:
            if col in codes_table.column_names:
                codes_table = codes_table.drop_columns([col])
            codes_table = codes_table.append_column(col, entries_table[col].take(at))
    return entries_table, codes_table


def from_arrow_tables(
    entries: pa.Table, codes: pa.Table, kind: Kind
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Arrow tables as stored -> the two frames with the documented dtypes.

    The derived ``workMonth`` is dropped from both tables, and codes columns that are not
    code fields (partition copies) too.

    Args:
        entries: The entries table.
        codes: The codes table.
        kind: ``"export"`` or ``"pending"``.

    Returns:
        ``(entries, codes)`` as pandas frames.

    >>> from toolkit.egress.flatten import flatten_export
    >>> from toolkit.testing import fake_export_entries
    >>> tables = to_arrow_tables(*flatten_export(fake_export_entries(2)), "export", ["workMonth"])
    >>> e, c = from_arrow_tables(*tables, "export")
    >>> str(e["workDate"].dtype), "workMonth" in c
    ('datetime64[us]', False)
    """
    entries_schema, codes_schema = _file_schemas(kind)
    extra = [c for c in codes.column_names if c not in codes_schema.names]
    return (
        _from_arrow(entries, entries_schema, drop=_DERIVED),
        _from_arrow(codes, codes_schema, drop=extra),
    )


# --------------------------------------------------------------------------- Parquet


def write_parquet(
    entries: pd.DataFrame,
    codes: pd.DataFrame,
    kind: Kind,
    path: str | os.PathLike[str],
    partition_cols: Sequence[str] | None = None,
    *,
    overwrite: bool = False,
    basename_template: str | None = None,
) -> Path:
    """Write ``path/entries/`` and ``path/codes/``, hive-partitioned, and the metadata file.

    The layout and the arguments are those of :meth:`toolkit.egress.export.Export.to_parquet`.

    Args:
        entries: The entries frame.
        codes: The codes frame.
        kind: ``"export"`` or ``"pending"``.
        path: The dataset folder (created if needed).
        partition_cols: ``None`` means :data:`DEFAULT_PARTITION_COLS`; ``[]`` none.
        overwrite: Replace an earlier export at ``path``.
        basename_template: File name template with ``{i}``; given, files are added.

    Returns:
        The dataset folder.

    Raises:
        ConfigError: A bad partition column, or ``path`` holds data and neither
            ``overwrite`` nor ``basename_template`` is given.

    >>> import tempfile
    >>> from toolkit.egress.flatten import flatten_export
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = write_parquet(*flatten_export([]), "export", tmp)
    ...     sorted(p.name for p in out.iterdir())
    ['_toolkit_export.json', 'codes', 'entries']
    """
    root = Path(path)
    parts = list(DEFAULT_PARTITION_COLS if partition_cols is None else partition_cols)
    entries_table, codes_table = to_arrow_tables(entries, codes, kind, parts)
    if basename_template is None:
        claim_target(root, overwrite=overwrite)
    root.mkdir(parents=True, exist_ok=True)
    (root / _META_FILE).write_text(
        json.dumps({"kind": kind, "partition_cols": parts, "format": 1}) + "\n"
    )
    metadata: dict[str, str] = {"toolkit.kind": kind}
    for sub, table in (("entries", entries_table), ("codes", codes_table)):
        table = _pandas_metadata(table.replace_schema_metadata(metadata))
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
            min_rows_per_group=min(ROWS_PER_GROUP, max(table.num_rows, 1)),
            create_dir=True,
        )
    return root


def read_parquet(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, pd.DataFrame, Kind]:
    """Load a dataset written by :func:`write_parquet`, with the documented dtypes.

    Partition values come back as columns of their original type; the derived ``workMonth``
    is dropped. A table without files comes back empty, with every column.

    Args:
        path: The dataset folder (holding ``entries/`` and ``codes/``).

    Returns:
        ``(entries, codes, kind)``.

    Raises:
        ConfigError: The folder holds no ``entries/`` dataset and no metadata file.

    >>> import tempfile
    >>> from toolkit.egress.flatten import flatten_pending
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     read_parquet(write_parquet(*flatten_pending([]), "pending", tmp))[2]
    'pending'
    """
    root = Path(path)
    meta_path = root / _META_FILE
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if not meta and not _has_parquet(root / "entries"):
        raise ConfigError(f"{root} is not an exported Parquet dataset (no entries/ folder)")
    tables: dict[str, pa.Table | None] = {}
    for sub in ("entries", "codes"):
        folder = root / sub
        if not _has_parquet(folder):
            tables[sub] = None
            continue
        keys = _hive_keys(folder)
        dataset = ds.dataset(
            folder,
            format="parquet",
            partitioning=ds.partitioning(pa.schema([(k, pa.string()) for k in keys]), flavor="hive")
            if keys
            else None,
        )
        tables[sub] = dataset.to_table()
    found_entries, found_codes = tables["entries"], tables["codes"]
    kind: Kind = meta.get("kind") or _kind_of(
        found_entries.column_names if found_entries is not None else []
    )
    entries_schema, codes_schema = _file_schemas(kind)
    empty_entries, empty_codes = _empty(kind)
    entries = (
        empty_entries
        if found_entries is None
        else _from_arrow(found_entries, entries_schema, drop=_DERIVED)
    )
    codes = (
        empty_codes
        if found_codes is None
        else _from_arrow(
            found_codes,
            codes_schema,
            drop=[c for c in found_codes.column_names if c not in codes_schema.names],
        )
    )
    return entries, codes, kind


# --------------------------------------------------------------------------- CSV and Excel


def write_csv(
    entries: pd.DataFrame,
    codes: pd.DataFrame,
    kind: Kind,
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    overwrite: bool = False,
) -> Path:
    """Write ``path/entries.csv`` and ``path/codes.csv`` (header, RFC 4180 quoting).

    The format is that of :meth:`toolkit.egress.export.Export.to_csv`.

    Args:
        entries: The entries frame.
        codes: The codes frame.
        kind: ``"export"`` or ``"pending"``.
        path: The folder (created if needed).
        encoding: Text encoding (``"utf-8-sig"`` for Excel).
        overwrite: Replace an earlier export in ``path``.

    Returns:
        The folder.

    Raises:
        ConfigError: ``path`` holds data and ``overwrite`` is false, or the encoding is
            unknown or cannot encode a value.

    >>> import tempfile
    >>> from toolkit.egress.flatten import flatten_export
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sorted(p.name for p in write_csv(*flatten_export([]), "export", tmp).iterdir())
    ['codes.csv', 'entries.csv']
    """
    try:
        "".encode(encoding)
    except LookupError:
        raise ConfigError(f"unknown encoding {encoding!r}") from None
    root = claim_target(path, overwrite=overwrite)
    root.mkdir(parents=True, exist_ok=True)
    entries_schema, codes_schema = _file_schemas(kind)
    for name, frame, schema in (
        ("entries", entries, entries_schema),
        ("codes", codes, codes_schema),
    ):
        table = _to_arrow(frame, schema)
        for i, field in enumerate(table.schema):
            if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
                joined = pc.binary_join(table[field.name], _TAG_SEPARATOR)
                joined_chunks = cast("pa.ChunkedArray[Any]", joined)  # chunked in, chunked out
                table = table.set_column(i, field.name, joined_chunks)
            elif field.name == "workDate":
                day = pc.strftime(table[field.name], format="%Y-%m-%d")
                table = table.set_column(i, field.name, cast("pa.ChunkedArray[Any]", day))
            elif pa.types.is_timestamp(field.type):
                table = table.set_column(i, field.name, _iso_text(table[field.name]))
        sink = pa.BufferOutputStream()
        pa_csv.write_csv(table, sink)
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
) -> tuple[pd.DataFrame, pd.DataFrame, Kind]:
    """Load a folder written by :func:`write_csv`, restoring the documented dtypes.

    Args:
        path: The folder holding ``entries.csv`` and ``codes.csv``.
        kind: ``"export"`` or ``"pending"``; guessed from the columns if omitted.

    Returns:
        ``(entries, codes, kind)``.

    >>> import tempfile
    >>> from toolkit.egress.flatten import flatten_pending
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     read_csv(write_csv(*flatten_pending([]), "pending", tmp))[2]
    'pending'
    """
    root = Path(path)
    header = (root / "entries.csv").open(encoding="utf-8").readline()
    kind = kind or _kind_of(header.strip().replace('"', "").split(","))
    entries_schema, codes_schema = _file_schemas(kind)
    frames = []
    for name, schema in (("entries", entries_schema), ("codes", codes_schema)):
        types = {f.name: pa.string() if pa.types.is_list(f.type) else f.type for f in schema}
        table = pa_csv.read_csv(
            root / f"{name}.csv",
            parse_options=pa_csv.ParseOptions(newlines_in_values=True),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
        for field in schema:
            if pa.types.is_list(field.type) and field.name in table.column_names:
                text = table[field.name]
                split = pc.split_pattern(text, _TAG_SEPARATOR)  # type: ignore[call-overload]  # stubs: takes a ChunkedArray too
                lists = pc.if_else(pc.equal(text, pa.scalar("")), pc.list_slice(split, 0, 0), split)
                i = table.schema.get_field_index(field.name)
                table = table.set_column(i, field.name, lists)
        frames.append(_from_arrow(table, schema))
    return frames[0], frames[1], kind


def write_excel(
    entries: pd.DataFrame,
    codes: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
) -> Path:
    """Write one ``.xlsx`` workbook with a sheet per table (``entries``, ``codes``).

    Timestamps are written as UTC without a zone (Excel has none), tags joined with ``;``.
    Needs ``openpyxl`` (the ``excel`` extra).

    Args:
        entries: The entries frame.
        codes: The codes frame.
        path: The workbook file.
        overwrite: Replace an existing file; without it an existing one is refused.

    Returns:
        The file.

    Raises:
        ConfigError: The file exists and ``overwrite`` is false.

    >>> import tempfile, os
    >>> from toolkit.egress.flatten import flatten_export
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = write_excel(*flatten_export([]), os.path.join(tmp, "x.xlsx"))
    ...     sorted(pd.read_excel(out, sheet_name=None))
    ['codes', 'entries']
    """
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
