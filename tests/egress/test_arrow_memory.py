"""The tables the toolkit writes hold no numpy memory (issue 39 finding 8, the exit abort).

``toolkit export --out DIR`` sometimes aborted as it exited (``terminate called without an
active exception``, exit 134) after its work was done: an Arrow buffer that wraps a numpy array
is freed by taking the GIL, and an Arrow writer thread (``ds.write_dataset``'s, deltalake's)
that drops the last reference while the interpreter exits cannot take it. The tables given to
the writers must therefore own their memory: these tests compare every buffer of them with the
memory of every numpy array converted on the way. The exit itself is measured by
``bench/bench_exit.py`` (300 runs on a loaded machine), not here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest

from toolkit._egress.export import Export, from_frame
from toolkit.testing import fake_export_entries, fake_pending_entries


def _addresses(table: pa.Table) -> Iterator[tuple[str, int]]:
    for name, column in zip(table.column_names, table.columns, strict=True):
        for chunk in column.chunks:
            for buffer in chunk.buffers():
                if buffer is not None and buffer.size:
                    yield name, buffer.address


@pytest.fixture
def numpy_memory(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray[Any, Any]]:
    """Every numpy array given to ``pa.array`` from now on (kept alive: addresses stay theirs)."""
    seen: list[np.ndarray[Any, Any]] = []
    real = pa.array

    def spy(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(obj, np.ndarray):
            seen.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(pa, "array", spy)
    return seen


@pytest.mark.parametrize("kind", ["export", "pending"])
def test_flattened_tables_share_no_memory_with_numpy(
    numpy_memory: list[np.ndarray[Any, Any]], kind: str
) -> None:
    records = fake_export_entries(20) if kind == "export" else fake_pending_entries(20)
    entries, codes = Export.from_json(orjson.dumps(records), kind=kind).to_arrow()
    assert numpy_memory, "the flattening converts numpy arrays (the spy saw none)"
    held = {array.ctypes.data for array in numpy_memory if array.size}
    shared = [name for t in (entries, codes) for name, at in _addresses(t) if at in held]
    assert shared == []
    assert codes.num_rows > 0


def test_a_frame_written_back_shares_no_memory_with_numpy() -> None:
    frame = Export.from_records(fake_export_entries(5)).entries
    numbers = {
        name: np.asarray(getattr(frame[name].array, "_data", frame[name].array)).ctypes.data
        for name in ("unitIncrementCount", "incrementDurationInSeconds")
    }
    table = from_frame(frame, "export", "entries")
    shared = [name for name, at in _addresses(table) if at in numbers.values()]
    assert shared == []
    assert table.num_rows == 5 and pd.api.types.is_float_dtype(frame["unitIncrementCount"])
