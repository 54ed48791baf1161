"""Pandera models of the five import tables, one per field table of the interface spec.

Client, Initiative, Code type, Code, and Code range in long form (one row per
``(initiativeExternalId, codeExternalId)`` pair): one column per line, declared with the shared
rules of :mod:`toolkit.ingress.rules` (``external_id()``, ``required_text()``,
``reference(table)``, ``one_of(values)``, ``seconds()``, ``optional(kind)``). :data:`TABLES`
reads each table's key, references, column kinds and optional columns from its model.

The optional columns are the fields the service publishes beyond the spec (typed
``Series[...] | None``): a frame may leave them out, and a blank cell is not sent. A list
column (``externalGroupIds``, ``userGroupExternalIds``) holds Python lists in a frame, and
``;``-separated ids (``G1; G2``) or a JSON list (``["G1", "G2"]``) in a CSV or Excel cell.

The engine that runs a loaded frame through these models (coercion per column kind, the failure
frame, :func:`~toolkit.ingress.checks.check_frame`, :func:`~toolkit.ingress.checks.check`) is
:mod:`toolkit.ingress.checks`.

>>> list(TABLES)
['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']
>>> TABLES["code_ranges"].key
('initiativeExternalId', 'codeExternalId')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandera.pandas as pa
from pandera.typing import Series

from toolkit.ingress.rules import (
    KEY,
    KIND,
    REFERENCES,
    external_id,
    one_of,
    optional,
    reference,
    required_text,
    seconds,
)

__all__ = [
    "BILLING_TYPES",
    "CLIENT_TYPES",
    "LOCALES",
    "SEMANTIC_TYPES",
    "STATUSES",
    "TABLES",
    "ClientSchema",
    "CodeRangeSchema",
    "CodeSchema",
    "CodeTypeSchema",
    "InitiativeSchema",
    "TableSpec",
]

BILLING_TYPES: tuple[str, ...] = ("billable", "non-billable")
"""Allowed ``billingType`` values (case-sensitive)."""
STATUSES: tuple[str, ...] = ("active", "inactive")
"""Allowed initiative ``status`` values (case-sensitive)."""
SEMANTIC_TYPES: tuple[str, ...] = ("action", "activity", "location", "phase", "task")
"""Allowed non-null ``semanticType`` values (case-sensitive)."""
CLIENT_TYPES: tuple[str, ...] = ("client", "parent")
"""Allowed values of a client's optional ``type`` (published beyond the spec)."""
LOCALES: tuple[str, ...] = (
    "da-DK",
    "de-DE",
    "en-CA",
    "en-GB",
    "en-US",
    "es-ES",
    "es-MX",
    "fi-FI",
    "fr-CA",
    "fr-FR",
    "is-IS",
    "it-IT",
    "ko-KR",
    "nl-NL",
    "no-NO",
    "pt-PT",
    "sv-SE",
)
"""The 17 BCP-47 tags of an initiative's optional ``locale`` (published beyond the spec)."""


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class ClientSchema(pa.DataFrameModel):
    """Rows of the client import (spec: Client import payload).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"], "callSign": ["1"],
    ...                    "description": ["Widgets"]})
    >>> len(ClientSchema.validate(df))
    1
    """

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    callSign: Series[str] = required_text()
    description: Series[str] = required_text()
    type: Series[str] | None = optional(values=CLIENT_TYPES)

    class Config:
        name = "clients"
        strict = True
        coerce = False


class InitiativeSchema(pa.DataFrameModel):
    """Rows of the initiative (matter or project) import (spec: Initiative import payload).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"billingType": ["billable"], "externalId": ["M-1"], "name": ["A v B"],
    ...                    "description": ["Suit"], "callSign": ["1-1"],
    ...                    "clientExternalId": ["C-1"], "unitIncrements": [360],
    ...                    "status": ["active"]})
    >>> len(InitiativeSchema.validate(df))
    1
    """

    billingType: Series[str] = one_of(BILLING_TYPES)
    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    description: Series[str] = required_text()
    callSign: Series[str] = required_text()
    clientExternalId: Series[str] = reference("clients")
    unitIncrements: Series[Any] = seconds()
    status: Series[str] = one_of(STATUSES)
    externalGroupIds: Series[Any] | None = optional("list")
    locale: Series[str] | None = optional(values=LOCALES)
    allowFrom: Series[str] | None = optional("date")
    allowTo: Series[str] | None = optional("date")

    class Config:
        name = "initiatives"
        strict = True
        coerce = False


