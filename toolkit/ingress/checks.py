"""The check engine: turns a loaded frame into one the import endpoints accept, or says why not.

The tables and their rules are the pandera models of :mod:`toolkit.ingress.models` (one per
field table of the spec, registered in :data:`~toolkit.ingress.models.TABLES`); this module
runs a frame through them.

Every failure has a ``severity``, following the spec's line: what the service refuses is an
``error`` and blocks posting (missing ids, unknown references, values outside an enum,
``unitIncrements <= 0``, text where a number belongs, a repeated ``externalId``); what it allows
but looks wrong is a ``warning`` and the row is sent as given (blank free text, sent as ``""``;
spaces around an id; a fractional ``unitIncrements``; a code range listing a pair twice, sent
once). :attr:`CheckResult.ok` means no errors.

:func:`check_frame` runs one table through four steps and never raises on bad data::

    rename (columns=)  ->  headers matched  ->  column names  ->  coercion per column kind
        ->  pandera (lazy=True); every step adds to one failure frame

1. Headers as people write them: a header matches a spec field ignoring case, spaces, ``_``
   and ``-`` (``ExternalID``, ``external_id``, ``Call Sign``), or through
   :data:`toolkit.ingress.readers.COLUMN_ALIASES` (``Matter ID`` -> ``initiativeExternalId`` in
   code ranges, ``Client Code`` -> ``callSign``). A header named exactly as the spec wins; two
   other headers for one field, or one header fitting two fields, is an error naming both.
   Column names: the frame must then hold exactly the spec's columns, plus any of the optional
   columns the service publishes beyond the spec (:mod:`toolkit.ingress.models`). A missing or
   unexpected column is reported with the closest match (``callSigns`` -> ``callSign``).
2. Coercion (:mod:`toolkit.ingress.cells`), a step we control rather than pandera's
   ``coerce``: what CSV, Excel and Parquet loading commonly yields becomes a proper value where
   that is unambiguous (``360.0``, ``"360"`` -> 360, ``"360.5"`` -> 360.5; ``TRUE``,
   ``"false"``, 1, 0 -> booleans; an empty cell -> missing in an id or enum column, ``""`` in a
   free-text column, null for ``semanticType``, not sent in an optional column) and a ``type``
   failure row where it is not (``"abc"``, ``"yes"``).
3. The pandera model, with ``lazy=True``: required values, non-blank text, case-sensitive enums,
   ``unitIncrements > 0`` and whole, unique keys, identifiers without surrounding whitespace.
4. Optional references (column -> set of allowed ids), used by
   :func:`toolkit.ingress.validation.validate`; and the size of each code range
   (``range_size``: at most 2500 codes, unless ``code_range_post="add"``,
   :mod:`toolkit.ingress.ranges`).

Failure frame columns (:data:`FAILURE_COLUMNS`): ``table``, ``row`` (the input index label;
None for a column-level problem), ``externalId`` (the row's key; for code ranges the
``initiativeExternalId``), ``column``, ``check`` (one of :data:`CHECKS`), ``severity``
(``error`` or ``warning``, set by the check: :data:`toolkit.ingress.rules.SEVERITY`), ``value``
(the raw input value) and ``message``.

>>> import pandas as pd
>>> check("code_ranges", pd.DataFrame({"initiativeExternalId": ["M-1"],
...                                    "codeExternalId": ["L110"]})).shape
(1, 2)
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from toolkit.core.failures import (
    CHECKS,
    FAILURE_COLUMNS,
    SEVERITY,
    check_name,
    empty_failures,
    nullable_rows,
)
from toolkit.core.frames import MAX_WHOLE
from toolkit.errors import ValidationError
from toolkit.ingress.cells import COERCERS
from toolkit.ingress.hints import fractional_message, header_hint, unit_note, value_hint
from toolkit.ingress.models import TABLES, TableSpec
from toolkit.ingress.ranges import CodeRangePost, check_post, long_ranges
from toolkit.ingress.readers import line_numbers, match_headers
from toolkit.ingress.text import lookalikes, unsendable_text, warn_lookalikes

__all__ = [
    "CHECKS",
    "FAILURE_COLUMNS",
    "CheckResult",
    "check",
    "check_frame",
    "empty_failures",
    "format_failures",
]

_FINAL_DTYPES = {
    "text": "str",
    "free_text": "str",
    "number": "int64",
    "bool": "bool",
    "list": "object",
    "date": "str",
}
_WORK_DTYPES = {**_FINAL_DTYPES, "number": "Float64", "bool": "boolean"}
#: final dtype of a nullable column, per kind (``str`` for the others)
_NULLABLE_DTYPES = {"bool": "boolean", "list": "object"}


def _spec_for(table: str) -> TableSpec:
    try:
        return TABLES[table]
    except KeyError:
        hint = _closest(table, list(TABLES))
        extra = f"; did you mean {hint!r}?" if hint else ""
        raise ValueError(f"unknown table {table!r}{extra} (tables: {', '.join(TABLES)})") from None


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------


def _norm(name: object) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _closest(name: object, candidates: Collection[str]) -> str | None:
    """The candidate closest to ``name``: same letters ignoring case and separators, or difflib."""
    if not candidates:
        return None
    by_norm = {_norm(c): c for c in candidates}
    if _norm(name) in by_norm:
        return by_norm[_norm(name)]
    match = difflib.get_close_matches(_norm(name), list(by_norm), n=1, cutoff=0.6)
    if match:
        return by_norm[match[0]]
    match = difflib.get_close_matches(str(name), list(candidates), n=1, cutoff=0.6)
    return match[0] if match else None


def _show(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "nothing"
    return repr(value) if isinstance(value, str) else str(value)


# --------------------------------------------------------------------------------------------
# Running one table
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=128)
def _runtime_schema(table: str, present: frozenset[str]) -> pa.DataFrameSchema:
    """The table's pandera schema for the present columns; dtypes are ensured by coercion."""
    spec = TABLES[table]
    schema = spec.schema.to_schema()
    schema = schema.update_columns({c: {"dtype": None} for c in schema.columns})
    missing = [c for c in spec.columns if c not in present]
    if missing:
        schema = schema.remove_columns(missing)
    schema = copy.deepcopy(schema)
    if schema.unique and not set(schema.unique) <= present:
        schema.unique = None
    schema.strict = False
    return schema


