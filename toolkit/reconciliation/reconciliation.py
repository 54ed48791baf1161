"""Reconcile exported time entries with a billing system's extract.

The billing side reads released entries (the v2 export), writes them into its own records and
then acknowledges each entry as released successfully or failed. Before acknowledging, an analyst
compares what was exported with what the billing system holds: :func:`reconcile` joins the two
frames on the entry's id (``_id``) or its ``externalId`` and classes every entry and every billing
record as one of :data:`STATUSES`.

Data flow::

    exported entries frame ─┐
                            ├─ reconcile() ─> Reconciliation.rows ─┬─> .summary / .by_user() / ...
    billing extract frame ──┘                                      └─> .to_acknowledge()
                                                                         └─> client.acknowledge()

Only the value columns present on both sides are compared: a billing extract of the entry id
and the duration alone reconciles durations (``Reconciliation.compared`` says which). Text dates
are read as ISO 8601, or day first / month first when ``dayfirst`` says so; a text date that
reads differently either way (``03/04/2026``) is refused, never guessed.

Errors (all ``ValueError`` subclasses from :mod:`toolkit.errors`, never a raw pandas traceback)::

    ConfigError                 a bad argument (key, unit, tolerance, include)
    ValidationError             a value that cannot be read as a date or a number, or an
                                ambiguous date without ``dayfirst`` (.failure_cases)
     ├── MissingColumnError     a column is absent; names the closest existing column
     └── DuplicateKeyError      a key occurs more than once on one side; lists the keys
"""

from __future__ import annotations

import difflib
import html
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.core.failures import FAILURE_COLUMNS as _SHARED_FAILURE_COLUMNS
from toolkit.errors import (
    ConfigError,
    DuplicateKeyError,
    InputWarning,
    MissingColumnError,
    ValidationError,
)

__all__ = [
    "ACKNOWLEDGE_COLUMNS",
    "COMPARISONS",
    "FAILED_STATUSES",
    "ROW_COLUMNS",
    "STATUSES",
    "DuplicateKeyError",
    "MissingColumnError",
    "Reconciliation",
    "reconcile",
]

#: Status of a reconciled row, in the order of the ``status`` categorical.
STATUSES: tuple[str, ...] = (
    "matched",
    "missing_in_billing",
    "only_in_billing",
    "duration_differs",
    "date_or_matter_differs",
)

#: Statuses of an exported entry that is acknowledged as failed.
FAILED_STATUSES: tuple[str, ...] = (
    "missing_in_billing",
    "duration_differs",
    "date_or_matter_differs",
)

_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES), ordered=False)

#: The value comparisons :func:`reconcile` can make, in order.
COMPARISONS: tuple[str, ...] = ("duration", "date", "matter")

_EXPORTED_REQUIRED = ("_id", "userId")
#: comparison -> (reconcile() argument, default billing column, exported column)
_VALUE_COLUMNS = {
    "duration": ("duration", "duration", "incrementDurationInSeconds"),
    "date": ("date", "workDate", "workDate"),
    "matter": ("matter", "matter", "initiative.externalId"),
}
_BILLING_KEY_CANDIDATES = ("entryId", "_id", "externalId")
_BILLING_ID_CANDIDATES = ("billingId", "recordId")
_UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600}
_KEY_ALIASES = {"_id": "_id", "entryId": "_id", "externalId": "externalId"}

_FAILURE_COLUMNS = list(_SHARED_FAILURE_COLUMNS)  # the one failure-frame shape

#: Columns of :attr:`Reconciliation.rows`, in order.
ROW_COLUMNS: tuple[str, ...] = (
    "key",
    "entryId",
    "externalId",
    "billingId",
    "userId",
    "initiative.externalId",
    "initiative.client.externalId",
    "exported_seconds",
    "billed_seconds",
    "difference_seconds",
    "exported_date",
    "billed_date",
    "exported_matter",
    "billed_matter",
    "status",
    "duration_differs",
    "date_differs",
    "matter_differs",
    "differences",
    "detail",
)

#: Columns of :meth:`Reconciliation.to_acknowledge`, as ``client.acknowledge`` expects them.
ACKNOWLEDGE_COLUMNS: tuple[str, ...] = ("userId", "entryId", "outcome", "externalId", "errors")


