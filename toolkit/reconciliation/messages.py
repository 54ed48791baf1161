"""The words of a reconciliation: each row's ``detail`` and the ``errors`` an entry is
acknowledged as failed with.

Both read the classified rows (``status``, the ``*_differs`` flags and the values on each side)
and say, per row, what differs: ``"duration differs: exported 0.50 h (1800 s), billed 0.60 h
(2160 s), difference +360 s"``, ``"missing in billing: no billing record has _id e2"``.

>>> _fmt_seconds(pd.Series([5400, None], dtype="Int64")).tolist()
['1.50 h (5400 s)', 'nothing']
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

__all__ = ["advise", "details", "error_lists", "option", "spoken_as_cli", "table_name"]

#: How a message names an argument: ``"python"`` (``date='Work Date'``) or ``"cli"``
#: (``--date 'Work Date'``); the command line sets it with :func:`spoken_as_cli`.
_SPELLING: ContextVar[str] = ContextVar("toolkit_reconcile_spelling", default="python")


@contextmanager
def spoken_as_cli() -> Iterator[None]:
    """Within it, messages name options as flags (``--date 'Work Date'``) and the tables as
    files: what ``toolkit reconcile`` prints.

    Example:
        >>> with spoken_as_cli():
        ...     option("date", "Work Date")
        "--date 'Work Date'"
        >>> option("date", "Work Date")
        "date='Work Date'"
    """
    token = _SPELLING.set("cli")
    try:
        yield
    finally:
        _SPELLING.reset(token)


def option(name: str, value: str) -> str:
    """An argument and its value as the reader types them: ``name='value'`` in Python,
    ``--name value`` on the command line (:func:`spoken_as_cli`).

    Args:
        name: the Python argument's name (``duration_unit``).
        value: its value.

    Returns:
        The text.

    Example:
        >>> option("duration_unit", "hours")
        "duration_unit='hours'"
    """
    if _SPELLING.get() == "cli":
        return f"--{name.replace('_', '-')} {shlex.quote(value)}"
    return f"{name}={value!r}"


def advise(*pairs: tuple[str, str]) -> str:
    """What to add: ``pass a='x', b='y'`` in Python, ``add --a x --b y`` on the command line.

    Args:
        pairs: ``(argument, value)`` pairs.

    Returns:
        The text.

    Example:
        >>> advise(("duration", "Hours"), ("duration_unit", "hours"))
        "pass duration='Hours', duration_unit='hours'"
        >>> with spoken_as_cli():
        ...     advise(("duration", "Hours"), ("duration_unit", "hours"))
        'add --duration Hours --duration-unit hours'
    """
    cli = _SPELLING.get() == "cli"
    return ("add " if cli else "pass ") + (" " if cli else ", ").join(
        option(name, value) for name, value in pairs
    )


def table_name(table: str) -> str:
    """``"billing frame"`` in Python, ``"billing file"`` on the command line.

    Args:
        table: ``"exported"`` or ``"billing"``.

    Returns:
        The words.

    Example:
        >>> table_name("billing")
        'billing frame'
    """
    return f"{table} {'file' if _SPELLING.get() == 'cli' else 'frame'}"


def details(rows: pd.DataFrame, key: str) -> pd.Series:
    """The ``detail`` column: what each row's status means, in words.

    Args:
        rows: classified rows (``status``, ``key``, ``billingId``, the value columns of both
            sides, ``difference_seconds`` and the ``*_differs`` flags).
        key: the entry column joined on, ``"_id"`` or ``"externalId"``, named in the text.

    Returns:
        One string per row: the differences joined with ``"; "``, why a row is missing on one
        side, or ``"matched"`` (with the difference when within the tolerance).

    Example:
        >>> rows = pd.DataFrame({"key": ["e1", "e2"], "billingId": [None, None],
        ...     "status": ["matched", "missing_in_billing"],
        ...     "difference_seconds": pd.array([60, None], dtype="Int64"),
        ...     "duration_differs": pd.array([False, None], dtype="boolean"),
        ...     "date_differs": pd.array([False, None], dtype="boolean"),
        ...     "matter_differs": pd.array([False, None], dtype="boolean")})
        >>> details(rows, "_id").tolist()
        ['matched (duration within tolerance: +60 s)', 'missing in billing: no billing record has _id e2']
    """  # noqa: E501 - a doctest's output is one line
    dur_msg, date_msg, matter_msg = _messages(rows)
    text = _missing_messages(rows, key)
    parts = pd.concat([dur_msg, date_msg, matter_msg], axis=1)
    differ = parts.notna().any(axis=1).to_numpy()
    if differ.any():
        sub = parts.loc[differ]
        joined = sub.iloc[:, 0].fillna("")
        for i in (1, 2):
            nxt = sub.iloc[:, i]
            sep = np.where((joined != "").to_numpy() & nxt.notna().to_numpy(), "; ", "")
            joined = joined + sep + nxt.fillna("")
        text.loc[differ] = joined
    matched = (rows["status"] == "matched").to_numpy()
    if matched.any():
        diff = rows.loc[matched, "difference_seconds"].fillna(0)
        within = diff != 0
        sign = pd.Series(np.where(diff.to_numpy() > 0, "+", ""), index=diff.index, dtype="str")
        note = "matched (duration within tolerance: " + sign + diff.astype("str") + " s)"
        text.loc[matched] = note.where(within, "matched")
    return text.astype("str")


def error_lists(rows: pd.DataFrame, key: str) -> list[list[str]]:
    """The failure reasons of each row as a list of strings (empty when matched).

    Args:
        rows: classified rows, as for :func:`details`.
        key: the entry column joined on, named in the text.

    Returns:
        One list per row, in the rows' order: one string per difference, or the reason the
        row has no partner.

    Example:
        >>> rows = pd.DataFrame({"key": ["e1", "e2"], "billingId": [None, None],
        ...     "status": ["matched", "missing_in_billing"],
        ...     "duration_differs": pd.array([False, None], dtype="boolean"),
        ...     "date_differs": pd.array([False, None], dtype="boolean"),
        ...     "matter_differs": pd.array([False, None], dtype="boolean")})
        >>> error_lists(rows, "_id")
        [[], ['missing in billing: no billing record has _id e2']]
    """
    out: list[list[str]] = [[] for _ in range(len(rows))]
    failed = (rows["status"] != "matched").to_numpy()
    if not failed.any():
        return out
    sub = rows.loc[failed]
    columns = [_missing_messages(sub, key), *_messages(sub)]
    texts = zip(*(c.tolist() for c in columns), strict=True)
    for position, messages in zip(np.flatnonzero(failed).tolist(), texts, strict=True):
        out[position] = [m for m in messages if isinstance(m, str)]
    return out


def _fmt_seconds(seconds: pd.Series) -> pd.Series:
    """``"1.50 h (5400 s)"``; ``"nothing"`` when missing."""
    hours = seconds.astype("float64") / 3600
    hours_text = hours.map(lambda h: f"{h:.2f}", na_action="ignore").astype("str")
    text = hours_text + " h (" + seconds.astype("str") + " s)"
    return text.fillna("nothing").astype("str")


def _fmt_missing(values: pd.Series) -> pd.Series:
    return values.astype("str").fillna("nothing")


def _messages(rows: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """The duration, date and matter messages of the rows that differ (missing elsewhere)."""
    dur = rows["duration_differs"].fillna(False).to_numpy(dtype=bool)
    date = rows["date_differs"].fillna(False).to_numpy(dtype=bool)
    matter = rows["matter_differs"].fillna(False).to_numpy(dtype=bool)
    na = pd.Series(np.full(len(rows), np.nan, dtype=object), index=rows.index, dtype="str")
    dur_msg, date_msg, matter_msg = na.copy(), na.copy(), na.copy()
    if dur.any():
        r = rows.loc[dur]
        diff = r["difference_seconds"]
        sign = pd.Series(
            np.where(diff.fillna(0).to_numpy() > 0, "+", ""), index=r.index, dtype="str"
        )
        diff_text = (sign + diff.astype("str")).where(diff.notna(), "unknown")
        dur_msg.loc[dur] = (
            "duration differs: exported "
            + _fmt_seconds(r["exported_seconds"])
            + ", billed "
            + _fmt_seconds(r["billed_seconds"])
            + ", difference "
            + diff_text.astype("str")
            + np.where(diff_text == "unknown", "", " s")
        )
    if date.any():
        r = rows.loc[date]
        date_msg.loc[date] = (
            "date differs: exported "
            + _fmt_missing(r["exported_date"].dt.strftime("%Y-%m-%d"))
            + ", billed "
            + _fmt_missing(r["billed_date"].dt.strftime("%Y-%m-%d"))
        )
    if matter.any():
        r = rows.loc[matter]
        matter_msg.loc[matter] = (
            "matter differs: exported "
            + _fmt_missing(r["exported_matter"])
            + ", billed "
            + _fmt_missing(r["billed_matter"])
        )
    return dur_msg, date_msg, matter_msg


def _missing_messages(rows: pd.DataFrame, key: str) -> pd.Series:
    """Text of the rows missing in billing or only in billing (missing elsewhere)."""
    out = pd.Series(np.full(len(rows), np.nan, dtype=object), index=rows.index, dtype="str")
    status = rows["status"]
    missing = (status == "missing_in_billing").to_numpy()
    if missing.any():
        keys = rows.loc[missing, "key"]
        out.loc[missing] = (f"missing in billing: no billing record has {key} " + keys).where(
            keys.notna(),
            f"missing in billing: the entry has no {key}, so no billing record can refer to it",
        )
    only = (status == "only_in_billing").to_numpy()
    if only.any():
        sub = rows.loc[only]
        record = (" (billing record " + sub["billingId"] + ")").fillna("")
        text = f"only in billing: no exported entry has {key} " + sub["key"] + record
        out.loc[only] = text.where(
            sub["key"].notna(), "only in billing: the billing record has no key" + record
        )
    return out
