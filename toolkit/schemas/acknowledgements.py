"""Schema of an acknowledgement frame: one release-succeeded or release-failed per row."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

__all__ = ["OUTCOMES", "AcknowledgementSchema"]

OUTCOMES = ("succeeded", "failed")


class AcknowledgementSchema(pa.DataFrameModel):
    """One acknowledgement per row.

    ``externalId`` is required for ``succeeded`` rows; ``errors`` (a non-empty list of strings)
    for ``failed`` rows.
    """

    userId: str = pa.Field(str_length={"min_value": 1})
    entryId: str = pa.Field(str_length={"min_value": 1}, unique=True)
    outcome: str = pa.Field(isin=list(OUTCOMES))
    externalId: str = pa.Field(nullable=True)
    errors: object = pa.Field(nullable=True)

    class Config:
        strict = "filter"

    @pa.dataframe_check(error="a succeeded row needs a non-empty externalId")
    def externalid_for_succeeded(cls, df: pd.DataFrame) -> pd.Series:  # noqa: N805
        needs = df["outcome"] == "succeeded"
        has = df["externalId"].fillna("").astype(str).str.len() > 0
        return ~needs | has

    @pa.dataframe_check(error="a failed row needs at least one error text")
    def errors_for_failed(cls, df: pd.DataFrame) -> pd.Series:  # noqa: N805
        needs = df["outcome"] == "failed"
        has = df["errors"].map(lambda v: isinstance(v, list) and len(v) > 0)
        return ~needs | has
