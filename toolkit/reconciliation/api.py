"""The one entry point, :func:`reconcile`: exported entries against a billing extract.

The steps are modules of their own: :mod:`~toolkit.reconciliation.inputs` checks the arguments
and reads both sides into typed frames, :mod:`~toolkit.reconciliation.classify` joins and
classes them (with the words of :mod:`~toolkit.reconciliation.messages`), and
:mod:`~toolkit.reconciliation.result` holds the :class:`Reconciliation` it returns.

>>> reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}),
...           pd.DataFrame({"entryId": ["e1"]})).rows["status"].tolist()
['matched']
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from toolkit.core.frames import FrameLike, as_pandas
from toolkit.core.windows import TimeLike
from toolkit.errors import ConfigError
from toolkit.reconciliation.classify import classify, join
from toolkit.reconciliation.inputs import (
    billing_columns,
    billing_frame,
    check_options,
    check_unique,
    detect_key,
    exported_frame,
    released_in,
    require_exported,
)
from toolkit.reconciliation.result import Reconciliation

__all__ = ["reconcile"]


def reconcile(
    exported: FrameLike,
    billing: FrameLike,
    *,
    key: Literal["auto", "_id", "entryId", "externalId"] = "auto",
    billing_key: str | None = None,
    billing_id: str | None = None,
    duration: str | None = None,
    date: str | None = None,
    matter: str | None = None,
    duration_unit: Literal["seconds", "minutes", "hours"] = "seconds",
    tolerance_seconds: float = 0,
    dayfirst: bool | None = None,
    after: TimeLike | None = None,
    on_or_before: TimeLike | None = None,
    decimal: Literal[".", ","] = ".",
) -> Reconciliation:
    """Compare exported time entries with a billing extract, entry by entry.

    Each exported entry is paired with the billing record that has the same key. A pair is
    ``matched`` when its duration (within ``tolerance_seconds``), date and matter agree;
    otherwise ``duration_differs`` (which wins when the date or matter differs too; the
    ``*_differs`` columns show every difference) or ``date_or_matter_differs``. Entries with no
    record are ``missing_in_billing`` (so is an entry whose ``externalId`` is missing when
    joining on ``externalId``); records with no entry are ``only_in_billing``.

    Only the values the billing frame holds are compared: with ``duration``, ``date`` or
    ``matter`` left out, its default column (``duration``, ``workDate``, ``matter``) is
    compared when the billing frame has it, and otherwise that value is not compared (an
    :class:`~toolkit.errors.InputWarning` names a similar column if there is one). A value
    not compared never makes a difference; ``Reconciliation.compared`` lists the ones that
    were.

    Args:
        exported: exported entries (pandas, Polars or PyArrow; results are pandas), one row
            per entry, as flattened from the v2 export:
            ``_id``, ``userId``, and for each value compared ``incrementDurationInSeconds``,
            ``workDate`` (datetime, date or text), ``initiative.externalId``; optionally
            ``externalId`` and ``initiative.client.externalId``. Other columns are ignored.
        billing: the billing extract (pandas, Polars or PyArrow), one row per billing record.
        key: the entry column the billing key refers to: ``"_id"`` (alias ``"entryId"``),
            ``"externalId"``, or ``"auto"``: the one whose values the billing keys hit most
            (on a tie, ``externalId`` if the billing key column is named so, else ``_id``).
        billing_key: the billing column holding the key; by default the first of ``entryId``,
            ``_id``, ``externalId`` present (``externalId`` first when ``key="externalId"``).
        billing_id: the billing record id column, sent as ``externalId`` when acknowledging
            success; by default ``billingId`` or ``recordId`` if present, else none.
        duration: billing column with the duration, in ``duration_unit`` (a timedelta column
            is read as is). Durations are rounded to whole seconds. Default: ``duration``
            if present, else durations are not compared.
        date: billing column with the date worked (datetime, date or text; a time of day is
            ignored). Default: ``workDate`` if present, else dates are not compared.
        matter: billing column with the matter, compared with ``initiative.externalId``.
            Default: ``matter`` if present, else matters are not compared.
        duration_unit: ``"seconds"``, ``"minutes"`` or ``"hours"``.
        tolerance_seconds: largest absolute duration difference still counted as equal.
        dayfirst: how text dates that are not ISO 8601 are read, on either side: ``True``
            day first (``03/04/2026`` is 3 April), ``False`` month first (4 March). ``None``
            (default): ISO 8601 text is read as such, and other text only when it reads the
            same both ways; a value that does not (``03/04/2026``) is refused.
        after: compare only the entries released after this time (exclusive; ISO 8601 text,
            a datetime or a date; naive means UTC), by their ``releasedAt`` or, in the
            export's columns, ``updatedAt``. A weekly billing extract against a synced table
            of many weeks then leaves the other weeks' entries out instead of calling them
            ``missing_in_billing``; the summary says how many were compared.
        on_or_before: compare only the entries released on or before this time (inclusive).
            ``updatedAt`` is moved by an acknowledgement, so a window over entries read after
            acknowledging loses them: to select by release time itself, reconcile the
            entries of ``client.export_entries(after, on_or_before)`` (what ``toolkit
            reconcile --after/--on-or-before`` does).
        decimal: the decimal mark of text durations in the billing frame: ``"."``, or ``","``
            for ``"1,5"`` hours (a CSV with ``;`` separators, from a European spreadsheet).

    Returns:
        A :class:`Reconciliation`; its ``rows`` list exported entries in their order, then the
        billing-only records in theirs.

    Raises:
        MissingColumnError: a needed column is absent, or a column named by ``duration``,
            ``date`` or ``matter`` (the message names the closest one).
        DuplicateKeyError: a key occurs twice in the billing frame (or in the export).
        ValidationError: a date or a duration cannot be read, or a text date reads
            differently day first and month first and ``dayfirst`` is not given (the message
            names the column and the value).
        ConfigError: a bad ``key``, ``duration_unit``, ``tolerance_seconds`` or ``dayfirst``;
            a bad ``decimal``; a bad or ambiguous ``after`` / ``on_or_before``, or a window
            over entries with no release time.
        TypeError: ``exported`` or ``billing`` is not a table (pandas, Polars, PyArrow).

    Example:
        >>> exported = pd.DataFrame({"_id": ["e1", "e2"], "externalId": ["B-1", "B-2"],
        ...     "userId": ["u1", "u2"], "workDate": ["2024-03-01", "2024-03-01"],
        ...     "incrementDurationInSeconds": [3600, 1800],
        ...     "initiative.externalId": ["M-1", "M-1"]})
        >>> billing = pd.DataFrame({"externalId": ["B-1", "B-2", "B-3"],
        ...     "hours": [1.0, 0.6, 2.0], "workDate": ["2024-03-01"] * 3,
        ...     "matter": ["M-1", "M-1", "M-9"]})
        >>> rec = reconcile(exported, billing, duration="hours", duration_unit="hours")
        >>> rec.key
        'externalId'
        >>> rec.rows["status"].tolist()
        ['matched', 'duration_differs', 'only_in_billing']
        >>> rec.rows.loc[1, "detail"]
        'duration differs: exported 0.50 h (1800 s), billed 0.60 h (2160 s), difference +360 s'

        A billing extract of the id and the duration alone compares durations only:

        >>> only = reconcile(exported, pd.DataFrame({"entryId": ["e1"], "duration": [3600]}))
        >>> only.compared, only.rows["status"].tolist()
        (('duration',), ['matched', 'missing_in_billing'])
    """
    exported = _table(exported, "exported")
    billing = _table(billing, "billing")
    key_choice = check_options(key, duration_unit, tolerance_seconds, dayfirst, decimal)
    exported, window = released_in(exported, after, on_or_before)
    bkey, bid, columns = billing_columns(
        billing,
        key_choice,
        billing_key=billing_key,
        billing_id=billing_id,
        duration=duration,
        date=date,
        matter=matter,
        duration_unit=duration_unit,
    )
    compared = tuple(name for name, column in columns.items() if column is not None)
    require_exported(exported, compared, key_choice)

    first = None if dayfirst is None else bool(dayfirst)
    exp = exported_frame(exported, first)
    bil = billing_frame(billing, bkey, bid, columns, duration_unit, first, decimal)
    if key_choice == "auto":
        key_choice = detect_key(exp, bil, bkey)
    exp["key"] = exp["entryId"] if key_choice == "_id" else exp["externalId"]

    check_unique("exported", "_id", exp["entryId"])
    if key_choice == "externalId":
        check_unique("exported", "externalId", exp["key"])
    check_unique("billing", bkey, bil["key"])

    rows = classify(join(exp, bil), float(tolerance_seconds), key_choice, compared)
    return Reconciliation(
        rows=rows,
        key=key_choice,
        billing_key=bkey,
        billing_id=bid,
        tolerance_seconds=tolerance_seconds,
        compared=compared,
        window=window,
    )


def _table(frame: object, name: str) -> pd.DataFrame:
    """:func:`~toolkit.core.frames.as_pandas`, refusing what is not a table with a TypeError."""
    try:
        return as_pandas(frame, name)
    except ConfigError:
        raise TypeError(
            f"{name} must be a pandas DataFrame, got {type(frame).__name__} "
            "(a Polars or PyArrow table works too)"
        ) from None
