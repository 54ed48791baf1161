"""Schemas of the five import tables: pandera models, the table registry and :func:`check`.

>>> import pandas as pd
>>> from toolkit import schemas
>>> list(schemas.TABLES)
['clients', 'initiatives', 'code_types', 'codes', 'code_ranges']
>>> df = pd.DataFrame({"initiativeExternalId": ["M-1"], "codeExternalId": ["L110"]})
>>> schemas.check("code_ranges", df)["codeExternalId"].tolist()
['L110']
"""

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
    empty_failures,
    format_failures,
)

__all__ = [
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
    "empty_failures",
    "format_failures",
]
