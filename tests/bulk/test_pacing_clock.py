"""The pace follows the limit, and only the limit (issue 28, item 1), on a simulated clock.

One budget meets a limit that changes under it (token bucket, fixed window, concurrency cap:
the sandbox's own limiters, on the simulated clock) and random faults that are not a limit
(429, 500 and 503 at any pace, with ``Retry-After`` 0, 1 or none). Rates and times are read on
the simulated clock only: a loaded machine cannot move them.

The simulated run (:mod:`bench.pacing_sim`) is the real runner's shape. Issue 38: the random
faults are judged on many draws too (Hypothesis chooses the seed and the fault rate), on the
worst of them, not on one seed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.pacing_sim import CAP_LATENCY, LATENCY, simulate
from bench.pacing_sim import bucket as _bucket
from bench.pacing_sim import cap as _cap
from bench.pacing_sim import window as _window
from toolkit._bulk.budget import Budget
from toolkit._bulk.hints import LimitHints
from toolkit.sandbox._ratelimit import Admission


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- a limit that moves -------------------------------------------------------------------------


# each: (name, the limiter before, its limit, the limiter after, its limit)
RAISED = [
    ("token bucket 10/s -> 40/s", _bucket(10, 1), 10.0, _bucket(40, 10), 40.0),
    ("token bucket 15/s burst 3 -> 70/s burst 2", _bucket(15, 3), 15.0, _bucket(70, 2), 70.0),
    ("token bucket 40/s -> 100/s burst 5", _bucket(40, 10), 40.0, _bucket(100, 5), 100.0),
    ("fixed window 40 per 2 s -> 120 per 2 s", _window(40, 2), 20.0, _window(120, 2), 60.0),
    ("concurrency cap 2 -> 6", _cap(2), None, _cap(6), None),
]
LOWERED = [
    ("token bucket 100/s burst 5 -> 15/s burst 3", _bucket(100, 5), 100.0, _bucket(15, 3), 15.0),
    ("token bucket 70/s burst 2 -> 25/s", _bucket(70, 2), 70.0, _bucket(25, 25), 25.0),
    ("fixed window 120 per 2 s -> 40 per 2 s", _window(120, 2), 60.0, _window(40, 2), 20.0),
    ("concurrency cap 6 -> 2", _cap(6), None, _cap(2), None),
]


# a fixed window's Retry-After is rounded up to the second, and its windows are the service's:
# a little of each window is lost waiting (the sandbox test asks two windows' quota in three)
_KEPT = {"token-bucket": 0.9, "concurrency": 0.9, "fixed-window": 0.75}


def _ids(cases: list[Any]) -> list[str]:
    return [str(c.values[0] if hasattr(c, "values") else c[0]) for c in cases]


def _cap_limit(n: int) -> float:
    """What ``n`` workers reach with no cap, at the cap's latency (the cap's limit)."""
    run = simulate([(None, 10.0)], workers=n, latency=CAP_LATENCY)
    return run.accepted(2.0, 10.0)


@pytest.mark.parametrize(("name", "before", "limit0", "after", "limit1"), RAISED, ids=_ids(RAISED))
def test_a_raised_limit_is_found_within_ten_seconds(
    name: str,
    before: dict[str, Any],
    limit0: float | None,
    after: dict[str, Any],
    limit1: float | None,
) -> None:
    latency = CAP_LATENCY if before["kind"] == "concurrency" else LATENCY
    if limit1 is None:
        limit1 = _cap_limit(after["maxInFlight"])
    run = simulate([(before, 20.0), (after, 30.0)], latency=latency)
    found = run.time_to(20.0, 50.0, limit1)
    assert found is not None and found <= 10.0, (name, found, run.accepted(40.0, 50.0))
    # and kept: at least 90% of it, at most 5% refused, over the step's last 20 s
    assert run.accepted(30.0, 50.0) >= _KEPT[after["kind"]] * limit1, run.accepted(30.0, 50.0)
    assert run.refused(30.0, 50.0) <= 0.05, run.refused(30.0, 50.0)


@settings(
    deadline=None, max_examples=12, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_probe_refused_far_above_its_start_heads_back_to_the_refused_pace(seed: int) -> None:
    # 15/s raised to 70/s (the bench sequence's fifth step): the probe climbs in growing steps,
    # its first refusal comes far above where it started, at about 90 a second. Back at its
    # last step that held (about 84% of 70), the pace then moved toward that step only, and a
    # second probe, after a 2 s hold, found the limit: 2.3 to 2.6 s after the first refusal to
    # 90% (the live bench read 10.2 s from the raise once, for a goal of 10 s). Toward the
    # refused pace, it is about 1.3 s
    run = simulate([(_bucket(15, 3), 20.0), (_bucket(70, 2), 20.0)], seed=seed)
    first = min(t for t, status in run.log if t >= 20.0 and status in (429, 503))
    found = run.time_to(20.0, 40.0, 70.0)
    assert found is not None and 20.0 + found - first <= 1.5, (seed, first - 20.0, found)
    assert run.refused(20.0, 40.0) <= 0.05


@pytest.mark.parametrize(
    ("name", "before", "limit0", "after", "limit1"), LOWERED, ids=_ids(LOWERED)
)
def test_a_lowered_limit_is_found_within_two_seconds(
    name: str,
    before: dict[str, Any],
    limit0: float | None,
    after: dict[str, Any],
    limit1: float | None,
) -> None:
    latency = CAP_LATENCY if before["kind"] == "concurrency" else LATENCY
    if limit1 is None:
        limit1 = _cap_limit(after["maxInFlight"])
    run = simulate([(before, 20.0), (after, 20.0)], latency=latency)
    settled = run.settled(20.0, 40.0, limit1)
    assert settled is not None and settled <= 2.0, (name, settled)
    assert run.accepted(25.0, 40.0) >= _KEPT[after["kind"]] * limit1, run.accepted(25.0, 40.0)
    assert run.refused(25.0, 40.0) <= 0.05, run.refused(25.0, 40.0)


def _follows(case: tuple[str, dict[str, Any], Any, dict[str, Any], Any], seed: int) -> str:
    """What a raised or lowered limit of ``case`` missed on the draw ``seed`` ("": nothing)."""
    name, before, _, after, limit = case
    latency = CAP_LATENCY if before["kind"] == "concurrency" else LATENCY
    limit = _cap_limit(after["maxInFlight"]) if limit is None else limit
    raised = any(case is c for c in RAISED)
    end = 50.0 if raised else 40.0
    run = simulate([(before, 20.0), (after, end - 20.0)], latency=latency, seed=seed)
    since = end - 20.0 if raised else 25.0  # kept over the step's last 20 s (15 s lowered)
    found = run.time_to(20.0, end, limit) if raised else run.settled(20.0, end, limit)
    kept, refused = run.accepted(since, end) / limit, run.refused(since, end)
    if found is None or found > (10.0 if raised else 2.0):
        return f"{name}: found after {found} s"
    if kept < _KEPT[after["kind"]] or refused > 0.05:
        return f"{name}: {kept:.0%} of the limit, {refused:.1%} refused"
    return ""


@settings(
    deadline=None, max_examples=24, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(RAISED + LOWERED))
def test_every_limiter_kind_raised_or_lowered_is_followed_on_any_draw(
    seed: int, case: tuple[str, dict[str, Any], Any, dict[str, Any], Any]
) -> None:
    # issue 38: each limiter kind of the sandbox, raised and lowered, on many draws of the
    # latencies (Hypothesis chooses the seed), judged as the two tests above judge one draw
    assert _follows(case, seed) == "", seed


# the limits one budget meets one after another, 15 s each (bench/bench_pacing.py's sequence):
# seven token buckets, the last the bench table's 60/s with a burst of 120
SEQUENCE = [(10, 1), (40, 10), (100, 5), (15, 3), (70, 2), (25, 25), (60, 120)]


def _sequence_missed(seed: int) -> list[tuple[int, float | None, float]]:
    """The steps of :data:`SEQUENCE` not followed on one draw: a raised limit (or the start) at
    90% within 10 s, a lowered one settled within 2 s, at most 5% refused a step."""
    step = 15.0
    run = simulate([(_bucket(rate, burst), step) for rate, burst in SEQUENCE], seed=seed)
    missed = []
    for i, (rate, _) in enumerate(SEQUENCE):
        t0, t1 = i * step, (i + 1) * step
        refused = run.refused(t0, t1)
        if i == 0 or rate > SEQUENCE[i - 1][0]:  # the start, or a raised limit: 90% in 10 s
            found = run.time_to(t0, t1, rate)
            on_time = found is not None and found <= 10.0
        else:  # a lowered limit: settled within 2 s
            found = run.settled(t0, t1, rate)
            on_time = found is not None and found <= 2.0
        if not on_time or refused > 0.05:
            missed.append((rate, found, round(refused, 3)))
    return missed


@pytest.mark.parametrize("seed", [28, 1, 2, 3, 0])
def test_one_budget_follows_a_sequence_of_limits(seed: int) -> None:
    # seed 0: the start's cut at once on the first bucket was tried again 20 s later, after the
    # pace had grown four times to the raised 40/s; the second start read the limit's refusals
    # as random (noise 0.4) and the step refused 31% of its requests (6d828b3)
    assert not _sequence_missed(seed)


@settings(
    deadline=None, max_examples=20, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_one_budget_follows_a_sequence_of_limits_on_any_draw(seed: int) -> None:
    # issue 38: the sequence judged on many draws of the latencies, not on the few above
    assert not _sequence_missed(seed), seed


@pytest.mark.parametrize("seed", [28, 1, 2, 3])
def test_refusals_below_a_pace_that_held_are_the_spacings_not_the_limits(seed: int) -> None:
    # a bucket with no burst refuses a request that arrives less than its interval after the one
    # before: requests that reach it up to 4 ms late besides (at 96% of 10/s the margin is 4 ms)
    # are refused now and then below the limit, after the pace held for long; the spacing widens
    # and the pace is kept (each of them cut the pace: 88 to 90% of the limit on seeds 1 to 3)
    run = simulate([(_bucket(10, 1), 45.0)], jitter=0.004, seed=seed)
    assert run.accepted(15.0, 45.0) >= 0.9 * 10, run.accepted(15.0, 45.0)
    assert run.refused(15.0, 45.0) <= 0.03, run.refused(15.0, 45.0)


#: The most refused of a short run (8 s, about 320 requests at 40 a second) from scratch: the
#: start learns the limit with a count of refusals, not a share (4 to 8 in a row, a few more in
#: the seek and, after a small burst, a second start's), so over 8 s they weigh 2.5 times what
#: they weigh over 20 s. Measured on the sandbox's 40/s with a burst of 4, 300 draws a setting
#: (8 and 16 workers, up to 20 ms late): 6.8% at worst over 8 s, 3.6% over 20 s; a live run
#: refused 19 of 339 (5.6%) on CI. test_pacing.py's live runs of that bucket (8 s) assert this.
SHORT_RUN_REFUSED = 0.08


@settings(
    deadline=None, max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    workers=st.sampled_from([8, 16]),  # one run, or two runs of 8 sharing the budget
    late=st.sampled_from([0.0, 0.005, 0.02]),  # seconds a request may reach the limiter late
)
def test_a_limit_from_scratch_refuses_at_most_5_percent_over_20_s_on_any_draw(
    seed: int, workers: int, late: float
) -> None:
    # issue 38's goal for a lone limit from scratch (at most 5% refused), on the sandbox's
    # bucket the live tests meet; their 8 s runs are held to SHORT_RUN_REFUSED (the first 8 s
    # of the same run: the budget does not know when a run will end)
    run = simulate([(_bucket(40, 4), 20.0)], workers=workers, jitter=late, seed=seed)
    assert run.refused(0.0, 20.0) <= 0.05, (run.refused(0.0, 20.0), seed)
    assert run.refused(0.0, 8.0) <= SHORT_RUN_REFUSED, (run.refused(0.0, 8.0), seed)


# -- faults that are not a limit ----------------------------------------------------------------

FAULT_FREE = simulate([(None, 20.0)]).accepted(0.0, 20.0)
KEEP = {0.05: 0.8, 0.10: 0.6, 0.20: 0.4}


@pytest.mark.parametrize("seed", [28, 1, 2, 3])
@pytest.mark.parametrize("retry_after", [0.0, 1.0, None], ids=["RA0", "RA1", "noRA"])
@pytest.mark.parametrize("rate", [0.05, 0.10, 0.20])
def test_random_faults_are_not_taken_for_a_limit(
    rate: float, retry_after: float | None, seed: int
) -> None:
    # several draws of the faults: where the first refusals fall decides how the start goes
    # (seed 28 alone passed before, seeds 1 to 3 fell to 1 to 68% of the fault-free rate)
    run = simulate([(None, 20.0)], fault_rate=rate, retry_after=retry_after, seed=seed)
    achieved = run.accepted(0.0, 20.0)
    assert achieved >= KEEP[rate] * FAULT_FREE, (achieved, FAULT_FREE)
    assert run.pauses == 0


@settings(
    deadline=None, max_examples=45, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    rate=st.sampled_from([0.05, 0.10, 0.20]),
    retry_after=st.sampled_from([0.0, 1.0, None]),
)
def test_random_faults_never_lower_the_pace_on_any_draw(
    seed: int, rate: float, retry_after: float | None
) -> None:
    # issue 38: the worst draw, not the average, keeps 80%, 60% and 40% of the fault-free rate
    # at 5%, 10% and 20% faults. main's budget (1a57f16) fails it: Hypothesis's draw seed=807
    # (20% faults, Retry-After 1 s or absent) reached 0.15% of the fault-free rate (its first
    # refusals read as a limit, the pace near 1 a second to the end)
    run = simulate([(None, 20.0)], fault_rate=rate, retry_after=retry_after, seed=seed)
    achieved = run.accepted(0.0, 20.0)
    assert achieved >= KEEP[rate] * FAULT_FREE, (achieved / FAULT_FREE, seed)
    assert run.pauses == 0


@pytest.mark.parametrize("opening", [4, 5])
def test_random_refusals_in_a_row_at_the_start_read_as_a_limit_are_tried_again(
    opening: int,
) -> None:
    # the first answers refused in a row (drawn once in a few hundred runs at 10 to 20% faults;
    # the live bench's seed 7 met it) are read as a limit at once; the first refusal below the
    # cut pace (or the quota read as spent) then tries the start again, once. Before, 2 of these
    # 12 draws at 20% faults stayed near 5 requests a second (or 0.2, paused) for all 20 s
    shares = [
        simulate(
            [(None, 20.0)], fault_rate=0.20, retry_after=1.0, seed=seed, opening=opening
        ).accepted(0.0, 20.0)
        / FAULT_FREE
        for seed in range(12)
    ]
    assert min(shares) >= KEEP[0.20], [round(share, 2) for share in shares]


def test_random_refusals_in_a_row_after_a_burst_are_tried_again_once_the_pace_fell() -> None:
    # 3 answers through, then 429s and 503s in a row: read as a limit at once, after a burst
    # (the live bench's seed 7 at 10% faults did the same: 1% of its twin). The pace in cruise
    # was cut on every random refusal, from 18 to 5.6 a second; a refusal 20% below the first
    # pace now tries the start again. Before (5818597), 0% of the fault-free rate over 10 s
    # on this draw (the worst of 300 at 20% faults; none other fell below 40%)
    run = simulate([(None, 10.0)], fault_rate=0.20, retry_after=1.0, seed=169)
    fault_free = simulate([(None, 10.0)]).accepted(0.0, 10.0)
    assert run.accepted(0.0, 10.0) >= KEEP[0.20] * fault_free


@pytest.mark.parametrize("seed", [14, 27])
def test_a_start_cut_after_a_small_burst_is_tried_again_at_its_first_refusal_in_cruise(
    seed: int,
) -> None:
    # 3 through, then 3 refused in a row at 10% faults (the live seed 7's opening, kept 37% of
    # its twin in the last bench): fewer went through than a second of the pace found, so no
    # burst hid a limit from the seek, and the first refusal in cruise tries the start again
    # (before the spacing reads it as its own, or a quota read as spent in the seek pauses).
    # Before (e79a475), 1% and 40% of the fault-free rate over 10 s on these draws
    run = simulate(
        [(None, 10.0)], fault_rate=0.10, retry_after=None, seed=seed, opening=3, through=3
    )
    fault_free = simulate([(None, 10.0)]).accepted(0.0, 10.0)
    assert run.accepted(0.0, 10.0) >= KEEP[0.10] * fault_free


@pytest.mark.xfail(strict=True, reason="known to fail: docs/pacing.md, 'Known to fail'")
@pytest.mark.parametrize(("opening", "seed"), [(4, 0), (5, 3)])
def test_at_10_percent_faults_a_start_read_as_a_limit_keeps_60_percent(
    opening: int, seed: int
) -> None:
    # these draws do not try the start again in time: in the first, at 5 a second, the first
    # 429 or 503 came only at 12 s and fell on a probe, the next ones were read as the
    # spacing's (0% of the fault-free rate over 20 s); the second tries it at 7 s (57%)
    run = simulate([(None, 20.0)], fault_rate=0.10, retry_after=1.0, seed=seed, opening=opening)
    assert run.accepted(0.0, 20.0) >= KEEP[0.10] * FAULT_FREE


@pytest.mark.parametrize("rate", [0.05, 0.10])
def test_the_trial_of_the_first_random_refusals_costs_little_of_the_start(rate: float) -> None:
    # the trial halves the pace it measured; measured at one request in flight, it was a
    # latency's, and a start under 5% or 10% faults reached as little as 34% of the fault-free
    # rate in its first 4 s (12 draws of the faults; 73% at least now)
    free = simulate([(None, 4.0)]).accepted(0.0, 4.0)
    shares = [
        simulate([(None, 4.0)], fault_rate=rate, seed=seed).accepted(0.0, 4.0) / free
        for seed in range(12)
    ]
    assert min(shares) >= 0.65, [round(share, 2) for share in shares]


# -- a quota that is spent still pauses the run ------------------------------------------------


def test_a_retry_after_alone_does_not_pause_the_run() -> None:
    clock = _Clock()
    budget = Budget(clock=clock)
    budget.answer(budget.take(), 201)
    budget.answer(budget.take(), 429, retry_after=9.0)
    assert budget.delay() < 1.0 and budget.counts_pauses == 0


def test_a_429_whose_headers_say_the_quota_is_spent_pauses_the_run() -> None:
    clock = _Clock()
    budget = Budget(clock=clock)
    budget.answer(budget.take(), 201)
    budget.answer(
        budget.take(),
        429,
        retry_after=4.0,
        hints=LimitHints(quota=100, window=10, remaining=0, reset=4),
    )
    assert budget.delay() == pytest.approx(4.0)
    clock.now += 4.0
    assert budget.delay() == 0.0


def _x_ratelimit(admission: Admission) -> LimitHints:
    return LimitHints(
        quota=admission.limit,
        window=admission.window,
        remaining=admission.remaining,
        reset=admission.reset,
    )


@pytest.mark.parametrize("said", [True, False], ids=["headers", "no-headers"])
def test_a_fixed_window_spent_pauses_the_run_and_is_paced_at_its_quota(said: bool) -> None:
    run = simulate([(_window(100, 5), 30.0)], headers=_x_ratelimit if said else None)
    assert run.pauses >= 1
    assert run.accepted(0.0, 30.0) >= 0.8 * 20, run.accepted(0.0, 30.0)
    assert run.refused(0.0, 30.0) <= 0.05, run.refused(0.0, 30.0)
