"""The one bulk runner: many requests on a pool of workers, paced, journaled, stoppable.

Imports, acknowledgements, user look-ups and starring all go through :func:`run_bulk`: one
:class:`~toolkit._core.http.Reply` per :class:`Call`, in order, under one pacer per run.
"""

from __future__ import annotations

import collections
import heapq
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import pandas as pd
from pandas.api.extensions import ExtensionArray
from tqdm.auto import tqdm

from toolkit._bulk.budget import THROTTLE_STATUSES
from toolkit._bulk.budgets import budgets_of
from toolkit._bulk.journal import Journal, Outcome, payload_hash
from toolkit._bulk.pacer import Pacer
from toolkit._core.connection import ENDPOINTS, Connection, Endpoint
from toolkit._core.dtypes import TEXT
from toolkit._core.http import (
    INVALID_URL,
    LANDED,
    LOST,
    NOT_SENT,
    RETRY_STATUSES,
    UNREACHABLE,
    Failure,
    Reply,
)
from toolkit.errors import Interrupted

#: ``Reply.error`` of a call skipped because the journal holds it.
JOURNALED = "already acknowledged (journal)"

#: A value of the ``status`` column of a result frame (see :func:`result_frame`).
Status = Literal["sent", "journaled", "failed", "unknown", "not_sent", "skipped", "conflict"]

#: Values of the ``status`` column of a result frame, in the order of its categories.
STATUSES: list[Status] = list(get_args(Status))

#: Seconds the requests in flight get to finish after an interrupt.
GRACE = 0.5

_INTERRUPTED = "not sent: the run was interrupted"


@dataclass(frozen=True)
class Call:
    """One request of a bulk operation.

    Attributes:
        endpoint: a key of :data:`toolkit._core.connection.ENDPOINTS`.
        path: path parameters other than ``customerId``; ``params``: query parameters.
        json: the JSON body.
        key: what identifies the call in the journal and the progress (an ``externalId``...).
        retry: whether the call is safe to repeat.
        landed: for a call that is not idempotent: given a 409 or 422, whether the answer
            shows the requested state in force (``Reply.lost``: an earlier answer was lost).
        conflict: a 409 means the service holds its own record under this key: the status is
            ``conflict``, never retried, proof the record is stored even after a lost answer.
    """

    endpoint: Endpoint
    path: dict[str, str] | None = None
    json: Any = None
    key: str = ""
    params: dict[str, Any] | None = None
    retry: bool = True
    landed: Callable[[Reply], bool] | None = None
    conflict: bool = False

    def journal_id(self, url: str) -> str:
        """The journal line key: the full URL (service, customer, path), key and payload."""
        return payload_hash([self.endpoint, url, self.key, self.json])


def not_sent(reason: str = _INTERRUPTED) -> Reply:
    """The reply (``failure="not_sent"``) of a call that was never sent.

    Args:
        reason: why.

    Returns:
        The reply.

    Example:
        >>> not_sent().failure
        'not_sent'
    """
    return Reply(None, None, reason, 0, 0.0, failure=NOT_SENT)


def pacer_for(conn: Connection, *, max_rate: float | None = None) -> Pacer:
    """A pacer for one run over a connection, sharing the connection's budget per service.

    Args:
        conn: the connection.
        max_rate: requests per second never exceeded (default: the connection's).

    Returns:
        The pacer; pass it to several :func:`run_bulk` calls to make them one run.

    Example:
        >>> pacer_for(client.connection, max_rate=5).max_rate
        5.0
    """
    return Pacer(
        max_rate=max_rate if max_rate is not None else conn.max_rate,
        retries=min(conn.transport.retries, 4),
        backoff=conn.transport.backoff,
        budgets=budgets_of(conn),
    )


