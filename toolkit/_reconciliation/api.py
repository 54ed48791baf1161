"""The one entry point, :func:`reconcile`: exported entries against a billing extract."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pandas as pd

from toolkit._core.frames import FrameLike, as_pandas
from toolkit._core.windows import TimeLike, Window
from toolkit._reconciliation.classify import classify, join
from toolkit._reconciliation.inputs import (
    billing_columns,
    billing_frame,
    check_options,
    check_unique,
    detect_key,
    exported_frame,
    released_in,
    require_exported,
)
from toolkit._reconciliation.ledes import is_ledes, ledes_sides
from toolkit._reconciliation.result import LEDES_KEY, Reconciliation
from toolkit.errors import ConfigError

#: a LEDES line's id in the rows' ``billingId``: its invoice and its line item number
LEDES_ID = "INVOICE_NUMBER/LINE_ITEM_NUMBER"


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
    timekeepers: object = None,
    matters: str | Mapping[str, str] = "externalId",
    codes: FrameLike | None = None,
) -> Reconciliation:
    """Compare exported time entries with a billing extract, entry by entry.

    A pair with the same key is ``matched`` when its duration (within ``tolerance_seconds``),
    date and matter agree, else ``duration_differs`` or ``date_or_matter_differs``; an entry
    alone is ``missing_in_billing``, a record alone ``only_in_billing``. Only the values the
    billing frame holds are compared (an absent default column warns if a similar one exists).

    A LEDES invoice (:func:`~toolkit.read_ledes`) as ``billing`` is matched otherwise: its fee
    lines (``EXP/FEE/INV_ADJ_TYPE`` ``F``) pair with entries of the same timekeeper
    (``TIMEKEEPER_ID``), date (``LINE_ITEM_DATE``) and matter (``LAW_FIRM_MATTER_ID``), the
    longest with the longest where there are several; the hours (``LINE_ITEM_NUMBER_OF_UNITS``)
    are compared, and with ``codes`` the task and activity codes (``code_differs``). A line
    billed for less time than released is ``written`` ``"down"``, for more ``"up"``.

    Args:
        exported: exported entries (pandas, Polars or PyArrow) as flattened from the v2 export:
            ``_id``, ``userId`` and ``incrementDurationInSeconds``, ``workDate``,
            ``initiative.externalId`` for the values compared.
        billing: the billing extract (pandas, Polars or PyArrow), one row per record.
        key: the entry column the billing key refers to: ``"_id"`` (alias ``"entryId"``),
            ``"externalId"``, or ``"auto"``: the one the billing keys hit most.
        billing_key: billing key column; default the first of ``entryId``, ``_id``, ``externalId``.
        billing_id: billing record id column; default ``billingId`` or ``recordId`` if present.
        duration: billing duration column in ``duration_unit`` (default ``duration``).
        date: billing column of the date worked (default ``workDate``).
        matter: billing column of the matter, ``initiative.externalId`` (default ``matter``).
        duration_unit: ``"seconds"``, ``"minutes"`` or ``"hours"``.
        tolerance_seconds: largest duration difference still counted as equal.
        dayfirst: non-ISO text dates day first (``True``), month first (``False``), or ``None``:
            only text that reads the same both ways (an ambiguous date is refused).
        after: only the entries released after this time (by ``releasedAt``, else ``updatedAt``;
            a bare day: after its start).
        on_or_before: only the entries released on or before this time (a bare day: by its
            end, 23:59:59.999).
        decimal: the decimal mark of text durations in the billing frame, ``"."`` or ``","``.
        timekeepers: with a LEDES invoice, each user's timekeeper id: ``client.users(ids)``'s
            frame (the billing-system identity the service publishes) or a mapping of ``userId``
            to ``TIMEKEEPER_ID``.
        matters: with a LEDES invoice, what its ``LAW_FIRM_MATTER_ID`` holds: the initiative's
            ``"externalId"`` or ``"callSign"`` (column ``initiative.callSign``), or a mapping of
            the initiative's ``externalId`` to it.
        codes: with a LEDES invoice, the export's codes (``export.codes``) to compare the task
            and activity codes with; ``None``: codes not compared.

    Returns:
        A :class:`Reconciliation`: the entries in their order, then the billing-only records.

    Example:
        >>> exported = pd.DataFrame({"_id": ["e1", "e2"], "externalId": ["B-1", "B-2"],
        ...     "userId": ["u1", "u2"], "workDate": ["2024-03-01", "2024-03-01"],
        ...     "incrementDurationInSeconds": [3600, 1800],
        ...     "initiative.externalId": ["M-1", "M-1"]})
        >>> billing = pd.DataFrame({"externalId": ["B-1", "B-2", "B-3"],
        ...     "hours": [1.0, 0.6, 2.0], "workDate": ["2024-03-01"] * 3,
        ...     "matter": ["M-1", "M-1", "M-9"]})
        >>> rec = reconcile(exported, billing, duration="hours", duration_unit="hours")
        >>> rec.key, rec.rows["status"].tolist()
        ('externalId', ['matched', 'duration_differs', 'only_in_billing'])
    """
    exported, billing = _table(exported, "exported"), _table(billing, "billing")
    if is_ledes(billing):
        span = Window.of(after, on_or_before)
        check_options("auto", duration_unit, tolerance_seconds, dayfirst, decimal)
        coded = None if codes is None else _table(codes, "codes")
        # the entries with the invoice's fee lines
        exported, window = released_in(exported, span)
        require_exported(exported, ("duration", "date", "matter"), "_id")
        exp, bil = ledes_sides(
            exported_frame(exported, None), exported, billing, timekeepers, matters, coded
        )
        check_unique("exported", "_id", exp["entryId"])
        check_unique("billing", LEDES_ID, bil["billingId"])
        unknown = bil.loc[bil["unknown_timekeeper"], ["billingId", "tk"]].dropna()
        parts = [f.drop(columns=["tk", "day", "matter"]) for f in (exp, bil)]
        compared: tuple[str, ...] = ("duration", "codes") if coded is not None else ("duration",)
        rows = classify(join(*parts), float(tolerance_seconds), LEDES_KEY, compared)
        tk = rows["billingId"].map(dict(unknown.itertuples(index=False))).astype("str")
        rows["detail"] += ("; timekeeper " + tk + " is no exported entry's user").fillna("")
        bkey = "TIMEKEEPER_ID/LINE_ITEM_DATE/LAW_FIRM_MATTER_ID"
        return Reconciliation(rows, LEDES_KEY, bkey, LEDES_ID, tolerance_seconds, compared, window)
    key_choice = check_options(key, duration_unit, tolerance_seconds, dayfirst, decimal)
    exported, window = released_in(exported, Window.of(after, on_or_before))
    given = {"duration": duration, "date": date, "matter": matter}
    bkey, bid, columns = billing_columns(
        billing, key_choice, billing_key, billing_id, given, duration_unit
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
    return Reconciliation(rows, key_choice, bkey, bid, tolerance_seconds, compared, window)


def _table(frame: object, name: str) -> pd.DataFrame:
    """:func:`~toolkit._core.frames.as_pandas`, refusing what is not a table with a TypeError."""
    try:
        return as_pandas(frame, name)
    except ConfigError:
        raise TypeError(
            f"{name} must be a pandas DataFrame, got {type(frame).__name__} "
            "(a Polars or PyArrow table works too)"
        ) from None
