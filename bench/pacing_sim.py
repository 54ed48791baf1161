"""A bulk run on a simulated clock: one budget, the sandbox's limiters, random faults.

The simulated runner is the real one's shape: ``workers`` workers, each taking a row, waiting for
the budget, sending; a refused row's retry is delayed (by its ``Retry-After``) without holding
its worker, which takes the next row (there are always more rows). Rates and times are read on
the simulated clock only: a loaded machine cannot move them. ``tests/bulk/test_pacing_clock.py``
asserts on it and ``bench/bench_pacing.py --plot`` draws it (docs/pacing.md).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit._bulk.budget import Budget
from toolkit._bulk.hints import LimitHints
from toolkit.sandbox._ratelimit import Admission, Limiter
from toolkit.sandbox._ratelimit import limiter as sandbox_limiter

__all__ = [
    "CAP_LATENCY",
    "CASES",
    "LATENCY",
    "Run",
    "bucket",
    "cap",
    "plot",
    "report",
    "simulate",
    "window",
]

LATENCY = 0.005  # seconds, ±50%: 8 workers reach about 1,600 answers a second unlimited


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _limiter(setting: Mapping[str, Any] | None, clock: _Clock) -> Limiter | None:
    return None if setting is None else sandbox_limiter(setting, clock)


@dataclass
class Run:
    """What a simulated run saw: every answer's time and status."""

    log: list[tuple[float, int]] = field(default_factory=list)
    changes: list[float] = field(default_factory=list)
    pauses: int = 0
    budget: Budget | None = None
    #: the budget's pace and in-flight bound after each answer: (time, pace or None, bound)
    trace: list[tuple[float, float | None, int | None]] = field(default_factory=list)

    def accepted(self, start: float, end: float) -> float:
        """Accepted answers per second in [start, end)."""
        n = sum(1 for t, s in self.log if start <= t < end and s < 300)
        return n / (end - start)

    def refused(self, start: float, end: float) -> float:
        """Share of the answers in [start, end) that were 429 or 503."""
        seen = [s for t, s in self.log if start <= t < end]
        return sum(s in (429, 503) for s in seen) / max(len(seen), 1)

    def time_to(
        self, start: float, end: float, limit: float, share: float = 0.9, window: float = 2.0
    ) -> float | None:
        """Seconds from ``start`` to the end of the first ``window`` (ending after ``start``)
        whose accepted answers reach ``share`` of ``limit``."""
        oks = [t for t, s in self.log if s < 300 and start - window <= t < end]
        for i, t in enumerate(oks):
            if t < start:
                continue
            n = i + 1 - next(j for j, u in enumerate(oks) if u > t - window)
            if n >= share * limit * window:
                return t - start
        return None

    def settled(self, start: float, end: float, limit: float, window: float = 1.0) -> float | None:
        """Seconds from ``start`` until a ``window`` starts with at most 5% refused and at
        least 90% of ``limit`` accepted (the pace is right from then on)."""
        t = start
        while t + window <= end:
            if self.refused(t, t + window) <= 0.05 and self.accepted(t, t + window) >= 0.9 * limit:
                return t - start
            t += 0.05
        return None


