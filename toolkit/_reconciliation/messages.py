"""The words of a reconciliation: each row's ``detail`` and ``errors``, and how a message
names an argument (Python or the command line)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

#: ``"python"`` (``date='Work Date'``) or ``"cli"`` (``--date 'Work Date'``)
_SPELLING: ContextVar[str] = ContextVar("toolkit_reconcile_spelling", default="python")


@contextmanager
def spoken_as_cli() -> Iterator[None]:
    """Within it, messages name options as flags and the tables as files (``toolkit reconcile``).

    >>> with spoken_as_cli():
    ...     option("date", "Work Date")
    "--date 'Work Date'"
    """
    token = _SPELLING.set("cli")
    try:
        yield
    finally:
        _SPELLING.reset(token)


def option(name: str, value: str) -> str:
    """An argument as typed: ``name='value'``, or ``--name value`` on the command line.

    >>> option("duration_unit", "hours")
    "duration_unit='hours'"
    """
    if _SPELLING.get() == "cli":
        return f"--{name.replace('_', '-')} {shlex.quote(value)}"
    return f"{name}={value!r}"


def advise(*pairs: tuple[str, str]) -> str:
    """What to add: ``pass a='x', b='y'`` in Python, ``add --a x --b y`` on the command line.

    >>> advise(("duration", "Hours"), ("duration_unit", "hours"))
    "pass duration='Hours', duration_unit='hours'"
    """
    cli = _SPELLING.get() == "cli"
    texts = [option(name, value) for name, value in pairs]
    return ("add " + " ".join(texts)) if cli else ("pass " + ", ".join(texts))


def table_name(table: str) -> str:
    """``"billing frame"`` in Python, ``"billing file"`` on the command line.

    >>> table_name("billing")
    'billing frame'
    """
    return f"{table} {'file' if _SPELLING.get() == 'cli' else 'frame'}"


def details(rows: pd.DataFrame, key: str) -> pd.Series:
    """The ``detail`` column: :func:`error_lists` joined, or ``"matched"`` (and a difference).

    >>> rows = pd.DataFrame({"key": ["e1"], "billingId": [None], "status": ["matched"],
    ...     "difference_seconds": pd.array([60], dtype="Int64"), "duration_differs": [False],
    ...     "date_differs": [False], "matter_differs": [False]})
    >>> details(rows, "_id").tolist()
    ['matched (duration within tolerance: +60 s)']
    """
    text = pd.Series(["; ".join(e) for e in error_lists(rows, key)], index=rows.index, dtype="str")
    matched = (rows["status"] == "matched").to_numpy()
    diff = rows.loc[matched, "difference_seconds"].fillna(0)
    note = "matched (duration within tolerance: " + _signed(diff) + " s)"
    text.loc[matched] = note.where(diff != 0, "matched")
    return text.astype("str")


def error_lists(rows: pd.DataFrame, key: str) -> list[list[str]]:
    """The failure reasons of each row: one string per difference, or why it has no partner.

    >>> rows = pd.DataFrame({"key": ["e2"], "billingId": [None], "status": ["missing_in_billing"],
    ...     "duration_differs": [None], "date_differs": [None], "matter_differs": [None]})
    >>> error_lists(rows, "_id")
    [['missing in billing: no billing record has _id e2']]
    """
    out: list[list[str]] = [[] for _ in range(len(rows))]
    failed = (rows["status"] != "matched").to_numpy()
    sub = rows.loc[failed]
    columns = [_missing_messages(sub, key), *_messages(sub)]
    texts = zip(*(c.tolist() for c in columns), strict=True)
    for position, messages in zip(np.flatnonzero(failed).tolist(), texts, strict=True):
        out[position] = [m for m in messages if isinstance(m, str)]
    return out


def _signed(diff: pd.Series) -> pd.Series:
    sign = np.where(diff.fillna(0).to_numpy() > 0, "+", "")
    return pd.Series(sign, index=diff.index, dtype="str") + diff.astype("str")


def _fmt_seconds(seconds: pd.Series) -> pd.Series:
    """``"1.50 h (5400 s)"``; ``"nothing"`` when missing."""
    hours = (seconds.astype("float64") / 3600).map(lambda h: f"{h:.2f}", na_action="ignore")
    return (hours.astype("str") + " h (" + seconds.astype("str") + " s)").fillna("nothing")


def _messages(rows: pd.DataFrame) -> list[pd.Series]:
    """The duration, date, matter and codes messages of the rows that differ (missing elsewhere)."""
    out = []
    for what in ("duration", "date", "matter", "codes"):
        msg = pd.Series(np.full(len(rows), np.nan, dtype=object), index=rows.index, dtype="str")
        flags = rows.get(f"{what}_differs", pd.Series(False, index=rows.index))
        mask = flags.fillna(False).to_numpy(dtype=bool)
        if mask.any():
            r = rows.loc[mask]
            if what == "duration":
                sides = [_fmt_seconds(r["exported_seconds"]), _fmt_seconds(r["billed_seconds"])]
            else:
                sides = [r[f"exported_{what}"], r[f"billed_{what}"]]
            if what == "date":
                sides = [side.dt.strftime("%Y-%m-%d") for side in sides]
            exported, billed = (side.astype("str").fillna("nothing") for side in sides)
            said = "codes (task/activity) differ" if what == "codes" else f"{what} differs"
            text = f"{said}: exported " + exported + ", billed " + billed
            if what == "duration":
                diff = r["difference_seconds"]
                text += ", difference " + (_signed(diff) + " s").where(diff.notna(), "unknown")
            msg.loc[mask] = text
        out.append(msg)
    return out


def _missing_messages(rows: pd.DataFrame, key: str) -> pd.Series:
    """Text of the rows missing in billing or only in billing (missing elsewhere)."""
    out = pd.Series(np.full(len(rows), np.nan, dtype=object), index=rows.index, dtype="str")
    missing = (rows["status"] == "missing_in_billing").to_numpy()
    text = f"missing in billing: no billing record has {key} " + rows.loc[missing, "key"]
    out.loc[missing] = text.fillna(  # no key: no text
        f"missing in billing: the entry has no {key}, so no billing record can refer to it"
    )
    only = (rows["status"] == "only_in_billing").to_numpy()
    sub = rows.loc[only]
    record = (" (billing record " + sub["billingId"] + ")").fillna("")
    text = f"only in billing: no exported entry has {key} " + sub["key"] + record
    out.loc[only] = text.fillna("only in billing: the billing record has no key" + record)
    return out
