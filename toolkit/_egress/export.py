"""The result of an export: two typed Arrow tables, their pandas views, and their files.

``.entries`` and ``.codes`` are pandas views of the Arrow tables, made on first use; assign a
frame to change a table (``ex.entries = ex.entries.assign(hours=...)``).

The files of an export: a Parquet dataset, a CSV folder, an Excel workbook, and back.
:class:`Export` is the public face; this module writes and reads its two Arrow tables with
pyarrow (types: docs/toolkit.md). :func:`claim_target` refuses to write over data unless asked
(``overwrite=True``).
"""

from __future__ import annotations

import html
import importlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, cast

import numpy as np
import orjson
import pandas as pd
import pandera.errors
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from toolkit._core.dtypes import TEXT
from toolkit._egress.flatten import (
    DAY_TYPE,
    UNKNOWN_FIELDS,
    Kind,
    Raw,
    dumps_records,
    parse_answer,
    to_frame,
)
from toolkit._egress.schemas import MODELS, schema_failures
from toolkit.errors import ConfigError, ValidationError

if TYPE_CHECKING:
    import polars

#: The columns an entries preview leads with, per kind: date, timekeeper, client, matter and
#: time worked (the spec's field names), then the rest (``summary``, the ids) in table order.
PREVIEW_COLUMNS: dict[str, tuple[str, ...]] = {
    kind: (
        "workDate",
        "userId",
        f"{prefix}initiative.client.externalId",
        f"{prefix}initiative.externalId",
        "incrementDurationInSeconds",
        "summary",
    )
    for kind, prefix in (("export", ""), ("pending", "initiativeProps."))
}

#: Key of ``entries.attrs``: each unknown field's window, ``(releasedAfter, releasedOnOrBefore)``
#: (beside ``attrs["unknownFields"]``, its first entry's ``_id``).
UNKNOWN_FIELD_WINDOWS = "unknownFieldWindows"
#: Partitioning of ``Export.to_parquet`` by default: ``workMonth``, the month of ``workDate``.
DEFAULT_PARTITION_COLS: tuple[str, ...] = ("workMonth",)
#: Rows per Parquet row group (and the size a streamed export buffers before writing a file).
ROWS_PER_GROUP = 100_000

_META_FILE = "_toolkit_export.json"
_TAG_SEPARATOR = ";"
_OUR_FILES = ("entries", "codes", _META_FILE, "entries.csv", "codes.csv")

T = TypeVar("T")


class Tables(NamedTuple, Generic[T]):
    """An export's two tables in another library's form: unpack, or read them by name."""

    entries: T
    codes: T


