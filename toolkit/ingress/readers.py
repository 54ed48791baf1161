"""Table files as people have them: one reader and one writer for CSV, Excel and Parquet.

CSV: delimiter sniffed, UTF-8 (BOM or not) else cp1252 with a warning, every value a string.
Excel: cells keep their types. Parquet: as stored. A file it cannot read raises one
:class:`~toolkit.errors.ConfigError` naming the file and, for CSV, the line.
"""

from __future__ import annotations

import bisect
import codecs
import csv
import hashlib
import itertools
import json
import os
import re
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
from pandas.io.parsers import TextParser  # type: ignore[attr-defined]  # in its __all__, not in pandas-stubs

from toolkit.errors import ConfigError, InputWarning

try:
    from openpyxl import load_workbook  # type: ignore[import-untyped]  # openpyxl has no types
    from openpyxl.utils import get_column_letter  # type: ignore[import-untyped]  # no types
except ImportError:  # the excel extra is not installed: reading a workbook says so
    _EXCEL = False
else:
    _EXCEL = True

__all__ = [
    "ALIASES",
    "COLUMN_ALIASES",
    "DELIMITERS",
    "IGNORED",
    "OUT_FORMATS",
    "REPORT_SHEETS",
    "TABLE_SUFFIXES",
    "TableFile",
    "InputWarning",
    "check_out_path",
    "fresh_index",
    "HeaderMatch",
    "header_key",
    "line_array",
    "line_numbers",
    "match_headers",
    "read_chunks",
    "read_table",
    "read_workbook",
    "table_for",
    "table_sheets",
    "with_lines",
    "write_table",
]

#: Delimiters a CSV file may use, in order of preference when two fit equally well.
DELIMITERS: tuple[str, ...] = (",", ";", "\t", "|")

#: File extensions read as tables.
TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".parquet")

#: Extensions :func:`write_table` writes.
OUT_FORMATS: tuple[str, ...] = (".csv", ".xlsx", ".parquet")

# A CSV cell of any length is read; validation reports one over 131,072 characters.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

#: Import table -> the file names (without extension, compared case-insensitively, with ``-``,
#: spaces and dots read as ``_``) that hold it in a folder.
ALIASES: dict[str, tuple[str, ...]] = {
    "clients": ("clients", "client"),
    "initiatives": ("initiatives", "initiative", "matters", "matter", "projects", "project"),
    "code_types": ("code_types", "code_type", "codetypes", "codetype"),
    "codes": ("codes", "code"),
    "code_ranges": ("code_ranges", "code_range", "coderanges", "ranges", "range"),
}

#: File names (normalised as for :data:`ALIASES`) that are known but not import tables: they
#: are passed over without a warning (``timekeepers`` seeds the sandbox's users).
IGNORED: tuple[str, ...] = ("timekeepers", "readme")

#: Sheets of a workbook that are not tables (the report's sheets); :func:`read_workbook` skips them.
REPORT_SHEETS: tuple[str, ...] = ("errors", "summary")

#: Import table -> spec field -> other headers a billing export uses for it (see
#: :func:`match_headers`).
COLUMN_ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "clients": {
        "externalId": ("id", "client id", "client number"),
        "name": ("client name",),
        "callSign": ("client code", "client number"),
        "description": ("client description",),
    },
    "initiatives": {
        "externalId": (
            "id",
            "matter id",
            "matter external id",
            "matter number",
            "project id",
            "project external id",
            "initiative id",
        ),
        "name": ("matter name", "project name", "initiative name"),
        "description": ("matter description", "project description"),
        "callSign": ("matter code", "matter number", "project code", "project number"),
        "clientExternalId": ("client", "client id"),
        "unitIncrements": ("unit increment", "increment", "increments", "billing increment"),
        "status": ("matter status", "project status"),
    },
    "code_types": {
        "externalId": ("id", "code type", "code type id"),
        "name": ("code type name",),
    },
    "codes": {
        "externalId": ("id", "code", "code id"),
        "name": ("code name",),
        "description": ("code description",),
        "codeTypeExternalId": ("code type", "code type id", "type"),
    },
    "code_ranges": {
        "initiativeExternalId": (
            "initiative",
            "initiative id",
            "matter",
            "matter id",
            "matter external id",
            "project",
            "project id",
            "project external id",
        ),
        "codeExternalId": ("code", "code id"),
    },
}

