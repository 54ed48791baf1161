"""Flatten exported time entries (parsed JSON) into typed pandas tables.

Two JSON forms come out of the service (see the interface spec):

* the *export form* of ``GET /api/v2/customers/{customerId}/entries/export``;
* the *detailed form* of ``GET /api/v1/customers/{customerId}/entries/release-pending``.

Each flattens into two tables, linked like a parent and a child table:

* **entries**: one row per entry; nested objects become columns named by their dotted path
  (``initiative.client.externalId``);
* **codes**: one row per (entry, code), with ``entryId`` (the entry's ``_id``) and ``position``
  (0-based index in the entry's ``codes`` list). An entry without codes has no codes rows.

How (measured, see ``bench/README.md``): the parsed records are converted to Arrow in one
C++ pass against a *declared* struct type (no type inference, no per-row Python code), the
structs are flattened in Arrow, text timestamps are cast in Arrow, and the tables are handed
to pandas without copying the strings. Parsing raw bytes runs with the cyclic garbage
collector paused (:func:`gc_paused`): the collector otherwise re-scans every parsed dict
while ``orjson.loads`` builds hundreds of thousands of them, which costs several times the
parse itself.

Answers are checked: an entry without ``_id``, an ``_id`` twice in one answer, a field of
the wrong JSON type and a timestamp that is not ISO 8601 raise :class:`FlattenError` naming
the entry (the export names the window too). Counts (``unitIncrementCount``,
``incrementDurationInSeconds``) are JSON numbers, read as ``float64`` whatever their form
(``3``, ``2.5``): the published service sends doubles, so a fraction is kept as it is. The
detailed form also knows the published extras (``notes``, ``releaseCount``, ``lastSyncedAt``,
``firstReleaseAttemptedAt``, ``isShared``, ``sharedFrom`` as JSON text; the initiative's
``status`` and ``locale``, the client's ``type`` and ``parentClientId``, the code type's
``orderingSequence``). Missing fields and ``null`` objects become
nulls. A field the spec does not list is kept: as a column named by its dotted path
(``futureField``, ``initiative.client.region``; an object's fields ``futureField.flag``), after
the spec's columns, sorted by name, typed as the JSON holds it (text ``str``, whole numbers
``Int64``, numbers ``Float64``, booleans ``boolean``, lists Arrow lists; a field whose values
mix JSON types is kept as JSON text). ``entries.attrs["unknownFields"]`` maps each such field
(``codes.code.color`` for one inside a code) to the ``_id`` of the first entry holding it;
:func:`toolkit.egress.fetch.export_entries` warns about each once, naming it, that entry and
the window.

>>> from toolkit.testing import fake_export_entries
>>> entries, codes = flatten_export(fake_export_entries(2, codes_per_entry=3))
>>> len(entries), len(codes), codes["position"].tolist()
(2, 6, [0, 1, 2, 0, 1, 2])
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, Literal, cast

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from toolkit.errors import FlattenError

__all__ = [
    "FlattenError",
    "EXPORT_RECORD_TYPE",
    "PENDING_RECORD_TYPE",
    "gc_paused",
    "flatten_export",
    "flatten_pending",
    "flatten_export_arrow",
    "flatten_pending_arrow",
    "parse_and_flatten_export",
    "parse_and_flatten_pending",
    "arrow_to_pandas",
    "codes_wide",
    "UNKNOWN_FIELDS",
]

#: Key of ``entries.attrs`` (and of the entries Arrow schema's metadata) mapping each field the
#: spec does not list to the ``_id`` of the first entry that holds it.
UNKNOWN_FIELDS = "unknownFields"

Kind = Literal["export", "pending"]


_STR = pa.string()
_CLIENT = pa.struct(
    [
        ("_id", _STR),
        ("externalId", _STR),
        ("name", _STR),
        ("description", _STR),
        ("callSign", _STR),
    ]
)
_CODE_TYPE = [("_id", _STR), ("externalId", _STR), ("name", _STR), ("semanticType", _STR)]
_CODE_FIELDS = [("_id", _STR), ("externalId", _STR), ("name", _STR), ("description", _STR)]
_CODE = pa.struct([*_CODE_FIELDS, ("type", pa.struct(_CODE_TYPE))])
#: the detailed form's digests carry the published extras
_PENDING_CODE = pa.struct(
    [*_CODE_FIELDS, ("type", pa.struct([*_CODE_TYPE, ("orderingSequence", _STR)]))]
)
_PENDING_CLIENT = pa.struct([*_CLIENT, ("type", _STR), ("parentClientId", _STR)])
#: one dtype per count field in every frame, file and table: a JSON number may be a double
_COUNT = pa.float64()
#: timestamps of the detailed form's published extras (cast like createdAt)
_PENDING_TIMES = ("lastSyncedAt", "firstReleaseAttemptedAt")

#: Arrow type one export-form entry is read as (field order = column order of ``entries``).
EXPORT_RECORD_TYPE = pa.struct(
    [
        ("_id", _STR),
        ("customerId", _STR),
        ("userId", _STR),
        ("externalId", _STR),
        ("workDate", _STR),
        ("summary", _STR),
        ("unitIncrementCount", _COUNT),
        ("incrementDurationInSeconds", _COUNT),
        ("createdAt", _STR),
        ("updatedAt", _STR),
        ("initiative", pa.struct([("externalId", _STR), ("name", _STR), ("client", _CLIENT)])),
        ("codes", pa.list_(pa.struct([("code", _CODE), ("assignedBy", _STR)]))),
    ]
)

#: Arrow type one detailed-form (release-pending) entry is read as.
PENDING_RECORD_TYPE = pa.struct(
    [
        ("_id", _STR),
        ("customerId", _STR),
        ("userId", _STR),
        ("externalId", _STR),
        ("workDate", _STR),
        ("summary", _STR),
        ("unitIncrementCount", _COUNT),
        ("incrementDurationInSeconds", _COUNT),
        (
            "initiativeProps",
            pa.struct(
                [
                    ("type", _STR),
                    ("colorHex", _STR),
                    ("tags", pa.list_(_STR)),
                    ("nickname", _STR),
                    (
                        "initiative",
                        pa.struct(
                            [
                                ("type", _STR),
                                ("_id", _STR),
                                ("billingType", _STR),
                                ("callSign", _STR),
                                ("unitIncrements", pa.float64()),
                                ("externalId", _STR),
                                ("name", _STR),
                                ("description", _STR),
                                ("client", _PENDING_CLIENT),
                                ("status", _STR),
                                ("locale", _STR),
                            ]
                        ),
                    ),
                ]
            ),
        ),
        ("codes", pa.list_(_PENDING_CODE)),
        ("notes", _STR),
        ("releaseCount", pa.int64()),
        ("lastSyncedAt", _STR),
        ("firstReleaseAttemptedAt", _STR),
        ("isShared", pa.bool_()),
        ("sharedFrom", _STR),
    ]
)

_RECORD_TYPES: dict[Kind, pa.StructType] = {
    "export": EXPORT_RECORD_TYPE,
    "pending": PENDING_RECORD_TYPE,
}
_TIMESTAMP = pa.timestamp("us", tz="UTC")
_DATE_TS = pa.timestamp("us")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, restoring its previous state.

    Building many containers (``orjson.loads`` of a large array of objects) triggers a
    collection every few hundred allocations, and the older generations grow with the data,
    so the collector re-scans the whole parsed tree again and again. JSON cannot contain
    reference cycles, so pausing it loses nothing.

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_JSON_NAMES = {int: "number", float: "number", bool: "boolean", str: "string", list: "array"}


def _explain(records: Sequence[Any], record_type: pa.StructType, kind: Kind) -> str:
    """Find which field (or record) the Arrow conversion choked on, for the error text."""
    for i, rec in enumerate(records):
        if rec is None:
            return f"entry {i} is null, expected an object"
        if not isinstance(rec, dict):
            what = _JSON_NAMES.get(type(rec), type(rec).__name__)
            return f"entry {i} is a {what}, expected an object"
    for field in record_type:
        column = [rec.get(field.name) for rec in records]
        try:
            pa.array(column, type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            return f"field {field.name!r} of the {kind} form: {exc}"
    return f"records do not match the {kind} form"


def _struct_array(records: Iterable[dict[str, Any]], kind: Kind) -> pa.Table:
    """Convert records into an Arrow table of the declared record type (nested, untyped text)."""
    if isinstance(records, dict | str | bytes):
        raise FlattenError(f"expected a list of {kind} entries, got a {type(records).__name__}")
    if not isinstance(records, list | tuple):
        records = list(records)
    record_type = _RECORD_TYPES[kind]
    try:
        arr = pa.array(records, type=record_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise FlattenError(_explain(records, record_type, kind)) from exc
    # an array of a struct type is a StructArray (the stubs type pa.array's result by its items)
    chunks = cast("list[pa.StructArray]", arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr])
    if any(c.null_count for c in chunks):
        raise FlattenError(_explain(records, record_type, kind))
    batches = [pa.RecordBatch.from_struct_array(c) for c in chunks]
    return pa.Table.from_batches(batches, schema=pa.schema(list(record_type)))


def _json_text(records: Sequence[Any], name: str) -> Sequence[Any]:
    """Records with an object or list under ``name`` turned into its JSON text (a column of
    text: the published ``sharedFrom`` is an object whose fields are not given)."""
    if not any(isinstance(r, dict) and isinstance(r.get(name), dict | list) for r in records):
        return records
    return [
        {**r, name: orjson.dumps(r[name]).decode()}
        if isinstance(r, dict) and isinstance(r.get(name), dict | list)
        else r
        for r in records
    ]


def _check_ids(table: pa.Table) -> None:
    """Every entry has an ``_id``, and no ``_id`` comes twice."""
    ids = table["_id"]
    if ids.null_count:
        first = pc.index(pc.is_null(ids), True).as_py()
        raise FlattenError(f"entry {first} (0-based, in the answer) has no _id")
    if len(ids) and pc.count_distinct(ids).as_py() != len(ids):
        counts = pc.value_counts(ids)
        twice = [
            v.as_py()
            for v, n in zip(counts.field("values"), counts.field("counts"), strict=True)
            if n.as_py() > 1
        ]
        more = f" (and {len(twice) - 1} other _id(s))" if len(twice) > 1 else ""
        raise FlattenError(f"entry {twice[0]!r}: its _id comes more than once{more}")


def _flatten_records(records: Iterable[dict[str, Any]], kind: Kind) -> tuple[pa.Table, pa.Table]:
    """Records (parsed JSON) -> checked, flat (entries, codes) Arrow tables."""
    if not isinstance(records, list | tuple | dict | str | bytes):
        records = list(records)
    if isinstance(records, list | tuple) and kind == "pending":
        records = _json_text(records, "sharedFrom")
    entries, codes = _split(_struct_array(records, kind), kind)
    entries, codes = _add_unknown(entries, codes, cast("Sequence[dict[str, Any]]", records), kind)
    return _finish(entries, codes, kind)


# --------------------------------------------------------------------------- unknown fields


@cache
def _known(kind: Kind) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Column names of the entries and codes tables the spec's fields make."""
    entries, codes = _split(_struct_array([], kind), kind)
    return tuple(entries.column_names), tuple(codes.column_names)