class CodeTypeSchema(pa.DataFrameModel):
    """Rows of the code type import (spec: Code type import payload).

    ``semanticType`` is null (missing) or one of :data:`SEMANTIC_TYPES`.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"externalId": ["task-code"], "name": ["task-code"],
    ...                    "semanticType": ["task"], "customerDefaultable": [True],
    ...                    "userDefaultable": [False]})
    >>> len(CodeTypeSchema.validate(df))
    1
    """

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    semanticType: Series[str] = one_of(SEMANTIC_TYPES, nullable=True)
    customerDefaultable: Series[bool]
    userDefaultable: Series[bool]
    orderingSequence: Series[str] | None = optional()

    class Config:
        name = "code_types"
        strict = True
        coerce = False


class CodeSchema(pa.DataFrameModel):
    """Rows of the code import (spec: Code import payload).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"externalId": ["L110"], "name": ["L110"],
    ...                    "description": ["Fact Investigation/Development"],
    ...                    "codeTypeExternalId": ["task-code"]})
    >>> len(CodeSchema.validate(df))
    1
    """

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    description: Series[str] = required_text()
    codeTypeExternalId: Series[str] = reference("code_types")
    orderingSequence: Series[str] | None = optional()
    group: Series[str] | None = optional()
    userGroupExternalIds: Series[Any] | None = optional("list")
    isDisabled: Series[bool] | None = optional("bool")

    class Config:
        name = "codes"
        strict = True
        coerce = False


class CodeRangeSchema(pa.DataFrameModel):
    """Code ranges in long form: one row per permitted code of an initiative.

    The pair ``(initiativeExternalId, codeExternalId)`` is unique. Rows are grouped per
    initiative into one ``{"codeExternalIds": [...]}`` payload by
    :func:`toolkit.ingress.payloads.to_code_range_payloads`.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"],
    ...                    "codeExternalId": ["L110", "L120"]})
    >>> len(CodeRangeSchema.validate(df))
    2
    """

    initiativeExternalId: Series[str] = reference("initiatives")
    codeExternalId: Series[str] = reference("codes")

    class Config:
        name = "code_ranges"
        strict = True
        coerce = False
        unique = ["initiativeExternalId", "codeExternalId"]


# --------------------------------------------------------------------------------------------
# Table registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TableSpec:
    """What the toolkit knows about one import table.

    Attributes:
        name: Table name (``clients``, ``initiatives``, ``code_types``, ``codes``,
            ``code_ranges``).
        schema: The pandera model.
        key: Column(s) that identify a row; unique within a frame.
        columns: The spec's columns, in the field table's order.
        references: ``(column, parent table)`` pairs checked by
            :func:`toolkit.ingress.validation.validate`.
        kinds: Coercion kind of each column: ``text`` (ids and enums: blank is missing),
            ``free_text`` (blank is ``""``), ``number`` or ``bool``.
        nullable: Columns whose missing value means null rather than a failure.
        optional: Columns a frame may leave out; a missing value is not sent at all.
    """

    name: str
    schema: type[pa.DataFrameModel]
    key: tuple[str, ...]
    columns: tuple[str, ...]
    references: tuple[tuple[str, str], ...] = ()
    kinds: Mapping[str, str] = field(default_factory=dict)
    nullable: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()

    @property
    def id_column(self) -> str:
        """The column reported as ``externalId`` in failure frames (the first key column)."""
        return self.key[0]


def _spec(schema: type[pa.DataFrameModel]) -> TableSpec:
    """A table's spec, read from its model: the name (``Config.name``), the key (the
    :func:`~toolkit.ingress.rules.external_id` column, or ``Config.unique``), the references
    (:func:`~toolkit.ingress.rules.reference` columns) and each column's coercion kind."""
    full = schema.to_schema()
    meta = {col: column.metadata or {} for col, column in full.columns.items()}
    kinds: dict[str, str] = {}
    for col, column in full.columns.items():
        kinds[col] = meta[col].get(KIND) or ("bool" if "bool" in str(column.dtype) else "text")
    key = tuple(full.unique or [col for col, m in meta.items() if m.get(KEY)])
    return TableSpec(
        name=str(full.name),
        schema=schema,
        key=key,
        columns=tuple(full.columns),
        references=tuple((col, m[REFERENCES]) for col, m in meta.items() if REFERENCES in m),
        kinds=MappingProxyType(kinds),
        nullable=frozenset(col for col, column in full.columns.items() if column.nullable),
        optional=frozenset(col for col, column in full.columns.items() if not column.required),
    )


TABLES: Mapping[str, TableSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in map(
            _spec, (ClientSchema, InitiativeSchema, CodeTypeSchema, CodeSchema, CodeRangeSchema)
        )
    }
)
"""The import tables in the spec's suggested import order: name -> :class:`TableSpec`."""
