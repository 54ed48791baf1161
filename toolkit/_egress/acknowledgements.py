"""Acknowledge released entries from a frame: release-succeeded or release-failed, per row.

The frame is validated (:class:`AcknowledgementSchema`), then posted through the bulk runner;
succeeded rows through the batch route where the service has it (:mod:`.ack_batch`). A 409 or
422 whose body shows the entry already in the requested outcome (succeeded with the same
``externalId``, or failed) is done (``sent``, noted); any other 409 is a ``conflict`` whose
error names what the entry holds, where the answer says; a 404 is an unknown entry. "It may
have landed" is said only where an answer was lost.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

from toolkit._bulk.journal import Journal
from toolkit._bulk.runner import Call, not_sent, pacer_for, result_frame, run_bulk
from toolkit._core.connection import Connection, Endpoint
from toolkit._core.dtypes import TEXT
from toolkit._core.failures import check_name, failure_frame
from toolkit._core.frames import FrameLike, as_pandas, unique_rows
from toolkit._core.http import Reply
from toolkit._egress.ack_batch import send_batches
from toolkit._egress.schemas import CROSS_RULES, OUTCOMES, AcknowledgementSchema, schema_failures
from toolkit.errors import ConfigError, InputWarning, Interrupted, ValidationError

#: the ``table`` of this module's failure frames
TABLE = "acknowledgements"
#: the columns of a checked acknowledgement frame, in order
COLUMNS = ("userId", "entryId", "outcome", "externalId", "errors")


def _as_list(value: Any, separator: str | None = None) -> list[str] | None:
    """``errors`` as given: a list stays a list; text is one message unless ``separator``."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(separator)] if separator else [value]
        return [p for p in parts if p.strip()] or None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()] or None
    return [str(value)]


def _as_text(value: Any) -> str | None:
    return None if pd.isna(value) else str(value)


def _message(df: pd.DataFrame, column: str, check: str, value: Any) -> str:
    """The failure in words, as the import tables word theirs."""
    if check == "required":
        return f"{column} is required but {'empty' if isinstance(value, str) else 'missing'}"
    if check == "allowed_values":
        return f"{column} must be one of {', '.join(OUTCOMES)} (case-sensitive); got {value!r}"
    if check == "unique":
        rows = df.index[df[column] == value].tolist()
        return f"{column} {value!r} is not unique: rows {', '.join(map(str, rows[:5]))} share it"
    return f"{column}: failed {check}; got {value!r}"


def _landed(state: str, value: Any, reply: Reply) -> bool:
    """Whether a 409 or 422 body shows the entry already in ``state``: the row is done.

    A succeeded entry must hold the same ``externalId`` (or none was given, or the body does not
    say); a failed one is done whatever errors it holds (the outcome is the same).
    """
    body = reply.body if isinstance(reply.body, dict) else {}
    if body.get("state") != state:
        return False
    held = body.get("externalId")
    return state == "failed" or value is None or held is None or held == value


def _refusal(reply: Reply, outcome: str, asked: Any) -> tuple[bool, str | None]:
    """``(conflict, error)`` of a reply refused for good: what the service says happened.

    A 409 of an entry already acknowledged another way is a conflict naming the outcome and
    ``externalId`` it holds (when the answer says); a 404 is an unknown entry. Other replies
    keep their error (``None``).
    """
    body = reply.body if isinstance(reply.body, dict) else {}
    state, said = body.get("state"), reply.error or ""
    if reply.lost or reply.ok or reply.status not in (404, 409):
        return False, None
    if reply.status == 404:
        return False, f"unknown entry: the service has no such entry for this user ({said})"
    if state in ("succeeded", "failed"):
        what = "externalId" if state == "succeeded" else "errors"
        holds = f"{state} with {what} {body[what]!r}" if body.get(what) is not None else state
        wants = f" with externalId {asked!r}" if outcome == "succeeded" and asked else ""
        return True, (
            f"conflict: the entry was acknowledged earlier as {holds}; this row says {outcome}"
            f"{wants}, which the service refuses (it keeps the earlier acknowledgement)"
        )
    if state is None:  # the answer does not say which acknowledgement the entry holds
        return True, (
            "conflict: the service refuses it as conflicting with what the entry holds (an"
            f" earlier acknowledgement, most likely; its answer does not say which): {said}"
        )
    return False, f"the entry is {state}, not pending: {said}"


