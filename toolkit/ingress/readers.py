"""Table files as people have them, one reader for CSV, Excel and Parquet: a file by its
extension to :mod:`~toolkit.ingress.csv_reader`, :mod:`~toolkit.ingress.sheet_reader` or
:mod:`~toolkit.ingress.parquet_reader`, a chunk of rows at a time (:func:`read_chunks`), or whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa

from toolkit.errors import ConfigError
from toolkit.ingress.csv_reader import _read_csv
from toolkit.ingress.parquet_reader import _read_parquet
from toolkit.ingress.sheet_reader import _read_excel, table_sheets

__all__ = ["TableFile", "read_chunks", "read_table", "read_workbook"]


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
    line map of the rows so far (:func:`~toolkit.ingress.chunking.line_numbers` works on any
    chunk; none for Parquet); :func:`read_table` is the chunks joined.

    Args:
        path: The file (a Parquet folder too).
        encoding: The text encoding of a CSV file (default: UTF-8, guessed otherwise).
        sheet: The sheet of a workbook to read (default: the first).

    Example:
        >>> import tempfile, pathlib
        >>> from toolkit.ingress.chunking import line_numbers
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


def read_workbook(path: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Read a workbook whose sheets are named after import tables
    (:func:`~toolkit.ingress.sheet_reader.table_sheets`).

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


def read_table(
    path: str | os.PathLike[str], *, encoding: str | None = None, sheet: str | None = None
) -> pd.DataFrame:
    """Read one table file (CSV, an Excel sheet, Parquet), whatever its delimiter or encoding:
    :func:`read_chunks` (the same arguments) joined.

    Returns:
        The frame; :func:`~toolkit.ingress.chunking.line_numbers` gives each row's line.

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
