"""The pace of bulk runs: a budget per service, learned from the answers, shared by every run.

A :class:`~toolkit.bulk.budget.Budget` decides when the next request to one service may leave.
It finds the service's limit from the answers, as TCP BBR reads a bottleneck's bandwidth from
what gets delivered rather than from the first losses, and bounds the requests in flight as
Vector's adaptive request concurrency and Netflix's concurrency-limits do:

* **start**: unpaced (the workers are the only bound), the requests in flight growing from one,
  by one a round trip (as Vector's adaptive request concurrency grows; the first after two
  answers alone): the requests in flight when a burst runs out are all refused, so they stay
  about the square root of the answers so far (a burst of 10 costs 3 or 4 refusals, not 8);
* **seek**, on the first refusal (429, or 503): a bisection on the pace. A pace is held for a
  few intervals: refused, it is above the limit; not refused (and kept), below it. Below with no
  upper bound yet, it doubles; far above (more refused than accepted), it is quartered. What
  went through since a refusal (the limiter was empty then) is a floor; refused after some went
  through (just over), the pace is halved. When the two bounds
  are within 5%, the limit is the lower one. Counting alone would not do: a token bucket of
  burst 1 paced 20% over its rate lets only 60% of it through (each refusal wastes the refill).
* **cruise**: the pace is just under the limit (:data:`~toolkit.bulk.budget.HEADROOM`), requests
  evenly spaced (a late worker may catch its slot up by half an interval; a refusal of a
  request that did so quarters that slack instead of the pace, since such a limiter keeps no
  burst). A refusal makes the refused pace the limit (a few percent lower); a pace that let
  through far less than it sent for 3 s or more takes the rate that went through; refusals in
  quick succession cut by the share of requests refused. Refusals of up to 2% of the last two
  seconds' answers are noise (BBRv2 bears the same loss rate): at a few hundred a second, a
  limiter with no burst refuses now and then whatever the pace; at a few a second one refusal
  is more than that. Then the pace goes back toward the refused one within a few seconds and,
  once quiet for 2 s (or 50 requests at the pace, if longer: at a few a second, refusals are
  dear and seconds cheap), probes beyond it: 5% a second, doubling every second, so that a
  raised limit is found in seconds; a limit that did not move costs a refusal a hold. With 10%
  or more of the last half second's answers refused (a limit that binds), the limit is what
  went through. A refusal of a request that took far longer than answers do (bunched up behind
  a stall) is no evidence.
* **random refusals**: refusals that neither fall nor grow when the pace halves (on its own,
  sought after refusals; or for a probe of 60 answers when refused in cruise) are no limit, as
  BBRv2 tells random loss from congestion: their share is the budget's ``noise``, what was
  learned from them is forgotten, and refusals up to about 1.5 times that share go on without
  slowing the pace (the share follows the faults as they come and go). A 5xx is never a sign
  of the pace.
* **in flight**: a refusal of a request sent with others in flight bounds the requests in flight
  below that count (a concurrency cap refuses only beyond its cap), never below what the
  accepted rate needs at the current latency; the first request under that bound goes alone,
  and refused before any went through under it, it marks a rate limit whose burst the start
  used up (else the bound is restored); later refusals within the bound, which a cap lets
  through and a drained rate limiter does not, mark a rate limit and lift the bound, as does
  a refusal of a request sent alone. The bound probes one higher after 5 quiet seconds spent
  at it, and shrinks when the latency climbs far above its floor (a gradient).
* **pauses**: only a spent quota pauses every run of the budget: a ``RateLimit`` or
  ``X-RateLimit-*`` header saying nothing remains for 2.5 s or more (its reset, or the
  ``Retry-After``), or refusals in a row with nothing going through for a few intervals (at most
  a second: a fixed window used up); then the pace is the rate the quota allowed over the last
  cycle, pause included. A ``Retry-After`` alone (seconds or an HTTP date) delays the refused
  request only: the runner tries it again after that wait, its worker sending other requests
  meanwhile. ``Retry-After: 0`` changes nothing.
  ``RateLimit-Policy`` (or ``X-RateLimit-Limit`` over the longest reset seen) is a floor of the
  first estimate. No header is needed.

A budget belongs to a connection and a service (:func:`~toolkit.bulk.budget.budgets_of`):
concurrent runs of one ``Client`` against one service (an import and an acknowledgement in the
same notebook) share it, and so one limit. It forgets what it learned after
:data:`~toolkit.bulk.budget.IDLE` seconds without requests.

A :class:`Pacer` is one run's view of its connection's budgets: the run's ``stop`` event,
``max_rate`` (a cap for users who know their quota), counters, and the run's one retry policy
for a service that cannot be reached (connection refused, name not resolved, TLS failure): the
whole run waits ``backoff``, ``2 * backoff``... for ``retries`` rounds, not each row, and then
the run fails (:attr:`Pacer.fatal`); a malformed URL fails it at once. Every wait ends early
when the run's ``stop`` event is set.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from toolkit.bulk.budget import (
    HEADROOM,
    IDLE,
    THROTTLE_STATUSES,
    Budget,
    Budgets,
    LimitHints,
    Ticket,
    budgets_of,
    limit_hints,
)
from toolkit.core.http import INVALID_URL, UNREACHABLE, Reply

__all__ = [
    "HEADROOM",
    "IDLE",
    "THROTTLE_STATUSES",
    "Budget",
    "Budgets",
    "LimitHints",
    "Pacer",
    "Ticket",
    "budgets_of",
    "limit_hints",
]


class Pacer:
    """When the next request of a run may leave; shared by all the run's worker threads.

    Args:
        max_rate: requests per second this run never exceeds (``None``: no cap).
        retries: rounds of waiting for an unreachable service before the run fails.
        backoff: first wait of those rounds in seconds (doubled each round).
        budgets: the connection's budgets (:func:`budgets_of`); a private set by default.
        stop: the run's stop event (a new one by default); set it to end every wait.
        clock: monotonic seconds (for tests).

    Example:
        >>> pacer = Pacer(max_rate=50)
        >>> ticket = pacer.acquire()
        >>> pacer.observe(ticket, Reply(201))
        >>> pacer.rate, pacer.fatal
        (50.0, None)
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
        self._outage = 0
        self._outages = 0
        self._used: set[Budget] = set()
        #: why the run failed (a service that cannot be reached), or ``None``.
        self.fatal: str | None = None
        #: counters: ``requests``, ``throttled``, ``pauses``.
        self.counts = {"requests": 0, "throttled": 0, "pauses": 0}

    def __repr__(self) -> str:
        rate = "unpaced" if self.rate is None else f"{self.rate:.1f}/s"
        return f"Pacer(rate={rate}, fatal={self.fatal!r})"

    @property
    def rate(self) -> float | None:
        """This run's pace in requests per second (``None``: unpaced)."""
        rates = [b.rate for b in self._budgets_used() if b.rate is not None]
        if self.max_rate is not None:
            rates.append(self.max_rate)
        return min(rates) if rates else None

    def _budgets_used(self) -> list[Budget]:
        with self._lock:
            return list(self._used)

    def wake(self) -> None:
        """Wake every waiting worker (after setting :attr:`stop`)."""
        for budget in self._budgets_used():
            with budget.cond:
                budget.cond.notify_all()

    def acquire(self, key: str = "") -> Ticket | None:
        """Wait until a request to a service may leave.

        Args:
            key: the service's base URL (its budget).

        Returns:
            A ticket to hand to :meth:`observe`, or ``None`` when the run was stopped or failed
            (then nothing may be sent).
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
                ticket = budget.take(now)
                self.counts["requests"] += 1
                return replace(ticket, outage=self._outage)

    def release(self, ticket: Ticket) -> None:
        """Give back a ticket whose request was not sent after all.

        Args:
            ticket: what :meth:`acquire` returned.
        """
        ticket.budget.forget(ticket)

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
            if reply.status in THROTTLE_STATUSES:
                self.counts["throttled"] += 1
            if reply.failure == INVALID_URL:
                self.fatal = reply.error or "malformed URL"
            elif reply.failure == UNREACHABLE:
                if ticket.outage == self._outage:  # the first failure since the last wait
                    self._outage += 1
                    self._outages += 1
                    if self._outages > self.retries:
                        self.fatal = reply.error or "the service cannot be reached"
                    else:
                        self.counts["pauses"] += 1
                        wait = self.backoff * 2 ** (self._outages - 1)
                        self._paused_until = max(self._paused_until, self._clock() + wait)
            elif reply.status is not None:
                self._outages = 0
            budget.cond.notify_all()

    def measured(self) -> float | None:
        """Accepted answers per second over the last two seconds, or ``None`` (too early).

        Example:
            >>> Pacer().measured() is None
            True
        """
        rates = [m for b in self._budgets_used() if (m := b.measured()) is not None]
        return sum(rates) if rates else None
