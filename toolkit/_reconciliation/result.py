"""The result of a reconciliation: its rows, their counts, and the rows to acknowledge."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from toolkit._core.dtypes import TEXT, nullable
from toolkit._reconciliation.classify import FAILED_STATUSES, STATUSES
from toolkit._reconciliation.inputs import COMPARISONS
from toolkit._reconciliation.messages import error_lists
from toolkit.errors import ConfigError

#: The key of a reconciliation with a LEDES invoice: its lines and the entries are paired by
#: timekeeper, date and matter
LEDES_KEY = "timekeeper/date/matter"

#: Columns of :meth:`Reconciliation.to_acknowledge`, as ``client.acknowledge`` expects them.
ACKNOWLEDGE_COLUMNS: tuple[str, ...] = ("userId", "entryId", "outcome", "externalId", "errors")


@dataclass(frozen=True, eq=False, repr=False)
class Reconciliation:
    """The result of :func:`reconcile`: one row per entry and per unmatched billing record.

    Attributes:
        rows: the entries in their order, then the billing-only records (columns
            :data:`~toolkit._reconciliation.classify.ROW_COLUMNS`).
        key: the entry column joined on, ``"_id"`` or ``"externalId"``.
        billing_key: the billing column joined on; ``billing_id``: its record id column.
        tolerance_seconds: the duration tolerance; compared: the values compared.
        window: with ``after`` / ``on_or_before``, which entries were compared, else ``None``.
    """

    rows: pd.DataFrame
    key: str
    billing_key: str
    billing_id: str | None = None
    tolerance_seconds: float = 0
    compared: tuple[str, ...] = COMPARISONS
    window: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", nullable(self.rows))

    @property
    def summary(self) -> pd.Series:
        """Number of rows per status (an ``int64`` Series named ``count``), every status present.

        >>> toolkit.reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}),
        ...                   pd.DataFrame({"entryId": ["e2"]})).summary["missing_in_billing"]
        np.int64(1)
        """
        counts = self.rows["status"].value_counts(sort=False).reindex(list(STATUSES), fill_value=0)
        counts.index = pd.Index(list(STATUSES), name="status")
        return counts.rename("count").astype("int64")

    def by_user(self) -> pd.DataFrame:
        """Counts per status and hours exported versus billed, per user.

        Returns:
            A frame indexed by ``userId``: a count per status, ``entries``, ``hours_exported``,
            ``hours_billed`` and ``hours_difference``.

        Example:
            >>> rec = toolkit.reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
            ...     "incrementDurationInSeconds": [5400]}), pd.DataFrame({"entryId": ["e1"]}))
            >>> rec.by_user().loc["u1", ["matched", "hours_exported"]].tolist()
            [1.0, 1.5]
        """
        return _summarise(self.rows, self.rows["userId"], "userId")

    def by_initiative(self) -> pd.DataFrame:
        """Counts per status and hours, per ``initiative.externalId`` (a record's own matter).

        Returns:
            ``initiative.client.externalId`` and the columns of :meth:`by_user`.

        Example:
            >>> rec = toolkit.reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"],
            ...     "initiative.externalId": ["M-1"]}),
            ...     pd.DataFrame({"entryId": ["e9"], "matter": ["M-2"]}))
            >>> rec.by_initiative().index.tolist()
            ['M-1', 'M-2']
        """
        group = self.rows["initiative.externalId"].fillna(self.rows["billed_matter"])
        out = _summarise(self.rows, group, "initiative.externalId")
        by = self.rows.groupby(group.rename("initiative.externalId"), dropna=False, sort=False)
        clients = by["initiative.client.externalId"].first().reindex(out.index)
        out.insert(0, "initiative.client.externalId", clients)
        return out

    def to_acknowledge(self, include: Iterable[str] = ("matched", "failed")) -> pd.DataFrame:
        """The rows to pass to ``client.acknowledge``: one per exported entry.

        Args:
            include: ``"matched"`` and/or ``"failed"``, or failure statuses.

        Returns:
            :data:`ACKNOWLEDGE_COLUMNS`; ``externalId`` is the billing record id (else the
            entry's ``externalId``, else the key), ``errors`` a list of reasons.

        Example:
            >>> rec = toolkit.reconcile(pd.DataFrame({"_id": ["e1", "e2"], "userId": ["u1", "u1"]}),
            ...     pd.DataFrame({"entryId": ["e1"], "billingId": ["B-77"]}))
            >>> rec.to_acknowledge()[["entryId", "outcome", "externalId"]].values.tolist()
            [['e1', 'succeeded', 'B-77'], ['e2', 'failed', <NA>]]
        """
        return _acknowledgements(self.rows, include, self.key).reset_index(drop=True)

    def describe(self) -> str:
        """The counts per status, the hours, what was compared and the window, a line each.

        >>> print(toolkit.reconcile(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}),
        ...     pd.DataFrame({"entryId": ["e1"]})).describe().splitlines()[0])
          matched                          1
        """
        counts = self.summary
        width = max(len(s) for s in STATUSES)
        lines = [f"{status:<{width}}  {counts[status]:>10,}" for status in STATUSES]
        return "\n".join(f"  {line}" for line in [*lines, *self._notes()])

    def __repr__(self) -> str:
        return (
            f"Reconciliation(key={self.key!r}, billing_key={self.billing_key!r}, "
            f"billing_id={self.billing_id!r}, tolerance_seconds={self.tolerance_seconds!r}, "
            f"{len(self.rows):,} rows)\n{self.describe()}"
        )

    def _notes(self) -> list[str]:
        """The hours on each side, what was compared (and not), and the window."""
        exported, billed = (self.rows[f"{s}_seconds"].sum() / 3600 for s in ("exported", "billed"))
        shown = ", ".join(self.compared) if self.compared else "nothing but the keys"
        ledes = self.key == LEDES_KEY
        hidden = ("date", "matter") if ledes else ("codes",)  # what the kind never compares
        skipped = [c for c in (*COMPARISONS, "codes") if c not in (*self.compared, *hidden)]
        rest = f" (not compared: {', '.join(skipped)})" if skipped else ""
        rest += "; LEDES fee lines paired by timekeeper, date and matter" if ledes else ""
        window = [f"only the {self.window}"] if self.window is not None else []
        return [
            f"hours exported {exported:,.2f}, billed {billed:,.2f}",
            *self._written(),
            f"compared {shown}{rest}",
            *window,
        ]

    def _written(self) -> list[str]:
        """The lines billed for less (written down) and more (written up) time, and hours."""
        out = []
        for way in ("down", "up"):
            rows = self.rows[self.rows["written"].eq(way).fillna(False).to_numpy(dtype=bool)]
            hours = abs(rows["difference_seconds"].sum()) / 3600
            if len(rows):
                out.append(f"{len(rows):,} line(s) written {way} by {hours:,.2f} h")
        return ["; ".join(out)] if out else []

    def _repr_html_(self) -> str:
        """Jupyter's view: a table of the classes with their counts, and the hours."""
        table = self.summary.to_frame()
        table["share"] = (table["count"] / max(len(self.rows), 1)).map("{:.1%}".format)
        head = (
            f"<p><b>Reconciliation</b> of {len(self.rows):,} rows on "
            f"<code>{html.escape(self.key)}</code> = <code>{html.escape(self.billing_key)}</code>"
        )
        notes = "".join(f"; {html.escape(note)}" for note in self._notes())
        return f"{head}{notes}</p>{table.to_html()}"


