"""The plan: what an onboarding will do, record by record, before anything is sent.

Each record's call is compared with the journal's entry of it and gets one of :data:`ACTIONS`
(``send``, ``update``, ``retry``, ``deactivate``, ``unchanged``, ``missing``, ``invalid``,
``skipped``; see docs/toolkit.md). :func:`~toolkit._ingress.imports.onboard` sends exactly the
``send``, ``update``, ``retry`` and ``deactivate`` calls; :func:`failures` lists what still fails.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Literal, cast, get_args

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit._bulk.journal import Entry, Journal, Ledger, read_ledger
from toolkit._bulk.runner import Call
from toolkit._core.connection import Connection, Endpoint
from toolkit._core.failures import nullable_rows
from toolkit._core.frames import as_pandas, neighbours, text_arrow, unique_rows
from toolkit._core.memory import returning_pool
from toolkit._ingress.chunking import fresh_index, with_lines
from toolkit._ingress.models import TABLES
from toolkit._ingress.payloads import to_code_range_payloads, to_payloads
from toolkit._ingress.ranges import CodeRangePost, split
from toolkit._ingress.readers import TableFile, joined
from toolkit._ingress.validation import ImportSource, ValidationReport, columns_for, folder_sources
from toolkit._ingress.validation import validate as _validate
from toolkit._ingress.writer import html_rows, write_table
from toolkit.errors import ConfigError

#: table -> (endpoint, key column). In the spec's suggested import order.
#: The key column is the spec's id column (a code range's: its initiative's); the endpoint is
#: named after the table.
IMPORTS: dict[str, tuple[Endpoint, str]] = {
    table: (cast("Endpoint", f"import_{table}"), spec.id_column) for table, spec in TABLES.items()
}

#: What the plan does with a record.
Action = Literal[
    "send", "update", "retry", "deactivate", "unchanged", "missing", "invalid", "skipped"
]

#: Every action, in the order of the plan's counts.
ACTIONS: list[Action] = list(get_args(Action))

#: The dtype of an ``action`` column.
ACTION_DTYPE = pd.CategoricalDtype(ACTIONS)

#: The dtype of a ``table`` column of plan and result rows: a byte a row.
TABLE_DTYPE = pd.CategoricalDtype(list(TABLES))

#: The actions that cost a request.
SENDING: tuple[Action, ...] = ("send", "update", "retry", "deactivate")

#: Default share of the journal's active initiatives a mirror may deactivate.
DEACTIVATE_SHARE = 0.05

#: Rows turned into requests at a time: a plan and its run hold one batch of calls, not all.
BATCH = 10_000

_NOTHING: dict[str, Any] = {}


_FAILURE_COLUMNS = (
    "table externalId outcome httpStatus error failingSince lastFailed failures lastAccepted"
).split()


def table_calls(
    table: str,
    df: pd.DataFrame,
    code_range_post: CodeRangePost = "replace",
    null_semantic_type: str = "null",
) -> tuple[list[Call], list[list[Any]]]:
    """The calls of a checked frame, and the input row labels each call stands for.

    Args:
        table: an import table.
        df: its rows, checked (coerced to the spec's types).
        code_range_post: ``"add"`` sends a range over 2500 codes in parts (part k > 1 keyed
            ``"<initiative> [part k]"``); ``"replace"`` sends each range whole.
        null_semantic_type: ``"omit"`` sends a code type of another kind without
            ``semanticType`` (:func:`~toolkit._ingress.payloads.to_payloads`).

    Returns:
        ``(calls, rows)``: one call per record (per initiative, or part, for code ranges) and
        the labels of the rows each carries.

    Example:
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
        ...                    "codeExternalId": ["L1", "L2"]})
        >>> calls, rows = table_calls("code_ranges", df)
        >>> calls[0].json, rows
        ({'codeExternalIds': ['L1', 'L2']}, [[0, 1]])
    """
    endpoint, key = IMPORTS[table]  # a table of IMPORTS: read_source and import_table refuse others
    if table == "code_ranges":
        calls, rows = [], []
        for initiative_id, payload, labels in to_code_range_payloads(df):
            ids = payload["codeExternalIds"]
            for k, part in enumerate(split(ids) if code_range_post == "add" else [ids], start=1):
                key = initiative_id if k == 1 else f"{initiative_id} [part {k}]"
                path = {"initiativeExternalId": initiative_id}
                calls.append(Call(endpoint, path, {"codeExternalIds": part}, key=key))
                rows.append(list(labels))
        return calls, rows
    payloads = to_payloads(table, df, null_semantic_type)
    # a 409 on an import: the service holds this externalId and keeps its version
    calls = [Call(endpoint, None, p, key=str(p.get(key)), conflict=True) for p in payloads]
    return calls, [[label] for label in df.index]


def call_batches(
    table: str,
    df: pd.DataFrame,
    code_range_post: CodeRangePost = "replace",
    size: int = BATCH,
    null_semantic_type: str = "null",
) -> Iterator[tuple[list[Call], list[list[Any]]]]:
    """:func:`table_calls` of ``size`` rows at a time (code ranges: whole initiatives), in order.

    The calls come in the order of :func:`table_calls` over the whole frame.

    Example:
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-2", "M-1"],
        ...                    "codeExternalId": ["L1", "L2", "L3"]})
        >>> [[(c.key, labels) for c, labels in zip(*batch)] for batch in
        ...  call_batches("code_ranges", df, size=1)]
        [[('M-1', [0, 2])], [('M-2', [1])]]
    """
    if table != "code_ranges" or "initiativeExternalId" not in df:
        for start in range(0, len(df), size):
            yield table_calls(
                table, df.iloc[start : start + size], code_range_post, null_semantic_type
            )
        return
    order, ordered = _first_seen(df["initiativeExternalId"])
    start = 0
    while start < len(df):  # a batch ends where an initiative does
        end = int(np.searchsorted(ordered, ordered[min(start + size, len(df)) - 1], "right"))
        yield table_calls(table, df.iloc[order[start:end]], code_range_post)
        start = end


def _first_seen(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``values`` grouped by value, the groups in first-seen order (the order
    of the calls), and each one's group number. Text without gaps is grouped by sorting, a few
    bytes a row, not by a hash table of every value.

    >>> [a.tolist() for a in _first_seen(pd.Series(["b", "a", "b", "c"], dtype="str"))]
    [[0, 2, 1, 3], [0, 0, 1, 2]]
    """
    text = text_arrow(values)
    if text is None or text.null_count or len(text) < 2:
        codes = pd.factorize(values)[0]
        order = np.argsort(codes, kind="stable")
        return order, codes[order]
    at = pc.sort_indices(text).to_numpy()  # stable: a group's positions in order
    ranked = text.take(at)
    new = np.ones(len(at), dtype=bool)
    new[1:] = pc.not_equal(*neighbours(ranked)).to_numpy()
    del ranked
    group = np.cumsum(new) - 1
    rank = np.empty(int(new.sum()), dtype=np.int64)  # each group by its first position
    rank[np.argsort(at[new], kind="stable")] = np.arange(len(rank))
    keys = rank[group]
    by = np.argsort(keys, kind="stable")
    return at[by], keys[by]


