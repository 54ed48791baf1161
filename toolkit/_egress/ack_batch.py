"""Batch acknowledgements: release-succeeded for up to 20 entries a request (published route).

One reply per row: an item's ``OK`` is ``sent``; 429/5xx items go again in a later batch;
409/422 items are left to the per-entry route; a 404 or 405 means the service lacks the route
(remembered in ``Connection.ack_batch``). The journal gets the per-entry route's line for each
entry, so a resumed run sends nothing twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from toolkit._bulk.journal import Journal
from toolkit._bulk.pacer import Pacer
from toolkit._bulk.runner import JOURNALED, Call, journal_reply, not_sent, run_bulk
from toolkit._core.connection import Connection
from toolkit._core.http import LOST, RETRY_STATUSES, Reply
from toolkit.errors import Interrupted

#: Most acknowledgements in one batch request (the published bound).
BATCH_SIZE = 20
#: Statuses of the batch route that mean the service lacks it.
FALLBACK = (404, 405)

_LOST_BEFORE = " (after an attempt whose answer was lost: it may have landed)"


#: the batch answer's status names that Python's ``HTTPStatus`` spells otherwise or lacks: the
#: published enum pairs its 55 names with its 55 numbers in order, and these 8 are the rest
_PUBLISHED_NAMES = {
    "EARLYHINTS": 103,
    "CONTENT_DIFFERENT": 210,
    "AMBIGUOUS": 300,
    "PAYLOAD_TOO_LARGE": 413,
    "URI_TOO_LONG": 414,
    "I_AM_A_TEAPOT": 418,
    "MISDIRECTED": 421,
    "UNRECOVERABLE_ERROR": 456,
}
#: every status name an item may hold -> its number (Python's names, aliases included)
_STATUSES = {name: s.value for name, s in HTTPStatus.__members__.items()} | _PUBLISHED_NAMES


def item_status(name: Any) -> int | None:
    """The HTTP status an item's ``status`` names (``"NOT_FOUND"`` is 404), or ``None``.

    Returns:
        The status code, or ``None`` for a name no HTTP status has.

    >>> item_status("OK"), item_status("UNPROCESSABLE_ENTITY"), item_status(409)
    (200, 422, 409)
    >>> item_status("PAYLOAD_TOO_LARGE"), item_status("UNRECOVERABLE_ERROR"), item_status("x")
    (413, 456, None)
    """
    if isinstance(name, int) and not isinstance(name, bool):
        return name
    return _STATUSES.get(str(name).upper())


class _Batches:
    """The state of one run: a reply per call once settled, attempts and time so far."""

    def __init__(self, conn: Connection, calls: Sequence[Call], jr: Journal | None) -> None:
        self.conn, self.calls, self.jr = conn, calls, jr
        self.urls = [conn.url(c.endpoint, **(c.path or {})) for c in calls]
        self.replies: list[Reply | None] = [None] * len(calls)
        self.attempts = [0] * len(calls)
        self.elapsed = [0.0] * len(calls)

    def settle(self, i: int, reply: Reply) -> None:
        """Keep a row's reply; journal it as the per-entry route would."""
        reply.attempts, reply.elapsed = self.attempts[i], self.elapsed[i]
        self.replies[i] = reply
        if self.jr is not None:
            call, url = self.calls[i], self.urls[i]
            journal_reply(self.jr, self.conn, call, call.journal_id(url), url, reply)

    def read(self, group: list[int], answer: Reply) -> list[int]:
        """Settle a batch's rows from its answer; return those to send again."""
        if answer.status in FALLBACK and answer.failure is None and not answer.lost:
            self.conn.ack_batch = False  # left to the per-entry route
            return []
        for i in group:
            self.attempts[i] += answer.attempts
            self.elapsed[i] += answer.elapsed
        items = answer.body.get("response") if isinstance(answer.body, dict) else None
        if not answer.ok or not isinstance(items, list):
            no_items = "the batch answer holds no per-item results (it may have landed)"
            changes: dict[str, Any] = {}
            if answer.ok:  # answered, but not with one result per item
                changes = {"failure": LOST, "lost": True, "error": no_items}
            for i in group:
                self.settle(i, dataclasses.replace(answer, **changes))
            return []
        self.conn.ack_batch = True
        found: dict[str, dict[str, Any]] = {}
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("entryId"), str):
                found.setdefault(item["entryId"], item)
        again = []
        limit = 1 + self.conn.transport.retries
        for i in group:
            item = found.get(self._entry(i))
            status = item_status(item.get("status")) if item is not None else None
            lost = answer.lost
            error: str | None = "no result for this entry in the batch answer (it may have landed)"
            if item is None:
                lost = True
            elif status is not None and 200 <= status < 300:
                error, lost = None, False
            elif status in RETRY_STATUSES and self.attempts[i] < limit:
                again.append(i)
                continue
            elif status in (409, 422):
                continue  # left to the per-entry route, whose answer names the state
            else:
                error = str(item.get("errorMessage") or item.get("errorCode") or item.get("status"))
                error += _LOST_BEFORE if lost else ""
            reply = Reply(status, item, error, method=answer.method, url=answer.url, lost=lost)
            self.settle(i, dataclasses.replace(reply, failure=LOST if lost else None))
        return again

    def _entry(self, i: int) -> str:
        return (self.calls[i].path or {}).get("entryId", "")


