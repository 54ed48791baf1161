"""One run's view of its connection's budgets: :class:`Pacer`.

A :class:`~toolkit._bulk.budget.Budget` per service decides when the next request may leave, from
the limit it learns (docs/pacing.md). A :class:`Pacer` adds the run's ``stop`` event,
its ``max_rate`` and one policy for a service that cannot be reached: the whole run waits
``backoff``, ``2 * backoff``... for ``retries`` rounds, then fails (:attr:`Pacer.fatal`); a
malformed URL fails it at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from toolkit._bulk.budget import Budget, Ticket
from toolkit._bulk.budgets import Budgets
from toolkit._bulk.hints import limit_hints
from toolkit._core.http import INVALID_URL, UNREACHABLE, Reply


class Pacer:
    """When the next request of a run may leave; shared by all the run's worker threads.

    Args:
        max_rate: requests per second this run never exceeds (``None``: no cap).
        retries: rounds of waiting for an unreachable service before the run fails.
        backoff: first wait of those rounds in seconds (doubled each round).
        budgets: the connection's budgets (default: a private set).
        stop: the run's stop event (a new one by default); set it to end every wait.
        clock: monotonic seconds (for tests).

    Example:
        >>> pacer = Pacer(max_rate=50)
        >>> ticket = pacer.acquire()
        >>> pacer.observe(ticket, Reply(201))
        >>> ticket.budget.in_flight, pacer.fatal
        (0, None)
    """

    def __init__(
        self,
        *,
        max_rate: float | None = None,
        retries: int = 4,
        backoff: float = 0.25,
        budgets: Budgets | None = None,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_rate is not None and max_rate <= 0:
            raise ValueError("max_rate must be a positive number of requests per second")
        self.max_rate = float(max_rate) if max_rate is not None else None
        self.retries = retries
        self.backoff = backoff
        self.budgets = budgets if budgets is not None else Budgets(clock=clock)
        self.stop = stop or threading.Event()
        self._clock = clock
        self._lock = threading.Lock()
        self._next = 0.0  # the run's own slot under max_rate
        self._paused_until = 0.0  # the run's wait for an unreachable service
        self._outage = self._outages = 0  # outage waits: in all, and in a row
        self._used: set[Budget] = set()
        #: why the run failed (a service that cannot be reached), or ``None``.
        self.fatal: str | None = None

    def wake(self) -> None:
        """Wake every waiting worker (after setting :attr:`stop`)."""
        with self._lock:
            used = list(self._used)
        for budget in used:
            with budget.cond:
                budget.cond.notify_all()

    def acquire(self, key: str = "") -> Ticket | None:
        """Wait until a request to a service may leave.

        Args:
            key: the service's base URL (its budget).

        Returns:
            A ticket to hand to :meth:`observe`; ``None``: the run was stopped or failed.
        """
        budget = self.budgets.get(key)
        with self._lock:
            self._used.add(budget)
        with budget.cond:
            while True:
                if self.stop.is_set() or self.fatal is not None:
                    return None
                now = self._clock()
                wait = self._paused_until - now
                if wait <= 0 and self.max_rate is not None:
                    wait = max(self._next, now - 0.5 / self.max_rate) - now
                if wait <= 0:
                    wait = budget.delay(now)
                if wait > 0:
                    budget.cond.wait(min(wait, 0.05))
                    continue
                if self.max_rate is not None:
                    self._next = max(self._next, now - 0.5 / self.max_rate) + 1 / self.max_rate
                return budget.take(now, outage=self._outage)

    def release(self, ticket: Ticket) -> None:
        """Give back a ticket whose request was not sent after all.

        Args:
            ticket: what :meth:`acquire` returned.
        """
        ticket.budget.answer(ticket, None)

    def observe(self, ticket: Ticket, reply: Reply) -> None:
        """Learn from one answer (or failure) of a request sent with ``ticket``.

        Args:
            ticket: what :meth:`acquire` returned for the request.
            reply: what came back.
        """
        budget = ticket.budget
        hints = limit_hints(reply.headers) if reply.headers else None
        budget.answer(ticket, reply.status, retry_after=reply.retry_after, hints=hints)
        with budget.cond:
            if reply.failure == INVALID_URL:
                self.fatal = reply.error or "malformed URL"
            elif reply.failure == UNREACHABLE and ticket.outage == self._outage:
                # the first failure since the last wait (an unreachable service: no status)
                self._outage += 1
                self._outages += 1
                if self._outages > self.retries:
                    self.fatal = reply.error or "the service cannot be reached"
                else:
                    wait = self.backoff * 2 ** (self._outages - 1)
                    self._paused_until = max(self._paused_until, self._clock() + wait)
            elif reply.status is not None:
                self._outages = 0
            budget.cond.notify_all()