def _attempts(conn: Connection, call: Call, pacer: Pacer) -> Generator[float, None, Reply]:
    """Send one call until it is answered for good, under the run's pacer and retry policy."""
    method = url = ""
    attempts, elapsed = 0, 0.0
    lost = False  # an attempt was sent and its answer lost: it may have been applied
    limit = 1 + conn.transport.retries
    throttled = 0  # refusals to pace (429, 503), not counted against the retries
    service = conn.urls[ENDPOINTS[call.endpoint][1]]  # the budget: one per service
    while True:
        ticket = pacer.acquire(service)
        if ticket is None:  # stopped, or the run failed
            reason = pacer.fatal or _INTERRUPTED
            if lost:
                reason = "an attempt was sent and its answer lost; then " + reason
            failure: Failure = LOST if lost else NOT_SENT
            return Reply(None, None, reason, attempts, elapsed, method, url, failure, lost=lost)
        try:
            reply = conn.send(
                call.endpoint, path=call.path, params=call.params, json=call.json, retry=False
            )
        except BaseException:
            pacer.release(ticket)  # no answer to learn from: give the place in flight back
            raise
        pacer.observe(ticket, reply)
        method, url = reply.method, reply.url
        attempts += reply.attempts
        elapsed += reply.elapsed
        reply.attempts, reply.elapsed = attempts, elapsed
        reply.lost = lost
        if reply.ok:
            return reply
        if reply.failure in (UNREACHABLE, INVALID_URL) and attempts <= 50 * limit:
            # the pacer made the whole run wait, or failed it (beyond: a safety net, no answer
            # and so not retryable below; the pacer fails the run long before)
            continue
        if reply.failure == LOST:
            lost = True
        elif call.landed is not None and reply.status in (409, 422):
            if call.landed(reply):
                reply.failure = LANDED
                why = "the attempt whose answer was lost landed" if lost else "already done"
                reply.error = f"{reply.error} (the requested state is in force: {why})"
                return reply  # else an error, not retryable: returned below
        elif call.conflict and reply.status == 409:
            if lost:
                reply.error = (
                    f"{reply.error} (after an attempt whose answer was lost: the stored "
                    "record may be that attempt's)"
                )
            return reply  # the record exists: stored, with the service's version
        # NOT_SENT here: the token request's answer was lost, this request never left
        retryable = reply.failure in (LOST, NOT_SENT) or reply.status in RETRY_STATUSES
        if reply.status in THROTTLE_STATUSES and throttled < 10 * limit:
            # a refusal to pace: the pacer slowed down; it does not use up the call's retries
            throttled += 1
        spent = attempts - throttled
        if not (call.retry or call.landed is not None) or not retryable or spent >= limit:
            return unproven(reply) if lost else reply
        if reply.status not in THROTTLE_STATUSES:
            yield conn.transport.delay(spent)  # refusals to pace do not lengthen it
        elif reply.retry_after:  # the service's wait for this request (the pace is the pacer's)
            yield reply.retry_after


def unproven(reply: Reply) -> Reply:
    """An error after an attempt whose answer was lost proves nothing: the call is ``unknown``."""
    if reply.failure != LOST:
        reply.error = f"{reply.error} (after an attempt whose answer was lost: it may have landed)"
        reply.failure = LOST
    reply.lost = True
    return reply


