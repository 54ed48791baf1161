"""Time windows: bounds read as UTC, ranges cut into windows, and the one ISO 8601 formatter."""

from __future__ import annotations

import datetime as dt
import re
import warnings
from typing import Literal

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset
from pandas.tseries.offsets import Day, Tick

from toolkit.errors import ConfigError, InputWarning

__all__ = [
    "MAX_WINDOWS",
    "TimeLike",
    "ambiguous_date_message",
    "iso",
    "release_window",
    "split_windows",
    "to_utc",
    "warn_bare_date",
]

#: What a time argument may be: ISO 8601 text, a datetime, a date, a Timestamp or a datetime64.
TimeLike = str | dt.datetime | dt.date | pd.Timestamp | np.datetime64
#: :func:`split_windows` refuses to cut a range into more windows than this.
MAX_WINDOWS = 100_000
#: The smallest step of the service's times (milliseconds).
RESOLUTION = pd.Timedelta(milliseconds=1)
#: a time of day in text: ``10:00``, or ``T10`` / `` 10`` after a date's digits
_TIME_OF_DAY = re.compile(r":|\d[T ]\d")


def iso(ts: pd.Timestamp, *, fraction: Literal["ms", "needed"] = "ms") -> str:
    """A time as RFC 3339 in UTC with ``Z`` (naive means UTC; nanoseconds truncated): milliseconds
    always (microseconds when it has them), or with ``fraction="needed"`` only the digits it needs.

    >>> iso(pd.Timestamp("2026-03-01")), iso(pd.Timestamp("2026-03-01"), fraction="needed")
    ('2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00Z')
    """
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    text = ts.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if fraction == "needed":
        return text.rstrip("0").rstrip(".") + "Z"
    return (text[:-3] if text.endswith("000") else text) + "Z"


def _ambiguous_date(text: str) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """``(day first, month first)`` readings of a non-ISO text date that differ, else ``None``."""
    try:
        pd.to_datetime(text, format="ISO8601")
        return None
    except (ValueError, TypeError, OverflowError):
        pass
    try:
        day_first = pd.to_datetime(text, format="mixed", dayfirst=True)
        month_first = pd.to_datetime(text, format="mixed", dayfirst=False)
    except (ValueError, TypeError, OverflowError):
        return None
    if pd.isna(day_first) or pd.isna(month_first) or day_first == month_first:
        return None
    return day_first, month_first


def ambiguous_date_message(
    where: str,
    text: str,
    day_first: pd.Timestamp,
    month_first: pd.Timestamp,
    remedy: str = "write it as ISO 8601 (YYYY-MM-DD)",
) -> str:
    """The one message refusing a date that reads differently day first and month first.

    >>> ambiguous_date_message("after", "1/2/26", *_ambiguous_date("1/2/26"), "no")[-35:]
    'so it is refused, never guessed; no'
    """
    return (
        f"{where}: {text!r} reads differently day first ({day_first:%Y-%m-%d}) and month "
        f"first ({month_first:%Y-%m-%d}), so it is refused, never guessed; {remedy}"
    )


def to_utc(value: TimeLike, name: str) -> pd.Timestamp:
    """Read a bound as a UTC timestamp (naive means UTC).

    >>> to_utc("2026-11-01T10:00:00+01:00", "since")
    Timestamp('2026-11-01 09:00:00+0000', tz='UTC')
    """
    if isinstance(value, str) and (readings := _ambiguous_date(value.strip())) is not None:
        raise ConfigError(ambiguous_date_message(name, value, *readings))
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{name}: cannot read {value!r} as a date-time ({exc})") from exc
    if pd.isna(ts):  # "NaT", or a missing value: pandas gives NaT, not a Timestamp
        raise ConfigError(f"{name}: {value!r} is not a date-time")
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _date_only(value: TimeLike) -> bool:
    """Whether a bound is a calendar date with no time of day (``"2026-11-22"``, a ``date``)."""
    if isinstance(value, dt.datetime | pd.Timestamp | np.datetime64):
        return False
    if isinstance(value, dt.date):
        return True
    if not isinstance(value, str) or _TIME_OF_DAY.search(value.strip()):
        return False
    try:
        ts = to_utc(value, "bound")
    except ConfigError:
        return False
    return bool(ts == ts.normalize())


