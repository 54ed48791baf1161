"""The result of an export: typed ``entries`` and ``codes`` frames, and how to save them.

:class:`Export` holds the two tables produced by :mod:`toolkit.egress.flatten` (their columns are
the contract of :mod:`toolkit.egress.schemas`) and knows its ``kind``: ``"export"`` (v2
export form) or ``"pending"`` (release-pending detailed form). It writes and reads back a
Parquet dataset (hive partitions, readable by DuckDB, Spark, Dask) or a CSV folder, keeping
the types, and concatenates windowed exports without duplicates.

:func:`toolkit.core.windows.split_windows` cuts a release range into the consecutive sub-windows
a windowed export requests in turn.

>>> from toolkit.testing import fake_export_entries
>>> ex = Export.from_records(fake_export_entries(4, codes_per_entry=2))
>>> len(ex), len(ex.codes), ex.kind
(4, 8, 'export')
"""

from __future__ import annotations

import html
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from toolkit.egress.flatten import (
    arrow_to_pandas,
    codes_wide,
    flatten_export,
    flatten_export_arrow,
    flatten_pending,
    flatten_pending_arrow,
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

__all__ = [
    "DEFAULT_PARTITION_COLS",
    "ROWS_PER_GROUP",
    "Export",
    "claim_target",
]

Kind = Literal["export", "pending"]

#: Partitioning of :meth:`Export.to_parquet` when ``partition_cols`` is ``None``: the month of
#: ``workDate`` (``"2026-11"``), a derived column written as the ``workMonth=...`` folders.
DEFAULT_PARTITION_COLS: tuple[str, ...] = ("workMonth",)
#: Rows per Parquet row group (and the size a streamed export buffers before writing a file).
ROWS_PER_GROUP = 100_000

_DERIVED = {"workMonth"}
_META_FILE = "_toolkit_export.json"
_TAG_SEPARATOR = ";"
_SCHEMAS: dict[str, tuple[type, type]] = {
    "export": (ExportEntriesSchema, ExportCodesSchema),
    "pending": (PendingEntriesSchema, PendingCodesSchema),
}


# --------------------------------------------------------------------------- file types


def _file_schemas(kind: str) -> tuple[pa.Schema, pa.Schema]:
    """Arrow schemas of the tables on disk: as flattened, but ``workDate`` is a ``date32``."""
    entries, codes = (flatten_export_arrow if kind == "export" else flatten_pending_arrow)([])
    schema = entries.schema
    i = schema.get_field_index("workDate")
    return schema.set(i, pa.field("workDate", pa.date32())), codes.schema


def _to_arrow(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """pandas -> Arrow with the file types; unknown (user-added) columns are kept at the end."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    columns, fields = [], []
    for field in schema:
        if field.name not in table.column_names:
            raise ConfigError(f"column {field.name!r} is missing from the table")
        safe = field.name != "workDate"  # a time of day is dropped, not an error
        columns.append(pc.cast(table[field.name], field.type, safe=safe))
        fields.append(field)
    for name in table.column_names:
        if name not in schema.names:
            columns.append(table[name])
            fields.append(table.schema.field(name))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _from_arrow(table: pa.Table, schema: pa.Schema, drop: Iterable[str] = ()) -> pd.DataFrame:
    """Arrow (as read from a file) -> pandas with the documented dtypes and column order."""
    table = table.drop_columns([c for c in drop if c in table.column_names])
    known = [f for f in schema if f.name in table.column_names]
    extra = [n for n in table.column_names if n not in schema.names]
    columns = [pc.cast(table[f.name], f.type) for f in known] + [table[n] for n in extra]
    names = [f.name for f in known] + extra
    table = pa.table(columns, names=names)
    if "workDate" in names:
        i = names.index("workDate")
        table = table.set_column(i, "workDate", pc.cast(table["workDate"], pa.timestamp("us")))
    return arrow_to_pandas(table)


def _iso_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """UTC timestamps as ISO 8601 text with only the fraction digits they need, and ``Z``."""
    utc = pc.cast(column, pa.timestamp("us", tz="UTC"))
    text = pc.strftime(utc, format="%Y-%m-%dT%H:%M:%S")  # %S carries the fraction
    text = pc.replace_substring_regex(text, pattern=r"\.?0+$", replacement="")
    return pc.binary_join_element_wise(text, pa.scalar("Z"), "")


def _kind_of(columns: Iterable[str]) -> Kind:
    return "pending" if any(str(c).startswith("initiativeProps.") for c in columns) else "export"


def _hive_keys(folder: Path) -> list[str]:
    """Partition keys of a hive-partitioned folder, from the path of its first Parquet file."""
    for dirpath, _, files in os.walk(folder):
        if any(f.endswith(".parquet") for f in files):
            rel = Path(dirpath).relative_to(folder)
            return [unquote(part.split("=", 1)[0]) for part in rel.parts if "=" in part]
    return []


_OUR_FILES = ("entries", "codes", _META_FILE, "entries.csv", "codes.csv")


def claim_target(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Make sure an export may write to ``path``: it is new or empty, or ``overwrite`` is set.

    With ``overwrite``, what an earlier export wrote there (``entries/``, ``codes/``, the
    CSV files, or the file itself) is removed first; other files are left alone.

    Args:
        path: The target folder (or file, for one-file formats such as ``.xlsx``).
        overwrite: Replace an earlier export instead of refusing.

    Returns:
        The target path.

    Raises:
        ConfigError: The target holds data and ``overwrite`` is false.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Export.empty().to_csv(tmp)
    ...     claim_target(tmp)
    Traceback (most recent call last):
    ...
    toolkit.errors.ConfigError: ... already holds data (codes.csv, entries.csv); pass ...
    """
    root = Path(path)
    if root.is_file():
        if not overwrite:
            raise ConfigError(
                f"{root} already exists; pass overwrite=True (--overwrite) to replace it"
            )
        root.unlink()
        return root
    if not root.is_dir():
        return root
    held = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
    if held and not overwrite:
        raise ConfigError(
            f"{root} already holds data ({', '.join(held[:5])}); pass overwrite=True"
            " (--overwrite) to replace it"
        )
    for name in _OUR_FILES:
        target = root / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    return root


def _has_parquet(folder: Path) -> bool:
    return folder.is_dir() and any(
        f.endswith(".parquet") for _, _, files in os.walk(folder) for f in files
    )


# --------------------------------------------------------------------------- Export


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
        if kind not in _SCHEMAS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
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
        if kind not in _SCHEMAS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
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
        if kind not in _SCHEMAS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
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
        return cls(
            entries.loc[keep].reset_index(drop=True),
            codes.reset_index(drop=True),
            kind=parts[0].kind,
        )

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

    # ----------------------------------------------------------------- files

    def to_arrow(
        self, partition_cols: Sequence[str] | None = None
    ) -> tuple[pa.Table, pa.Table]:
        """The two tables as Arrow with the file types, ready for Parquet or Delta Lake.

        ``workDate`` becomes a ``date32``, timestamps stay UTC, tags ``list<string>``; the
        partition columns are appended to the entries (``workMonth``, the ``YYYY-MM`` of
        ``workDate``, is derived) and copied onto each code from its entry.

        Args:
            partition_cols: As :meth:`to_parquet`: ``None`` means
                :data:`DEFAULT_PARTITION_COLS`, ``[]`` none.

        Returns:
            ``(entries, codes)``.

        Raises:
            ConfigError: A partition column is not a column of ``entries``.

        >>> from toolkit.testing import fake_export_entries
        >>> entries, codes = Export.from_records(fake_export_entries(2)).to_arrow()
        >>> str(entries.schema.field("workDate").type), "workMonth" in codes.column_names
        ('date32[day]', True)
        """
        parts = list(DEFAULT_PARTITION_COLS if partition_cols is None else partition_cols)
        entries_schema, codes_schema = _file_schemas(self.kind)
        entries = _to_arrow(self.entries, entries_schema)
        codes = _to_arrow(self.codes, codes_schema)
        for col in parts:
            if col in entries.column_names:
                continue
            if col == "workMonth":
                month = pc.strftime(entries["workDate"], format="%Y-%m")
                entries = entries.append_column("workMonth", month)
            else:
                raise ConfigError(
                    f"cannot partition by {col!r}: not a column of the entries"
                    " (nor 'workMonth', the month of workDate)"
                )
        if parts:
            at = pc.index_in(codes["entryId"], value_set=entries["_id"].combine_chunks())
            for col in parts:
                if col in codes.column_names:
                    codes = codes.drop_columns([col])
                codes = codes.append_column(col, entries[col].take(at))
        return entries, codes

    @classmethod
    def from_arrow(cls, entries: pa.Table, codes: pa.Table, kind: Kind = "export") -> Export:
        """Build an export from Arrow tables as stored (Parquet, Delta Lake).

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
        >>> back = Export.from_arrow(*ex.to_arrow())
        >>> len(back), "workMonth" in back.entries
        (3, False)
        """
        if kind not in _SCHEMAS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
        entries_schema, codes_schema = _file_schemas(kind)
        return cls(
            _from_arrow(entries, entries_schema, drop=_DERIVED),
            _from_arrow(
                codes,
                codes_schema,
                drop=[c for c in codes.column_names if c not in codes_schema.names],
            ),
            kind=kind,
        )

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
        ``workDate`` is stored as a ``date``, timestamps as UTC, tags as ``list<string>``;
        row groups hold up to :data:`ROWS_PER_GROUP` rows. Both tables are written even
        when empty, with their schema.

        Args:
            path: The dataset folder (created if needed).
            partition_cols: Entries columns to partition by. ``None`` means
                :data:`DEFAULT_PARTITION_COLS` (``workMonth``, the ``YYYY-MM`` of
                ``workDate``); ``[]`` writes unpartitioned files.
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
        root = Path(path)
        parts = list(DEFAULT_PARTITION_COLS if partition_cols is None else partition_cols)
        entries, codes = self.to_arrow(parts)
        if basename_template is None:
            claim_target(root, overwrite=overwrite)
        root.mkdir(parents=True, exist_ok=True)
        (root / _META_FILE).write_text(
            json.dumps({"kind": self.kind, "partition_cols": parts, "format": 1}) + "\n"
        )
        for sub, table in (("entries", entries), ("codes", codes)):
            table = table.replace_schema_metadata({"toolkit.kind": self.kind})
            if table.num_rows == 0:
                if not _has_parquet(root / sub):  # the schema, for every reader
                    (root / sub).mkdir(parents=True, exist_ok=True)
                    pq.write_table(table.drop_columns(parts), root / sub / "part-empty.parquet")
                continue
            ds.write_dataset(
                table,
                root / sub,
                format="parquet",
                partitioning=parts or None,
                partitioning_flavor="hive" if parts else None,
                basename_template=basename_template or "part-{i}.parquet",
                existing_data_behavior="overwrite_or_ignore",
                max_rows_per_group=ROWS_PER_GROUP,
                min_rows_per_group=min(ROWS_PER_GROUP, max(table.num_rows, 1)),
                create_dir=True,
            )
        return root

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
        root = Path(path)
        meta_path = root / _META_FILE
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if not meta and not _has_parquet(root / "entries"):
            raise ConfigError(f"{root} is not an exported Parquet dataset (no entries/ folder)")
        tables = {}
        for sub in ("entries", "codes"):
            folder = root / sub
            if not _has_parquet(folder):
                tables[sub] = None
                continue
            keys = _hive_keys(folder)
            dataset = ds.dataset(
                folder,
                format="parquet",
                partitioning=ds.partitioning(
                    pa.schema([(k, pa.string()) for k in keys]), flavor="hive"
                )
                if keys
                else None,
            )
            tables[sub] = dataset.to_table()
        kind: Kind = meta.get("kind") or _kind_of(
            tables["entries"].column_names if tables["entries"] is not None else []
        )
        entries_schema, codes_schema = _file_schemas(kind)
        empty = cls.empty(kind)
        return cls(
            empty.entries
            if tables["entries"] is None
            else _from_arrow(tables["entries"], entries_schema, drop=_DERIVED),
            empty.codes
            if tables["codes"] is None
            else _from_arrow(
                tables["codes"],
                codes_schema,
                drop=[c for c in tables["codes"].column_names if c not in codes_schema.names],
            ),
            kind=kind,
        )

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
        try:
            "".encode(encoding)
        except LookupError:
            raise ConfigError(f"unknown encoding {encoding!r}") from None
        root = claim_target(path, overwrite=overwrite)
        root.mkdir(parents=True, exist_ok=True)
        entries_schema, codes_schema = _file_schemas(self.kind)
        for name, frame, schema in (
            ("entries", self.entries, entries_schema),
            ("codes", self.codes, codes_schema),
        ):
            table = _to_arrow(frame, schema)
            for i, field in enumerate(table.schema):
                if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
                    joined = pc.binary_join(table[field.name], _TAG_SEPARATOR)
                    table = table.set_column(i, field.name, joined)
                elif pa.types.is_timestamp(field.type):
                    table = table.set_column(i, field.name, _iso_text(table[field.name]))
            sink = pa.BufferOutputStream()
            pa_csv.write_csv(table, sink)
            data = sink.getvalue().to_pybytes()
            if encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
                try:
                    data = data.decode("utf-8").encode(encoding)
                except UnicodeEncodeError as exc:
                    raise ConfigError(
                        f"{name}.csv: {encoding} cannot encode {exc.object[exc.start:exc.end]!r};"
                        " use utf-8 or utf-8-sig"
                    ) from None
            (root / f"{name}.csv").write_bytes(data)
        return root

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
        target = claim_target(path, overwrite=overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        with pd.ExcelWriter(target, engine="openpyxl") as writer:
            for name, frame in (("entries", self.entries), ("codes", self.codes)):
                out = frame.copy()
                for col in out.columns:
                    if isinstance(out[col].dtype, pd.DatetimeTZDtype):
                        out[col] = out[col].dt.tz_convert("UTC").dt.tz_localize(None)
                    elif isinstance(out[col].dtype, pd.ArrowDtype) and pa.types.is_list(
                        out[col].dtype.pyarrow_dtype
                    ):
                        out[col] = out[col].map(
                            lambda v: None if v is None else _TAG_SEPARATOR.join(v)
                        )
                out.to_excel(writer, sheet_name=name, index=False)
        return target

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
        root = Path(path)
        header = (root / "entries.csv").open(encoding="utf-8").readline()
        kind = kind or _kind_of(header.strip().replace('"', "").split(","))
        entries_schema, codes_schema = _file_schemas(kind)
        frames = []
        for name, schema in (("entries", entries_schema), ("codes", codes_schema)):
            types = {f.name: pa.string() if pa.types.is_list(f.type) else f.type for f in schema}
            table = pa_csv.read_csv(
                root / f"{name}.csv",
                parse_options=pa_csv.ParseOptions(newlines_in_values=True),
                convert_options=pa_csv.ConvertOptions(
                    column_types=types,
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=False,
                ),
            )
            for field in schema:
                if pa.types.is_list(field.type) and field.name in table.column_names:
                    text = table[field.name]
                    split = pc.split_pattern(text, _TAG_SEPARATOR)
                    lists = pc.if_else(pc.equal(text, ""), pc.list_slice(split, 0, 0), split)
                    i = table.schema.get_field_index(field.name)
                    table = table.set_column(i, field.name, lists)
            frames.append(_from_arrow(table, schema))
        return cls(frames[0], frames[1], kind=kind)

    def _repr_html_(self, head: int = 5) -> str:
        """Jupyter's view: counts and the date range, then the first rows of each table.

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
        for name, frame in (("entries", e), ("codes", self.codes)):
            shown = min(head, len(frame))
            parts.append(f"<p><code>.{name}</code>: first {shown} of {len(frame)}</p>")
            parts.append(frame.head(head).to_html(max_cols=20, index=False))
        return "\n".join(parts)
