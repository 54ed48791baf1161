"""Starring as frames: star and unstar any number of initiatives for many timekeepers, and read
starred lists page by page.

Star and unstar requests carry at most 100 ids each (:data:`MAX_IDS_PER_REQUEST`); larger sets are
split and sent through the bulk runner. Both operations are idempotent, so retries are safe.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd

from toolkit.bulk.pacer import Pacer
from toolkit.bulk.runner import Call, pacer_for, run_bulk
from toolkit.core.connection import Connection, Endpoint
from toolkit.core.frames import FrameLike, as_pandas, coerce_ids
from toolkit.core.http import LOST, NOT_SENT, Reply
from toolkit.errors import (
    ApiError,
    ConfigError,
    ConflictError,
    Interrupted,
    NotFoundError,
    PaginationError,
    ToolkitError,
)

__all__ = [
    "INITIATIVE_ACCESS_DENIED",
    "INITIATIVE_INACTIVE",
    "INITIATIVE_NOT_FOUND",
    "ITEM_ERRORS",
    "MAX_IDS_PER_REQUEST",
    "MAX_LIMIT",
    "STARRED_COLUMNS",
    "star",
    "starred",
    "starred_many",
    "starred_pages",
    "unstar",
]

#: Per-item ``errorCode``: the initiative identifier does not exist for the customer (404).
INITIATIVE_NOT_FOUND = 20080
#: Per-item ``errorCode``: the initiative is inactive (422).
INITIATIVE_INACTIVE = 20081
#: Per-item ``errorCode``: the target user has no access to the initiative (403).
INITIATIVE_ACCESS_DENIED = 20083

#: One-line explanation of each per-item error code, used when the service sends no message.
ITEM_ERRORS: dict[int, str] = {
    INITIATIVE_NOT_FOUND: "initiative not found: the identifier does not exist for the customer",
    INITIATIVE_INACTIVE: "initiative is inactive",
    INITIATIVE_ACCESS_DENIED: "initiative access denied: the timekeeper has no access to it",
}
_STATUS_TEXT = {500: "unexpected processing error"}

MAX_IDS_PER_REQUEST = 100
MAX_LIMIT = 2500
_COLUMNS = [
    "timekeeperExternalId",
    "initiativeExternalId",
    "status",
    "errorCode",
    "errorMessage",
    "ok",
    "attempts",
]


def _as_frame(timekeeper_or_frame: str | FrameLike) -> pd.DataFrame | None:
    """The input boundary: a frame of any library as pandas; ``None`` for a timekeeper id."""
    if isinstance(timekeeper_or_frame, FrameLike):
        return as_pandas(timekeeper_or_frame, "timekeeper_or_frame")
    return None


def _pairs(
    given: pd.DataFrame | None,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None,
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """The input as a frame of pairs, and each timekeeper's distinct ids in first-seen order.

    ``given`` is the input frame through :func:`_as_frame` (``None`` for a timekeeper id).
    """
    if given is not None:
        if initiative_external_ids is not None:
            raise ConfigError("pass either a frame or a timekeeper and ids, not both")
        missing = {"timekeeperExternalId", "initiativeExternalId"} - set(given.columns)
        if missing:
            raise ConfigError(f"the frame needs column(s) {sorted(missing)}")
        frame = given[["timekeeperExternalId", "initiativeExternalId"]]
    else:
        if initiative_external_ids is None:
            raise ConfigError("initiative_external_ids is required with a timekeeper id")
        if isinstance(initiative_external_ids, str):
            initiative_external_ids = [initiative_external_ids]
        ids = list(initiative_external_ids)
        frame = pd.DataFrame(
            {"timekeeperExternalId": [timekeeper_or_frame] * len(ids), "initiativeExternalId": ids}
        )
    frame = frame.copy()
    for col in ("timekeeperExternalId", "initiativeExternalId"):
        values, problems = coerce_ids(frame[col], col)
        bad = values.isna() | problems.notna()
        if bad.any():
            rows = frame.index[bad.to_numpy()].tolist()[:10]
            why = next((p for p in problems[bad] if p), f"{col} is empty")
            raise ConfigError(f"bad {col} in row(s) {rows}: {why}")
        frame[col] = values
    seen: dict[str, dict[str, None]] = {}
    for tk, i in zip(
        frame["timekeeperExternalId"].tolist(), frame["initiativeExternalId"].tolist(), strict=True
    ):
        seen.setdefault(tk, {})[i] = None
    return frame, {tk: list(ids) for tk, ids in seen.items()}


def _chunks(wanted: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    return [
        (tk, ids[i : i + MAX_IDS_PER_REQUEST])
        for tk, ids in wanted.items()
        for i in range(0, len(ids), MAX_IDS_PER_REQUEST)
    ]


def _rows(tk: str, ids: list[str], reply: Reply) -> dict[tuple[str, str], dict[str, Any]]:
    """Per-item rows of one request; a whole-request failure gives a row per id."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    items = reply.body.get("response") if isinstance(reply.body, dict) else None
    if reply.status == 207 and isinstance(items, list):
        for item in items:
            if not isinstance(item, dict) or "initiativeExternalId" not in item:
                continue
            code = item.get("errorCode")
            status = item.get("status")
            message = (
                item.get("errorMessage")
                or (ITEM_ERRORS.get(code) if isinstance(code, int) else None)
                or (_STATUS_TEXT.get(status) if isinstance(status, int) else None)
            )
            out[(tk, str(item["initiativeExternalId"]))] = {
                "status": status,
                "errorCode": code,
                "errorMessage": None if status == 200 else message,
                "attempts": reply.attempts,
                "lost": reply.lost,
            }
        missing = [i for i in ids if (tk, i) not in out]
        detail = "no result for this id in the 207 response"
    else:
        missing = ids
        detail = reply.error or f"HTTP {reply.status}"
        if reply.failure == LOST:
            detail = f"unknown: {detail}"
        elif reply.failure == NOT_SENT or (reply.status is None and reply.failure):
            detail = f"not sent: {detail}".replace("not sent: not sent: ", "not sent: ")
    for i in missing:
        out[(tk, i)] = {
            "status": reply.status if reply.status != 207 else None,
            "errorCode": None,
            "errorMessage": detail,
            "attempts": reply.attempts,
            "lost": reply.lost or reply.failure == LOST,
        }
    return out