_BY_NAME = {alias: table for table, names in ALIASES.items() for alias in names}
_SNIFF_LINES = 200


def _norm(stem: str) -> str:
    return re.sub(r"[-\s.]+", "_", stem.strip().casefold())


def header_key(name: object) -> str:
    """A column name as compared with the spec's: case, spaces, ``_`` and ``-`` ignored.

    Example:
        >>> header_key("External ID"), header_key("external_id"), header_key("externalId")
        ('externalid', 'externalid', 'externalid')
    """
    return re.sub(r"[\s_\-]+", "", str(name)).casefold()


class HeaderMatch(NamedTuple):
    """What :func:`match_headers` made of a table's headers.

    Attributes:
        names: The headers under the spec's names (unmatched or ambiguous ones as they are).
        fitting_two: Each header that fits several fields -> those fields.
        shared: Each field that several headers stand for -> their positions.
    """

    names: list[str]
    fitting_two: dict[str, tuple[str, ...]]
    shared: dict[str, list[int]]


def match_headers(table: str, fields: Sequence[str], names: Sequence[str]) -> HeaderMatch:
    """Match headers as people write them to the spec's field names.

    By exact name, then :func:`header_key`, then :data:`COLUMN_ALIASES`; ambiguities are returned.

    Example:
        >>> m = match_headers("initiatives", ["externalId", "callSign", "status"],
        ...                   ["Matter Number", "Status", "STATUS"])
        >>> m.fitting_two, m.shared
        ({'Matter Number': ('externalId', 'callSign')}, {'status': [1, 2]})
    """
    fields = list(fields)
    keys: dict[str, list[tuple[int, str]]] = {}
    for f in fields:
        keys.setdefault(header_key(f), []).append((1, f))
    for f, aliases in COLUMN_ALIASES.get(table, {}).items():
        for alias in aliases:
            keys.setdefault(header_key(alias), []).append((2, f))
    exact = set(names) & set(fields)
    claims: dict[str, list[int]] = {}
    fitting_two: dict[str, tuple[str, ...]] = {}
    for i, name in enumerate(names):
        candidates = [(r, f) for r, f in keys.get(header_key(name), []) if f in fields]
        if name in exact or not candidates:
            continue
        best = min(rank for rank, _ in candidates)
        found = sorted({f for rank, f in candidates if rank == best}, key=fields.index)
        if len(found) > 1:
            fitting_two[name] = tuple(found)
        elif found[0] not in exact:  # a header named exactly as the spec wins
            claims.setdefault(found[0], []).append(i)
    out = list(names)
    for f, positions in claims.items():
        if len(positions) == 1:
            out[positions[0]] = f
    shared = {f: positions for f, positions in claims.items() if len(positions) > 1}
    return HeaderMatch(out, fitting_two, shared)


def table_for(name: str | os.PathLike[str]) -> str | None:
    """The import table a file name stands for (case-insensitive, :data:`ALIASES`), or ``None``.

    Example:
        >>> table_for("Matters.csv"), table_for("code-types.xlsx"), table_for("notes.csv")
        ('initiatives', 'code_types', None)
    """
    p = Path(name)
    if p.suffix.casefold() not in TABLE_SUFFIXES:
        return None
    return _BY_NAME.get(_norm(p.stem))


def _bad_lines(data: bytes) -> list[int]:
    """The 1-based lines of ``data`` that are not UTF-8."""
    bad = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(number)
    return bad