def _summarise(rows: pd.DataFrame, group: pd.Series, name: str) -> pd.DataFrame:
    """Counts per status, entries and hours on each side, per value of ``group``."""
    group = group.rename(name)
    counts = pd.crosstab(group, rows["status"], dropna=False)
    counts = counts.reindex(columns=list(STATUSES), fill_value=0).set_axis(list(STATUSES), axis=1)
    hours = rows[["exported_seconds", "billed_seconds"]].astype("float64") / 3600
    totals = hours.set_axis(["hours_exported", "hours_billed"], axis=1)
    totals.insert(0, "entries", rows["_id"].notna().astype("int64"))
    totals = totals.groupby(group, dropna=False, sort=True).sum()
    out = counts.reindex(totals.index, fill_value=0).astype("int64").join(totals)
    out["hours_difference"] = out["hours_billed"] - out["hours_exported"]
    return nullable(out.rename_axis(index=name, columns=None))


#: Columns that make a table a reconciliation's rows (older files have ``entryId``, not ``_id``)
_ROW_COLUMNS = ("status", "userId", "detail")
_ENTRY_ID_COLUMNS = ("_id", "entryId")


def is_reconciliation(frame: pd.DataFrame) -> bool:
    """Whether a table holds a reconciliation's rows (``toolkit reconcile --out``).

    Returns:
        True with ``status``, ``_id`` (or ``entryId``), ``userId``, ``detail`` and no ``outcome``.

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
    """:meth:`Reconciliation.to_acknowledge` of rows read back from a file (``detail`` as error).

    Returns:
        The :data:`ACKNOWLEDGE_COLUMNS`, indexed like the rows they come from.

    Example:
        >>> rows = pd.DataFrame({"key": ["e1", "e2"], "_id": ["e1", "e2"], "userId": ["u1", "u1"],
        ...     "status": ["matched", "missing_in_billing"], "detail": ["matched", "no record"]})
        >>> acknowledgements_from_rows(rows)[["entryId", "outcome", "errors"]].values.tolist()
        [['e1', 'succeeded', None], ['e2', 'failed', ['no record']]]
    """
    return _acknowledgements(rows, include)


def _acknowledgements(
    rows: pd.DataFrame, include: Iterable[str], key: str | None = None
) -> pd.DataFrame:
    """The acknowledgements of the reconciled rows whose status ``include`` names (``matched``
    or ``succeeded``, ``failed``: every failure status, or failure statuses by name); failed
    ones carry their reasons: worded from the rows of a reconciliation on ``key``, else each
    row's ``detail`` (rows read back from a file)."""
    given = rows["status"].astype("str").str.strip()
    include = (include,) if isinstance(include, str) else tuple(include)
    named = {"matched": ["matched"], "succeeded": ["matched"], "failed": [*FAILED_STATUSES]}
    named |= {name: [name] for name in FAILED_STATUSES}
    for item in include:
        if item == "only_in_billing":
            raise ConfigError(
                "only_in_billing rows have no exported entry, so they cannot be acknowledged"
            )
        if item not in named:
            raise ConfigError(
                f"include takes 'matched', 'failed' or one of {list(FAILED_STATUSES)}, got {item!r}"
            )
    chosen = given.isin([name for item in include for name in named[item]]).to_numpy()
    sel, succeeded = rows.loc[chosen], (given[chosen] == "matched").to_numpy()
    ext = pd.Series(None, index=sel.index, dtype="object")
    for col in ("key", "externalId", "billingId"):  # the last present wins
        if col in sel.columns:
            ext = sel[col].astype("object").where(sel[col].notna(), ext)
    errors: Sequence[list[str] | None]
    if key is not None:  # worded from the reconciliation's rows
        errors = error_lists(sel, key)
    else:  # rows read back from a file: each failed row's detail
        errors = [None if ok else [str(d)] for d, ok in zip(sel["detail"], succeeded, strict=True)]
    entry = next(c for c in _ENTRY_ID_COLUMNS if c in sel.columns)
    return pd.DataFrame(
        {
            "userId": sel["userId"].astype(TEXT),
            "entryId": sel[entry].astype(TEXT),
            "outcome": pd.array(np.where(succeeded, "succeeded", "failed"), dtype=TEXT),
            "externalId": ext.where(succeeded).astype(TEXT),
            "errors": errors,
        },
        index=sel.index,  # the columns in the order of ACKNOWLEDGE_COLUMNS
    )
