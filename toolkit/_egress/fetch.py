"""Egress: HTTP -> windows -> flatten -> typed frames, or straight to Parquet.

The v2 export is requested window by window (``releasedAfter < t <= releasedOnOrBefore``);
each answer's bytes are flattened into Arrow. A field the spec does not list, or an unknown
``assignedBy``, is kept and warned about once (:class:`~toolkit.errors.InputWarning`).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import nullcontext

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from toolkit._core.connection import Connection
from toolkit._core.windows import TimeLike, Window, iso, renamed
from toolkit._egress.export import ROWS_PER_GROUP, UNKNOWN_FIELD_WINDOWS, Export, claim_target
from toolkit._egress.flatten import UNKNOWN_FIELDS
from toolkit._egress.schemas import ASSIGNED_BY
from toolkit.errors import ApiError, ConfigError, FlattenError, InputWarning

log = logging.getLogger("toolkit._egress.fetch")

#: statuses a service may refuse a window with as too large (entries or days)
TOO_LARGE = (400, 413, 422)
#: the smallest window a refused one is split into
SMALLEST = pd.Timedelta(seconds=1)


def fetch_window(
    conn: Connection,
    start: pd.Timestamp,
    end: pd.Timestamp,
    *,
    gate: threading.Lock | None = None,
) -> Export:
    """Request one window ``(start, end]`` of the v2 export and flatten it, without warning.

    A window refused as too large (:data:`TOO_LARGE`) is split in halves down to one second.
    ``gate``, held while a request is in flight, lets fetches in several threads send one
    request at a time, the next as soon as an answer is in, while that answer is flattened.

    Returns:
        The window's export (``entries.attrs``: ``windows``, ``split``, unknown fields).

    Example:
        >>> a, b = pd.Timestamp("2026-11-01", tz="UTC"), pd.Timestamp("2026-11-02", tz="UTC")
        >>> fetch_window(client.connection, a, b).entries.attrs["split"]
        0
    """
    parts: list[Export] = []
    todo = [(start, end)]
    while todo:
        lo, hi = todo.pop()
        params = {"releasedAfter": iso(lo), "releasedOnOrBefore": iso(hi)}
        try:
            with gate or nullcontext():
                raw = conn.call("export", params=params, raw=True)
        except ApiError as exc:
            mid = (lo + (hi - lo) / 2).floor("ms")  # down to one second, on a millisecond
            if exc.status not in TOO_LARGE or hi - lo <= SMALLEST or not lo < mid < hi:
                raise
            log.info("export window %s..%s refused (%s): split in two", *params.values(), exc)
            todo += [(mid, hi), (lo, mid)]  # the earlier half first: parts stay in time order
            continue
        where = (params["releasedAfter"], params["releasedOnOrBefore"])
        if not raw:  # no body is not "no entries" (that is []): the window is not read as empty
            raise FlattenError(
                f"the export of window {iso(lo)} .. {iso(hi)} came back with an empty body, not "
                "a JSON array of entries: nothing was read for it (ask for it again later)"
            )
        try:
            part = Export.from_json(raw, kind="export")
        except FlattenError as exc:  # name the window: the same request shows the answer again
            raise FlattenError(f"{exc} (export window {iso(lo)} .. {iso(hi)})") from exc
        part._attrs.update(windows=[where], split=0)
        if fields := part._attrs.get(UNKNOWN_FIELDS):
            part._attrs[UNKNOWN_FIELD_WINDOWS] = dict.fromkeys(fields, where)
        parts.append(part)
    result = Export.concat(parts)
    result._attrs["split"] = len(parts) - 1  # each split made one window two
    return result


def warn_unknown_fields(export: Export, seen: set[str], *, kept: bool = True) -> None:
    """Warn once per unknown field not in ``seen`` (extended), and once about an odd assignedBy.

    ``kept=False`` says the field is left out (a sync) rather than kept as a column. The export
    is a fetched one (kind ``export``): a code's field ``codes.x`` is the codes' column ``x``.

    >>> warn_unknown_fields(Export.empty(), set())  # no unknown field: no warning
    """
    attrs = export._attrs
    for name, entry in attrs.get(UNKNOWN_FIELDS, {}).items():
        if name in seen:
            continue
        seen.add(name)
        after, on_or_before = attrs.get(UNKNOWN_FIELD_WINDOWS, {}).get(name, ("?", "?"))
        column = name.removeprefix("codes.")
        table = "entries" if column == name else "codes"
        names = export._table(table).column_names
        columns = ", ".join(c for c in names if c == column or c.startswith(column + "."))
        done = (
            f"kept as Export.{table} column(s) {columns}"
            if kept
            else "left out of the Delta tables, whose schema stays as it is"
            " (export_entries and export_to_parquet keep it as a column)"
        )
        warnings.warn(
            f"the export answer holds {name!r}, a field the spec's time-entry table does not"
            f" list (first on entry {entry!r}, window {after} .. {on_or_before}): {done}",
            InputWarning,
            stacklevel=3,
        )
    codes = export._table("codes")
    if "assignedBy" in seen or "assignedBy" not in codes.column_names:
        return
    known = pc.is_in(codes["assignedBy"], value_set=pa.array(ASSIGNED_BY))
    odd = pc.and_(pc.is_valid(codes["assignedBy"]), pc.invert(known))
    if pc.any(odd).as_py():
        seen.add("assignedBy")
        at = pc.index(odd, True).as_py()
        warnings.warn(
            f"the export answer holds assignedBy {codes['assignedBy'][at].as_py()!r} (first on"
            f" entry {codes['entryId'][at].as_py()!r}), none of {', '.join(ASSIGNED_BY)}: kept as"
            " it is (this export warns about it once)",
            InputWarning,
            stacklevel=3,
        )


def iter_export(
    conn: Connection,
    span: Window,
    *,
    window: str | None = None,
    progress: bool = True,
) -> Iterator[Export]:
    """Yield one flattened :class:`~toolkit._egress.export.Export` per sub-window, in time order.

    ``window`` is a pandas offset (``"1D"``, ``"MS"``...); ``None`` makes one request.

    Example:
        >>> span = Window.of("2026-11-01", "2026-11-03T00:00")
        >>> [len(p) for p in iter_export(client.connection, span, window="1D")]
        [9, 13]
    """
    windows = span.split(window)
    warned: set[str] = set()
    for start, end in tqdm(
        windows, desc="export", unit="window", disable=not progress or len(windows) <= 1
    ):
        part = fetch_window(conn, start, end)
        warn_unknown_fields(part, warned)
        yield part


@renamed
def export_entries(
    conn: Connection,
    after: TimeLike,
    on_or_before: TimeLike,
    *,
    window: str | None = None,
    progress: bool = True,
) -> Export:
    """Export the entries released in ``(after, on_or_before]``.

    A bare day is read as pandas reads it: its first instant as ``after``, its last
    (23:59:59.999) as ``on_or_before``, so ``("2026-11-20", "2026-11-27")`` holds every entry
    released from 20 to 27 November, both days whole, as ``df.loc["2026-11-20":"2026-11-27"]``
    would (:class:`~toolkit._core.windows.Window`).

    Args:
        conn: the connection.
        after: exclusive lower bound (datetime, Timestamp, date or ISO text; naive = UTC).
        on_or_before: inclusive upper bound (a bare day: its end).
        window: sub-windows of this pandas offset (e.g. ``"1D"``); ``None``: one request.
        progress: a progress bar over the windows.

    Returns:
        An :class:`~toolkit._egress.export.Export` (``entries.attrs``: ``windows``, ``split``).

    Example:
        >>> len(client.export_entries("2026-11-01", "2026-11-21", window="7D"))
        226
    """
    span = Window.of(after, on_or_before)
    return Export.concat(iter_export(conn, span, window=window, progress=progress))


@renamed
def export_to_parquet(
    conn: Connection,
    after: TimeLike,
    on_or_before: TimeLike,
    path: str | os.PathLike[str],
    *,
    window: str = "1D",
    partition_cols: Sequence[str] | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> dict[str, int]:
    """Stream an export window by window into a Parquet dataset (``entries/`` and ``codes/``).

    Args:
        conn: the connection.
        after: exclusive lower bound (a bare day: its start).
        on_or_before: inclusive upper bound (a bare day: its end).
        path: the dataset folder; read ``path/entries`` and ``path/codes``, not ``path``.
        window: sub-window size (a pandas offset).
        partition_cols: hive partition columns of the entries (as :meth:`Export.to_parquet`).
        overwrite: replace an earlier export at ``path`` (else data there is refused).
        progress: a progress bar over the windows.

    Returns:
        ``{"entries", "codes", "windows", "split"}`` counts.

    Example:
        >>> client.export_to_parquet("2026-11-01", "2026-11-21", tmp / "export")
        {'entries': 226, 'codes': 338, 'windows': 21, 'split': 0}
    """
    if not window:
        raise ConfigError("export_to_parquet needs a window")
    span = Window.of(after, on_or_before)
    span.split(window)  # bad input: nothing written
    totals = {"entries": 0, "codes": 0, "windows": 0, "split": 0}
    root = claim_target(path, overwrite=overwrite)
    root.mkdir(parents=True, exist_ok=True)
    buffer: list[Export] = []
    held = 0  # entries in buffer, counted as they come: summing the buffer anew is quadratic

    def flush() -> None:
        if buffer:
            Export.concat(buffer).to_parquet(
                root,
                partition_cols=partition_cols,
                basename_template=f"part-{uuid.uuid4().hex}-{{i}}.parquet",
            )
            buffer.clear()

    for part in iter_export(conn, span, window=window, progress=progress):
        totals["windows"] += 1
        totals["split"] += int(part._attrs.get("split", 0))
        if not len(part):
            continue
        buffer.append(part)
        held += len(part)
        totals["entries"] += len(part)
        totals["codes"] += part._table("codes").num_rows
        if held >= ROWS_PER_GROUP:
            flush()
            held = 0
    flush()
    if not totals["entries"]:
        Export.empty().to_parquet(root, partition_cols=partition_cols, overwrite=True)
    return totals


def release_pending(conn: Connection) -> Export:
    """Entries still pending release, in the detailed form.

    Args:
        conn: the connection.

    Returns:
        An :class:`~toolkit._egress.export.Export` of kind ``pending``.

    Example:
        >>> client.release_pending().kind
        'pending'
    """
    raw = conn.call("release_pending", raw=True)
    if not raw:  # the documents publish an array: no body is not "nothing pending"
        raise FlattenError(
            "release-pending came back with an empty body, not a JSON array of entries: nothing"
            " was read (ask for it again later)"
        )
    return Export.from_json(raw, kind="pending")
