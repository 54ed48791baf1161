"""The pace of a bulk run: one controller shared by all its workers.

A :class:`Pacer` decides when the next request of a run may leave. It finds the service's pace
on its own, with additive increase and multiplicative decrease (AIMD) of the request rate, as
TCP does and as Netflix's concurrency-limits and Vector's adaptive request concurrency do:

* it starts unpaced (the workers are the only bound), or at ``max_rate`` when given;
* a 429 or 503 pauses **every** worker for the answer's ``Retry-After`` (one second when it
  has none) and cuts the rate to ``decrease`` times the pace the service was actually
  answering at; only the first throttled answer of an episode cuts (the others were already
  in flight), at most once a second; ``Retry-After: 0`` (go on at once) neither pauses nor
  cuts;
* between cuts the rate grows by ``increase`` of its post-cut value per second, never above
  twice the measured pace (so a rate that no longer binds cannot run away);
* ``max_rate`` caps it for users who know their quota.

It is also the run's one retry policy for a service that cannot be reached (connection
refused, name not resolved, TLS failure): the whole run waits ``backoff``, ``2 * backoff``...
for ``retries`` rounds, not each row, and then the run fails (:attr:`Pacer.fatal`); a
malformed URL fails it at once. Every wait ends early when the run's ``stop`` event is set.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from toolkit.core.http import INVALID_URL, UNREACHABLE, Reply

__all__ = ["THROTTLE_STATUSES", "Pacer"]

#: Answers that slow the whole run down.
THROTTLE_STATUSES = (429, 503)

_WINDOW = 2.0  # seconds of answers the measured pace is read from
_MIN_RATE = 0.5


class Pacer:
    """When the next request of a run may leave; shared by all the run's worker threads.

    Args:
        max_rate: requests per second never exceeded (``None``: no cap).
        retries: rounds of waiting for an unreachable service before the run fails.
        backoff: first wait of those rounds in seconds (doubled each round).
        decrease: factor applied to the pace on a throttled answer (0 to 1).
        increase: growth per second, as a fraction of the rate set by the last cut.
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
        decrease: float = 0.85,
        increase: float = 0.03,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_rate is not None and max_rate <= 0:
            raise ValueError("max_rate must be a positive number of requests per second")
        self.max_rate = float(max_rate) if max_rate is not None else None
        self.retries = retries
        self.backoff = backoff
        self.decrease = decrease
        self.increase = increase
        self.stop = stop or threading.Event()
        self._clock = clock
        self._cond = threading.Condition()
        self.rate: float | None = self.max_rate
        self._base = self.rate or 0.0
        self._grown_at = clock()
        self._next = 0.0
        self._paused_until = 0.0
        self._resumed_at = clock()
        self._epoch = 0
        self._outages = 0
        self._cut_at = -1e9
        self._ok: deque[float] = deque()
        #: why the run failed (a service that cannot be reached), or ``None``.
        self.fatal: str | None = None
        #: counters: ``requests``, ``throttled``, ``pauses``, ``cuts``.
        self.counts = {"requests": 0, "throttled": 0, "pauses": 0, "cuts": 0}

    def __repr__(self) -> str:
        rate = "unpaced" if self.rate is None else f"{self.rate:.1f}/s"
        return f"Pacer(rate={rate}, fatal={self.fatal!r})"

    def wake(self) -> None:
        """Wake every waiting worker (after setting :attr:`stop`)."""
        with self._cond:
            self._cond.notify_all()

    def acquire(self) -> int | None:
        """Wait until a request may leave.

        Returns:
            A ticket to hand to :meth:`observe`, or ``None`` when the run was stopped or failed
            (then nothing may be sent).
        """
        with self._cond:
            while True:
                if self.stop.is_set() or self.fatal is not None:
                    return None
                now = self._clock()
                if now < self._paused_until:
                    self._cond.wait(min(self._paused_until - now, 0.05))
                    continue
                if self.rate is None:
                    break
                self._grow(now)
                if now >= self._next:
                    # a little slack, so scheduling jitter does not lose time
                    self._next = max(self._next, now - 0.05) + 1.0 / self.rate
                    break
                self._cond.wait(min(self._next - now, 0.05))
            self.counts["requests"] += 1
            return self._epoch

    def observe(self, ticket: int, reply: Reply) -> None:
        """Learn from one answer (or failure) of a request sent with ``ticket``.

        Args:
            ticket: what :meth:`acquire` returned for the request.
            reply: what came back.
        """
        with self._cond:
            now = self._clock()
            if reply.failure == INVALID_URL:
                self.fatal = reply.error or "malformed URL"
            elif reply.failure == UNREACHABLE:
                if ticket == self._epoch:  # the first failure since the last wait
                    self._epoch += 1
                    self._outages += 1
                    if self._outages > self.retries:
                        self.fatal = reply.error or "the service cannot be reached"
                    else:
                        self._pause(now, self.backoff * 2 ** (self._outages - 1))
            elif reply.status is not None:
                self._outages = 0
                if reply.status in THROTTLE_STATUSES:
                    self.counts["throttled"] += 1
                    wait = reply.retry_after if reply.retry_after is not None else 1.0
                    # "Retry-After: 0" asks for no slowing down; one cut per episode and second
                    if wait > 0 and ticket == self._epoch and now - self._cut_at >= 1.0:
                        self._epoch += 1
                        self._cut(now)
                        self._pause(now, wait)
                else:
                    self._ok.append(now)
            self._cond.notify_all()

    def measured(self) -> float | None:
        """Answers per second over the last two seconds of sending, or ``None`` (too early).

        Example:
            >>> Pacer().measured() is None
            True
        """
        with self._cond:
            return self._measured(self._clock())

    # -- internals (called with the condition held) ----------------------------------------

    def _measured(self, now: float) -> float | None:
        while self._ok and self._ok[0] < now - _WINDOW:
            self._ok.popleft()
        span = now - max(now - _WINDOW, self._resumed_at)
        if span < 0.25:
            return None
        return sum(1 for t in self._ok if t >= self._resumed_at) / span

    def _pause(self, now: float, seconds: float) -> None:
        self.counts["pauses"] += 1
        self._paused_until = max(self._paused_until, now + seconds)
        self._resumed_at = self._paused_until
        self._next = self._paused_until

    def _cut(self, now: float) -> None:
        measured = self._measured(now)
        if measured is None:  # throttled at once: the answers so far, over at least a second
            measured = len(self._ok) / max(1.0, now - self._resumed_at)
        pace = measured if self.rate is None else min(self.rate, measured or self.rate)
        self.rate = max(_MIN_RATE, self.decrease * pace)
        if self.max_rate is not None:
            self.rate = min(self.rate, self.max_rate)
        self._base = self.rate
        self._cut_at = now
        self._grown_at = max(now, self._paused_until)
        self.counts["cuts"] += 1

    def _grow(self, now: float) -> None:
        assert self.rate is not None
        dt = now - self._grown_at
        self._grown_at = now
        if dt <= 0 or (self.max_rate is not None and self.rate >= self.max_rate):
            return
        measured = self._measured(now)
        if measured is not None and now - self._resumed_at >= 1.0 and self.rate > 2 * measured:
            return  # the rate no longer binds: do not let it run away
        self.rate += self.increase * max(self._base, 1.0) * dt
        if self.max_rate is not None:
            self.rate = min(self.rate, self.max_rate)
