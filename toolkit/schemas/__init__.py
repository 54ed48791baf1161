"""Schemas: the five import tables (with the table registry and :func:`check`), the export and
release-pending output tables, and the acknowledgement frame.

>>> import pandas as pd
>>> from toolkit import schemas
>>> list(schemas.TABLES)
['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']
>>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
>>> schemas.check("code_ranges", df)["codeExternalId"].tolist()
['L110']
"""

from toolkit.schemas.acknowledgements import OUTCOMES, AcknowledgementSchema
from toolkit.schemas.exports import (
    ASSIGNED_BY,
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit.schemas.imports import (
    BILLING_TYPES,
    CHECKS,
    FAILURE_COLUMNS,
    SEMANTIC_TYPES,
    STATUSES,
    TABLES,
    CheckResult,
    ClientSchema,
    CodeRangeSchema,
    CodeSchema,
    CodeTypeSchema,
    InitiativeSchema,
    TableSpec,
    check,
    check_frame,
    coerce_ids,
    empty_failures,
    format_failures,
)

__all__ = [
    "ASSIGNED_BY",
    "OUTCOMES",
    "AcknowledgementSchema",
    "ExportCodesSchema",
    "ExportEntriesSchema",
    "PendingCodesSchema",
    "PendingEntriesSchema",
    "BILLING_TYPES",
    "CHECKS",
    "FAILURE_COLUMNS",
    "SEMANTIC_TYPES",
    "STATUSES",
    "TABLES",
    "CheckResult",
    "ClientSchema",
    "CodeRangeSchema",
    "CodeSchema",
    "CodeTypeSchema",
    "InitiativeSchema",
    "TableSpec",
    "check",
    "check_frame",
    "coerce_ids",
    "empty_failures",
    "format_failures",
]
