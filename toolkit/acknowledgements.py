"""Acknowledge released entries from a frame: release-succeeded or release-failed, per row.

The frame is validated first (:class:`AcknowledgementSchema`), then posted through the bulk
runner. A 409 (the entry is already in another state) is reported with the service's detail and
is not retried.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pandas as pd
import pandera.pandas as pa

from toolkit.bulk import Call, Journal, result_frame, run_bulk
from toolkit.errors import ValidationError
from toolkit.schemas.acknowledgements import AcknowledgementSchema

if TYPE_CHECKING:
    from toolkit.client import Client

__all__ = ["AcknowledgementSchema", "acknowledge", "check_acknowledgements"]


def _as_list(value: Any) -> list[str] | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(";")]
        return [p for p in parts if p] or None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()] or None
    return [str(value)]


def check_acknowledgements(frame: pd.DataFrame) -> pd.DataFrame:
    """Normalise and validate an acknowledgement frame.

    Accepts ``_id`` for ``entryId`` (as exported) and ``errors`` as a list or ``;``-separated
    text; missing ``externalId`` / ``errors`` columns are added empty.

    Args:
        frame: ``userId``, ``entryId`` (or ``_id``), ``outcome``, ``externalId``, ``errors``.

    Returns:
        The normalised frame (``errors`` as lists).

    Raises:
        ValidationError: with ``.failure_cases`` naming every bad row and column.

    Example:
        >>> df = pd.DataFrame({"userId": ["u1"], "entryId": ["e1"], "outcome": ["failed"],
        ...                    "errors": ["client closed; rate missing"]})
        >>> check_acknowledgements(df).loc[0, "errors"]
        ['client closed', 'rate missing']
    """
    df = frame.copy()
    if "entryId" not in df and "_id" in df:
        df = df.rename(columns={"_id": "entryId"})
    for col in ("externalId", "errors"):
        if col not in df:
            df[col] = None
    missing = [c for c in ("userId", "entryId", "outcome") if c not in df]
    if missing:
        cases = pd.DataFrame(
            {
                "table": "acknowledgements",
                "row": None,
                "externalId": None,
                "column": missing,
                "check": "column_in_dataframe",
                "value": None,
                "message": [f"missing column {c!r}" for c in missing],
            }
        )
        raise ValidationError(f"missing column(s): {', '.join(missing)}", cases)
    for col in ("userId", "entryId", "outcome", "externalId"):
        df[col] = df[col].astype(object).where(df[col].notna(), None)
        df[col] = df[col].map(lambda v: None if v is None else str(v))
    df["errors"] = df["errors"].astype(object).map(_as_list)
    try:
        return AcknowledgementSchema.validate(df, lazy=True)
    except pa.errors.SchemaErrors as exc:
        fc = exc.failure_cases
        rows = fc["index"].tolist()
        cases = pd.DataFrame(
            {
                "table": "acknowledgements",
                "row": rows,
                "externalId": [
                    df.at[r, "entryId"] if r is not None and r in df.index else None for r in rows
                ],
                "column": fc["column"].tolist(),
                "check": fc["check"].astype(str).tolist(),
                "value": fc["failure_case"].tolist(),
                "message": [
                    f"{c}: {chk} failed for {v!r}"
                    for c, chk, v in zip(fc["column"], fc["check"], fc["failure_case"], strict=True)
                ],
            }
        )
        raise ValidationError(f"{len(cases)} acknowledgement failure(s)", cases) from None


def acknowledge(
    client: Client,
    frame: pd.DataFrame,
    *,
    validate: bool = True,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
) -> pd.DataFrame:
    """Post release-succeeded / release-failed for every row of a frame.

    Args:
        client: the connection.
        frame: ``userId``, ``entryId`` (or ``_id``), ``outcome`` (``succeeded`` / ``failed``),
            ``externalId`` (succeeded rows), ``errors`` (failed rows; list or ``;``-text).
        validate: check the frame first and raise before anything is sent.
        workers: worker threads.
        progress: show a progress bar.
        journal: path of a journal for resumable runs.

    Returns:
        Aligned to the input: ``userId``, ``entryId``, ``outcome``, ``status``, ``ok``,
        ``httpStatus``, ``error`` (for a 409, the entry's conflict), ``attempts``, ``elapsed``.

    Raises:
        ValidationError: the frame failed its checks (with ``.failure_cases``).

    Example:
        >>> acks = pd.DataFrame({"userId": [u], "entryId": [e], "outcome": ["succeeded"],
        ...                      "externalId": ["INV-1"]})  # doctest: +SKIP
        >>> client.acknowledge(acks).ok.all()  # doctest: +SKIP
        True
    """
    df = check_acknowledgements(frame) if validate else frame.rename(columns={"_id": "entryId"})
    calls = []
    for user, entry, outcome, ext, errs in zip(
        df["userId"], df["entryId"], df["outcome"], df["externalId"], df["errors"], strict=True
    ):
        path = {"userId": user, "entryId": entry}
        if outcome == "succeeded":
            calls.append(Call("release_succeeded", path, {"externalId": ext}, key=entry))
        else:
            calls.append(Call("release_failed", path, {"errors": _as_list(errs) or []}, key=entry))
    replies = run_bulk(
        client, calls, workers=workers, progress=progress, journal=journal, desc="acknowledge"
    )
    res = result_frame(df.index, df["entryId"].tolist(), replies, key_name="entryId")
    res.insert(0, "userId", pd.array(df["userId"].tolist(), dtype="string"))
    res.insert(2, "outcome", pd.array(df["outcome"].tolist(), dtype="string"))
    return res