@dataclass
class CheckResult:
    """Outcome of :func:`check_frame` for one table; it never raises on bad data.

    Attributes:
        table: Table name.
        frame: Every input row with coerced values in nullable dtypes (``str``, ``Float64``,
            ``boolean``); a value that failed coercion is missing. Index is the input index.
            Only the spec's columns that were present.
        failures: The failure frame (:data:`FAILURE_COLUMNS`), in row then column order,
            errors and warnings.
        bad: Boolean array by position: True for each row with at least one error.
        columns_ok: False when a column is missing, unexpected or duplicated.
        headers: Each name the failure frame's ``column`` can hold -> the input's header(s)
            that show it (before ``columns=``): ``{"externalId": ("External ID",)}``; for a
            missing column, the unexpected header it was probably meant to be.
    """

    table: str
    frame: pd.DataFrame
    failures: pd.DataFrame
    bad: np.ndarray
    columns_ok: bool
    headers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings do not count)."""
        return not (self.failures["severity"] == "error").any()

    @property
    def warnings(self) -> pd.DataFrame:
        """The failures of severity ``warning``: rows that are imported as given."""
        return self.failures[self.failures["severity"] == "warning"]

    @property
    def renames(self) -> dict[str, str]:
        """Input header -> spec name, for each header matched to another name (by
        ``columns=``, case and separators, or an alias); empty when a column is wrong.

        >>> import pandas as pd
        >>> check_frame("code_ranges", pd.DataFrame({"Matter ID": ["M-1"], "code": ["L1"]})).renames
        {'Matter ID': 'initiativeExternalId', 'code': 'codeExternalId'}
        """
        if not self.columns_ok:
            return {}
        return {h: name for name, shown in self.headers.items() for h in shown if h != name}

    def bad_rows(self) -> set[Any]:
        """Input index labels of rows that must not be imported.

        Every row when a column is wrong, else the rows with at least one error.

        >>> import pandas as pd
        >>> r = check_frame("code_ranges", pd.DataFrame(
        ...     {"initiativeExternalId": ["M-1", ""], "codeExternalId": ["L110", "L110"]}))
        >>> r.bad_rows()
        {1}
        """
        if not self.columns_ok:
            return set(self.frame.index.tolist())
        return set(self.frame.index[self.bad].tolist())

    def valid_frame(self) -> pd.DataFrame:
        """The rows without errors, in final dtypes (``str``, ``int64``, ``bool``).

        ``unitIncrements`` is ``int64`` unless a value is fractional, then ``float64``. Empty
        when a column is wrong.

        >>> import pandas as pd
        >>> r = check_frame("code_ranges", pd.DataFrame(
        ...     {"initiativeExternalId": ["M-1", ""], "codeExternalId": ["L110", "L110"]}))
        >>> r.valid_frame().index.tolist()
        [0]
        """
        spec = TABLES[self.table]
        if not self.columns_ok:
            return _finalize(spec, _empty_frame(spec, self.frame.index[:0]))
        return _finalize(spec, self.frame.loc[~self.bad])


def _empty_frame(spec: TableSpec, index: pd.Index) -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series([], index=index, dtype=_WORK_DTYPES[spec.kinds[c]]) for c in spec.columns}
    )


def _finalize(spec: TableSpec, frame: pd.DataFrame) -> pd.DataFrame:
    columns = [c for c in spec.columns if c in frame.columns]  # optional ones may be left out
    out = frame.loc[:, columns]
    dtypes = {
        c: _NULLABLE_DTYPES.get(spec.kinds[c], "str")
        if c in spec.nullable
        else _FINAL_DTYPES[spec.kinds[c]]
        for c in columns
    }
    for c in columns:
        if spec.kinds[c] == "number" and not _all_whole(out[c]):
            dtypes[c] = "float64"  # a fraction is sent as given
    return out.astype(dtypes)


def _all_whole(values: pd.Series) -> bool:
    numbers = values.astype("float64").dropna()
    return bool(((numbers % 1 == 0) & (numbers.abs() < MAX_WHOLE)).all())


def _match_headers(
    spec: TableSpec, names: list[str]
) -> tuple[list[str], list[dict[str, Any]], set[str], dict[str, list[int]]]:
    """:func:`~toolkit.ingress.readers.match_headers`, with a failure row per ambiguity and the
    names whose plain missing/unexpected failure those rows replace."""
    matched = match_headers(spec.name, spec.columns, names)
    fields = list(spec.columns)
    rows: list[dict[str, Any]] = []
    replaced: set[str] = set()
    for name, found in matched.fitting_two.items():
        shown = " or ".join(repr(f) for f in found)
        msg = f"column {name!r} could be {shown}; say which with columns={{{name!r}: {found[0]!r}}}"
        rows.append(_column_row(spec.name, name, "column_unexpected", msg, len(fields)))
        replaced.add(name)
    for f, positions in matched.shared.items():
        shown = " and ".join(repr(names[p]) for p in positions)
        both = "both" if len(positions) == 2 else "all"
        msg = f"columns {shown} {both} stand for {f!r}; keep one, or rename the others"
        rows.append(_column_row(spec.name, f, "column_duplicate", msg, fields.index(f)))
        replaced.update([f, *(names[p] for p in positions)])
    return matched.names, rows, replaced, matched.shared


def _column_failures(
    table: str, names: list[Any], spec: TableSpec, headers: dict[str, tuple[str, ...]]
) -> list[dict[str, Any]]:
    """Missing, unexpected and duplicated columns; a missing column's likely header is added
    to ``headers``."""
    out: list[dict[str, Any]] = []
    expected = list(spec.columns)
    present = [str(c) for c in names]
    duplicated = sorted({c for c in present if present.count(c) > 1}, key=present.index)
    missing = [c for c in expected if c not in present and c not in spec.optional]
    unexpected = [c for c in dict.fromkeys(present) if c not in expected]
    for col in missing:
        near = _closest(col, unexpected) or header_hint(table, col, unexpected)
        msg = f"missing column {col!r}"
        if near:
            msg += f"; the frame has {near!r}: rename it with columns={{{near!r}: {col!r}}}"
            msg += unit_note(col)
            headers.setdefault(col, headers.get(near, (near,)))
        out.append(_column_row(table, col, "column_missing", msg, expected.index(col)))
    for col in unexpected:
        hinted = [f for f in missing if header_hint(table, f, [col])]
        near = _closest(col, missing) or (hinted[0] if hinted else _closest(col, expected))
        msg = f"unexpected column {col!r}"
        if near and near in missing:
            msg += f"; did you mean {near!r}? rename it with columns={{{col!r}: {near!r}}}"
            msg += unit_note(near)
        elif near:
            msg += f" (closest expected column {near!r} is present); drop it"
        else:
            msg += f"; expected exactly: {', '.join(expected)}"
        out.append(_column_row(table, col, "column_unexpected", msg, len(expected)))
    for col in duplicated:
        msg = f"column {col!r} appears {present.count(col)} times; keep one"
        order = expected.index(col) if col in expected else len(expected)
        out.append(_column_row(table, col, "column_duplicate", msg, order))
    return out


def _column_row(
    table: str, col: str | None, check_: str, message: str, order: int
) -> dict[str, Any]:
    return {
        "table": table,
        "_pos": -1,
        "_order": order,
        "externalId": None,
        "column": col,
        "check": check_,
        "severity": SEVERITY[check_],
        "value": None,
        "message": message,
    }


@lru_cache(maxsize=64)
def _allowed(table: str, column: str) -> tuple[str, ...]:
    for chk in TABLES[table].schema.to_schema().columns[column].checks:
        if chk.name == "isin":
            return tuple(chk.statistics["allowed_values"])
    return ()


def _allowed_message(spec: TableSpec, column: str, raw: Any) -> str:
    if isinstance(raw, str):
        return _allowed_text_message(spec.name, column, raw)
    return _allowed_text_message(spec.name, column, None) + f"; got {_show(raw)}"


@lru_cache(maxsize=4096)
def _allowed_text_message(table: str, column: str, raw: str | None) -> str:
    allowed = _allowed(table, column)
    msg = f"{column} must be one of {', '.join(allowed)} (case-sensitive)"
    if column in TABLES[table].optional:
        msg += ", or empty (not sent)"
    elif column in TABLES[table].nullable:
        msg += ", or empty for null"
    if raw is None:
        return msg
    msg += f"; got {raw!r}"
    near = next((a for a in allowed if a.casefold() == raw.strip().casefold()), None)
    near = near or value_hint(column, raw) or _closest(raw, allowed)
    if near:
        msg += f"; did you mean {near!r}?"
    return msg


def _pandera_failures(spec: TableSpec, work: pd.DataFrame) -> list[tuple[int, str | None, str]]:
    """(position, column, check name) of every pandera failure, with our check names."""
    schema = _runtime_schema(spec.name, frozenset(work.columns))
    try:
        schema.validate(work, lazy=True)
    except SchemaErrors as exc:
        fc = exc.failure_cases
    else:
        return []
    out: list[tuple[int, str | None, str]] = []
    for idx, col, chk in zip(fc["index"], fc["column"], fc["check"], strict=True):
        chk = str(chk)
        ours = check_name(chk)
        pos = -1 if idx is None or pd.isna(idx) else int(idx)
        if chk == "multiple_fields_uniqueness":
            col = spec.key[-1]  # the pair is reported once, on its last column
        out.append((pos, str(col) if col is not None else None, ours))
    return list(dict.fromkeys(out))  # a pair's uniqueness failure comes once per column


def check_frame(
    table: str,
    df: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    references: Mapping[str, Collection[str]] | None = None,
    code_range_post: CodeRangePost = "replace",
) -> CheckResult:
    """Check one import table and report every problem at once, without raising on bad data.

    Args:
        table: One of :data:`TABLES` (``clients``, ``initiatives``, ``code_types``, ``codes``,
            ``code_ranges``).
        df: The rows, as loaded (any dtypes; see the module docstring for the coercions).
        columns: Renames applied first, ``{name in df: spec name}``; names not in ``df`` are
            ignored.
        references: ``{column: allowed ids}``; a non-missing value outside them is a
            ``reference`` failure. Used by :func:`toolkit.ingress.validation.validate`.
        code_range_post: ``"replace"`` (a code range is one request: a range over 2500 codes
            is a ``range_size`` error on each of its rows) or ``"add"`` (sent in parts);
            see :mod:`toolkit.ingress.ranges`.

    Returns:
        A :class:`CheckResult` with the coerced frame, the failure frame and the bad rows.

    Raises:
        ValueError: ``table`` is not a known table.
        TypeError: ``df`` is not a DataFrame.
        ConfigError: ``code_range_post`` is neither ``"replace"`` nor ``"add"``.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
    ...                    "codeExternalId": ["L110", "L110"]})
    >>> result = check_frame("code_ranges", df)
    >>> result.failures[["row", "column", "check", "severity"]].values.tolist()
    [[0, 'codeExternalId', 'repeated', 'warning'], [1, 'codeExternalId', 'repeated', 'warning']]
    >>> result.ok
    True
    """
    spec = _spec_for(table)
    check_post(code_range_post)
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{table}: expected a pandas DataFrame, got {type(df).__name__}")
    source = [str(c) for c in df.columns]
    if columns:
        df = df.rename(columns=dict(columns))
    labels = df.index
    names, rows, replaced, shared = _match_headers(spec, [str(c) for c in df.columns])
    df = df.set_axis(names, axis=1)
    headers: dict[str, tuple[str, ...]] = {}
    for name, header in zip(names, source, strict=True):
        headers[name] = (*headers.get(name, ()), header)
    for f, where in shared.items():  # two headers for one field: show them both
        headers[f] = tuple(source[i] for i in where)
    rows += [
        r for r in _column_failures(table, names, spec, headers) if r["column"] not in replaced
    ]
    columns_ok = not rows

    raw = df.loc[:, ~pd.Index([str(c) for c in names]).duplicated()]
    raw = raw.set_axis([str(c) for c in raw.columns], axis=1).reset_index(drop=True)
    present = [c for c in spec.columns if c in raw.columns]
    raw, unsendable = unsendable_text(raw, present)

    work: dict[str, pd.Series] = {}
    failed_cells: dict[str, np.ndarray] = {}
    coercion: list[tuple[np.ndarray, str, np.ndarray]] = []
    for col in present:
        values, problems = COERCERS[spec.kinds[col]](raw[col], col)
        work[col] = values
        mask = problems.notna().to_numpy()
        failed_cells[col] = mask
        if mask.any():
            coercion.append((np.flatnonzero(mask), col, problems.to_numpy()[mask]))
    frame = pd.DataFrame(work, index=pd.RangeIndex(len(raw)))

    found: list[tuple[int, str | None, str, str | None]] = [*unsendable]  # pos, col, check, msg
    for positions, col, messages in coercion:
        found.extend((int(p), col, "type", m) for p, m in zip(positions, messages, strict=True))

    try:
        pandera_found = _pandera_failures(spec, frame) if present else []
    except Exception as exc:  # never let a pandera internal error reach the user as a traceback
        pandera_found = []
        rows.append(
            _column_row(table, None, "internal", f"schema validation could not run: {exc!r}", 0)
        )
    for pos, pcol, chk in pandera_found:
        if pos >= 0 and pcol in failed_cells and failed_cells[pcol][pos] and chk == "required":
            continue  # already reported as a type failure
        found.append((pos, pcol, chk, None))
    if table == "code_ranges" and code_range_post == "replace":
        found.extend(long_ranges(frame))
    if references:
        for col, allowed in references.items():
            if col not in frame.columns:
                continue
            values = frame[col]
            already = {p for p, c, chk, _ in found if c == col and SEVERITY[chk] == "error"}
            allowed_index = allowed if isinstance(allowed, pd.Index) else pd.Index(list(allowed))
            mask = (values.notna() & ~values.isin(allowed_index)).to_numpy()
            if not mask.any():
                continue
            parent = dict(spec.references).get(col, "the parent table")
            missing = values[mask]
            near = _near_ids(missing, allowed_index)
            for p, value, hint in zip(np.flatnonzero(mask), missing, near, strict=True):
                if int(p) in already:
                    continue
                message = f"{col} {value!r} is not an externalId of {parent}"
                if hint is not None:
                    message += f"; did you mean {hint!r}?"
                found.append((int(p), col, "reference", message))

    label_list = labels.tolist()
    # messages name the file's line when the frame was read from a file, else the row label
    lines = line_numbers(df, label_list) if "line_shifts" in df.attrs else []
    unit = "lines" if lines and None not in lines else "rows"
    shown = [f"line {n}" for n in lines] if unit == "lines" else [f"row {r}" for r in label_list]
    found += lookalikes(frame, [spec.id_column, *dict(spec.references)], shown)

    used = {col for _, col, _, _ in found if col is not None}
    raw_values = {c: raw[c].to_numpy(dtype=object) for c in used if c in raw.columns}
    ids = _objects(frame[spec.id_column]) if spec.id_column in frame.columns else None
    keys = [_objects(frame[c]) for c in spec.key if c in frame.columns]
    dup_groups: dict[tuple[Any, ...], list[Any]] = {}
    for i in sorted({p for p, _, chk, _ in found if chk in ("unique", "repeated") and p >= 0}):
        at: Any = lines[i] if unit == "lines" else label_list[i]
        dup_groups.setdefault(tuple(k[i] for k in keys), []).append(at)
    order = {c: i for i, c in enumerate(spec.columns)}
    for pos, fcol, chk, text in found:
        value = raw_values[fcol][pos] if pos >= 0 and fcol in raw_values else None
        if text is None:
            key = tuple(k[pos] for k in keys) if pos >= 0 else ()
            text = _message(spec, fcol, chk, value, key, dup_groups, unit)
        elif chk == "type":
            text = f"{text}; got {_show(value)}"
        rid = ids[pos] if pos >= 0 and ids is not None else None
        rows.append(
            {
                "table": table,
                "_pos": pos,
                "_order": len(order) if fcol is None else order.get(fcol, len(order)),
                "externalId": None if rid is None else str(rid),
                "column": fcol,
                "check": chk,
                "severity": SEVERITY[chk],
                "value": _native(value),
                "message": text,
            }
        )

    failures = _failure_frame(rows, labels)
    bad = np.zeros(len(raw), dtype=bool)
    bad[[r["_pos"] for r in rows if r["_pos"] >= 0 and r["severity"] == "error"]] = True
    frame.index = labels
    return CheckResult(
        table=table,
        frame=frame,
        failures=failures,
        bad=bad,
        columns_ok=columns_ok,
        headers=headers,
    )


def _objects(values: pd.Series) -> np.ndarray:
    """The values as an object array, ``None`` where missing."""
    out = values.to_numpy(dtype=object)
    out[pd.isna(out)] = None
    return out


def _near_ids(missing: pd.Series, allowed: pd.Index) -> list[str | None]:
    """For each missing id, an allowed id equal to it ignoring case and surrounding spaces."""
    if not len(allowed):
        return [None] * len(missing)
    text = pd.Series(allowed.astype(str), dtype="str")
    lookup = pd.Series(text.to_numpy(), index=text.str.strip().str.casefold().to_numpy())
    lookup = lookup[~lookup.index.duplicated()]
    keys = missing.astype("str").str.strip().str.casefold()
    hints = keys.map(lookup)
    return [None if pd.isna(h) else str(h) for h in hints.tolist()]


def _message(
    spec: TableSpec,
    col: str | None,
    chk: str,
    value: Any,
    key: tuple[Any, ...],
    dup_groups: dict[tuple[Any, ...], list[Any]],
    unit: str = "rows",
) -> str:
    if chk == "required":
        empty = isinstance(value, str)
        return f"{col} is required but {'empty' if empty else 'missing'}"
    if chk == "allowed_values" and col is not None:
        return _allowed_message(spec, col, value)
    if chk == "positive":
        return f"{col} must be greater than 0; got {_show(value)}"
    if chk == "whitespace":
        return f"{col} {value!r} has leading or trailing whitespace; it is sent as given"
    if chk == "blank":
        what = "missing" if not isinstance(value, str) else "empty" if value == "" else "blank"
        return f"{col} is {what}; it is sent as ''"
    if chk == "fractional":
        return fractional_message(str(col), _show(value))
    if chk in ("unique", "repeated"):
        rows = dup_groups.get(key, [])
        shown = ", ".join(str(r) for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
        if chk == "repeated":
            return (
                f"{spec.key[-1]} {key[-1]!r} is listed more than once for "
                f"{spec.key[0]} {key[0]!r} ({unit} {shown}); it is sent once"
            )
        return f"{col} {value!r} is not unique: {unit} {shown} share it"
    return f"{col}: failed {chk}; got {_show(value)}"


def _native(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def _failure_frame(rows: list[dict[str, Any]], labels: pd.Index) -> pd.DataFrame:
    if not rows:
        return empty_failures()
    df = pd.DataFrame(rows)
    df = df.sort_values(["_pos", "_order", "check"], kind="stable")
    pos = df["_pos"].to_numpy()
    row = np.full(len(df), None, dtype=object)
    for i in np.flatnonzero(pos >= 0):
        row[i] = labels[pos[i]]
    df["row"] = row
    out = df.loc[:, list(FAILURE_COLUMNS)].astype(object).reset_index(drop=True)
    return nullable_rows(out.where(out.notna(), None))


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def format_failures(failures: pd.DataFrame, limit: int = 10) -> str:
    """A short human summary of a failure frame: counts, then up to ``limit`` lines.

    Args:
        failures: A failure frame (:data:`FAILURE_COLUMNS`).
        limit: How many failures to list.

    Returns:
        Text such as ``"2 problems: clients 2 (1 row)"`` (with ``" (1 error, 1 warning)"``
        after the count when there are warnings) followed by one line per failure, a warning's
        message prefixed ``warning:``.

    >>> import pandas as pd
    >>> r = check_frame("code_ranges", pd.DataFrame(
    ...     {"initiativeExternalId": ["M-1", "M-2 "], "codeExternalId": ["", "L110"]}))
    >>> print(format_failures(r.failures))
    2 problems (1 error, 1 warning): code_ranges 2 (2 rows)
      code_ranges row 0 [M-1] codeExternalId: codeExternalId is required but empty
      code_ranges row 1 [M-2 ] initiativeExternalId: warning: initiativeExternalId 'M-2 ' \
