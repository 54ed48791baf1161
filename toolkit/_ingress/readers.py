"""Table files as people have them, one reader for CSV, Excel and Parquet: a file by its
extension to :mod:`~toolkit._ingress.csv_reader`, :mod:`~toolkit._ingress.sheet_reader` or
:mod:`~toolkit._ingress.parquet_reader`, a chunk of rows at a time (:func:`read_chunks`), or whole.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pandas as pd

from toolkit._ingress.csv_reader import read_csv_table
from toolkit._ingress.parquet_reader import read_parquet_table
from toolkit._ingress.sheet_reader import read_excel_table
from toolkit.errors import ConfigError


@dataclass(frozen=True)
class TableFile:
    """A table file (or a workbook's sheet), read a chunk at a time (:func:`read_chunks`) as
    often as asked, parsed once.

    The first read that runs to the end leaves its chunks in an anonymous temporary file (on
    disk, unlinked at once: nothing stays behind a killed run); every later read gives those
    chunks back, so the rows checked are the rows planned and sent, even when the file changes
    meanwhile. A read stopped early leaves nothing: the next one parses the file again.

    Its one snapshot (a list of none or one): the chunks of a first read that ran to the end,
    pickled one after the other in an anonymous temporary file (closed by its own finalizer),
    with where each one lies in it.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "codes.csv"
        >>> _ = f.write_text("externalId\\nL1\\n")
        >>> source = TableFile(f)
        >>> [chunk["externalId"].tolist() for chunk in source.chunks()]
        [['L1']]
        >>> _ = f.write_text("externalId\\nL2\\nL3\\n")
        >>> [chunk["externalId"].tolist() for chunk in source.chunks()]  # the first read
        [['L1']]
    """

    path: Path
    encoding: str | None = None
    sheet: str | None = None
    _spill: list[tuple[IO[bytes], tuple[tuple[int, int], ...]]] = field(
        default_factory=list, repr=False, compare=False
    )

    def chunks(self) -> Iterator[pd.DataFrame]:
        """The file's rows, a chunk at a time (:func:`read_chunks`), each the one first read."""
        spill = self._spill
        if spill:  # one snapshot for the whole pass, read by offset (no shared position)
            file, extents = spill[0]
            for offset, length in extents:
                yield pickle.loads(os.pread(file.fileno(), length, offset))
            return
        # closed when stopped early (or when another read ran to the end first)
        with ExitStack() as opened:
            # unlinked at once: no copy left behind a killed run
            file = opened.enter_context(tempfile.TemporaryFile())
            taken: list[tuple[int, int]] = []
            for chunk in read_chunks(self.path, encoding=self.encoding, sheet=self.sheet):
                data = pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)
                taken.append((file.tell(), len(data)))
                file.write(data)
                del data  # not held while the chunk is used
                yield chunk
            file.flush()
            if not spill:  # the first read to run to the end: the snapshot, kept open
                spill.append((file, tuple(taken)))
                opened.pop_all()

    def read(self) -> pd.DataFrame:
        """The whole table: its chunks (:meth:`chunks`) joined.

        Example:
            >>> TableFile(Path("sample_data/codes.csv")).read().shape
            (36, 4)
        """
        return joined(self.chunks())


def read_chunks(
    path: str | os.PathLike[str], *, encoding: str | None = None, sheet: str | None = None
) -> Iterator[pd.DataFrame]:
    """Read one table file 50,000 rows at a time (CSV, an Excel sheet or Parquet).

    Each chunk's index holds the rows' numbers in the file (0-based), and its ``attrs`` the
    line map of the rows so far (:func:`~toolkit._ingress.chunking.line_array` works on any
    chunk; none for Parquet); :func:`read_table` is the chunks joined.

    Args:
        path: The file (a Parquet folder too).
        encoding: The text encoding of a CSV file (default: UTF-8, guessed otherwise).
        sheet: The sheet of a workbook to read (default: the first).

    Example:
        >>> import tempfile, pathlib
        >>> from toolkit._ingress.chunking import line_array
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clients.csv"
        >>> _ = f.write_text("externalId\\nC-1\\n\\nC-2\\n")
        >>> chunks = list(read_chunks(f))
        >>> [(c.index.tolist(), line_array(c, c.index.to_series()).tolist()) for c in chunks]
        [([0, 1], [2.0, 4.0])]
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file")
    suffix = p.suffix.casefold()
    if suffix == ".parquet" or p.is_dir():
        yield from read_parquet_table(p)
    elif suffix in (".xlsx", ".xlsm"):
        yield from read_excel_table(p, sheet)
    elif suffix == ".xls":
        raise ConfigError(f"{p}: old Excel .xls is not read; save it as .xlsx or CSV")
    else:
        try:
            yield from read_csv_table(p, encoding)
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read it ({exc.strerror or exc})") from None


def read_table(
    path: str | os.PathLike[str], *, encoding: str | None = None, sheet: str | None = None
) -> pd.DataFrame:
    """Read one table file (CSV, an Excel sheet, Parquet), whatever its delimiter or encoding:
    :func:`read_chunks` (the same arguments) joined.

    Returns:
        The frame; :func:`~toolkit._ingress.chunking.line_array` gives each row's line.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clients.csv"
        >>> _ = f.write_bytes("\\ufeffexternalId;name\\nC-1;Müller, Søn\\n".encode())
        >>> read_table(f).to_dict("records")
        [{'externalId': 'C-1', 'name': 'Müller, Søn'}]
    """
    return joined(read_chunks(path, encoding=encoding, sheet=sheet))


def joined(read: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Chunks as one frame, with the last chunk's line map (the whole file's).

    Example:
        >>> joined([pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [2]}, index=[1])])["a"].tolist()
        [1, 2]
    """
    chunks = list(read)
    if len(chunks) == 1:
        return chunks[0]
    attrs = chunks[-1].attrs  # the whole file's line map
    df = pd.concat(chunks)
    del chunks
    df.attrs = attrs
    return df