@dataclass(frozen=True, eq=False, repr=False)
class Reconciliation:
    """The result of :func:`reconcile`: one row per entry and per unmatched billing record.

    Attributes:
        rows: one row per exported entry, plus one per billing record that matches no entry.
            Columns: ``key`` (the join value), ``entryId`` (the entry's ``_id``), ``externalId``
            (the entry's), ``billingId`` (the billing record id, when given), ``userId``,
            ``initiative.externalId``, ``initiative.client.externalId``, ``exported_seconds``,
            ``billed_seconds``, ``difference_seconds`` (billed minus exported), ``exported_date``,
            ``billed_date``, ``exported_matter``, ``billed_matter``, ``status`` (categorical of
            :data:`STATUSES`), ``duration_differs``, ``date_differs``, ``matter_differs``
            (nullable booleans, missing when one side is absent), ``differences`` (list of
            ``"duration"``, ``"date"``, ``"matter"``) and ``detail`` (human-readable text).
            A value not compared has its billed column and its ``*_differs`` flag missing.
        key: the entry column joined on, ``"_id"`` or ``"externalId"``.
        billing_key: the billing column joined on.
        billing_id: the billing record id column, or ``None``.
        tolerance_seconds: the duration tolerance used.
        compared: the values compared, a subset of :data:`COMPARISONS` in its order (a value
            whose billing column is absent is not compared, so it never differs).

    Example:
        >>> exported = pd.DataFrame({"_id": ["e1"], "externalId": ["B-1"], "userId": ["u1"],
        ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [3600],
        ...     "initiative.externalId": ["M-1"]})
        >>> billing = pd.DataFrame({"entryId": ["e1"], "duration": [3600],
        ...     "workDate": ["2024-03-01"], "matter": ["M-1"]})
        >>> rec = reconcile(exported, billing)
        >>> int(rec.summary["matched"])
        1
    """

    rows: pd.DataFrame
    key: str
    billing_key: str
    billing_id: str | None = None
    tolerance_seconds: float = 0
    compared: tuple[str, ...] = COMPARISONS

    @property
    def summary(self) -> pd.Series:
        """Number of rows per status, every status present (zero when absent).

        Returns:
            An integer Series indexed by status, named ``count``.

        Example:
            >>> rec = reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
            ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [60],
            ...     "initiative.externalId": ["M-1"]}),
            ...     pd.DataFrame({"entryId": ["e2"], "duration": [60],
            ...     "workDate": ["2024-03-01"], "matter": ["M-1"]}))
            >>> rec.summary.to_dict()["missing_in_billing"]
            1
        """
        counts = self.rows["status"].value_counts(sort=False).reindex(list(STATUSES), fill_value=0)
        counts.index = pd.Index(list(STATUSES), name="status")
        return counts.rename("count").astype("int64")

    def by_user(self) -> pd.DataFrame:
        """Counts per status and hours exported versus billed, per user.

        Billing records that match no entry have no user; they are counted on a row whose
        ``userId`` is missing.

        Returns:
            A frame indexed by ``userId`` with one count column per status, ``entries``
            (exported entries), ``hours_exported``, ``hours_billed`` and ``hours_difference``
            (billed minus exported).

        Example:
            >>> rec = reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
            ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [5400],
            ...     "initiative.externalId": ["M-1"]}),
            ...     pd.DataFrame({"entryId": ["e1"], "duration": [3600],
            ...     "workDate": ["2024-03-01"], "matter": ["M-1"]}))
            >>> row = rec.by_user().loc["u1"]
            >>> row[["duration_differs", "hours_exported", "hours_billed"]].tolist()
            [1.0, 1.5, 1.0]
        """
        return _summarise(self.rows, self.rows["userId"], "userId")

    def by_initiative(self) -> pd.DataFrame:
        """Counts per status and hours exported versus billed, per initiative.

        A row is grouped by its entry's ``initiative.externalId``; a billing record that matches
        no entry is grouped by its own matter. Hours billed under a different matter stay with
        the entry's initiative (the row is then ``date_or_matter_differs``).

        Returns:
            A frame indexed by ``initiative.externalId`` with ``initiative.client.externalId``,
            one count column per status, ``entries``, ``hours_exported``, ``hours_billed`` and
            ``hours_difference``.

        Example:
            >>> rec = reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
            ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [3600],
            ...     "initiative.externalId": ["M-1"]}),
            ...     pd.DataFrame({"entryId": ["e1", "e9"], "duration": [3600, 1800],
            ...     "workDate": ["2024-03-01", "2024-03-01"], "matter": ["M-1", "M-2"]}))
            >>> table = rec.by_initiative()
            >>> table["only_in_billing"].to_dict()
            {'M-1': 0, 'M-2': 1}
            >>> table["hours_billed"].to_dict()
            {'M-1': 1.0, 'M-2': 0.5}
        """
        group = self.rows["initiative.externalId"].fillna(self.rows["billed_matter"])
        out = _summarise(self.rows, group, "initiative.externalId")
        clients = (
            self.rows.groupby(group.rename("initiative.externalId"), dropna=False, sort=False)[
                "initiative.client.externalId"
            ]
            .first()
            .reindex(out.index)
        )
        out.insert(0, "initiative.client.externalId", clients)
        return out

    def to_acknowledge(self, include: Iterable[str] = ("matched", "failed")) -> pd.DataFrame:
        """The rows to pass to ``client.acknowledge``: one per exported entry.

        Matched entries are ``succeeded``; entries missing in billing or differing from their
        billing record are ``failed``, with the reasons in ``errors``. Billing records with no
        entry are never included: there is nothing to acknowledge.

        Args:
            include: which rows to return: ``"matched"`` and/or ``"failed"``, or individual
                failure statuses (``"missing_in_billing"``, ``"duration_differs"``,
                ``"date_or_matter_differs"``).

        Returns:
            A frame with exactly the columns ``userId``, ``entryId``, ``outcome``
            (``succeeded`` or ``failed``), ``externalId`` (for succeeded: the billing record id
            when a billing id column was given, else the entry's ``externalId``, else the join
            key; missing for failed, since release-failed carries only errors) and ``errors``
            (a list of strings; empty for succeeded).

        Raises:
            ConfigError: an unknown value in ``include``, or ``only_in_billing``.

        Example:
            >>> rec = reconcile(pd.DataFrame({"_id": ["e1", "e2"], "userId": ["u1", "u1"],
            ...     "workDate": ["2024-03-01", "2024-03-01"],
            ...     "incrementDurationInSeconds": [3600, 60],
            ...     "initiative.externalId": ["M-1", "M-1"]}),
            ...     pd.DataFrame({"entryId": ["e1"], "billingId": ["B-77"], "duration": [3600],
            ...     "workDate": ["2024-03-01"], "matter": ["M-1"]}))
            >>> rec.to_acknowledge()[["entryId", "outcome", "externalId"]].values.tolist()
            [['e1', 'succeeded', 'B-77'], ['e2', 'failed', nan]]
        """
        statuses = _acknowledge_statuses(include)
        rows = self.rows
        keep = rows["status"].isin(statuses).to_numpy()
        sel = rows.loc[keep]
        succeeded = (sel["status"] == "matched").to_numpy()
        ext = sel["billingId"].fillna(sel["externalId"]).fillna(sel["key"])
        ext = ext.where(succeeded)
        errors = _error_lists(sel, self.key)
        out = pd.DataFrame(
            {
                "userId": sel["userId"].to_numpy(),
                "entryId": sel["entryId"].to_numpy(),
                "outcome": np.where(succeeded, "succeeded", "failed"),
                "externalId": ext.to_numpy(),
                "errors": errors,
            },
            columns=list(ACKNOWLEDGE_COLUMNS),
        )
        for col in ("userId", "entryId", "outcome", "externalId"):
            out[col] = out[col].astype("str")
        return out

    def __repr__(self) -> str:
        counts = self.summary
        width = max(len(s) for s in STATUSES)
        lines = [
            f"Reconciliation(key={self.key!r}, billing_key={self.billing_key!r}, "
            f"billing_id={self.billing_id!r}, tolerance_seconds={self.tolerance_seconds!r}, "
            f"{len(self.rows):,} rows)"
        ]
        lines += [f"  {status:<{width}}  {counts[status]:>10,}" for status in STATUSES]
        exported = self.rows["exported_seconds"].sum() / 3600
        billed = self.rows["billed_seconds"].sum() / 3600
        lines.append(f"  hours exported {exported:,.2f}, billed {billed:,.2f}")
        lines.append(f"  {self._compared_text()}")
        return "\n".join(lines)

    def _compared_text(self) -> str:
        """``"compared duration, date, matter"``, naming what was not compared."""
        shown = ", ".join(self.compared) if self.compared else "nothing but the keys"
        skipped = [c for c in COMPARISONS if c not in self.compared]
        rest = f" (not compared: {', '.join(skipped)})" if skipped else ""
        return f"compared {shown}{rest}"

    def _repr_html_(self) -> str:
        """Jupyter's view: a table of the classes with their counts, and the hours.

        >>> rec = reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
        ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [60],
        ...     "initiative.externalId": ["M-1"]}),
        ...     pd.DataFrame({"entryId": ["e1"], "duration": [60],
        ...     "workDate": ["2024-03-01"], "matter": ["M-1"]}))
        >>> "<table" in rec._repr_html_() and "matched" in rec._repr_html_()
        True
        """
        table = self.summary.to_frame()
        table["share"] = (table["count"] / max(len(self.rows), 1)).map("{:.1%}".format)
        exported = self.rows["exported_seconds"].sum() / 3600
        billed = self.rows["billed_seconds"].sum() / 3600
        head = (
            f"<p><b>Reconciliation</b> of {len(self.rows):,} rows on "
            f"<code>{html.escape(self.key)}</code> = "
            f"<code>{html.escape(self.billing_key)}</code>; hours exported {exported:,.2f}, "
            f"billed {billed:,.2f}; {html.escape(self._compared_text())}</p>"
        )
        return head + table.to_html()


