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
        unitIncrements: Series[Any] = seconds()
        ...

Severity follows the spec's line: what the service refuses is an ``error`` and blocks posting;
what it allows but looks wrong is a ``warning`` that does not
(:data:`toolkit.core.failures.SEVERITY`).

==================  ========================================  ===================================
factory             pandera checks                            failure ``check`` (severity)
==================  ========================================  ===================================
external_id()       unique, ``not_blank``, ``trimmed``        unique, required (error);
                                                              whitespace (warning)
reference(table)    ``not_blank``, ``trimmed``                required, reference (error);
                                                              whitespace (warning)
required_text()     ``has_text``                              blank (warning; sent as ``""``)
one_of(values)      isin                                      allowed_values (error)
seconds()           greater_than 0, ``whole_number``          positive (error); fractional
                                                              (warning)
optional(kind)      isin (with ``values``); the column may    allowed_values, type (error)
                    be left out, a blank cell is not sent
==================  ========================================  ===================================

A code range listing the same pair twice is a ``repeated`` warning (the pair is sent once).

``not_blank``, ``trimmed``, ``has_text`` and ``whole_number`` are registered with
:func:`pandera.extensions.register_check_method`, so they are also ``pa.Check.not_blank()`` and
so on. A model used directly (``ClientSchema.validate(df)``) raises on every rule, warnings
included; :func:`toolkit.schemas.check_frame` sorts its failures by severity.
:func:`reference` records its parent table in the field's metadata (:data:`REFERENCES`), where
:data:`toolkit.schemas.TABLES` reads the cross-table references; :func:`external_id` marks the
key (:data:`KEY`); :data:`KIND` tells the coercion step how to read a column.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import pandera.pandas as pa
from pandera.api.extensions import register_check_method  # pandera.extensions re-exports it

__all__ = [
    "KEY",
    "KIND",
    "REFERENCES",
    "external_id",
    "has_text",
    "not_blank",
    "one_of",
    "optional",
    "reference",
    "required_text",
    "seconds",
    "trimmed",
    "whole_number",
]

KEY = "key"
"""Field metadata flag of the column that identifies a row (set by :func:`external_id`)."""
REFERENCES = "references"
"""Field metadata key naming the parent table of a reference column (set by :func:`reference`)."""
KIND = "kind"
"""Field metadata key overriding the coercion kind read from the dtype: ``free_text`` (blank is
sent as ``""``), ``number`` (a JSON number: whole values stay ints, fractions floats), ``list``
(an array of strings) or ``date`` (``YYYY-MM-DD``); see :mod:`toolkit.ingress.cells`."""

_MAX_WHOLE = 2**53  # beyond this a float cannot tell one whole number from the next


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


@register_check_method
def has_text(values: pd.Series) -> pd.Series:
    """Free text holds something besides whitespace (pandera check ``has_text``).

    The same test as :func:`not_blank`, under its own name because its failure is a warning.

    Args:
        values: Text values.

    Returns:
        True where the text is not blank.

    >>> has_text(pd.Series(["Acme", ""])).tolist()
    [True, False]
    """
    return values.str.strip() != ""


@register_check_method
def whole_number(values: pd.Series) -> pd.Series:
    """Each number is whole and below 2**53, as a count of seconds is expected to be.

    Args:
        values: Numbers.

    Returns:
        True where the number is whole.

    >>> whole_number(pd.Series([360.0, 360.5])).tolist()
    [True, False]
    """
    numbers = values.astype("float64")
    return (numbers % 1 == 0) & (numbers.abs() < _MAX_WHOLE)


def external_id() -> Any:
    """The row's ``externalId``: unique in the table and not blank (errors); surrounding
    whitespace is a warning (the service takes the id as given).

    Returns:
        A pandera ``Field`` marked as the table's key.

    >>> field = external_id()
    >>> field.unique, [c.name for c in field.checks], field.metadata
    (True, ['not_blank', 'trimmed'], {'key': True})
    """
    return pa.Field(unique=True, not_blank=(), trimmed=(), metadata={KEY: True})


def reference(table: str) -> Any:
    """An ``externalId`` of a row of ``table``: not blank (error); surrounding whitespace is a
    warning.

    Whether the id exists is checked across tables by
    :func:`toolkit.ingress.validation.validate`; an
    unknown id is an error, since the service refuses it.

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
    """Free text the spec requires; the service accepts ``""``, so a blank is a warning.

    A blank or missing cell is sent as ``""``; other text is sent as given.

    Returns:
        A pandera ``Field`` of kind ``free_text``.

    >>> [c.name for c in required_text().checks], required_text().metadata
    (['has_text'], {'kind': 'free_text'})
    """
    return pa.Field(has_text=(), metadata={KIND: "free_text"})


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


def seconds() -> Any:
    """A number of seconds (a JSON number): greater than 0, expected whole.

    A fraction is accepted by the service and sent as given, so it is a warning.

    Returns:
        A pandera ``Field`` of kind ``number``.

    >>> [c.name for c in seconds().checks], seconds().metadata
    (['greater_than', 'whole_number'], {'kind': 'number'})
    """
    return pa.Field(gt=0, whole_number=(), metadata={KIND: "number"})


def optional(kind: str = "text", values: Iterable[str] | None = None) -> Any:
    """A field the service publishes beyond the spec: the column may be left out, and a blank
    cell is not sent (the field is absent from that row's request).

    Declare it ``Series[...] | None`` in the model, so pandera does not require the column.

    Args:
        kind: How a cell is read: ``text``, ``bool``, ``list`` (an array of strings: ``;``
            separated or a JSON list in a cell) or ``date`` (``YYYY-MM-DD``).
        values: The allowed values, case-sensitive, when the service publishes an enum.

    Returns:
        A nullable pandera ``Field``.

    >>> field = optional("list")
    >>> field.nullable, field.metadata
    (True, {'kind': 'list'})
    >>> optional(values=["client", "parent"]).checks[0].statistics
    {'allowed_values': ['client', 'parent']}
    """
    return pa.Field(
        isin=list(values) if values is not None else None, nullable=True, metadata={KIND: kind}
    )
