"""Schema of an acknowledgement frame: one release-succeeded or release-failed per row."""

from __future__ import annotations

import pandera.pandas as pa

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