def _decode(path: Path, data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """How to read a CSV file, as ``(codec, errors)``: UTF-8 (bad bytes as U+FFFD, warned) else
    cp1252, warned."""
    if encoding is not None:
        try:
            text = data.decode(encoding)
        except LookupError:
            raise ConfigError(f"encoding={encoding!r}: no such encoding") from None
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise ConfigError(f"{path}, line {line}: not {encoding} text") from None
        return _no_binary(path, text, encoding)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        lenient = data.decode("utf-8-sig", errors="replace")
        if any(ord(c) > 127 and c != "\ufffd" for c in lenient):
            bad = _bad_lines(data)
            shown = ", ".join(map(str, bad[:10])) + (", ..." if len(bad) > 10 else "")
            warnings.warn(
                f"{path}: bytes that are not UTF-8 on line{'s' if len(bad) > 1 else ''} {shown};"
                " read as UTF-8 with "
                "\ufffd in their place. Fix those lines, or pass encoding= if the file is "
                "in another encoding.",
                InputWarning,
                stacklevel=3,
            )
            return _no_binary(path, lenient, "utf-8-sig", "replace")
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            raise ConfigError(
                f"{path}, line {line}: not UTF-8 text (nor Windows-1252); save it as UTF-8 CSV"
            ) from None
        warnings.warn(
            f"{path} is not UTF-8 (first odd byte on line {line}); read it as Windows-1252 "
            "(cp1252). Save it as 'CSV UTF-8' to be sure of accented characters.",
            InputWarning,
            stacklevel=3,
        )
        return _no_binary(path, text, "cp1252")
    return _no_binary(path, text, "utf-8-sig")


def _no_binary(path: Path, text: str, codec: str, errors: str = "strict") -> tuple[str, str]:
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ConfigError(f"{path}, line {line}: binary data, not a text (CSV) file")
    return codec, errors


@contextmanager
def _lines(path: Path, codec: tuple[str, str]) -> Iterator[Iterator[str]]:
    """The file's lines as read (line ends kept), a byte order mark dropped."""
    with path.open(encoding=codec[0], errors=codec[1], newline="") as f:
        first = next(f, "")
        yield itertools.chain([first.removeprefix("\ufeff")], f)


def _records(
    lines: Iterator[str], delimiter: str, limit: int | None = None
) -> Iterable[tuple[int, list[str]]]:
    """(first line, fields) of each non-blank record; raises csv.Error with ``line_num`` set."""
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    start = 1
    n = 0
    while limit is None or n < limit:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            end = reader.line_num
            where = f"line {start}" + (f" (to line {end})" if end > start else "")
            raise csv.Error(f"{where}: {exc}") from None
        n += 1
        if record and any(f.strip() for f in record):
            yield start, record
        start = reader.line_num + 1


def _sniff(path: Path, codec: tuple[str, str]) -> str:
    """The delimiter whose first records have the most fields and agree on their number."""
    best, best_score = ",", (False, 0.0)
    for d in DELIMITERS:
        try:
            with _lines(path, codec) as lines:
                counts = [len(r) for _, r in _records(lines, d, _SNIFF_LINES)]
        except csv.Error:
            continue
        if not counts or counts[0] < 2:
            continue
        agree = sum(c == counts[0] for c in counts) / len(counts)
        score = (agree >= 0.99, counts[0] if agree >= 0.99 else agree)
        if score > best_score:
            best, best_score = d, score
    return best


_SHOWN = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}


#: CSV rows turned into Arrow-backed columns at a time: the file's rows never all in Python objects.
_CHUNK = 50_000


def _codec(path: Path, encoding: str | None) -> tuple[str, str]:
    """:func:`_decode` of the file, read a block at a time when it is UTF-8 (the whole file's
    bytes only for another encoding)."""
    if encoding is None:
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        try:
            with path.open("rb") as f:
                line = 1
                while block := f.read(1 << 20):
                    text = decoder.decode(block)
                    if "\x00" in text:
                        line += text[: text.index("\x00")].count("\n")
                        raise ConfigError(
                            f"{path}, line {line}: binary data, not a text (CSV) file"
                        )
                    line += text.count("\n")
                decoder.decode(b"", final=True)
            return "utf-8-sig", "strict"
        except UnicodeDecodeError:
            pass
    return _decode(path, path.read_bytes(), encoding)


def _digest(chunk: pd.DataFrame) -> bytes:
    """A chunk's fingerprint: its cells, headers, row numbers and line map."""
    try:  # a CSV chunk's text columns: as Arrow data
        cells = memoryview(pa.RecordBatch.from_pandas(chunk, preserve_index=False).serialize())
    except (pa.ArrowException, TypeError, ValueError):  # a sheet's cells of mixed types
        cells = memoryview(pd.util.hash_pandas_object(chunk, index=False).to_numpy().tobytes())
    digest = hashlib.blake2b(cells, digest_size=16)
    digest.update(repr(list(chunk.columns)).encode())
    digest.update(repr((chunk.index[:1].tolist(), chunk.attrs.get("line_shifts"))).encode())
    return digest.digest()


