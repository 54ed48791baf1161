"""pandera models of the exported tables: the column names and dtypes are a contract; and the
schema of an acknowledgement frame: one release-succeeded or release-failed per row.

Dotted column names are given with ``alias``; the dtypes are tabled in docs/toolkit.md. Every
column but the linking ids is nullable, and columns the models do not name are allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import pandas as pd
import pandera.errors
import pandera.pandas as pa
import pyarrow
from pandera.engines import pandas_engine
from pandera.typing import Series

from toolkit._core.failures import failure_frame

#: Allowed ``code.type.semanticType`` values (null means "other").
SEMANTIC_TYPES = ("action", "activity", "location", "phase", "task")
#: Known ``assignedBy`` values: interface.md's ``user`` and ``service``, and ``laurel``, the
#: published name of the service. Any other text is kept, and an export warns about it once.
ASSIGNED_BY = ("user", "service", "laurel")
#: Allowed ``initiativeProps.initiative.billingType`` values.
BILLING_TYPES = ("billable", "non-billable")

UtcTimestamp = pandas_engine.DateTime
_UTC = {"unit": "us", "tz": "UTC"}
_DAY = {"unit": "us"}
TagList = Annotated[pd.ArrowDtype, pyarrow.list_(pyarrow.string())]


def _text(
    alias: str | None = None, *, isin: list[str] | None = None, str_matches: str | None = None
) -> Any:
    """A nullable text column (named ``alias`` when the name has dots)."""
    return pa.Field(alias=alias, nullable=True, isin=isin, str_matches=str_matches)


def schema_failures(
    exc: pandera.errors.SchemaErrors,
    frame: pd.DataFrame,
    table: str,
    id_col: str,
    word: Callable[[str, str, Any], str],
    check: Callable[[str], str] = str,
) -> pd.DataFrame:
    """pandera's lazy failures as a failure frame: a row's id from ``id_col`` (if it has one),
    each check named by ``check``, each message worded by ``word(column, check, value)``.

    >>> df = pd.DataFrame({"_id": ["e1"], "n": [-1]})
    >>> model = pa.DataFrameSchema({"n": pa.Column(int, pa.Check.ge(0))})
    >>> try:
    ...     model.validate(df, lazy=True)
    ... except pandera.errors.SchemaErrors as exc:
    ...     fc = schema_failures(exc, df, "t", "_id", lambda c, k, v: f"{c} {k} {v}")
    >>> fc[["externalId", "check", "message"]].iloc[0].tolist()
    ['e1', 'greater_than_or_equal_to(0)', 'n greater_than_or_equal_to(0) -1']
    """
    fc = exc.failure_cases
    rows, columns, values = (fc[c].tolist() for c in ("index", "column", "failure_case"))
    checks = [check(str(c)) for c in fc["check"]]
    ids = frame.get(id_col, pd.Series())  # a row's id, if it has one
    said = zip(columns, checks, values, strict=True)
    return failure_frame(
        table=table,
        row=rows,
        externalId=[ids.get(r) for r in rows],
        column=columns,
        check=checks,
        value=values,
        message=[word(str(c), k, v) for c, k, v in said],
    )


class _EntryScalars(pa.DataFrameModel):
    """Scalar fields shared by both forms of a time entry."""

    id_: Series[str] = pa.Field(alias="_id", unique=True)
    customerId: Series[str] = _text()
    userId: Series[str] = _text()
    externalId: Series[str] = _text()
    workDate: Series[pandas_engine.DateTime] = pa.Field(nullable=True, dtype_kwargs=_DAY)
    summary: Series[str] = _text()
    unitIncrementCount: Series[pd.Float64Dtype] = pa.Field(nullable=True, ge=0)
    incrementDurationInSeconds: Series[pd.Float64Dtype] = pa.Field(nullable=True, ge=0)

    class Config:
        strict = False  # fields the spec does not list are kept as further columns
        coerce = False


class ExportEntriesSchema(_EntryScalars):
    """Entries of the v2 export: one row per entry, the fields below in order.

    >>> from toolkit import Export
    >>> from toolkit.testing import fake_export_entry
    >>> entries = Export.from_records([fake_export_entry(initiative=None)]).entries
    >>> len(ExportEntriesSchema.validate(entries))
    1
    """

    createdAt: Series[UtcTimestamp] = pa.Field(nullable=True, dtype_kwargs=_UTC)
    updatedAt: Series[UtcTimestamp] = pa.Field(nullable=True, dtype_kwargs=_UTC)
    initiative_externalId: Series[str] = _text("initiative.externalId")
    initiative_name: Series[str] = _text("initiative.name")
    initiative_client_id: Series[str] = _text("initiative.client._id")
    initiative_client_externalId: Series[str] = _text("initiative.client.externalId")
    initiative_client_name: Series[str] = _text("initiative.client.name")
    initiative_client_description: Series[str] = _text("initiative.client.description")
    initiative_client_callSign: Series[str] = _text("initiative.client.callSign")


class PendingEntriesSchema(_EntryScalars):
    """Entries of the release-pending list (detailed form): the shared scalars, then these.

    >>> from toolkit import Export
    >>> from toolkit.testing import fake_pending_entries
    >>> entries = Export.from_records(fake_pending_entries(3), kind="pending").entries
    >>> len(PendingEntriesSchema.validate(entries))
    3
    """

    props_type: Series[str] = _text("initiativeProps.type")
    props_colorHex: Series[str] = _text("initiativeProps.colorHex", str_matches=r"^[0-9A-Fa-f]*$")
    props_tags: Series[TagList] = pa.Field(alias="initiativeProps.tags", nullable=True)
    props_nickname: Series[str] = _text("initiativeProps.nickname")
    init_type: Series[str] = _text("initiativeProps.initiative.type")
    init_id: Series[str] = _text("initiativeProps.initiative._id")
    init_billingType: Series[str] = _text(
        "initiativeProps.initiative.billingType", isin=list(BILLING_TYPES)
    )
    init_callSign: Series[str] = _text("initiativeProps.initiative.callSign")
    init_unitIncrements: Series[pd.Float64Dtype] = pa.Field(
        alias="initiativeProps.initiative.unitIncrements", nullable=True, ge=0
    )
    init_externalId: Series[str] = _text("initiativeProps.initiative.externalId")
    init_name: Series[str] = _text("initiativeProps.initiative.name")
    init_description: Series[str] = _text("initiativeProps.initiative.description")
    client_id: Series[str] = _text("initiativeProps.initiative.client._id")
    client_externalId: Series[str] = _text("initiativeProps.initiative.client.externalId")
    client_name: Series[str] = _text("initiativeProps.initiative.client.name")
    client_description: Series[str] = _text("initiativeProps.initiative.client.description")
    client_callSign: Series[str] = _text("initiativeProps.initiative.client.callSign")
    client_type: Series[str] = _text("initiativeProps.initiative.client.type")
    client_parent: Series[str] = _text("initiativeProps.initiative.client.parentClientId")
    init_status: Series[str] = _text("initiativeProps.initiative.status")
    init_locale: Series[str] = _text("initiativeProps.initiative.locale")
    notes: Series[str] = _text()
    releaseCount: Series[pd.Int64Dtype] = pa.Field(nullable=True, ge=0)
    lastSyncedAt: Series[UtcTimestamp] = pa.Field(nullable=True, dtype_kwargs=_UTC)
    firstReleaseAttemptedAt: Series[UtcTimestamp] = pa.Field(nullable=True, dtype_kwargs=_UTC)
    isShared: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    sharedFrom: Series[str] = _text()


class _Codes(pa.DataFrameModel):
    """The columns both forms' codes tables share."""

    entryId: Series[str] = pa.Field()
    position: Series[int] = pa.Field(ge=0)
    code_id: Series[str] = _text("code._id")
    code_externalId: Series[str] = _text("code.externalId")
    code_name: Series[str] = _text("code.name")
    code_description: Series[str] = _text("code.description")
    type_id: Series[str] = _text("code.type._id")
    type_externalId: Series[str] = _text("code.type.externalId")
    type_name: Series[str] = _text("code.type.name")
    type_semanticType: Series[str] = _text("code.type.semanticType", isin=list(SEMANTIC_TYPES))

    class Config:
        strict = False  # fields the spec does not list are kept as further columns
        coerce = False
        unique = ["entryId", "position"]


