"""Schemas: the five import tables (with the table registry), the export and release-pending
output tables, and the acknowledgement frame. Validating import tables has one way,
:func:`toolkit.validate` (``check``, ``check_frame``, ``check_chunks`` and ``CheckResult``, kept
one release with a warning, are retired: docs/jobs.md, "Removed").

>>> import pandas as pd
>>> import toolkit
>>> from toolkit import schemas
>>> list(schemas.TABLES)
['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']
>>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
>>> toolkit.validate(code_ranges=df).frames["code_ranges"]["codeExternalId"].tolist()
['L110']
"""

from toolkit._core.failures import CHECKS, FAILURE_COLUMNS, empty_failures
from toolkit._core.frames import coerce_ids
from toolkit._egress.schemas import (
    ASSIGNED_BY,
    OUTCOMES,
    AcknowledgementSchema,
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit._ingress.checks import format_failures
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
    "ClientSchema",
    "CodeRangeSchema",
    "CodeSchema",
    "CodeTypeSchema",
    "InitiativeSchema",
    "TableSpec",
    "coerce_ids",
    "empty_failures",
    "format_failures",
]