@dataclass(frozen=True)
class TableFile:
    """A table file (or a workbook's sheet), read a chunk at a time (:func:`read_chunks`) as
    often as asked.

    Every chunk read again must be the chunk first read (its fingerprint, 16 bytes a chunk, is
    kept): rows checked on the first read are the rows planned and sent, or a
    :class:`~toolkit.errors.ConfigError` says the file changed, before that chunk is used.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "codes.csv"
        >>> _ = f.write_text("externalId\\nL1\\n")
        >>> source = TableFile(f)
        >>> [len(chunk) for chunk in source.chunks()]
        [1]
        >>> _ = f.write_text("externalId\\nL2\\n")
        >>> list(source.chunks())
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: ...codes.csv changed since it was first read (rows 0 to 0...
    """

    path: Path
    encoding: str | None = None
    sheet: str | None = None
    _seen: list[bytes] = field(default_factory=list, repr=False, compare=False)

    def chunks(self) -> Iterator[pd.DataFrame]:
        """The file's rows, a chunk at a time (:func:`read_chunks`), each the one first read."""
        where = self.path if self.sheet is None else f"{self.path}, sheet {self.sheet}"
        n = 0
        read = read_chunks(self.path, encoding=self.encoding, sheet=self.sheet)
        for n, chunk in enumerate(read, start=1):
            digest = _digest(chunk)
            if n > len(self._seen):
                self._seen.append(digest)
            elif digest != self._seen[n - 1]:
                raise ConfigError(
                    f"{where} changed since it was first read (rows {chunk.index[0]} to "
                    f"{chunk.index[-1]} differ); nothing more is read from it: run again"
                )
            yield chunk
        if n < len(self._seen):
            raise ConfigError(f"{where} is shorter than when it was first read: run again")

    def read(self) -> pd.DataFrame:
        """The whole table (:func:`read_table`), not checked against the first read.

        Example:
            >>> TableFile(Path("sample_data/codes.csv")).read().shape
            (36, 4)
        """
        return read_table(self.path, encoding=self.encoding, sheet=self.sheet)


def read_chunks(
    path: str | os.PathLike[str], *, encoding: str | None = None, sheet: str | None = None
) -> Iterator[pd.DataFrame]:
    """Read one table file 50,000 rows at a time (CSV, an Excel sheet or Parquet).

    Each chunk's index holds the rows' numbers in the file (0-based), and its ``attrs`` the
    line map of the rows so far (:func:`line_numbers` works on any chunk; none for Parquet);
    :func:`read_table` is the chunks joined.

    Args:
        path: The file (a Parquet folder too).
        encoding: The text encoding of a CSV file (default: UTF-8, guessed otherwise).
        sheet: The sheet of a workbook to read (default: the first).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clients.csv"
        >>> _ = f.write_text("externalId\\nC-1\\n\\nC-2\\n")
        >>> [(c.index.tolist(), line_numbers(c, c.index)) for c in read_chunks(f)]
        [([0, 1], [2, 4])]
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file")
    suffix = p.suffix.casefold()
    if suffix == ".parquet" or p.is_dir():
        yield from _read_parquet(p)
    elif suffix in (".xlsx", ".xlsm"):
        yield from _read_excel(p, sheet)
    elif suffix == ".xls":
        raise ConfigError(f"{p}: old Excel .xls is not read; save it as .xlsx or CSV")
    else:
        try:
            yield from _read_csv(p, encoding)
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read it ({exc.strerror or exc})") from None


def _read_csv(path: Path, encoding: str | None = None) -> Iterator[pd.DataFrame]:
    codec = _codec(path, encoding)
    delimiter = "\t" if path.suffix.casefold() == ".tsv" else _sniff(path, codec)
    header: list[str] | None = None
    width = 0  # the columns kept: a trailing unnamed column empty on every line is dropped
    rows: list[list[str]] = []
    shifts: list[tuple[int, int]] = []  # (first row, lines beyond row + 2) where it changes
    n = 0

    def chunk() -> pd.DataFrame:
        df = pd.DataFrame(rows, columns=range(len(header or ())), dtype="str")  # Arrow-backed
        df = df.iloc[:, :width].set_axis(pd.Index((header or [])[:width]), axis=1)
        df.index = pd.RangeIndex(n - len(rows), n)
        df.attrs.update(source=str(path), delimiter=delimiter, line_shifts=tuple(shifts))
        return df

    try:
        with _lines(path, codec) as lines:
            for start, record in _records(lines, delimiter):
                if header is None:
                    header = [h.strip() for h in record]
                    width = len(header) - _empty_tail(path, codec, delimiter, header)
                    continue
                extra = record[len(header) :]
                if any(f.strip() for f in extra):
                    raise ConfigError(
                        f"{path}, line {start}: {len(record)} fields where the header has "
                        f"{len(header)} ({_SHOWN[delimiter]}-separated); a value holding the "
                        f"delimiter needs double quotes"
                    )
                record = record[: len(header)]
                record += [""] * (len(header) - len(record))
                rows.append(record)
                _add_line(shifts, n, start)
                n += 1
                if len(rows) == _CHUNK:
                    frame, rows = chunk(), []  # the rows' Python strings gone before it is used
                    yield frame
                    del frame  # not held while the next chunk is read
    except csv.Error as exc:
        where, _, why = str(exc).partition(": ")
        raise ConfigError(
            f"{path}, {where}: cannot read it as {_SHOWN[delimiter]}-separated CSV ({why}); "
            "check the double quotes"
        ) from None
    if header is None:
        raise ConfigError(f"{path}: empty file, no header line")
    if rows or not n:
        yield chunk()


def _empty_tail(path: Path, codec: tuple[str, str], delimiter: str, header: list[str]) -> int:
    """How many last columns are unnamed and empty on every line (a trailing delimiter on each
    line): read through once, only when the header ends unnamed."""
    if not header or header[-1]:
        return 0
    named = len(header)
    while named and not header[named - 1]:
        named -= 1
    with _lines(path, codec) as lines:
        records = iter(_records(lines, delimiter))
        next(records)  # the header
        for _, record in records:
            filled = [i for i in range(named, min(len(record), len(header))) if record[i] != ""]
            if filled:
                named = max(filled) + 1
                if named == len(header):
                    break
    return len(header) - named


def _add_line(shifts: list[tuple[int, int]], row: int, line: int) -> None:
    """Note a row's line in the line map if it is further down than the row before it says."""
    if line - (row + 2) != (shifts[-1][1] if shifts else 0):
        shifts.append((row, line - (row + 2)))


