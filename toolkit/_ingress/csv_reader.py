"""A CSV file a chunk of rows at a time: delimiter sniffed, UTF-8 (BOM or not) else cp1252 with a
warning, every value a string. A file it cannot read raises one
:class:`~toolkit.errors.ConfigError` naming the file and the line.
"""

from __future__ import annotations

import csv
import itertools
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from toolkit._ingress.chunking import chunked
from toolkit.errors import ConfigError, InputWarning

#: Delimiters a CSV file may use, in order of preference when two fit equally well.
DELIMITERS: tuple[str, ...] = (",", ";", "\t", "|")

# A CSV cell of any length is read; validation reports one over 131,072 characters.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

_SNIFF_LINES = 200


def _bad_lines(data: bytes) -> list[int]:
    """The 1-based lines of ``data`` that are not UTF-8."""
    lines = enumerate(data.split(b"\n"), start=1)  # UTF-8 comes back as it was decoded
    return [n for n, line in lines if line.decode("utf-8", "replace").encode() != line]


def _codec(path: Path, encoding: str | None = None) -> tuple[str, str]:
    """How to read a CSV file, as ``(codec, errors)``: UTF-8 (bad bytes as U+FFFD, warned) else
    cp1252, warned.

    The file is read a block at a time when it is UTF-8 (the whole file's bytes only for
    another encoding)."""
    if encoding is None:
        try:
            with path.open(encoding="utf-8-sig", newline="") as f:
                line = 1
                while block := f.read(1 << 20):
                    _no_binary(path, block, line=line)
                    line += block.count("\n")
            return "utf-8-sig", "strict"
        except UnicodeDecodeError:
            pass
    data = path.read_bytes()
    codec = encoding or "utf-8-sig"
    try:
        return _no_binary(path, data.decode(codec), codec)
    except LookupError:
        raise ConfigError(f"encoding={encoding!r}: no such encoding") from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        if encoding is not None:
            raise ConfigError(f"{path}, line {line}: not {encoding} text") from None
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
            stacklevel=2,  # the line of read_csv_table
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
        stacklevel=2,  # the line of read_csv_table
    )
    return _no_binary(path, text, "cp1252")


def _no_binary(
    path: Path, text: str, codec: str = "", errors: str = "strict", line: int = 1
) -> tuple[str, str]:
    """``(codec, errors)``, once ``text`` (its first line numbered ``line``) is seen to hold no
    NUL, which only binary data holds."""
    if "\x00" in text:
        line += text[: text.index("\x00")].count("\n")
        raise ConfigError(f"{path}, line {line}: binary data, not a text (CSV) file")
    return codec, errors


@contextmanager
def _lines(path: Path, codec: tuple[str, str]) -> Iterator[Iterator[str]]:
    """The file's lines as read (line ends kept), a byte order mark dropped."""
    with path.open(encoding=codec[0], errors=codec[1], newline="") as f:
        yield itertools.chain([next(f, "").removeprefix("\ufeff")], f)


def _records(
    lines: Iterator[str], delimiter: str, limit: int | None = None
) -> Iterable[tuple[int, list[str]]]:
    """(first line, fields) of each non-blank record; raises csv.Error with ``line_num`` set."""
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    start = 1
    try:
        for record in itertools.islice(reader, limit):
            if record and any(f.strip() for f in record):
                yield start, record
            start = reader.line_num + 1
    except csv.Error as exc:
        end = reader.line_num
        where = f"line {start}" + (f" (to line {end})" if end > start else "")
        raise csv.Error(f"{where}: {exc}") from None


def _sniff(path: Path, codec: tuple[str, str]) -> str:
    """The delimiter whose first records have the most fields and agree on their number (the
    first of :data:`DELIMITERS` when two score alike, a comma when none splits a record)."""

    def score(d: str) -> tuple[bool, float]:
        try:
            with _lines(path, codec) as lines:
                counts = [len(r) for _, r in _records(lines, d, _SNIFF_LINES)]
        except csv.Error:
            return False, 0.0
        if not counts or counts[0] < 2:
            return False, 0.0
        agree = sum(c == counts[0] for c in counts) / len(counts)
        return agree >= 0.99, counts[0] if agree >= 0.99 else agree

    return max(DELIMITERS, key=score)


_SHOWN = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}


def read_csv_table(path: Path, encoding: str | None = None) -> Iterator[pd.DataFrame]:
    codec = _codec(path, encoding)
    delimiter = "\t" if path.suffix.casefold() == ".tsv" else _sniff(path, codec)
    try:
        with _lines(path, codec) as lines:
            records = iter(_records(lines, delimiter))
            first = next(records, None)
            if first is None:
                raise ConfigError(f"{path}: empty file, no header line")
            header = [h.strip() for h in first[1]]
            # the columns kept: a trailing unnamed column empty on every line is dropped
            width = len(header) - _empty_tail(path, codec, delimiter, header)
            fitted = ((at, _fit(path, delimiter, header, at, r, width)) for at, r in records)
            names = pd.Index(header[:width])  # text Arrow-backed
            yield from chunked(fitted, names, "str", source=str(path), delimiter=delimiter)
    except csv.Error as exc:
        where, _, why = str(exc).partition(": ")
        raise ConfigError(
            f"{path}, {where}: cannot read it as {_SHOWN[delimiter]}-separated CSV ({why}); "
            "check the double quotes"
        ) from None


def _fit(
    path: Path, delimiter: str, header: list[str], start: int, record: list[str], width: int
) -> list[str]:
    """A record as wide as the header: empty fields beyond it dropped, missing ones ``""``;
    then its first ``width`` fields (those after are empty on every line)."""
    if any(f.strip() for f in record[len(header) :]):
        raise ConfigError(
            f"{path}, line {start}: {len(record)} fields where the header has "
            f"{len(header)} ({_SHOWN[delimiter]}-separated); a value holding the "
            f"delimiter needs double quotes"
        )
    return record[:width] + [""] * (width - len(record))


def _empty_tail(path: Path, codec: tuple[str, str], delimiter: str, header: list[str]) -> int:
    """How many last columns are unnamed and empty on every line (a trailing delimiter on each
    line): read through once, only when the header ends unnamed."""
    if not header or header[-1]:
        return 0
    named = max((i + 1 for i, name in enumerate(header) if name), default=0)
    with _lines(path, codec) as lines:
        for _, record in itertools.islice(_records(lines, delimiter), 1, None):  # past the header
            filled = [i for i in range(named, min(len(record), len(header))) if record[i] != ""]
            if filled:
                named = max(filled) + 1
                if named == len(header):
                    break
    return len(header) - named