def send_batches(
    conn: Connection,
    calls: Sequence[Call],
    *,
    pacer: Pacer,
    journal: Journal | None = None,
    workers: int | None = None,
    progress: bool = True,
) -> tuple[list[Reply | None], list[int]]:
    """Send release-succeeded calls in batches of :data:`BATCH_SIZE`; one reply per call.

    Returns:
        Replies aligned with ``calls`` (``None``: left to the per-entry route), and the batch
        requests that carried each call.

    Example:
        >>> from toolkit._bulk.runner import pacer_for
        >>> send_batches(client.connection, [], pacer=pacer_for(client.connection))
        ([], [])
    """
    run = _Batches(conn, calls, journal)
    for i, call in enumerate(calls):
        if journal is not None and journal.acknowledged(
            call.journal_id(run.urls[i]), run.urls[i], call.key
        ):
            run.replies[i] = Reply(None, None, JOURNALED, 0, 0.0, "", "")
    todo = [i for i, reply in enumerate(run.replies) if reply is None]  # not journaled
    rest: list[int] = []  # rows held back while the first batch finds out about the route
    if conn.ack_batch is None:
        todo, rest = todo[:BATCH_SIZE], todo[BATCH_SIZE:]
    retries = 0  # rounds in a row that send again items answered 429 or 5xx
    while todo and conn.ack_batch is not False:
        if retries:
            try:  # items sent again wait a backoff, as the runner's retries do
                if pacer.stop.wait(min(conn.transport.backoff * 2.0**retries, 10.0)):
                    break
            except KeyboardInterrupt:
                pacer.stop.set()
                raise Interrupted(
                    "interrupted between batches", replies=[r or not_sent() for r in run.replies]
                ) from None
        groups = [todo[k : k + BATCH_SIZE] for k in range(0, len(todo), BATCH_SIZE)]
        batch_calls = [
            Call(
                "release_succeeded_batch",
                None,
                {"request": [{**(calls[i].path or {}), **(calls[i].json or {})} for i in g]},
                key=f"{len(g)} entries from {run._entry(g[0])}",
            )
            for g in groups
        ]
        try:
            answers = run_bulk(
                conn,
                batch_calls,
                workers=workers,
                progress=progress,
                desc="acknowledge",
                pacer=pacer,
            )
        except Interrupted as exc:
            for group, answer in zip(groups, exc.replies, strict=True):
                run.read(group, answer)
            raise Interrupted(str(exc), replies=[r or not_sent() for r in run.replies]) from None
        again = [
            i
            for group, answer in zip(groups, answers, strict=True)
            for i in run.read(group, answer)
        ]
        retries = retries + 1 if again else 0
        todo, rest = again + rest, []
    for i in todo if conn.ack_batch is not False else ():  # stopped between rounds
        run.replies[i] = not_sent()
    return run.replies, run.attempts