has leading or trailing whitespace; it is sent as given
    """
    if failures.empty:
        return "no problems"
    n = len(failures)
    parts = []
    for table, group in failures.groupby("table", sort=False):
        n_rows = group["row"].dropna().nunique()
        cols = int(group["row"].isna().sum())
        bits = []
        if n_rows:
            bits.append(f"{n_rows} row{'s' if n_rows != 1 else ''}")
        if cols:
            bits.append(f"{cols} column-level")
        parts.append(f"{table} {len(group)} ({', '.join(bits)})")
    head = f"{n} problem{'s' if n != 1 else ''}"
    severity = (
        failures["severity"] if "severity" in failures else pd.Series("error", index=failures.index)
    )
    n_warnings = int((severity == "warning").sum())
    if n_warnings:
        n_errors = n - n_warnings
        head += (
            f" ({n_errors} error{'s' if n_errors != 1 else ''}, "
            f"{n_warnings} warning{'s' if n_warnings != 1 else ''})"
        )
    lines = [f"{head}: {'; '.join(parts)}"]
    for rec, sev in zip(
        failures.head(limit).itertuples(index=False), severity.head(limit), strict=True
    ):
        where = f"{rec.table}"
        if rec.row is not None and not (isinstance(rec.row, float) and np.isnan(rec.row)):
            where += f" row {rec.row!s}"
        if rec.externalId is not None:
            where += f" [{rec.externalId!s}]"
        if rec.column is not None:
            where += f" {rec.column!s}"
        lines.append(f"  {where}: {'warning: ' if sev == 'warning' else ''}{rec.message}")
    if n > limit:
        lines.append(f"  ... and {n - limit} more (see .failure_cases)")
    return "\n".join(lines)


def check(
    table: str,
    df: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    code_range_post: CodeRangePost = "replace",
) -> pd.DataFrame:
    """Coerce and validate one import table, returning the frame ready for payloads.

    Args:
        table: One of :data:`TABLES`.
        df: The rows as loaded from CSV, Excel, Parquet or built in pandas.
        columns: Renames applied first, ``{name in df: spec name}``.
        code_range_post: ``"replace"`` or ``"add"``, as for :func:`check_frame`.

    Returns:
        The spec's columns in field-table order, with dtypes ``str`` (``semanticType``: ``str``
        with NaN for null; a blank free-text cell ``""``), ``int64`` for ``unitIncrements``
        (``float64`` when a value is fractional) and ``bool`` for the booleans; index as given.
        Warnings do not stop it: see :func:`check_frame` for them.

    Raises:
        toolkit.errors.ValidationError: Any error; ``.failure_cases`` holds every failure,
            warnings included (:data:`FAILURE_COLUMNS`).
        ValueError: ``table`` is not a known table.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"], "call_sign": ["1"],
    ...                    "description": ["Widgets"]})
    >>> check("clients", df, columns={"call_sign": "callSign"})["callSign"].tolist()
    ['1']
    """
    result = check_frame(table, df, columns=columns, code_range_post=code_range_post)
    if not result.ok:
        raise ValidationError(format_failures(result.failures), result.failures)
    warn_lookalikes(result.failures)
    return _finalize(TABLES[table], result.frame)
