"""An Excel sheet a chunk of rows at a time, as openpyxl streams it, the cells keeping their
types; the sheets of a workbook that hold import tables. A workbook it cannot read raises one
:class:`~toolkit.errors.ConfigError` naming the file.
"""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.parsers import TextParser  # type: ignore[attr-defined]  # in its __all__, not in pandas-stubs

from toolkit._ingress.chunking import chunked
from toolkit._ingress.names import ALIASES, BY_NAME, IGNORED, norm, one_each
from toolkit._ingress.writer import NEEDS_OPENPYXL
from toolkit.errors import ConfigError, InputWarning

try:
    from openpyxl import load_workbook  # type: ignore[import-untyped]  # openpyxl has no types
    from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]  # no types
except ImportError:  # the excel extra is not installed: reading a workbook says so
    _EXCEL = False
else:
    _EXCEL = True

#: Sheets of a workbook that are not tables (the report's sheets); :func:`table_sheets` skips them.
REPORT_SHEETS: tuple[str, ...] = ("errors", "summary")


@contextmanager
def _excel(path: Path, data_only: bool = False) -> Iterator[Any]:
    """Turn openpyxl's errors on a workbook (and its absence) into one ConfigError: the
    workbook, opened read-only (``data_only``: formulas' values), closed after."""
    try:
        if not _EXCEL:
            raise ImportError("openpyxl")
        book = load_workbook(path, read_only=True, data_only=data_only, keep_links=False)
        with closing(book):
            yield book
    except ConfigError:
        raise
    except ImportError:
        raise ConfigError(f"{path}: reading .xlsx {NEEDS_OPENPYXL}") from None
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: not a readable Excel workbook ({type(exc).__name__}: {exc}); "
            "save it as .xlsx or CSV"
        ) from None


def _cell(cell: Any) -> Any:
    """A cell's value as ``pandas.read_excel`` gives it: empty as ``""``, an error as NaN, a
    whole number as an ``int``."""
    value = cell.value
    if value is None:
        return ""
    if cell.data_type == "e":
        return np.nan
    if cell.data_type == "n":
        whole = int(value)
        return whole if whole == value else float(value)
    return value


def _blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def _header(cells: list[Any]) -> pd.Index:
    """Column names as ``pandas.read_excel`` makes them of a header row (``Unnamed: N`` for an
    empty cell, repeated names numbered), stripped."""
    names = TextParser([cells], header=0, dtype=object, keep_default_na=False).read().columns
    return pd.Index([str(name).strip() for name in names])


def read_excel_table(path: Path, sheet: str | None = None) -> Iterator[pd.DataFrame]:
    """A sheet (the first unless named) a chunk of rows at a time, as openpyxl streams it: the
    first non-blank row the header, blank rows dropped (kept in the line map), the cells as
    ``pandas.read_excel(dtype=object, keep_default_na=False)`` gives them."""
    where = str(path) if sheet is None else f"{path}, sheet {sheet}"
    attrs = {"source": str(path)} if sheet is None else {"source": str(path), "sheet": sheet}
    with _excel(path, data_only=True) as book:
        cells = book[sheet] if sheet is not None else book.worksheets[0]
        cells.reset_dimensions()  # the sizes a file declares can be wrong: read every cell
        records = _records(cells.iter_rows())
        first = next(records, None)
        header = first[1] if first is not None else []
        names = _header(header) if first is not None else pd.Index([])
        fitted = ((line, _fit(where, header, line, row)) for line, row in records)
        yield from chunked(fitted, names, object, **attrs)


def _records(rows: Iterator[Any]) -> Iterator[tuple[int, list[Any]]]:
    """(line, cells) of each non-blank row, the empty cells at its end dropped."""
    for line, row_cells in enumerate(rows, start=1):
        row = [_cell(c) for c in row_cells]
        while row and row[-1] == "":
            row.pop()
        if not all(map(_blank, row)):
            yield line, row


def _fit(where: str, header: list[Any], line: int, row: list[Any]) -> list[Any]:
    """A row as wide as the header: blank cells right of it dropped (as in a CSV file), missing
    ones ``""``; a value there names its line and column."""
    beyond = [i for i in range(len(header), len(row)) if not _blank(row[i])]
    if beyond:
        column = get_column_letter(beyond[0] + 1)
        raise ConfigError(
            f"{where}, line {line}: a value in column {column}, right of the "
            f"header's {len(header)} columns; give it a header or clear it"
        )
    return row[: len(header)] + [""] * (len(header) - len(row))


def table_sheets(path: Path) -> dict[str, str]:
    """The sheets of a workbook (a file: :func:`~toolkit._ingress.validation.folder_sources`
    reads one only) that hold import tables, named as :func:`~toolkit._ingress.names.table_for`
    names files.

    Other sheets are passed over with an :class:`InputWarning` (the report's sheets,
    :data:`REPORT_SHEETS`, and :data:`~toolkit._ingress.names.IGNORED` ones silently).

    Returns:
        ``{table: sheet}`` in import order.

    Example:
        >>> import tempfile, pathlib
        >>> book = pathlib.Path(tempfile.mkdtemp()) / "firm.xlsx"
        >>> pd.DataFrame({"externalId": ["M-1"]}).to_excel(book, sheet_name="Matters", index=False)
        >>> table_sheets(book)
        {'initiatives': 'Matters'}
    """
    found: dict[str, list[str]] = {}
    unknown: list[str] = []
    with _excel(path) as book:
        in_book = [str(name) for name in book.sheetnames]
    for sheet in in_book:
        key = norm(sheet)
        table = BY_NAME.get(key)
        if table is not None:
            found.setdefault(table, []).append(sheet)
        elif key not in REPORT_SHEETS and key not in IGNORED:
            unknown.append(sheet)
    if unknown:
        warnings.warn(
            f"{path}: passed over the sheet(s) {', '.join(unknown)}: no import table has that name",
            InputWarning,
            stacklevel=3,
        )
    if not found:
        raise ConfigError(
            f"{path}: no sheet names an import table; expected sheets named "
            f"{', '.join(ALIASES)} (or their aliases)"
        )
    return one_each(found, lambda t, names: f"{path}: {t} is in more than one sheet: {names}")
