"""Failure frames: the one shape every check reports in (:data:`FAILURE_COLUMNS`, a row per
problem), the names of its checks, and pandera's in them."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from types import MappingProxyType
from typing import Any, Literal

import pandas as pd
import pyarrow as pa

from toolkit._core.dtypes import TEXT

FAILURE_COLUMNS = tuple("table row externalId column check severity value message".split())
"""Columns of every failure frame, in order."""

Severity = Literal["error", "warning"]

_ERRORS = (
    "column_missing column_unexpected column_duplicate column_present type encoding required "
    "allowed_values positive unique reference range_size internal"
).split()
_WARNINGS = "blank whitespace fractional repeated length lookalike".split()
SEVERITY: Mapping[str, Severity] = MappingProxyType(
    {**dict.fromkeys(_ERRORS, "error"), **dict.fromkeys(_WARNINGS, "warning")}
)
"""Failure ``check`` -> severity: an ``error`` blocks posting, a ``warning`` is sent as given."""

CHECKS: tuple[str, ...] = tuple(c for c in SEVERITY if c != "column_present")
"""Values of the import failure frame's ``check`` column."""

CHECK_NAMES: Mapping[str, str] = MappingProxyType(
    dict.fromkeys(("not_nullable", "not_blank", "str_length"), "required")
    | {"has_text": "blank", "trimmed": "whitespace", "field_uniqueness": "unique"}
    | {"multiple_fields_uniqueness": "repeated", "isin": "allowed_values"}
    | {"greater_than": "positive", "whole_number": "fractional", "dtype": "type"}
)
"""pandera check name (before any ``(`` of its statistics) -> the failure frame's ``check``."""


def check_name(pandera_check: str) -> str:
    """A pandera check name in the failure frame's words (unknown names pass through).

    >>> check_name("isin(['succeeded', 'failed'])"), check_name("str_length(1, None)")
    ('allowed_values', 'required')
    """
    return CHECK_NAMES.get(pandera_check.split("(")[0], pandera_check)


def empty_failures() -> pd.DataFrame:
    """An empty failure frame with :data:`FAILURE_COLUMNS` (a copy of one made once: every
    check of every table asks for one).

    >>> list(empty_failures().columns)
    ['table', 'row', 'externalId', 'column', 'check', 'severity', 'value', 'message']
    """
    return _EMPTY.copy()


def nullable_rows(frame: pd.DataFrame, columns: tuple[str, ...] = ("row", "line")) -> pd.DataFrame:
    """``row`` and ``line`` (or ``columns``) as ``Int64`` where they hold whole numbers, in place.

    >>> nullable_rows(pd.DataFrame({"row": [0, None, 2.0]}))["row"].tolist()
    [0, <NA>, 2]
    """
    for col in columns:
        if col not in frame.columns or str(frame[col].dtype) == "Int64":
            continue
        values = frame[col].tolist()
        if any(isinstance(v, bool | str | bytes) for v in values):
            continue
        with suppress(TypeError, ValueError):  # not whole numbers: kept as they are
            frame[col] = pd.array(
                [None if v is None or v is pd.NA or v != v else v for v in values], dtype="Int64"
            )
    return frame


def failure_frame(
    *,
    table: Any,
    row: Any = None,
    externalId: Any = None,  # noqa: N803 - the failure frame's own column name
    column: Any = None,
    check: Any,
    severity: Any = "error",
    value: Any = None,
    message: Any,
) -> pd.DataFrame:
    """Build a failure frame from columns (lists, or scalars broadcast over the lists).

    Returns:
        A frame of :data:`FAILURE_COLUMNS`: text as ``string`` (missing: ``pd.NA``), ``row``
        ``Int64``
        and ``value`` (the cell as read, of any type) ``object`` with ``pd.NA`` for missing.

    >>> failure_frame(table="clients", check="required", message="x").iloc[0].tolist()
    ['clients', <NA>, <NA>, <NA>, 'required', 'error', <NA>, 'x']
    """
    values = (table, row, externalId, column, check, severity, value, message)
    data = dict(zip(FAILURE_COLUMNS, values, strict=True))
    if not any(isinstance(v, list | tuple | pd.Series | pd.Index) for v in data.values()):
        data = {k: [v] for k, v in data.items()}
    frame = pd.DataFrame(data, columns=list(FAILURE_COLUMNS)).astype(_DTYPES)
    frame["value"] = frame["value"].where(frame["value"].notna(), pd.NA)
    return nullable_rows(frame)


_DTYPES = dict.fromkeys(FAILURE_COLUMNS, TEXT) | {"row": object, "value": object}
_EMPTY = failure_frame(table=[], check=[], message=[])


def row_warnings(failures: pd.DataFrame, rows: Any, tables: Any = None) -> pd.Series:
    """Each row's warning messages joined with ``"; "``: a result frame's ``warning`` column
    (``rows``: the input labels, one per result row; ``tables``: each row's table, if several).

    Returns:
        A ``string`` series, one value per row, on a default index.

    >>> fc = failure_frame(table="t", row=[1], check="blank", severity="warning", message="a")
    >>> row_warnings(fc, [0, 1]).tolist()
    [<NA>, 'a']
    """
    warned = failures[failures["severity"] == "warning"]
    by_key: dict[tuple[Any, Any], list[str]] = {}
    for table, row, message in zip(warned["table"], warned["row"], warned["message"], strict=True):
        if not pd.isna(row):
            by_key.setdefault((table if tables is not None else None, row), []).append(message)
    if not by_key:  # no row warned: no label looked at
        return pd.Series(pa.nulls(len(rows), pa.large_string()), dtype=TEXT)
    labels = list(rows)
    keys = zip(tables if tables is not None else [None] * len(labels), labels, strict=True)
    joined = ["; ".join(by_key[k]) if k in by_key else None for k in keys]
    return pd.Series(pd.array(joined, dtype=TEXT))