def _settle(results: dict[tuple[str, str], dict[str, Any]]) -> None:
    """An item one of whose attempts had its answer lost is unknown, unless its last answer
    is a per-item 200 (the requested state): a later 500, 403... does not undo a star that
    the lost attempt may have applied. Its ``status`` becomes null, ``errorMessage`` says
    ``unknown: ...``."""
    for row in results.values():
        if row.get("lost") and row["status"] != 200:
            message = str(row["errorMessage"] or f"HTTP {row['status']}")
            if not message.startswith("unknown: "):
                last = f"then {row['status']}: " if row["status"] is not None else ""
                message = f"unknown: an attempt's answer was lost; {last}{message}"
            row["status"], row["errorCode"], row["errorMessage"] = None, None, message


def _send(
    conn: Connection,
    endpoint: Endpoint,
    wanted: dict[str, list[str]],
    *,
    workers: int | None,
    progress: bool,
    pacer: Pacer,
) -> dict[tuple[str, str], dict[str, Any]]:
    chunks = _chunks(wanted)
    calls = [
        Call(endpoint, None, {"timekeeperExternalId": tk, "initiativeExternalIds": ids}, key=tk)
        for tk, ids in chunks
    ]
    try:
        replies = run_bulk(
            conn, calls, workers=workers, progress=progress, desc=endpoint, pacer=pacer
        )
    except Interrupted as exc:
        replies = exc.replies
        results: dict[tuple[str, str], dict[str, Any]] = {}
        for (tk, ids), reply in zip(chunks, replies, strict=True):
            results.update(_rows(tk, ids, reply))
        exc.partial = results
        raise
    results = {}
    for (tk, ids), reply in zip(chunks, replies, strict=True):
        results.update(_rows(tk, ids, reply))
    return results


