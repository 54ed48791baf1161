"""Egress: HTTP -> pages (windows) -> flatten -> typed frames, or straight to Parquet.

``export_entries`` requests the v2 export for ``releasedAfter < t <= releasedOnOrBefore``,
optionally in consecutive sub-windows so that no single response is huge, and flattens each
answer's raw bytes with :mod:`toolkit.flatten` (straight into Arrow, no Python objects).
``export_to_parquet`` writes each window as it arrives, so its
memory stays that of one window whatever the range.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from toolkit.connection import Connection
from toolkit.errors import ConfigError
from toolkit.export import Export, split_windows

__all__ = ["export_entries", "export_to_parquet", "iter_export", "release_pending"]


def _iso(ts: pd.Timestamp) -> str:
    """An export bound as RFC 3339 in UTC with ``Z``: milliseconds, microseconds when it has them.

    A naive time is UTC; nanoseconds are truncated (the service keeps milliseconds).

    >>> _iso(pd.Timestamp("2026-03-01 10:30:00.123456789+01:00"))
    '2026-03-01T09:30:00.123456Z'
    >>> _iso(pd.Timestamp("2026-03-01"))
    '2026-03-01T00:00:00.000Z'
    """
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    text = ts.strftime("%Y-%m-%dT%H:%M:%S.%f")
    return (text[:-3] if text.endswith("000") else text) + "Z"


def iter_export(
    conn: Connection,
    released_after: Any,
    released_on_or_before: Any,
    *,
    window: str | None = None,
    progress: bool = False,
) -> Iterator[Export]:
    """Yield one flattened :class:`~toolkit.export.Export` per sub-window, in time order.

    Args:
        conn: the connection (a :class:`~toolkit.connection.Connection`).
        released_after: exclusive lower bound (datetime, Timestamp or ISO text; naive = UTC).
        released_on_or_before: inclusive upper bound.
        window: a pandas offset (``"1D"``, ``"7D"``, ``"MS"``...) or ``None`` for one request.
        progress: show a progress bar over the windows.

    Yields:
        One export per window.

    Example:
        >>> parts = iter_export(client, "2026-11-01", "2026-11-08", window="1D")  # doctest: +SKIP
        >>> [len(p) for p in parts]  # doctest: +SKIP
    """
    windows = split_windows(released_after, released_on_or_before, window)
    for start, end in tqdm(windows, desc="export", unit="window", disable=not progress):
        params = {"releasedAfter": _iso(start), "releasedOnOrBefore": _iso(end)}
        raw = conn.call("export", params=params, raw=True)
        yield Export.from_json(raw or b"[]", kind="export")


def export_entries(
    conn: Connection,
    released_after: Any,
    released_on_or_before: Any,
    *,
    window: str | None = None,
    progress: bool = False,
) -> Export:
    """Export the entries released in ``(released_after, released_on_or_before]`` as frames.

    Args:
        conn: the connection (a :class:`~toolkit.connection.Connection`).
        released_after: exclusive lower bound (datetime, Timestamp or ISO text; naive = UTC).
        released_on_or_before: inclusive upper bound.
        window: request consecutive sub-windows of this pandas offset and concatenate them
            without duplicates, e.g. ``"1D"``.
        progress: show a progress bar over the windows.

    Returns:
        An export with ``.entries``, ``.codes``, ``.codes_wide()``, ``.to_parquet()``...

    Raises:
        ConfigError: the bounds are unparseable or inverted.
        ApiError: the service refused the request.

    Example:
        >>> ex = client.export_entries("2026-11-01", "2026-11-21", window="7D")  # doctest: +SKIP
        >>> ex.entries[["_id", "initiative.client.externalId"]].head()  # doctest: +SKIP
    """
    parts = list(
        iter_export(conn, released_after, released_on_or_before, window=window, progress=progress)
    )
    return parts[0] if len(parts) == 1 else Export.concat(parts)


def export_to_parquet(
    conn: Connection,
    released_after: Any,
    released_on_or_before: Any,
    path: str | os.PathLike[str],
    *,
    window: str = "1D",
    partition_cols: Sequence[str] | None = None,
    overwrite: bool = False,
    progress: bool = False,
) -> dict[str, int]:
    """Stream an export window by window into a Parquet dataset (``entries/`` and ``codes/``).

    Only one window is in memory at a time, so a year of a large firm fits in a small process.

    Args:
        conn: the connection (a :class:`~toolkit.connection.Connection`).
        released_after: exclusive lower bound.
        released_on_or_before: inclusive upper bound.
        path: the dataset folder.
        window: sub-window size (a pandas offset).
        partition_cols: hive partition columns of the entries (default: as
            :meth:`Export.to_parquet`).
        overwrite: replace an existing dataset at ``path``; without it an existing one is an
            error (appending would silently double it).
        progress: show a progress bar.

    Returns:
        ``{"entries": n, "codes": m, "windows": k}``.

    Raises:
        ConfigError: ``path`` already holds a dataset and ``overwrite`` is false.

    Example:
        >>> client.export_to_parquet("2026-01-01", "2027-01-01", "out/export")  # doctest: +SKIP
        {'entries': 812345, 'codes': 2437035, 'windows': 365}
    """
    if not window:
        raise ConfigError("export_to_parquet needs a window")
    totals = {"entries": 0, "codes": 0, "windows": 0}
    root = Path(path)
    existing = [root / sub for sub in ("entries", "codes") if (root / sub).exists()]
    if existing and not overwrite:
        raise ConfigError(f"{root} already holds an export; pass overwrite=True to replace it")
    for folder in existing:
        shutil.rmtree(folder)
    root.mkdir(parents=True, exist_ok=True)
    for part in iter_export(
        conn, released_after, released_on_or_before, window=window, progress=progress
    ):
        totals["windows"] += 1
        if not len(part.entries):
            continue
        part.to_parquet(
            path,
            partition_cols=partition_cols,
            basename_template=f"part-{uuid.uuid4().hex}-{{i}}.parquet",
        )
        totals["entries"] += len(part.entries)
        totals["codes"] += len(part.codes)
    return totals


def release_pending(conn: Connection) -> Export:
    """Entries still pending, in the detailed form, as frames.

    Args:
        conn: the connection (a :class:`~toolkit.connection.Connection`).

    Returns:
        An export of kind ``pending`` (``initiativeProps.*`` columns, ``tags`` as a list,
        codes without ``assignedBy``).

    Example:
        >>> client.release_pending().entries["initiativeProps.tags"].head()  # doctest: +SKIP
    """
    raw = conn.call("release_pending", raw=True)
    return Export.from_json(raw or b"[]", kind="pending")
