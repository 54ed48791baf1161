"""A fingerprint of every decision the pacer's budget makes on the simulated clock.

For a refactor of ``toolkit/_bulk/budget.py`` that must change no decision: run it before and
after, and compare. Each line is one scenario of :mod:`bench.pacing_sim` (its limits, random
faults with each ``Retry-After``, forced openings, rate limit headers, a few seeds each): its
name, its count of answers and a SHA-256 of every answer's time and status and of the budget's
pace and in-flight bound after each answer (floats as ``repr``, so exact). Equal outputs: the
same decisions on every scenario. About 8 seconds.

Usage::

    .venv/bin/python -m bench.pacing_trace > /tmp/before.txt   # on the code before
    .venv/bin/python -m bench.pacing_trace | diff /tmp/before.txt - && echo same
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from bench.pacing_sim import CAP_LATENCY, CASES, LATENCY, Run, bucket, cap, simulate, window
from toolkit._bulk.hints import LimitHints
from toolkit.sandbox._ratelimit import Admission

#: the seeds each scenario is drawn with
SEEDS = range(4)

Steps = list[tuple[Mapping[str, Any] | None, float]]


def _headers(admission: Admission) -> LimitHints:
    """What a limiter's ``X-RateLimit-*`` headers would say (as the pacing tests read them)."""
    return LimitHints(admission.limit, admission.window, admission.remaining, admission.reset)


def fingerprint(run: Run) -> str:
    """16 hex digits of the SHA-256 of a run's answers, its budget's trace and its pauses."""
    digest = hashlib.sha256(repr((run.log, run.trace, run.pauses)).encode())
    return digest.hexdigest()[:16]


def scenarios() -> Iterator[tuple[str, Steps, dict[str, Any]]]:
    """Every scenario: its name, its steps and the other keywords of ``simulate``."""
    for name, steps, latency in CASES:
        yield name, [(s, secs) for s, secs, _ in steps], {"latency": latency}
    unlimited: Steps = [(None, 10.0)]
    for rate in (0.05, 0.10, 0.20):
        for retry_after in (0.0, 1.0, None):
            faults = {"fault_rate": rate, "retry_after": retry_after}
            yield f"faults {rate:.0%} Retry-After {retry_after}", unlimited, faults
    for opening, through in ((3, 0), (6, 3)):
        forced = {"fault_rate": 0.10, "opening": opening, "through": through}
        yield f"opening {opening} after {through} through", unlimited, forced
    yield "bucket 40/s burst 4, 5% faults", [(bucket(40, 4), 10.0)], {"fault_rate": 0.05}
    yield "bucket 25/s burst 50, late arrivals", [(bucket(25, 50), 10.0)], {"jitter": 0.003}
    yield "fixed window 160 per 4 s", [(window(160, 4), 12.0)], {}
    yield "concurrency cap 3", [(cap(3), 8.0)], {"latency": CAP_LATENCY}
    seven = [(s, secs) for s, secs, _ in CASES[0][1]]
    for name, steps in (
        ("fixed window 100 per 5 s", [(window(100, 5), 30.0)]),
        ("bucket 40/s burst 4", [(bucket(40, 4), 10.0)]),
        ("sequence of seven buckets", seven),
    ):
        yield f"{name}, headers", steps, {"headers": _headers, "latency": LATENCY}


def main() -> None:
    lines = []
    for name, steps, options in scenarios():
        for seed in SEEDS:
            run = simulate(steps, seed=seed, **options)
            lines.append(f"{name}, seed {seed}: {len(run.log)} answers {fingerprint(run)}")
            print(lines[-1])
    print("all:", hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16])


if __name__ == "__main__":
    main()