def _star_op(
    conn: Connection,
    endpoint: Endpoint,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None,
    workers: int | None,
    progress: bool,
) -> pd.DataFrame:
    given = _as_frame(timekeeper_or_frame)
    frame, wanted = _pairs(given, timekeeper_or_frame, initiative_external_ids)
    pacer = pacer_for(conn)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        results = _send(conn, endpoint, wanted, workers=workers, progress=progress, pacer=pacer)
        # per-item 500s get the same policy as whole requests: backoff, up to `retries` more
        transport = conn.transport
        for attempt in range(1, transport.retries + 1):
            again: dict[str, list[str]] = {}
            for (tk, i), row in results.items():
                if row["status"] == 500 and row["errorCode"] is None:
                    again.setdefault(tk, []).append(i)
            if not again or pacer.fatal is not None:
                break
            delay = min(transport.backoff_max, transport.backoff * 2 ** (attempt - 1))
            if pacer.stop.wait(delay + random.uniform(0, transport.jitter)):
                break
            retried = _send(conn, endpoint, again, workers=workers, progress=False, pacer=pacer)
            for pair, row in retried.items():
                row["attempts"] = (row["attempts"] or 0) + (results[pair]["attempts"] or 0)
                row["lost"] = row["lost"] or results[pair]["lost"]
                results[pair] = row
    except Interrupted as exc:
        for pair, row in getattr(exc, "partial", {}).items():
            if pair in results:
                row["attempts"] = (row["attempts"] or 0) + (results[pair]["attempts"] or 0)
                row["lost"] = row["lost"] or results[pair]["lost"]
            results[pair] = row
        _settle(results)
        exc.result = _frame_of(given is not None, frame, wanted, results)
        raise
    _settle(results)
    return _frame_of(given is not None, frame, wanted, results)


def _frame_of(
    per_row: bool,
    frame: pd.DataFrame,
    wanted: dict[str, list[str]],
    results: dict[tuple[str, str], dict[str, Any]],
) -> pd.DataFrame:
    """The result: per input row for a frame (``per_row``), else per distinct id."""
    if per_row:
        pairs = list(
            zip(
                frame["timekeeperExternalId"].tolist(),
                frame["initiativeExternalId"].tolist(),
                strict=True,
            )
        )
        index = frame.index
    else:
        pairs = [(tk, i) for tk, ids in wanted.items() for i in ids]
        index = pd.RangeIndex(len(pairs))
    missing = {"status": None, "errorCode": None, "errorMessage": "not sent", "attempts": 0}
    rows = [results.get(p, missing) for p in pairs]
    out = pd.DataFrame(
        {
            "timekeeperExternalId": pd.array([p[0] for p in pairs], dtype="str"),
            "initiativeExternalId": pd.array([p[1] for p in pairs], dtype="str"),
            "status": pd.array([r["status"] for r in rows], dtype="Int64"),
            "errorCode": pd.array([r["errorCode"] for r in rows], dtype="Int64"),
            "errorMessage": pd.array([r["errorMessage"] for r in rows], dtype="str"),
            "attempts": pd.array([r["attempts"] for r in rows], dtype="Int64"),
        },
        index=index,
    )
    out.insert(5, "ok", (out["status"] == 200).fillna(False).astype(bool))
    return out[_COLUMNS]


