"""The result of a reconciliation: its rows, their counts per status, per user and per
initiative, and the rows to acknowledge.

:class:`Reconciliation` holds the classified rows; ``summary``, ``by_user()`` and
``by_initiative()`` count them, ``to_acknowledge()`` turns the exported entries into the frame
``client.acknowledge`` takes (``matched`` as ``succeeded``, the others as ``failed`` with their
reasons), and Jupyter shows it as a table of the classes.

>>> ACKNOWLEDGE_COLUMNS
('userId', 'entryId', 'outcome', 'externalId', 'errors')
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from toolkit.errors import ConfigError
from toolkit.reconciliation.classify import FAILED_STATUSES, STATUSES
from toolkit.reconciliation.inputs import COMPARISONS
from toolkit.reconciliation.messages import error_lists

__all__ = [
    "ACKNOWLEDGE_COLUMNS",
    "Reconciliation",
    "acknowledgements_from_rows",
    "is_reconciliation",
]

#: Columns of :meth:`Reconciliation.to_acknowledge`, as ``client.acknowledge`` expects them.
ACKNOWLEDGE_COLUMNS: tuple[str, ...] = ("userId", "entryId", "outcome", "externalId", "errors")


@dataclass(frozen=True, eq=False, repr=False)
class Reconciliation:
    """The result of :func:`reconcile`: one row per entry and per unmatched billing record.

    Attributes:
        rows: one row per exported entry, plus one per billing record that matches no entry.
            Columns: ``key`` (the join value), ``_id`` (the entry's, as the export names it;
            ``rows["entryId"]``, its name before, still works for one release with a
            ``DeprecationWarning``), ``externalId``
            (the entry's), ``billingId`` (the billing record id, when given), ``userId``,
            ``initiative.externalId``, ``initiative.client.externalId``, ``exported_seconds``,
            ``billed_seconds``, ``difference_seconds`` (billed minus exported), ``exported_date``,
            ``billed_date``, ``exported_matter``, ``billed_matter``, ``status`` (categorical of
            :data:`~toolkit.reconciliation.classify.STATUSES`), ``duration_differs``,
            ``date_differs``, ``matter_differs`` (nullable booleans, missing when one side is
            absent), ``differences`` (list of ``"duration"``, ``"date"``, ``"matter"``) and
            ``detail`` (human-readable text). A value not compared has its billed column and
            its ``*_differs`` flag missing.
        key: the entry column joined on, ``"_id"`` or ``"externalId"``.
        billing_key: the billing column joined on.
        billing_id: the billing record id column, or ``None``.
        tolerance_seconds: the duration tolerance used.
        compared: the values compared, a subset of :data:`~toolkit.reconciliation.COMPARISONS`
            in its order (a value whose billing column is absent is not compared, so it never
            differs).
        window: with ``after`` / ``on_or_before``, which entries were compared (``"entries
            released in (A, B] by updatedAt: 12 of 213"``); ``None`` when all were.

    Example:
        >>> exported = pd.DataFrame({"_id": ["e1"], "externalId": ["B-1"], "userId": ["u1"],
        ...     "workDate": ["2024-03-01"], "incrementDurationInSeconds": [3600],
        ...     "initiative.externalId": ["M-1"]})
        >>> billing = pd.DataFrame({"entryId": ["e1"], "duration": [3600],
        ...     "workDate": ["2024-03-01"], "matter": ["M-1"]})
        >>> from toolkit.reconciliation import reconcile
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
    window: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.rows, _Rows):  # rows["entryId"] keeps working, warned about
            object.__setattr__(self, "rows", _Rows(self.rows))

    @property
    def summary(self) -> pd.Series:
        """Number of rows per status, every status present (zero when absent).

        Returns:
            An integer Series indexed by status, named ``count``.

        Example:
            >>> from toolkit.reconciliation import reconcile
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
            >>> from toolkit.reconciliation import reconcile
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
            >>> from toolkit.reconciliation import reconcile
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
            >>> from toolkit.reconciliation import reconcile
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
        errors = error_lists(sel, self.key)
        out = pd.DataFrame(
            {
                "userId": sel["userId"].to_numpy(),
                "entryId": sel["_id"].to_numpy(),
                "outcome": np.where(succeeded, "succeeded", "failed"),
                "externalId": ext.to_numpy(),
                "errors": errors,
            },
            columns=list(ACKNOWLEDGE_COLUMNS),
        )
        for col in ("userId", "entryId", "outcome", "externalId"):
            out[col] = out[col].astype("str")
        return out

    def describe(self) -> str:
        """The counts per status, the hours on each side, what was compared and the window,
        one indented line each: the body of the repr, under a header of the caller's.

        Returns:
            The lines joined with newlines.

        Example:
            >>> from toolkit.reconciliation import reconcile
            >>> rec = reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}),
            ...                 pd.DataFrame({"entryId": ["e1"]}))
            >>> print(rec.describe().splitlines()[0])
              matched                          1
        """
        counts = self.summary
        width = max(len(s) for s in STATUSES)
        lines = [f"  {status:<{width}}  {counts[status]:>10,}" for status in STATUSES]
        exported = self.rows["exported_seconds"].sum() / 3600
        billed = self.rows["billed_seconds"].sum() / 3600
        lines.append(f"  hours exported {exported:,.2f}, billed {billed:,.2f}")
        lines.append(f"  {self._compared_text()}")
        if self.window is not None:
            lines.append(f"  only the {self.window}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Reconciliation(key={self.key!r}, billing_key={self.billing_key!r}, "
            f"billing_id={self.billing_id!r}, tolerance_seconds={self.tolerance_seconds!r}, "
            f"{len(self.rows):,} rows)\n{self.describe()}"
        )

    def _compared_text(self) -> str:
        """``"compared duration, date, matter"``, naming what was not compared."""
        shown = ", ".join(self.compared) if self.compared else "nothing but the keys"
        skipped = [c for c in COMPARISONS if c not in self.compared]
        rest = f" (not compared: {', '.join(skipped)})" if skipped else ""
        return f"compared {shown}{rest}"

    def _repr_html_(self) -> str:
        """Jupyter's view: a table of the classes with their counts, and the hours.

        >>> from toolkit.reconciliation import reconcile

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
            f"billed {billed:,.2f}; {html.escape(self._compared_text())}"
            + (f"; only the {html.escape(self.window)}" if self.window is not None else "")
            + "</p>"
        )
        return head + table.to_html()