def _unknown_paths(
    dicts: list[dict[str, Any]], declared: pa.StructType, prefix: tuple[str, ...]
) -> list[tuple[str, ...]]:
    """Paths of the keys of ``dicts`` (objects at one level) that ``declared`` does not list,
    looking inside the declared objects and lists of objects."""
    names = {f.name for f in declared}
    found = [(*prefix, k) for k in sorted(set().union(*dicts)) if k not in names]
    for field in declared:
        t = field.type
        if pa.types.is_struct(t):
            sub = [v for d in dicts if isinstance(v := d.get(field.name), dict)]
        elif pa.types.is_list(t) and pa.types.is_struct(t.value_type):
            t = t.value_type
            sub = [
                e
                for d in dicts
                if isinstance(v := d.get(field.name), list)
                for e in v
                if isinstance(e, dict)
            ]
        else:
            continue
        if sub:
            found += _unknown_paths(sub, t, (*prefix, field.name))
    return found


def _get(obj: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _json_column(values: list[Any]) -> pa.Array[Any]:
    """Values of an unknown field as JSON gives them, or as JSON text when their types mix."""
    try:
        inferred: pa.Array[Any] = pa.array(values)
        return inferred
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array(
            [None if v is None else orjson.dumps(v).decode() for v in values], type=_STR
        )


def _add_unknown(
    entries: pa.Table, codes: pa.Table, records: Sequence[dict[str, Any]], kind: Kind
) -> tuple[pa.Table, pa.Table]:
    """Append the fields the spec does not list (parsed records) as dotted columns."""
    if not isinstance(records, list | tuple) or not records:
        return entries, codes
    paths = _unknown_paths(list(records), _RECORD_TYPES[kind], ())
    if not paths:
        return entries, codes
    rows: list[Any] | None = None
    for path in paths:
        if path[0] == "codes":
            if rows is None:  # code elements, in the codes table's row order
                rows = [e for r in records if isinstance(c := r.get("codes"), list) for e in c]
            name = ".".join(path[1:]) if kind == "export" else ".".join(("code", *path[1:]))
            part = pa.table([_json_column([_get(e, path[1:]) for e in rows])], names=[name])
            part = _flatten_structs(part)
            for column, col_name in zip(part.columns, part.column_names, strict=True):
                codes = codes.append_column(col_name, column)
        else:
            values = [_get(r, path) for r in records]
            part = pa.table([_json_column(values)], names=[".".join(path)])
            part = _flatten_structs(part)
            for column, col_name in zip(part.columns, part.column_names, strict=True):
                entries = entries.append_column(col_name, column)
    return entries, codes


def _is_temporal(t: pa.DataType) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _is_temporal(t.value_type)
    return bool(pa.types.is_temporal(t))


def _finish(entries: pa.Table, codes: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """The spec's columns first, then the unknown ones sorted by name (an all-null one as
    text); the unknown fields and their first entry in the entries' schema metadata."""
    known_entries, known_codes = _known(kind)
    unknown: dict[str, str | None] = {}
    out = []
    for table, known, id_col, prefix in (
        (entries, known_entries, "_id", ""),
        (codes, known_codes, "entryId", "codes."),
    ):
        extra = sorted(n for n in table.column_names if n not in known)
        if not extra:
            out.append(table)
            continue
        table = table.select([*known, *extra])
        for name in extra:
            if pa.types.is_null(table[name].type):
                i = table.schema.get_field_index(name)
                table = table.set_column(i, name, table[name].cast(_STR))
        fields = sorted({_field_of(name, kind, bool(prefix)) for name in extra})
        for field in fields:
            cols = [n for n in extra if _field_of(n, kind, bool(prefix)) == field]
            present = pc.is_valid(table[cols[0]])
            for col in cols[1:]:
                present = pc.or_(present, pc.is_valid(table[col]))
            at = pc.index(present, True).as_py() if table.num_rows else -1
            ids = table[id_col]
            unknown[prefix + field] = ids[at if at >= 0 else 0].as_py() if len(ids) else None
        out.append(table)
    entries, codes = out
    if unknown:
        metadata: dict[bytes, bytes] = dict(entries.schema.metadata or {})
        metadata[UNKNOWN_FIELDS.encode()] = json.dumps(unknown).encode()
        entries = entries.replace_schema_metadata(metadata)
    return entries, codes


def _field_of(column: str, kind: Kind, in_codes: bool) -> str:
    """The unknown field a column comes from: the first name of its path the spec lacks."""
    parts = column.split(".")
    if in_codes and kind == "pending":
        parts = parts[1:]  # the code. prefix of the detailed form's flat codes
    record_type = _RECORD_TYPES[kind]
    declared: pa.DataType = record_type.field("codes").type.value_type if in_codes else record_type
    taken: list[str] = []
    for part in parts:
        taken.append(part)
        if not pa.types.is_struct(declared) or declared.get_field_index(part) < 0:
            break
        declared = declared.field(part).type
    return ".".join(taken)


def _flatten_structs(table: pa.Table) -> pa.Table:
    """Flatten struct columns recursively; children are named ``parent.child``."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _cast_timestamp(
    column: pa.ChunkedArray[Any], name: str, ids: pa.ChunkedArray[Any] | None = None
) -> pa.ChunkedArray[Any]:
    """ISO 8601 text to UTC microseconds; naive text is taken as UTC."""
    try:
        return pc.cast(column, _TIMESTAMP)
    except pa.ArrowInvalid:
        pass
    parsed = pd.to_datetime(column.to_pandas(), utc=True, format="ISO8601", errors="coerce")
    bad = parsed.isna() & column.to_pandas().notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        rid = ids[i].as_py() if ids is not None else None
        entry = f"entry {rid!r}" if rid else f"entry {i}"
        raise FlattenError(f"{entry}: {name} {column[i].as_py()!r} is not an ISO 8601 timestamp")
    return pa.chunked_array([pa.array(parsed.dt.as_unit("us"), type=_TIMESTAMP)])


def _cast_date(column: pa.ChunkedArray[Any], name: str) -> pa.ChunkedArray[Any]:
    """``YYYY-MM-DD`` text (anything after the 10th character ignored) to naive midnight."""
    try:
        return pc.cast(pc.cast(pc.utf8_slice_codeunits(column, 0, 10), pa.date32()), _DATE_TS)
    except pa.ArrowInvalid as exc:
        raise FlattenError(f"{name!r} holds a value that is not a YYYY-MM-DD date: {exc}") from exc


def _type_entries(table: pa.Table) -> pa.Table:
    for name in ("createdAt", "updatedAt", *_PENDING_TIMES):
        if name in table.column_names:
            i = table.schema.get_field_index(name)
            ids = table["_id"] if "_id" in table.column_names else None
            table = table.set_column(i, name, _cast_timestamp(table[name], name, ids))
    i = table.schema.get_field_index("workDate")
    return table.set_column(i, "workDate", _cast_date(table["workDate"], "workDate"))


def _split(table: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """Split the nested record table into the flat entries and codes tables."""
    _check_ids(table)
    codes_list = cast("pa.ListArray[Any]", table["codes"].combine_chunks())
    entries = _type_entries(_flatten_structs(table.drop_columns(["codes"])))

    lengths = pc.fill_null(pc.list_value_length(codes_list), 0).to_numpy(zero_copy_only=False)
    lengths = lengths.astype(np.int64, copy=False)
    total = int(lengths.sum())
    parents = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)

    values = cast("pa.StructArray", codes_list.flatten())  # skips null lists, honours offsets
    # StructArray.flatten() (unlike Table.from_struct_array) keeps a null element null.
    children = _flatten_structs(pa.table(values.flatten(), names=[f.name for f in values.type]))
    if kind == "pending":  # flat code objects: prefix to match the export form's names
        children = children.rename_columns([f"code.{n}" for n in children.column_names])
    entry_ids = table["_id"].combine_chunks().take(pa.array(parents, type=pa.int64()))
    codes = pa.table(
        [entry_ids, pa.array(position), *children.columns],
        names=["entryId", "position", *children.column_names],
    )
    return entries, codes


def _pandas_type(arrow_type: pa.DataType) -> Any:
    """types_mapper: nullable integers, floats and booleans, Arrow-backed lists; strings stay
    ``str``."""
    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_floating(arrow_type):
        return pd.Float64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pd.ArrowDtype(arrow_type)
    return None


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """Convert a flat Arrow table of this module to pandas with the documented dtypes.

    Text becomes the pandas ``str`` dtype (Arrow-backed, no copy), integers ``Int64``,
    floats ``Float64``, booleans ``boolean``, lists ``ArrowDtype`` of their Arrow type,
    timestamps stay ``datetime64[us]`` (tz-aware where the Arrow type is). A ``position``
    column becomes plain ``int64``. The unknown fields noted in the schema's metadata go to
    ``attrs["unknownFields"]``.

    Args:
        table: A table as returned by :func:`flatten_export_arrow` (or read from Parquet).

    Returns:
        The DataFrame, with a fresh ``RangeIndex``.

    >>> import pyarrow as pa
    >>> arrow_to_pandas(pa.table({"n": [1, None], "s": ["a", None]})).dtypes.astype(str).tolist()
    ['Int64', 'str']
    """
    df = table.to_pandas(types_mapper=_pandas_type)
    if "position" in df.columns:
        df["position"] = df["position"].astype("int64")
    found = (table.schema.metadata or {}).get(UNKNOWN_FIELDS.encode())
    if found:
        df.attrs[UNKNOWN_FIELDS] = json.loads(found)
    return df


def flatten_export_arrow(records: Iterable[dict[str, Any]]) -> tuple[pa.Table, pa.Table]:
    """Flatten export-form entries into typed Arrow tables (entries, codes).

    Same columns as :func:`flatten_export`, without the pandas conversion: use it to stream
    window after window straight to Parquet.

    Args:
        records: Parsed entries in the export form.

    Returns:
        ``(entries, codes)`` as :class:`pyarrow.Table`.

    Raises:
        FlattenError: A record is not an object, or a field has the wrong JSON type.

    >>> from toolkit.testing import fake_export_entries
    >>> entries, codes = flatten_export_arrow(fake_export_entries(3, codes_per_entry=2))
    >>> entries.num_rows, codes.num_rows, str(entries.schema.field("createdAt").type)
    (3, 6, 'timestamp[us, tz=UTC]')
    """
    return _flatten_records(records, "export")


def flatten_pending_arrow(records: Iterable[dict[str, Any]]) -> tuple[pa.Table, pa.Table]:
    """Flatten detailed-form (release-pending) entries into typed Arrow tables.

    Args:
        records: Parsed entries in the detailed form.

    Returns:
        ``(entries, codes)`` as :class:`pyarrow.Table`.

    Raises:
        FlattenError: A record is not an object, or a field has the wrong JSON type.

    >>> from toolkit.testing import fake_pending_entries
    >>> entries, codes = flatten_pending_arrow(fake_pending_entries(2, codes_per_entry=1))
    >>> entries.num_rows, codes.num_rows
    (2, 2)
    """
    return _flatten_records(records, "pending")


def flatten_export(records: Iterable[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flatten export-form entries (v2 export) into typed ``entries`` and ``codes`` frames.

    Columns and dtypes are the contract of
    :class:`toolkit.egress.schemas.ExportEntriesSchema` and
    :class:`toolkit.egress.schemas.ExportCodesSchema`.

    Args:
        records: Parsed entries in the export form (a list of dicts, as ``orjson.loads``
            returns).

    Returns:
        ``(entries, codes)``: one row per entry; one row per (entry, code) with ``entryId``
        and 0-based ``position``.

    Raises:
        FlattenError: A record is not an object, or a field has the wrong JSON type.

    >>> from toolkit.testing import fake_export_entry
    >>> entries, codes = flatten_export([fake_export_entry(codes=2, initiative=None)])
    >>> entries["initiative.client.externalId"].isna().tolist(), len(codes)
    ([True], 2)
    >>> str(entries["updatedAt"].dtype), str(entries["workDate"].dtype)
    ('datetime64[us, UTC]', 'datetime64[us]')
    """
    entries, codes = flatten_export_arrow(records)
    return arrow_to_pandas(entries), arrow_to_pandas(codes)


def flatten_pending(records: Iterable[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flatten detailed-form entries (release-pending) into typed ``entries`` and ``codes``.

    ``initiativeProps`` becomes ``initiativeProps.*`` columns (``initiativeProps.tags`` a list
    column), the nested initiative ``initiativeProps.initiative.*``. Codes are named
    ``code.*`` as in the export form, without ``assignedBy`` (the form has none).

    Args:
        records: Parsed entries in the detailed form.

    Returns:
        ``(entries, codes)`` as in :func:`flatten_export`; see
        :class:`toolkit.egress.schemas.PendingEntriesSchema` for the columns.

    Raises:
        FlattenError: A record is not an object, or a field has the wrong JSON type.

    >>> from toolkit.testing import fake_pending_entry
    >>> entries, codes = flatten_pending([fake_pending_entry(tags=["pinned"], codes=0)])
    >>> entries["initiativeProps.tags"].tolist(), len(codes)
    ([['pinned']], 0)
    """
    entries, codes = flatten_pending_arrow(records)
    return arrow_to_pandas(entries), arrow_to_pandas(codes)


def _loads(raw: bytes | bytearray | memoryview | str, kind: Kind) -> list[dict[str, Any]]:
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise FlattenError(f"not valid JSON: {exc}") from exc
    if not isinstance(parsed, list):
        raise FlattenError(f"expected a JSON array of {kind} entries, got {type(parsed).__name__}")
    return parsed


def _read_json_arrow(raw: bytes | bytearray | memoryview | str, kind: Kind) -> pa.Table | None:
    """Parse a JSON array of entries straight into Arrow, or ``None`` if Arrow can't.

    Arrow's JSON reader wants one object per line, so the array is wrapped as the one field
    of one object (``{"r": [...]}``), read against the declared type in a single block.
    Anything it cannot read (not an array, null entries, a number where text is declared,
    a body too large for one block) returns ``None`` and the caller takes the orjson path,
    which either succeeds or names the offending field.
    """
    data = raw.encode() if isinstance(raw, str) else raw
    if len(data) >= 2**31 - 16:
        return None
    wrapped = b"".join((b'{"r":', data, b"}"))
    record_type = _RECORD_TYPES[kind]  # fields it lacks are inferred (kept as columns)
    try:
        table = pa_json.read_json(
            pa.BufferReader(wrapped),  # type: ignore[arg-type]  # stubs: input_file omits NativeFile
            read_options=pa_json.ReadOptions(block_size=len(wrapped) + 1),
            parse_options=pa_json.ParseOptions(
                explicit_schema=pa.schema([("r", pa.list_(record_type))]),
                unexpected_field_behavior="infer",
                newlines_in_values=b"\n" in data,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    del wrapped
    if table.num_rows != 1 or table["r"].null_count:
        return None
    listed = cast("pa.ListArray[Any]", table["r"].combine_chunks())  # list<struct>: its items
    entries = cast("pa.StructArray", listed.values)
    if entries.null_count:
        return None
    return pa.Table.from_batches(
        [pa.RecordBatch.from_struct_array(entries)], schema=pa.schema(list(entries.type))
    )


def _parse_and_flatten(
    raw: bytes | bytearray | memoryview | str, kind: Kind
) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = _read_json_arrow(raw, kind)
    if table is not None:
        entries, codes = _finish(*_split(table, kind), kind)
        known = set(_known(kind)[0]) | set(_known(kind)[1])
        inferred = [f.type for t in (entries, codes) for f in t.schema if f.name not in known]
        # Arrow's reader takes ISO text of an unknown field for a timestamp: the parsed
        # path keeps it text, as it came
        if not any(_is_temporal(t) for t in inferred):
            return arrow_to_pandas(entries), arrow_to_pandas(codes)
    # The collector stays paused until the parsed objects are gone: re-enabled while they
    # are alive, its next full pass would walk all of them once more.
    with gc_paused():
        records = _loads(raw, kind)
        entries, codes = _flatten_records(records, kind)
        del records
        return arrow_to_pandas(entries), arrow_to_pandas(codes)


def parse_and_flatten_export(
    raw: bytes | bytearray | memoryview | str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parse a v2 export response body (a JSON array) and flatten it; see :func:`flatten_export`.

    Parsing runs with the garbage collector paused (:func:`gc_paused`), and the parsed
    objects are freed before returning.

    Args:
        raw: The response body.

    Returns:
        ``(entries, codes)``.

    Raises:
        FlattenError: Not JSON, not an array, or not the export form.

    >>> entries, codes = parse_and_flatten_export(b'[{"_id": "a1", "workDate": "2026-11-02"}]')
    >>> entries["_id"].tolist(), entries["workDate"].tolist(), len(codes)
    (['a1'], [Timestamp('2026-11-02 00:00:00')], 0)
    """
    return _parse_and_flatten(raw, "export")


def parse_and_flatten_pending(
    raw: bytes | bytearray | memoryview | str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parse a release-pending response body and flatten it; see :func:`flatten_pending`.

    Args:
        raw: The response body.

    Returns:
        ``(entries, codes)``.

    Raises:
        FlattenError: Not JSON, not an array, or not the detailed form.

    >>> body = b'[{"_id": "a1", "initiativeProps": {"tags": ["pinned"]}, "codes": null}]'
    >>> entries, codes = parse_and_flatten_pending(body)
    >>> entries["initiativeProps.tags"].tolist(), len(codes)
    ([['pinned']], 0)
    """
    return _parse_and_flatten(raw, "pending")


def codes_wide(entries: pd.DataFrame, codes: pd.DataFrame) -> pd.DataFrame:
    """Pivot codes to one row per entry and one column per code type.

    Each column is named by the code type's ``externalId`` and holds the ``externalId`` of
    the entry's code of that type (the first by position if there are several). Columns are
    ordered by the code types' first position; entries without a code of a type hold a
    missing value.

    Args:
        entries: The entries table (its ``_id`` column gives rows and their order).
        codes: The codes table (``entryId``, ``position``, ``code.externalId``,
            ``code.type.externalId``).

    Returns:
        A frame indexed by ``_id`` (same order as ``entries``), ``str`` columns.

    >>> from toolkit.testing import fake_export_entry
    >>> entries, codes = flatten_export(
    ...     [fake_export_entry(_id="e1", codes=2), fake_export_entry(_id="e2", codes=0)])
    >>> wide = codes_wide(entries, codes)
    >>> wide.columns.tolist(), wide.index.tolist(), wide.loc["e2"].isna().all()
    (['task-code', 'activity-code'], ['e1', 'e2'], np.True_)
    """
    index = pd.Index(entries["_id"], name="_id")
    kept = codes.loc[
        codes["code.type.externalId"].notna(),
        ["entryId", "position", "code.type.externalId", "code.externalId"],
    ]
    if kept.empty:
        return pd.DataFrame(index=index)
    kept = kept.sort_values(["position"], kind="stable")
    order = pd.unique(kept["code.type.externalId"])
    kept = kept.drop_duplicates(["entryId", "code.type.externalId"], keep="first")
    wide = kept.pivot(index="entryId", columns="code.type.externalId", values="code.externalId")
    wide = wide.reindex(index=index, columns=order)
    wide.columns = pd.Index(list(order))
    return wide.astype("str")
