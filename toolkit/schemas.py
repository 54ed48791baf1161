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

from toolkit._core.failures import CHECKS, FAILURE_COLUMNS, empty_failures
from toolkit._core.frames import coerce_ids
from toolkit._egress.ack_schema import OUTCOMES, AcknowledgementSchema
from toolkit._egress.schemas import (
    ASSIGNED_BY,
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit._ingress.checks import CheckResult, check, check_chunks, check_frame, format_failures
from toolkit._ingress.models import (
    BILLING_TYPES,
    CLIENT_TYPES,
    LOCALES,
    SEMANTIC_TYPES,
    STATUSES,
    TABLES,
    ClientSchema,
    CodeRangeSchema,
    CodeSchema,
    CodeTypeSchema,
    InitiativeSchema,
    TableSpec,
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
    "CLIENT_TYPES",
    "FAILURE_COLUMNS",
    "LOCALES",
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
    "check_chunks",
    "check_frame",
    "coerce_ids",
    "empty_failures",
    "format_failures",
]