def star(
    conn: Connection,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None = None,
    *,
    workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Star initiatives for one timekeeper, or for many from a frame.

    Any number of ids: duplicates are removed in first-seen order and the rest are sent in
    requests of at most 100. A whole-request failure (unknown or ambiguous timekeeper, 500)
    becomes a row for every id of that request; per-item 500s are retried on their own, with
    the same backoff and number of retries as whole requests. A request that was never sent
    (interrupted, service unreachable) says ``not sent: ...`` in ``errorMessage``; an item
    with an attempt whose answer was lost and no later per-item 200 has a null ``status`` and
    says ``unknown: ...`` (the lost attempt may have applied it).

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        timekeeper_or_frame: a ``timekeeperExternalId``, or a frame (pandas, Polars or
            PyArrow) with columns ``timekeeperExternalId`` and ``initiativeExternalId``.
        initiative_external_ids: the initiatives (with a timekeeper id).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.

    Returns:
        ``timekeeperExternalId``, ``initiativeExternalId``, ``status`` (per-item, or the
        whole request's), ``errorCode``, ``errorMessage``, ``ok``, ``attempts``: one row per
        distinct id (for a frame: one row per input row, aligned to its index).

    Raises:
        ConfigError: the arguments or the frame's columns are wrong.
        Interrupted: Ctrl+C, Jupyter's stop or SIGTERM: sending stopped at once; ``.result``
            holds a row per input (unsent rows ``not_sent``).

    Example:
        >>> res = client.star("TK-101", ["M-1001-001", "M-1001-004", "M-1001-001"],
        ...                   progress=False)
        >>> res[["initiativeExternalId", "status"]]  # M-1001-004 is inactive
          initiativeExternalId  status
        0           M-1001-001     200
        1           M-1001-004     422
    """
    return _star_op(conn, "star", timekeeper_or_frame, initiative_external_ids, workers, progress)


def unstar(
    conn: Connection,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None = None,
    *,
    workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Unstar initiatives for one timekeeper, or for many from a frame.

    Sent as :func:`star` sends: duplicates removed, requests of at most 100, a whole-request
    failure a row for every id of that request.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        timekeeper_or_frame: a ``timekeeperExternalId``, or a frame with columns
            ``timekeeperExternalId`` and ``initiativeExternalId``.
        initiative_external_ids: the initiatives (with a timekeeper id).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.

    Returns:
        The same columns as :func:`star`.

    Raises:
        ConfigError: the arguments or the frame's columns are wrong.
        Interrupted: Ctrl+C, Jupyter's stop or SIGTERM: sending stopped at once; ``.result``
            holds a row per input (unsent rows ``not_sent``).

    Example:
        >>> pairs = pd.DataFrame({"timekeeperExternalId": ["TK-101", "TK-102"],
        ...                       "initiativeExternalId": ["M-1001-001", "M-1001-001"]})
        >>> client.unstar(pairs, progress=False)[["timekeeperExternalId", "status"]]
          timekeeperExternalId  status
        0               TK-101     200
        1               TK-102     200
    """
    return _star_op(conn, "unstar", timekeeper_or_frame, initiative_external_ids, workers, progress)


def _pages(
    conn: Connection, timekeeper_external_id: str, limit: int, max_pages: int
) -> Iterator[list[str]]:
    """The starred list's pages as plain lists, following ``nextCursor`` to the end."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ConfigError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    cursor: str | None = None
    seen: set[str] = set()
    page = 0
    while True:
        if page >= max_pages:
            raise PaginationError(f"more than {max_pages} pages; stopped")
        params: dict[str, Any] = {"timekeeperExternalId": timekeeper_external_id, "limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        body = conn.call("starred", params=params)
        yield [str(i) for i in body.get("initiativeExternalIds") or []]
        cursor = body.get("nextCursor")
        if cursor is None:
            return
        if cursor in seen:
            raise PaginationError(f"the service repeated cursor {cursor!r} at page {page}")
        seen.add(cursor)
        page += 1


#: Columns of every starred-list frame (``starred_pages``, ``starred``, ``starred_many``).
STARRED_COLUMNS = ["timekeeperExternalId", "initiativeExternalId", "page", "httpStatus", "error"]


def _frame(
    tk: str,
    ids: list[str | None],
    pages: list[int | None],
    status: int | None = 200,
    error: str | None = None,
) -> pd.DataFrame:
    """A starred-list frame: one row per id, the timekeeper and the list's answer on each."""
    n = len(ids)
    return pd.DataFrame(
        {
            "timekeeperExternalId": pd.array([tk] * n, dtype="str"),
            "initiativeExternalId": pd.array(ids, dtype="str"),
            "page": pd.array(pages, dtype="Int64"),
            "httpStatus": pd.array([status] * n, dtype="Int64"),
            "error": pd.array([error] * n, dtype="str"),
        }
    )


def starred_pages(
    conn: Connection,
    timekeeper_external_id: str,
    *,
    limit: int = MAX_LIMIT,
    max_pages: int = 100_000,
) -> Iterator[pd.DataFrame]:
    """Yield a timekeeper's starred list one page at a time, following ``nextCursor``.

    Pages can be short or empty while more remain (the service filters after fetching); the
    generator goes on until ``nextCursor`` is null.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        timekeeper_external_id: the user's timekeeper id.
        limit: raw props fetched per page, 1 to 2500.
        max_pages: stop with :class:`PaginationError` past this many pages.

    Yields:
        A frame per page, with the columns of :func:`starred` (``page`` 0-based).

    Raises:
        PaginationError: a cursor repeated, or ``max_pages`` was passed.
        NotFoundError: the timekeeper cannot be resolved.
        ConflictError: the timekeeper id resolves to several users.

    Example:
        >>> for page in client.starred_pages("TK-102", limit=2):
        ...     print(page["initiativeExternalId"].tolist())
        ['M-1003-004', 'M-1005-001']
        ['M-1003-003']
    """
    for number, ids in enumerate(_pages(conn, timekeeper_external_id, limit, max_pages)):
        yield _frame(timekeeper_external_id, list(ids), [number] * len(ids))


def starred(
    conn: Connection,
    timekeeper_external_id: str,
    *,
    limit: int = MAX_LIMIT,
    max_pages: int = 100_000,
) -> pd.DataFrame:
    """A timekeeper's whole starred list as one frame.

    A timekeeper the service cannot resolve (404) or finds several users for (409) is a row,
    as :func:`star` and :func:`starred_many` make it: one row with a null
    ``initiativeExternalId``, its ``httpStatus`` and the service's ``error``; nothing is
    raised, so a frame of many timekeepers' lists can be built without a ``try``.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        timekeeper_external_id: the user's timekeeper id.
        limit: raw props fetched per page, 1 to 2500.
        max_pages: stop with :class:`PaginationError` past this many pages.

    Returns:
        :data:`STARRED_COLUMNS`: ``timekeeperExternalId``, ``initiativeExternalId``, ``page``
        (0-based), ``httpStatus`` (200: the list was read; 404 or 409: the timekeeper could
        not be resolved) and ``error`` (null, or the service's detail), the columns of
        :func:`starred_many` in its order, so frames of several timekeepers concatenate.

    Raises:
        PaginationError: a cursor repeated, or ``max_pages`` was passed.

    Example:
        >>> client.starred("TK-102")["initiativeExternalId"].tolist()
        ['M-1003-004', 'M-1005-001', 'M-1003-003']
        >>> client.starred("TK-999")[["initiativeExternalId", "httpStatus"]]
          initiativeExternalId  httpStatus
        0                  NaN         404
    """
    ids: list[str | None] = []
    pages: list[int | None] = []
    try:
        for number, page in enumerate(_pages(conn, timekeeper_external_id, limit, max_pages)):
            ids.extend(page)
            pages.extend([number] * len(page))
    except (NotFoundError, ConflictError) as exc:  # the timekeeper, not the call, is wrong
        return _frame(timekeeper_external_id, [None], [None], exc.status, exc.detail)
    return _frame(timekeeper_external_id, ids, pages)


def starred_many(
    conn: Connection, timekeepers: Sequence[str], *, limit: int = MAX_LIMIT
) -> pd.DataFrame:
    """Starred lists of many timekeepers as one frame; a failing timekeeper becomes a row.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        timekeepers: timekeeper ids.
        limit: raw props fetched per page, 1 to 2500.

    Returns:
        The columns of :func:`starred`, in its order (:data:`STARRED_COLUMNS`), and no
        other: ``httpStatus`` and ``error`` (the problem's detail) say when the list of that
        timekeeper could not be read. A timekeeper with nothing starred, or whose list failed,
        has one row with a null ``initiativeExternalId``.

    Example:
        >>> client.starred_many(["TK-102", "TK-999"])[["timekeeperExternalId", "httpStatus"]]
          timekeeperExternalId  httpStatus
        0               TK-102         200
        1               TK-102         200
        2               TK-102         200
        3               TK-999         404
    """
    if isinstance(timekeepers, str):
        raise ConfigError("timekeepers must be a list of timekeeper ids, not one string")
    frames = []
    for tk in dict.fromkeys(timekeepers):
        try:
            f = starred(conn, tk, limit=limit)
            if f.empty:  # keep the timekeeper visible: one row, no initiative
                f = _frame(tk, [None], [None])
        except ToolkitError as exc:
            status = exc.status if isinstance(exc, ApiError) else None
            detail = exc.detail if isinstance(exc, ApiError) else str(exc)
            f = _frame(tk, [None], [None], status, detail)
        frames.append(f)
    if not frames:
        return _frame("", [], [])
    return pd.concat(frames, ignore_index=True)[STARRED_COLUMNS]