def simulate(
    steps: list[tuple[Mapping[str, Any] | None, float]],
    *,
    workers: int = 8,
    latency: float = LATENCY,
    jitter: float = 0.0,
    fault_rate: float = 0.0,
    retry_after: float | None = 1.0,
    fault_statuses: tuple[int, ...] = (429, 500, 503),
    headers: Callable[[Admission], LimitHints] | None = None,
    seed: int = 28,
    opening: int = 0,
    through: int = 0,
) -> Run:
    """Run one budget through ``steps`` (a limiter setting and its seconds, one after another).

    Args:
        steps: the service's ``rateLimit`` (``None``: none) and how long it holds.
        workers: worker threads.
        latency: seconds a request takes (±50%).
        jitter: seconds a request may reach the limiter late besides (at random, up to it).
        fault_rate: share of requests answered a random fault before any limit is consulted.
        retry_after: the faults' ``Retry-After`` (429 and 503; ``None``: none).
        fault_statuses: statuses the faults draw from.
        headers: the rate limit headers the limiter's state makes (none by default).
        seed: the random source's seed.
        opening: the first requests answered a fault (a 503), whatever the draw: the unlucky
            start the faults draw rarely (the live bench's draws met it).
        through: requests let through before the opening's faults (the live bench's seed 7 at
            10% faults opened with 3 through, then 429s and 503s in a row).

    Returns:
        The run.
    """
    rnd = random.Random(seed)
    clock = _Clock()
    budget = Budget(clock=clock)
    run = Run()
    order = itertools.count()
    events: list[tuple[float, int, int, str]] = [
        (0.0, next(order), w, "try") for w in range(workers)
    ]
    pending: dict[int, tuple[Any, int, float | None, LimitHints | None, Any]] = {}
    waiting: set[int] = set()
    ends = list(itertools.accumulate(seconds for _, seconds in steps))
    step, limiter = 0, _limiter(steps[0][0], clock)
    run.changes.append(0.0)
    pauses = 0
    while events:
        now, _, worker, kind = heapq.heappop(events)
        if now >= ends[-1]:
            break
        clock.now = now
        if now >= ends[step]:
            step += 1
            limiter = _limiter(steps[step][0], clock)  # the sandbox makes a fresh one too
            run.changes.append(ends[step - 1])
        if kind == "answer":
            ticket, status, wait, hints, release = pending.pop(worker)
            if release is not None:
                release()
            budget.answer(ticket, status, retry_after=wait, hints=hints)
            run.log.append((now, status))
            run.trace.append((now, budget.rate, budget.limit))
            for other in waiting:
                heapq.heappush(events, (now, next(order), other, "try"))
            waiting.clear()
        delay = budget.delay()
        if budget.counts_pauses > pauses:
            pauses = budget.counts_pauses
        if delay == math.inf:
            waiting.add(worker)
            continue
        if delay > 0:
            heapq.heappush(
                events, (now + min(delay, 0.05) + rnd.random() * 0.0005, next(order), worker, "try")
            )
            continue
        ticket = budget.take()
        took = latency * (0.5 + rnd.random())
        arrives = now + took / 2 + rnd.random() * jitter
        status, wait, hints, release = 201, None, None, None
        if through > 0:
            through -= 1
        elif opening > 0:
            opening -= 1
            status, wait = 503, retry_after
        elif fault_rate and rnd.random() < fault_rate:
            status = rnd.choice(fault_statuses)
            wait = retry_after if status in (429, 503) else None
        elif limiter is not None:
            clock.now = arrives
            admission = limiter.admit()
            clock.now = now
            release = admission.release
            if not admission.allowed:
                status, wait = admission.status, float(admission.retry_after or 1)
            if headers is not None:
                hints = headers(admission)
        pending[worker] = (ticket, status, wait, hints, release)
        heapq.heappush(events, (now + took, next(order), worker, "answer"))
    run.pauses = pauses
    run.budget = budget
    return run


def bucket(rate: float, burst: int) -> dict[str, Any]:
    return {"kind": "token-bucket", "perSecond": rate, "burst": burst}


def window(limit: int, seconds: int) -> dict[str, Any]:
    return {"kind": "fixed-window", "limit": limit, "windowSeconds": seconds}


def cap(n: int) -> dict[str, Any]:
    return {"kind": "concurrency", "maxInFlight": n, "status": 429}


CAP_LATENCY = 0.02  # a cap of n lets about n / 20 ms through


#: The limit cases drawn and measured: (name, steps of (setting, seconds, limit per second),
#: latency). A cap's limit is what its count of workers reaches with no cap (``None`` here).
CASES: list[tuple[str, list[tuple[dict[str, Any], float, float | None]], float]] = [
    (
        "sequence of seven buckets",
        [
            (bucket(10, 1), 15.0, 10.0),
            (bucket(40, 10), 15.0, 40.0),
            (bucket(100, 5), 15.0, 100.0),
            (bucket(15, 3), 15.0, 15.0),
            (bucket(70, 2), 15.0, 70.0),
            (bucket(25, 25), 15.0, 25.0),
            (bucket(60, 120), 15.0, 60.0),
        ],
        LATENCY,
    ),
    (
        "fixed window 40 -> 120 per 2 s",
        [(window(40, 2), 20.0, 20.0), (window(120, 2), 30.0, 60.0)],
        LATENCY,
    ),
    (
        "fixed window 120 -> 40 per 2 s",
        [(window(120, 2), 20.0, 60.0), (window(40, 2), 20.0, 20.0)],
        LATENCY,
    ),
    ("concurrency cap 2 -> 6", [(cap(2), 20.0, None), (cap(6), 30.0, None)], CAP_LATENCY),
    ("concurrency cap 6 -> 2", [(cap(6), 20.0, None), (cap(2), 20.0, None)], CAP_LATENCY),
]

FAULTS = {0.05: 0.8, 0.10: 0.6, 0.20: 0.4}  # fault share -> the goal's share of fault-free


def _cap_limit(n: int) -> float:
    """What ``n`` workers reach with no cap at the cap's latency."""
    return simulate([(None, 10.0)], workers=n, latency=CAP_LATENCY).accepted(2.0, 10.0)