def read_source(source: Any) -> dict[str, pd.DataFrame | TableFile]:
    """The import tables of a source: a folder's files (:func:`folder_sources`, read a chunk at
    a time when asked) or ``{table: frame}``.

    Returns:
        ``{table: frame or file}``, each frame with a unique index.

    Example:
        >>> list(read_source({"clients": pd.DataFrame({"externalId": ["C-1"]})}))
        ['clients']
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_dir():
            raise ConfigError(f"{path} is not a folder")
        source = folder_sources(path)
    if isinstance(source, Mapping):
        unknown = set(source) - set(IMPORTS)
        if unknown:
            raise ConfigError(f"unknown table(s) {sorted(unknown)}; expected {list(IMPORTS)}")
        return {
            k: v if isinstance(v, TableFile) else unique_rows(as_pandas(v, k))
            for k, v in source.items()
            if v is not None
        }
    raise ConfigError(
        "source must be a folder or a mapping of table name -> frame "
        f"(pandas, Polars or PyArrow), not {type(source).__name__}"
    )


@dataclass
class TableCalls:
    """The requests a plan makes for one table, built a batch at a time when sent.

    Attributes:
        table: the import table.
        chunks: the checked rows the calls are built from (:func:`call_batches`), a chunk at
            a time (the source read again).
        actions: the action of each of the rows' calls, in order (its position in
            :data:`ACTIONS`, a byte a call).
        extra: calls with no source row (deactivations), sent last.
        code_range_post: ``"replace"`` or ``"add"``.
        null_semantic_type: the connection's ``"null"`` or ``"omit"`` (a code type of another
            kind sent without ``semanticType``; see :func:`table_calls`).
    """

    table: str
    chunks: Callable[[], Iterable[pd.DataFrame]]
    actions: bytearray
    extra: list[Call]
    code_range_post: CodeRangePost = "replace"
    null_semantic_type: str = "null"

    @property
    def requests(self) -> int:
        """How many requests the table sends."""
        return sum(self.actions.count(ACTIONS.index(a)) for a in SENDING) + len(self.extra)

    def calls(self) -> Iterator[tuple[list[Call], list[list[Any]]]]:
        """Every call of the rows (:func:`call_batches`) with their rows' labels, a batch at a
        time (a code range's rows grouped whole)."""
        chunks: Iterable[pd.DataFrame] = self.chunks()
        if self.table == "code_ranges":  # a range's rows grouped whole
            chunks = [joined(chunks)]
        for chunk in chunks:
            if len(chunk):
                yield from call_batches(
                    self.table, chunk, self.code_range_post, BATCH, self.null_semantic_type
                )
            del chunk  # not held while the next chunk is read

    def batches(self) -> Iterator[tuple[list[Call], list[list[Any]]]]:
        """The calls to send with the labels of their source rows, a batch at a time."""
        done = 0
        for calls, rows in self.calls():
            actions = self.actions[done : done + len(calls)]
            done += len(calls)
            keep = [i for i, a in enumerate(actions) if ACTIONS[a] in SENDING]
            if keep:
                yield [calls[i] for i in keep], [rows[i] for i in keep]
        if self.extra:
            yield self.extra, [[] for _ in self.extra]


@dataclass(repr=False)
class Plan:
    """What an onboarding will do, one row per record.

    The rows are held compactly (a byte of action per source row); :attr:`rows` builds the
    frame when first asked for, :meth:`write` a chunk at a time.

    Attributes:
        rows: ``table``, ``row``, ``line``, ``externalId``, ``action``, ``changed``
            (``{field: {"old": ..., "new": ...}}``), ``reason``, ``lastAccepted``, ``failingSince``.
        calls: per table, the requests to send.
        validation: the source's validation report.
        max_deactivate: the most initiatives a run of this plan may deactivate.
        active: initiatives the journal holds as active (for this customer).

    Example:
        >>> p = client.plan({"clients": clients})
        >>> p.to_frame()["action"].tolist(), p.refused is None, len(p)
        (['send', 'send', 'send'], True, 3)
    """

    parts: list[_Rows]
    calls: dict[str, TableCalls]
    validation: ValidationReport
    max_deactivate: int = 1
    active: int = 0

    @cached_property
    def rows(self) -> pd.DataFrame:
        """The plan's rows (built when first asked for)."""
        return self.select(ACTIONS)

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def chunks(self, size: int = BATCH) -> Iterator[pd.DataFrame]:
        """The rows as frames of at most ``size`` rows, in order (:attr:`rows` a piece at a time).

        Example:
            >>> [len(c) for c in client.plan({"clients": clients}).chunks(2)]
            [2, 1]
        """
        for part in self.parts:
            for start in range(0, len(part), size):
                yield part.frame(start, start + size)

    def select(self, actions: Iterable[str]) -> pd.DataFrame:
        """The rows whose action is one of ``actions`` (only they are built); none: the plan's
        columns without a row (as its first table's rows have them).

        Example:
            >>> client.plan({"clients": clients}).select(["update", "retry"]).empty
            True
        """
        wanted = [ACTIONS.index(a) for a in actions]  # type: ignore[arg-type]
        out: list[pd.DataFrame] = []
        for part in self.parts:
            for start in range(0, len(part), BATCH):  # only the batches that hold such rows
                mine = np.isin(part.action[start : start + BATCH], wanted)
                if mine.any():
                    out.append(part.frame(start, start + BATCH)[mine])
        # no such row: the columns, not the rows built
        none = _Rows("clients", pd.DataFrame(), pd.Series(dtype="string"), np.zeros(0, np.int8), {})
        out = out or [(self.parts[0] if self.parts else none).frame(0, 0)]
        return nullable_rows(pd.concat(out, ignore_index=True))

    def part(self, table: str) -> _Rows | None:
        """The compact rows of a table's source rows (the first part of the table: the journal's
        records its source lacks come after)."""
        return next((p for p in self.parts if p.table == table), None)

    def actions(self) -> pd.DataFrame:
        """``table`` and ``action`` of every row, in order: two bytes a row.

        Example:
            >>> client.plan({"clients": clients}).actions()["action"].tolist()
            ['send', 'send', 'send']
        """
        none, code = np.zeros(0, dtype=np.int8), TABLE_DTYPE.categories.get_loc
        tables = np.concatenate(
            [none, *(np.full(len(p), code(p.table), np.int8) for p in self.parts)]
        )
        actions = np.concatenate([none, *(p.action for p in self.parts)])
        return pd.DataFrame(
            {
                "table": pd.Categorical.from_codes(tables, dtype=TABLE_DTYPE),
                "action": pd.Categorical.from_codes(actions, dtype=ACTION_DTYPE),
            }
        )

    @property
    def counts(self) -> pd.DataFrame:
        """Rows per table and action (and ``requests``, the calls to send per table)."""
        actions = self.actions()
        counts = count_by_table(actions["table"], actions["action"], ACTIONS)
        counts["requests"] = [self.calls[str(t)].requests for t in counts.index]
        return counts

    @property
    def requests(self) -> int:
        """How many requests the plan sends."""
        return sum(t.requests for t in self.calls.values())

    @property
    def deactivations(self) -> int:
        """How many initiatives the plan deactivates."""
        return int((self.actions()["action"] == "deactivate").sum())

    @property
    def refused(self) -> str | None:
        """Why a run of this plan is refused (too many deactivations), or ``None``."""
        n = self.deactivations
        if n <= self.max_deactivate:
            return None
        return (
            f"the plan deactivates {n} initiatives, more than max_deactivate="
            f"{self.max_deactivate} (of {self.active} active in the journal); nothing was sent. "
            f"Check that the source is whole, or allow it with max_deactivate={n} "
            f"(--max-deactivate {n})"
        )

    def check(self) -> None:
        """Raise :class:`ConfigError` when a run of this plan must be refused (:attr:`refused`).

        Example:
            >>> client.plan({"clients": clients}).check()  # nothing deactivated: no error
        """
        if self.refused:
            raise ConfigError(self.refused)

    def to_frame(self) -> pd.DataFrame:
        """The plan's rows (a copy)."""
        return self.rows.copy()

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the rows to .csv, .xlsx or .parquet; ``changed`` as JSON text.

        Args:
            path: the file; its extension picks the format.

        Returns:
            The path written.

        Example:
            >>> client.plan({"clients": clients}).write(tmp / "plan.csv").name
            'plan.csv'
        """
        # CSV a chunk at a time, ``changed`` turned to JSON: the rows never all built
        return write_table(self.chunks() if self.parts else self.rows, path)

    def _headline(self) -> str:
        counts = self.actions()["action"].value_counts()
        parts = [f"{int(counts[a])} {a}" for a in ACTIONS if counts.get(a, 0)]
        head = f"Plan: {self.requests} request(s); " + (", ".join(parts) or "nothing")
        return head + (f"; REFUSED: {self.refused}" if self.refused else "")

    def __repr__(self) -> str:
        return f"{self._headline()}\n{self.counts.to_string()}"

    def _repr_html_(self) -> str:
        """Jupyter's view: counts per table and action, then the rows that are not unchanged."""
        parts = [f"<p><b>{html.escape(self._headline())}</b></p>", self.counts.to_html()]
        shown = self.select([a for a in ACTIONS if a != "unchanged"])
        parts += html_rows(shown, 50, "rows")
        hidden = len(self) - len(shown)
        if hidden:
            parts.append(f"<p>{hidden} unchanged row(s) not shown</p>")
        return "\n".join(parts)


def count_by_table(tables: Any, values: Any, categories: Sequence[str]) -> pd.DataFrame:
    """Rows per table (in the order of each one's first row) and value, by the categories'
    codes: a few bytes a row, no group of every row.

    Args:
        tables: each row's table (:data:`TABLE_DTYPE` or its names).
        values: each row's value, one of ``categories``.
        categories: the columns, in order.

    Returns:
        One row per table present (a ``table`` categorical index), one column per category.

    Example:
        >>> count_by_table(["codes", "clients", "codes"], ["send", "send", "retry"], ACTIONS)[
        ...     ["send", "retry"]].to_dict("index")
        {'codes': {'send': 1, 'retry': 1}, 'clients': {'send': 1, 'retry': 0}}
    """
    table = pd.Categorical(tables, dtype=TABLE_DTYPE).codes.astype(np.int16)
    code = pd.Categorical(values, dtype=pd.CategoricalDtype(list(categories))).codes
    n = len(categories)
    pairs = np.bincount(table * n + code, minlength=len(TABLE_DTYPE.categories) * n)
    present = np.flatnonzero(pairs.reshape(-1, n).sum(axis=1))
    seen = present[np.argsort([int(np.argmax(table == t)) for t in present])]
    return pd.DataFrame(
        pairs.reshape(-1, n)[seen],
        index=pd.CategoricalIndex(TABLE_DTYPE.categories[seen], dtype=TABLE_DTYPE, name="table"),
        columns=pd.Index(list(categories), dtype="str"),
    )


def _diff(old: Any, new: Any) -> dict[str, dict[str, Any]]:
    """The fields that differ between two payloads, with old and new values."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return {} if old == new else {"payload": {"old": old, "new": new}}
    return {
        k: {"old": old.get(k), "new": new.get(k)}
        for k in dict.fromkeys([*old, *new])
        if old.get(k) != new.get(k)
    }


def _ledger(journal: str | os.PathLike[str] | Journal | None) -> Ledger:
    if journal is None:
        return Ledger()
    if isinstance(journal, Journal):
        return journal.ledger
    return read_ledger(journal)


def _mine(conn: Connection, table: str, entries: Iterable[Entry]) -> list[Entry]:
    """The entries of one table of this connection's customer (and service)."""
    endpoint, ranges = IMPORTS[table][0], table == "code_ranges"  # a range's path: its key
    return [
        e
        for e in entries
        if e.endpoint == endpoint
        and e.url == conn.url(endpoint, **({"initiativeExternalId": e.key} if ranges else {}))
    ]


_TEXT = dict.fromkeys(["externalId", "reason", "lastAccepted", "failingSince"], "string")


@dataclass
class _Rows:
    """The plan's rows of one table's source rows, held compactly: the source's labels, each
    row's key and action (a byte), and the other columns only where a row has them. The rows of
    the journal's records the source lacks are held the same way, their labels missing (no row,
    no line)."""

    table: str
    source: pd.DataFrame  # the rows' file lines (its ``attrs``); its labels are the rows
    keys: pd.Series
    action: np.ndarray
    more: dict[int, dict[str, Any]]

    def __len__(self) -> int:
        return len(self.action)

    def frame(self, start: int, stop: int) -> pd.DataFrame:
        """The plan rows ``start:stop`` as a frame, ``line`` included: one per label of the
        source's index, in its order (``action``: positions in :data:`ACTIONS`; ``more``: the
        other columns by position).

        Plan rows in the plan's dtypes; ``row`` as ``Int64`` beside a source of whole labels."""
        index = self.source.index[start:stop]
        given = sorted(p for p in self.more if start <= p < stop)  # few, unless a journal
        whole = pd.api.types.is_integer_dtype(index.dtype)
        at = pd.RangeIndex(len(index))
        rows = pd.DataFrame(
            {
                "table": pd.Series(self.table, index=at, dtype=TABLE_DTYPE),  # a byte a row
                "row": index.astype("Int64" if whole else object),
                "externalId": self.keys.iloc[start:stop].to_numpy(),
                "action": pd.Categorical.from_codes(self.action[start:stop], dtype=ACTION_DTYPE),
            },
            index=at,
        )
        for col in ["changed", "reason", "lastAccepted", "failingSince"]:
            found = [self.more[p].get(col) for p in given]
            if col in _TEXT and all(v is None for v in found):  # one null Arrow column: no offsets
                rows[col] = pd.Series(pa.nulls(len(index), pa.large_string()), dtype="string")
                continue
            values = pd.Series(None, index=rows.index, dtype=object)
            values.iloc[[p - start for p in given]] = found
            rows[col] = values
        rows["changed"] = rows["changed"].where(rows["changed"].notna(), None)
        return nullable_rows(with_lines(rows.astype(_TEXT), self.source))

    def reason(self, p: int) -> Any:
        """The ``reason`` of the row at position ``p`` (``None`` when it has none)."""
        reason = self.more.get(p, _NOTHING).get("reason")
        return pd.NA if reason is None else reason


def held_children(
    table: str,
    frame: pd.DataFrame,
    bad: Mapping[str, Mapping[str, str]],
    held: Iterable[Any] = (),
    ranges: bool = True,
) -> dict[Any, str]:
    """The rows of a table held back because their parent is not stored, with the reason.

    ``bad`` is parent table -> id -> why it is not stored; with ``ranges``, a code range row is
    also held when another row of its range is.

    Returns:
        Label -> reason, for the rows newly held back.

    Example:
        >>> codes = pd.DataFrame({"codeTypeExternalId": ["T1", "T2"]})
        >>> held_children("codes", codes, {"code_types": {"T2": "is invalid"}})
        {1: "parent code_types 'T2' is invalid"}
    """
    held = set(held)
    out: dict[Any, str] = {}
    for col, parent in TABLES[table].references:  # never post a record whose parent failed
        if col not in frame or not bad.get(parent):
            continue
        for label, value in frame[col].astype("string").items():
            if label not in held and label not in out and str(value) in bad[parent]:
                out[label] = f"parent {parent} {str(value)!r} {bad[parent][str(value)]}"
    if ranges and table == "code_ranges" and (held or out) and "initiativeExternalId" in frame:
        inits = frame["initiativeExternalId"].astype("string")
        holding = {str(inits[label]) for label in [*held, *out]}
        for label, init in inits.items():
            if label not in held and label not in out and str(init) in holding:
                out[label] = "another row of this code range is not sent"
    return out


@returning_pool()
def plan(
    conn: Connection,
    source: ImportSource,
    *,
    journal: str | os.PathLike[str] | Journal | None = None,
    mirror: bool = False,
    columns: Mapping[str, str] | Mapping[str, Mapping[str, str]] | None = None,
    known: Mapping[str, Iterable[str]] | None = None,
    max_deactivate: int | None = None,
    code_range_post: CodeRangePost = "replace",
    validate: bool = True,
) -> Plan:
    """What onboarding ``source`` will do, record by record, against the journal; nothing is sent.

    Args:
        conn: the connection (its customer and URLs name the journal's records).
        source: a folder of import tables or ``{table: frame}``.
        journal: the journal of earlier runs (a path or an open :class:`Journal`).
        mirror: plan active initiatives the source lacks as ``deactivate``.
        columns: renames applied first, one mapping for every table or one per table.
        known: ids already in the service, per table, for the reference checks.
        max_deactivate: the most initiatives a run may deactivate (default 5%, at least 1).
        code_range_post: ``"replace"`` or ``"add"`` (see :mod:`toolkit._ingress.ranges`).
        validate: ``False`` plans the rows that fail validation too, their payloads built
            from the values as given (frames only): what the service then answers is theirs.

    A table's rows that are not sent are held back: the invalid ones (when ``validate``),
    ``invalid`` with their first three errors, and those whose parent is not sent, ``skipped``.

    Returns:
        The :class:`Plan`.

    Example:
        >>> p = client.plan("sample_data")
        >>> p.counts["send"].to_dict(), p.requests
        ({'clients': 20, 'initiatives': 62, 'code_types': 3, 'codes': 36, 'code_ranges': 41}, 126)
    """
    sources = read_source(source)
    report = _validate(**sources, known=known, columns=columns, code_range_post=code_range_post)
    ledger = _ledger(journal)
    entries = list(ledger.entries.values())
    parts: list[_Rows] = []
    calls: dict[str, TableCalls] = {}
    bad: dict[str, dict[str, str]] = {}  # table -> id -> action, of the records not sent
    active = sum(e.active for e in _mine(conn, "initiatives", entries))
    for table, (endpoint, _) in IMPORTS.items():
        if table not in sources:
            continue
        # every row's label, key and reference columns, and the file's line map: the other
        # columns are read again from the source, a chunk at a time, for the calls
        frame = report.results[table].frame
        id_col = TABLES[table].id_column  # a missing column: no keys
        keys = frame.get(id_col, pd.Series(pd.NA, frame.index)).astype("string")
        # the rows not sent: invalid ones (when validated), and those whose parent is not sent
        held: dict[Any, tuple[Action, str]] = {}
        errors = report.errors[report.errors["table"] == table]
        whole = errors[errors["row"].isna()]["message"].tolist()
        for label in report.bad_rows(table) if validate else []:
            msgs = errors[errors["row"] == label]["message"].tolist() or whole
            held[label] = ("invalid", "; ".join(str(m) for m in msgs[:3]))
        for label, why in held_children(table, frame, bad, held).items():
            held[label] = ("skipped", why)
        bad[table] = {str(keys[lb]): f"is {a}" for lb, (a, _) in held.items() if pd.notna(keys[lb])}
        at = frame.index.get_indexer(pd.Index(list(held))).tolist()
        keep = report.valid(table) if validate else np.ones(len(frame), dtype=bool)
        keep[at] = False
        calls_of = partial(report.valid_chunks, table, keep)
        if not validate:  # the rows as given, renamed: the plan's checks are the service's
            calls_of = partial(_as_given, sources[table], columns_for(table, columns), keep)
        form = conn.settings.null_semantic_type  # a code type's body: as the settings say
        todo = TableCalls(table, calls_of, bytearray(), [], code_range_post, form)
        row_action = np.full(len(frame), -1, dtype=np.int8)  # by position: ACTIONS
        row_more: dict[int, dict[str, Any]] = {}  # few, unless a journal
        unchanged = ACTIONS.index("unchanged")
        for call, positions in _planned_calls(todo, fresh_index(frame.index)):
            action, more = _against(ledger, call, conn.url(endpoint, **(call.path or {})))
            code = ACTIONS.index(action)
            todo.actions.append(code)
            for p in positions:  # a range in parts: the first part that is sent says
                if row_action[p] in (-1, unchanged):
                    row_action[p] = code
                    row_more.pop(p, None)  # the plan columns of this call, if any
                    if more is not _NOTHING:
                        row_more[p] = more
        for i, (action, reason) in zip(at, held.values(), strict=True):
            row_action[i], row_more[i] = ACTIONS.index(action), {"reason": reason}
        if (row_action < 0).any():
            raise AssertionError(f"{table}: a row neither held back nor planned")
        parts.append(_Rows(table, frame, keys, row_action, row_more))
        parts += _absent_rows(todo, frame, keys, _mine(conn, table, entries), mirror)
        calls[table] = todo
    limit = max_deactivate if max_deactivate is not None else max(1, int(active * DEACTIVATE_SHARE))
    return Plan(parts, calls, report, limit, active)


def _against(ledger: Ledger, call: Call, url: str) -> tuple[Action, dict[str, Any]]:
    """A call's action against the journal's entry of it, and the plan columns it adds
    (:data:`_NOTHING`, shared and never changed, when none)."""
    entry = ledger.get(url, call.key)
    if entry is None:
        return ("unchanged" if call.journal_id(url) in ledger.ids else "send"), _NOTHING
    more: dict[str, Any] = {"lastAccepted": entry.accepted_at, "failingSince": entry.failing_since}
    action: Action = "unchanged"
    if entry.failing:
        action = "retry"
        more["reason"] = f"{entry.failure} {entry.failures}x: {entry.error}"
    elif entry.accepted_id != call.journal_id(url):
        action = "update"
    if action != "unchanged" and entry.payload is not None:
        more["changed"] = _diff(entry.payload, call.json) or None
    return action, more


def _absent_rows(
    todo: TableCalls, frame: pd.DataFrame, keys: pd.Series, mine: list[Entry], mirror: bool
) -> list[_Rows]:
    """Plan rows of the journal's records of a table that its source lacks: ``missing``, or
    with ``mirror`` an active initiative's ``deactivate`` (its call added to ``todo.extra``)."""
    table, endpoint = todo.table, IMPORTS[todo.table][0]
    present = set(keys.dropna().astype(str)) if mine else set()
    absent = [e for e in mine if e.key not in present and e.payload is not None]
    if not absent:
        return []
    actions = np.zeros(len(absent), dtype=np.int8)
    more: dict[int, dict[str, Any]] = {}
    for p, entry in enumerate(absent):
        more[p] = {"lastAccepted": entry.accepted_at, "failingSince": entry.failing_since}
        action: Action
        if mirror and table == "initiatives" and entry.active:
            payload = {**(entry.payload or {}), "status": "inactive"}
            todo.extra.append(Call(endpoint, None, payload, key=entry.key, conflict=True))
            more[p]["changed"] = {"status": {"old": "active", "new": "inactive"}}
            action, reason = "deactivate", "absent from the source (mirror)"
        elif mirror and table == "initiatives":
            action, reason = "unchanged", "absent from the source, inactive"
        else:
            action, reason = "missing", "absent from the source; not deactivated"
        more[p]["reason"], actions[p] = reason, ACTIONS.index(action)
    whole = pd.api.types.is_integer_dtype(frame.index.dtype)
    no_rows = pd.Index([pd.NA] * len(absent), dtype="Int64" if whole else object)
    found = pd.Series([e.key for e in absent], dtype="string")  # no source row: no row, no line
    return [_Rows(table, pd.DataFrame(index=no_rows), found, actions, more)]


def _as_given(
    source: pd.DataFrame | TableFile, columns: Mapping[str, str] | None, keep: np.ndarray
) -> Iterator[pd.DataFrame]:
    """The rows of ``keep`` as given (renamed), for a plan without validation."""
    if isinstance(source, TableFile):
        raise ConfigError(f"validate=False takes frames, not the file {source.path}")
    return iter([source.rename(columns=dict(columns or {})).loc[keep]])


def _planned_calls(todo: TableCalls, index: pd.Index) -> Iterator[tuple[Call, list[int]]]:
    """Each call of the table's frame with the positions in ``index`` of the rows it carries."""
    try:
        for calls, rows in todo.calls():
            labels_ = pd.Index([label for labels in rows for label in labels])
            found = iter(index.get_indexer(labels_).tolist())
            for call, labels in zip(calls, rows, strict=True):
                yield call, [next(found) for _ in labels]
    except (ValueError, TypeError, KeyError) as exc:  # only rows planned with validate=False
        raise ConfigError(f"cannot build {todo.table} payloads without validation: {exc}") from None


def failures(conn: Connection, journal: str | os.PathLike[str] | Journal) -> pd.DataFrame:
    """The records whose last answer was a failure (or was lost), oldest failure first.

    Args:
        conn: the connection (only its customer's records are listed).
        journal: the journal (a path, or an open :class:`Journal`).

    Returns:
        ``table``, ``externalId``, ``outcome``, ``httpStatus``, ``error``, ``failingSince``,
        ``lastFailed``, ``failures``, ``lastAccepted``.

    Example:
        >>> client.failures(tmp / "no-journal-yet.jsonl").empty
        True
    """
    tables: dict[str, str] = {endpoint: table for table, (endpoint, _) in IMPORTS.items()}
    bases = tuple(conn.urls.values())
    data = [
        (tables.get(e.endpoint, e.endpoint), e.key, e.failure, e.failed_status, e.error)
        + (e.failing_since, e.failed_at, e.failures, e.accepted_at)
        for e in _ledger(journal).entries.values()
        if e.failing
        and e.url.startswith(bases)
        and (e.customer is None or e.customer == conn.customer_id)
    ]
    out = pd.DataFrame(data, columns=list(_FAILURE_COLUMNS))
    out = out.astype({"httpStatus": "Int64", "failures": "int64"})
    return out.sort_values("failingSince", kind="stable").reset_index(drop=True)