def _columns(frame: FrameLike) -> tuple[pd.DataFrame, list[str]]:
    """The frame as pandas, ``_id`` read as ``entryId``, optional columns added; the missing."""
    df = unique_rows(as_pandas(frame, "frame")).copy()
    if "entryId" not in df and "_id" in df:
        df = df.rename(columns={"_id": "entryId"})
    df = df.assign(**{col: None for col in ("externalId", "errors") if col not in df})
    return df, [c for c in ("userId", "entryId", "outcome") if c not in df]


def check_acknowledgements(frame: FrameLike, *, separator: str | None = None) -> pd.DataFrame:
    """Normalise and validate an acknowledgement frame (``_id`` is taken for ``entryId``).

    Text ``errors`` are split on ``separator`` if given, else each text is one message.

    Returns:
        The normalised frame (``errors`` as lists); raises ``ValidationError`` otherwise.

    Example:
        >>> df = pd.DataFrame({"userId": ["u1"], "entryId": ["e1"], "outcome": ["failed"],
        ...                    "errors": ["client closed; rate missing"]})
        >>> check_acknowledgements(df, separator=";").loc[0, "errors"]
        ['client closed', 'rate missing']
    """
    df, missing = _columns(frame)
    if missing:
        cases = failure_frame(
            table=TABLE,
            column=missing,
            check="column_missing",
            message=[f"missing column {c!r}" for c in missing],
        )
        raise ValidationError(f"missing column(s): {', '.join(missing)}", cases)
    for col in COLUMNS:
        read = partial(_as_list, separator=separator) if col == "errors" else _as_text
        df[col] = pd.Series(list(map(read, df[col].astype(object))), index=df.index, dtype=object)
    if df.empty:
        return df[list(COLUMNS)]
    parts: list[pd.DataFrame] = []
    checked = df
    try:
        checked = AcknowledgementSchema.validate(df, lazy=True)
    except pa.errors.SchemaErrors as exc:
        parts.append(schema_failures(exc, df, TABLE, "entryId", partial(_message, df), check_name))
    for column, outcome, message in CROSS_RULES:  # normalised above: a blank text is None
        bad = df.index[(df["outcome"] == outcome) & df[column].isna()]
        if len(bad):
            parts.append(
                failure_frame(
                    table=TABLE,
                    row=list(bad),
                    externalId=df.loc[bad, "entryId"].tolist(),
                    column=column,
                    check="required",
                    value=df.loc[bad, column].tolist(),
                    message=message,
                )
            )
    if parts:
        cases = pd.concat(parts, ignore_index=True)
        position = {label: i for i, label in enumerate(df.index)}  # in row order, as imports
        order = [position.get(r, -1) if r is not None else -1 for r in cases["row"]]
        cases = cases.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
        raise ValidationError(f"{len(cases)} acknowledgement failure(s); nothing was sent", cases)
    return checked


def _send(
    conn: Connection,
    calls: list[Call],
    *,
    workers: int | None,
    progress: bool,
    journal: str | os.PathLike[str] | Journal | None,
    as_result: Callable[[list[Reply]], pd.DataFrame],
) -> list[Reply]:
    """Succeeded calls in batches where the service has the route, the rest one by one."""
    jr = journal if journal is None or isinstance(journal, Journal) else Journal(journal)
    bulk: dict[str, Any] = {"workers": workers, "progress": progress, "journal": jr}
    bulk["pacer"] = pacer_for(conn)
    replies: list[Reply | None] = [None] * len(calls)
    carried = [0] * len(calls)  # batch requests that carried a row left to the per-entry route
    part = [i for i, c in enumerate(calls) if c.endpoint == "release_succeeded"]
    try:
        if part and conn.ack_batch is not False:
            got, counts = send_batches(conn, [calls[i] for i in part], **bulk)
            for i, reply, n in zip(part, got, counts, strict=True):
                replies[i], carried[i] = reply, n
        part = [i for i, r in enumerate(replies) if r is None]  # the batch route's leftovers
        answers = run_bulk(conn, [calls[i] for i in part], desc="acknowledge", **bulk)
        for i, answer in zip(part, answers, strict=True):
            answer.attempts += carried[i]
            replies[i] = answer
    except Interrupted as exc:
        for i, reply in zip(part, exc.replies, strict=True):
            replies[i] = reply
        exc.replies = [r or not_sent() for r in replies]
        exc.result = as_result(exc.replies)
        raise
    finally:
        if jr is not None and jr is not journal:
            jr.close()
    return [r or not_sent() for r in replies]


