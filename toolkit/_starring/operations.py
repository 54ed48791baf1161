"""Starring as frames: star and unstar through the bulk runner, starred lists page by page."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from toolkit._bulk.runner import Call, not_sent, pacer_for, result_frame, run_bulk, unproven
from toolkit._core.connection import Connection, Endpoint
from toolkit._core.dtypes import TEXT
from toolkit._core.frames import FrameLike, as_pandas, coerce_ids
from toolkit._core.http import LOST, Reply, problem_of
from toolkit.errors import (
    ApiError,
    ConfigError,
    Interrupted,
    NotFoundError,
    PaginationError,
    ToolkitError,
)

#: Per-item ``errorCode``: the initiative not found (404), inactive (422), access denied (403).
INITIATIVE_NOT_FOUND, INITIATIVE_INACTIVE, INITIATIVE_ACCESS_DENIED = 20080, 20081, 20083
#: One-line explanation of each per-item error code, used when the service sends no message.
ITEM_ERRORS: dict[int, str] = {
    INITIATIVE_NOT_FOUND: "initiative not found: the identifier does not exist for the customer",
    INITIATIVE_INACTIVE: "initiative is inactive",
    INITIATIVE_ACCESS_DENIED: "initiative access denied: the timekeeper has no access to it",
}
MAX_IDS_PER_REQUEST = 100
MAX_LIMIT = 2500
_PAIR = ["timekeeperExternalId", "initiativeExternalId"]
#: Each (timekeeper, initiative) pair's reply and per-item ``errorCode``.
_Results = dict[tuple[str, str], tuple[Reply, int | None]]
#: What a web server answers for a path it does not serve: NestJS and Express ("Cannot POST
#: /p"), Starlette and most servers ("Not Found"), the sandbox ("no route for /p"). interface.md's
#: whole-request 404 is a timekeeper that resolves to no user; starring is in no published
#: document, so a service may lack the routes, and its 404 then says so in one of these words.
_NO_ROUTE = re.compile(r"cannot (get|post|put|patch|delete) /\S*|not found|no route for /\S*", re.I)


class _NoRouteError(NotFoundError):
    """The service answered 404 for the starring route itself: one error for the whole call."""


def _no_route(endpoint: Endpoint, status: int | None, problem: Any, method: str, url: str) -> None:
    """Raise :class:`_NoRouteError` naming the route if a whole-request 404's body is a web
    server's "no such path" (every text it holds matches :data:`_NO_ROUTE`), not a timekeeper's.

    >>> _no_route("star", 404, {"detail": "timekeeperExternalId 'TK' resolves to no user"}, "", "")
    >>> try:
    ...     _no_route("star", 404, {"detail": "Not Found"}, "POST", "https://t/star")
    ... except NotFoundError as exc:
    ...     exc.detail.split(";")[0]
    "the service does not serve the star route (POST https://t/star answered 404 'Not Found')"
    """
    body = problem if isinstance(problem, dict) else {}
    said = [str(body[k]).strip() for k in ("message", "detail", "title") if body.get(k)]
    if status != 404 or not said or not all(_NO_ROUTE.fullmatch(t) for t in said):
        return
    detail = (
        f"the service does not serve the {endpoint} route ({method} {url} answered"
        f" 404 {said[0]!r}); starring is in no published document: ask the operator whether"
        " this service has it"
    )
    raise _NoRouteError(404, {"detail": detail}, method, url)


def _pairs(
    timekeeper_or_frame: str | FrameLike, initiative_external_ids: Iterable[str] | None
) -> tuple[list[tuple[str, str]], pd.Index, dict[str, list[str]]]:
    """The result's pairs and index, and each timekeeper's distinct ids in first-seen order."""
    per_row = isinstance(timekeeper_or_frame, FrameLike)
    if per_row:
        frame = as_pandas(timekeeper_or_frame, "timekeeper_or_frame")
        if initiative_external_ids is not None:
            raise ConfigError("pass either a frame or a timekeeper and ids, not both")
        missing = set(_PAIR) - set(frame.columns)
        if missing:
            raise ConfigError(f"the frame needs column(s) {sorted(missing)}")
        frame = frame[_PAIR].copy()
    else:
        if initiative_external_ids is None:
            raise ConfigError("initiative_external_ids is required with a timekeeper id")
        ids = initiative_external_ids
        ids = [ids] if isinstance(ids, str) else list(ids)
        frame = pd.DataFrame({_PAIR[0]: [timekeeper_or_frame] * len(ids), _PAIR[1]: ids})
    for col in _PAIR:
        values, problems = coerce_ids(frame[col], col)
        bad = values.isna() | problems.notna()
        if bad.any():
            rows = frame.index[bad.to_numpy()].tolist()[:10]
            why = next((p for p in problems[bad] if p), f"{col} is empty")
            raise ConfigError(f"bad {col} in row(s) {rows}: {why}")
        frame[col] = values
    if not per_row:  # one row per distinct id
        frame = frame.drop_duplicates(ignore_index=True)
    grouped = frame.drop_duplicates().groupby(_PAIR[0], sort=False)[_PAIR[1]].agg(list)
    wanted: dict[str, list[str]] = {str(tk): ids for tk, ids in grouped.items()}
    return list(zip(frame[_PAIR[0]], frame[_PAIR[1]], strict=True)), frame.index, wanted


def _put(results: _Results, chunks: list[tuple[str, list[str]]], replies: list[Reply]) -> None:
    """Put each id's reply and ``errorCode`` from one bulk run into ``results``: its item of a
    207 answer, or the whole request's reply (an id missing from a 207 answer failed without an
    HTTP status). A later run's row replaces an earlier one's, counting the attempts and lost
    answers of both."""
    later: _Results = {}
    for (tk, ids), reply in zip(chunks, replies, strict=True):
        items = reply.body.get("response") if isinstance(reply.body, dict) else None
        if reply.status == 207:
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and "initiativeExternalId" in item:
                    code, status = item.get("errorCode"), item.get("status")
                    code = code if isinstance(code, int) else None
                    text = item.get("errorMessage") or ITEM_ERRORS.get(code or 0)
                    text = text or ("unexpected processing error" if status == 500 else None)
                    mine = replace(reply, status=status, error=None if status == 200 else text)
                    later[(tk, str(item["initiativeExternalId"]))] = (mine, code)
            whole = replace(reply, status=None, error="no result for this id in the 207 response")
        else:
            error = None if reply.ok else reply.error or f"HTTP {reply.status}"
            whole = replace(reply, error=error)
        for i in ids:
            later.setdefault((tk, i), (whole, None))
    for pair, (reply, code) in later.items():
        if pair in results:
            before = results[pair][0]
            attempts, lost = reply.attempts + before.attempts, reply.lost or before.lost
            reply = replace(reply, attempts=attempts, lost=lost)
        results[pair] = (reply, code)


def _star_op(
    conn: Connection,
    endpoint: Endpoint,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None,
    workers: int | None,
    progress: bool,
) -> pd.DataFrame:
    pairs, index, wanted = _pairs(timekeeper_or_frame, initiative_external_ids)
    results: _Results = {}
    pacer, transport = pacer_for(conn), conn.transport
    # one bulk run of requests of at most 100 ids, then the per-item 500s get the same policy
    # as whole requests: backoff, up to `retries` more
    for attempt in range(transport.retries + 1):
        if attempt:
            wanted = {}
            for (tk, i), (reply, code) in results.items():
                if reply.status == 500 and code is None:
                    wanted.setdefault(tk, []).append(i)
            if not wanted or pacer.fatal is not None or pacer.stop.wait(transport.delay(attempt)):
                break
        chunks = [
            (tk, ids[i : i + MAX_IDS_PER_REQUEST])
            for tk, ids in wanted.items()
            for i in range(0, len(ids), MAX_IDS_PER_REQUEST)
        ]
        calls = [
            Call(endpoint, None, {_PAIR[0]: tk, "initiativeExternalIds": ids}, key=tk)
            for tk, ids in chunks
        ]
        shown = progress and not attempt
        try:
            replies = run_bulk(
                conn, calls, workers=workers, progress=shown, desc=endpoint, pacer=pacer
            )
        except Interrupted as exc:
            _put(results, chunks, exc.replies)
            exc.partial, exc.result = results, _frame_of(pairs, index, results)
            raise
        for reply in replies if not attempt else ():
            _no_route(endpoint, reply.status, problem_of(reply), reply.method, reply.url)
        _put(results, chunks, replies)
    return _frame_of(pairs, index, results)


def _frame_of(pairs: list[tuple[str, str]], index: pd.Index, results: _Results) -> pd.DataFrame:
    """The result frame, a row per pair; an item with a lost answer is unknown unless a 2xx came."""
    replies, codes = [], []
    for pair in pairs:
        reply, code = results.get(pair, (not_sent(), None))
        if (reply.lost or reply.failure == LOST) and not reply.ok:
            reply, code = unproven(replace(reply)), None
        replies.append(reply)
        codes.append(code)
    out = result_frame(index, [p[1] for p in pairs], replies, key_name=_PAIR[1])
    out[_PAIR[0]] = pd.Series([p[0] for p in pairs], index=out.index, dtype=TEXT)
    out["errorCode"] = pd.Series(codes, index=out.index, dtype="Int64")
    return out[[*_PAIR, "status", "ok", "httpStatus", "error", "errorCode", "attempts", "elapsed"]]


def star(
    conn: Connection,
    timekeeper_or_frame: str | FrameLike,
    initiative_external_ids: Iterable[str] | None = None,
    *,
    workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Star initiatives for one timekeeper, or for many from a frame.

    Distinct ids go in requests of at most 100; per-item 500s are retried as whole requests
    are. Each row's ``status`` is the outcome, as every result frame's
    (:func:`toolkit._bulk.runner.result_frame`): ``sent`` (the item answered 200 in the 207
    answer), ``failed`` (the item answered 404, 422, 403 or 500, or the whole request failed),
    ``unknown`` (an answer was lost and no 200 came after it) or ``not_sent``.

    Args:
        conn: the connection.
        timekeeper_or_frame: a ``timekeeperExternalId``, or a frame (pandas, Polars or
            PyArrow) with columns ``timekeeperExternalId`` and ``initiativeExternalId``.
        initiative_external_ids: the initiatives (with a timekeeper id).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.

    Returns:
        A row per distinct id (or per input row): ``timekeeperExternalId``,
        ``initiativeExternalId``, ``status``, ``ok``, ``httpStatus`` (the item's HTTP status,
        or the whole request's), ``error`` (the item's message, or the request's problem),
        ``errorCode`` (the item's code: :data:`INITIATIVE_NOT_FOUND`...), ``attempts``,
        ``elapsed`` (the requests that carried the item).

    Example:
        >>> res = client.star("TK-101", ["M-1001-001", "M-1001-004"], progress=False)
        >>> res[["status", "httpStatus", "errorCode", "error"]]
           status  httpStatus  errorCode                   error
        0    sent         200       <NA>                    <NA>
        1  failed         422      20081  initiative is inactive
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
    """Unstar initiatives for one timekeeper, or for many from a frame, as :func:`star` stars.

    Args:
        conn: the connection.
        timekeeper_or_frame: a ``timekeeperExternalId``, or a frame of both columns.
        initiative_external_ids: the initiatives (with a timekeeper id).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.

    Returns:
        The columns of :func:`star`.

    Example:
        >>> pairs = pd.DataFrame({"timekeeperExternalId": ["TK-101", "TK-102"],
        ...                       "initiativeExternalId": ["M-1001-001", "M-1001-001"]})
        >>> client.unstar(pairs, progress=False)["status"].tolist()
        ['sent', 'sent']
    """
    return _star_op(conn, "unstar", timekeeper_or_frame, initiative_external_ids, workers, progress)


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
            "timekeeperExternalId": pd.array([tk] * n, dtype=TEXT),
            "initiativeExternalId": pd.array(ids, dtype=TEXT),
            "page": pd.array(pages, dtype="Int64"),
            "httpStatus": pd.array([status] * n, dtype="Int16"),  # as every result frame's
            "error": pd.array([error] * n, dtype=TEXT),
        }
    )


def starred_pages(
    conn: Connection,
    timekeeper_external_id: str,
    *,
    limit: int = MAX_LIMIT,
    max_pages: int = 100_000,
) -> Iterator[pd.DataFrame]:
    """Yield a timekeeper's starred list a page at a time, following ``nextCursor`` to null.

    Args:
        conn: the connection.
        timekeeper_external_id: the user's timekeeper id.
        limit: raw props fetched per page, 1 to 2500.
        max_pages: stop with :class:`PaginationError` past this many pages.

    Yields:
        A frame per page, with the columns of :func:`starred` (``page`` 0-based).

    Example:
        >>> [len(page) for page in client.starred_pages("TK-102", limit=2)]
        [2, 1]
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ConfigError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    params: dict[str, Any] = {"timekeeperExternalId": timekeeper_external_id, "limit": limit}
    seen: set[str] = set()
    for page in range(max_pages):
        body = conn.call("starred", params=params)
        ids: list[str | None] = [str(i) for i in body.get("initiativeExternalIds") or []]
        yield _frame(timekeeper_external_id, ids, [page] * len(ids))
        cursor = body.get("nextCursor")
        if cursor is None:
            return
        if cursor in seen:
            raise PaginationError(f"the service repeated cursor {cursor!r} at page {page}")
        seen.add(cursor)
        params["cursor"] = cursor
    raise PaginationError(f"more than {max_pages} pages; stopped")