def _summarise(rows: pd.DataFrame, group: pd.Series, name: str) -> pd.DataFrame:
    group = group.rename(name)
    counts = pd.crosstab(group, rows["status"], dropna=False).reindex(
        columns=list(STATUSES), fill_value=0
    )
    counts.columns = pd.Index(list(STATUSES))
    grouped = rows.assign(
        _exp=rows["exported_seconds"].astype("float64") / 3600,
        _bil=rows["billed_seconds"].astype("float64") / 3600,
        _entry=rows["_id"].notna(),
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


class _Rows(pd.DataFrame):
    """:attr:`Reconciliation.rows`: a DataFrame where ``["entryId"]`` (the entry id's name
    before ``_id``), alone or in a list, still answers with ``_id``, and a
    ``DeprecationWarning``, for one release; so do the frames derived from it."""

    @property
    def _constructor(self) -> type[_Rows]:
        return _Rows

    def __getitem__(self, key: Any) -> Any:
        if (
            "entryId" not in self.columns
            and "_id" in self.columns
            and (
                (isinstance(key, str) and key == "entryId")
                or (isinstance(key, list) and "entryId" in key)
            )
        ):
            warnings.warn(
                "Reconciliation.rows['entryId'] is now rows['_id'] (the export's name for the "
                "entry id); 'entryId' goes in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            key = "_id" if isinstance(key, str) else ["_id" if k == "entryId" else k for k in key]
        return super().__getitem__(key)


#: Columns that make a table a reconciliation's rows (``toolkit reconcile --out``); files
#: written before the entry id was ``_id`` have ``entryId``.
_ROW_COLUMNS = ("status", "userId", "detail")
_ENTRY_ID_COLUMNS = ("_id", "entryId")


def is_reconciliation(frame: pd.DataFrame) -> bool:
    """Whether a table read from a file holds a reconciliation's rows (``toolkit reconcile
    --out``, or :attr:`Reconciliation.rows` written out) rather than acknowledgements.

    Args:
        frame: the table.

    Returns:
        True when it has ``status``, ``_id`` (or ``entryId``, as written before), ``userId`` and
        ``detail`` and no ``outcome``.

    Example:
        >>> is_reconciliation(pd.DataFrame(columns=["status", "_id", "userId", "detail"]))
        True
    """
    return (
        "outcome" not in frame.columns
        and all(c in frame.columns for c in _ROW_COLUMNS)
        and any(c in frame.columns for c in _ENTRY_ID_COLUMNS)
    )


def acknowledgements_from_rows(
    rows: pd.DataFrame, include: Iterable[str] = ("matched", "failed")
) -> pd.DataFrame:
    """What :meth:`Reconciliation.to_acknowledge` returns, from its rows read back from a file.

    ``matched`` rows are ``succeeded`` with the billing record id as ``externalId`` (else the
    entry's ``externalId``, else the key); ``missing_in_billing`` and ``*_differs`` rows are
    ``failed`` with their ``detail`` as the one error message; ``only_in_billing`` rows have
    no entry and are left out.

    Args:
        rows: the reconciliation rows (``status``, ``_id`` or ``entryId``, ``userId``, ``detail``;
            ``billingId``, ``externalId`` and ``key`` when written).
        include: which rows, as :meth:`Reconciliation.to_acknowledge` takes it.

    Returns:
        The :data:`ACKNOWLEDGE_COLUMNS`, indexed like the rows they come from.

    Raises:
        ConfigError: an unknown value in ``include``, or ``only_in_billing``.

    Example:
        >>> rows = pd.DataFrame({"key": ["e1", "e2", "x"], "_id": ["e1", "e2", None],
        ...     "userId": ["u1", "u1", None], "billingId": ["B-1", None, "B-9"],
        ...     "status": ["matched", "missing_in_billing", "only_in_billing"],
        ...     "detail": ["matched", "missing in billing: no billing record has _id e2",
        ...                "only in billing"]})
        >>> acks = acknowledgements_from_rows(rows)
        >>> acks[["entryId", "outcome", "externalId"]].values.tolist()
        [['e1', 'succeeded', 'B-1'], ['e2', 'failed', nan]]
        >>> acks.loc[1, "errors"]
        ['missing in billing: no billing record has _id e2']
        >>> acknowledgements_from_rows(rows, include=["matched"])["entryId"].tolist()
        ['e1']
    """
    status = rows["status"].astype("str").str.strip()
    sel = rows.loc[status.isin(_acknowledge_statuses(include)).to_numpy()]
    succeeded = (sel["status"].astype("str").str.strip() == "matched").to_numpy()
    ext = pd.Series(None, index=sel.index, dtype="object")
    for col in ("key", "externalId", "billingId"):  # the last present wins
        if col in sel.columns:
            ext = sel[col].astype("object").where(sel[col].notna(), ext)
    return pd.DataFrame(
        {
            "userId": sel["userId"].astype("str"),
            "entryId": sel[next(c for c in _ENTRY_ID_COLUMNS if c in sel.columns)].astype("str"),
            "outcome": np.where(succeeded, "succeeded", "failed"),
            "externalId": [
                str(v) if ok and v is not None and not pd.isna(v) else None
                for v, ok in zip(ext.tolist(), succeeded.tolist(), strict=True)
            ],
            "errors": [
                None if ok else [str(d)]
                for d, ok in zip(sel["detail"].tolist(), succeeded.tolist(), strict=True)
            ],
        },
        index=sel.index,
        columns=list(ACKNOWLEDGE_COLUMNS),
    )