def acknowledge(
    conn: Connection,
    frame: FrameLike,
    *,
    validate: bool = True,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
) -> pd.DataFrame:
    """Post release-succeeded / release-failed for every row of a frame.

    Args:
        conn: the connection.
        frame: ``userId``, ``entryId`` (or ``_id``), ``outcome`` (``succeeded`` / ``failed``),
            ``externalId`` (succeeded rows), ``errors`` (failed rows: a list, or one message).
        validate: check the frame first and raise before anything is sent.
        workers: worker threads (default: the connection's).
        progress: show a progress bar.
        journal: path of a journal for resumable runs.

    Returns:
        Aligned to the input: ``userId``, ``entryId``, ``outcome``, ``status``, ``ok``,
        ``httpStatus``, ``error``, ``attempts``, ``elapsed``.

    Example:
        >>> entry = client.release_pending().entries.iloc[0]
        >>> acks = pd.DataFrame({"userId": [entry["userId"]], "entryId": [entry["_id"]],
        ...                      "outcome": ["succeeded"], "externalId": ["INV-1"]})
        >>> client.acknowledge(acks, progress=False)[["outcome", "status", "httpStatus"]]
             outcome status  httpStatus
        0  succeeded   sent         200
    """
    frame = as_pandas(frame, "frame")
    original = frame.index
    if validate:
        df = check_acknowledgements(frame)
    else:
        df, missing = _columns(frame)
        if missing:
            raise ConfigError(f"the frame needs column(s) {missing}")
    calls = []
    bare: list[Any] = []  # succeeded rows without externalId: sent without it
    for label, user, entry, outcome, ext, errs in df[list(COLUMNS)].itertuples(name=None):
        ok = outcome == "succeeded"
        given = ok and isinstance(ext, str) and ext.strip() != ""
        bare += [label] if ok and not given else []
        body: dict[str, Any] = {"externalId": ext} if given else {}
        body = body if ok else {"errors": _as_list(errs) or []}
        landed = partial(_landed, "succeeded" if ok else "failed", next(iter(body.values()), None))
        endpoint: Endpoint = "release_succeeded" if ok else "release_failed"
        calls.append(
            Call(endpoint, {"userId": user, "entryId": entry}, body, key=entry, landed=landed)
        )

    def as_result(replies: list[Reply]) -> pd.DataFrame:
        res = result_frame(original, df["entryId"].tolist(), replies, key_name="entryId")
        res.insert(0, "userId", df["userId"].tolist())
        res.insert(2, "outcome", df["outcome"].tolist())
        return res.astype({"userId": TEXT, "outcome": TEXT})

    if bare:
        more = f" and {len(bare) - 5} more" if len(bare) > 5 else ""
        rows = ", ".join(map(str, bare[:5])) + more
        warnings.warn(
            f"{len(bare)} succeeded row(s) without externalId (rows {rows}) are sent without"
            " it: the published service takes it as optional, and the entry then holds no"
            " billing-system id",
            InputWarning,
            stacklevel=2,
        )
    replies = _send(
        conn, calls, workers=workers, progress=progress, journal=journal, as_result=as_result
    )
    res = as_result(replies)
    asked = df["externalId"].tolist()
    said = [_refusal(r, o, a) for r, o, a in zip(replies, res["outcome"], asked, strict=True)]
    new = pd.array([error for _, error in said], dtype=TEXT)
    res["error"] = res["error"].mask(pd.notna(new), new)
    res.loc[np.array([conflict for conflict, _ in said], dtype=bool), "status"] = "conflict"
    return res