class _Pool:
    """The state one run's worker threads share: the calls of the batches loaded and not yet
    handed out, their replies, those in flight. The next batch is loaded when the last one has
    no call left to start, so the calls still waiting for a ``Retry-After`` or a backoff never
    leave the workers idle (10,000 rows at a time, a 1 s ``Retry-After`` cost 10 to 15% of a
    run's rate, measured live at 5% faults)."""

    def __init__(
        self, conn: Connection, batches: Iterator[Sequence[Call]], pacer: Pacer, jr: Journal | None
    ):
        self.conn, self.batches, self.pacer, self.jr = conn, batches, pacer, jr
        # by call number, for the batches loaded and not handed out: the call, its URL and
        # journal id; its reply
        self.calls: dict[int, tuple[Call, str, str]] = {}
        self.replies: dict[int, Reply | None] = {}
        # each such batch: where it ends, and how many of its calls are not answered yet
        self.open: collections.deque[list[int]] = collections.deque()
        self.first = self.loaded = 0  # the first call not handed out; the calls loaded
        self.lock = threading.Lock()
        self.pending: Iterator[int] = iter(())
        self.closed = False  # the batches' reader left: take no more calls
        self.error: BaseException | None = None  # reading the batches failed in a worker
        self.in_flight: set[int] = set()
        # workers store each reply themselves, then say so on this queue: a KeyboardInterrupt
        # can land between any two bytecodes of the waiting thread, and must not lose an answer
        self.answers: queue.SimpleQueue[int] = queue.SimpleQueue()
        # calls waiting to be tried again (a backoff, a Retry-After), without a worker:
        # by when, row
        self.delayed: list[tuple[float, int, Generator[float, None, Reply]]] = []

    def load(self) -> bool:
        """Load the next batch (under the lock); ``False`` when none is left. A call the journal
        holds is answered at once."""
        batch = next(self.batches, None)
        if batch is None:
            return False
        todo: list[int] = []
        for k, call in enumerate(batch, start=self.loaded):
            url = jid = ""
            if self.jr is not None:  # journal lines name the full URL: another customer or
                url = self.conn.url(call.endpoint, **(call.path or {}))  # service never matches
                jid = call.journal_id(url)
            self.calls[k], self.replies[k] = (call, url, jid), None
            if self.jr is not None and self.jr.acknowledged(jid, url, call.key):
                self.replies[k] = Reply(None, None, JOURNALED, 0, 0.0, "", "")
                self.answers.put(k)
            else:
                todo.append(k)
        self.loaded += len(batch)
        self.open.append([self.loaded, len(batch)])
        self.pending = iter(todo)
        return True

    def hand_out(self) -> list[Reply]:
        """The replies of the first batch loaded (``not_sent`` where none came), forgotten."""
        end = self.open.popleft()[0]
        why = self.pacer.fatal or _INTERRUPTED  # (no reply: the run failed)
        out = [self.replies.pop(k) or not_sent(why) for k in range(self.first, end)]
        for k in range(self.first, end):
            del self.calls[k]
        self.first = end
        return out

    def answered(self, i: int) -> None:
        """Count call ``i`` answered in its batch."""
        with self.lock:  # (a worker may be loading a batch)
            next(batch for batch in self.open if i < batch[0])[1] -= 1

    def keep(self, i: int, reply: Reply, into: dict[int, Reply | None]) -> None:
        """Journal the reply to call ``i`` and store it in ``into``."""
        if self.jr is not None:
            call, url, jid = self.calls[i]
            journal_reply(self.jr, self.conn, call, jid, url, reply)
        into[i] = reply

    def done(self, i: int, reply: Reply) -> None:
        """Keep the reply to call ``i`` and say it is answered."""
        self.keep(i, reply, self.replies)  # before leaving in_flight: the interrupt relies on it
        with self.lock:
            self.in_flight.discard(i)
        self.answers.put(i)

    def take(self) -> tuple[int, Generator[float, None, Reply]] | float | None:
        """The next call (a waiting one first), seconds until one may go, or ``None``: done."""
        with self.lock:
            if self.pacer.stop.is_set() or self.pacer.fatal is not None or self.closed:
                return None
            now = time.monotonic()
            if self.delayed and self.delayed[0][0] <= now:
                _, i, attempts = heapq.heappop(self.delayed)
            else:
                j = next(self.pending, None)
                while j is None and self.load():  # the next batch, while this one's tail waits
                    j = next(self.pending, None)
                if j is None:
                    return self.delayed[0][0] - now if self.delayed else None
                i, attempts = j, _attempts(self.conn, self.calls[j][0], self.pacer)
            self.in_flight.add(i)
            return i, attempts

    def end_waiting(self, keep: Callable[[int, Reply], None]) -> None:
        """Give the calls waiting to be tried again their reply: not sent, or unknown."""
        with self.lock:
            waiting, self.delayed[:] = list(self.delayed), []
        for _, i, attempts in waiting:
            try:  # the pacer lets nothing leave: the attempts end without waiting
                while True:
                    next(attempts)
            except StopIteration as end:
                keep(i, end.value)

    def work(self) -> None:
        """A worker thread: take calls and try them until none is left or the run stops."""
        while True:
            try:
                job = self.take()
            except Exception as exc:  # reading the next batch failed: the run's caller hears it
                self.error, self.closed = exc, True
                return
            if job is None:
                return
            if isinstance(job, float):
                self.pacer.stop.wait(min(job, 0.05))
                continue
            i, attempts = job
            try:
                delay = next(attempts)
                while delay <= 0:
                    delay = next(attempts)
            except StopIteration as end:
                self.done(i, end.value)
            except Exception as exc:  # a bug must not lose the other rows
                self.done(i, Reply(None, None, f"internal error: {type(exc).__name__}: {exc}", 1))
            else:
                with self.lock:
                    self.in_flight.discard(i)
                    heapq.heappush(self.delayed, (time.monotonic() + delay, i, attempts))

    def stop(self) -> list[Reply]:
        """Ctrl+C: stop the workers, wait a moment for the calls in flight, and give one reply
        per call of the batches loaded and not handed out (those in flight ``lost``: a re-run
        retries them)."""
        self.pacer.stop.set()
        self.pacer.wake()
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline:
            with self.lock:
                if not self.in_flight:
                    break
            time.sleep(0.02)
        with self.lock:
            late = set(self.in_flight)
            snapshot = dict(self.replies)  # answers arriving from now on do not change the result
        self.end_waiting(lambda i, reply: self.keep(i, reply, snapshot))
        awaited = "interrupted while its answer was awaited"
        for i in sorted(late):  # their answers may never come: unknown, a re-run retries them
            if snapshot[i] is None:
                self.keep(i, Reply(None, None, awaited, 1, 0.0, failure=LOST), snapshot)
        return [snapshot[k] or not_sent() for k in range(self.first, self.loaded)]