@contextmanager
def _excel(path: Path) -> Iterator[None]:
    """Turn openpyxl's errors on a workbook (and its absence) into one ConfigError."""
    try:
        if not _EXCEL:
            raise ImportError("openpyxl")
        yield
    except ConfigError:
        raise
    except ImportError:
        raise ConfigError(
            f"{path}: reading .xlsx needs openpyxl (pip install 'timebill-toolkit[excel]')"
        ) from None
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


def _read_excel(path: Path, sheet: str | None = None) -> Iterator[pd.DataFrame]:
    """A sheet (the first unless named) a chunk of rows at a time, as openpyxl streams it: the
    first non-blank row the header, blank rows dropped (kept in the line map), the cells as
    ``pandas.read_excel(dtype=object, keep_default_na=False)`` gives them."""
    where = str(path) if sheet is None else f"{path}, sheet {sheet}"
    names = pd.Index([])
    rows: list[list[Any]] = []
    shifts: list[tuple[int, int]] = []
    n = 0

    def chunk() -> pd.DataFrame:
        df = pd.DataFrame(rows, columns=range(len(names)), dtype=object).set_axis(names, axis=1)
        df.index = pd.RangeIndex(n - len(rows), n)
        df.attrs.update(source=str(path), line_shifts=tuple(shifts))
        if sheet is not None:
            df.attrs["sheet"] = sheet
        return df

    with _excel(path):
        book = load_workbook(path, read_only=True, data_only=True, keep_links=False)
    try:
        with _excel(path):
            cells = book[sheet] if sheet is not None else book.worksheets[0]
            cells.reset_dimensions()  # the sizes a file declares can be wrong: read every cell
            header: list[Any] | None = None
            for line, row_cells in enumerate(cells.iter_rows(), start=1):
                row = [_cell(c) for c in row_cells]
                while row and row[-1] == "":
                    row.pop()
                if all(map(_blank, row)):
                    continue
                if header is None:
                    header, names = row, _header(row)
                    continue
                beyond = [i for i in range(len(header), len(row)) if not _blank(row[i])]
                if beyond:  # blank cells right of the header are dropped, as in a CSV file
                    column = get_column_letter(beyond[0] + 1)
                    raise ConfigError(
                        f"{where}, line {line}: a value in column {column}, right of the "
                        f"header's {len(header)} columns; give it a header or clear it"
                    )
                rows.append(row[: len(header)] + [""] * (len(header) - len(row)))
                _add_line(shifts, n, line)
                n += 1
                if len(rows) == _CHUNK:
                    frame, rows = chunk(), []  # the rows' Python values gone before it is used
                    yield frame
                    del frame  # not held while the next chunk is read
    finally:
        book.close()
    if rows or not n:
        yield chunk()


