"""Recurring export: an incremental, idempotent sync of released time into two Delta tables.

``PATH/entries`` (one row per ``_id``) and ``PATH/codes`` (one row per entry and code), both
partitioned by ``workMonth``. Batches of windows are written codes first, then entries in one
commit carrying the watermark (``toolkit.releasedOnOrBefore``): per table an append when none of
the batch is stored yet, else a Delta merge. A killed sync leaves readable tables and the next
one redoes the unfinished window. One writer at a time (:data:`LOCK_NAME`); across machines every
commit carries the same Delta app transaction (:data:`APP_ID`), so a commit made after a batch's
lookup fails it and the batch is redone; see docs/toolkit.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from functools import cache, partial
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from deltalake import (
    CommitProperties,
    DeltaTable,
    Schema,
    Transaction,
    WriterProperties,
    write_deltalake,
)
from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.table import TableMerger
from pandas.api.typing import NaTType
from tqdm.auto import tqdm

from toolkit._core.connection import Connection
from toolkit._core.lock import FileLock, LockHeld
from toolkit._core.memory import returning_pool
from toolkit._core.windows import TimeLike, Window, renamed, to_utc
from toolkit._egress.export import DEFAULT_PARTITION_COLS, ROWS_PER_GROUP, Export
from toolkit._egress.fetch import fetch_window, warn_unknown_fields
from toolkit._egress.sync_report import SyncReport, short_iso
from toolkit.errors import ConcurrentWriteError, ConfigError

#: Commit metadata key of the entries table holding the watermark (ISO 8601, UTC).
WATERMARK_KEY = "toolkit.releasedOnOrBefore"
#: Commit metadata key of the codes table: the window whose codes a commit wrote.
WINDOW_KEY = "toolkit.window"
#: Delta app transaction of every sync commit: two syncs' commits to one table conflict.
APP_ID = "timebill-toolkit.sync"
#: Delta app transaction counting the codes table's sync commits (1 at its creation). An entries
#: commit carries the count its codes commit made, or 0 when a codes row may lack its entry (a
#: killed sync's codes commit, never followed by its entries commit): while the two tables hold
#: the same count, no lookup of such codes is needed.
CODES_APP = "timebill-toolkit.sync.codes"
#: Windows fetched ahead while a batch is written, one request at a time: the next is sent
#: as soon as an answer is in, while that one is flattened, so the service always has one
#: request of the sync (the export leaves it none while it flattens and writes), never two
#: competing for it.
_AHEAD = 2
#: Tries of a batch whose commit lost to another sync's (each redoes the lookup).
_ATTEMPTS = 5
#: How long Arrow's freed pages wait to be reused (each batch hands them back when written).
_DECAY_MS = 1000
#: Default ``lag``: ``on_or_before`` defaults to now minus this (entries show in the export late).
DEFAULT_LAG = "10min"
#: Partition column of both tables.
PARTITION_COLS = DEFAULT_PARTITION_COLS

_TABLES = ("entries", "codes")
_T = TypeVar("_T")

_WRITER = WriterProperties(max_row_group_size=ROWS_PER_GROUP, compression="SNAPPY")
_DATE = 'PrimitiveType("date")'
_LONG = 'PrimitiveType("long")'
#: the count fields: ``double`` since the published service sends doubles, ``long`` before
_COUNTS = ("unitIncrementCount", "incrementDurationInSeconds")
#: types an earlier version wrote (a date workDate, whole counts), accepted as the current ones:
#: per column, the Delta type and the Arrow type a table holding it is written with
_LEGACY = {"workDate": (_DATE, pa.date32()), **{n: (_LONG, pa.int64()) for n in _COUNTS}}


def sync_options(window: str, lag: str | dt.timedelta) -> pd.Timedelta:
    """Check ``window`` and read ``lag`` as :func:`sync` does first, before any file or request.

    Returns:
        The lag.

    >>> sync_options("6h", "10min")
    Timedelta('0 days 00:10:00')
    """
    try:
        behind: pd.Timedelta | NaTType = pd.Timedelta(lag)  # "NaT" reads as NaT
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"lag: cannot read {lag!r} as a duration such as '10min'") from exc
    if isinstance(behind, NaTType) or behind < pd.Timedelta(0):
        raise ConfigError(f"lag: {lag!r} must be a duration of zero or more")
    Window(pd.Timestamp(0, tz="UTC"), pd.Timestamp(1, tz="UTC")).split(window)
    return behind


@cache
def _current() -> tuple[pa.Schema, pa.Schema]:
    """The tables' Arrow schemas as this version writes them: an empty export's, made once a
    process (they follow from the code alone) rather than at every opening of a table."""
    entries, codes = Export.empty().to_arrow(partition_cols=PARTITION_COLS)
    return entries.schema, codes.schema


def _schemas(root: Path | None = None) -> tuple[pa.Schema, pa.Schema]:
    """The tables' Arrow schemas; with ``root``, an earlier version's legacy types kept."""
    entries, codes = _current()
    held = DeltaTable(str(root / "entries")).schema().fields if root is not None else []
    for f in held:
        if repr(f.type) == _LEGACY.get(f.name, ("",))[0]:
            i = entries.get_field_index(f.name)
            entries = entries.set(i, pa.field(f.name, _LEGACY[f.name][1]))
    return entries, codes


def _check_whole(root: Path, entries: pa.Table, schema: pa.Schema) -> None:
    """Refuse a fraction for a table whose counts are whole numbers (an earlier version's)."""
    for name in _COUNTS:
        if not pa.types.is_integer(schema.field(name).type):
            continue
        values = entries[name]
        fraction: Any = pc.not_equal(values, pc.floor(values)).fill_null(False)  # booleans
        if pc.any(fraction).as_py():
            at = pc.index(fraction, True).as_py()
            raise ConfigError(
                f"entry {entries['_id'][at].as_py()!r} has {name} {values[at].as_py()!r}, a"
                f" fraction, but {root / 'entries'} keeps whole counts (an earlier version's):"
                f" nothing of this window was written; convert the table with"
                f" toolkit._egress.sync.widen_counts({str(root)!r}), then sync again"
            )


def _sql_list(values: list[Any]) -> str:
    return ", ".join("'" + str(v).replace("'", "''") + "'" for v in values)


def _check_folder(root: Path, *, tables: bool = True) -> None:
    """Refuse a path holding anything but our two tables (``tables=False``: don't look inside)."""
    if not root.is_dir():
        if root.exists():
            raise ConfigError(f"{root} is a file, not a sync folder")
        return
    others = sorted(p.name for p in root.iterdir() if p.name[0] != "." and p.name not in _TABLES)
    if others:
        raise ConfigError(
            f"{root} holds something other than a sync's two tables (entries/, codes/):"
            f" {', '.join(others[:5])}; choose an empty or new folder"
        )
    for name in _TABLES if tables else ():
        sub = root / name
        if sub.exists() and not (sub / "_delta_log").is_dir():
            raise ConfigError(f"{sub} exists but is not a Delta table (no _delta_log/)")


def _open(root: Path, name: str) -> DeltaTable | None:
    """Open one of the two tables, checking that it is ours and of the current schema."""
    sub = root / name
    if not (sub / "_delta_log").is_dir():
        return None
    try:
        table = DeltaTable(str(sub))
    except DeltaError as exc:
        raise ConfigError(f"{sub}: cannot open it as a Delta table ({exc})") from None
    expected = _schemas()[_TABLES.index(name)]
    want = [(f.name, repr(f.type)) for f in Schema.from_arrow(expected).fields]
    held = [(f.name, repr(f.type)) for f in table.schema().fields]
    have = [(n, dict(want).get(n, t) if t == _LEGACY.get(n, ("",))[0] else t) for n, t in held]
    if have != want:
        missing = [n for n, _ in want if n not in dict(have)]
        extra = [n for n, _ in have if n not in dict(want)]
        changed = [n for n, t in have if n in dict(want) and dict(want)[n] != t]
        raise ConfigError(
            f"{sub} was written with another schema than this toolkit's (missing columns:"
            f" {missing or 'none'}; unknown columns: {extra or 'none'}; other types:"
            f" {changed or 'none'}); sync into a new folder, or re-create it from scratch"
        )
    return table


def _tables(root: Path) -> tuple[DeltaTable, DeltaTable]:
    _check_folder(root)
    entries, codes = _open(root, "entries"), _open(root, "codes")
    if entries is None or codes is None:
        raise ConfigError(f"{root} is not a sync folder (it needs entries/ and codes/ tables)")
    return entries, codes


def create_tables(path: str | os.PathLike[str]) -> Path:
    """Create the two empty tables with their full schema, if not there yet; return the folder.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sorted(p.name for p in create_tables(tmp).iterdir())
    ['codes', 'entries']
    """
    root = Path(path)
    _check_folder(root)
    root.mkdir(parents=True, exist_ok=True)
    # codes first: a folder whose entries table exists always has its codes table too
    for name, schema in zip(("codes", "entries"), reversed(_schemas()), strict=True):
        if _open(root, name) is None:
            write_deltalake(
                str(root / name),
                schema.empty_table(),
                partition_by=list(PARTITION_COLS),
                mode="error",
                commit_properties=CommitProperties(app_transactions=[Transaction(CODES_APP, 1)]),
                name=f"toolkit_sync_{name}",
                description=f"timebill-toolkit sync: {name}",
            )
    return root


def read_watermark(table: DeltaTable) -> pd.Timestamp | None:
    """The ``releasedOnOrBefore`` of the last window an entries table's commits hold, or ``None``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     print(read_watermark(DeltaTable(str(create_tables(tmp) / "entries"))))
    None
    """
    for limit in (20, None):  # the newest commits first: the whole history only if needed
        history = table.history(limit)
        for commit in history:
            if value := commit.get(WATERMARK_KEY):
                return to_utc(value, WATERMARK_KEY)
        if limit is not None and len(history) < limit:
            break
    return None


def _commit(
    mark: pd.Timestamp | None, key: str = WATERMARK_KEY, *, codes: int | None = None
) -> CommitProperties:
    """A sync commit's properties: ``mark`` under ``key``, and the sync's app transaction.

    Delta fails a commit when a commit made since the snapshot it was built on holds a
    transaction of the same app id, whatever either wrote (blind appends included). ``codes``:
    the :data:`CODES_APP` count the commit carries.
    """
    counted = [] if codes is None else [Transaction(CODES_APP, codes)]
    version = 0 if mark is None else mark.value // 1_000_000  # the mark in epoch milliseconds
    return CommitProperties(
        custom_metadata=None if mark is None else {key: short_iso(mark)},
        app_transactions=[Transaction(APP_ID, version), *counted],
    )


def _stored(table: DeltaTable, key: str, ids: pa.Array[Any], columns: list[str]) -> pa.Table:
    """The rows of ``table`` whose ``key`` is among ``ids``: one scan, joined to them.

    Only the files whose ``key`` statistics (min, max) overlap the range of ``ids`` are read:
    a batch of ids all newer than the stored ones, as time-ordered ids are, reads none. The
    scan, of ``key`` and ``columns`` only, streams into a semi join whose hash table holds the
    batch's ids (built once, where a filter would build it for every record batch read).
    """
    low, high = pc.min_max(ids).values()
    scan = table.to_pyarrow_dataset(
        file_pruning_predicate=[(key, ">=", low.as_py()), (key, "<=", high.as_py())]
    )
    names = dict.fromkeys([key, *columns])
    wanted: ds.Dataset = scan.replace_schema(  # type: ignore[func-returns-value, assignment]  # stubs: None
        pa.schema([scan.schema.field(n) for n in names])
    )
    batch = ds.dataset(pa.table({key: ids.cast(scan.schema.field(key).type)}))
    found: pa.Table = wanted.join(batch, keys=key, join_type="left semi").to_table()
    return found.select(columns)


class _Changes(NamedTuple):
    """What a batch changes: its new or newer entries and their codes, the months those touch
    (where they lie now too), and whether each table holds any of them (else an append)."""

    entries: pa.Table
    codes: pa.Table
    months: set[Any]
    entries_held: bool
    codes_held: bool


def _changes(
    entries_table: DeltaTable,
    codes_table: DeltaTable,
    entries: pa.Table,
    codes: pa.Table,
    *,
    paired: bool,
) -> _Changes:
    """Look a batch up in the snapshots: the entries not stored or stored older, their codes."""
    ids = entries["_id"].combine_chunks()
    held = _stored(entries_table, "_id", ids, ["_id", "updatedAt", "workMonth"])
    source, code_rows = entries, codes  # all new: no copy
    months: set[Any] = set()
    if held.num_rows:
        at = pc.index_in(ids, value_set=held["_id"].combine_chunks())
        held_updated = (
            held["updatedAt"].combine_chunks().cast(entries.schema.field("updatedAt").type).take(at)
        )
        newer: Any = pc.greater(entries["updatedAt"].combine_chunks(), held_updated)
        newer = newer.fill_null(False)
        months.update(held["workMonth"].combine_chunks().take(at).filter(newer).to_pylist())
        source = entries.filter(pc.or_(pc.is_null(at), newer))
        code_rows = codes.filter(pc.is_in(codes["entryId"], value_set=source["_id"]))
    # codes of entries not stored: a killed or concurrent sync's, replaced where they lie
    held_codes = 0
    if not paired and source.num_rows:
        found = _stored(codes_table, "entryId", source["_id"].combine_chunks(), ["workMonth"])
        months.update(found["workMonth"].unique().to_pylist() if found.num_rows else [])
        held_codes = found.num_rows
    pa.default_memory_pool().release_unused()  # the scans' buffers, for the writes to reuse
    months.update(source["workMonth"].to_pylist())
    return _Changes(source, code_rows, months, held.num_rows > 0, held_codes > 0)


def _append(table: DeltaTable, rows: pa.Table, commit: CommitProperties) -> None:
    write_deltalake(table, rows, mode="append", writer_properties=_WRITER, commit_properties=commit)


def _merge(
    table: DeltaTable, rows: pa.Table, on: str, change: _Changes, commit: CommitProperties
) -> TableMerger:
    """A merge of ``rows`` (``s``) into ``table`` (``t``) matching ``on`` in the changed months."""
    return table.merge(
        rows,
        predicate=f"{on} AND {_in_months(change.months)}",
        source_alias="s",
        target_alias="t",
        writer_properties=_WRITER,
        commit_properties=commit,
    )


def _in_months(months: set[Any]) -> str:
    """A merge predicate on the target's partitions: a null workMonth (no workDate) by IS NULL."""
    named = sorted(m for m in months if m is not None)
    terms = [f"t.workMonth IN ({_sql_list(named)})"] if named else []
    terms += ["t.workMonth IS NULL"] if None in months else []
    return f"({' OR '.join(terms)})"


def _write_codes(table: DeltaTable, change: _Changes, commit: CommitProperties) -> None:
    """The changed entries' codes: appended, or replacing theirs (and those a killed sync left)."""
    if not change.entries_held and not change.codes_held:
        return _append(table, change.codes, commit)
    ids_sql = _sql_list(change.entries["_id"].to_pylist())
    merge = _merge(
        table, change.codes, "t.entryId = s.entryId AND t.position = s.position", change, commit
    )
    merge.when_matched_update_all().when_not_matched_insert_all().when_not_matched_by_source_delete(
        predicate=f"t.entryId IN ({ids_sql}) AND {_in_months(change.months)}"
    ).execute()


def _write_entries(
    table: DeltaTable, change: _Changes, commit: CommitProperties
) -> tuple[int, int]:
    """The changed entries, appended or merged (the newer ``updatedAt`` wins): inserted, updated."""
    if not change.entries_held:  # none of them stored: an append writes what a merge would
        _append(table, change.entries, commit)
        return change.entries.num_rows, 0
    metrics = (
        _merge(table, change.entries, "t._id = s._id", change, commit)
        .when_matched_update_all(predicate="s.updatedAt > t.updatedAt")
        .when_not_matched_insert_all()
        .execute()
    )
    return int(metrics["num_target_rows_inserted"]), int(metrics["num_target_rows_updated"])


def _write_window(
    root: Path,
    export: Export,
    schemas: tuple[pa.Schema, pa.Schema],
    mark: pd.Timestamp,
) -> tuple[int, int, int, int]:
    """Write one batch, codes first: ``(inserted, updated, unchanged, codes_written)``.

    The watermark committed is the later of ``mark`` and the stored one. Both lookups and
    both commits use the snapshots taken first: a sync's commit since then fails this one
    (``CommitFailedError``) instead of doubling rows it did not see.
    """
    tables = export.to_arrow(partition_cols=PARTITION_COLS)
    _check_whole(root, tables.entries, schemas[0])
    entries, codes = (t.select(s.names).cast(s) for t, s in zip(tables, schemas, strict=True))
    if entries.num_rows == 0:
        return 0, 0, 0, 0
    codes_table = DeltaTable(str(root / "codes"))
    entries_table = DeltaTable(str(root / "entries"))
    count = codes_table.transaction_version(CODES_APP) or 0
    paired = 0 < count == entries_table.transaction_version(CODES_APP)  # in these snapshots
    stored = read_watermark(entries_table)
    mark = mark if stored is None else max(mark, stored)
    change = _changes(entries_table, codes_table, entries, codes, paired=paired)
    if change.entries.num_rows == 0:
        return 0, 0, entries.num_rows, 0
    _write_codes(codes_table, change, _commit(mark, WINDOW_KEY, codes=count + 1))
    pairing = _commit(mark, codes=count + 1 if paired else 0)
    inserted, updated = _write_entries(entries_table, change, pairing)
    return inserted, updated, entries.num_rows - inserted - updated, change.codes.num_rows


#: The lock file inside a sync folder (hidden, so it is not taken for a table).
LOCK_NAME = ".toolkit-sync.lock"


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Hold the sync folder's lock, or fail at once naming the process that holds it; a commit
    lost to another writer (after its retries) ends the work as :class:`ConcurrentWriteError`."""
    try:
        with FileLock(root / LOCK_NAME):
            yield
    except LockHeld as held:
        raise ConcurrentWriteError(
            f"another writer is syncing {root} ({held.holder}): this one stopped before"
            f" writing anything; run it again once the other has finished"
        ) from None
    except CommitFailedError as exc:
        raise ConcurrentWriteError(
            f"another writer committed to {root} while this sync was writing (Delta optimistic"
            f" concurrency): this sync stopped, nothing is duplicated, and the watermark is where"
            f" the last complete window left it; run it again once the other has finished ({exc})"
        ) from None


def _prefetch(
    conn: Connection, windows: list[tuple[pd.Timestamp, pd.Timestamp]]
) -> Iterator[tuple[pd.Timestamp, pd.Timestamp, Export]]:
    """Each window with its export, in order; the next ones fetched while the caller writes."""
    fetch = partial(fetch_window, conn, gate=threading.Lock())
    with ThreadPoolExecutor(max_workers=_AHEAD, thread_name_prefix="toolkit-sync") as pool:
        ahead = deque(pool.submit(fetch, *w) for w in windows[:_AHEAD])
        try:
            for i, (lo, hi) in enumerate(windows):
                part = ahead.popleft().result()
                if i + _AHEAD < len(windows):
                    ahead.append(pool.submit(fetch, *windows[i + _AHEAD]))
                yield lo, hi, part
        finally:
            for future in ahead:
                future.cancel()


@renamed
def sync(
    conn: Connection,
    path: str | os.PathLike[str],
    *,
    after: TimeLike | None = None,
    on_or_before: TimeLike | None = None,
    window: str = "1D",
    lag: str | dt.timedelta = DEFAULT_LAG,
    batch_rows: int = ROWS_PER_GROUP,
    progress: bool = True,
) -> SyncReport:
    """Bring the Delta tables at ``path`` up to date with the entries released since last time.

    Args:
        conn: The connection.
        path: The sync folder (``entries/`` and ``codes/`` Delta tables; created if new).
        after: Exclusive start (a bare day: its start), needed by the first sync; later ones
            start from the watermark.
        on_or_before: Inclusive end (a bare day: its end, 23:59:59.999); default now minus
            ``lag``.
        window: Window size, a pandas offset (``"1D"``, ``"6h"``...).
        lag: How far behind now ``on_or_before`` defaults to (:data:`DEFAULT_LAG`).
        batch_rows: Entries gathered from consecutive windows before a commit.
        progress: A progress bar over the windows.

    Returns:
        A :class:`SyncReport`.

    Example:
        >>> report = client.sync(tmp / "time", after="2026-11-01", on_or_before="2026-11-21")
        >>> report.inserted, report.codes_written
        (226, 338)
    """
    root = Path(path)
    span = Window.of(after, on_or_before)
    first, last = span.after, span.on_or_before
    behind = sync_options(window, lag)
    _check_folder(root, tables=False)
    if first is None and not (root / "entries" / "_delta_log").is_dir():
        raise ConfigError(f"the first sync of {root} needs after (releasedAfter)")
    with _locked(root):
        watermark = read_watermark(_tables(create_tables(root))[0])
        start = watermark if first is None else first
        if start is None:
            raise ConfigError(f"the first sync of {root} needs after (releasedAfter)")
        if watermark is not None and start > watermark:
            raise ConfigError(
                f"after ({short_iso(start)}) is later than the watermark of {root}"
                f" ({short_iso(watermark)}): entries released in between would be skipped;"
                f" leave after out or give an earlier one"
            )
        end = last if last is not None else (pd.Timestamp.now("UTC") - behind).floor("s")
        nothing = first is None and end <= start
        windows = [] if nothing else Window(start, end).split(window)
        with returning_pool(decay_ms=_DECAY_MS):
            report = (
                SyncReport(str(root), None, None, 0, 0, 0, 0, 0, watermark)
                if nothing
                else _write_windows(conn, root, start, end, windows, batch_rows, progress)
            )
        return report if last is not None else dataclasses.replace(report, lag=behind)


def _write_windows(
    conn: Connection,
    root: Path,
    start: pd.Timestamp,
    end: pd.Timestamp,
    windows: list[tuple[pd.Timestamp, pd.Timestamp]],
    batch_rows: int,
    progress: bool,
) -> SyncReport:
    schemas = _schemas(root)
    warned: set[str] = set()
    totals = [0, 0, 0, 0]
    pending: pd.Timestamp | None = None
    buffer: list[Export] = []
    held = 0  # entries in buffer, counted as they come: summing the buffer anew is quadratic
    off = not progress or len(windows) <= 1
    with tqdm(total=len(windows), desc="sync", unit="window", disable=off) as bar:
        for i, (_lo, hi, part) in enumerate(_prefetch(conn, windows)):
            bar.update(1)
            warn_unknown_fields(part, warned, kept=False)
            buffer.append(part)
            held += len(part)
            if held < batch_rows and i + 1 < len(windows):
                continue  # consecutive windows are written together, up to batch_rows entries
            batch = buffer[0] if len(buffer) == 1 else Export.concat(buffer)
            buffer, held = [], 0
            written = _retried(partial(_write_window, root, batch, schemas, hi))
            del batch  # not held while the next batch's windows come: memory set by one batch
            pa.default_memory_pool().release_unused()
            pending = hi if written[0] + written[1] + written[3] == 0 else None
            totals = [a + b for a, b in zip(totals, written, strict=True)]
            bar.set_postfix(inserted=totals[0], updated=totals[1], refresh=False)
        if pending is not None:
            _retried(partial(_move_watermark, root, pending, schemas[0]))
    inserted, updated, unchanged, codes = totals  # of len(windows): each is in a batch
    mark = read_watermark(DeltaTable(str(root / "entries")))
    return SyncReport(
        str(root), start, end, len(windows), inserted, updated, unchanged, codes, mark
    )


def _retried(write: Callable[[], _T]) -> _T:
    """Run ``write`` again (it reads the tables anew) when another sync committed meanwhile."""
    for _ in range(_ATTEMPTS - 1):
        with suppress(CommitFailedError):
            return write()
    return write()


def _move_watermark(root: Path, mark: pd.Timestamp, schema: pa.Schema) -> None:
    """Commit ``mark`` as the watermark with no rows, unless the watermark is there already."""
    table = DeltaTable(str(root / "entries"))
    stored = read_watermark(table)
    if stored is None or stored < mark:
        _append(table, schema.empty_table(), _commit(mark))


def sync_status(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The state of a sync folder: ``path``, ``watermark``, and per table rows, version, files.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sync_status(create_tables(tmp))["entries"]
    0
    """
    tables = dict(zip(_TABLES, _tables(Path(path)), strict=True))
    facts: dict[str, Callable[[DeltaTable], int]] = {
        "": lambda t: t.to_pyarrow_dataset().count_rows(),
        "_version": DeltaTable.version,
        "_files": lambda t: len(t.file_uris()),
    }
    status = {"path": str(Path(path)), "watermark": read_watermark(tables["entries"])}
    return status | {name + k: fact(t) for k, fact in facts.items() for name, t in tables.items()}


def compact(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Compact both tables' small files (delta-rs optimize), keeping the watermark.

    Args:
        path: The sync folder.

    Returns:
        The optimize metrics of each table (``numFilesAdded``, ``numFilesRemoved``...).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     compact(create_tables(tmp))["entries"]["numFilesAdded"]
    0
    """
    root = Path(path)
    _tables(root)
    with _locked(root):
        entries, codes = _tables(root)
        mark = read_watermark(entries)
        return {
            "codes": codes.optimize.compact(writer_properties=_WRITER),
            "entries": entries.optimize.compact(
                writer_properties=_WRITER, commit_properties=_commit(mark)
            ),
        }


def widen_counts(path: str | os.PathLike[str]) -> bool:
    """Convert an earlier version's whole-number counts to ``double`` (one commit).

    Returns ``False`` when the counts were ``double`` already.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     widen_counts(create_tables(tmp))
    False
    """
    root = Path(path)
    _tables(root)
    with _locked(root):
        entries, _ = _tables(root)
        held = {f.name: repr(f.type) for f in entries.schema().fields}
        if not any(held.get(name) == _LONG for name in _COUNTS):
            return False
        mark = read_watermark(entries)
        data = entries.to_pyarrow_table()
        wide = [f.with_type(pa.float64()) if f.name in _COUNTS else f for f in data.schema]
        data = data.cast(pa.schema(wide))
        write_deltalake(
            entries,
            data,
            mode="overwrite",
            schema_mode="overwrite",
            partition_by=list(PARTITION_COLS),
            writer_properties=_WRITER,
            commit_properties=_commit(mark),
        )
        return True


def read_sync(path: str | os.PathLike[str]) -> Export:
    """Read a sync folder back as an :class:`~toolkit._egress.export.Export`.

    Args:
        path: The sync folder.

    Returns:
        The export.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     read_sync(create_tables(tmp))
    Export(kind='export', entries=0, codes=0)
    """
    entries, codes = _tables(Path(path))
    return Export.from_arrow(entries.to_pyarrow_table(), codes.to_pyarrow_table())
