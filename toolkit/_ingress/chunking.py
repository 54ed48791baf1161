"""A table read a chunk of rows at a time: how many rows a chunk holds, and what each chunk
carries, its rows' numbers in the file (its index) and their lines (the line map in its attrs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd

#: CSV rows turned into Arrow-backed columns at a time: the file's rows never all in Python objects.
#: Every reader and the writer read it here, as ``chunking._CHUNK``: one setting changes them all.
_CHUNK = 50_000


def chunked(
    records: Iterable[tuple[int, list[Any]]], columns: pd.Index, dtype: Any, **attrs: Any
) -> Iterator[pd.DataFrame]:
    """A file's records, ``(line, values)``, as frames of :data:`_CHUNK` rows (one empty frame
    when there are none), of the ``columns`` in ``dtype``: each one's index its rows' numbers in
    the file, its ``attrs`` the ``attrs`` given and the line map so far (``line_shifts``: each
    first row whose line is further down than the row before it says, with how many lines
    further).

    Example:
        >>> records = [(2, ["x"]), (4, ["y"])]  # a blank line before the second row
        >>> [(c.index.tolist(), c.attrs) for c in chunked(records, pd.Index(["a"]), "str")]
        [([0, 1], {'line_shifts': ((1, 1),)})]
    """
    rows: list[list[Any]] = []
    shifts: list[tuple[int, int]] = []
    n = 0

    def chunk() -> pd.DataFrame:
        df = pd.DataFrame(rows, pd.RangeIndex(n - len(rows), n), columns, dtype)
        df.attrs.update(attrs, line_shifts=tuple(shifts))
        return df

    for line, row in records:
        rows.append(row)
        if line - (n + 2) != (shifts[-1][1] if shifts else 0):
            shifts.append((n, line - (n + 2)))
        n += 1
        if len(rows) == _CHUNK:
            done, rows = chunk(), []  # the rows' Python values gone before it is used
            yield done
            del done  # not held while the next chunk is read
    if rows or not n:
        yield chunk()


def fresh_index(index: pd.Index) -> pd.Index:
    """The index, a range as a new range: the array of every row that pandas makes of a range
    when asked for its values is then cached on the new one, not kept on the input's.

    Example:
        >>> labels = pd.RangeIndex(3)
        >>> fresh_index(labels).tolist(), "_data" in labels._cache
        ([0, 1, 2], False)
    """
    if isinstance(index, pd.RangeIndex):
        return pd.RangeIndex(index.start, index.stop, index.step, name=index.name)
    return index


def with_lines(
    frame: pd.DataFrame, sources: pd.DataFrame | dict[str, pd.DataFrame]
) -> pd.DataFrame:
    """A failure or result frame with a ``line`` column right after its ``row`` column.

    Returns:
        A copy with ``line`` (nullable integers).

    Example:
        >>> src = pd.DataFrame({"a": ["x"]})
        >>> src.attrs["line_shifts"] = ()
        >>> with_lines(pd.DataFrame({"row": [0], "error": ["bad"]}), src).columns.tolist()
        ['row', 'line', 'error']
        >>> failures = pd.DataFrame({"table": ["clients", "codes"], "row": [0, 0]})
        >>> with_lines(failures, {"clients": src})["line"].tolist()  # codes: no file given
        [2, <NA>]
    """
    out = frame.drop(columns="line", errors="ignore")  # a copy; lines found again
    if "row" not in out.columns:
        return out
    lines = np.full(len(out), np.nan)
    if isinstance(sources, pd.DataFrame):
        lines = line_array(sources, out["row"])
    elif "table" in out.columns:
        for table, src in sources.items():
            mask = (out["table"] == table).to_numpy(dtype=bool, na_value=False)
            lines[mask] = line_array(src, out["row"][mask])
    at = list(out.columns).index("row") + 1
    out.insert(at, "line", pd.Series(lines, index=out.index).astype("Int64"))
    return out


def line_array(frame: pd.DataFrame, rows: pd.Series) -> np.ndarray:
    """The file line of each 0-based data row of a frame from
    :func:`~toolkit._ingress.readers.read_table` (a column of rows, ``None``, NaN or NA for
    no row), as floats (NaN: no line), by column.

    Args:
        frame: The frame read (its ``attrs["line_shifts"]``, the line map; a frame without one,
            built in pandas or read from Parquet, has no lines).
        rows: The rows' 0-based numbers in the file, as the frame's index holds them.

    Returns:
        One float per row: its line in the file, counting the header, the blank lines and the
            line breaks inside quoted cells.

    Example:
        >>> df = pd.DataFrame({"a": ["x", "y"]})
        >>> df.attrs["line_shifts"] = ((1, 2),)  # two blank lines before the second row
        >>> line_array(df, pd.Series([0, 1, None], dtype="Int64")).tolist()
        [2.0, 5.0, nan]
    """
    shifts = frame.attrs.get("line_shifts")
    if shifts is None:
        return np.full(len(rows), np.nan)
    # None, NaN, NA and a label that is not a number are no row
    r = pd.to_numeric(rows, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    starts = np.array([s for s, _ in shifts], dtype="float64")
    extra = np.array([0, *(e for _, e in shifts)], dtype="float64")
    lines: np.ndarray = np.floor(r) + 2 + extra[np.searchsorted(starts, np.floor(r), "right")]
    return lines
