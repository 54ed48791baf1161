"""Parse and flatten an answer's JSON into two typed Arrow tables: one way, from the bytes.

**entries** (one row per entry; nested objects as dotted columns) and **codes** (one row per
entry and code: ``entryId``, 0-based ``position``), read by Arrow's JSON reader against a
declared type. A missing or repeated ``_id``, a wrong JSON type or a bad timestamp raise
:class:`FlattenError`. Fields the spec does not list become columns after the spec's;
``entries.attrs["unknownFields"]`` maps each to the first entry holding it.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache, reduce
from typing import Any, Literal, cast

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from toolkit._core.dtypes import TEXT
from toolkit._egress.schemas import MODELS
from toolkit.errors import FlattenError, InputWarning

#: Key of ``entries.attrs`` (and of the entries Arrow schema's metadata) mapping each field the
#: spec does not list to the ``_id`` of the first entry that holds it.
UNKNOWN_FIELDS = "unknownFields"

Kind = Literal["export", "pending"]
Raw = bytes | bytearray | memoryview | str

_STR: pa.DataType = pa.string()
#: the Arrow type the JSON reader reads each pandera dtype of :mod:`.schemas` as: text for every
#: other one (the times too, parsed after the read), lists as their Arrow type
_READ_AS: dict[str, Any] = {"Float64": pa.float64(), "Int64": pa.int64(), "boolean": pa.bool_()}


def _nest(columns: Iterable[tuple[str, pa.DataType]]) -> pa.StructType:
    """Dotted columns and their types as one nested struct: ``a.b`` is the field ``b`` of ``a``."""
    tree: dict[str, Any] = {}
    for name, dtype in columns:
        *parents, leaf = name.split(".")
        node = tree
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = dtype
    return _struct(tree)


def _read_as(dtype: Any) -> Any:
    return getattr(dtype.type, "pyarrow_dtype", None) or _READ_AS.get(str(dtype), _STR)


def _struct(tree: dict[str, Any]) -> pa.StructType:
    return pa.struct([(k, _struct(v) if isinstance(v, dict) else v) for k, v in tree.items()])


@cache
def _declared(kind: Kind) -> pa.StructType:
    """An entry of the answer as the spec declares it, built from the pandera models of the two
    tables (:data:`~toolkit._egress.schemas.MODELS`, the one list of the columns): ``codes``, a
    list of code objects, comes where the answer has it, after the last nested field."""
    tables = [m.to_schema().columns for m in MODELS[kind]]
    entries, codes = ([(n, _read_as(c.dtype)) for n, c in t.items()] for t in tables)
    code = [(n.removeprefix("code." if kind == "pending" else ""), t) for n, t in codes[2:]]
    at = max(i for i, (name, _) in enumerate(entries) if "." in name) + 1
    return _nest([*entries[:at], ("codes", pa.list_(_nest(code))), *entries[at:]])


_TIMES = ("createdAt", "updatedAt", "lastSyncedAt", "firstReleaseAttemptedAt")
_TIMESTAMP = pa.timestamp("us", tz="UTC")
DAY_TYPE = pa.timestamp("us")
#: a body is cut into pieces of about this size, read on every core (small pieces stay in cache)
_PIECE = 2 << 20
_MAX_BLOCK = 2**31 - 64


def _pieces(data: bytes, pieces: int) -> list[tuple[int, int]] | None:
    """Cut a JSON array at ``},{"<first key>":`` boundaries: ``[start, end)`` spans, or ``None``.

    A cut inside a nested object leaves a piece that is not JSON: the caller then reads whole.
    """
    start = data.find(b"{")
    colon = data.find(b'":', start)
    if start < 0 or colon < 0 or colon - start > 64:
        return None
    marker = b"},{" + data[start + 1 : colon + 2]
    spans, at = [], start
    for k in range(1, pieces):
        cut = data.find(marker, max(at, len(data) * k // pieces))
        if cut < 0:
            break
        spans.append((at, cut + 1))
        at = cut + 2
    end = data.rfind(b"]")
    return [*spans, (at, end)] if spans and end > at else None


def _read(
    data: bytes, kind: Kind, record: pa.StructType | None = None, split: bool = True
) -> pa.Table:
    """A JSON array of entries as a nested Arrow table (ArrowInvalid when Arrow can't read it)."""
    parse = pa_json.ParseOptions(
        explicit_schema=pa.schema([("r", pa.list_(record or _declared(kind)))]),
        unexpected_field_behavior="infer",  # fields the spec does not list: typed as found
        newlines_in_values=b"\n" in data,
    )
    spans = _pieces(data, len(data) // _PIECE + 1) if split else None
    view = memoryview(data)

    def one(span: tuple[int, int] | None) -> pa.Table:  # each piece copied in its own thread
        body = b"".join(
            (b'{"r":[', view[span[0] : span[1]], b"]}") if span else (b'{"r":', view, b"}")
        )
        if len(body) >= _MAX_BLOCK:
            raise pa.ArrowInvalid("the answer is too large to read in one block")
        options = pa_json.ReadOptions(block_size=len(body) + 1, use_threads=False)
        return pa_json.read_json(pa.BufferReader(body), read_options=options, parse_options=parse)  # type: ignore[arg-type]  # stubs: input_file omits NativeFile

    try:  # pieces typed apart (an unknown field in some) are unified as Arrow's inference would
        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # a failed piece cancels the rest
            pieces = list(pool.map(one, spans or [None]))
        table = pa.concat_tables(pieces, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        if spans:  # a cut that was not between entries: read it whole
            return _read(data, kind, record, split=False)
        raise
    items = cast("pa.ChunkedArray[Any]", pc.list_flatten(table["r"]))
    if table["r"].null_count or items.null_count:
        raise pa.ArrowInvalid("the answer is not an array of objects")
    return pa.Table.from_batches(
        [pa.RecordBatch.from_struct_array(cast("pa.StructArray", c)) for c in items.chunks],
        schema=pa.schema(list(items.type)),
    )


def parse_answer(raw: Raw, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """An answer's bytes -> the checked, flat ``(entries, codes)`` tables."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    unreadable = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError)
    for mode in ("as sent", "repaired", "unknown fields as text"):
        try:
            if mode != "as sent":  # an unknown field Arrow still cannot type (mixed types
                data = _repaired(data, kind, text=mode != "repaired")  # inside one value)
            table = _read(data, kind)
            found = pa.struct(list(table.schema))
            if _no_time(found) != found:  # Arrow took ISO text of an unknown field for a
                table = _read(data, kind, cast("pa.StructType", _no_time(found)))  # timestamp
            return _finish(*_split(table, kind), kind)
        except unreadable as exc:
            error = exc  # the last mode's is the answer's
    raise FlattenError(f"the entries do not match the {kind} form: {error}") from None


def dumps_records(records: Iterable[dict[str, Any]], kind: Kind) -> bytes:
    if isinstance(records, dict | str | bytes):
        raise FlattenError(f"expected a list of {kind} entries, got a {type(records).__name__}")
    try:
        return orjson.dumps(records if isinstance(records, list | tuple) else list(records))
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise FlattenError(f"the {kind} entries are not JSON: {exc}") from None


_JSON_NAMES = {int: "number", float: "number", bool: "boolean", str: "string", list: "array"}


def _repaired(data: bytes, kind: Kind, *, text: bool = False) -> bytes:
    """What Arrow could not read, via orjson: a :class:`FlattenError` naming what is wrong, or
    the body with ``sharedFrom`` objects and mixed-type unknown fields (``text``: every unknown
    field) as JSON text."""
    try:
        records = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FlattenError(f"not valid JSON: {exc}") from None
    if not isinstance(records, list):
        raise FlattenError(f"expected a JSON array of {kind} entries, got {type(records).__name__}")
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            what = "null" if rec is None else f"a {_JSON_NAMES.get(type(rec), 'value')}"
            raise FlattenError(f"entry {i} is {what}, expected an object")
        shared = rec.get("sharedFrom") if kind == "pending" else None
        if isinstance(shared, dict | list):  # published, its fields not given: kept as text
            rec["sharedFrom"] = orjson.dumps(shared).decode()
    odd: OddValues = {}
    for i, rec in enumerate(records):
        entry = rec.get("_id") if isinstance(rec.get("_id"), str) else f"{i} (0-based)"
        for field in _declared(kind):
            if rec.get(field.name) is not None:
                rec[field.name] = _fit(rec[field.name], field.type, (field.name,), entry, odd)
    _warn_odd(kind, odd)
    for path in _unknown_paths(records, _declared(kind), ()):
        holders = _holders(records, path[:-1])
        values = [h.get(path[-1]) for h in holders]
        if not text:
            try:
                pa.array(values)
                continue
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                pass
        for holder, value in zip(holders, values, strict=True):
            if value is not None:
                holder[path[-1]] = orjson.dumps(value).decode()
    return orjson.dumps(records)


#: fields the published documents add to interface.md's detailed form (published.md): a value of
#: the wrong type there never costs the answer; text fields keep it as JSON text, others read null
OUTSIDE_INTERFACE = frozenset(
    "notes releaseCount lastSyncedAt firstReleaseAttemptedAt isShared sharedFrom"
    " initiativeProps.initiative.status initiativeProps.initiative.locale"
    " initiativeProps.initiative.client.type initiativeProps.initiative.client.parentClientId"
    " codes.type.orderingSequence".split()
)
_WHAT = {"string": "text", "double": "a number", "int64": "a whole number", "bool": "true/false"}


#: (field, the type it is read as, what was done) -> [(entry, value)] of values not of that type
OddValues = dict[tuple[str, str, str], list[tuple[Any, Any]]]


def _fit(value: Any, t: pa.DataType, path: tuple[str, ...], entry: Any, odd: OddValues) -> Any:
    """``value`` as the declared type ``t`` reads it (a whole float as an int), or refused.

    A value of another JSON type in an interface field raises a :class:`FlattenError` naming
    the entry, the field and the value; in a field :data:`OUTSIDE_INTERFACE`, it becomes JSON
    text (a text field) or null, noted in ``odd``.
    """
    if value is None:
        return None
    if pa.types.is_struct(t) and isinstance(value, dict):
        for f in t:
            if value.get(f.name) is not None:
                value[f.name] = _fit(value[f.name], f.type, (*path, f.name), entry, odd)
        return value
    if pa.types.is_list(t) and isinstance(value, list):
        return [_fit(v, t.value_type, path, entry, odd) for v in value]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if (
        (pa.types.is_string(t) and isinstance(value, str))
        or (pa.types.is_boolean(t) and isinstance(value, bool))
        or (pa.types.is_floating(t) and number)
    ):
        return value
    if pa.types.is_integer(t) and number and float(value).is_integer() and abs(value) < 2**63:
        return int(value)
    name = ".".join(path)
    what = _WHAT.get(str(t), "an object" if pa.types.is_struct(t) else "a list")
    if name in OUTSIDE_INTERFACE:
        text = pa.types.is_string(t)
        done = "kept as JSON text" if text else "read as null"
        odd.setdefault((name, what, done), []).append((entry, value))
        return orjson.dumps(value).decode() if text else None
    raise FlattenError(f"entry {entry!r}: {name} {value!r} is not {what}")


def _warn_odd(kind: Kind, odd: OddValues) -> None:
    """One :class:`~toolkit.errors.InputWarning` per field outside the interface that held values
    not of its published type: the field, the first entry and value, how many, what was kept."""
    for (name, what, kept), found in odd.items():
        entry, value = found[0]
        more = f" (and {len(found) - 1} more entries)" if len(found) > 1 else ""
        warnings.warn(
            f"the {kind} answer's entry {entry!r} holds {name} {value!r}{more}, not {what};"
            f" {name} is a field outside the interface: {kept}",
            InputWarning,
            stacklevel=5,
        )


def _unknown_paths(
    dicts: list[dict[str, Any]], declared: pa.StructType, prefix: tuple[str, ...]
) -> list[tuple[str, ...]]:
    """Paths of the keys ``declared`` does not list, inside declared objects and lists."""
    names = {f.name for f in declared}
    found = [(*prefix, k) for k in sorted(set().union(*dicts)) if k not in names]
    for field in declared:
        t = field.type
        if pa.types.is_list(t) and pa.types.is_struct(t.value_type):
            t = t.value_type
        if pa.types.is_struct(t):
            sub = _holders(dicts, (field.name,))
            found += _unknown_paths(sub, t, (*prefix, field.name)) if sub else []
    return found


def _holders(dicts: list[dict[str, Any]], path: Sequence[str]) -> list[dict[str, Any]]:
    """The objects at ``path`` (a list of objects counts as its objects)."""
    for key in path:
        found = [d.get(key) for d in dicts]
        dicts = [
            v for f in found for v in (f if isinstance(f, list) else [f]) if isinstance(v, dict)
        ]
    return dicts


def _no_time(t: pa.DataType) -> pa.DataType:
    if pa.types.is_temporal(t):
        return _STR
    if pa.types.is_list(t):
        return pa.list_(_no_time(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([(f.name, _no_time(f.type)) for f in t])
    return t


def _flat(table: pa.Table) -> pa.Table:
    """Flatten struct columns recursively; children are named ``parent.child``."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _timestamps(
    column: pa.ChunkedArray[Any], name: str, ids: pa.ChunkedArray[Any], kind: Kind
) -> Any:
    """ISO 8601 text to UTC microseconds; naive text is taken as UTC.

    Other text is refused naming the entry, or, in a field :data:`OUTSIDE_INTERFACE`, read as
    null with a warning.
    """
    try:
        return pc.cast(column, _TIMESTAMP)
    except pa.ArrowInvalid:
        pass
    zoned = pc.match_substring_regex(column, r"(Z|[+-]\d\d:?\d\d)$")
    as_utc = pc.replace_substring_regex(column, "$", "Z", max_replacements=1)  # naive: UTC
    given = pc.if_else(zoned, column, as_utc)
    return _cast(given, _TIMESTAMP, (name, "an ISO 8601 timestamp"), column, ids, kind)


def _cast(
    text: Any, t: pa.DataType, field: tuple[str, str], shown: Any, ids: Any, kind: Kind
) -> Any:
    """Text cast to ``t``. A value that does not cast is refused naming the entry, the field
    and the value as given (``shown``), or, in a field :data:`OUTSIDE_INTERFACE`, read as null
    with a warning. ``field``: its name, and what its values must be. When the whole column
    does not cast, each text is cast alone to find the positions of those that do not."""
    name, what = field
    try:
        return pc.cast(text, t)
    except pa.ArrowInvalid:
        values = text.to_pylist()
    bad = []
    for i, value in enumerate(values):
        try:
            pa.scalar(value, _STR).cast(t)
        except pa.ArrowInvalid:
            bad.append(i)
    if name not in OUTSIDE_INTERFACE:
        raise FlattenError(
            f"entry {ids[bad[0]].as_py()!r}: {name} {shown[bad[0]].as_py()!r} is not {what}"
        )
    _warn_odd(
        kind, {(name, what, "read as null"): [(ids[i].as_py(), shown[i].as_py()) for i in bad]}
    )
    for i in bad:
        values[i] = None
    return pa.array(values, _STR).cast(t)


def _unique(table: pa.Table, ids: pa.ChunkedArray[Any], kind: Kind, prefix: str) -> pa.Table:
    """``table`` with each column name once. A later column of a name already taken (a field
    outside the interface whose name holds a dot, as ``"a.b"`` beside ``{"a": {"b": ...}}``, or
    a code's own field named as a column the codes table makes: ``entryId``, ``position``) is
    dropped, with a warning naming the first entry (``ids``: each row's) holding a value in it."""
    taken: set[str] = set()
    keep = []
    for at, name in enumerate(table.column_names):
        if name not in taken:
            taken.add(name)
            keep.append(at)
            continue
        column = table.column(at)
        held = pc.index(pc.is_valid(column), True).as_py()
        if held >= 0:
            warnings.warn(
                f"the {kind} answer's entry {ids[held].as_py()!r} holds {prefix}{name}"
                f" {column[held].as_py()!r}, a field outside the interface named as another"
                " column: dropped",
                InputWarning,
                stacklevel=5,
            )
    return table.select(keep)


def _split(table: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """Check the ids, split the nested table into the flat, typed entries and codes tables."""
    ids = table["_id"]
    if ids.null_count:
        first = pc.index(pc.is_null(ids), True).as_py()
        raise FlattenError(f"entry {first} (0-based, in the answer) has no _id")
    if len(ids) and pc.count_distinct(ids).as_py() != len(ids):
        counts = pc.value_counts(ids)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), pa.scalar(1)))
        more = f" (and {len(twice) - 1} other _id(s))" if len(twice) > 1 else ""
        raise FlattenError(f"entry {twice[0].as_py()!r}: its _id comes more than once{more}")
    entries = _unique(_flat(table.drop_columns(["codes"])), ids, kind, "")
    for name in _TIMES:
        if name in entries.column_names:
            at = entries.schema.get_field_index(name)
            entries = entries.set_column(at, name, _timestamps(entries[name], name, ids, kind))
    first10 = pc.utf8_slice_codeunits(entries["workDate"], 0, 10)
    date = ("workDate", "a YYYY-MM-DD date")
    day = _cast(first10, pa.date32(), date, entries["workDate"], ids, kind)
    entries = entries.set_column(4, "workDate", pc.cast(day, DAY_TYPE))

    lists = table["codes"]
    parents = pc.list_parent_indices(lists)  # each code's entry
    lengths = pc.list_value_length(lists).fill_null(0)
    starts = pc.subtract(pc.cumulative_sum(lengths), lengths).take(parents)  # its list's first
    values = pc.list_flatten(lists)
    # StructArray.flatten() (unlike Table.from_struct_array) keeps a null element null
    children = _flat(pa.table(values.flatten(), names=[f.name for f in values.type]))
    # in Arrow's memory, not numpy's: an Arrow writer thread freeing numpy memory needs the
    # GIL, which it cannot take once the interpreter exits (issue 39 finding 8)
    position = pc.subtract(pa.array(np.arange(len(parents), dtype=np.int64)), starts)
    owners = table["_id"].take(parents)
    codes = pa.table(
        [owners, position, *children.columns], names=["entryId", "position", *children.column_names]
    )
    codes = _unique(codes, owners, kind, "codes.")
    if kind == "pending":  # flat code objects: prefixed to match the export form's names
        codes = codes.rename_columns(
            [n if i < 2 else f"code.{n}" for i, n in enumerate(codes.column_names)]
        )
    return entries, codes


@cache
def _known(kind: Kind) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Column names of the entries and codes tables the spec's fields make: the models'."""
    entries, codes = (tuple(m.to_schema().columns) for m in MODELS[kind])
    return entries, codes


def _finish(entries: pa.Table, codes: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """The spec's columns, then the unknown ones by name; those noted in the schema metadata."""
    unknown: dict[str, str | None] = {}
    out = []
    for table, known, id_col, prefix in (
        (entries, _known(kind)[0], "_id", ""),
        (codes, _known(kind)[1], "entryId", "codes."),
    ):
        extra = sorted(n for n in table.column_names if n not in known)
        table = table.select([*known, *extra])
        text = [f.with_type(_STR) if pa.types.is_null(f.type) else f for f in table.schema]
        table = table.cast(pa.schema(text))  # a column of nulls only (no type found): text
        for field in sorted({_field_of(name, kind, bool(prefix)) for name in extra}):
            cols = [n for n in extra if _field_of(n, kind, bool(prefix)) == field]
            present = reduce(pc.or_, (pc.is_valid(table[col]) for col in cols))
            at = pc.index(present, True).as_py() if table.num_rows else -1
            unknown[prefix + field] = table[id_col][max(at, 0)].as_py() if table.num_rows else None
        out.append(table)
    entries, codes = out
    if unknown:
        entries = entries.replace_schema_metadata({UNKNOWN_FIELDS: json.dumps(unknown)})
    return entries, codes


def _field_of(column: str, kind: Kind, in_codes: bool) -> str:
    """The unknown field a column comes from: the first name of its path the spec lacks."""
    # the spec's columns (of the codes: not entryId and position, which the answer lacks) and
    # the objects that hold them (``a`` and ``a.b`` of ``a.b.c``)
    names = _known(kind)[1][2:] if in_codes else _known(kind)[0]
    known = {n.rsplit(".", k)[0] for n in names for k in range(n.count(".") + 1)}
    parts = column.split(".")
    end = next((k for k in range(1, len(parts)) if ".".join(parts[:k]) not in known), len(parts))
    return ".".join(parts[int(in_codes and kind == "pending") : end])  # pending codes: code.*


def _pandas_type(arrow_type: pa.DataType) -> Any:
    """Nullable text, integers, floats and booleans (:func:`~toolkit._core.frames.nullable`'s
    convention), Arrow-backed lists."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return TEXT
    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_floating(arrow_type):
        return pd.Float64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pd.ArrowDtype(arrow_type)
    return None


def to_frame(table: pa.Table) -> pd.DataFrame:
    """A flat table as a frame with the documented dtypes and ``attrs["unknownFields"]``."""
    df = table.to_pandas(types_mapper=_pandas_type)
    if "position" in df.columns:
        df["position"] = df["position"].astype("int64")
    found = (table.schema.metadata or {}).get(UNKNOWN_FIELDS.encode())
    if found:
        df.attrs[UNKNOWN_FIELDS] = json.loads(found)
    return df
