"""What one sync did: :class:`SyncReport`, as text and as a small table in Jupyter."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from toolkit._core.windows import iso, to_utc


@dataclass(frozen=True)
class SyncReport:
    """What one sync did: the range ``(since, until]``, its counts and the new watermark.

    ``lag`` is the lag that set ``until`` (``None`` when ``until`` was given).

    >>> SyncReport("out", None, None, 0, 0, 0, 0, 0, None).rows_written
    0
    """

    path: str
    since: pd.Timestamp | None
    until: pd.Timestamp | None
    windows: int
    inserted: int
    updated: int
    unchanged: int
    codes_written: int
    watermark: pd.Timestamp | None
    lag: pd.Timedelta | None = None

    @property
    def rows_written(self) -> int:
        """Entries inserted or updated."""
        return self.inserted + self.updated

    def __str__(self) -> str:
        """A one-paragraph summary."""
        mark = "none" if self.watermark is None else short_iso(self.watermark)
        if self.since is None or self.until is None:
            text = f"sync {self.path}: nothing to do; watermark {mark}"
        else:
            text = (
                f"sync {self.path}: ({short_iso(self.since)}, {short_iso(self.until)}] in"
                f" {self.windows} window(s): {self.inserted:,} inserted, {self.updated:,} updated,"
                f" {self.unchanged:,} unchanged, {self.codes_written:,} codes written;"
                f" watermark {mark}"
            )
        held = self.held_back()
        return text if held is None else f"{text}; {held}"

    def held_back(self) -> str | None:
        """What the lag held back, said when a sync with a default ``until`` found nothing new.

        Returns:
            A sentence, or ``None`` when the sync wrote rows or ``until`` was given.

        >>> print(SyncReport("out", None, None, 0, 0, 0, 0, 0, None).held_back())
        None
        """
        upto = self.until if self.until is not None else self.watermark
        if self.lag is None or self.rows_written or upto is None:
            return None
        clock = to_utc(upto, "until").strftime("%Y-%m-%d %H:%M")
        lag = _lag_text(self.lag)
        return (
            f"nothing new up to {clock} UTC; entries released in the last {lag} are held back"
            f" by lag={lag} and come with the next sync."
        )

    def _repr_html_(self) -> str:
        """A small HTML table of the report's fields, for Jupyter."""
        rows = {"path": self.path}
        for name in ("since", "until", "watermark"):
            value = getattr(self, name)
            rows[name] = "" if value is None else short_iso(value)
        for name in ("windows", "inserted", "updated", "unchanged", "codes_written"):
            rows[name] = f"{getattr(self, name):,}"
        rows["lag"] = "" if self.lag is None else _lag_text(self.lag)
        if held := self.held_back():
            rows["note"] = held
        return pd.DataFrame({"SyncReport": rows}).to_html(justify="left")


def short_iso(ts: pd.Timestamp) -> str:
    """Times in messages: only the fraction digits needed."""
    return iso(ts, fraction="needed")


def _lag_text(lag: pd.Timedelta) -> str:
    """A lag as a user writes it: ``10min``, ``90s``, ``2h``."""
    seconds = int(lag.total_seconds())
    for size, unit in ((3600, "h"), (60, "min")):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{lag.total_seconds():g}s"
