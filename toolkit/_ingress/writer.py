"""A frame written to ``.csv``, ``.xlsx`` or ``.parquet`` by the extension (the ``--out`` files);
the first rows of a report shown in Jupyter (:func:`html_rows`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit._ingress import chunking
from toolkit.errors import ConfigError

#: What writing or reading ``.xlsx`` needs, said when it is missing.
NEEDS_OPENPYXL = "needs openpyxl (pip install 'timebill-toolkit[excel]')"

#: Extensions :func:`write_table` writes.
OUT_FORMATS: tuple[str, ...] = (".csv", ".xlsx", ".parquet")


def check_out_path(path: str | os.PathLike[str]) -> Path:
    """Check that :func:`write_table` can write a path, before any work is done.

    Example:
        >>> check_out_path("failures.txt")
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: failures.txt: write .csv, .xlsx or .parquet
    """
    p = Path(path)
    if p.suffix.casefold() not in OUT_FORMATS:
        raise ConfigError(f"{p}: write .csv, .xlsx or .parquet")
    if not p.parent.is_dir():
        raise ConfigError(f"{p}: the folder {p.parent} does not exist")
    return p


def _plain(value: Any) -> Any:
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str, ensure_ascii=False)
    return value


def _writable(frame: pd.DataFrame, excel: bool) -> pd.DataFrame:
    df = frame.reset_index(drop=True).copy()
    for col in df.columns:
        s = df[col]
        if s.dtype == object:
            values = [_plain(v) for v in s.tolist()]
            kinds = {type(v) for v in values if v is not None and not _isna(v)}
            if len(kinds) > 1 or (kinds and not kinds <= {str, int, float, bool}):
                values = [None if v is None or _isna(v) else str(v) for v in values]
            df[col] = pd.Series(values, dtype=object)
        elif excel and isinstance(s.dtype, pd.DatetimeTZDtype):
            df[col] = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return df


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def write_table(frame: pd.DataFrame | Iterable[pd.DataFrame], path: str | os.PathLike[str]) -> Path:
    """Write a frame to ``.csv``, ``.xlsx`` or ``.parquet`` by the extension; lists as JSON text.

    ``frame`` may also be frames of the same columns, the rows in order (a CSV file is then
    written a frame at a time, never whole).

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "failures.csv"
        >>> write_table(pd.DataFrame({"row": [0], "value": [[1, 2]]}), out).read_text()
        'row,value\\n0,"[1, 2]"\\n'
    """
    p = check_out_path(path)
    suffix = p.suffix.casefold()
    if suffix == ".csv":  # a chunk at a time: the cells as text never all at once
        first = True
        for chunk in [frame] if isinstance(frame, pd.DataFrame) else frame:
            # a chunk of no rows is one piece: the header when it comes first
            for start in range(0, max(len(chunk), 1), chunking._CHUNK):
                part = _writable(chunk.iloc[start : start + chunking._CHUNK], excel=False)
                part.to_csv(p, index=False, mode="w" if first else "a", header=first)
                first = False
        return p
    if not isinstance(frame, pd.DataFrame):
        frame = pd.concat(list(frame), ignore_index=True)
    df = _writable(frame, excel=suffix == ".xlsx")
    if suffix == ".xlsx":
        try:
            df.to_excel(p, index=False, engine="openpyxl")
        except ImportError:
            raise ConfigError(f"{p}: writing .xlsx {NEEDS_OPENPYXL}") from None
    else:
        df.to_parquet(p, index=False)
    return p


def html_rows(rows: pd.DataFrame, limit: int, attribute: str) -> list[str]:
    """Jupyter's view of some rows (a report's failures, a plan's rows): the first ``limit`` as
    an HTML table, and how many more the report's ``attribute`` holds; nothing without rows.

    >>> len(html_rows(pd.DataFrame({"a": range(3)}), 2, "rows"))
    2
    """
    if not len(rows):
        return []
    more = len(rows) - limit
    shown = [rows.head(limit).to_html(index=False)]
    return shown + ([f"<p>... {more} more in <code>.{attribute}</code></p>"] if more > 0 else [])
