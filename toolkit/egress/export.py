"""The result of an export: typed ``entries`` and ``codes`` frames, and how to save them.

:class:`Export` holds the two tables produced by :mod:`toolkit.egress.flatten` (their columns are
the contract of :mod:`toolkit.egress.schemas`) and knows its ``kind``: ``"export"`` (v2
export form) or ``"pending"`` (release-pending detailed form). It writes and reads back a
Parquet dataset (hive partitions, readable by DuckDB, Spark, Dask) or a CSV folder, keeping
the types, hands its tables over as Arrow or Polars, and concatenates windowed exports without
duplicates. The file mechanics live in :mod:`toolkit.egress.files`.

:func:`toolkit.core.windows.split_windows` cuts a release range into the consecutive sub-windows
a windowed export requests in turn.

>>> from toolkit.testing import fake_export_entries
>>> ex = Export.from_records(fake_export_entries(4, codes_per_entry=2))
>>> len(ex), len(ex.codes), ex.kind
(4, 8, 'export')
"""

from __future__ import annotations

import html
import importlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

import numpy as np
import pandas as pd
import pandera.errors
import pandera.pandas
import pyarrow as pa

from toolkit.egress.files import (
    Kind,
    from_arrow_tables,
    read_csv,
    read_parquet,
    to_arrow_tables,
    write_csv,
    write_excel,
    write_parquet,
)
from toolkit.egress.flatten import (
    UNKNOWN_FIELDS,
    codes_wide,
    flatten_export,
    flatten_pending,
    parse_and_flatten_export,
    parse_and_flatten_pending,
)
from toolkit.egress.schemas import (
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit.errors import ConfigError, ValidationError

if TYPE_CHECKING:
    import polars

__all__ = ["PREVIEW_COLUMNS", "Export", "Tables"]

#: The columns an entries preview leads with, per kind: date, timekeeper, client, matter and
#: time worked (the spec's field names), then the rest (``summary``, the ids) in table order.
PREVIEW_COLUMNS: dict[str, tuple[str, ...]] = {
    "export": (
        "workDate",
        "userId",
        "initiative.client.externalId",
        "initiative.externalId",
        "incrementDurationInSeconds",
        "summary",
    ),
    "pending": (
        "workDate",
        "userId",
        "initiativeProps.initiative.client.externalId",
        "initiativeProps.initiative.externalId",
        "incrementDurationInSeconds",
        "summary",
    ),
}

T = TypeVar("T")

_Schema = type[pandera.pandas.DataFrameModel]
_SCHEMAS: dict[Kind, tuple[_Schema, _Schema]] = {
    "export": (ExportEntriesSchema, ExportCodesSchema),
    "pending": (PendingEntriesSchema, PendingCodesSchema),
}


def _check_kind(kind: str) -> None:
    if kind not in _SCHEMAS:
        raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")


class Tables(NamedTuple, Generic[T]):
    """An export's two tables in another library's form: unpack, or read them by name.

    >>> from toolkit.testing import fake_export_entries
    >>> entries, codes = Export.from_records(fake_export_entries(1)).to_arrow()
    >>> entries.num_rows, codes.num_rows
    (1, 3)
    """

    entries: T
    codes: T


class Export:
    """Typed tables of one export: ``entries`` (one row per entry) and ``codes``.

    Attributes:
        entries: One row per entry (:class:`~toolkit.egress.schemas.ExportEntriesSchema`
            or :class:`~toolkit.egress.schemas.PendingEntriesSchema`).
        codes: One row per (entry, code), linked by ``entryId`` = ``entries._id``.
        kind: ``"export"`` (v2 export form) or ``"pending"`` (release-pending detailed form).

    >>> from toolkit.testing import fake_pending_entries
    >>> ex = Export.from_records(fake_pending_entries(3, codes_per_entry=1), kind="pending")
    >>> ex.kind, len(ex), "initiativeProps.tags" in ex.entries
    ('pending', 3, True)
    """

    def __init__(self, entries: pd.DataFrame, codes: pd.DataFrame, kind: Kind = "export") -> None:
        """Wrap two flattened tables.

        Args:
            entries: The entries table.
            codes: The codes table.
            kind: ``"export"`` or ``"pending"``.

        Raises:
            ConfigError: ``kind`` is neither.

        >>> ex = Export.empty()
        >>> Export(ex.entries, ex.codes).kind
        'export'
        """
        _check_kind(kind)
        self.entries = entries
        self.codes = codes
        self.kind: Kind = kind

    # ----------------------------------------------------------------- building

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], kind: Kind = "export") -> Export:
        """Flatten parsed JSON records (see :func:`toolkit.egress.flatten.flatten_export`).

        Args:
            records: Entries in the export form (``kind="export"``) or detailed form.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export.

        >>> from toolkit.testing import fake_export_entry
        >>> len(Export.from_records([fake_export_entry(codes=5)]).codes)
        5
        """
        _check_kind(kind)
        flatten = flatten_export if kind == "export" else flatten_pending
        return cls(*flatten(records), kind=kind)

    @classmethod
    def from_json(cls, raw: bytes | str, kind: Kind = "export") -> Export:
        """Parse and flatten a response body (a JSON array); the fast path for large bodies.

        Args:
            raw: The body, as bytes or text.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export.

        >>> len(Export.from_json(b'[{"_id": "e1", "codes": []}]'))
        1
        """
        _check_kind(kind)
        parse = parse_and_flatten_export if kind == "export" else parse_and_flatten_pending
        return cls(*parse(raw), kind=kind)

    @classmethod
    def empty(cls, kind: Kind = "export") -> Export:
        """An export without rows, with every column and dtype.

        Args:
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The empty export.

        >>> Export.empty("pending").entries.shape[0]
        0
        """
        return cls.from_records([], kind=kind)

    @classmethod
    def concat(cls, exports: Iterable[Export]) -> Export:
        """Concatenate exports (e.g. windows), dropping repeated entries, keeping the last.

        An entry (by ``_id``) found in several exports keeps the row and the codes of the
        last export holding it.

        Args:
            exports: Exports of one kind, oldest first.

        Returns:
            One export.

        Raises:
            ConfigError: No exports, or kinds differ.

        >>> from toolkit.testing import fake_export_entry
        >>> a = Export.from_records([fake_export_entry(_id="e1", codes=1)])
        >>> b = Export.from_records([fake_export_entry(_id="e1", codes=2),
        ...                          fake_export_entry(_id="e2", codes=0)])
        >>> both = Export.concat([a, b])
        >>> both.entries["_id"].tolist(), len(both.codes)
        (['e1', 'e2'], 2)
        """
        parts = list(exports)
        if not parts:
            raise ConfigError("Export.concat needs at least one export")
        kinds = {p.kind for p in parts}
        if len(kinds) > 1:
            raise ConfigError(f"cannot concatenate exports of different kinds: {sorted(kinds)}")
        entries = pd.concat([p.entries for p in parts], ignore_index=True)
        codes = pd.concat([p.codes for p in parts], ignore_index=True)
        source = np.repeat(np.arange(len(parts)), [len(p.entries) for p in parts])
        keep = ~entries["_id"].duplicated(keep="last").to_numpy()
        winner = pd.Series(source[keep], index=entries["_id"].to_numpy()[keep])
        code_source = np.repeat(np.arange(len(parts)), [len(p.codes) for p in parts])
        owner = codes["entryId"].map(winner)
        code_keep = owner.isna().to_numpy() | (owner.to_numpy() == code_source)
        codes = codes.loc[code_keep].drop_duplicates(["entryId", "position"], keep="last")
        entries = entries.loc[keep].reset_index(drop=True)
        unknown: dict[str, Any] = {}
        for p in parts:
            unknown = {**p.entries.attrs.get(UNKNOWN_FIELDS, {}), **unknown}
        entries.attrs = {UNKNOWN_FIELDS: unknown} if unknown else {}
        return cls(entries, codes.reset_index(drop=True), kind=parts[0].kind)

    # ----------------------------------------------------------------- views

    def codes_wide(self) -> pd.DataFrame:
        """One row per entry, one column per code type ``externalId`` holding the code's.

        Returns:
            A frame indexed by ``_id`` (see :func:`toolkit.egress.flatten.codes_wide`).

        >>> from toolkit.testing import fake_export_entries
        >>> Export.from_records(fake_export_entries(2)).codes_wide().shape
        (2, 3)
        """
        return codes_wide(self.entries, self.codes)

    def validate(self) -> Export:
        """Check both tables against their pandera models, collecting every failure.

        Returns:
            ``self``, so ``ex.validate().entries`` reads naturally.

        Raises:
            ValidationError: With ``.failure_cases`` (one row per failure: ``table``,
                ``row``, ``externalId`` (the entry id), ``column``, ``check``, ``value``,
                ``message``).

        >>> from toolkit.testing import fake_export_entries
        >>> len(Export.from_records(fake_export_entries(3)).validate())
        3
        """
        entries_schema, codes_schema = _SCHEMAS[self.kind]
        failures = []
        for table, frame, schema, id_col in (
            ("entries", self.entries, entries_schema, "_id"),
            ("codes", self.codes, codes_schema, "entryId"),
        ):
            try:
                schema.validate(frame, lazy=True)
            except pandera.errors.SchemaErrors as exc:
                fc = exc.failure_cases
                rows = fc["index"]
                ids = [
                    frame[id_col].get(r) if id_col in frame and r in frame.index else None
                    for r in rows
                ]
                failures.append(
                    pd.DataFrame(
                        {
                            "table": table,
                            "row": rows,
                            "externalId": ids,
                            "column": fc["column"],
                            "check": fc["check"].astype(str),
                            "value": fc["failure_case"],
                            "message": [
                                f"{c}: failed {k} with {v!r}"
                                for c, k, v in zip(
                                    fc["column"], fc["check"], fc["failure_case"], strict=True
                                )
                            ],
                        }
                    )
                )
        if failures:
            cases = pd.concat(failures, ignore_index=True)
            raise ValidationError(f"{len(cases)} problem(s) in the {self.kind} tables", cases)
        return self

    def preview(self, n: int = 5) -> pd.DataFrame:
        """The first entries as a notebook shows them: date, timekeeper, client, matter and
        hours first (:data:`PREVIEW_COLUMNS`), then the rest, the hex ids last.

        ``hours`` (``incrementDurationInSeconds`` / 3600, to 2 places) is shown here only; it
        is not a column of :attr:`entries`.

        Args:
            n: How many entries.

        Returns:
            A copy of the first ``n`` rows of :attr:`entries`, columns reordered, with ``hours``.

        >>> from toolkit.testing import fake_export_entries
        >>> Export.from_records(fake_export_entries(3)).preview(2).columns[:5].tolist()
        ['workDate', 'userId', 'initiative.client.externalId', 'initiative.externalId', 'hours']
        """
        first = [c for c in PREVIEW_COLUMNS[self.kind] if c in self.entries]
        rest = [c for c in self.entries.columns if c not in first]
        shown = self.entries.head(n)[first + rest].copy()
        if "incrementDurationInSeconds" in shown:
            at = shown.columns.get_loc("incrementDurationInSeconds")
            hours = (shown["incrementDurationInSeconds"] / 3600).round(2)
            shown.insert(int(at), "hours", hours)  # type: ignore[arg-type]
        return shown

    def __len__(self) -> int:
        """Number of entries.

        >>> len(Export.empty())
        0
        """
        return len(self.entries)

    def __repr__(self) -> str:
        """A one-line summary: kind, rows, date range, users, initiatives, hours.

        >>> Export.empty()
        Export(kind='export', entries=0, codes=0)
        """
        head = (
            f"Export(kind={self.kind!r}, entries={len(self.entries):,}, codes={len(self.codes):,}"
        )
        e = self.entries
        if e.empty:
            return head + ")"
        bits = []
        if "workDate" in e and e["workDate"].notna().any():
            lo, hi = e["workDate"].min(), e["workDate"].max()
            bits.append(f"workDate={lo:%Y-%m-%d}..{hi:%Y-%m-%d}")
        if "userId" in e:
            bits.append(f"users={e['userId'].nunique():,}")
        init = (
            "initiative.externalId"
            if self.kind == "export"
            else ("initiativeProps.initiative.externalId")
        )
        if init in e:
            bits.append(f"initiatives={e[init].nunique():,}")
        if "incrementDurationInSeconds" in e:
            hours = float(e["incrementDurationInSeconds"].sum()) / 3600
            bits.append(f"hours={hours:,.1f}")
        return head + "".join(f", {b}" for b in bits) + ")"

    # ----------------------------------------------------------------- Arrow and Polars

    def to_arrow(self, *, partition_cols: Sequence[str] = ()) -> Tables[pa.Table]:
        """The two tables as typed Arrow tables: ``(entries, codes)``, also by name.

        The types are those of the files (Parquet, Delta Lake): ``workDate`` a naive
        ``timestamp[us]`` at midnight, timestamps ``timestamp[us, tz=UTC]``, counts
        ``double``, tags ``list<string>``, missing values null; columns you added (and fields
        the spec does not list) are kept at the end. :meth:`from_arrow` takes the pair back:
        ``Export.from_arrow(*ex.to_arrow(), kind=ex.kind)``.

        Args:
            partition_cols: Columns appended for partitioning, as :meth:`to_parquet` does
                (``workMonth``, the ``YYYY-MM`` of ``workDate``, is derived), and copied onto
                each code from its entry. None by default.

        Returns:
            :class:`Tables` of ``pyarrow.Table``: unpacks as ``entries, codes``; ``.entries``,
            ``.codes`` and ``._asdict()`` by name.

        Raises:
            ConfigError: A partition column is not a column of ``entries``.

        >>> from toolkit.testing import fake_export_entries
        >>> tables = Export.from_records(fake_export_entries(2)).to_arrow()
        >>> str(tables.entries.schema.field("workDate").type), tables.codes.num_rows
        ('timestamp[us]', 6)
        >>> tables = Export.from_records(fake_export_entries(2)).to_arrow(
        ...     partition_cols=["workMonth"])
        >>> "workMonth" in tables.codes.column_names
        True
        """
        entries, codes = to_arrow_tables(self.entries, self.codes, self.kind, partition_cols)
        return Tables(entries, codes)

    def to_polars(self) -> Tables[polars.DataFrame]:
        """The two tables as Polars frames: ``(entries, codes)``, also by name.

        Built from :meth:`to_arrow`, so the types are the same: ``workDate`` a
        ``Datetime("us")``, timestamps ``Datetime("us", "UTC")``, counts ``Float64``, tags
        ``List(String)``. Polars is optional: ``pip install polars``.

        Returns:
            :class:`Tables` of ``polars.DataFrame``.

        Raises:
            ConfigError: Polars is not installed.

        >>> from toolkit.testing import fake_export_entries
        >>> frames = Export.from_records(fake_export_entries(2)).to_polars()
        >>> str(frames.entries.schema["workDate"]), frames.codes.height
        ("Datetime(time_unit='us', time_zone=None)", 6)
        """
        try:
            pl = importlib.import_module("polars")
        except ImportError:
            raise ConfigError(
                "Export.to_polars needs Polars, an optional dependency: pip install polars"
            ) from None
        entries, codes = self.to_arrow()
        return Tables(pl.from_arrow(entries), pl.from_arrow(codes))

    @classmethod
    def from_arrow(cls, entries: pa.Table, codes: pa.Table, kind: Kind = "export") -> Export:
        """Build an export from Arrow tables as stored (Parquet, Delta Lake, :meth:`to_arrow`).

        Columns are cast back to the documented dtypes; the derived ``workMonth`` is dropped
        from both tables, and codes columns that are not code fields (partition copies) too.

        Args:
            entries: The entries table.
            codes: The codes table.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export.

        >>> from toolkit.testing import fake_export_entries
        >>> ex = Export.from_records(fake_export_entries(3))
        >>> back = Export.from_arrow(*ex.to_arrow(partition_cols=["workMonth"]))
        >>> len(back), "workMonth" in back.entries
        (3, False)
        """
        _check_kind(kind)
        return cls(*from_arrow_tables(entries, codes, kind), kind=kind)

    # ----------------------------------------------------------------- files

    def to_parquet(
        self,
        path: str | os.PathLike[str],
        partition_cols: Sequence[str] | None = None,
        *,
        overwrite: bool = False,
        basename_template: str | None = None,
    ) -> Path:
        """Write a Parquet dataset: ``path/entries/`` and ``path/codes/``, hive-partitioned.

        Both tables are partitioned alike (codes take their entry's values), so a reader
        can prune both: ``duckdb.sql("select * from 'out/entries/**/*.parquet'")``. Read
        ``path/entries`` and ``path/codes`` separately, never ``path`` as one dataset.
        ``workDate`` is stored as a naive ``timestamp[us]`` at midnight (pandas, Polars and
        DuckDB read it as a datetime), timestamps as UTC, tags as ``list<string>``;
        row groups hold up to :data:`~toolkit.egress.files.ROWS_PER_GROUP` rows. Both tables
        are written even when empty, with their schema.

        Args:
            path: The dataset folder (created if needed).
            partition_cols: Entries columns to partition by. ``None`` means
                :data:`~toolkit.egress.files.DEFAULT_PARTITION_COLS` (``workMonth``, the
                ``YYYY-MM`` of ``workDate``); ``[]`` writes unpartitioned files.
            overwrite: Replace an earlier export at ``path``; without it a folder that holds
                data is refused.
            basename_template: File name template with ``{i}`` (e.g.
                ``"part-<uuid>-{i}.parquet"``). Given: files are added to what the folder
                holds (a windowed export streams window after window).

        Returns:
            The dataset folder.

        Raises:
            ConfigError: A partition column is not a column of ``entries``, or ``path``
                holds data and neither ``overwrite`` nor ``basename_template`` is given.

        >>> import tempfile
        >>> from toolkit.testing import fake_export_entries
        >>> ex = Export.from_records(fake_export_entries(5))
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     back = Export.read_parquet(ex.to_parquet(tmp))
        >>> len(back), len(back.codes)
        (5, 15)
        """
        return write_parquet(
            self.entries,
            self.codes,
            self.kind,
            path,
            partition_cols,
            overwrite=overwrite,
            basename_template=basename_template,
        )

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str]) -> Export:
        """Load a dataset written by :meth:`to_parquet`, with the documented dtypes.

        Partition values come back as columns of their original type; the derived
        ``workMonth`` is dropped. Row order follows the partition folders.

        Args:
            path: The dataset folder (holding ``entries/`` and ``codes/``).

        Returns:
            The export.

        Raises:
            ConfigError: The folder holds no ``entries/`` dataset and no metadata file.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Export.read_parquet(Export.empty("pending").to_parquet(tmp)).kind
        'pending'
        """
        entries, codes, kind = read_parquet(path)
        return cls(entries, codes, kind=kind)

    def to_csv(
        self,
        path: str | os.PathLike[str],
        *,
        encoding: str = "utf-8",
        overwrite: bool = False,
    ) -> Path:
        """Write ``path/entries.csv`` and ``path/codes.csv`` (header, RFC 4180 quoting).

        ``workDate`` is written ``YYYY-MM-DD``, timestamps as ISO 8601 UTC with only the
        digits they need (``2026-11-02T09:30:00Z``, ``2026-11-02T09:30:00.25Z``),
        ``initiativeProps.tags`` joined with ``;``. A missing value is an empty field and
        an empty text is ``""``, so :meth:`read_csv` tells them apart.

        Args:
            path: The folder (created if needed).
            encoding: Text encoding; ``"utf-8-sig"`` adds the byte-order mark Excel needs to
                show ``Müller`` rather than ``MÃ¼ller``.
            overwrite: Replace an earlier export in ``path``; without it a folder that holds
                data is refused.

        Returns:
            The folder.

        Raises:
            ConfigError: ``path`` holds data and ``overwrite`` is false, or the encoding
                is unknown or cannot encode a value.

        >>> import tempfile
        >>> from toolkit.testing import fake_pending_entries
        >>> ex = Export.from_records(fake_pending_entries(3), kind="pending")
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     back = Export.read_csv(ex.to_csv(tmp, encoding="utf-8-sig"))
        >>> back.kind, back.entries["initiativeProps.tags"].tolist() == (
        ...     ex.entries["initiativeProps.tags"].tolist())
        ('pending', True)
        """
        return write_csv(
            self.entries, self.codes, self.kind, path, encoding=encoding, overwrite=overwrite
        )

    def to_excel(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write one ``.xlsx`` workbook with a sheet per table (``entries``, ``codes``).

        Timestamps are written as UTC without a zone (Excel has none), tags joined with
        ``;``. Needs ``openpyxl`` (the ``excel`` extra).

        Args:
            path: The workbook file.
            overwrite: Replace an existing file; without it an existing one is refused.

        Returns:
            The file.

        Raises:
            ConfigError: The file exists and ``overwrite`` is false.

        >>> import tempfile, os
        >>> from toolkit.testing import fake_export_entries
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     out = Export.from_records(fake_export_entries(2)).to_excel(
        ...         os.path.join(tmp, "x.xlsx"))
        ...     sorted(pd.read_excel(out, sheet_name=None))
        ['codes', 'entries']
        """
        return write_excel(self.entries, self.codes, path, overwrite=overwrite)

    @classmethod
    def read_csv(cls, path: str | os.PathLike[str], kind: Kind | None = None) -> Export:
        """Load a folder written by :meth:`to_csv`, restoring the documented dtypes.

        Args:
            path: The folder holding ``entries.csv`` and ``codes.csv``.
            kind: ``"export"`` or ``"pending"``; guessed from the columns if omitted.

        Returns:
            The export.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Export.read_csv(Export.empty().to_csv(tmp))
        Export(kind='export', entries=0, codes=0)
        """
        entries, codes, found = read_csv(path, kind)
        return cls(entries, codes, kind=found)

    def _repr_html_(self, head: int = 5) -> str:
        """Jupyter's view: counts and the date range, then the first rows of each table
        (the entries as :meth:`preview` orders them).

        >>> "<table" in Export.empty()._repr_html_()
        True
        """
        e = self.entries
        facts: dict[str, Any] = {"entries": len(e), "codes": len(self.codes)}
        if "workDate" in e and e["workDate"].notna().any():
            facts["workDate from"] = f"{e['workDate'].min():%Y-%m-%d}"
            facts["workDate to"] = f"{e['workDate'].max():%Y-%m-%d}"
        if "userId" in e:
            facts["users"] = int(e["userId"].nunique())
        if "incrementDurationInSeconds" in e:
            facts["hours"] = round(float(e["incrementDurationInSeconds"].sum()) / 3600, 1)
        parts = [
            f"<p><b>Export</b> ({html.escape(self.kind)})</p>",
            pd.DataFrame({"value": facts}).to_html(),
        ]
        for name, frame, total in (
            ("entries", self.preview(head), len(e)),  # date, timekeeper, client... first
            ("codes", self.codes, len(self.codes)),
        ):
            shown = min(head, total)
            parts.append(f"<p><code>.{name}</code>: first {shown} of {total}</p>")
            parts.append(frame.head(head).to_html(max_cols=20, index=False))
        return "\n".join(parts)