def reconcile(
    exported: pd.DataFrame,
    billing: pd.DataFrame,
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
        exported: exported entries, one row per entry, as flattened from the v2 export:
            ``_id``, ``userId``, and for each value compared ``incrementDurationInSeconds``,
            ``workDate`` (datetime, date or text), ``initiative.externalId``; optionally
            ``externalId`` and ``initiative.client.externalId``. Other columns are ignored.
        billing: the billing extract, one row per billing record.
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
        ConfigError: a bad ``key``, ``duration_unit``, ``tolerance_seconds`` or ``dayfirst``.
        TypeError: ``exported`` or ``billing`` is not a DataFrame.

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
    _check_frame("exported", exported)
    _check_frame("billing", billing)
    key_choice = _check_key(key)
    if duration_unit not in _UNIT_SECONDS:
        raise ConfigError(
            f"duration_unit must be one of {sorted(_UNIT_SECONDS)}, got {duration_unit!r}"
        )
    if (
        isinstance(tolerance_seconds, bool)
        or not isinstance(tolerance_seconds, int | float | np.number)
        or not np.isfinite(tolerance_seconds)
        or tolerance_seconds < 0
    ):
        raise ConfigError(
            f"tolerance_seconds must be a non-negative number, got {tolerance_seconds!r}"
        )

    if dayfirst is not None and not isinstance(dayfirst, bool | np.bool_):
        raise ConfigError(f"dayfirst must be True, False or None, got {dayfirst!r}")

    bkey = _billing_key_column(billing, billing_key, key_choice)
    bid = _billing_id_column(billing, billing_id)
    given = {"duration": duration, "date": date, "matter": matter}
    columns: dict[str, str | None] = {}
    for name in COMPARISONS:  # a loop, not a comprehension: the warning names the caller
        columns[name] = _value_column(billing, name, given[name], exclude=(bkey, bid))
    _require("billing", billing, [bkey, *(c for c in columns.values() if c is not None)])
    compared = tuple(name for name in COMPARISONS if columns[name] is not None)
    _require(
        "exported",
        exported,
        [*_EXPORTED_REQUIRED, *(_VALUE_COLUMNS[name][2] for name in compared)],
    )
    if key_choice == "externalId":
        _require("exported", exported, ["externalId"])

    first = None if dayfirst is None else bool(dayfirst)
    exp = _exported_frame(exported, first)
    bil = _billing_frame(billing, bkey, bid, columns, _UNIT_SECONDS[duration_unit], first)
    if key_choice == "auto":
        key_choice = _detect_key(exp, bil, bkey)
    exp["key"] = exp["entryId"] if key_choice == "_id" else exp["externalId"]

    _check_unique("exported", "_id", exp["entryId"])
    if key_choice == "externalId":
        _check_unique("exported", "externalId", exp["key"])
    _check_unique("billing", bkey, bil["key"])

    rows = _join(exp, bil)
    rows = _classify(rows, float(tolerance_seconds), key_choice, compared)
    return Reconciliation(
        rows=rows,
        key=key_choice,
        billing_key=bkey,
        billing_id=bid,
        tolerance_seconds=tolerance_seconds,
        compared=compared,
    )


# --- checking the input ------------------------------------------------------------------------


def _closest(name: str, names: Sequence[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


def _check_frame(name: str, frame: object) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")


def _check_key(key: str) -> str:
    if key == "auto":
        return key
    if key not in _KEY_ALIASES:
        raise ConfigError(f"key must be 'auto', '_id', 'entryId' or 'externalId', got {key!r}")
    return _KEY_ALIASES[key]


def _require(table: str, frame: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = list(dict.fromkeys(c for c in columns if c not in frame.columns))
    if missing:
        raise MissingColumnError(table, missing, frame.columns)


def _billing_key_column(billing: pd.DataFrame, billing_key: str | None, key: str) -> str:
    if billing_key is not None:
        _require("billing", billing, [billing_key])
        return billing_key
    order = list(_BILLING_KEY_CANDIDATES)
    if key == "externalId":
        order = ["externalId", "entryId", "_id"]
    for name in order:
        if name in billing.columns:
            return name
    raise MissingColumnError("billing", [order[0]], billing.columns)


def _value_column(
    billing: pd.DataFrame, name: str, given: str | None, exclude: Iterable[str | None]
) -> str | None:
    """The billing column compared for ``name``: the one given, else the default if present.

    A default that is absent means "not compared"; when a similar column exists (``Duration``,
    ``durationHours``), an :class:`InputWarning` says how to compare it.
    """
    if given is not None:
        return given
    argument, default, _ = _VALUE_COLUMNS[name]
    if default in billing.columns:
        return default
    names = [str(c) for c in billing.columns if c not in set(exclude)]
    near = _closest(default, names)
    if near is not None:
        what = {"duration": "durations", "date": "dates", "matter": "matters"}[name]
        warnings.warn(
            f"billing frame has no {default!r} column, so {what} are not compared; to compare "
            f"them with its column {near!r}, pass {argument}={near!r}",
            InputWarning,
            stacklevel=3,
        )
    return None


def _billing_id_column(billing: pd.DataFrame, billing_id: str | None) -> str | None:
    if billing_id is not None:
        _require("billing", billing, [billing_id])
        return billing_id
    return next((c for c in _BILLING_ID_CANDIDATES if c in billing.columns), None)


def _check_unique(table: str, column: str, keys: pd.Series) -> None:
    present = keys.notna()
    dup = keys.duplicated(keep=False) & present
    if dup.any():
        rows = keys[dup]
        raise DuplicateKeyError(table, column, rows.drop_duplicates().tolist(), rows)


# --- normalising the two sides -----------------------------------------------------------------


def _as_str(values: pd.Series) -> pd.Series:
    """Identifiers as strings; integral floats (a spreadsheet's ``1234.0``) as ``"1234"``."""
    if pd.api.types.is_float_dtype(values.dtype):
        finite = values.dropna()
        if len(finite) and bool((finite == np.floor(finite)).all()):
            values = values.astype("Int64")
    elif pd.api.types.is_bool_dtype(values.dtype):
        values = values.astype("object")
    return values.astype("str")


def _as_date(
    values: pd.Series, table: str, column: str, dayfirst: bool | None = None
) -> pd.Series:
    """Dates as ``datetime64[ns]`` at midnight; wall-clock date of tz-aware values.

    Text is read as ISO 8601; other text day first or month first as ``dayfirst`` says, or,
    when it is ``None``, only if it reads the same both ways. Blank text is missing.
    """
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_localize(None)
    if pd.api.types.is_datetime64_dtype(values.dtype):
        return values.dt.normalize().astype("datetime64[ns]")
    items = values.tolist()
    is_text = np.fromiter((isinstance(v, str) for v in items), dtype=bool, count=len(items))
    # positions, not labels: the caller's index may repeat
    parsed = np.full(len(items), np.datetime64("NaT"), dtype="datetime64[ns]")
    other = ~is_text & values.notna().to_numpy()
    if other.any():
        chosen = values.iloc[np.flatnonzero(other)].reset_index(drop=True)
        parsed[other] = _naive(chosen, errors="coerce", format="mixed").to_numpy()
    missing = ~is_text & ~other
    if is_text.any():
        text = values.iloc[np.flatnonzero(is_text)].astype("str").str.strip()
        text = pd.Series(text.to_numpy(), dtype="str")
        blank = (text == "").to_numpy()
        missing[np.flatnonzero(is_text)[blank]] = True
        uniques = pd.Series(text[~blank].unique(), dtype="str")
        rows = pd.Series(np.asarray(items, dtype=object), index=values.index)[is_text][~blank]
        dates = _text_dates(uniques, table, column, dayfirst, rows)
        codes = pd.Index(uniques).get_indexer(text[~blank])
        parsed[np.flatnonzero(is_text)[~blank]] = dates.to_numpy()[codes]
    bad = np.isnat(parsed) & ~missing
    if bad.any():
        _raise_values(table, column, values[bad], "date", "not a date")
    out = pd.Series(parsed, index=values.index, dtype="datetime64[ns]")
    return out.dt.normalize()


def _naive(values: pd.Series, **options: object) -> pd.Series:
    """``pd.to_datetime`` as naive wall-clock times; value by value if zones are mixed."""
    try:
        parsed = pd.to_datetime(values, **options)
    except (TypeError, ValueError, OverflowError):
        parsed = pd.Series([_naive_one(v, options) for v in values.tolist()], index=values.index)
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = parsed.dt.tz_localize(None)
    return parsed.astype("datetime64[ns]")


def _naive_one(value: object, options: dict) -> pd.Timestamp:
    try:
        stamp = pd.to_datetime(value, **options)
    except (TypeError, ValueError, OverflowError):
        try:
            stamp = pd.to_datetime(str(value), **options)
        except (TypeError, ValueError, OverflowError):
            return pd.NaT
    if stamp is pd.NaT or pd.isna(stamp):
        return pd.NaT
    return stamp.tz_localize(None) if stamp.tzinfo is not None else stamp


def _text_dates(
    texts: pd.Series, table: str, column: str, dayfirst: bool | None, rows: pd.Series
) -> pd.Series:
    """Distinct date texts parsed (NaT when unreadable); ambiguous ones refused."""
    parsed = _naive(texts, format="ISO8601", errors="coerce")
    rest = parsed.isna().to_numpy()
    if not rest.any():
        return parsed
    other = texts[rest]
    if dayfirst is not None:
        parsed[rest] = _naive(other, format="mixed", dayfirst=dayfirst, errors="coerce")
        return parsed
    month_first = _naive(other, format="mixed", dayfirst=False, errors="coerce")
    day_first = _naive(other, format="mixed", dayfirst=True, errors="coerce")
    ambiguous = (month_first.notna() & day_first.notna() & (month_first != day_first)).to_numpy()
    if ambiguous.any():
        example = other[ambiguous].iloc[0]
        first = ambiguous.nonzero()[0][0]
        read_d, read_m = day_first.iloc[first], month_first.iloc[first]
        hit = rows.astype("str").str.strip().isin(other[ambiguous])
        _raise_values(
            table,
            column,
            rows[hit],
            "date",
            "ambiguous dates",
            f"{table} column {column!r}: {int(hit.sum())} date(s) read differently day first "
            f"and month first, for example {example!r} ({read_d:%Y-%m-%d} day first, "
            f"{read_m:%Y-%m-%d} month first); pass dayfirst=True or dayfirst=False "
            f"(toolkit reconcile --dayfirst or --no-dayfirst), or write the dates as ISO 8601 "
            f"(YYYY-MM-DD)",
        )
    parsed[rest] = month_first.fillna(day_first).to_numpy()
    return parsed


def _as_seconds(values: pd.Series, table: str, column: str, unit: int) -> pd.Series:
    """Durations as whole seconds (nullable ``Int64``)."""
    if pd.api.types.is_timedelta64_dtype(values.dtype):
        seconds = values.dt.total_seconds()
    else:
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            blank = values.map(lambda v: isinstance(v, str) and not v.strip(), na_action="ignore")
            values = values.mask(blank.fillna(False).astype(bool))  # a blank cell is missing
        seconds = pd.to_numeric(values, errors="coerce").astype("float64") * unit
        bad = seconds.isna() & values.notna()
        if bad.any():
            _raise_values(table, column, values[bad], "number", "not a number")
    return pd.Series(np.round(seconds.to_numpy(dtype="float64")), index=values.index).astype(
        "Int64"
    )


def _raise_values(
    table: str, column: str, bad: pd.Series, check: str, what: str, message: str | None = None
) -> None:
    shown = ", ".join(repr(v) for v in bad.head(5).tolist())
    cases = pd.DataFrame(
        {
            "table": table,
            "row": bad.index.tolist(),
            "externalId": None,
            "column": column,
            "check": check,
            "value": bad.tolist(),
            "message": f"{what}",
        },
        columns=_FAILURE_COLUMNS,
    )
    raise ValidationError(
        message or f"{table} column {column!r}: {len(bad)} value(s) {what}, for example {shown}",
        cases,
    )


def _missing(n: int, dtype: str) -> pd.Series:
    if dtype == "str":
        return pd.Series(np.full(n, np.nan, dtype=object), dtype="str")
    return pd.Series(pd.array([pd.NA] * n, dtype="Int64") if dtype == "Int64" else
                     np.full(n, np.datetime64("NaT"), dtype="datetime64[ns]"))


def _exported_frame(exported: pd.DataFrame, dayfirst: bool | None) -> pd.DataFrame:
    n = len(exported)

    def col(name: str) -> pd.Series:
        if name in exported.columns:
            return _as_str(exported[name]).reset_index(drop=True)
        return _missing(n, "str")

    seconds = (
        _as_seconds(
            exported["incrementDurationInSeconds"], "exported", "incrementDurationInSeconds", 1
        ).reset_index(drop=True)
        if "incrementDurationInSeconds" in exported.columns
        else _missing(n, "Int64")
    )
    dates = (
        _as_date(exported["workDate"], "exported", "workDate", dayfirst).reset_index(drop=True)
        if "workDate" in exported.columns
        else _missing(n, "datetime64[ns]")
    )
    return pd.DataFrame(
        {
            "entryId": col("_id"),
            "externalId": col("externalId"),
            "userId": col("userId"),
            "initiative.externalId": col("initiative.externalId"),
            "initiative.client.externalId": col("initiative.client.externalId"),
            "exported_seconds": seconds,
            "exported_date": dates,
        }
    )


def _billing_frame(
    billing: pd.DataFrame,
    bkey: str,
    bid: str | None,
    columns: dict[str, str | None],
    unit: int,
    dayfirst: bool | None,
) -> pd.DataFrame:
    n = len(billing)
    duration, date, matter = columns["duration"], columns["date"], columns["matter"]
    ids = _as_str(billing[bid]) if bid is not None else _missing(n, "str")
    values = {
        "key": _as_str(billing[bkey]),
        "billingId": ids,
        "billed_seconds": _as_seconds(billing[duration], "billing", duration, unit)
        if duration is not None
        else _missing(n, "Int64"),
        "billed_date": _as_date(billing[date], "billing", date, dayfirst)
        if date is not None
        else _missing(n, "datetime64[ns]"),
        "billed_matter": _as_str(billing[matter]) if matter is not None else _missing(n, "str"),
    }
    # position, not the caller's index, pairs the columns up
    return pd.DataFrame({name: v.reset_index(drop=True) for name, v in values.items()})


def _isin(values: pd.Series, pool: pd.Series) -> np.ndarray:
    """``values.isin(pool)`` for string columns, missing values never found.

    Arrow's hash lookup: ``Series.isin`` on Arrow-backed strings is an order of magnitude slower.
    """
    found = pc.is_in(pa.array(values, type=pa.string()), value_set=pa.array(pool.dropna()))
    return found.to_numpy(zero_copy_only=False) & values.notna().to_numpy()


def _detect_key(exp: pd.DataFrame, bil: pd.DataFrame, bkey: str) -> str:
    keys = bil["key"]
    by_id = int(_isin(keys, exp["entryId"]).sum())
    by_ext = int(_isin(keys, exp["externalId"]).sum())
    if by_id != by_ext:
        return "_id" if by_id > by_ext else "externalId"
    return "externalId" if bkey == "externalId" else "_id"


# --- joining and classifying -------------------------------------------------------------------


def _join(exp: pd.DataFrame, bil: pd.DataFrame) -> pd.DataFrame:
    # Missing keys never pair (pandas would pair NaN with NaN): keyless billing records are
    # billing-only, keyless entries are missing in billing.
    right = bil[bil["key"].notna()]
    left = exp.merge(right, how="left", on="key", indicator=True, validate="many_to_one")
    only = bil[~_isin(bil["key"], exp["key"])].assign(_merge="right_only")
    rows = pd.concat([left, only], ignore_index=True, sort=False)
    return rows


def _classify(
    rows: pd.DataFrame, tolerance: float, key: str, compared: Sequence[str]
) -> pd.DataFrame:
    both = (rows["_merge"] == "both").to_numpy()
    left_only = (rows["_merge"] == "left_only").to_numpy()
    right_only = (rows["_merge"] == "right_only").to_numpy()
    never = np.zeros(len(rows), dtype=bool)  # a value not compared never differs

    diff = rows["billed_seconds"] - rows["exported_seconds"]
    dur_bad = (
        _differs(rows["exported_seconds"], rows["billed_seconds"], diff.abs() > tolerance)
        if "duration" in compared
        else never
    )
    date_bad = (
        _differs(
            rows["exported_date"], rows["billed_date"], rows["exported_date"] != rows["billed_date"]
        )
        if "date" in compared
        else never
    )
    exported_matter = rows["initiative.externalId"]
    matter_bad = (
        _differs(exported_matter, rows["billed_matter"], exported_matter != rows["billed_matter"])
        if "matter" in compared
        else never
    )

    status = np.full(len(rows), "matched", dtype=object)
    status[date_bad | matter_bad] = "date_or_matter_differs"
    status[dur_bad] = "duration_differs"
    status[left_only] = "missing_in_billing"
    status[right_only] = "only_in_billing"

    def flag(mask: np.ndarray, name: str) -> pd.Series:
        out = pd.Series(mask, dtype="boolean")
        out[~both if name in compared else slice(None)] = pd.NA
        return out

    code = dur_bad.astype(np.int8) * 4 + date_bad.astype(np.int8) * 2 + matter_bad.astype(np.int8)
    names = {
        c: [n for bit, n in ((4, "duration"), (2, "date"), (1, "matter")) if c & bit]
        for c in range(8)
    }
    code = np.where(both, code, 0)
    differences = [list(names[c]) for c in code.tolist()]

    out = pd.DataFrame(
        {
            "key": rows["key"],
            "entryId": rows["entryId"],
            "externalId": rows["externalId"],
            "billingId": rows["billingId"],
            "userId": rows["userId"],
            "initiative.externalId": rows["initiative.externalId"],
            "initiative.client.externalId": rows["initiative.client.externalId"],
            "exported_seconds": rows["exported_seconds"].astype("Int64"),
            "billed_seconds": rows["billed_seconds"].astype("Int64"),
            "difference_seconds": diff.astype("Int64"),
            "exported_date": rows["exported_date"].astype("datetime64[ns]"),
            "billed_date": rows["billed_date"].astype("datetime64[ns]"),
            "exported_matter": exported_matter,
            "billed_matter": rows["billed_matter"],
            "status": pd.Categorical(status, dtype=_STATUS_DTYPE),
            "duration_differs": flag(dur_bad, "duration"),
            "date_differs": flag(date_bad, "date"),
            "matter_differs": flag(matter_bad, "matter"),
            "differences": differences,
        }
    )
    for name in (
        "key",
        "entryId",
        "externalId",
        "billingId",
        "userId",
        "initiative.externalId",
        "initiative.client.externalId",
        "exported_matter",
        "billed_matter",
    ):
        out[name] = out[name].astype("str")
    out["detail"] = _details(out, key)
    return out


def _differs(left: pd.Series, right: pd.Series, unequal: pd.Series) -> np.ndarray:
    """True where values differ; one side missing differs, both missing agree."""
    lna = left.isna().to_numpy()
    rna = right.isna().to_numpy()
    neq = unequal.fillna(False).to_numpy(dtype=bool)
    return np.where(lna | rna, lna != rna, neq)


# --- human-readable text -----------------------------------------------------------------------


def _fmt_seconds(seconds: pd.Series) -> pd.Series:
    """``"1.50 h (5400 s)"``; ``"nothing"`` when missing."""
    hours = seconds.astype("float64") / 3600
    hours = hours.map(lambda h: f"{h:.2f}", na_action="ignore").astype("str")
    text = hours + " h (" + seconds.astype("str") + " s)"
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
        sign = pd.Series(np.where(diff.fillna(0).to_numpy() > 0, "+", ""), index=r.index)
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


def _details(rows: pd.DataFrame, key: str) -> pd.Series:
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
        sign = np.where(diff.to_numpy() > 0, "+", "")
        note = "matched (duration within tolerance: " + sign + diff.astype("str") + " s)"
        text.loc[matched] = note.where(within, "matched")
    return text.astype("str")


def _error_lists(rows: pd.DataFrame, key: str) -> list[list[str]]:
    """The failure reasons of each row as a list of strings (empty when matched)."""
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


# --- summaries ---------------------------------------------------------------------------------


def _summarise(rows: pd.DataFrame, group: pd.Series, name: str) -> pd.DataFrame:
    group = group.rename(name)
    counts = pd.crosstab(group, rows["status"], dropna=False).reindex(
        columns=list(STATUSES), fill_value=0
    )
    counts.columns = pd.Index(list(STATUSES))
    grouped = rows.assign(
        _exp=rows["exported_seconds"].astype("float64") / 3600,
        _bil=rows["billed_seconds"].astype("float64") / 3600,
        _entry=rows["entryId"].notna(),
    ).groupby(group, dropna=False, sort=True)
    totals = pd.DataFrame(
        {
            "entries": grouped["_entry"].sum().astype("int64"),
            "hours_exported": grouped["_exp"].sum(),
            "hours_billed": grouped["_bil"].sum(),
        }
    )
    out = counts.reindex(totals.index, fill_value=0).astype("int64").join(totals)
    out["hours_difference"] = out["hours_billed"] - out["hours_exported"]
    out.index.name = name
    out.columns.name = None
    return out


def _acknowledge_statuses(include: Iterable[str]) -> list[str]:
    if isinstance(include, str):
        include = (include,)
    statuses: list[str] = []
    for item in include:
        if item in ("matched", "succeeded"):
            statuses.append("matched")
        elif item == "failed":
            statuses.extend(FAILED_STATUSES)
        elif item in FAILED_STATUSES:
            statuses.append(item)
        elif item == "only_in_billing":
            raise ConfigError(
                "only_in_billing rows have no exported entry, so they cannot be acknowledged"
            )
        else:
            raise ConfigError(
                f"include takes 'matched', 'failed' or one of {list(FAILED_STATUSES)}, got {item!r}"
            )
    return list(dict.fromkeys(statuses))
