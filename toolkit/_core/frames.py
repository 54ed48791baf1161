"""Frames as the toolkit takes them in: any table made pandas once (:func:`as_pandas`), unique
row labels, identifiers read as text."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
import pyarrow as pa

from toolkit.errors import ConfigError

#: Beyond this a float cannot tell one whole number from the next.
MAX_WHOLE = 2**53


@runtime_checkable
class ArrowStreamExportable(Protocol):
    """Anything that exports an Arrow C stream: Polars, DuckDB relations, PyArrow, nanoarrow."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


#: What a public entry point takes as a frame.
FrameLike = pd.DataFrame | pa.Table | pa.RecordBatch | ArrowStreamExportable


def as_pandas(frame: object, name: str = "frame") -> pd.DataFrame:
    """The one input boundary: a pandas frame as it is, or anything Arrow reads, as pandas.

    >>> as_pandas(pa.table({"a": [1, 2]})).index.tolist()
    [0, 1]
    """
    if isinstance(frame, pd.DataFrame):
        return frame
    if isinstance(frame, pa.Table | pa.RecordBatch) or hasattr(frame, "__arrow_c_stream__"):
        table = pa.table(frame)
        schema = pa.schema([f.with_type(_without_view(f.type)) for f in table.schema])
        return table.cast(schema.with_metadata(table.schema.metadata)).to_pandas()
    raise ConfigError(
        f"{name} must be a table (pandas, Polars or PyArrow), not {type(frame).__name__}"
    )


def _without_view(kind: pa.DataType) -> pa.DataType:
    """A type pandas takes: Polars' ``string_view``/``binary_view`` as large ones, nested too."""
    if pa.types.is_string_view(kind):
        return pa.large_string()
    if pa.types.is_binary_view(kind):
        return pa.large_binary()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_list_view(kind):
        return pa.large_list(_without_view(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([f.with_type(_without_view(f.type)) for f in kind.fields])
    return kind


def unique_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The frame itself, or, when its index repeats a label, the frame indexed by position.

    >>> unique_rows(pd.DataFrame({"a": [1, 2]}, index=[7, 7])).index.tolist()
    [0, 1]
    """
    return df if df.index.is_unique else df.reset_index(drop=True)


def text_arrow(s: pd.Series) -> pa.ChunkedArray[Any] | None:
    """A text column's Arrow data, not copied (``None`` for a column of any other dtype): what
    the checks that sort instead of hashing every value work on.

    >>> text_arrow(pd.Series(["a", None], dtype="str")).to_pylist(), text_arrow(pd.Series([1]))
    (['a', None], None)
    """
    if not isinstance(s.dtype, pd.StringDtype):
        return None
    given = pa.array(s.array)
    return given if isinstance(given, pa.ChunkedArray) else pa.chunked_array([given])


def neighbours(values: pa.ChunkedArray[Any]) -> tuple[pa.ChunkedArray[Any], pa.ChunkedArray[Any]]:
    """Each value but the first and the one before it, to compare a sorted column's neighbours.

    >>> [a.to_pylist() for a in neighbours(pa.chunked_array([["a", "a", "b"]]))]
    [['a', 'b'], ['a', 'a']]
    """
    return values.slice(1), values.slice(0, max(len(values) - 1, 0))


def plain(s: pd.Series) -> pd.Series:
    return s.astype(object) if isinstance(s.dtype, pd.CategoricalDtype) else s


def no_problems(s: pd.Series) -> pd.Series:
    return pd.Series(None, index=s.index, dtype=object)


def _text_value(v: Any) -> tuple[str | None, str | None]:
    if v is None or v is pd.NA or v is pd.NaT:
        return None, None
    if isinstance(v, str):
        return v, None
    if isinstance(v, bool | np.bool_):
        return None, "must be text, not a boolean"
    if isinstance(v, int | np.integer):
        return str(int(v)), None
    if isinstance(v, float | np.floating):
        number = float(v)
        if np.isnan(number):
            return None, None
        if np.isfinite(number) and number.is_integer() and abs(number) < MAX_WHOLE:
            return str(int(number)), None
        return None, "must be text, not a number"
    return None, f"must be text, not {type(v).__name__}"


def coerce_ids(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    """Identifiers as the import schemas read them: ``1001.0`` as ``"1001"``, blank as missing.

    Returns:
        ``(values, problems)``: the text, and per row a message or ``None``.

    >>> coerce_ids(pd.Series([1001.0, "M-1"]), "id")[0].tolist()
    ['1001', 'M-1']
    """
    s = plain(s)
    problems = no_problems(s)
    if isinstance(s.dtype, pd.StringDtype) or (
        s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty")
    ):
        values = s.astype("str")
    else:
        pairs = [_text_value(v) for v in s.tolist()]
        values = pd.Series([p[0] for p in pairs], index=s.index, dtype="str")
        why = [None if p[1] is None else f"{column} {p[1]}" for p in pairs]
        problems = pd.Series(why, index=s.index, dtype=object)
    blank = (values.str.strip() == "").to_numpy(dtype=bool, na_value=False)
    return (values.where(~blank) if blank.any() else values), problems


coerce_text = coerce_ids