def starred(
    conn: Connection,
    timekeeper_external_id: str,
    *,
    limit: int = MAX_LIMIT,
    max_pages: int = 100_000,
) -> pd.DataFrame:
    """A timekeeper's whole starred list as one frame; a timekeeper not found (404) or
    ambiguous (409) is one row without an initiative.

    Args:
        conn: the connection.
        timekeeper_external_id: the user's timekeeper id.
        limit: raw props fetched per page, 1 to 2500.
        max_pages: stop with :class:`PaginationError` past this many pages.

    Returns:
        :data:`STARRED_COLUMNS` (``error``: null, or the service's detail).

    Example:
        >>> client.starred("TK-102")["initiativeExternalId"].tolist()
        ['M-1003-004', 'M-1005-001', 'M-1003-003']
    """
    try:
        pages = list(starred_pages(conn, timekeeper_external_id, limit=limit, max_pages=max_pages))
    except ApiError as exc:
        _no_route("starred", exc.status, exc.problem, exc.method, exc.url)
        if exc.status not in (404, 409):  # 404, 409: the timekeeper, not the call, is wrong
            raise
        return _frame(timekeeper_external_id, [None], [None], exc.status, exc.detail)
    return pd.concat(pages, ignore_index=True)


def starred_many(
    conn: Connection, timekeepers: Sequence[str], *, limit: int = MAX_LIMIT
) -> pd.DataFrame:
    """Starred lists of many timekeepers as one frame; a failing timekeeper becomes a row.

    Args:
        conn: the connection.
        timekeepers: timekeeper ids.
        limit: raw props fetched per page, 1 to 2500.

    Returns:
        :data:`STARRED_COLUMNS`; an empty or failed list is one row without an initiative.

    Example:
        >>> client.starred_many(["TK-102", "TK-999"])["httpStatus"].tolist()
        [200, 200, 200, 404]
    """
    if isinstance(timekeepers, str):
        raise ConfigError("timekeepers must be a list of timekeeper ids, not one string")
    frames = []
    for tk in dict.fromkeys(timekeepers):
        try:
            f = starred(conn, tk, limit=limit)
            if f.empty:  # keep the timekeeper visible: one row, no initiative
                f = _frame(tk, [None], [None])
        except _NoRouteError:
            raise
        except ToolkitError as exc:
            status = exc.status if isinstance(exc, ApiError) else None
            detail = exc.detail if isinstance(exc, ApiError) else str(exc)
            f = _frame(tk, [None], [None], status, detail)
        frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else _frame("", [], [])
