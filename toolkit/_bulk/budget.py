"""The budget of one service: its limit, learned from the answers, shared by every run over it.

A :class:`Budget` is non-blocking (it runs on a simulated clock as well); its states (``start``,
``seek``, ``cruise``), in-flight bound, pauses and every constant are explained in docs/pacing.md.
:func:`~toolkit._bulk.budgets.budgets_of` gives a connection's budgets.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from toolkit._bulk.hints import LimitHints

#: Answers that slow the pace down.
THROTTLE_STATUSES = (429, 503)

#: The pace as a share of the measured limit.
HEADROOM = 0.96

#: Seconds without a request after which a budget forgets what it learned.
IDLE = 10.0

# Every constant of the pacer, by the mechanism it serves (docs/pacing.md explains each).
# An "interval" is one request's share of a second at the pace (1 / pace).

# -- the pace and its spacing
_MIN_RATE = 0.2  # requests/s: the slowest pace (one request in 5 s still learns the limit)
_QUOTA_HEADROOM = 0.98  # share: the pace's share of a quota window's rate (it refills anyway)
_WIDEST = 0.92  # share: the widest spacing margin, the pace's least share of the estimate
_WIDEN = (1.0 - HEADROOM) / 2  # share: how much a refusal of the spacing widens the margin
_SLACK = 0.5  # intervals: how early a late worker may catch up its slot (no burst beyond)
_SLACK_MIN, _SLACK_SHRINK = 0.02, 4  # intervals; a refused catch-up divides the slack by 4
_EARLY = 0.95  # intervals: a request sooner than this after the one before caught up a slot
_ABOVE = 1.001  # share: a pace this far above the one that held is above it (not rounding)
_WINDOW = 2.0  # seconds of answers the measured rate is read from
_TINY = 1e-3  # seconds (or share): a floor that keeps a quotient finite

# -- the start's trial of its first refusals: a limit, or random faults?
_TRIAL_WEIGHT, _TRIAL_FLOOR, _TRIAL_SLOPE = 3.6, 3.0, 2.1  # a limit at once when refused x 3.6
# >= 3 + 2.1 x answers: 3 of the first 3, 7 of 10, 25 of 40 (random faults of 20% refuse that
# many about once in a thousand trials)
_TRIAL_ANSWERS = 40  # answers: the trial's first step; then it halves the pace as a test
_TRIAL_HALF = 0.5  # share of the trial's answers a second: the test pace (the refusals halve?)
_TRIAL_BELOW = 0.8  # share of what went through: the test pace is below it, not at it
_TRIAL_EXPECTED = 20.0  # refusals expected at the share seen, none came: the share fell
_TRIAL_MOST = 300.0  # answers: the longest test (20 refusals expected at a share of 6.7%)
_RETRIAL_WITHIN = 20.0  # seconds after a cut made at once in which a refusal in cruise below
# the pace tries the start again (a limit cut below refuses there no more; random faults do)
_RETRIAL_FALLEN = 0.8  # times the first pace in cruise after that cut: after a start that got
# a burst through, a refusal below it tries the start again. A seek holds each pace until the
# burst is used up, so the pace it found is within a few % of a limit: refused again 20% below
# it, the refusals did not fall with the pace, and are no limit's (the sandbox's seed 7 at 10%
# faults crawled at 1% of its twin, 3 burst through then 429s and 503s in a row)
_RETRIAL_BURST = 1.0  # seconds of the first pace in cruise after that cut: a start that got
# more through before its first refusal had a burst the seek's holds may not have used up, so
# its first refusals in cruise may be the limit's (_RETRIAL_FALLEN waits for the pace to fall);
# fewer (the sandbox's 40/s with a burst of 4; seed 7's 3 through at 5 a second) try the start
# again at the first, until a probe went above the pace (the refusals after it may be the
# limit's: two runs sharing 40/s with a burst of 4 tried it again 6 to 8 s in and refused up
# to 5.6% over 14 runs, 2.4 to 3.0% over 8 without it). Tried at the first, 25/s with a burst
# of 50 refused 5.3% on the simulated clock (the goal is at most 5%) instead of 4.2%
_RETRIAL_GROWN = 2.0  # times the first pace in cruise after that cut: a pace grown beyond it
# found room the cut did not see (a limit raised since), no crawl of random faults, which keep
# the pace at that first one (measured: 1.0 times on every draw that crawled)

# -- random refusals (the budget's ``noise``) and the samples that follow them
_NOISE = 0.02  # refusals (a share of the last _WINDOW's answers) a pace in cruise shrugs off
_NOISE_MAX = 0.5  # the largest share learned as noise: more refused than accepted is a limit's
_NOISE_WEIGHT = 0.1  # weight of one sample's share in the noise followed (about the last ten)
_NOISE_OFF = 0.005  # share: a noise followed below this (or half a smaller one found) is off
_RANDOM_FACTOR, _RANDOM_Z, _RANDOM_SLACK = 1.5, 2.0, 2.0  # random refusals within the last
# _WINDOW: at most 1.5 x expected + 2 standard deviations (Poisson) + 2 refusals...
_RANDOM_FEW, _RANDOM_MOST = 10, 0.6  # ... and, from 10 answers, at most 60% of them
_SAMPLE = 30  # answers (and at least _SAMPLE_SECONDS) in one sample of the refusal share
_SAMPLE_SECONDS = 0.25  # seconds: at 1,000 answers a second, 30 answers are too short a sample
_SAMPLE_FEW, _SAMPLE_LONG = 10, 1.0  # answers, seconds: a slow pace's sample is full after both
_ALONE = 4.0  # intervals: a refusal with none this close before is alone (in a row: a limit's)
_STALL_SAMPLES, _STALL_FACTOR, _STALL_EXTRA = 8, 4, 0.05  # a request 4 x the median latency
# (of 8 at least) and 50 ms over it was held up on the way: its refusal tells nothing

# -- a cut's check (``_Cut``): random refusals do not fall with the pace, a limit's do
_CHECK_REFUSED = 3  # refusals after a cut that tell it (as the start's trial: fewer tell nothing)
_CHECK_Z = 2.0  # standard deviations (of the two shares' difference) the share falls by for a
# limit's: the two-proportion test's usual 2 (random refusals fall that far 1 time in 40)

# -- cruise: a test at half the pace, when refusals keep coming
_PROBE_EVERY = 5.0  # seconds: at most one test at half the pace
_SUSPECT_REFUSED = 4  # refusals in cruise (between _NOISE and _NOISE_MAX of the answers) tested
_TEST_PACE = 0.5  # share of the pace the test runs at
_TEST_ANSWERS, _TEST_SECONDS = 60, 3.0  # the test's sample: this many answers, or this long
_SAME_LOW, _SAME_HIGH, _SAME_PLUS = 0.25, 2, 0.05  # the test refused between a quarter of the
# share before and twice it (+ 5 points): the refusals did not fall with the pace, random

# -- cruise: a reaction to a refusal (the limit is lower than the pace)
_REACT_LONG, _REACT_LESS = 3.0, 0.8  # seconds, share: refusals this far apart with less than
# 80% of the pace through between them: the limit is what went through
_REACT_STALE = 5.0  # seconds: refusals further apart: the pace refused is about the limit
_CUT_LEAST, _CUT_MOST = 0.9, 0.5  # share: one refusal in n sent cuts to 1 - 1/n, in these bounds
_LATE = 0.5  # seconds: "of late" (the dense refusals, the rate Little's law needs)
_DENSE = 0.1  # refused share of late: over a limit that binds, the accepted rate is the limit
_DENSE_REFUSED = 3.0  # refusals of late, at least, for that

# -- seek: bisecting the pace after the start's first limit
_ROUND = 0.25  # seconds: the shortest hold of a seek
_HOLD_INTERVALS = 3.0  # intervals: a hold's least length (three requests can be refused)
_BURST_LEAST, _BURST_SHARE, _BURST_HOLD = 3, 0.15, 2.0  # a start that got 3 or more through
# before its first refusal may have spent a burst: a hold lasts burst / (15% of the pace), at
# most 2 s, so the burst is used up before the hold is judged
_SEEK_SPAN = 0.2  # seconds: the least span a refused hold measures what went through over
_SEEK_KEPT = 0.7  # share: a hold that sent less than this of its pace did not keep it
_STALLS = 2  # holds in a row that may be tried again after a stall (a busy machine)
_UNBOUND = 1.25  # share: a pace that did not bind is kept this far above what went through
_SEEK_GROWTH = 2.0  # a seek with no refusal yet doubles the pace
_SEEK_FAR, _SEEK_NEAR = 4.0, 2.0  # a seek refused (with nothing through, or some) divides by
_SEEK_CLOSE = 0.05  # share: bounds this close end the seek
_SEEK_REFUSALS, _SEEK_REFUSED_SHARE = 2.0, 0.2  # or refusals: 2% of what 10 s at the pace sends
_DRY_REQUESTS = 5.0  # requests per _DRY: the least pace a seek tries, so a spent quota shows

# -- cruise: probing above the pace (TCP BBR's probe, in steps)
_PROBE_HOLD = 2.0  # quiet seconds before the pace probes beyond the last refused one...
_PROBE_REQUESTS = 50  # ... or this many requests at the pace, if that is longer
_PROBE = 0.05  # then it steps up 5%, each step held _PROBE_STEP s (or _PROBE_STEP_REQUESTS
_PROBE_STEP = 0.25  # requests), and each that holds is followed by one twice as large, at
_PROBE_STEP_REQUESTS = 4  # most _PROBE_MAX (BBR's probe, in steps)
_PROBE_MAX = 0.5  # share: the largest step (a probe overshoots a raised limit by half at most)
_PROBE_GROWTH = 2.0  # each step that held is followed by one this many times as large
_PROBE_FAR = 1.5  # share: a refused probe this far above its start returns to its last step
_RECOVER = 0.5  # per second: the share of the way back toward the last refused pace
_NEAR = 0.995  # share: an estimate this close to the last refused pace is back at it
_BINDS = 0.5  # share of the pace: fewer answers over _WINDOW, the pace does not bind

# -- a spent quota: every run pauses
_LONG_WAIT = 2.5  # a wait this long (seconds) with nothing remaining pauses every run
_DRY = 1.0  # refusals (3 or more) and no accepted answer for this long: the quota is used up
_DRY_REFUSALS = 3  # refusals in a row, nothing accepted for _DRY_INTERVALS: spent
_DRY_INTERVALS = 3.0  # intervals (at least _ROUND, at most _DRY seconds)
_QUOTA_DRY_REFUSALS = 2  # refusals in a row with a wait, paced at a quota: spent again
_PAUSE_MAX = 30.0  # seconds: a pause nothing said the length of doubles from 1 s up to this
_RESET_ROUNDING = 0.5  # seconds: a wait in whole seconds came back this much early on average

# -- the bound on requests in flight (a concurrency cap)
_MAX_IN_FLIGHT = 64  # requests: a bound beyond any run's workers is dropped
_LIMIT_PROBE = 1.5  # quiet seconds before the in-flight bound probes one higher
_LATENCIES = 64  # answers whose latency is kept (the median, Little's law)
_EDGE_RACE = 5  # accepted per refused at one count in flight: a race at the cap's edge
_GRADIENT_SAMPLES = 16  # latencies the bound's gradient reads (their median)
_GRADIENT_RISE, _GRADIENT_EXTRA = 2.0, 0.05  # a median above 2 x the floor + 50 ms: too many
_GRADIENT_EVERY = 1.0  # seconds between two shrinks of the bound


@dataclass(frozen=True)
class Ticket:
    """One request let through by a budget; hand it back with the answer.

    Attributes:
        budget: the budget that let it through; ``sent``: when (the budget's clock).
        in_flight, epoch: the budget's requests in flight (itself included) and reaction count
            when it left (a refusal reacts once); ``outage``: the run's count of outage waits.
        early: it left less than an interval after the one before (catching up a late slot).
        cap: the concurrency cap the budget supposed when it left (``None``: none).
    """

    budget: Budget
    sent: float
    in_flight: int
    epoch: int
    outage: int = 0
    early: bool = False
    cap: int | None = None


@dataclass
class _Cut:
    """The start's cut (its first refusals read as a limit) not yet told: a limit's when the
    refusals in cruise after it fall clearly below the share that caused it (:func:`_fell`, the
    share refused after the cut against the share that caused it); else random, and undone
    (:meth:`Budget._checked`)."""

    since: float  # when it was made
    answers: int  # the answers and refusals of the window that caused it
    refused: int
    after: int = 0  # answers and refusals to requests sent after it, in cruise
    refused_after: int = 0


def _fell(n: int, refused: int, after: int, refused_after: int) -> bool:
    """Whether ``refused_after`` of ``after`` is clearly below ``refused`` of ``n`` (a
    two-proportion test)."""
    n, after = max(n, 1), max(after, 1)
    pooled = (refused + refused_after) / (n + after)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n + 1 / after))
    return refused / n - refused_after / after > _CHECK_Z * spread


class Budget:
    """The pace of one service for one connection, learned from the answers.

    Thread-safe: every method takes :attr:`cond`; none blocks (:meth:`delay`, :meth:`take`).

    Args:
        clock: monotonic seconds.

    Example:
        >>> budget = Budget()
        >>> budget.delay(), budget.answer(budget.take(), 201), budget.phase, budget.in_flight
        (0.0, None, 'start', 0)
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.cond = threading.Condition()
        self._clock = clock
        #: share of answers refused whatever the pace: faults, not a limit (0: none seen).
        self.noise = self._noise_found = 0.0
        # refusals that do not fall when the pace halves are not a limit (:meth:`_count`)
        self._sample = (clock(), 0, 0)  # its start, answers, refused
        self._suspect = (0, 0)  # answers and refusals in cruise since the last probe
        self._probe: float | None = None  # the pace before a probe at half of it
        self._probed = -math.inf
        self._retried = False  # the start was tried again this run (once: see :meth:`_retrial`)
        self._forget(clock())

    def _forget(self, now: float) -> None:
        #: the pace in requests per second (``None``: unpaced).
        self.rate: float | None = None
        #: the measured limit in requests per second (``None``: not known yet).
        self.estimate: float | None = None
        #: ``start``, ``seek`` or ``cruise``.
        self.phase = "start"
        #: the bound on requests in flight (``None``: the workers are the only bound).
        self.limit: int | None = 1
        #: requests let through and not answered yet.
        self.in_flight = 0
        #: until when every run of the budget waits (the budget's clock).
        self.paused_until = now
        self._slow_start = True
        # the start's trial of its first refusals: since, answers, refused, the unpaced share
        # (``None``: not halved yet) and the last refused request
        self._trial: tuple[float, int, int, float | None, Ticket | None] | None = None
        self._at_once: float | None = None  # when the start's refusals in a row cut the pace
        self._at_once_pace: float | None = None  # the first pace in cruise after that cut
        self._before_retrial: float | None = None  # the pace refused when the start was tried
        # again: refused in a row again, the trial found the limit there, and cruises below it
        self._most_ok = 0  # the most requests in flight that went through
        self._round_oks = 0  # accepted answers since the in-flight bound last grew
        self._fresh = False
        self._w_max = 0.0  # the estimate at the last refusal in cruise
        self._base: float | None = None  # a probe's last step that held (None: no probe)
        self._step = (now, 0.0, 0.0)  # a probe's step: since, gain, the pace it started from
        self._headroom = HEADROOM  # the pace's share of the estimate (1 for a quota window)
        self._held: float | None = None  # the pace a probe started from (it held a whole hold)
        self._burst = 0  # answers accepted before the first refusal
        self._slack = _SLACK  # of an interval: how early a late worker may catch up a slot
        self._rate_limited = False  # no concurrency cap: refused within the supposed cap
        self._cap: int | None = None  # the concurrency cap the refusals suggest
        self._within_ok = self._within_refused = 0  # answers to requests within it
        self._capped_ok = 0  # accepted answers to requests sent under a supposed cap
        self._ok_at: dict[int, int] = {}  # accepted and refused requests within it, by the
        self._refused_at: dict[int, int] = {}  # count in flight when they left
        self._next = now
        self._epoch = 0
        self._started = now
        self._last_send = now
        self._cycle_start, self._cycle_oks = now, 0
        self._ok: deque[float] = deque()  # times of accepted answers, the last _WINDOW seconds
        self._no: deque[float] = deque()  # times of refusals, the last _WINDOW seconds
        self._oks = 0  # accepted answers in all
        self._last_ok = now
        self._dry = 0  # refusals since the last accepted answer
        self._reacted_at: float | None = None
        self._reacted_at_cruise = now  # when the pace last entered cruise
        self._oks_at_reaction = 0
        self._sent_at_reaction = 0
        self._quiet_since = now  # the last refusal (or the start)
        self._grown_at = now
        self._dry_pauses = 0  # pauses in a row with no accepted answer between them
        # seek (a hold's own state is set by _seek: a seek always starts with one)
        self._stalls = 0  # holds in a row that could not keep their pace
        self._sent = 0
        self._seek_lo: float | None = None  # a pace that drew no refusal
        self._seek_hi: float | None = None  # a pace that did
        self._seek_nos = 0  # refusals in the seek
        # latency of accepted answers, and the in-flight bound's last change
        self._latency: deque[float] = deque(maxlen=_LATENCIES)
        self._latency_floor: float | None = None
        self._limit_at = now
        self._limit_hit = -math.inf  # when a request last waited for the in-flight bound
        self._hint_rate: float | None = None
        #: how many times every run of the budget was paused.
        self.counts_pauses = 0
        self._longest_reset = 0.0
        # the start's cut, to tell (``None``: none)
        self._cut: _Cut | None = None
        self._cap_cut: tuple[int, int] | None = None  # answers within the cap at its last cut

    def __repr__(self) -> str:
        rate = "unpaced" if self.rate is None else f"{self.rate:.1f}/s"
        limit = "-" if self.limit is None else str(self.limit)
        return f"Budget(phase={self.phase!r}, rate={rate}, in_flight_limit={limit})"

    def delay(self, now: float | None = None) -> float:
        """Seconds until a request may leave (0: now; ``math.inf``: when one is answered).

        Args:
            now: the budget's clock (default: read it).

        Returns:
            The wait.
        """
        with self.cond:
            now = self._clock() if now is None else now
            if self.in_flight == 0 and now - max(self._last_send, self.paused_until) > IDLE:
                if self.phase != "start" or self.limit != 1:
                    self._forget(now)
                self._retried = False  # a new run: its start may be tried again
            if now < self.paused_until:
                return self.paused_until - now
            if self.limit is not None and self.in_flight >= self.limit:
                self._limit_hit = now
                return math.inf
            if self.rate is None:
                return 0.0
            self._grow(now)
            slot = max(self._next, now - self._slack / self.rate)
            return max(0.0, slot - now)

    def take(self, now: float | None = None, *, outage: int = 0) -> Ticket:
        """Let one request leave now (after :meth:`delay` said 0).

        Args:
            now: the budget's clock (default: read it).
            outage: the run's count of outage waits (the ticket's ``outage``).

        Returns:
            The request's ticket.
        """
        with self.cond:
            now = self._clock() if now is None else now
            early = False
            if self.rate is not None:
                # a late worker catches its slot up by the slack: no two leave (1 - slack) apart
                self._next = max(self._next, now - self._slack / self.rate) + 1.0 / self.rate
                early = now - self._last_send < _EARLY / self.rate
            self.in_flight += 1
            self._sent += 1
            self._last_send = now
            return Ticket(self, now, self.in_flight, self._epoch, outage, early, self._cap)

    def answer(
        self,
        ticket: Ticket,
        status: int | None,
        *,
        retry_after: float | None = None,
        hints: LimitHints | None = None,
        now: float | None = None,
    ) -> None:
        """Learn from the answer to one request.

        Args:
            ticket: what :meth:`take` returned for it.
            status: its HTTP status (``None``: no answer came, or it was not sent).
            retry_after: seconds of its ``Retry-After``, when it had one.
            hints: what its rate limit headers said.
            now: the budget's clock (default: read it).
        """
        with self.cond:
            now = self._clock() if now is None else now
            self.in_flight = max(0, self.in_flight - 1)
            probing = self._base is not None  # a refusal then is the probe's price, not noise
            if hints is not None:  # a quota per window, or the longest wait the service said
                if hints.reset is not None:
                    self._longest_reset = max(self._longest_reset, hints.reset)
                window = hints.window or (self._longest_reset or None)
                if hints.quota and window:
                    self._hint_rate = hints.quota / window
            if status is not None:  # (no answer: nothing to learn about the limit)
                if self.phase == "cruise":
                    self._checked(now, ticket, status, retry_after)
                if status in THROTTLE_STATUSES:
                    wait = retry_after
                    if hints is not None and hints.remaining == 0:
                        wait = max(wait or 0.0, hints.reset or 0.0)
                        if wait >= _LONG_WAIT:  # the service says its quota is spent until then
                            self._pause(now, wait)
                            self.cond.notify_all()
                            return
                    if retry_after is None or retry_after > 0:  # "Retry-After: 0": go on
                        self._dry += 1
                        self._no.append(now)
                        if not self._random(now):
                            self._refused(now, ticket, wait)
                elif status < 500:  # through the limiter (a 5xx is no signal of the pace)
                    self._accepted(now, ticket)
                self._count(now, status if not probing else 200)
                self._tried(now, ticket, status in THROTTLE_STATUSES)
            self.cond.notify_all()

    def _count_since(self, start: float) -> int:
        """Accepted answers since ``start`` (at most :data:`_WINDOW` seconds ago)."""
        return len(self._ok) - bisect.bisect_left(self._ok, start)

    def _recent(self, now: float) -> int:
        """Accepted answers in the last :data:`_WINDOW` seconds (the refusals kept as long)."""
        for times in (self._ok, self._no):
            while times and times[0] < now - _WINDOW:
                times.popleft()
        return len(self._ok)

    def _accepted(self, now: float, ticket: Ticket) -> None:
        self._ok.append(now)
        self._most_ok = max(self._most_ok, ticket.in_flight)
        self._recent(now)
        self._oks += 1
        self._last_ok = now
        self._dry = 0
        if self._cap is not None and ticket.in_flight <= self._cap:
            self._within_ok += 1
        if ticket.cap is not None:
            self._capped_ok += 1
            if self._capped_ok == 1 and self._cap is not None and self.limit is not None:
                self.limit = max(self.limit, self._cap)  # a cap: the test request went through
            self._ok_at[ticket.in_flight] = self._ok_at.get(ticket.in_flight, 0) + 1
        latency = now - ticket.sent
        self._latency.append(latency)
        if self._latency_floor is None or latency < self._latency_floor:
            self._latency_floor = latency
        if self._slow_start and self.limit is not None:
            # one more in flight per round trip (a window's worth of answers), as Vector's
            # adaptive request concurrency grows (those in flight when a burst ends are refused)
            self._round_oks += 1
            if self._round_oks > self.limit:  # (the first after two answers alone)
                self._round_oks = 0
                self.limit += 1
                if self.limit >= _MAX_IN_FLIGHT:
                    self.limit, self._slow_start = None, False
        if self.phase == "seek":
            self._seek_check(now)
        self._gradient(now)

    def _refused(self, now: float, ticket: Ticket, wait: float | None) -> None:
        if self.phase == "start" and self._oks == 0 and len(self._no) < 2 and ticket.in_flight <= 1:
            return  # the first answer refused: a fault, or a limit the next answers tell
        noise = self._noise(now)
        if not noise:
            self._quiet_since = now
        if self.phase == "start" and ticket.epoch == self._epoch and self._cap is None:
            if ticket.in_flight < self._most_ok or self._trial is not None:
                return self._try(now, ticket)  # as many went through before
        crowded = self._bound_in_flight(now, ticket)
        if ticket.epoch != self._epoch and self.phase != "start":
            return  # sent before the last reaction: accounted for
        if self._probe is not None:
            return  # a probe below the pace: its sample judges it
        # refusals in a row and nothing through for a few intervals (at most _DRY): the quota
        # is used up (a fixed window). A wait alone is the refused request's, not the run's
        dry = min(_DRY, max(_ROUND, _DRY_INTERVALS / (self.rate or math.inf)))
        at_quota = self._headroom == _QUOTA_HEADROOM and self._dry >= _QUOTA_DRY_REFUSALS
        used_up = self.phase != "start" and (
            (self._dry >= _DRY_REFUSALS and now - self._last_ok >= dry) or (at_quota and bool(wait))
        )
        if used_up:
            if not self._retrial(now):
                self._pause(now, wait)
        elif crowded:  # too many in flight: the bound answers it, not the pace
            self._epoch += 1
        elif self._stalled(now - ticket.sent):
            pass  # it waited far longer than answers do: bunched up behind a stall, no evidence
        elif (
            self.phase == "cruise"
            and not noise
            and self._burst >= _BURST_LEAST
            and self._retrial(now)
        ):
            pass  # the start tried again: a limiter that let a burst through leaves room for a
            # late arrival, its refusals are none of the spacing's (:meth:`_spaced`)
        elif self._spaced(now, ticket, noise):
            pass  # the spacing's, not the pace's
        elif self.phase == "seek":
            self._seek_refused(now)
        elif self.phase == "start":
            self._try(now, ticket)
        elif not noise or self._base is not None:  # a probe ends at its first refusal
            if not self._retrial(now):
                self._react(now)

    def _retrial(self, now: float) -> bool:
        """Whether a refusal after a cut made at once tries the start again, once a run: the first
        in cruise below the pace (not a probe's), or the one that reads the quota as spent,
        within :data:`_RETRIAL_WITHIN` of the cut, when the start was refused before
        :data:`_BURST_LEAST` went through, or before a second of the first pace in cruise after
        the cut went through and no probe went above the pace since (:data:`_RETRIAL_BURST`;
        when more went through, or after a probe, once the pace fell below
        :data:`_RETRIAL_FALLEN` times that first pace) and the pace has not grown beyond
        :data:`_RETRIAL_GROWN` times that first one (a pace that grew found room: a limit raised
        since, whose refusals are its own). A limit, once cut below, refuses there no more;
        random faults do, and the trial, run again, learns them. A limit refuses in a row again:
        the pace resumes below the one refused, as the reaction to that refusal would have set
        it, without a second seek. After a larger burst the seek may have held above the limit:
        the first refusals are then the limit's, and the reaction follows them until the pace is
        below what the seek found, where a limit refuses no more."""
        first = self._at_once_pace or self.rate or 0.0  # (not in cruise yet: the pace now)
        if (
            self._at_once is None
            or self._retried
            or self._base is not None
            or now - self._at_once > _RETRIAL_WITHIN
            or (
                self._burst >= _BURST_LEAST
                and (self._burst >= _RETRIAL_BURST * first or self._step[0] > self._at_once)
                and (self.rate or 0.0) > _RETRIAL_FALLEN * first
            )
            or (self.rate or 0.0) > _RETRIAL_GROWN * first
        ):
            return False
        self._retried, refused_at = True, self.rate
        self._forget(now)
        self._before_retrial = refused_at
        return True

    def _spaced(self, now: float, ticket: Ticket, noise: bool) -> bool:
        """Whether a refusal is the spacing's, not the pace's (a limiter with no burst refuses a
        request that comes less than its interval after the one before); then it tightens.
        Refused catching up a late slot: late workers catch up less. Refused alone in cruise
        since a probe started from a pace that held a whole hold (not the probe's, nor noise):
        above that pace (back toward a step a late send may have let hold), back to it, and no
        further; at or below it, the arrivals wobbled by more than the margin, which widens."""
        held, rate, estimate = self._held, self.rate, self.estimate
        if ticket.early and self._slack > _SLACK_MIN:
            self._slack /= _SLACK_SHRINK
        elif held is None or rate is None or estimate is None or self._base is not None:
            return False
        elif self.phase != "cruise" or noise or not self._alone(now):
            return False
        elif rate > _ABOVE * held:
            self.estimate = self._w_max = held / self._headroom
            self._set_rate(held, now)
        elif _WIDEST < self._headroom < _QUOTA_HEADROOM:  # (a quota refills whatever the spacing)
            self._headroom = max(_WIDEST, self._headroom - _WIDEN)
            self._set_rate(self._headroom * estimate, now)
        else:
            return False
        self._next = max(self._next, now + 1.0 / (self.rate or 1.0))
        self._epoch += 1
        return True

    def _try(self, now: float, ticket: Ticket) -> None:
        """Start the trial of the start's first refusals (a limit, or random? :meth:`_tried`),
        the in-flight bound growing again as answers go through: measured at one request in
        flight, the pace the trial halves would be a latency's, not the service's."""
        if self._trial is None:
            first = min(self._dry, _DRY_REFUSALS) - 2  # (refusals in a row before it: evidence)
            self._trial, self._slow_start = (now, first, first, None, ticket), True

    def _tried(self, now: float, ticket: Ticket, refused: bool) -> None:
        """Count an answer in the start's trial of its first refusals; judge it when full: 3
        refusals in a row are a limit's; fewer, the pace halves, and 3 refusals within 20
        expected at the share seen are random (:attr:`noise`), none of them a limit's."""
        if self._trial is None or self.phase != "start":
            return
        since, answers, no, share, last = self._trial
        if share is not None and ticket.sent < since:
            return  # sent before the pace halved
        answers, no = answers + 1, no + refused
        last = ticket if refused else last
        self._trial = (since, answers, no, share, last)
        if share is None:
            if _TRIAL_WEIGHT * no >= _TRIAL_FLOOR + _TRIAL_SLOPE * answers:
                self._limited(now, None)
                self._at_once = now
            elif answers >= _TRIAL_ANSWERS and 2 * no > answers:
                self._limited(now, last)  # more than half refused: no fault is that common
            elif answers >= _TRIAL_ANSWERS:  # halve the pace (and below what went through): a test
                self._trial = (now, 0, 0, no / answers, last)
                span = max(now - since, _TINY)
                pace = min(_TRIAL_HALF * answers, _TRIAL_BELOW * (answers - no)) / span
                self._set_rate(pace, now)
        elif no >= _CHECK_REFUSED:
            self.noise = self._noise_found = min(_NOISE_MAX, max(share, no / answers))
            self._forget(now)
        elif answers >= min(_TRIAL_MOST, _TRIAL_EXPECTED / max(share, _TINY)):
            self._limited(now, last)  # they fell with the pace: a limit, or a cap

    def _limited(self, now: float, ticket: Ticket | None) -> None:
        """The trial's refusals are a rate limit's, or a cap's (by the last one, when given)."""
        self._trial, self.rate = None, None
        if ticket is not None and self._bound_in_flight(now, ticket):
            self._epoch += 1
            return
        self._rate_limited, self._cap, self.limit = True, None, None
        self._react(now)

    def _random(self, now: float) -> bool:
        """Whether a refusal is one of the random ones (:attr:`noise`) the pace cannot help."""
        if not self.noise:
            return False
        answers = self._recent(now) + len(self._no)
        expected = self.noise * answers
        limit = _RANDOM_FACTOR * expected + _RANDOM_Z * math.sqrt(expected) + _RANDOM_SLACK
        # most refused is a limit's, once there are answers enough to tell (a few are not)
        return len(self._no) <= (
            limit if answers < _RANDOM_FEW else min(limit, _RANDOM_MOST * answers)
        )

    def _count(self, now: float, status: int) -> None:
        """Count one answer in the current sample; judge the sample when it is full."""
        start, answers, refused = self._sample
        answers, refused = answers + 1, refused + (status in THROTTLE_STATUSES)
        span = now - start
        full = (answers >= _SAMPLE and span >= _SAMPLE_SECONDS) or (
            answers >= _SAMPLE_FEW and span >= _SAMPLE_LONG
        )
        if not (
            answers >= _TEST_ANSWERS or span >= _TEST_SECONDS if self._probe is not None else full
        ):
            self._sample = (start, answers, refused)
            return
        self._sample = (now, 0, 0)
        share = refused / answers
        if self.noise:  # follow the random share (never above the share found)
            self.noise = min(
                self._noise_found, (1 - _NOISE_WEIGHT) * self.noise + _NOISE_WEIGHT * share
            )
            off = min(_NOISE_OFF, self._noise_found / 2)  # off below 0.5%, or half a smaller one
            self.noise = 0.0 if self.noise < off else self.noise
        seen, no = self._suspect[0] + answers, self._suspect[1] + refused
        if self._probe is not None:
            self._probe, before = None, self._suspect[1] / max(self._suspect[0], 1)
            self._suspect = (0, 0)
            low, high = _SAME_LOW * before * answers, (_SAME_HIGH * before + _SAME_PLUS) * answers
            if max(1.0, low) <= refused <= high:
                if not self.noise:  # what was learned was learned from random refusals
                    self._forget(now)
                self.noise = self._noise_found = min(_NOISE_MAX, max(self.noise, before, share))
            return  # else the pace goes back toward the last refused one
        if self.phase != "cruise" or now - self._reacted_at_cruise < span:
            return
        self._suspect = (seen, no)
        suspect = no >= _SUSPECT_REFUSED and _NOISE <= no / seen <= _NOISE_MAX
        if suspect and now - self._probed >= _PROBE_EVERY:
            assert self.rate is not None
            self._probe, self._probed = self.rate, now
            self.estimate = _TEST_PACE * self.rate / self._headroom
            self._set_rate(_TEST_PACE * self.rate, now)
            self._epoch += 1

    def _noise(self, now: float) -> bool:
        """Whether a refusal in cruise is one of a few (at most 2% of the answers of late, or
        the random share learned, :attr:`noise`, if more), and alone (none in the last 4
        intervals: refusals in a row are a limit's; at 5% random faults one falls within 20
        intervals of the one before two times in three)."""
        if self.phase != "cruise" or self.rate is None:
            return False
        recent = self._recent(now)
        share = max(_NOISE, self.noise)
        return self._alone(now) and len(self._no) <= share * (recent + len(self._no))

    def _alone(self, now: float) -> bool:
        """Whether a refusal came with none in the last 4 intervals."""
        return len(self._no) < 2 or now - self._no[-2] >= _ALONE / (self.rate or 1.0)

    def _stalled(self, latency: float) -> bool:
        """Whether a request took far longer than answers usually do (a stall on the way)."""
        if len(self._latency) < _STALL_SAMPLES:
            return False
        typical = sorted(self._latency)[len(self._latency) // 2]
        return latency > max(_STALL_FACTOR * typical, typical + _STALL_EXTRA)

    def _checked(self, now: float, ticket: Ticket, status: int, retry: float | None) -> None:
        """Count an answer in cruise to a request sent after the start's cut (as the window
        counts it: 5xx are neither), and tell the cut when the refusals fell clearly (a limit's)
        or when, once _CHECK_REFUSED, they did not: random, the cut is undone (the pace before
        it, unpaced, comes back) and their share is the :attr:`noise`."""
        cut = self._cut
        refused = status in THROTTLE_STATUSES and (retry is None or retry > 0)
        counted = refused or status < 500  # (as the window counts it: 5xx are neither)
        if cut is None or not counted or ticket.sent < max(cut.since, self._reacted_at_cruise):
            return
        cut.after, cut.refused_after = cut.after + 1, cut.refused_after + refused
        if _fell(cut.answers, cut.refused, cut.after, cut.refused_after):
            self._cut = None  # a limit's: nothing to undo
        elif cut.refused_after >= _CHECK_REFUSED:
            self._cut = None
            if (cut.refused + cut.refused_after) / (cut.answers + cut.after) <= _NOISE_MAX:
                self.noise = self._noise_found = max(self.noise, cut.refused_after / cut.after)
                self._forget(now)

    def _react(self, now: float) -> None:
        """One reaction to a refusal in ``start`` or ``cruise``."""
        self._epoch += 1
        previous, oks_then = self._reacted_at, self._oks_at_reaction
        self._reacted_at, self._oks_at_reaction = now, self._oks
        sent_then, self._sent_at_reaction = self._sent_at_reaction, self._sent
        if self.phase == "start":  # the start's first refusals read as a limit: to be told
            self._cut = _Cut(now, self._recent(now) + len(self._no), len(self._no))
            # (its seek's bounds are still those _forget set: a seek follows only a start)
            self._slow_start = False
            self._burst = self._oks  # what went through before the first refusal
            if self._before_retrial is not None:  # a limit, again: below the pace it refused
                self._cruise(now, self._before_retrial)  # (as a reaction would), no second seek
                return
            first = self._oks / max(now - self._started, _ROUND)
            self._seek(now, max(first, self._hint_rate or 0.0, _DRY_REQUESTS / _DRY), empty=True)
            return
        # cruise: the limiter was empty at the last reaction and is empty now
        assert self.estimate is not None and self.rate is not None
        if self._base is not None:
            # a probe's step refused: back to the last step that held if the probe went far
            # (the limit rose), then toward the refused step, where the limit is now (toward
            # that step only: 2.3 to 2.6 s more to 90% of 15/s raised to 70/s, against 1.3 s);
            # else to where it started (a burst may hide a small excess), then slowly toward
            # that step
            origin, refused_step = self._step[2], self.estimate
            far = self._base >= _PROBE_FAR * origin
            self.estimate = self._base if far else origin
            self._w_max = refused_step if far else self._base
            self._held = self._held if self.estimate == origin else None  # (nothing held there)
            self._fresh, self._quiet_since = False, now
            self._set_rate(self._headroom * self.estimate, now, empty=True)
            return
        self._held = None  # the limit is lower than a pace that held
        span = now - previous if previous is not None else 0.0
        between = (self._oks - oks_then) / span if span > 0 else 0.0
        refused_at = min(self.rate, self.estimate)  # the pace that was refused
        paused = previous is not None and self.paused_until > previous
        if (
            span >= _REACT_LONG
            and between < _REACT_LESS * self.rate
            and not (self._fresh or paused)
        ):
            # far less went through than was sent, for long: the limit is lower
            self.estimate = max(between, _MIN_RATE)
        elif span >= _REACT_STALE or self._fresh:  # the pace that was refused is about the limit
            self.estimate = max(refused_at, _MIN_RATE)
        else:  # refusals in quick succession: one in every n sent means about 1/n too fast;
            # the limiter was empty at both: at least what went through between them passes
            n = max(self._sent - sent_then, 1)
            cut = min(_CUT_LEAST, max(1.0 - 1.0 / n, _CUT_MOST))
            measured = (self._oks - oks_then - 1) / span
            self.estimate = max(measured, cut * refused_at, _MIN_RATE)
            if span >= 1.0:  # what went through, measured: a probe goes beyond it
                refused_at = min(refused_at, measured)
        # a pace refused once (noise, or a late slot) is tried again soon, and not beyond
        self._w_max = (
            refused_at if self._fresh or span >= _REACT_STALE else min(self._w_max, refused_at)
        )
        recent = self._count_since(now - _LATE)
        refused = sum(1 for t in self._no if t >= now - _LATE)
        dense = refused >= max(_DENSE_REFUSED, _DENSE * (recent + refused))
        if dense and now - self._started >= _LATE:
            # over a limit that binds, what goes through is the limit
            self.estimate = max(min(self.estimate, recent / _LATE), _MIN_RATE)
        self._fresh = False
        self._set_rate(self._headroom * self.estimate, now, empty=True)  # the limiter is empty now

    def _seek(self, now: float, rate: float, *, empty: bool) -> None:
        """Hold a pace: refused (above the limit) or not within the hold (below it)."""
        self.phase = "seek"
        self._epoch += 1
        rate = self._set_rate(rate, now, empty=True)
        self._hold_from, self._hold_oks, self._hold_sent = now, self._oks, self._sent
        hold = max(_ROUND, _HOLD_INTERVALS / rate)
        if not empty and self._burst >= _BURST_LEAST:
            # the limiter may hold a burst like the start's: hold long enough to use it up
            hold = max(hold, min(_BURST_HOLD, self._burst / (_BURST_SHARE * rate)))
        self._seek_until = now + hold
        self._seek_from = now if empty else None  # counting from the first refusal of the hold

    def _seek_refused(self, now: float) -> None:
        """A refusal in a hold: its pace is above the limit; bisect on."""
        assert self.rate is not None
        self._seek_hi = min(self._seek_hi or math.inf, self.rate)
        self._seek_nos += 1
        if self._seek_from is not None:  # what went through since the limiter was empty
            span, n = now - self._seek_from, self._oks - self._hold_oks
            if span >= _SEEK_SPAN and n >= 2:
                self._seek_lo = max(self._seek_lo or 0.0, (n - 1) / span)
        # more refused than accepted in the hold: far over; else just over
        self._seek_next(now, empty=True, far=self._oks == self._hold_oks)

    def _seek_check(self, now: float) -> None:
        """The end of a hold without a refusal: its pace is below the limit, if it was kept."""
        if now < self._seek_until:
            return
        assert self.rate is not None
        span = now - self._hold_from
        sent = self._sent - self._hold_sent
        if sent >= _SEEK_KEPT * span * self.rate - 1:  # it kept its pace
            self._stalls = 0
            # what passed is the pace the requests actually left at (late wake-ups slow it)
            self._seek_lo = max(self._seek_lo or 0.0, min(self.rate, (sent + 1) / span))
            self._seek_next(now, empty=False)
        elif self._limit_hit < self._hold_from and self._stalls < _STALLS:
            self._stalls += 1  # a stall (the machine was busy): hold this pace again
            self._seek(now, self.rate, empty=False)
        else:  # the pace did not bind (the in-flight bound or the workers did): keep it above
            self._cruise(now, _UNBOUND * (self._oks - self._hold_oks) / span)

    def _seek_next(self, now: float, *, empty: bool, far: bool = True) -> None:
        lo, hi = self._seek_lo, self._seek_hi
        if hi is None:
            assert lo is not None
            pace = _SEEK_GROWTH * lo
        elif lo is None:  # over; not below a few a second, so a used-up quota shows
            pace = max(hi / (_SEEK_FAR if far else _SEEK_NEAR), min(hi, _DRY_REQUESTS / _DRY))
        elif hi - lo <= _SEEK_CLOSE * hi or self._seek_nos >= max(
            _SEEK_REFUSALS, _SEEK_REFUSED_SHARE * lo
        ):
            # within 5%, or its refusals are 2% of what 10 s at the pace that held sends
            self._cruise(now, lo)
            return
        else:
            pace = math.sqrt(lo * hi) if hi > 2 * lo else (lo + hi) / 2
        self._seek(now, max(pace, _MIN_RATE), empty=empty)

    def _cruise(self, now: float, estimate: float) -> None:
        self.estimate = max(estimate, _MIN_RATE)
        self._reacted_at_cruise = now
        self.phase = "cruise"
        self._fresh = True  # its first refusal is no refusal "in quick succession"
        self._epoch += 1
        self._reacted_at, self._oks_at_reaction = now, self._oks
        self._quiet_since = now
        self._set_rate(self._headroom * self.estimate, now)
        if self._at_once is not None and self._at_once_pace is None:
            self._at_once_pace = self.rate

    def _set_rate(self, rate: float, now: float, *, empty: bool = False) -> float:
        """Set the pace (at least :data:`_MIN_RATE`) and return it; ``empty``: the limiter is
        empty now, the next request leaves a whole interval from now at the soonest."""
        self.rate = max(rate, _MIN_RATE)
        self._grown_at = now
        self._base = None  # the pace is set: any probe ends
        if empty:
            self._next = max(self._next, now + 1.0 / self.rate)
        return self.rate

    def _grow(self, now: float) -> None:
        """Ramp or probe the pace (called when a request may leave)."""
        assert self.rate is not None
        dt = now - self._grown_at
        if dt <= 0:
            return
        self._grown_at = now
        if self.phase == "seek":
            self._seek_check(now)
            return
        if self.estimate is None:  # the start's trial holds its pace
            return
        quiet = now - self._quiet_since
        if quiet >= _WINDOW and self._recent(now) < _BINDS * self.rate * _WINDOW:
            return  # the pace does not bind (the in-flight bound does): no runaway
        hold = max(_PROBE_HOLD, _PROBE_REQUESTS / self.rate)
        if self.estimate < _NEAR * self._w_max and quiet < hold and self._base is None:
            # back toward the last refused pace
            self.estimate += (self._w_max - self.estimate) * min(1.0, _RECOVER * dt)
        elif self._hint_rate is None or self.estimate < self._hint_rate:
            # once quiet for a while (in seconds or requests), probe in steps, each twice
            # as large as the last that held (not beyond a quota the service says)
            since, gain, origin = self._step
            step = max(_PROBE_STEP, _PROBE_STEP_REQUESTS / self.rate)
            if self._headroom == _QUOTA_HEADROOM:  # a window's quota lasts till its end
                step = max(step, 1.0)
            if quiet >= hold and (self._base is None or now - since >= step):
                # the step held (or the first): the next one, twice as large
                if self._base is None:
                    gain, origin = _PROBE, self.estimate
                    self._held = self._headroom * origin
                else:
                    gain = min(_PROBE_MAX, _PROBE_GROWTH * gain)
                self._base, self._step = self.estimate, (now, gain, origin)
                self.estimate *= 1.0 + gain
        self.rate = self._headroom * self.estimate

    def _pause(self, now: float, seconds: float | None) -> None:
        """The quota is used up: every run waits, then the pace resumes at the rate allowed."""
        self.counts_pauses += 1
        self._cut = None  # the quota is spent: the service said so, no cut to undo
        allowed = self._oks - self._cycle_oks
        self._dry_pauses = 0 if allowed else self._dry_pauses + 1
        if seconds is None:  # nothing said how long: 1 s, doubling while nothing goes through
            seconds = min(_PAUSE_MAX, 2.0 ** max(self._dry_pauses - 1, 0))
        self.paused_until = max(self.paused_until, now + max(seconds, 0.0))
        span = self.paused_until - self._cycle_start
        # the longest wait seen is at most a window: what went through in the last one
        self._longest_reset = window = max(self._longest_reset, seconds)
        if allowed and span > 0:  # the rate this cycle was allowed, its pause included (a
            # wait in whole seconds is rounded up: the quota came back 0.5 s earlier on average),
            # or in the last window, if more: the time below the quota pulls the cycle's down
            cycle = allowed / max(span - _RESET_ROUNDING, span / 2)
            last = self._count_since(self.paused_until - window) / window
            self.estimate = self._w_max = max(cycle, last)
            self._cycle_start, self._cycle_oks = self.paused_until, self._oks
        self.estimate = max(self.estimate or 0.0, self._hint_rate or 0.0, _MIN_RATE)
        self._next = self.paused_until
        self._slow_start = False
        self._epoch += 1
        self._dry = 0
        self._last_ok = self.paused_until
        self._reacted_at, self._oks_at_reaction = now, self._oks  # the limiter is empty now
        self._quiet_since = self.paused_until
        self.phase = "cruise"
        # a quota per window refills whatever the spacing: hardly any headroom needed
        self._headroom = _QUOTA_HEADROOM
        self._set_rate(self._headroom * self.estimate, self.paused_until)

    def _bound_in_flight(self, now: float, ticket: Ticket) -> bool:
        """Bound the requests in flight below a refused request's count (a concurrency cap).

        Each cut of the supposed cap is checked: a cap lets every request within it through, so
        refusals within it that did not fall clearly since its last cut are random: no cap, and
        their share is the :attr:`noise`."""
        self._slow_start = False
        if self._rate_limited:
            return False
        if ticket.in_flight <= 1:  # refused alone: a rate limit (no cap is below one)
            return self._rate_limit()
        if self._cap is not None and ticket.in_flight <= self._cap:
            # refused within the supposed cap: a lower cap, or a rate limit (a cap lets the
            # requests within it through, a drained rate limiter does not)
            self._within_refused += 1
            if (ticket.cap is not None and self._capped_ok == 0) or (
                self._within_refused >= _CHECK_REFUSED
                and self._within_refused > 2 * self._within_ok
            ):
                # sent within it, nothing within it through yet: a rate limit, its burst used
                # up; or most of those within it refused
                return self._rate_limit()
            k = ticket.in_flight
            self._refused_at[k] = self._refused_at.get(k, 0) + 1
            self._ok_at[k] = self._ok_at.get(k, 0) // 2  # what went through long ago counts less
            if self._refused_at[k] < 2 or self._ok_at.get(k, 0) > _EDGE_RACE * self._refused_at[k]:
                return True  # this many in flight mostly goes through: a race at the edge
            ok, no = self._within_ok, self._within_refused
            before, self._cap_cut = self._cap_cut, (ok, no)
            # (too few to tell, or more refused than accepted: a limit's, checked no further)
            if before is not None and no - before[1] >= _CHECK_REFUSED and no <= ok:
                after = ok + no - sum(before)
                if not _fell(sum(before), before[1], after, no - before[1]):  # random: no cap
                    self.noise = self._noise_found = max(self.noise, (no - before[1]) / after)
                    self._rate_limited, self._cap, self.limit = True, None, None
                    return False
        # never below what the accepted rate needs at the current latency (Little's law)
        need = 1
        if self._latency and self.phase != "start":
            latency = sorted(self._latency)[len(self._latency) // 2]
            need = math.ceil(self._count_since(now - _LATE) / _LATE * latency)  # of late
        bound = max(1, need, ticket.in_flight - 1)
        if self._cap is None or bound < self._cap:
            self._cap = bound
        if self.limit is None or bound < self.limit:
            self.limit = bound
            self._limit_at = now
        if self._capped_ok == 0:
            # the first request under it goes alone: a cap lets it through, a drained rate
            # limiter refuses it
            self.limit = 1
        return ticket.in_flight > bound

    def _rate_limit(self) -> bool:
        """No concurrency cap: the in-flight bound goes (in a trial, when it ends); ``False``: the
        refusal bounds nothing (what :meth:`_bound_in_flight` returns for it)."""
        self._rate_limited, self._cap = True, None
        if self.phase != "start":
            self.limit = None
        return False

    def _gradient(self, now: float) -> None:
        """Probe the in-flight bound up when quiet; shrink it when the latency climbs."""
        if self.limit is None or self._slow_start:
            return
        since = max(self._quiet_since, self._limit_at)
        if now - since >= _LIMIT_PROBE and self._limit_hit > since:
            self.limit += 1
            self._limit_at = now
            if self.limit >= _MAX_IN_FLIGHT:
                self.limit = None
            return
        floor = self._latency_floor
        if floor is None or len(self._latency) < _GRADIENT_SAMPLES:
            return
        recent = sorted(list(self._latency)[-_GRADIENT_SAMPLES:])[_GRADIENT_SAMPLES // 2]
        rise = _GRADIENT_RISE * floor
        if recent > rise + _GRADIENT_EXTRA and now - self._limit_at >= _GRADIENT_EVERY:
            self.limit = max(1, math.floor(self.limit * rise / recent + 1))
            self._limit_at = now