class Export:
    """Typed tables of one export: ``entries`` (one row per entry) and ``codes``.

    ``codes`` link to ``entries._id`` by ``entryId``; ``kind`` is ``"export"`` (v2 export form)
    or ``"pending"`` (release-pending detailed form).

    >>> from toolkit.testing import fake_pending_entries
    >>> ex = Export.from_records(fake_pending_entries(3, codes_per_entry=1), kind="pending")
    >>> ex.kind, len(ex), "initiativeProps.tags" in ex.entries
    ('pending', 3, True)
    """

    def __init__(
        self,
        entries: pd.DataFrame | pa.Table,
        codes: pd.DataFrame | pa.Table,
        kind: Kind = "export",
    ) -> None:
        """Wrap two flattened tables, as Arrow tables or pandas frames."""
        if kind not in MODELS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
        self.kind: Kind = kind
        self._tables: dict[str, pa.Table] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self._attrs: dict[str, Any] = {}
        self._set("entries", entries)
        self._set("codes", codes)

    def _set(self, name: str, table: pd.DataFrame | pa.Table) -> None:
        """Hold an Arrow table (its frame made on use) or a frame (converted on use)."""
        if isinstance(table, pa.Table):
            self._tables[name] = table
            self._frames.pop(name, None)
            found = (table.schema.metadata or {}).get(UNKNOWN_FIELDS.encode())
            if name == "entries":
                self._attrs = {UNKNOWN_FIELDS: json.loads(found)} if found else {}
        else:
            self._frames[name] = table
            self._tables.pop(name, None)
            if name == "entries":
                self._attrs = cast("dict[str, Any]", table.attrs)

    def _frame(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            frame = to_frame(self._tables[name])
            if name == "entries":  # one dict: what is noted later shows on the frame too
                frame.attrs.update(self._attrs)
                self._attrs = cast("dict[str, Any]", frame.attrs)
            self._frames[name] = frame
        return self._frames[name]

    def _table(self, name: str) -> pa.Table:
        table = self._tables.get(name)
        return table if table is not None else from_frame(self._frames[name], self.kind, name)

    @property
    def entries(self) -> pd.DataFrame:
        """One row per entry, as pandas (a view of the Arrow table, made on first use)."""
        return self._frame("entries")

    @entries.setter
    def entries(self, frame: pd.DataFrame) -> None:
        self._set("entries", frame)

    @property
    def codes(self) -> pd.DataFrame:
        """One row per (entry, code), as pandas (a view of the Arrow table)."""
        return self._frame("codes")

    @codes.setter
    def codes(self, frame: pd.DataFrame) -> None:
        self._set("codes", frame)

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]], kind: Kind = "export") -> Export:
        """Flatten parsed JSON records.

        Args:
            records: Entries in the export form (``kind="export"``) or detailed form.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export: its ``entries`` (one row per entry) and ``codes`` (one row per entry and
            code) in the dtypes of :mod:`toolkit.schemas`, unknown fields kept as columns.

        >>> from toolkit.testing import fake_export_entry, fake_pending_entry
        >>> len(Export.from_records([fake_export_entry(codes=5)]).codes)
        5
        >>> entries = Export.from_records([fake_export_entry(codes=2, initiative=None)]).entries
        >>> entries["initiative.client.externalId"].isna().tolist()
        [True]
        >>> pending = Export.from_records([fake_pending_entry(tags=["pinned"], codes=0)], "pending")
        >>> pending.entries["initiativeProps.tags"].tolist(), len(pending.codes)
        ([['pinned']], 0)
        """
        return cls.from_json(dumps_records(records, kind), kind=kind)

    @classmethod
    def from_json(cls, raw: Raw, kind: Kind = "export") -> Export:
        """Parse and flatten a response body (a JSON array) straight into Arrow.

        Args:
            raw: The body, as bytes or text.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export.

        >>> len(Export.from_json(b'[{"_id": "e1", "codes": []}]'))
        1
        """
        if kind not in MODELS:
            raise ConfigError(f"kind must be 'export' or 'pending', not {kind!r}")
        return cls(*parse_answer(raw, kind), kind=kind)

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
        return cls.from_json(b"[]", kind=kind)

    @classmethod
    def concat(cls, exports: Iterable[Export]) -> Export:
        """Concatenate exports (e.g. windows); an entry found in several keeps the row and the codes
        of the last export holding it.

        Args:
            exports: Exports of one kind, oldest first.

        Returns:
            One export.

        >>> from toolkit.testing import fake_export_entry
        >>> a = Export.from_records([fake_export_entry(_id="e1", codes=1)])
        >>> b = Export.from_records([fake_export_entry(_id="e1", codes=2)])
        >>> len(Export.concat([a, b]).codes)
        2
        """
        parts = list(exports)
        if not parts:
            raise ConfigError("Export.concat needs at least one export")
        kinds = {p.kind for p in parts}
        if len(kinds) > 1:
            raise ConfigError(f"cannot concatenate exports of different kinds: {sorted(kinds)}")
        tables = [
            [p._table(n).replace_schema_metadata(None) for p in parts] for n in ("entries", "codes")
        ]
        entries, codes = _concat(tables[0]), _concat(tables[1])
        ids = entries["_id"]
        if pc.count_distinct(ids).as_py() < len(ids):
            source = np.repeat(np.arange(len(parts)), [t.num_rows for t in tables[0]])
            rows = pa.table({"_id": ids.combine_chunks(), "i": pa.array(np.arange(len(ids)))})
            keep = np.sort(rows.group_by("_id", use_threads=False).aggregate([("i", "max")])[1])
            entries = entries.take(keep)
            at = pc.index_in(codes["entryId"], value_set=entries["_id"].combine_chunks())
            owner: Any = pa.array(source[keep]).take(at)
            code_source = np.repeat(np.arange(len(parts)), [t.num_rows for t in tables[1]])
            mine: Any = pc.equal(owner, pa.array(code_source)).fill_null(True)
            codes = codes.filter(mine)
        result = cls(entries, codes, kind=parts[0].kind)
        for p in reversed(parts):  # the first export naming a field gives its entry and window
            for key in (UNKNOWN_FIELDS, UNKNOWN_FIELD_WINDOWS):
                if p._attrs.get(key):
                    result._attrs.setdefault(key, {}).update(p._attrs[key])
        if any("windows" in p._attrs for p in parts):  # windowed exports (fetch)
            result._attrs["windows"] = [w for p in parts for w in p._attrs.get("windows", [])]
            result._attrs["split"] = sum(p._attrs.get("split", 0) for p in parts)
        return result

    def codes_wide(self) -> pd.DataFrame:
        """One row per entry, one column per code type (named by its ``externalId``, ordered by
        first position) holding the ``externalId`` of the entry's first code of that type.

        Returns:
            A frame indexed by ``_id`` (the order of :attr:`entries`), ``str`` columns.

        >>> from toolkit.testing import fake_export_entries
        >>> Export.from_records(fake_export_entries(2)).codes_wide().shape
        (2, 3)
        """
        index = pd.Index(self.entries["_id"], name="_id")
        codes = self.codes
        kept = codes.loc[
            codes["code.type.externalId"].notna(),
            ["entryId", "position", "code.type.externalId", "code.externalId"],
        ]
        if kept.empty:
            return pd.DataFrame(index=index)
        kept = kept.sort_values(["position"], kind="stable")
        order = pd.unique(kept["code.type.externalId"])
        kept = kept.drop_duplicates(["entryId", "code.type.externalId"], keep="first")
        wide = kept.pivot(index="entryId", columns="code.type.externalId", values="code.externalId")
        wide = wide.reindex(index=index, columns=order)
        wide.columns = pd.Index(list(order))
        return wide.astype(TEXT)

    def validate(self) -> Export:
        """Check both tables against their pandera models, collecting every failure.

        Returns:
            ``self``; raises :class:`~toolkit.errors.ValidationError` with ``.failure_cases``.

        >>> len(Export.empty().validate())
        0
        """
        failures = []
        for (table, id_col), schema in zip(
            (("entries", "_id"), ("codes", "entryId")), MODELS[self.kind], strict=True
        ):
            frame = self._frame(table)
            try:
                schema.validate(frame, lazy=True)
            except pandera.errors.SchemaErrors as exc:
                word = "{}: failed {} with {!r}".format  # column, check, value
                failures.append(schema_failures(exc, frame, table, id_col, word))
        if failures:
            cases = pd.concat(failures, ignore_index=True)
            raise ValidationError(f"{len(cases)} problem(s) in the {self.kind} tables", cases)
        return self

    def preview(self, n: int = 5) -> pd.DataFrame:
        """The first entries as a notebook shows them: date, timekeeper, client, matter and
        ``hours`` (``incrementDurationInSeconds`` / 3600, shown here only) first, then the rest.

        Args:
            n: How many entries.

        Returns:
            A frame of the first ``n`` entries, columns reordered, with ``hours``.

        >>> Export.empty().preview().columns[:3].tolist()
        ['workDate', 'userId', 'initiative.client.externalId']
        """
        head = _head(self, "entries", n)
        first = [c for c in PREVIEW_COLUMNS[self.kind] if c in head]
        shown = head[first + [c for c in head.columns if c not in first]].copy()
        if "incrementDurationInSeconds" in shown:
            at = shown.columns.get_loc("incrementDurationInSeconds")
            hours = (shown["incrementDurationInSeconds"] / 3600).round(2)
            shown.insert(int(at), "hours", hours)  # type: ignore[arg-type]
        return shown

    def __len__(self) -> int:
        """Number of entries."""
        return _rows(self, "entries")

    def _facts(self) -> dict[str, str]:
        """Rows, date range, users, initiatives and hours as text, from the Arrow tables."""
        e = self._table("entries")
        facts = {"entries": f"{e.num_rows:,}", "codes": f"{_rows(self, 'codes'):,}"}
        if e.num_rows and "workDate" in e.column_names and e["workDate"].null_count < e.num_rows:
            low, high = pc.min_max(e["workDate"]).values()
            facts["workDate"] = f"{low.as_py():%Y-%m-%d}..{high.as_py():%Y-%m-%d}"
        init = PREVIEW_COLUMNS[self.kind][3]  # the matter: initiative.externalId
        for name, column in (("users", "userId"), ("initiatives", init)):
            if e.num_rows and column in e.column_names:
                facts[name] = f"{pc.count_distinct(e[column]).as_py():,}"
        if e.num_rows and "incrementDurationInSeconds" in e.column_names:
            seconds = float(pc.sum(e["incrementDurationInSeconds"]).as_py() or 0)
            facts["hours"] = f"{seconds / 3600:,.1f}"
        return facts

    def __repr__(self) -> str:
        """A one-line summary: kind, rows, date range, users, initiatives, hours."""
        facts = "".join(f", {k}={v}" for k, v in self._facts().items())
        return f"Export(kind={self.kind!r}{facts})"

    def to_arrow(self, *, partition_cols: Sequence[str] = ()) -> Tables[pa.Table]:
        """The two tables as typed Arrow tables (the files' types); :meth:`from_arrow` reverses.

        Args:
            partition_cols: Columns appended as :meth:`to_parquet` does (``workMonth`` derived)
                and copied onto each code from its entry; a column the entries hold already is
                kept as it is, and any other name is refused.

        Returns:
            :class:`Tables` of ``pyarrow.Table``.

        >>> Export.empty().to_arrow(partition_cols=["workMonth"]).codes.column_names[-1]
        'workMonth'
        """
        entries, codes, parts = self._table("entries"), self._table("codes"), list(partition_cols)
        for col in parts:
            if col in entries.column_names:
                continue
            if col != "workMonth":
                raise ConfigError(
                    f"cannot partition by {col!r}: not a column of the entries"
                    " (nor 'workMonth', the month of workDate)"
                )
            entries = entries.append_column(
                "workMonth", pc.strftime(entries["workDate"], format="%Y-%m")
            )
        if parts:
            at = pc.index_in(codes["entryId"], value_set=entries["_id"].combine_chunks())
            for col in parts:
                codes = codes.drop_columns([col]) if col in codes.column_names else codes
                codes = codes.append_column(col, entries[col].take(at))
        return Tables(entries, codes)

    def to_polars(self) -> Tables[polars.DataFrame]:
        """The two tables as Polars frames (from :meth:`to_arrow`); Polars is optional.

        Returns:
            :class:`Tables` of ``polars.DataFrame``.

        >>> str(Export.empty().to_polars().entries.schema["workDate"])
        "Datetime(time_unit='us', time_zone=None)"
        """
        try:
            pl = importlib.import_module("polars")
        except ImportError:
            raise ConfigError(
                "Export.to_polars needs Polars, an optional dependency: pip install polars"
            ) from None
        return Tables(*(pl.from_arrow(table) for table in self.to_arrow()))

    @classmethod
    def from_arrow(cls, entries: pa.Table, codes: pa.Table, kind: Kind = "export") -> Export:
        """Build an export from Arrow tables as stored, cast back, partition columns dropped.

        Args:
            entries: The entries table.
            codes: The codes table.
            kind: ``"export"`` or ``"pending"``.

        Returns:
            The export.

        >>> len(Export.from_arrow(*Export.empty().to_arrow(partition_cols=["workMonth"])))
        0
        """
        return cls(*as_stored(entries, codes, kind), kind=kind)

    def to_parquet(
        self,
        path: str | os.PathLike[str],
        partition_cols: Sequence[str] | None = None,
        *,
        overwrite: bool = False,
        basename_template: str | None = None,
    ) -> Path:
        """Write ``path/entries/`` and ``path/codes/``, hive-partitioned alike, from Arrow.

        Beside ``path/entries/`` and ``path/codes/``, a metadata file keeps the kind and the
        partition columns.

        Args:
            path: The dataset folder (created if needed).
            partition_cols: Entries columns to partition by; ``None`` means ``workMonth``.
            overwrite: Replace an earlier export at ``path`` (else data there is refused).
            basename_template: File name template with ``{i}``; given, files are added.

        Returns:
            The dataset folder.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     len(Export.read_parquet(Export.empty().to_parquet(tmp)))
        0
        """
        root = Path(path)
        parts = list(DEFAULT_PARTITION_COLS if partition_cols is None else partition_cols)
        entries, codes = self.to_arrow(partition_cols=parts)
        if basename_template is None:
            claim_target(root, overwrite=overwrite)
        root.mkdir(parents=True, exist_ok=True)
        (root / _META_FILE).write_text(
            json.dumps({"kind": self.kind, "partition_cols": parts, "format": 1}) + "\n"
        )
        for sub, table in (("entries", entries), ("codes", codes)):
            table = _pandas_metadata(
                table.replace_schema_metadata({"toolkit.kind": str(self.kind)})
            )
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
                min_rows_per_group=min(ROWS_PER_GROUP, table.num_rows),
            )
        return root

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str]) -> Export:
        """Load a dataset written by :meth:`to_parquet`, with the documented types.

        The entries, the codes and the kind come back, each table with its types.

        Args:
            path: The dataset folder (holding ``entries/`` and ``codes/``).

        Returns:
            The export.

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
        found: list[pa.Table | None] = [None, None]
        hive = ds.HivePartitioning.discover(infer_dictionary=True)  # partition values as text
        for i, sub in enumerate(("entries", "codes")):
            if _has_parquet(root / sub):
                data = ds.dataset(root / sub, format="parquet", partitioning=hive).to_table()
                text = [
                    pa.field(f.name, pa.string()) if pa.types.is_dictionary(f.type) else f
                    for f in data.schema
                ]
                found[i] = data.cast(pa.schema(text))
        kind: Kind = meta.get("kind") or _kind_of(found[0].column_names if found[0] else [])
        empty = (schema.empty_table() for schema in empty_schemas(kind))
        entries, codes = (t if t is not None else e for t, e in zip(found, empty, strict=True))
        return cls(*as_stored(entries, codes, kind), kind=kind)

    def to_csv(
        self, path: str | os.PathLike[str], *, encoding: str = "utf-8", overwrite: bool = False
    ) -> Path:
        """Write ``path/entries.csv`` and ``path/codes.csv`` (tags joined with ``;``).

        Written from Arrow: times as ISO 8601 text in UTC, ``workDate`` as ``YYYY-MM-DD``.

        Args:
            path: The folder (created if needed).
            encoding: Text encoding; ``"utf-8-sig"`` adds the byte-order mark Excel needs.
            overwrite: Replace an earlier export in ``path``.

        Returns:
            The folder.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Export.read_csv(Export.empty().to_csv(tmp, encoding="utf-8-sig")).kind
        'export'
        """
        entries, codes = self.to_arrow()
        try:
            "".encode(encoding)
        except LookupError:
            raise ConfigError(f"unknown encoding {encoding!r}") from None
        root = claim_target(path, overwrite=overwrite)
        root.mkdir(parents=True, exist_ok=True)
        for name, table in (("entries", entries), ("codes", codes)):
            for i, field in enumerate(table.schema):
                column: Any = table[field.name]
                if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
                    column = pc.binary_join(column, _TAG_SEPARATOR)
                elif field.name == "workDate":
                    column = pc.strftime(column, format="%Y-%m-%d")
                elif pa.types.is_timestamp(field.type):  # ISO 8601, only the fraction digits needed
                    text = pc.strftime(
                        pc.cast(column, pa.timestamp("us", tz="UTC")), format="%Y-%m-%dT%H:%M:%S"
                    )
                    column = pc.replace_substring_regex(
                        text, pattern=r"\.?0*$", replacement="Z", max_replacements=1
                    )
                table = table.set_column(i, field.name, column)
            sink = pa.BufferOutputStream()
            pa_csv.write_csv(table.replace_schema_metadata(None), sink)
            data = sink.getvalue().to_pybytes()
            if encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
                try:
                    data = data.decode("utf-8").encode(encoding)
                except UnicodeEncodeError as exc:
                    raise ConfigError(
                        f"{name}.csv: {encoding} cannot encode {exc.object[exc.start : exc.end]!r};"
                        " use utf-8 or utf-8-sig"
                    ) from None
            (root / f"{name}.csv").write_bytes(data)
        return root

    def to_excel(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write one ``.xlsx`` workbook, a sheet per table; needs ``openpyxl``.

        Written from the pandas views: times in UTC without a zone, tags joined with ``;``.

        Args:
            path: The workbook file.
            overwrite: Replace an existing file.

        Returns:
            The file.

        >>> import tempfile, os
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     out = Export.empty().to_excel(os.path.join(tmp, "x.xlsx"))
        ...     sorted(pd.read_excel(out, sheet_name=None))
        ['codes', 'entries']
        """
        frames = (("entries", self.entries), ("codes", self.codes))
        target = claim_target(path, overwrite=overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        with pd.ExcelWriter(target, engine="openpyxl") as writer:
            for name, frame in frames:
                out = frame.copy()
                for col in out.columns:
                    dtype = out[col].dtype
                    if isinstance(dtype, pd.DatetimeTZDtype):
                        out[col] = out[col].dt.tz_convert("UTC").dt.tz_localize(None)
                    elif isinstance(dtype, pd.ArrowDtype) and pa.types.is_list(dtype.pyarrow_dtype):
                        out[col] = out[col].map(
                            lambda v: None if v is None else _TAG_SEPARATOR.join(v)
                        )
                out.to_excel(writer, sheet_name=name, index=False)
        return target

    @classmethod
    def read_csv(cls, path: str | os.PathLike[str], kind: Kind | None = None) -> Export:
        """Load a folder written by :meth:`to_csv`, with the documented types.

        The entries, the codes and the kind come back, each table with its types.

        Args:
            path: The folder holding ``entries.csv`` and ``codes.csv``.
            kind: ``"export"`` or ``"pending"``; guessed from the columns if omitted.

        Returns:
            The export.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     len(Export.read_csv(Export.empty().to_csv(tmp)))
        0
        """
        root = Path(path)
        header = (root / "entries.csv").open(encoding="utf-8").readline()
        kind = kind or _kind_of(header.strip().replace('"', "").split(","))
        tables = []
        for name, schema in zip(("entries", "codes"), empty_schemas(kind), strict=True):
            types = {f.name: pa.string() if pa.types.is_list(f.type) else f.type for f in schema}
            table = pa_csv.read_csv(
                root / f"{name}.csv",
                parse_options=pa_csv.ParseOptions(newlines_in_values=True),
                convert_options=pa_csv.ConvertOptions(
                    column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False
                ),
            )
            for field in schema:
                if pa.types.is_list(field.type) and field.name in table.column_names:
                    text = table[field.name]
                    split = pc.split_pattern(text, _TAG_SEPARATOR)  # type: ignore[call-overload]  # stubs: takes a ChunkedArray too
                    lists = pc.if_else(
                        pc.equal(text, pa.scalar("")), pc.list_slice(split, 0, 0), split
                    )
                    table = table.set_column(
                        table.schema.get_field_index(field.name), field.name, lists
                    )
            tables.append(typed(table, kind, name))
        return cls(tables[0], tables[1], kind=kind)

    def _repr_html_(self, head: int = 5) -> str:
        """Jupyter's view: counts and the date range, then the first rows of each table."""
        facts = self._facts()
        if "workDate" in facts:
            facts["workDate from"], facts["workDate to"] = facts.pop("workDate").split("..")
        parts = [
            f"<p><b>Export</b> ({html.escape(self.kind)})</p>",
            pd.DataFrame({"value": facts}).to_html(),
        ]
        for name, frame, total in (
            ("entries", self.preview(head), len(self)),  # date, timekeeper, client... first
            ("codes", _head(self, "codes", head), _rows(self, "codes")),
        ):
            shown = min(head, total)
            parts.append(f"<p><code>.{name}</code>: first {shown} of {total}</p>")
            parts.append(frame.head(head).to_html(max_cols=20, index=False))
        return "\n".join(parts)


def _concat(tables: list[pa.Table]) -> pa.Table:
    """Tables one after another; a column typed apart in two (an unknown field) becomes text."""
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        names = [name for name, _ in {(f.name, f.type) for t in tables for f in t.schema}]
        mixed = {n for n in names if names.count(n) > 1}  # a name of two types
        as_text = []
        for t in tables:  # as flatten keeps a field whose JSON types mix: JSON text
            for n in mixed & set(t.column_names):
                text = [None if v is None else orjson.dumps(v).decode() for v in t[n].to_pylist()]
                t = t.set_column(t.schema.get_field_index(n), n, pa.array(text, pa.string()))
            as_text.append(t)
        return pa.concat_tables(as_text, promote_options="permissive")


def _rows(export: Export, name: str) -> int:
    table = export._tables.get(name)
    return table.num_rows if table is not None else len(export._frames[name])


def _head(export: Export, name: str, n: int) -> pd.DataFrame:
    """The first ``n`` rows as pandas, without converting the whole Arrow table."""
    frame = export._frames.get(name)
    return frame.head(n) if frame is not None else to_frame(export._tables[name].slice(0, n))


@cache
def empty_schemas(kind: Kind) -> tuple[pa.Schema, pa.Schema]:
    """The schemas of the two tables: those of an empty answer."""
    entries, codes = parse_answer(b"[]", kind)
    return entries.schema, codes.schema


def _work_date(column: pa.ChunkedArray[Any]) -> pa.ChunkedArray[Any]:
    """``workDate`` as naive midnight ``timestamp[us]`` (from text, a zoned time or ``date32``)."""
    if pa.types.is_string(column.type):  # a hive partition value: "2026-11-02 00:00:00"
        column = pc.cast(column, DAY_TYPE)
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = cast("pa.ChunkedArray[Any]", pc.local_timestamp(column))
    return cast("pa.ChunkedArray[Any]", pc.cast(pc.cast(column, pa.date32(), safe=False), DAY_TYPE))


def typed(table: pa.Table, kind: Kind, table_name: str, drop: Iterable[str] = ()) -> pa.Table:
    """A table cast to its schema's types, the spec's columns first, the others at the end."""
    schema = empty_schemas(kind)[table_name == "codes"]
    table = table.drop_columns([c for c in drop if c in table.column_names])
    held = [f for f in schema if f.name in table.column_names]
    columns = [
        _work_date(table[f.name]) if f.name == "workDate" else table[f.name].cast(f.type)
        for f in held
    ]
    extra = [n for n in table.column_names if n not in schema.names]
    return pa.table([*columns, *(table[n] for n in extra)], names=[f.name for f in held] + extra)


def as_stored(entries: pa.Table, codes: pa.Table, kind: Kind) -> tuple[pa.Table, pa.Table]:
    """Tables as written (``to_arrow(partition_cols=...)``, Parquet, Delta) cast back to their
    types: ``workMonth`` and the partition columns copied onto the codes dropped."""
    known = set(empty_schemas(kind)[1].names)  # made once a process
    drop = [c for c in codes.column_names if c not in known]
    return typed(entries, kind, "entries", ["workMonth"]), typed(codes, kind, "codes", drop)


def from_frame(frame: pd.DataFrame, kind: Kind, table_name: str) -> pa.Table:
    """A frame (an analyst's, or a view changed and assigned back) as a typed Arrow table.

    Its numbers are copied into Arrow's memory: converted from pandas they share numpy's, and
    an Arrow writer thread (``ds.write_dataset``, deltalake) that frees numpy memory needs the
    GIL, which it cannot take once the interpreter is exiting: the process aborted
    (``terminate called without an active exception``) after its work was done (issue 39
    finding 8).
    """
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = pa.table(
        [c.combine_chunks() if pa.types.is_primitive(c.type) else c for c in table.columns],
        schema=table.schema,
    )
    missing = [
        n for n in empty_schemas(kind)[table_name == "codes"].names if n not in frame.columns
    ]
    if missing:
        raise ConfigError(f"column {missing[0]!r} is missing from the {table_name} table")
    return typed(table, kind, table_name)


def _pandas_metadata(table: pa.Table) -> pa.Table:
    """Attach the pandas metadata of the table's frame (list columns noted as ``object``)."""
    frame = to_frame(table.schema.empty_table())
    meta = pa.Schema.from_pandas(frame, preserve_index=False).metadata or {}  # has b"pandas"
    described = json.loads(meta[b"pandas"])
    for column in described["columns"]:
        if str(column.get("numpy_type", "")).startswith(("list<", "large_list<", "struct<")):
            column["numpy_type"] = "object"
    meta = {**meta, b"pandas": json.dumps(described).encode()}
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})


def _kind_of(columns: Iterable[str]) -> Kind:
    return "pending" if any(str(c).startswith("initiativeProps.") for c in columns) else "export"


def _has_parquet(folder: Path) -> bool:
    return folder.is_dir() and any(
        f.endswith(".parquet") for _, _, files in os.walk(folder) for f in files
    )


def claim_target(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Make sure an export may write to ``path``: new or empty, or ``overwrite`` (removes ours).

    Returns:
        The target path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     claim_target(tmp) == Path(tmp)
    True
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