def _end_of_day(value: TimeLike, name: str) -> pd.Timestamp:
    """An inclusive upper bound; a bare date is the end of that day (next midnight - ms)."""
    ts = to_utc(value, name)
    return ts + pd.Timedelta(days=1) - RESOLUTION if _date_only(value) else ts


def release_window(
    after: TimeLike | None,
    on_or_before: TimeLike | None,
    names: tuple[str, str] = ("after", "on_or_before"),
) -> tuple[pd.Timestamp | None, pd.Timestamp | None, str]:
    """Read a release window as the command line gives it: a bare upper date is the end of that
    day, with an :class:`~toolkit.errors.InputWarning` saying so.

    Returns:
        ``(after, on or before, the window in words)``, the bounds UTC timestamps or ``None``.

    >>> release_window("2026-11-16", "2026-11-22T12:00")[2]
    'released after 2026-11-16T00:00:00.000Z, on or before 2026-11-22T12:00:00.000Z'
    """
    low = to_utc(after, names[0]) if after is not None else None
    high = _end_of_day(on_or_before, names[1]) if on_or_before is not None else None
    if on_or_before is not None and high is not None and _date_only(on_or_before):
        warnings.warn(
            f"{names[1]} {str(on_or_before)!r} is a date: read as the end of that day, "
            f"{iso(high)}, so the entries released during it are included (give a time, "
            f"e.g. {high:%Y-%m-%d}T12:00Z, to end elsewhere)",
            InputWarning,
            stacklevel=2,
        )
    parts = [f"after {iso(low)}"] if low is not None else []
    parts += [f"on or before {iso(high)}"] if high is not None else []
    return low, high, "released " + ", ".join(parts)


def warn_bare_date(on_or_before: TimeLike, *, stacklevel: int = 2) -> None:
    """Warn that a bare-date upper bound given to Python is that day's first instant.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_bare_date("2026-11-22")
    >>> str(caught[0].message)[:44]
    "on_or_before '2026-11-22' is a date, read as"
    """
    if not _date_only(on_or_before):
        return
    start = to_utc(on_or_before, "on_or_before")
    warnings.warn(
        f"on_or_before {str(on_or_before)!r} is a date, read as its first instant "
        f"{iso(start, fraction='needed')}: entries released during {start:%Y-%m-%d} are left "
        f"out; to include that day pass on_or_before={iso(_end_of_day(on_or_before, ''))!r}",
        InputWarning,
        stacklevel=stacklevel,
    )


def split_windows(
    after: TimeLike, on_or_before: TimeLike, window: str | None = None
) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """Cut ``(after, on_or_before]`` into consecutive windows ``(a, b]``: sub-day offsets
    (``"6h"``) step from ``after``; day and calendar offsets (``"1D"``, ``"MS"``) put the inner
    edges at midnight UTC.

    Returns:
        ``[(a0, b0), (b0, b1), ...]`` of tz-aware UTC timestamps.

    >>> [b.strftime("%m-%d") for _, b in split_windows("2026-01-15", "2026-03-10T00:00", "MS")]
    ['02-01', '03-01', '03-10']
    """
    start = to_utc(after, "after")
    end = to_utc(on_or_before, "on_or_before")
    warn_bare_date(on_or_before, stacklevel=3)
    if start >= end:
        raise ConfigError(
            f"after ({start.isoformat()}) must be before on_or_before ({end.isoformat()}):"
            " the window (after, on_or_before] is empty"
        )
    if window is None:
        return [(start, end)]
    try:
        offset = to_offset(window)
    except (ValueError, TypeError) as exc:
        raise ConfigError(
            f"window {window!r} is not a pandas offset alias such as '1D', '7D', '6h' or 'MS'"
        ) from exc
    if offset.n <= 0:
        raise ConfigError(f"window {window!r} must be a positive length")
    # Day is a Tick in pandas 2 and a calendar offset in pandas 3: treat it as calendar in both.
    tick = isinstance(offset, Tick) and not isinstance(offset, Day)
    edges = [start]
    current = start
    while current < end:
        step = current + offset
        if not tick and step.normalize() > current:
            step = step.normalize()
        if step <= current:
            raise ConfigError(f"window {window!r} does not advance from {current.isoformat()}")
        current = min(step, end)
        edges.append(current)
        if len(edges) > MAX_WINDOWS + 1:
            raise ConfigError(
                f"window {window!r} cuts the range into more than {MAX_WINDOWS} windows"
            )
    return list(zip(edges[:-1], edges[1:], strict=True))