def plot(
    run: Run, limits: list[tuple[float, float]], path: Path, title: str, label: str = "limit"
) -> None:
    """Draw one run: the pace and the accepted rate against the limit, the refusals below.

    Args:
        run: the simulated run.
        limits: (start, limit per second) of each step.
        path: the PNG to write.
        title: the figure's title.
        label: what the dashed line is (the limit, or the fault-free rate).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    end = max(t for t, _ in run.log) if run.log else 1.0
    edges = [i * 0.5 for i in range(int(end / 0.5) + 1)]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(8, 4.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    paced = [(t, r) for t, r, _ in run.trace if r is not None]
    if paced:
        top.plot(*zip(*paced, strict=True), lw=1, color="tab:blue", label="pace")
    top.plot(
        edges[:-1],
        [run.accepted(a, a + 0.5) for a in edges[:-1]],
        lw=1,
        color="tab:green",
        label="accepted / s (0.5 s)",
    )
    xs = [
        x for (t, _), (u, _) in zip(limits, [*limits[1:], (end, 0.0)], strict=True) for x in (t, u)
    ]
    ys = [y for _, lim in limits for y in (lim, lim)]
    top.plot(xs, ys, lw=2, color="black", ls="--", label=label)
    top.set_ylim(0, max(ys) * 2.0)
    top.set_ylabel("requests / s")
    top.legend(loc="upper right", fontsize=8)
    top.set_title(title, fontsize=10)
    bottom.bar(
        edges[:-1],
        [100 * run.refused(a, a + 0.5) for a in edges[:-1]],
        width=0.5,
        align="edge",
        color="tab:red",
    )
    bottom.axhline(5, color="black", lw=0.5, ls=":")
    bottom.set_ylabel("refused %")
    bottom.set_xlabel("seconds (simulated clock)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def report(seeds: int = 10, plot_dir: Path | None = None) -> dict[str, Any]:
    """The simulated cases: faults over ``seeds`` seeds (worst and median), the limit cases.

    Args:
        seeds: seeds per faults case.
        plot_dir: where to write one PNG per case (``None``: no plots).

    Returns:
        The figures.
    """
    free = simulate([(None, 20.0)]).accepted(0.0, 20.0)
    out: dict[str, Any] = {"fault_free": round(free, 1), "faults": [], "limits": []}
    print(f"\nsimulated: random faults, {seeds} seeds a case, fault-free {free:.0f} answers/s")
    print(f"{'faults':>7} {'Retry-After':>12} {'worst':>6} {'seed':>5} {'median':>7} {'goal':>5}")
    for rate, goal in FAULTS.items():
        for retry in (0.0, 1.0, None):
            runs = [
                (simulate([(None, 20.0)], fault_rate=rate, retry_after=retry, seed=s), s)
                for s in range(seeds)
            ]
            shares = sorted((r.accepted(0.0, 20.0) / free, s, r) for r, s in runs)
            worst, seed, run = shares[0]
            median = statistics.median(x for x, _, _ in shares)
            shown = "absent" if retry is None else f"{retry:g} s"
            print(
                f"{rate:7.0%} {shown:>12} {worst:6.0%} {seed:5d} {median:7.0%} {goal:5.0%}"
                f"  {'PASS' if worst >= goal else 'FAIL'}"
            )
            out["faults"].append(
                {
                    "faults": rate,
                    "retry_after": retry,
                    "worst": round(worst, 3),
                    "seed": seed,
                    "median": round(median, 3),
                    "pass": worst >= goal,
                }
            )
            if plot_dir is not None and retry == 1.0:
                name = f"faults-{round(rate * 100)}pct-worst.png"
                title = f"{rate:.0%} random faults, Retry-After 1 s: the worst of {seeds} seeds"
                plot(run, [(0.0, free)], plot_dir / name, title, "fault-free rate")
    print(f"{'limits':34} {'step':>5} {'limit':>7} {'accepted':>9} {'share':>6} {'refused':>8}")
    for name, steps, latency in CASES:
        limits = [
            lim if lim is not None else _cap_limit(int(s["maxInFlight"])) for s, _, lim in steps
        ]
        run = simulate([(s, secs) for s, secs, _ in steps], latency=latency)
        start = 0.0
        marks = []
        for (_, secs, _), limit in zip(steps, limits, strict=True):
            acc, ref = run.accepted(start + 5.0, start + secs), run.refused(start, start + secs)
            print(f"{name:34} {start:5.0f} {limit:7.1f} {acc:9.1f} {acc / limit:6.0%} {ref:8.1%}")
            out["limits"].append(
                {
                    "case": name,
                    "from": start,
                    "limit": round(limit, 1),
                    "accepted": round(acc, 1),
                    "refused": round(ref, 3),
                }
            )
            marks.append((start, limit))
            start += secs
        if plot_dir is not None:
            slug = name.replace(" ", "-").replace(">", "").replace("--", "-")
            plot(run, marks, plot_dir / f"{slug}.png", name)
    return out