def run_bulk(
    conn: Connection,
    calls: Sequence[Call],
    *,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
    desc: str = "requests",
    pacer: Pacer | None = None,
) -> list[Reply]:
    """Send every call on a pool of worker threads and return one reply per call, in order.

    A 5xx or a lost answer is retried with backoff up to the connection's ``retries`` (not for
    ``retry=False`` calls without ``landed``); a 429 or 503 slows the pacer down and the call
    goes again at its pace; an unreachable service is waited for once for the whole run, then
    every call not yet answered is ``not_sent``.

    Args:
        conn: the connection.
        calls: the requests to send.
        workers: worker threads (default: ``conn.workers``).
        progress: show a tqdm progress bar.
        journal: a path or :class:`Journal`; a call whose record's last answer accepted the
            same payload is not sent (``error=JOURNALED``); every answer is added to it.
        desc: label of the progress bar.
        pacer: the run's pacer (:func:`pacer_for`); share one to make several calls one run.

    Returns:
        Replies aligned with ``calls``; ``Reply.failure`` is ``not_sent`` or ``lost`` (unknown)
        for calls without an answer.

    Raises:
        Interrupted: Ctrl+C or Jupyter's stop; its ``replies`` hold one reply per call.

    Example:
        >>> calls = [Call("user", {"userId": u}, key=u) for u in (user_id, "0" * 24)]
        >>> replies = run_bulk(client.connection, calls, progress=False)
        >>> [r.status for r in replies]
        [200, 404]
    """
    run = run_batches(
        conn, [calls], workers=workers, progress=progress, journal=journal, desc=desc, pacer=pacer
    )
    try:
        return next(run)
    finally:
        run.close()


def run_batches(
    conn: Connection,
    batches: Iterable[Sequence[Call]],
    *,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
    desc: str = "requests",
    pacer: Pacer | None = None,
    total: int | None = None,
) -> Generator[list[Reply], None, None]:
    """Send batches of calls as one run (:func:`run_bulk`): each batch's replies, in order, as
    soon as all of them came. The workers start on a batch once the one before has no call left
    to start, while its last calls wait to be tried again; a batch is read only then, so a run
    holds about two batches, however many there are.

    Args:
        conn: the connection.
        batches: the calls, a batch at a time.
        workers: worker threads (default: ``conn.workers``).
        progress: show a tqdm progress bar.
        journal: as :func:`run_bulk`'s.
        desc: label of the progress bar.
        pacer: the run's pacer (:func:`pacer_for`).
        total: the calls in all the batches, for the progress bar (default: the first's).

    Yields:
        The replies of each batch, aligned with its calls.

    Raises:
        Interrupted: Ctrl+C, also thrown in at a ``yield``; its ``replies`` hold one reply per
            call of the batches read and not yet yielded, in order.

    Example:
        >>> calls = [Call("user", {"userId": u}, key=u) for u in (user_id, "0" * 24)]
        >>> run = run_batches(client.connection, [calls[:1], calls[1:]], progress=False)
        >>> [[r.status for r in replies] for replies in run]
        [[200], [404]]
    """
    jr = journal if journal is None or isinstance(journal, Journal) else Journal(journal)
    pacer = pacer or pacer_for(conn)
    run = _Pool(conn, iter(batches), pacer, jr)
    bar: tqdm[Any] | None = None
    try:
        with run.lock:
            run.load()  # the first batch here: reading it, the caller hears its errors
        size = total if total is not None else run.loaded
        # a single request shows no 1/1 bar
        bar = tqdm(total=size, desc=desc, disable=not progress or size <= 1, unit="req")
        n_workers = max(1, min(workers or conn.workers, size))
        threads = [
            threading.Thread(target=run.work, name=f"toolkit-{desc}-{n}", daemon=True)
            for n in range(n_workers)
        ]
        for t in threads:
            t.start()
        failed = False  # the workers took no more calls: a service that cannot be reached
        while True:
            with run.lock:  # (a worker reads the next batch once this one has no call to start)
                if not run.open and not run.load():
                    break
            while run.open[0][1] and not failed:
                try:
                    i = run.answers.get(timeout=0.1)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and run.answers.empty():
                        if run.error is not None:
                            raise run.error from None
                        failed = True
                        run.end_waiting(run.done)  # calls waiting to be tried again
                    continue
                run.answered(i)
                bar.update(1)
            yield run.hand_out()  # after a failure, every call without a reply is not_sent
    except KeyboardInterrupt:
        final = run.stop()
        n = Counter(_status(r) for r in final)
        answered = len(final) - n["unknown"] - n["not_sent"]
        raise Interrupted(
            f"interrupted: {answered} answered, {n['unknown']} unknown, {n['not_sent']} not sent;"
            " the journal, if any, holds what was answered",
            replies=final,
        ) from None
    finally:
        run.closed = True
        if bar is not None:
            bar.close()
        if jr is not None and jr is not journal:  # a journal this run opened
            jr.close()


