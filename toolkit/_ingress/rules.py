"""The column rules of the import tables, written once, so each model reads like its field table.

What the service refuses is an error; what it allows but looks wrong is a check with
``raise_warning=True``. A check's ``error`` is what pandera says when a model is used alone;
its statistic :data:`TEMPLATE` is the message the toolkit fills in for one cell. Every check
passes over a cell the parser could not read.

>>> [(c.name, c.raise_warning) for c in external_id().checks]
[('not_blank', False), ('trimmed', True)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

from toolkit._core.frames import MAX_WHOLE
from toolkit._ingress.cells import readable

KEY = "key"
"""Field metadata flag of the column(s) that identify a row."""
REFERENCES = "references"
"""Field metadata key naming the parent table of a reference column (set by :func:`reference`)."""
KIND = "kind"
"""Field metadata key: how the parser reads a cell (:mod:`toolkit._ingress.cells`)."""
TEMPLATE = "template"
"""Check statistic: the message template of one failing cell (``{column}``, ``{value}``, ...)."""


def _check(
    name: str,
    test: Callable[[pd.Series], pd.Series],
    says: str,
    template: str,
    warn: bool = False,
    **stats: Any,
) -> pa.Check:
    """A pandera check of the readable, non-missing cells (the others pass): pandera ``says``,
    the toolkit fills in ``template``."""

    def cells(values: pd.Series) -> pd.Series:
        keep = readable(values) & values.notna().to_numpy()
        if keep.all():  # the usual column: tested whole, not copied
            return pd.Series(test(values).to_numpy(dtype=bool), index=values.index)
        out = np.ones(len(values), dtype=bool)
        if keep.any():
            out[keep] = test(values[keep]).to_numpy(dtype=bool)
        return pd.Series(out, index=values.index)

    stats = {TEMPLATE: template, **stats}
    return pa.Check(cells, name=name, error=says, raise_warning=warn, statistics=stats)


def _field(*checks: pa.Check, **kwargs: Any) -> Any:
    field = pa.Field(**kwargs)
    field.checks = list(checks)
    return field


#: An id not blank (error); one check shared by the key and reference columns, as the cells'.
_NOT_BLANK = _check(
    "not_blank",
    lambda s: s.astype(str).str.strip() != "",
    "is required but blank",
    "{column} is required but {empty}",
)

#: An id without spaces around it (a warning: sent as given).
_TRIMMED = _check(
    "trimmed",
    lambda s: s.astype(str).str.strip() == s.astype(str),
    "has leading or trailing whitespace; it is sent as given",
    "{column} {value} has leading or trailing whitespace; it is sent as given",
    True,
)


def external_id() -> Any:
    """The row's ``externalId``: unique and not blank (errors); spaces around it warn.

    >>> external_id().metadata
    {'key': True, 'kind': 'text'}
    """
    return _field(_NOT_BLANK, _TRIMMED, unique=True, metadata={KEY: True, KIND: "text"})


def reference(table: str, *, key: bool = False) -> Any:
    """An ``externalId`` of a row of ``table``: not blank (error); spaces around it warn.

    Args:
        table: The parent table, e.g. ``"clients"``.
        key: Whether the column is part of the row's key (code ranges).

    >>> reference("clients").metadata
    {'references': 'clients', 'kind': 'text'}
    """
    meta: dict[str, Any] = {REFERENCES: table, KIND: "text"}
    return _field(_NOT_BLANK, _TRIMMED, metadata={**meta, KEY: True} if key else meta)


def required_text() -> Any:
    """Free text the spec requires; the service accepts ``""``, so a blank warns (sent as ``""``).

    >>> [(c.name, c.raise_warning) for c in required_text().checks]
    [('has_text', True)]
    """
    has_text = _check(
        "has_text",
        lambda s: s.astype(str).str.strip() != "",
        "is blank; it is sent as ''",
        "{column} is {blank}; it is sent as ''",
        True,
    )
    return _field(has_text, metadata={KIND: "free_text"})


def _one_of(values: list[str]) -> pa.Check:
    return _check(
        "isin",
        lambda s: s.isin(values),
        f"must be one of {', '.join(values)} (case-sensitive)",
        "{column} must be one of {allowed} (case-sensitive){or_empty}; got {value}{hint}",
        allowed_values=values,
    )


def one_of(values: Iterable[str], *, nullable: bool = False) -> Any:
    """One of the spec's values, case-sensitive; missing means null when ``nullable``.

    Args:
        values: The allowed values.
        nullable: Whether a missing value (null) is allowed.

    >>> one_of(["active", "inactive"]).checks[0].statistics["allowed_values"]
    ['active', 'inactive']
    """
    return _field(_one_of(list(values)), nullable=nullable, metadata={KIND: "text"})


def seconds() -> Any:
    """A number of seconds: greater than 0 (error); a fraction warns.

    >>> [(c.name, c.raise_warning) for c in seconds().checks]
    [('greater_than', False), ('whole_number', True)]
    """
    number = np.float64
    positive = _check(
        "greater_than",
        lambda s: s.astype(number) > 0,
        "must be greater than 0",
        "{column} must be greater than 0; got {value}",
    )
    whole = _check(
        "whole_number",
        lambda s: (s.astype(number) % 1 == 0) & (s.astype(number).abs() < MAX_WHOLE),
        "is not a whole number of seconds; it is sent as given",
        "{column} {value} is not a whole number of seconds; it is sent as given{unit}",
        True,
    )
    return _field(positive, whole, metadata={KIND: "number"})


def flag() -> Any:
    """A boolean: ``true``/``false`` in any case, 1 or 0.

    >>> flag().metadata
    {'kind': 'bool'}
    """
    return _field(metadata={KIND: "bool"})


def optional(kind: str = "text", values: Iterable[str] | None = None) -> Any:
    """A field the service publishes beyond the spec: the column may be left out, a blank not sent.

    Args:
        kind: How a cell is read: ``text``, ``bool``, ``list`` or ``date``.
        values: The allowed values, case-sensitive, when the service publishes an enum.

    >>> optional("list").nullable, optional(values=["client"]).checks[0].error
    (True, 'must be one of client (case-sensitive)')
    """
    checks = [] if values is None else [_one_of(list(values))]
    return _field(*checks, nullable=True, metadata={KIND: kind})
