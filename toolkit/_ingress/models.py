"""Pandera models of the five import tables, one per field table of the interface spec.

Each column is declared with a rule of :mod:`toolkit._ingress.rules`; the parser reads the cells
as loaded (:func:`toolkit._ingress.cells.parse`) and a check with ``raise_warning=True`` only warns.
Optional columns (``Series[...] | None``) are the fields the service publishes beyond the spec.

>>> list(TABLES)
['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from toolkit._core.failures import check_name
from toolkit._ingress.cells import Unreadable, parse, readable
from toolkit._ingress.names import match_headers
from toolkit._ingress.ranges import CODE_RANGE_MAX
from toolkit._ingress.rules import (
    KEY,
    KIND,
    REFERENCES,
    TEMPLATE,
    external_id,
    flag,
    one_of,
    optional,
    reference,
    required_text,
    seconds,
)
from toolkit._ingress.text import MAX_CELL

BILLING_TYPES: tuple[str, ...] = ("billable", "non-billable")
"""Allowed ``billingType`` values (case-sensitive)."""
STATUSES: tuple[str, ...] = ("active", "inactive")
"""Allowed initiative ``status`` values (case-sensitive)."""
SEMANTIC_TYPES: tuple[str, ...] = ("action", "activity", "location", "phase", "task")
"""Allowed non-null ``semanticType`` values (case-sensitive)."""
CLIENT_TYPES: tuple[str, ...] = ("client", "parent")
"""Allowed values of a client's optional ``type`` (published beyond the spec)."""
LOCALES: tuple[str, ...] = tuple(
    "da-DK de-DE en-CA en-GB en-US es-ES es-MX fi-FI fr-CA fr-FR is-IS it-IT ko-KR nl-NL no-NO"
    " pt-PT sv-SE".split()
)
"""The 17 BCP-47 tags of an initiative's optional ``locale`` (published beyond the spec)."""


def _unmarked(check: str) -> Any:
    # an Unreadable makes a column object: another column passes whole
    return lambda values: pd.Series(readable(values, check), index=values.index)


def _fits(values: pd.Series) -> pd.Series:
    if isinstance(values.dtype, pd.StringDtype):
        return values.str.len().fillna(0) <= MAX_CELL
    if values.dtype == object:
        return values.map(lambda v: len(v) if isinstance(v, str) else 0) <= MAX_CELL
    return pd.Series(True, index=values.index)


_CELL_CHECKS = (
    *(
        pa.Check(_unmarked(check), name=check, error=error, statistics={TEMPLATE: template})
        for check, error, template in (
            ("type", "cannot be read as the column's type", "{why}; got {value}"),
            ("encoding", "cannot be read as text", "{why}"),
        )
    ),
    pa.Check(
        _fits,
        name="length",
        error=f"is longer than {MAX_CELL:,} characters; it is sent as given",
        statistics={
            TEMPLATE: "{column} is {length:,} characters long, more than {max_cell:,}; it is "
            "sent as given{breaks}"
        },
        raise_warning=True,
    ),
)
"""Checks of every cell: unreadable (``type``, ``encoding``) errors; over-long text warns."""


class _ImportModel(pa.DataFrameModel):
    """What the five import models share: the parser and the checks of every cell; a model is
    named after its table (``class ClientSchema(_ImportModel, table="clients")``)."""

    def __init_subclass__(cls, table: str = "", **kwargs: Any) -> None:
        # pandera names a model by its Config's name: a Config of the table's name, inherited
        cls.Config = type("Config", (cls.Config,), {"name": table})  # type: ignore[misc,assignment]
        super().__init_subclass__(**kwargs)  # type: ignore[no-untyped-call]  # pandera's is untyped

    @classmethod
    def to_schema(cls) -> pa.DataFrameSchema:
        """The model's schema: no dtype checks (the parser reads the cells), cell checks added."""
        schema = super().to_schema()
        return schema.update_columns(
            {
                c: {"dtype": None, "checks": [*col.checks, *_CELL_CHECKS]}
                for c, col in schema.columns.items()
            }
        )

    @pa.dataframe_parser
    @classmethod
    def parse(cls, df: pd.DataFrame) -> pd.DataFrame:
        """Headers matched to the spec's names, each cell read as its column's kind."""
        schema = super().to_schema()
        kinds = {c: (col.metadata or {}).get(KIND, "text") for c, col in schema.columns.items()}
        names = match_headers(str(schema.name), list(kinds), [str(c) for c in df.columns])
        return parse(df.set_axis(names.names, axis=1), kinds)

    class Config:
        strict = True
        coerce = False


class ClientSchema(_ImportModel, table="clients"):
    """Rows of the client import (spec: Client import payload)."""

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    callSign: Series[str] = required_text()
    description: Series[str] = required_text()
    type: Series[str] | None = optional(values=CLIENT_TYPES)


class InitiativeSchema(_ImportModel, table="initiatives"):
    """Rows of the initiative (matter or project) import (spec: Initiative import payload)."""

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


class CodeTypeSchema(_ImportModel, table="code_types"):
    """Rows of the code type import (spec: Code type import payload)."""

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    semanticType: Series[str] = one_of(SEMANTIC_TYPES, nullable=True)
    customerDefaultable: Series[bool] = flag()
    userDefaultable: Series[bool] = flag()
    orderingSequence: Series[str] | None = optional()