class PendingCodesSchema(_Codes):
    """Codes of the release-pending list: one row per (entry, code), named ``code.*``.

    >>> from toolkit import Export
    >>> from toolkit.testing import fake_pending_entries
    >>> pending = Export.from_records(fake_pending_entries(2, codes_per_entry=4), kind="pending")
    >>> codes = pending.codes
    >>> len(PendingCodesSchema.validate(codes))
    8
    """

    type_ordering: Series[str] = _text("code.type.orderingSequence")


class ExportCodesSchema(_Codes):
    """Codes of the v2 export: one row per (entry, code); ``assignedBy`` any text.

    >>> from toolkit import Export
    >>> from toolkit.testing import fake_export_entries
    >>> codes = Export.from_records(fake_export_entries(2, codes_per_entry=3)).codes
    >>> len(ExportCodesSchema.validate(codes))
    6
    """

    assignedBy: Series[str] = _text()


#: The pandera models of each kind's ``(entries, codes)`` tables.
MODELS: dict[str, tuple[type[pa.DataFrameModel], type[pa.DataFrameModel]]] = {
    "export": (ExportEntriesSchema, ExportCodesSchema),
    "pending": (PendingEntriesSchema, PendingCodesSchema),
}


OUTCOMES = ("succeeded", "failed")


class AcknowledgementSchema(pa.DataFrameModel):
    """One acknowledgement per row (column rules; :data:`CROSS_RULES` holds the rest).

    ``externalId`` is optional, as published; ``errors`` is required for ``failed`` rows.
    """

    userId: str = pa.Field(str_length={"min_value": 1})
    entryId: str = pa.Field(str_length={"min_value": 1}, unique=True)
    outcome: str = pa.Field(isin=list(OUTCOMES))
    externalId: str = pa.Field(nullable=True)
    errors: object = pa.Field(nullable=True)

    class Config:
        strict = "filter"


#: Rules across columns, checked outside pandera so the failure names the right column:
#: (column, outcome it applies to, message).
CROSS_RULES = (("errors", "failed", "a failed row needs at least one error text"),)
