"""Time windows: the one release window, cut into windows, and the one ISO 8601 formatter."""

from __future__ import annotations

import datetime as dt
import functools
import re
import sys
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, ParamSpec, TypeVar

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset
from pandas.tseries.offsets import Day, Tick

from toolkit.errors import ConfigError

P = ParamSpec("P")
R = TypeVar("R")

#: What a time argument may be: ISO 8601 text, a datetime, a date, a Timestamp or a datetime64.
TimeLike = str | dt.datetime | dt.date | pd.Timestamp | np.datetime64
#: :meth:`Window.split` refuses to cut a range into more windows than this.
MAX_WINDOWS = 100_000
#: The smallest step of the service's times (milliseconds).
RESOLUTION = pd.Timedelta(milliseconds=1)
#: the names of a window's ends kept one release -> the one name (using one warns): keywords
#: of ``export_entries``, ``export_to_parquet`` and ``sync``, flags of ``toolkit sync``, a key
#: of ``firms.toml``
RENAMED: dict[str, str] = {"released_after": "after", "released_on_or_before": "on_or_before"}
RENAMED |= {"since": "after", "until": "on_or_before", "sync_since": "after"}
RENAMED |= {"--since": "--after", "--until": "--on-or-before"}
#: a time of day in text: ``10:00``, or ``T10`` / `` 10`` after a date's digits
_TIME_OF_DAY = re.compile(r":|\d[T ]\d")
#: the package's folder: a warning about a caller's input points at the first line outside it
_PACKAGE = str(Path(__file__).resolve().parents[1]) + "/"


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
    with suppress(ValueError, TypeError, OverflowError):
        pd.to_datetime(text, format="ISO8601")
        return None
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


def to_utc(value: TimeLike, name: str, *, end: bool = False) -> pd.Timestamp:
    """Read a time as a UTC timestamp (naive means UTC); ambiguous text is refused.

    A bare day (text without a time of day, or a ``date``) is its first instant, or with
    ``end=True`` its last (the next midnight less :data:`RESOLUTION`), as pandas reads a day.

    >>> to_utc("2026-11-01T10:00:00+01:00", "after")
    Timestamp('2026-11-01 09:00:00+0000', tz='UTC')
    >>> to_utc("2026-11-22", "on_or_before", end=True)
    Timestamp('2026-11-22 23:59:59.999000+0000', tz='UTC')
    """
    if isinstance(value, str) and (readings := _ambiguous_date(value.strip())) is not None:
        raise ConfigError(ambiguous_date_message(name, value, *readings))
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{name}: cannot read {value!r} as a date-time ({exc})") from exc
    if pd.isna(ts):  # "NaT", or a missing value: pandas gives NaT, not a Timestamp
        raise ConfigError(f"{name}: {value!r} is not a date-time")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    day = isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    if isinstance(value, str):
        day = not _TIME_OF_DAY.search(value) and ts == ts.normalize()
    return ts + pd.Timedelta(days=1) - RESOLUTION if end and day else ts


def outside() -> int:
    """The ``stacklevel`` that points a warning raised by this function's caller at the first
    line outside the toolkit: the caller's own line, however deep the toolkit's calls go.

    >>> outside() >= 1
    True
    """
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    return level


def renamed(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` taking the keywords of :data:`RENAMED` one release: each warns
    (``DeprecationWarning``, at the caller's line) and is passed under its one name.

    >>> def f(after=None): return after
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed(f)(since="2026-11-01"), str(caught[0].message)
    ('2026-11-01', 'since= is deprecated and goes in the next release; use after=')
    """

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        for old in [k for k in kwargs if k in RENAMED]:
            new = RENAMED[old]
            if new in kwargs:
                raise TypeError(f"{fn.__name__}() got {old}= and {new}=: give {new}= only")
            message = f"{old}= is deprecated and goes in the next release; use {new}="
            warnings.warn(message, DeprecationWarning, stacklevel=outside())
            kwargs[new] = kwargs.pop(old)
        return fn(*args, **kwargs)

    return call


@dataclass(frozen=True)
class Window:
    """The one release window ``(after, on_or_before]``: UTC timestamps, ``None`` an open end.

    :meth:`of` reads what a caller gives, as pandas reads a day: a bare day (``"2026-11-27"``,
    a ``date``) is its first instant as ``after`` and its last (23:59:59.999) as
    ``on_or_before``; a time is that instant; text that reads differently day first and month
    first is refused. Every entry point (the command line, the client, ``firms.toml``) reads
    its window with it once and passes it on.

    >>> print(Window.of("2026-11-20", "2026-11-27"))
    released after 2026-11-20T00:00:00.000Z, on or before 2026-11-27T23:59:59.999Z
    """

    after: pd.Timestamp | None = None
    on_or_before: pd.Timestamp | None = None

    @classmethod
    def of(
        cls,
        after: TimeLike | None = None,
        on_or_before: TimeLike | None = None,
        names: tuple[str, str] = ("after", "on_or_before"),
    ) -> Window:
        """Read a window from a caller's bounds, named ``names`` in its messages.

        Returns:
            The window; an empty or reversed one is refused (:class:`~toolkit.errors.ConfigError`).

        >>> Window.of("2026-11-20T12:00", None).after
        Timestamp('2026-11-20 12:00:00+0000', tz='UTC')
        """
        low = to_utc(after, names[0]) if after is not None else None
        high = to_utc(on_or_before, names[1], end=True) if on_or_before is not None else None
        if low is not None and high is not None and low >= high:
            raise ConfigError(
                f"{names[0]} ({iso(low, fraction='needed')}) must be before {names[1]} "
                f"({iso(high, fraction='needed')}): the window ({names[0]}, {names[1]}] is empty"
            )
        return cls(low, high)

    def __str__(self) -> str:
        parts = [f"after {iso(self.after)}"] if self.after is not None else []
        parts += [f"on or before {iso(self.on_or_before)}"] if self.on_or_before is not None else []
        return "released " + (", ".join(parts) or "at any time")

    def split(self, window: str | None = None) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
        """Cut the window into consecutive windows ``(a, b]``: sub-day offsets (``"6h"``) step
        from ``after``; day and calendar offsets (``"1D"``, ``"MS"``) put the inner edges at
        midnight UTC.

        Returns:
            ``[(a0, b0), (b0, b1), ...]`` of tz-aware UTC timestamps.

        >>> span = Window.of("2026-01-15", "2026-03-10T00:00")
        >>> [b.strftime("%m-%d") for _, b in span.split("MS")]
        ['02-01', '03-01', '03-10']
        """
        start, end = self.after, self.on_or_before
        assert start is not None and end is not None, "only a window with both ends is cut"
        Window.of(start, end)  # an empty or reversed window is refused
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
        edges, current = [start], start
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
