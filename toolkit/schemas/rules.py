"""The column rules of the import tables, defined once, so each model reads like its field table.

Every column of the spec's ingress field tables is one of a few kinds. A model declares each
column with the factory of its kind::

    class ClientSchema(pa.DataFrameModel):
        externalId: Series[str] = external_id()
        name: Series[str] = required_text()
        ...

    class InitiativeSchema(pa.DataFrameModel):
        billingType: Series[str] = one_of(BILLING_TYPES)
        clientExternalId: Series[str] = reference("clients")
        unitIncrements: Series[int] = positive()
        ...

==================  ====================================  =======================================
factory             pandera checks                        failure ``check`` (:data:`CHECK_NAMES`)
==================  ====================================  =======================================
external_id()       unique, ``not_blank``, ``trimmed``    unique, required, whitespace
reference(table)    ``not_blank``, ``trimmed``            required, whitespace (and ``reference``)
required_text()     ``not_blank``                         required
one_of(values)      isin                                  allowed_values
positive()          greater_than 0                        positive
==================  ====================================  =======================================

``not_blank`` and ``trimmed`` are registered with
:func:`pandera.extensions.register_check_method`, so they are also ``pa.Check.not_blank()`` and
``pa.Check.trimmed()``. :func:`reference` records its parent table in the field's metadata
(:data:`REFERENCES`), where :data:`toolkit.schemas.TABLES` reads the cross-table references;
:func:`external_id` marks the key (:data:`KEY`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import pandas as pd
import pandera.pandas as pa
from pandera.extensions import register_check_method

__all__ = [
    "CHECK_NAMES",
    "KEY",
    "REFERENCES",
    "external_id",
    "not_blank",
    "one_of",
    "positive",
    "reference",
    "required_text",
    "trimmed",
]

KEY = "key"
"""Field metadata flag of the column that identifies a row (set by :func:`external_id`)."""
REFERENCES = "references"
"""Field metadata key naming the parent table of a reference column (set by :func:`reference`)."""


@register_check_method
def not_blank(values: pd.Series) -> pd.Series:
    """Each text holds something besides whitespace (pandera check ``not_blank``).

    Args:
        values: Text values.

    Returns:
        True where the text is not blank.

    >>> not_blank(pd.Series(["a", " ", ""])).tolist()
    [True, False, False]
    """
    return values.str.strip() != ""


@register_check_method
def trimmed(values: pd.Series) -> pd.Series:
    """Each text has no leading or trailing whitespace (pandera check ``trimmed``).

    Args:
        values: Text values.

    Returns:
        True where the text equals its stripped self.

    >>> trimmed(pd.Series(["C-1", " C-1", "C-1\\t"])).tolist()
    [True, False, False]
    """
    return values.str.strip() == values


CHECK_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "not_nullable": "required",
        "not_blank": "required",
        "trimmed": "whitespace",
        "field_uniqueness": "unique",
        "multiple_fields_uniqueness": "unique",
        "isin": "allowed_values",
        "greater_than": "positive",
        "dtype": "type",
    }
)
"""pandera check name (before any ``(`` of its statistics) -> the failure frame's ``check``."""


def external_id() -> Any:
    """The row's ``externalId``: unique in the table, not blank, no surrounding whitespace.

    Returns:
        A pandera ``Field`` marked as the table's key.

    >>> field = external_id()
    >>> field.unique, [c.name for c in field.checks], field.metadata
    (True, ['not_blank', 'trimmed'], {'key': True})
    """
    return pa.Field(unique=True, not_blank=(), trimmed=(), metadata={KEY: True})


def reference(table: str) -> Any:
    """An ``externalId`` of a row of ``table``: not blank, no surrounding whitespace.

    Whether the id exists is checked across tables by :func:`toolkit.validation.validate`.

    Args:
        table: The parent table, e.g. ``"clients"``.

    Returns:
        A pandera ``Field`` whose metadata names the parent table.

    >>> field = reference("clients")
    >>> field.metadata
    {'references': 'clients'}
    """
    return pa.Field(not_blank=(), trimmed=(), metadata={REFERENCES: table})


def required_text() -> Any:
    """Free text the spec requires: not blank.

    Returns:
        A pandera ``Field``.

    >>> [c.name for c in required_text().checks]
    ['not_blank']
    """
    return pa.Field(not_blank=())


def one_of(values: Iterable[str], *, nullable: bool = False) -> Any:
    """One of the spec's values, case-sensitive; missing means null when ``nullable``.

    Args:
        values: The allowed values.
        nullable: Whether a missing value (null) is allowed.

    Returns:
        A pandera ``Field``.

    >>> one_of(["active", "inactive"]).checks[0].statistics
    {'allowed_values': ['active', 'inactive']}
    """
    return pa.Field(isin=list(values), nullable=nullable)


def positive() -> Any:
    """A number greater than 0.

    Returns:
        A pandera ``Field``.

    >>> positive().checks[0].statistics
    {'min_value': 0}
    """
    return pa.Field(gt=0)