class CodeSchema(_ImportModel, table="codes"):
    """Rows of the code import (spec: Code import payload)."""

    externalId: Series[str] = external_id()
    name: Series[str] = required_text()
    description: Series[str] = required_text()
    codeTypeExternalId: Series[str] = reference("code_types")
    orderingSequence: Series[str] | None = optional()
    group: Series[str] | None = optional()
    userGroupExternalIds: Series[Any] | None = optional("list")
    isDisabled: Series[bool] | None = optional("bool")


class CodeRangeSchema(_ImportModel, table="code_ranges"):
    """Code ranges in long form: one row per permitted code of an initiative."""

    initiativeExternalId: Series[str] = reference("initiatives", key=True)
    codeExternalId: Series[str] = reference("codes", key=True)

    @pa.dataframe_check(
        name="repeated",
        error="a codeExternalId is listed more than once for its initiativeExternalId; it is "
        "sent once",
        statistics={
            TEMPLATE: "codeExternalId {code} is listed more than once for initiativeExternalId "
            "{initiative} ({rows}); it is sent once"
        },
        raise_warning=True,
    )
    def listed_once(cls, df: pd.DataFrame) -> pd.Series:
        """A pair listed twice is sent once: a warning."""
        pair = ["initiativeExternalId", "codeExternalId"]
        if not set(pair) <= set(df.columns):
            return pd.Series(True, index=df.index)
        keys = df[pair]
        if any(map(pd.api.types.is_object_dtype, keys.dtypes)):  # an unreadable cell: no value
            keys = keys.astype(object).map(lambda v: None if isinstance(v, Unreadable) else v)
        # text columns as they are: Arrow's hashes, no Python string per cell
        return ~(keys.duplicated(keep=False) & keys.notna().all(axis=1))

    @pa.dataframe_check(
        name="range_size",
        error=f"a code range holds more codes than one request carries ({CODE_RANGE_MAX}); pass "
        "code_range_post='add' if the service adds to a range",
        statistics={
            TEMPLATE: "the code range of initiativeExternalId {initiative} holds {size} codes; "
            "one request carries at most {limit} (pass code_range_post='add' if the service "
            "adds to a range: it is then sent in parts)"
        },
    )
    def fits_one_request(cls, df: pd.DataFrame) -> pd.Series:
        """A range over 2500 codes cannot be one request (``code_range_post="replace"``)."""
        if not {"initiativeExternalId", "codeExternalId"} <= set(df.columns):
            return pd.Series(True, index=df.index)
        ranges, codes = df["initiativeExternalId"], df["codeExternalId"]
        if ranges.dtype == object:  # an unreadable cell is no range
            ranges = ranges.map(lambda v: v if isinstance(v, str) else None)
        sizes = codes.groupby(ranges, dropna=True).transform("nunique")
        return pd.Series(np.asarray(sizes.fillna(0) <= CODE_RANGE_MAX), index=df.index)


@dataclass(frozen=True, eq=False)
class TableSpec:
    """What the toolkit knows about one import table, read from its model.

    Attributes:
        name: Table name.
        schema: The pandera model.
        key: Column(s) that identify a row.
        columns: The spec's columns, in the field table's order.
        references: ``(column, parent table)`` pairs.
        kinds: How each column is read (:data:`toolkit._ingress.rules.KIND`).
        nullable: Columns whose missing value means null.
        optional: Columns a frame may leave out; a missing value is not sent.
        checks: (column, or ``None`` for a check of the whole row, check number) -> (check,
            message template, severity) of each of the model's checks, as pandera numbers them
            in its failure cases.
        allowed: Each column with a set of allowed values -> those values.
    """

    name: str
    schema: type[pa.DataFrameModel]
    key: tuple[str, ...]
    columns: tuple[str, ...]
    references: tuple[tuple[str, str], ...] = ()
    kinds: Mapping[str, str] = field(default_factory=dict)
    nullable: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    checks: Mapping[tuple[str | None, int], tuple[str, str | None, str]] = field(
        default_factory=dict, repr=False
    )
    allowed: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @property
    def id_column(self) -> str:
        """The column reported as ``externalId`` in failure frames (the first key column)."""
        return self.key[0]


def _spec(schema: type[pa.DataFrameModel]) -> TableSpec:
    full = schema.to_schema()
    meta = {col: column.metadata or {} for col, column in full.columns.items()}
    kinds = {col: m.get(KIND, "text") for col, m in meta.items()}
    key = tuple(col for col, m in meta.items() if m.get(KEY))
    where = [(None, full.checks), *((c, col.checks) for c, col in full.columns.items())]
    checks = [(column, n, c) for column, found in where for n, c in enumerate(found)]
    return TableSpec(
        name=str(full.name),
        schema=schema,
        key=key,
        columns=tuple(full.columns),
        references=tuple((col, m[REFERENCES]) for col, m in meta.items() if REFERENCES in m),
        kinds=MappingProxyType(kinds),
        nullable=frozenset(col for col, column in full.columns.items() if column.nullable),
        optional=frozenset(col for col, column in full.columns.items() if not column.required),
        checks={
            (column, n): (
                check_name(str(c.name)),
                c.statistics.get(TEMPLATE, c.error),
                "warning" if c.raise_warning else "error",
            )
            for column, n, c in checks
        },
        allowed={
            col: tuple(c.statistics["allowed_values"]) for col, _, c in checks if c.name == "isin"
        },
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
