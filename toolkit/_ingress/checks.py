"""The one pass that runs the import models and names what failed, row by row and line by line.

>>> import pandas as pd
>>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
>>> check_chunks("code_ranges", [df]).valid_frame().shape
(1, 2)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pyarrow as arrow
import pyarrow.compute as pc
from pandera.errors import SchemaErrors

from toolkit._core.failures import (
    FAILURE_COLUMNS,
    SEVERITY,
    check_name,
    failure_frame,
)
from toolkit._core.frames import MAX_WHOLE, neighbours, text_arrow
from toolkit._ingress.cells import Unreadable, parse
from toolkit._ingress.chunking import fresh_index, line_array
from toolkit._ingress.models import TABLES, TableSpec
from toolkit._ingress.names import header_hint, match_headers, unit_note, value_hint
from toolkit._ingress.ranges import CODE_RANGE_MAX, CodeRangePost, check_post
from toolkit._ingress.readers import joined
from toolkit._ingress.text import MAX_CELL, lookalikes, plural
from toolkit.errors import closest

#: kind -> its dtypes: while checked, once checked, and once checked in a nullable column
_DTYPES = {
    "text": ("str", "str", "str"),
    "free_text": ("str", "str", "str"),
    "number": ("Float64", "int64", "str"),
    "bool": ("boolean", "bool", "boolean"),
    "list": ("object", "object", "object"),
    "date": ("str", "str", "str"),
}


def _show(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "nothing"
    return repr(value) if isinstance(value, str) else str(value)


@lru_cache(maxsize=16)
def _lazy_schemas(table: str) -> tuple[pa.DataFrameSchema, pa.DataFrameSchema]:
    """The table's schema with its warnings collected as failure cases, not said, in two:
    the checks of each row's own cells (run a chunk at a time), and the checks across rows
    (unique ids, the model's checks of the whole frame) on the columns they need only, run on
    the parsed cells of every row."""
    schema = copy.deepcopy(TABLES[table].schema.to_schema())
    for check in [*schema.checks, *(c for col in schema.columns.values() for c in col.checks)]:
        check.raise_warning = False
    unique = [c for c, col in schema.columns.items() if col.unique]
    rows = schema.update_columns({c: {"unique": False} for c in unique})
    rows.checks = []
    key = TABLES[table].key if schema.checks else ()
    across = [c for c in schema.columns if c in unique or c in key]
    whole = schema.select_columns(across).update_columns(
        {c: {"checks": [], "nullable": True} for c in across}
    )
    whole.parsers = []  # its cells are parsed already
    return rows, whole


@dataclass
class CheckResult:
    """Outcome of :func:`check_chunks` for one table.

    Attributes:
        table: Table name.
        frame: Every input row, the spec's columns present, in nullable dtypes.
        failures: The failure frame, in row then column order, errors and warnings.
        bad: Boolean array by position: True for each row with an error.
        columns_ok: False when a column is missing, unexpected or duplicated.
        headers: Each spec name -> the input's header(s) that show it.
        read_again: How to read the input again, a chunk at a time; then :attr:`frame` holds
            only the columns the checks across rows need (keys, references) and
            :meth:`valid_chunks` reads the others again.
        layout: Each input header's spec name, the renames given applied.
        fractions: The number columns with a fraction in a row without an error (sent as
            floats, the others as whole numbers).
    """

    table: str
    frame: pd.DataFrame
    failures: pd.DataFrame
    bad: np.ndarray
    columns_ok: bool
    headers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    read_again: Callable[[], Iterable[pd.DataFrame]] | None = None
    layout: tuple[str, ...] = ()
    fractions: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings do not count).

        >>> import pandas as pd
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", ""], "codeExternalId": ["L1"] * 2})
        >>> check_chunks("code_ranges", [df]).ok, check_chunks("code_ranges", [df.head(1)]).ok
        (False, True)
        """
        return not (self.failures["severity"] == "error").any()

    @property
    def warnings(self) -> pd.DataFrame:
        """The failures of severity ``warning``: rows that are imported as given.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1"] * 2, "codeExternalId": ["L1"] * 2})
        >>> check_chunks("code_ranges", [df]).warnings[["row", "check"]].values.tolist()
        [[0, 'repeated'], [1, 'repeated']]
        """
        return self.failures[self.failures["severity"] == "warning"]

    @property
    def renames(self) -> dict[str, str]:
        """Input header -> spec name, for each header matched to another name.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"Matter ID": ["M-1"], "code": ["L1"]})
        >>> check_chunks("code_ranges", [df]).renames
        {'Matter ID': 'initiativeExternalId', 'code': 'codeExternalId'}
        """
        if not self.columns_ok:
            return {}
        return {h: name for name, shown in self.headers.items() for h in shown if h != name}

    def bad_rows(self) -> set[Any]:
        """Input index labels of rows that must not be imported.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", ""],
        ...                    "codeExternalId": ["L110", "L110"]})
        >>> check_chunks("code_ranges", [df]).bad_rows()
        {1}
        """
        if not self.columns_ok:
            return set(self.frame.index.tolist())
        return set(self.frame.index[self.bad].tolist())

    def valid_frame(self) -> pd.DataFrame:
        """The rows without errors in final dtypes (empty when a column is wrong).

        >>> import pandas as pd
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", ""],
        ...                    "codeExternalId": ["L110", "L110"]})
        >>> check_chunks("code_ranges", [df]).valid_frame().index.tolist()
        [0]
        """
        return joined(self.valid_chunks())

    def valid_chunks(self, keep: np.ndarray | None = None) -> Iterator[pd.DataFrame]:
        """The rows without errors (or those of ``keep``, a mask by position) in final dtypes,
        a chunk at a time (the input read again when :attr:`frame` does not hold every column).

        >>> import pandas as pd
        >>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
        >>> result = check_chunks("code_ranges", [df])
        >>> [len(c) for c in result.valid_chunks(keep=np.array([False]))]
        [0]
        """
        spec = TABLES[self.table]
        keep = ~self.bad if keep is None else keep

        def final(work: pd.DataFrame, mine: np.ndarray) -> pd.DataFrame:
            columns = _present(spec, list(work.columns))  # optional ones may be left out
            out = (work if mine.all() else work.loc[mine]).loc[:, columns]
            out.attrs = {}  # the line map stays with the checks' frame: pandas deep-copies it
            dtypes = {
                c: "float64"  # a fraction is sent as given
                if c in self.fractions and c not in spec.nullable
                else _DTYPES[spec.kinds[c]][2 if c in spec.nullable else 1]
                for c in columns
            }
            return out.astype(dtypes)

        if not self.columns_ok:
            yield final(
                _work_frame(spec, pd.DataFrame(), spec.columns, self.frame.index[:0]), keep[:0]
            )
            return
        if self.read_again is None or len(self.frame.columns) == len(_present(spec, self.layout)):
            yield final(self.frame, keep)  # every column held
            return
        start = 0
        for chunk in self.read_again():
            raw = _raw(spec, chunk, self.layout, start)
            mine = keep[start : start + len(raw)]
            start += len(raw)
            parsed = parse(raw, spec.kinds)  # the model's parser; its checks ran before
            work = _work_frame(spec, parsed, raw.columns, chunk.index)
            out = final(work, mine)
            del chunk, raw, parsed, work  # only the rows yielded held while they are used
            yield out


def _work_frame(
    spec: TableSpec, parsed: pd.DataFrame, columns: Iterable[str], index: pd.Index
) -> pd.DataFrame:
    """The ``columns`` of ``parsed`` in their work dtypes on ``index``, missing where not parsed."""
    return pd.DataFrame(
        {
            c: _work(parsed[c], spec.kinds[c]).set_axis(index)
            if c in parsed.columns
            else pd.Series(pd.NA, index=index, dtype=_DTYPES[spec.kinds[c]][0])
            for c in columns
        },
        index=index,
    )


def _fractions(values: pd.Series) -> np.ndarray:
    """Positions of the numbers that are not sent as whole numbers (fractions, huge ones)."""
    numbers = values.astype("float64").to_numpy(na_value=np.nan)
    whole = (numbers % 1 == 0) & (np.abs(numbers) < MAX_WHOLE)
    out: np.ndarray = np.flatnonzero(~np.isnan(numbers) & ~whole)
    return out


def _present(spec: TableSpec, names: Sequence[str]) -> list[str]:
    return [c for c in spec.columns if c in names]


def _raw(spec: TableSpec, df: pd.DataFrame, names: Sequence[str], start: int) -> pd.DataFrame:
    """A chunk of input under the spec's names, each spec column once, its rows numbered from
    ``start`` (their positions in the table), without the input's ``attrs``."""
    raw = df.set_axis(list(names), axis=1).loc[:, ~pd.Index(list(names)).duplicated()]
    raw = raw.loc[:, _present(spec, [str(c) for c in raw.columns])]
    raw = raw.set_axis(pd.RangeIndex(start, start + len(raw)), axis=0)
    raw.attrs = {}  # the line map stays with the input: pandas deep-copies it at every step
    return raw


def _column_row(
    spec: TableSpec, col: str | None, check_: str, message: str, **cell: Any
) -> dict[str, Any]:
    """A failure row before it is placed, in its column's ``_order`` (the spec's order, then
    the other columns; ``cell`` may set another): a column's (``_pos`` -1), or with ``cell``
    (``_pos``, ``externalId``, ``severity``, ``value``) a cell's."""
    order = spec.columns.index(col) if col in spec.columns else len(spec.columns)
    row = {"table": spec.name, "column": col, "check": check_, "message": message, "_order": order}
    fixed = {"_pos": -1, "externalId": None, "value": None, "severity": SEVERITY.get(check_)}
    return fixed | row | cell


Found = tuple[int, str | None, str, str | None, str]
"""(position, column, check, message template, severity): a failure before it is placed."""

_DEFAULTS = {
    "required": "{column} is required but {empty}",
    "unique": "{column} {value} is not unique: {rows} share it",
}
"""Messages of pandera's own checks (``nullable=False``, ``unique=True``)."""


def _all_distinct(values: pd.Series) -> bool:
    """True when a text column holds no value twice (nor two missing ones), found by sorting: a
    few bytes a row, where a hash table of every value (``is_unique``) takes over 100.

    >>> _all_distinct(pd.Series(["a", "b", None], dtype="str"))
    True
    >>> _all_distinct(pd.Series(["a", "a"], dtype="str")), _all_distinct(pd.Series([None, None]))
    (False, False)
    """
    text = text_arrow(values)
    if text is None or text.null_count > 1:
        return False
    text = pc.drop_null(text)
    if len(text) < 2:
        return True
    text = text.take(pc.sort_indices(text))
    return not pc.any(pc.equal(*neighbours(text))).as_py()


def _model_failures(
    spec: TableSpec, schema: pa.DataFrameSchema, raw: pd.DataFrame
) -> tuple[pd.DataFrame, list[Found]]:
    """``schema``'s parsed frame of ``raw`` and its failures, by position in the table."""
    try:
        return schema.validate(raw, lazy=True), []
    except SchemaErrors as exc:
        parsed, fc = exc.data, exc.failure_cases
    found: list[Found] = []
    where = ["schema_context", "column", "check", "check_number", "index"]
    for context, col, chk, number, index in fc[where].itertuples(index=False):
        if index is None or pd.isna(index):
            continue  # a missing or unexpected column: reported with hints before
        whole = context == "DataFrameSchema"  # a row's failure, said on its last key column
        if number is None or pd.isna(number):
            name = check_name(str(chk))
            found.append((int(index), col, name, _DEFAULTS.get(name), SEVERITY[name]))
        else:
            name, template, severity = spec.checks[(None if whole else col, int(number))]
            found.append(
                (int(index), str(spec.key[-1] if whole else col), name, template, severity)
            )
    return parsed, found


def _work(values: pd.Series, kind: str) -> pd.Series:
    """A parsed column in its work dtype, an unreadable cell missing."""
    if values.dtype == object:
        values = values.map(lambda v: None if isinstance(v, Unreadable) else v)
    out: pd.Series = values.astype(_DTYPES[kind][0])  # type: ignore[call-overload]
    return out


def _fields(spec: TableSpec, col: str | None, value: Any, cell: Any) -> dict[str, Any]:
    """The fields a message template names, for one failing cell (every field any template
    may name: a template uses those it names)."""
    text, allowed = isinstance(value, str), spec.allowed.get(str(col), ())
    near = None
    if text and allowed:
        near = next((a for a in allowed if a.casefold() == value.strip().casefold()), None)
        near = near or value_hint(str(col), value) or closest(value, list(allowed))
    breaks = value.count("\n") if text else 0
    or_empty = ", or empty for null" if col in spec.nullable else ""
    return {
        "column": col,
        "value": _show(value),
        "empty": "empty" if text else "missing",
        "blank": "missing" if not text else "empty" if value == "" else "blank",
        "why": cell.why if isinstance(cell, Unreadable) else "",
        "unit": unit_note(str(col)),
        "allowed": ", ".join(allowed),
        # an optional column is nullable too
        "or_empty": ", or empty (not sent)" if col in spec.optional else or_empty,
        "hint": f"; did you mean {near!r}?" if near else "",
        "length": len(value) if text else 0,
        "max_cell": MAX_CELL,
        "breaks": f". It holds {breaks:,} line break{'s' if breaks != 1 else ''}: in a CSV file, "
        "an unbalanced double quote joins the lines that follow it into one cell"
        if breaks
        else "",
    }


@dataclass
class _Read:
    """A table read a chunk at a time: its headers, the columns held for every row (in their
    work dtypes; ``raw``: those not read as text, as given) and the failures of each row's own
    cells (``rows``: a failure row per wrong column, and one if the schema could not run)."""

    layout: tuple[str, ...] = ()
    headers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    columns_ok: bool = True  # no column missing, unexpected or duplicated
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    raw: pd.DataFrame = field(default_factory=pd.DataFrame)
    index: pd.Index = field(default_factory=lambda: pd.RangeIndex(0))  # the rows' labels
    attrs: dict[Any, Any] = field(default_factory=dict)  # the input's, with its line map
    found: list[Found] = field(default_factory=list)
    #: a failing cell: (value, cell)
    cells: dict[tuple[int, str | None], tuple[Any, Any]] = field(default_factory=dict)
    nonwhole: dict[str, list[np.ndarray]] = field(default_factory=dict)  # fractions' positions
    broken: bool = False  # the schema could not run: no cell is read


def _read_chunks(
    spec: TableSpec,
    chunks: Iterable[pd.DataFrame],
    columns: Mapping[str, str] | None,
    hold: set[str] | None,
) -> _Read:
    """Read the chunks, checking each row's own cells; hold the ``hold`` columns of every row
    (every column while there is one chunk; ``None``: every column)."""
    read, rows_schema = _Read(), _lazy_schemas(spec.name)[0]
    parts: list[pd.DataFrame] = []  # the held columns of each chunk, in their work dtypes
    raws: list[pd.DataFrame] = []  # the held input columns not read as text
    labels: list[pd.Index] = []
    start = 0
    for df in chunks:
        if not labels:  # the first chunk: its headers are every chunk's
            read.layout, read.rows, read.headers = _layout(spec, df, columns)
            read.columns_ok = not read.rows
        raw = _raw(spec, df, read.layout, start)
        labels.append(df.index)
        read.attrs = df.attrs
        parsed = raw.iloc[:, :0]
        if raw.columns.size and not read.broken:
            try:
                parsed, failed = _model_failures(spec, rows_schema, raw)
            except Exception as exc:  # a pandera internal error never reaches the user raw
                read.broken, parsed = True, raw.iloc[:, :0]
                message = f"schema validation could not run: {exc!r}"
                read.rows.append(_column_row(spec, None, "internal", message, _order=0))
            else:
                read.found += failed
                for pos, col, _, _, _ in failed:
                    value = raw[col].at[pos] if col in raw.columns else None
                    read.cells[pos, col] = (value, parsed[col].at[pos] if col in parsed else None)
        work = _work_frame(spec, parsed, raw.columns, raw.index)
        for c in work.columns:
            if spec.kinds[c] == "number":
                read.nonwhole.setdefault(c, []).append(_fractions(work[c]) + start)
        if len(parts) == 1 and hold is not None:  # a second chunk: the first keeps the held
            parts[0] = parts[0].loc[:, [c for c in parts[0].columns if c in hold]]
            raws[0] = raws[0].loc[:, [c for c in raws[0].columns if c in hold]]
        # the first chunk keeps every column: a table of one chunk is not parsed again to plan
        # and send (its file's chunks come back from the spill, but their cells' parse costs)
        kept = [c for c in work.columns if hold is None or not parts or c in hold]
        parts.append(work.loc[:, kept] if len(kept) < len(work.columns) else work)
        raws.append(raw.loc[:, [c for c in kept if not isinstance(raw[c].dtype, pd.StringDtype)]])
        start += len(raw)
        del df, raw, parsed, work  # not held while the next chunk is read
    read.frame, read.raw = joined(parts), joined(raws)
    del parts, raws
    read.index = labels[0].append(labels[1:]) if len(labels) > 1 else labels[0]
    if read.broken:  # as if no cell were read
        read.found = []
        read.frame = _work_frame(spec, pd.DataFrame(), read.frame.columns, read.frame.index)
    return read


def check_chunks(
    table: str,
    chunks: Iterable[pd.DataFrame],
    *,
    columns: Mapping[str, str] | None = None,
    references: Mapping[str, pd.Index] | None = None,
    code_range_post: CodeRangePost = "replace",
    read_again: Callable[[], Iterable[pd.DataFrame]] | None = None,
) -> CheckResult:
    """Check one import table against its model and report every problem, never raising on data,
    given a chunk of rows at a time, in order (as :func:`~toolkit._ingress.readers.read_chunks`
    yields them, the same columns in each; a frame in pandas is one chunk, ``[df]``).

    The checks of a row's own cells run on each chunk; those across rows (unique ids, keys,
    references, look-alikes) on the columns they need, held for every row. With ``read_again``
    only those columns are held: :meth:`CheckResult.valid_chunks` reads the input again.

    Args:
        table: One of :data:`TABLES` (its callers name only those).
        chunks: The rows a chunk at a time, pandas frames of the same columns, in order, as
            loaded (any dtypes; the model's parser reads them).
        columns: Renames applied first, ``{name in the input: spec name}``.
        references: ``{column: allowed ids}``; another id is a ``reference`` error.
        code_range_post: ``"replace"`` (a range over 2500 codes is a ``range_size`` error) or
            ``"add"`` (sent in parts; :mod:`toolkit._ingress.ranges`).
        read_again: How to read the input again, a chunk at a time; ``None``: every column of
            every row is held.

    Returns:
        A :class:`CheckResult`.

    >>> import pandas as pd
    >>> parts = [pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L1"]},
    ...                       index=[i]) for i in (0, 1)]
    >>> check_chunks("code_ranges", parts).failures[["row", "check"]].values.tolist()
    [[0, 'repeated'], [1, 'repeated']]
    >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
    ...                    "codeExternalId": ["L110", "L110"]})
    >>> check_chunks("code_ranges", [df]).failures[["row", "check", "severity"]].values.tolist()
    [[0, 'repeated', 'warning'], [1, 'repeated', 'warning']]
    """
    spec = TABLES[table]
    check_post(code_range_post)
    whole = _lazy_schemas(table)[1]
    held = {*spec.key, spec.id_column, *dict(spec.references), *whole.columns}
    read = _read_chunks(spec, chunks, columns, None if read_again is None else held)
    frame, found = read.frame, list(read.found)
    across = [c for c in whole.columns if c in frame.columns]
    if across and not read.broken:  # a text column seen to be unique by sorting: no hash table
        distinct = [c for c in across if whole.columns[c].unique and _all_distinct(frame[c])]
        schema = whole.update_columns({c: {"unique": False} for c in distinct})
        found += _model_failures(spec, schema, frame.loc[:, across])[1]
    found = list(dict.fromkeys(found))
    if code_range_post == "add":
        found = [f for f in found if f[2] != "range_size"]
    found += _reference_failures(spec, frame, references or {}, found)

    frame.attrs = dict(read.attrs)  # the line map
    failures, bad = _failures(spec, read, found)
    frame.index = read.index
    fractions = frozenset(
        c for c, at_ in read.nonwhole.items() if (~bad[np.concatenate(at_)]).any()
    )
    ok, headers, layout = read.columns_ok, read.headers, read.layout
    return CheckResult(table, frame, failures, bad, ok, headers, read_again, layout, fractions)


def _failures(spec: TableSpec, read: _Read, found: list[Found]) -> tuple[pd.DataFrame, np.ndarray]:
    """The failure frame of the read's column failures and a row per failure ``found`` (and per
    look-alike id), its message written, in row then column order; True for each row with an
    error, by position."""
    frame, raw, cells, index, rows = read.frame, read.raw, read.cells, read.index, read.rows

    def value_and_cell(pos: int, col: str | None) -> tuple[Any, Any]:
        if (pos, col) in cells:
            return cells[(pos, col)]
        if col in raw.columns:
            return raw[col].iat[pos], None
        return (frame[col].iat[pos] if col in frame.columns else None), None

    # messages name the file's line when the frame was read from a file, else the row label
    # (a range's array of every row not cached on the input's index)
    line_map = "line_shifts" in frame.attrs  # else no row has a line: no array of its rows
    lines = line_array(frame, fresh_index(index).to_series()) if line_map else None
    unit = "lines" if lines is not None and not np.isnan(lines).any() else "rows"

    def at(i: int) -> Any:
        return int(lines[i]) if lines is not None and unit == "lines" else index[i]

    ids_and_refs = [spec.id_column, *dict(spec.references)]
    found += [
        (*f, "warning") for f in lookalikes(frame, ids_and_refs, lambda i: f"{unit[:-1]} {at(i)}")
    ]

    # the key and id columns as objects only when a failure names them
    keys = [_objects(frame[c]) for c in spec.key if c in frame.columns] if found else []
    groups: dict[tuple[Any, ...], list[str]] = {}
    for i in sorted({p for p, _, chk, _, _ in found if chk in ("unique", "repeated")}):
        groups.setdefault(tuple(k[i] for k in keys), []).append(str(at(i)))
    ids = _objects(frame[spec.id_column]) if found and spec.id_column in frame.columns else None
    for pos, fcol, chk, template, severity in found:
        value, cell = value_and_cell(pos, fcol)
        if isinstance(cell, Unreadable) and cell.check == "encoding":
            value = cell.raw
        text = template or f"{fcol}: failed {chk}; got {{value}}"
        if template is not None:
            fields = _fields(spec, fcol, value, cell)
            key = tuple(k[pos] for k in keys)
            same = groups.get(key, [])
            listed = ", ".join(same[:5]) + (", ..." if len(same) > 5 else "")
            fields.update(rows=f"{unit} {listed}", code=repr(key[-1]) if key else None)
            fields.update(initiative=repr(key[0]) if key else None)
            if chk == "range_size":
                size = frame.loc[frame[spec.key[0]] == key[0], spec.key[-1]].nunique()
                fields.update(size=size, limit=CODE_RANGE_MAX)
            text = template.format(**fields)
        rid = None if ids is None or ids[pos] is None else str(ids[pos])
        value = value.item() if isinstance(value, np.generic) else value
        placed = {"_pos": pos, "externalId": rid, "severity": severity, "value": value}
        rows.append(_column_row(spec, fcol, chk, text, **placed))

    rows.sort(key=lambda r: (r["_pos"], r["_order"], r["check"]))
    failures = failure_frame(
        **{c: [r[c] for r in rows] for c in FAILURE_COLUMNS if c != "row"},
        row=[index[r["_pos"]] if r["_pos"] >= 0 else None for r in rows],
    )
    bad = np.zeros(len(frame), dtype=bool)
    bad[[r["_pos"] for r in rows if r["_pos"] >= 0 and r["severity"] == "error"]] = True
    return failures, bad


def _layout(
    spec: TableSpec, df: pd.DataFrame, columns: Mapping[str, str] | None
) -> tuple[tuple[str, ...], list[dict[str, Any]], dict[str, tuple[str, ...]]]:
    """The headers of a table: each header's spec name (the renames given applied), a failure
    row per missing, unexpected or doubled column, and each spec name's header(s) in the input.

    The headers are matched (:func:`~toolkit._ingress.names.match_headers`) with a failure row
    per ambiguity; the other column failures leave out the names those rows cover: missing,
    unexpected and duplicated columns (likely headers added to the spec name's headers)."""
    source = [str(c) for c in df.columns]
    given = [str(c) for c in (df.rename(columns=dict(columns)) if columns else df).columns]
    matched = match_headers(spec.name, spec.columns, given)
    names, fields = matched.names, list(spec.columns)
    rows: list[dict[str, Any]] = []
    replaced: set[str] = set()
    headers: dict[str, tuple[str, ...]] = {}
    for name, header in zip(names, source, strict=True):
        headers[name] = (*headers.get(name, ()), header)
    for name, found in matched.fitting_two.items():
        shown = " or ".join(repr(f) for f in found)
        msg = f"column {name!r} could be {shown}; say which with columns={{{name!r}: {found[0]!r}}}"
        rows.append(_column_row(spec, name, "column_unexpected", msg))
        replaced.add(name)
    for f, positions in matched.shared.items():  # two headers for one field: show them both
        shown = " and ".join(repr(given[p]) for p in positions)
        both = "both" if len(positions) == 2 else "all"
        msg = f"columns {shown} {both} stand for {f!r}; keep one, or rename the others"
        rows.append(_column_row(spec, f, "column_duplicate", msg))
        replaced.update([f, *(given[p] for p in positions)])
        headers[f] = tuple(source[p] for p in positions)
    # missing, unexpected and duplicated columns (likely headers added to ``headers``)
    others: list[dict[str, Any]] = []
    duplicated = sorted({c for c in names if names.count(c) > 1}, key=names.index)
    missing = [c for c in fields if c not in names and c not in spec.optional]
    unexpected = [c for c in dict.fromkeys(names) if c not in fields]
    for col in missing:
        near = closest(col, unexpected) or header_hint(spec.name, col, unexpected)
        msg = f"missing column {col!r}"
        if near:
            msg += f"; the frame has {near!r}: rename it with columns={{{near!r}: {col!r}}}"
            msg += unit_note(col)
            headers.setdefault(col, headers.get(near, (near,)))
        others.append(_column_row(spec, col, "column_missing", msg))
    for col in unexpected:
        hinted = [f for f in missing if header_hint(spec.name, f, [col])]
        near = closest(col, missing) or (hinted[0] if hinted else closest(col, fields))
        msg = f"unexpected column {col!r}"
        if near and near in missing:
            msg += f"; did you mean {near!r}? rename it with columns={{{col!r}: {near!r}}}"
            msg += unit_note(near)
        elif near:
            msg += f" (closest expected column {near!r} is present); drop it"
        else:
            msg += f"; expected exactly: {', '.join(fields)}"
        others.append(_column_row(spec, col, "column_unexpected", msg))
    for col in duplicated:
        msg = f"column {col!r} appears {names.count(col)} times; keep one"
        others.append(_column_row(spec, col, "column_duplicate", msg))
    rows += [r for r in others if r["column"] not in replaced]
    return tuple(names), rows, headers


def _objects(values: pd.Series) -> np.ndarray:
    """The values as an object array, ``None`` where missing."""
    out = values.to_numpy(dtype=object)
    out[pd.isna(out)] = None
    return out


def _reference_failures(
    spec: TableSpec, frame: pd.DataFrame, refs: Mapping[str, pd.Index], found: list[Found]
) -> list[Found]:
    """A ``reference`` error per id not one of its column's allowed ids (in a cell without an
    error already).

    A value given and not one of the allowed ids is found by Arrow's hash set, no Python
    string per row."""
    out: list[Found] = []
    for col, allowed in refs.items():
        if col not in frame.columns:
            continue
        values = frame[col]
        already = {p for p, c, _, _, sev in found if c == col and sev == "error"}
        given = arrow.chunked_array(arrow.array(values, from_pandas=True))
        ids = arrow.array(allowed, from_pandas=True)
        ids = ids.combine_chunks() if isinstance(ids, arrow.ChunkedArray) else ids
        listed = pc.is_in(given, value_set=ids.cast(given.type)).to_numpy(zero_copy_only=False)
        mask = values.notna().to_numpy() & ~listed
        if not mask.any():
            continue
        parent = dict(spec.references).get(col, "the parent table")
        missing = values[mask]
        for p, value, hint in zip(
            np.flatnonzero(mask), missing, _near_ids(missing, allowed), strict=True
        ):
            if int(p) not in already:
                message = f"{col} {value!r} is not an externalId of {parent}"
                message += f"; did you mean {hint!r}?" if hint is not None else ""
                out.append((int(p), col, "reference", message, "error"))
    return out


def _near_ids(missing: pd.Series, allowed: pd.Index) -> list[str | None]:
    """For each missing id, an allowed id equal to it ignoring case and surrounding spaces."""
    if not len(allowed):
        return [None] * len(missing)
    text = pd.Series(allowed.astype(str), dtype="str")
    lookup = pd.Series(text.to_numpy(), index=text.str.strip().str.casefold().to_numpy())
    lookup = lookup[~lookup.index.duplicated()]
    hints = missing.astype("str").str.strip().str.casefold().map(lookup)
    return [None if pd.isna(h) else str(h) for h in hints.tolist()]


def format_failures(failures: pd.DataFrame, limit: int = 10) -> str:
    """A short summary of a failure frame: counts, then up to ``limit`` failures.

    Args:
        failures: A failure frame.
        limit: How many failures to list.

    Returns:
        Text such as ``"2 problems (1 error, 1 warning): code_ranges 2 (2 rows)"`` and lines.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": [""]})
    >>> r = check_chunks("code_ranges", [df])
    >>> print(format_failures(r.failures))
    1 problem: code_ranges 1 (1 row)
      code_ranges row 0 [M-1] codeExternalId: codeExternalId is required but empty
    """
    if failures.empty:
        return "no problems"
    n = len(failures)
    parts = []
    for table, group in failures.groupby("table", sort=False):
        n_rows, cols = group["row"].dropna().nunique(), int(group["row"].isna().sum())
        bits = [plural(n_rows, "row")] if n_rows else []
        bits += [f"{cols} column-level"] if cols else []
        parts.append(f"{table} {len(group)} ({', '.join(bits)})")
    head = plural(n, "problem")
    severity = failures.get("severity", pd.Series("error", index=failures.index))
    n_warnings = int((severity == "warning").sum())
    if n_warnings:
        head += f" ({plural(n - n_warnings, 'error')}, {plural(n_warnings, 'warning')})"
    lines = [f"{head}: {'; '.join(parts)}"]
    for rec, sev in zip(failures.head(limit).to_dict("records"), severity.head(limit), strict=True):
        where = f"{rec['table']}" + (f" row {rec['row']!s}" if pd.notna(rec["row"]) else "")
        where += f" [{rec['externalId']!s}]" if pd.notna(rec["externalId"]) else ""
        where += f" {rec['column']!s}" if pd.notna(rec["column"]) else ""
        lines.append(f"  {where}: {'warning: ' if sev == 'warning' else ''}{rec['message']}")
    if n > limit:
        lines.append(f"  ... and {n - limit} more (see .failure_cases)")
    return "\n".join(lines)