def _sheet_names(path: Path) -> list[str]:
    with _excel(path):
        book = load_workbook(path, read_only=True, keep_links=False)
    try:
        return [str(name) for name in book.sheetnames]
    finally:
        book.close()


def table_sheets(path: str | os.PathLike[str]) -> dict[str, str]:
    """The sheets of a workbook that hold import tables, named as :func:`table_for` names files.

    Other sheets are passed over with an :class:`InputWarning` (the report's sheets,
    :data:`REPORT_SHEETS`, and :data:`IGNORED` ones silently).

    Returns:
        ``{table: sheet}`` in import order.

    Example:
        >>> import tempfile, pathlib
        >>> book = pathlib.Path(tempfile.mkdtemp()) / "firm.xlsx"
        >>> pd.DataFrame({"externalId": ["M-1"]}).to_excel(book, sheet_name="Matters", index=False)
        >>> table_sheets(book)
        {'initiatives': 'Matters'}
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such file")
    found: dict[str, list[str]] = {}
    unknown: list[str] = []
    for sheet in _sheet_names(p):
        key = _norm(sheet)
        table = _BY_NAME.get(key)
        if table is not None:
            found.setdefault(table, []).append(sheet)
        elif key not in REPORT_SHEETS and key not in IGNORED:
            unknown.append(sheet)
    if unknown:
        warnings.warn(
            f"{p}: passed over the sheet(s) {', '.join(unknown)}: no import table has that name",
            InputWarning,
            stacklevel=3,
        )
    if not found:
        raise ConfigError(
            f"{p}: no sheet names an import table; expected sheets named "
            f"{', '.join(ALIASES)} (or their aliases)"
        )
    sheets: dict[str, str] = {}
    for table in ALIASES:
        names = found.get(table, [])
        if len(names) > 1:
            raise ConfigError(f"{p}: {table} is in more than one sheet: {', '.join(names)}")
        if names:
            sheets[table] = names[0]
    return sheets


def read_workbook(path: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read a workbook whose sheets are named after import tables (:func:`table_sheets`).

    Returns:
        ``{table: frame}`` in import order.

    Example:
        >>> import tempfile, pathlib
        >>> book = pathlib.Path(tempfile.mkdtemp()) / "firm.xlsx"
        >>> pd.DataFrame({"externalId": ["007"]}).to_excel(book, sheet_name="Clients", index=False)
        >>> read_workbook(book)["clients"].to_dict("records")
        [{'externalId': '007'}]
    """
    return {table: read_table(path, sheet=sheet) for table, sheet in table_sheets(path).items()}


def _read_parquet(path: Path) -> Iterator[pd.DataFrame]:
    """A Parquet file or folder (hive partitions as ``pandas.read_parquet`` reads them) a chunk
    of rows at a time, each typed as ``pandas.read_parquet`` types it; the index: row numbers."""
    n = 0

    def frame(batch: pa.RecordBatch | pa.Table) -> pd.DataFrame:
        df = batch.to_pandas()
        df.index = pd.RangeIndex(n, n + len(df))
        df.attrs["source"] = str(path)
        return df

    try:
        if path.is_dir():  # as pyarrow.parquet.read_table reads a folder
            partitioning = pads.HivePartitioning.discover(infer_dictionary=True)
            data = pads.dataset(path, format="parquet", partitioning=partitioning)
            schema, batches = data.schema, data.to_batches(batch_size=_CHUNK)
        else:
            file = pq.ParquetFile(path)
            schema, batches = file.schema_arrow, file.iter_batches(batch_size=_CHUNK)
        for batch in batches:
            if batch.num_rows:
                df = frame(batch)
                n += len(df)
                yield df
                del df  # not held while the next chunk is read
        if not n:
            yield frame(schema.empty_table())
    except (OSError, ValueError, ImportError) as exc:  # pyarrow's errors derive from these
        raise ConfigError(
            f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc})"
        ) from None