def journal_reply(
    jr: Journal, conn: Connection, call: Call, jid: str, url: str, reply: Reply
) -> None:
    """Write an answer to the journal: accepted, failed, or lost; a call never sent is not.

    Args:
        jr: The journal.
        conn: The connection (its customer is recorded).
        call: The call answered.
        jid: Its ``Call.journal_id(url)``.
        url: Its full URL.
        reply: The answer.

    >>> journal_reply(None, None, None, "", "", not_sent())  # never sent: nothing written
    """
    if reply.ok:
        jr.record(jid, call, reply.status or 0, url=url, customer=conn.customer_id)
    elif reply.failure == LOST or (reply.status is not None and reply.failure is None):
        outcome: Outcome = "unknown" if reply.failure == LOST else "failed"
        jr.record_failure(
            call,
            url,
            outcome=outcome,
            status=reply.status,
            error=reply.error,
            customer=conn.customer_id,
        )


def _status(r: Reply, conflict: bool = False) -> Status:
    """The ``status`` of a reply in a result frame."""
    if r.error == JOURNALED:
        return "journaled"
    if r.ok:
        return "sent"
    if r.failure in (NOT_SENT, UNREACHABLE, INVALID_URL):
        return "not_sent"
    if r.failure == LOST:
        return "unknown"
    if r.status is None and r.attempts == 0:
        return "skipped"
    return "conflict" if conflict and r.status == 409 else "failed"


def result_frame(
    index: pd.Index | Sequence[Any],
    keys: Sequence[Any],
    replies: Sequence[Reply],
    *,
    key_name: str = "externalId",
    conflict: bool = False,
) -> pd.DataFrame:
    """The standard result frame of a bulk operation: one row per input row.

    Columns: ``<key_name>``, ``status``, ``ok``, ``httpStatus``, ``error``, ``attempts``,
    ``elapsed`` (``httpStatus`` and ``attempts`` as ``Int16``: 3 bytes a row, not 9). ``status``
    is ``sent`` (answered 2xx), ``journaled`` (a journal holds it),
    ``failed`` (answered with an error), ``unknown`` (answer lost: it may have been applied),
    ``not_sent`` (interrupted, or the service could not be reached), ``skipped`` (invalid, or
    its parent failed) or ``conflict`` (with ``conflict``: a 409, the service keeps its own
    record). ``ok`` is ``sent`` or ``journaled``.

    Args:
        index: the input frame's index (the result is aligned to it).
        keys: the identifying value of each row.
        replies: one reply per row.
        key_name: name of the key column.
        conflict: a 409 is ``conflict`` (imports), not ``failed``.

    Returns:
        The result frame.

    Example:
        >>> result_frame([0, 1], "AB", [Reply(201), Reply(409)], conflict=True).status.tolist()
        ['sent', 'conflict']
    """
    status = [_status(r, conflict) for r in replies]
    return pd.DataFrame(
        {
            key_name: pd.array(
                keys if isinstance(keys, ExtensionArray) else list(keys), dtype=TEXT
            ),
            "status": pd.Categorical(status, categories=STATUSES),
            "ok": [s in ("sent", "journaled") for s in status],
            "httpStatus": pd.array([r.status for r in replies], dtype="Int16"),
            "error": pd.array(
                [None if r.error == JOURNALED else r.error for r in replies], dtype=TEXT
            ),
            "attempts": pd.array([r.attempts for r in replies], dtype="Int16"),
            "elapsed": pd.array([round(r.elapsed, 6) for r in replies], dtype="Float64"),
        },
        index=pd.Index(index) if not isinstance(index, pd.Index) else index,
    )
