"""A frame written to ``.csv``, ``.xlsx`` or ``.parquet`` by the extension (the ``--out`` files);
the first rows of a report shown in Jupyter (:func:`html_rows`).

The workbook the analyst fixes (:func:`write_workbook`): ``errors`` and ``summary`` sheets, then
each input table as read, each failing cell filled (errors red, warnings amber) with its message
as a comment. Text stays text. Needs ``openpyxl`` (the ``excel`` extra).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit._ingress import chunking
from toolkit.errors import ConfigError

try:
    from openpyxl import Workbook  # type: ignore[import-untyped]  # openpyxl has no types
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE  # type: ignore[import-untyped]  # openpyxl has no types
    from openpyxl.comments import Comment  # type: ignore[import-untyped]  # openpyxl has no types
    from openpyxl.styles import Font, PatternFill  # type: ignore[import-untyped]  # openpyxl has no types
except ImportError:  # the excel extra is not installed: write_workbook says so
    _EXCEL = False
else:
    _EXCEL = True

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


#: Fill (RGB) of a cell with an error: what the service would refuse.
ERROR_FILL = "FFC7CE"
#: Fill (RGB) of a cell with only warnings: sent as given, but worth a look.
WARNING_FILL = "FFEB9C"
#: Columns of the ``summary`` sheet.
SUMMARY_COLUMNS: tuple[str, ...] = ("table", "check", "severity", "failures")

_AUTHOR = "toolkit validate"
_MAX_WIDTH = 60


def _cell_value(value: Any) -> tuple[Any, bool]:
    """The value openpyxl writes, and whether it is text."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None, False
    if isinstance(value, str):  # a lone surrogate is written escaped (``\ud800``), as shown
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
        return (ILLEGAL_CHARACTERS_RE.sub("", text) or None), True
    if isinstance(value, bool | np.bool_):
        return bool(value), False
    if isinstance(value, int | np.integer):
        return int(value), False
    if isinstance(value, float | np.floating):
        return (None if np.isnan(value) else float(value)), False
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo else value, False
    if isinstance(value, dt.date):
        return value, False
    if isinstance(value, list | tuple | np.ndarray):  # a list column: a JSON list, read back
        value = json.dumps([str(item) for item in value], ensure_ascii=False)
    return ILLEGAL_CHARACTERS_RE.sub("", str(value)), True


def _write_frame(sheet: Any, frame: pd.DataFrame) -> None:
    """Header then rows, text as text; header bold and frozen; columns wide enough."""
    bold = Font(bold=True)
    widths: list[int] = []
    for j, name in enumerate(frame.columns, start=1):
        cell = sheet.cell(row=1, column=j, value=str(name))
        cell.data_type = "s"
        cell.font = bold
        widths.append(len(str(name)))
    for i, record in enumerate(frame.itertuples(index=False, name=None), start=2):
        for j, raw in enumerate(record, start=1):
            value, text = _cell_value(raw)
            cell = sheet.cell(row=i, column=j, value=value)
            if text:
                cell.data_type = "s"  # never a formula, whatever it starts with
                cell.number_format = "@"
            if value is not None:
                widths[j - 1] = max(widths[j - 1], len(str(value)))
    for j, width in enumerate(widths, start=1):
        letter = sheet.cell(row=1, column=j).column_letter
        sheet.column_dimensions[letter].width = min(width + 2, _MAX_WIDTH)
    sheet.freeze_panes = "A2"


def _cells(
    frame: pd.DataFrame, failures: pd.DataFrame, headers: Mapping[str, tuple[str, ...]]
) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """(sheet row, sheet column) -> [(severity, message)] of the failures of one table."""
    names = [str(c) for c in frame.columns]
    # each label's first row (the later ones written first, the first written last)
    position = {label: i for i, label in reversed(list(enumerate(frame.index.tolist())))}
    out: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for rec in failures.itertuples(index=False):
        shown = () if rec.column is None else headers.get(str(rec.column), (str(rec.column),))
        columns = [j + 1 for j, name in enumerate(names) if name in shown]
        row = rec.row
        if row is None or row is pd.NA or (isinstance(row, float) and np.isnan(row)):
            r = 1  # a column-level failure: on the header
            columns = columns or [1]  # a column with no header at all: on the first
        elif row in position:
            r = position[row] + 2
        else:
            continue
        for c in columns:
            out.setdefault((r, c), []).append((str(rec.severity), str(rec.message)))
    return out


def _mark(sheet: Any, cells: Mapping[tuple[int, int], list[tuple[str, str]]]) -> None:
    fills = {
        "error": PatternFill("solid", start_color=ERROR_FILL, end_color=ERROR_FILL),
        "warning": PatternFill("solid", start_color=WARNING_FILL, end_color=WARNING_FILL),
    }
    for (r, c), found in cells.items():
        cell = sheet.cell(row=r, column=c)
        cell.fill = fills["error" if any(s == "error" for s, _ in found) else "warning"]
        text = "\n".join(f"{s}: {m}" for s, m in dict.fromkeys(found))
        height = 40 + 18 * (len(text) // 50 + len(found))
        cell.comment = Comment(text, _AUTHOR, height=height, width=360)


def _summary(failures: pd.DataFrame) -> pd.DataFrame:
    if failures.empty:
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    counts = failures.groupby(["table", "check", "severity"], sort=False).size()
    return counts.rename("failures").reset_index()


def write_workbook(
    path: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    failures: pd.DataFrame,
    headers: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
) -> Path:
    """Write the input tables with their failing cells marked, the failures and a summary.

    Args:
        path: the ``.xlsx`` file (replaced if it exists).
        tables: ``{table: frame as read}``; one sheet each, in this order.
        failures: the failure frame (with ``line`` if known); ``row`` is a label of the table.
        headers: per table, the failure frame's ``column`` -> the header(s) showing it.

    Example:
        >>> import tempfile, pathlib
        >>> from openpyxl import load_workbook
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "failures.xlsx"
        >>> failures = pd.DataFrame({"table": ["clients"], "row": [1], "column": ["externalId"],
        ...                          "check": ["required"], "severity": ["error"],
        ...                          "message": ["externalId is required but empty"]})
        >>> book = load_workbook(write_workbook(out, {"clients": pd.DataFrame(
        ...     {"externalId": ["007", ""]})}, failures))
        >>> book.sheetnames, book["clients"]["A3"].comment.text
        (['errors', 'summary', 'clients'], 'error: externalId is required but empty')
    """
    p = Path(path)
    if p.suffix.casefold() != ".xlsx":
        raise ConfigError(f"{p}: the workbook is written as .xlsx")
    check_out_path(p)  # its folder exists
    if not _EXCEL:
        raise ConfigError(f"{p}: writing .xlsx {NEEDS_OPENPYXL}")
    book = Workbook()
    book.remove(book.active)
    _write_frame(book.create_sheet("errors"), failures.reset_index(drop=True))
    _write_frame(book.create_sheet("summary"), _summary(failures))
    for table, frame in tables.items():
        sheet = book.create_sheet(table[:31])
        _write_frame(sheet, frame)
        mine = failures[failures["table"] == table] if "table" in failures else failures[:0]
        _mark(sheet, _cells(frame, mine, (headers or {}).get(table, {})))
    try:
        book.save(p)
    except OSError as exc:
        raise ConfigError(f"{p}: cannot write it ({exc.strerror or exc})") from None
    return p