def read_table(
    path: str | os.PathLike[str], *, encoding: str | None = None, sheet: str | None = None
) -> pd.DataFrame:
    """Read one table file (CSV, an Excel sheet, Parquet), whatever its delimiter or encoding:
    :func:`read_chunks` (the same arguments) joined.

    Returns:
        The frame; :func:`line_numbers` gives each row's line.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clients.csv"
        >>> _ = f.write_bytes("\\ufeffexternalId;name\\nC-1;Müller, Søn\\n".encode())
        >>> read_table(f).to_dict("records")
        [{'externalId': 'C-1', 'name': 'Müller, Søn'}]
    """
    chunks = list(read_chunks(path, encoding=encoding, sheet=sheet))
    if len(chunks) == 1:
        return chunks[0]
    attrs = chunks[-1].attrs  # the whole file's line map
    df = pd.concat(chunks)
    del chunks
    df.attrs = attrs
    return df


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


def line_numbers(frame: pd.DataFrame, rows: Iterable[Any]) -> list[int | None]:
    """The file line of each 0-based data row of a frame from :func:`read_table` (or ``None``).

    Example:
        >>> df = pd.DataFrame({"a": ["x", "y"]})
        >>> df.attrs["line_shifts"] = ((1, 2),)  # two blank lines before the second row
        >>> line_numbers(df, [0, 1, None])
        [2, 5, None]
    """
    shifts = frame.attrs.get("line_shifts")
    if shifts is None:
        return [None for _ in rows]
    starts = [s for s, _ in shifts]
    out: list[int | None] = []
    for row in rows:
        try:
            r = int(row)  # None, NaN and NA are no row
        except (TypeError, ValueError):
            out.append(None)
            continue
        i = bisect.bisect_right(starts, r) - 1
        out.append(r + 2 + (shifts[i][1] if i >= 0 else 0))
    return out


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
            if mask.any():
                lines[mask] = line_array(src, out["row"][mask])
    at = list(out.columns).index("row") + 1
    out.insert(at, "line", pd.Series(lines, index=out.index).astype("Int64"))
    return out


def line_array(frame: pd.DataFrame, rows: pd.Series) -> np.ndarray:
    """:func:`line_numbers` of a column of rows, as floats (NaN: no line), by column.

    Example:
        >>> df = pd.DataFrame({"a": ["x", "y"]})
        >>> df.attrs["line_shifts"] = ((1, 2),)  # two blank lines before the second row
        >>> line_array(df, pd.Series([0, 1, None], dtype="Int64")).tolist()
        [2.0, 5.0, nan]
    """
    shifts = frame.attrs.get("line_shifts")
    if shifts is None:
        return np.full(len(rows), np.nan)
    if rows.dtype == object or isinstance(rows.dtype, pd.StringDtype):
        return np.array([np.nan if n is None else n for n in line_numbers(frame, rows)])
    r = rows.to_numpy(dtype="float64", na_value=np.nan)
    starts = np.array([s for s, _ in shifts], dtype="float64")
    extra = np.array([0, *(e for _, e in shifts)], dtype="float64")
    lines: np.ndarray = np.floor(r) + 2 + extra[np.searchsorted(starts, np.floor(r), "right")]
    return lines


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
            for start in range(0, len(chunk), _CHUNK):
                part = _writable(chunk.iloc[start : start + _CHUNK], excel=False)
                part.to_csv(p, index=False, mode="w" if first else "a", header=first)
                first = False
            if first:  # no rows yet: the header
                _writable(chunk, excel=False).to_csv(p, index=False)
                first = False
        return p
    if not isinstance(frame, pd.DataFrame):
        frame = pd.concat(list(frame), ignore_index=True)
    df = _writable(frame, excel=suffix == ".xlsx")
    if suffix == ".xlsx":
        try:
            df.to_excel(p, index=False, engine="openpyxl")
        except ImportError:
            raise ConfigError(
                f"{p}: writing .xlsx needs openpyxl (pip install 'timebill-toolkit[excel]')"
            ) from None
    else:
        df.to_parquet(p, index=False)
    return p
