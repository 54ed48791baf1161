"""Pacing: does a bulk run find any limit on its own? (issue 18, parts 3 and 7)

Each case imports clients with ``client.import_clients(frame, workers=8)`` into a fresh
customer whose sandbox profile sets one limiter (``rateLimit``), and nothing else changed: no
``max_rate``, the pacer starts unpaced and finds the limit from the answers. The cases, all in
one run:

- token buckets: 10/s burst 1, 40/s burst 10, 100/s burst 5, 60/s burst 120, 25/s burst 50;
- a fixed window of 300 requests per 10 s (its limit: 30/s);
- a concurrency cap of 4 with 50 ms latency; its limit is what 4 workers reach with no cap at the
  same latency, measured first in the same run.

Each case sends about ``--pacing-seconds`` (20) seconds' worth of rows at its limit. The figures,
read from every answer the client got (its transport is wrapped to note the time and status):

- **achieved**: rows per second, first request to last answer;
- **share**: achieved over the limit (target at least 90%);
- **429s**: refused answers (429, or 503 for a cap so configured) over requests (at most 5%);
- **to 80%**: seconds from the first refused answer until the accepted answers over a window
  (2 s; the fixed window's own 10 s for the fixed window, which may legitimately come in one
  burst) first reach 80% of the limit, counted at the window's end (target at most 10 s);
- **failed**: rows not ``ok`` in the result frame (target 0).

Issue 28 adds two parts, in the same run:

- **sequence**: one ``Client`` (one customer, one import) meets a sequence of limits
  (:data:`SEQUENCE`), changed by the sandbox's profile (``admin.set_profile``) while the import
  runs, ``--pacing-step-seconds`` (30) each, as the issue measured it ("each over about 30
  seconds"; a fresh ``Client`` pays 5 or 6 refusals once to find its first limit, 3 to tell
  it from random faults and 2 in the seek, about 4% of a 15 s step at 10/s, so a shorter step
  reads that start more than the steady state the 5% is about). For each step: **to 90%**,
  seconds from the change until the accepted answers over 2 s first reach 90% of the new
  limit (target 10 s for a raised limit); **settled**, seconds from the change until a 1 s
  window starts with at most 5% refused and at least 90% of the limit accepted (target 2 s for
  a lowered limit); **429s** over the step's requests (target 5%).
- **faults**: the sandbox refuses a share of every request at random (``admin.set_faults``, 429,
  500 and 503 drawn alike, seeded) with ``Retry-After`` 0 or 1 s, or none (the profile's
  ``retryAfter: absent``), and no limit: rows accepted per second against the fault-free rate
  of the same import (same rows, same profile) run just before it, so a drift of the machine's
  pace over the minutes of the part is not read as the faults' cost (targets: 80%, 60% and
  40% of it at 5%, 10% and 20% faults), no row failed,
  ``--pacing-faults-seconds`` (20) of rows at the fault-free rate each, the rate over the whole
  import (first request to last answer). An import of a few seconds is dominated by its tail,
  where a row refused 2 or 3 times in a row waits its ``Retry-After`` each time (about 2 to 4 s
  whatever the import's length), so the rate is measured over a longer import, as a day's push is.
  Issue 38: each case runs ``--pacing-seeds`` (10) draws of the faults (the sandbox's seeds 0
  to 9), each against its own fault-free import, and the **worst** draw is judged (the median
  is printed beside it): one seed hid draws at 0.3% of the fault-free rate.
- **simulated** (issue 38): the same cases on a simulated clock (:mod:`bench.pacing_sim`, no
  sandbox, about a minute): the faults over ``--pacing-seeds`` seeds, worst and median, and the
  limits (the sequence, a raised and a lowered limit of each kind); ``--plot DIR`` writes one
  PNG per case there (the pace, the limit and the refusals over time, docs/pacing.md).

The sandbox runs in its own process (client and server do not share a GIL).

Run: ``python -m bench --only pacing`` or ``python -m bench.bench_pacing`` (the faults part
alone is 9 cases x 10 seeds x 2 imports: about an hour at the default lengths);
``--pacing-parts sequence faults`` runs only those; ``--pacing-step-seconds 8
--pacing-faults-seconds 4 --pacing-seconds 8 --pacing-seeds 2`` is a quick check;
``--pacing-parts simulated --plot DIR`` draws the simulated cases.
"""

from __future__ import annotations

import argparse
import bisect
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench import pacing_sim
from bench.bench_imports import Server, client_for, memory_tmp, sandbox_process
from toolkit import Client
from toolkit._core.http import Reply

__all__ = [
    "CASES",
    "EDGES",
    "FAULTS",
    "SEQUENCE",
    "Case",
    "add_arguments",
    "make_clients",
    "run",
    "settled",
    "time_to_share",
]

_REFUSED = (429, 503)


@dataclass(frozen=True)
class Case:
    """One limiter of the table.

    Attributes:
        name: the row's label.
        rate_limit: the profile's ``rateLimit``.
        limit: requests per second it allows (``None``: measured, see the concurrency cap).
        window: seconds the time to 80% is averaged over.
        latency_ms: the profile's latency (median), 0 for none.
    """

    name: str
    rate_limit: dict[str, Any]
    limit: float | None
    window: float = 2.0
    latency_ms: int = 0


#: The cases of issue 18, in table order.
CASES = [
    Case("token bucket 10/s burst 1", {"kind": "token-bucket", "perSecond": 10, "burst": 1}, 10.0),
    Case(
        "token bucket 40/s burst 10", {"kind": "token-bucket", "perSecond": 40, "burst": 10}, 40.0
    ),
    Case(
        "token bucket 100/s burst 5", {"kind": "token-bucket", "perSecond": 100, "burst": 5}, 100.0
    ),
    Case(
        "token bucket 60/s burst 120", {"kind": "token-bucket", "perSecond": 60, "burst": 120}, 60.0
    ),
    Case(
        "token bucket 25/s burst 50", {"kind": "token-bucket", "perSecond": 25, "burst": 50}, 25.0
    ),
    Case(
        "fixed window 300 per 10 s",
        {"kind": "fixed-window", "limit": 300, "windowSeconds": 10},
        30.0,
        window=10.0,
    ),
    Case(
        "concurrency cap 4, 50 ms latency",
        {"kind": "concurrency", "maxInFlight": 4, "status": 429},
        None,
        latency_ms=50,
    ),
]


def _bucket(rate: int, burst: int) -> Case:
    return Case(
        f"token bucket {rate}/s burst {burst}",
        {"kind": "token-bucket", "perSecond": rate, "burst": burst},
        float(rate),
    )


#: ``--pacing-edges``: the ends of the range issue 18 asks for (5 to 200 a second, burst 1 to
#: twice the rate), run after the table's cases.
EDGES = [_bucket(5, 1), _bucket(5, 10), _bucket(200, 1), _bucket(200, 400)]


#: ``sequence``: the limits one ``Client`` meets one after another (issue 28).
SEQUENCE = [
    _bucket(10, 1),
    _bucket(40, 10),
    _bucket(100, 5),
    _bucket(15, 3),
    _bucket(70, 2),
    _bucket(25, 25),
    _bucket(60, 120),
]

#: ``faults``: shares of requests refused at random.
FAULTS = {0.05: 0.8, 0.10: 0.6, 0.20: 0.4}


def make_clients(n: int, prefix: str) -> pd.DataFrame:
    """``n`` valid clients.

    >>> len(make_clients(3, "P"))
    3
    """
    return pd.DataFrame(
        {
            "externalId": [f"{prefix}-{i:05d}" for i in range(n)],
            "name": [f"Client {i}" for i in range(n)],
            "callSign": [f"{i:05d}" for i in range(n)],
            "description": "bench",
        }
    )


def time_to_share(
    accepted: list[float], start: float, limit: float, window: float, share: float = 0.8
) -> float | None:
    """Seconds from ``start`` until the accepted answers over ``window`` reach ``share``.

    Args:
        accepted: times of accepted answers, sorted.
        start: the first refused answer.
        limit: the limiter's requests per second.
        window: seconds averaged over (the count is taken at the window's end).
        share: the share of the limit to reach.

    Returns:
        The seconds (0 when the window ending at ``start`` already holds it), or ``None``.

    >>> time_to_share([0.1 * i for i in range(100)], 2.0, 10.0, 2.0)
    0.0
    >>> time_to_share([5.0 + 0.1 * i for i in range(50)], 2.0, 10.0, 2.0)
    4.5
    """
    need = share * limit * window
    for end in sorted(t for t in accepted if t >= start):
        n = bisect.bisect_right(accepted, end) - bisect.bisect_left(accepted, end - window)
        if n >= need:
            return round(max(0.0, end - start), 1)
    n = bisect.bisect_right(accepted, start) - bisect.bisect_left(accepted, start - window)
    return 0.0 if n >= need else None


def settled(
    log: list[tuple[float, int | None]], start: float, end: float, limit: float, window: float = 1.0
) -> float | None:
    """Seconds from ``start`` until a ``window`` begins with at most 5% of its answers refused
    and at least 90% of ``limit`` accepted (``None``: not before ``end``).

    >>> log = [(0.05 * i, 429) for i in range(20)] + [(1 + 0.1 * i, 201) for i in range(40)]
    >>> settled(log, 0.0, 5.0, 9.0)
    1.0
    """
    k = 0
    while start + k * 0.05 + window <= end:
        t = start + k * 0.05
        seen = [s for u, s in log if t <= u < t + window and s is not None]
        ok = sum(s < 300 for s in seen)
        if seen and (len(seen) - ok) <= 0.05 * len(seen) and ok >= 0.9 * limit * window:
            return round(t - start, 2)
        k += 1
    return None


def _noted(client: Client) -> list[tuple[float, int | None]]:
    """Wrap the client's transport so that every answer's time and status is noted."""
    log: list[tuple[float, int | None]] = []
    lock = threading.Lock()
    transport = client.connection.transport
    send = transport.send

    def noting(*args: Any, **kwargs: Any) -> Reply:
        reply = send(*args, **kwargs)
        if "/oauth/" not in str(args[1] if len(args) > 1 else kwargs.get("url", "")):
            with lock:
                log.append((time.perf_counter(), reply.status))
        return reply

    transport.send = noting  # type: ignore[method-assign]
    return log


def _one(
    server: Server, case: Case, rows: int, workers: int, rate_limit: bool = True
) -> dict[str, Any]:
    creds = server.admin.create_customer("Pacing firm")
    profile: dict[str, Any] = {}
    if rate_limit:
        profile["rateLimit"] = case.rate_limit
    if case.latency_ms:
        profile["latency"] = {"p50Ms": case.latency_ms}
    if profile:
        server.admin.set_profile(customer_id=creds["customerId"], **profile)
    client = client_for(server.url, creds)
    client.connection.auth.secret_token()  # the token exchange is not part of the timing
    log = _noted(client)
    frame = make_clients(rows, "PACE")
    start = time.perf_counter()
    result = client.import_clients(frame, workers=workers, progress=False)
    elapsed = time.perf_counter() - start
    refused = [t for t, status in log if status in _REFUSED]
    accepted = sorted(t for t, status in log if status is not None and status < 300)
    return {
        "rows": rows,
        "seconds": round(elapsed, 2),
        "achieved": round(rows / elapsed, 1),
        "requests": len(log),
        "refused": len(refused),
        "refused_share": round(len(refused) / len(log), 4) if log else 0.0,
        "failed": int((~result["ok"]).sum()),
        "first_refusal": min(refused) if refused else None,
        "accepted": accepted,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).pacing_seconds
    20.0
    """
    group = parser.add_argument_group("pacing")
    group.add_argument(
        "--pacing-seconds",
        type=float,
        default=20.0,
        help="seconds' worth of rows at each case's limit (default 20)",
    )
    group.add_argument("--pacing-workers", type=int, default=8, help="worker threads (8)")
    group.add_argument(
        "--pacing-only",
        nargs="+",
        default=None,
        metavar="WORD",
        help="run only the cases whose name holds one of these words",
    )
    group.add_argument(
        "--pacing-edges",
        action="store_true",
        help="also the ends of the range: 5/s and 200/s, burst 1 and twice the rate",
    )
    group.add_argument(
        "--pacing-parts",
        nargs="+",
        default=["simulated", "table", "sequence", "faults"],
        choices=["simulated", "table", "sequence", "faults"],
        help="parts to run (all); simulated: the simulated clock, no sandbox (about a minute)",
    )
    group.add_argument(
        "--pacing-seeds",
        type=int,
        default=10,
        help="draws of the faults per faults case (10), live and simulated",
    )
    group.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="DIR",
        help="write a PNG per simulated case there: the pace, the limit, the refusals",
    )
    group.add_argument(
        "--pacing-step-seconds",
        type=float,
        default=30.0,
        help="seconds of each limit of the sequence (30)",
    )
    group.add_argument(
        "--pacing-faults-seconds",
        type=float,
        default=20.0,
        help="seconds' worth of rows of each faults case (20)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start a sandbox process, run every case, print the table.

    Args:
        args: ``pacing_seconds``, ``pacing_workers``, ``pacing_only``, ``pacing_edges``.

    Returns:
        The figures of each case and the verdicts.
    """
    workers = args.pacing_workers
    out: dict[str, Any] = {}
    parts = getattr(args, "pacing_parts", ["table"])
    if "simulated" in parts:  # the simulated clock: no sandbox, and the plots
        out["simulated"] = pacing_sim.report(
            getattr(args, "pacing_seeds", 10), getattr(args, "plot", None)
        )
        if parts == ["simulated"]:
            return out
    cases = [
        c
        for c in CASES + (EDGES if getattr(args, "pacing_edges", False) else [])
        if not args.pacing_only or any(w in c.name for w in args.pacing_only)
    ]
    head = (
        f"{'case':34} {'limit':>7} {'achieved':>9} {'share':>6} {'429s':>6} "
        f"{'to 80%':>7} {'failed':>6}"
    )
    print(f"pacing: {workers} workers, about {args.pacing_seconds:g} s a case")
    with tempfile.TemporaryDirectory(dir=memory_tmp()) as tmp:
        with sandbox_process(Path(tmp) / "pacing.db") as server:
            # not measured: the sandbox process's first requests pay for its start
            _one(server, CASES[0], 50, workers, rate_limit=False)
            if "table" in parts:
                print(head)
            for case in cases if "table" in parts else []:
                limit = case.limit
                if limit is None:  # what 4 workers reach with no cap, at the same latency
                    cap = int(case.rate_limit["maxInFlight"])
                    free = _one(server, case, 100 * cap, cap, rate_limit=False)
                    limit = free["achieved"]
                    print(f"{'  (' + str(cap) + ' workers, no cap)':34} {'':>7} {limit:9.1f}")
                fig = _one(server, case, max(50, round(limit * args.pacing_seconds)), workers)
                first = fig.pop("first_refusal")
                accepted = fig.pop("accepted")
                to80 = (
                    time_to_share(accepted, first, limit, case.window) if first is not None else 0.0
                )
                share = fig["achieved"] / limit
                fig.update(limit=limit, share=round(share, 3), to_80=to80)
                fig["pass"] = (
                    share >= 0.9
                    and fig["refused_share"] <= 0.05
                    and not fig["failed"]
                    and to80 is not None
                    and to80 <= 10
                )
                out[case.name] = fig
                shown = "-" if to80 is None else f"{to80:.1f} s"
                print(
                    f"{case.name:34} {limit:7.1f} {fig['achieved']:9.1f} {share:6.0%} "
                    f"{fig['refused_share']:6.1%} {shown:>7} {fig['failed']:6d}"
                    f"  {'PASS' if fig['pass'] else 'FAIL'}"
                )
            if "table" in parts:
                verdict = all(f["pass"] for f in out.values() if isinstance(f, dict))
                print(
                    "targets: share >= 90%, 429s <= 5%, to 80% <= 10 s, no failed row -> "
                    + ("PASS" if verdict else "FAIL")
                )
            if "sequence" in parts:
                out["sequence"] = _sequence(server, args.pacing_step_seconds, workers)
            if "faults" in parts:
                seeds = getattr(args, "pacing_seeds", 10)
                # the fault-free twin of each draw runs at the same time on a sandbox of its own
                with sandbox_process(Path(tmp) / "free.db") as twin:
                    out["faults"] = _faults(
                        server, args.pacing_faults_seconds, workers, seeds, twin
                    )
    out["pass"] = all(f["pass"] for f in out.values() if isinstance(f, dict))
    out["load"] = [round(x, 2) for x in os.getloadavg()]
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.2f}" for x in out["load"]))
    return out


def _customer(server: Server, **profile: Any) -> tuple[Client, list[tuple[float, int | None]]]:
    creds = server.admin.create_customer("Pacing firm")
    if profile:
        server.admin.set_profile(customer_id=creds["customerId"], **profile)
    client = client_for(server.url, creds)
    client.connection.auth.secret_token()  # the token exchange is not part of the timing
    return client, _noted(client)


def _sequence(server: Server, step: float, workers: int) -> dict[str, Any]:
    """One client, one import, the limits of :data:`SEQUENCE` one after another."""
    client, log = _customer(server, rateLimit=SEQUENCE[0].rate_limit)
    customer = client.customer_id
    limits = [float(c.limit or 0) for c in SEQUENCE]
    rows = round(sum(limits) * step * 1.05)
    changes: list[float] = []
    done = threading.Event()

    def change() -> None:
        for case in SEQUENCE[1:]:
            if done.wait(step):
                return
            server.admin.set_profile(customer_id=customer, rateLimit=case.rate_limit)
            changes.append(time.perf_counter())

    print(f"\nsequence: one client, {len(SEQUENCE)} limits of {step:g} s each, {rows} rows")
    print(f"{'step':30} {'limit':>6} {'to 90%':>7} {'settled':>8} {'429s':>6} {'accepted':>9}")
    changer = threading.Thread(target=change, daemon=True)
    start = time.perf_counter()
    changes.append(start)
    changer.start()
    result = client.import_clients(make_clients(rows, "SEQ"), workers=workers, progress=False)
    done.set()
    changer.join(timeout=30)
    end = time.perf_counter()
    accepted = sorted(t for t, s in log if s is not None and s < 300)
    fig: dict[str, Any] = {"rows": rows, "failed": int((~result["ok"]).sum()), "steps": []}
    verdict = fig["failed"] == 0
    for i, case in enumerate(SEQUENCE[: len(changes)]):
        t0 = changes[i]
        t1 = changes[i + 1] if i + 1 < len(changes) else end
        seen = [s for t, s in log if t0 <= t < t1]
        refused = sum(s in _REFUSED for s in seen) / max(len(seen), 1)
        to90 = time_to_share(accepted, t0, limits[i], 2.0, 0.9)
        calm = settled(log, t0, t1, limits[i])
        rate = sum(1 for t in accepted if t0 <= t < t1) / max(t1 - t0, 1e-9)
        raised = i > 0 and limits[i] > limits[i - 1]
        ok = refused <= 0.05 and (
            (to90 is not None and to90 <= 10)
            if raised or i == 0
            else (calm is not None and calm <= 2)
        )
        verdict = verdict and ok
        fig["steps"].append(
            {
                "limit": case.name,
                "to_90": to90,
                "settled": calm,
                "refused_share": round(refused, 4),
                "accepted": round(rate, 1),
                "pass": ok,
            }
        )
        print(
            f"{case.name:30} {limits[i]:6.0f} {'-' if to90 is None else f'{to90:.1f} s':>7} "
            f"{'-' if calm is None else f'{calm:.1f} s':>8} {refused:6.1%} {rate:9.1f}"
            f"  {'PASS' if ok else 'FAIL'}"
        )
    fig["pass"] = verdict
    print(
        "targets: to 90% <= 10 s after a raise (and at the start), settled <= 2 s after a "
        f"lowering, 429s <= 5% a step, no failed row -> {'PASS' if verdict else 'FAIL'}"
    )
    return fig


def _rate(server: Server, rows: int, workers: int, prefix: str, **profile: Any) -> float:
    """Rows accepted per second by one import of ``rows`` clients into a fresh customer."""
    client, _ = _customer(server, **profile)
    start = time.perf_counter()
    result = client.import_clients(make_clients(rows, prefix), workers=workers, progress=False)
    return int(result["ok"].sum()) / (time.perf_counter() - start)


def _faults(
    server: Server, seconds: float, workers: int, seeds: int = 10, twin: Server | None = None
) -> dict[str, Any]:
    """Random faults (no limit): each case over ``seeds`` draws of the faults (the sandbox's
    seeds 0 to ``seeds - 1``); the worst draw and the median count (issue 38).

    Each draw's import runs at the same time as a fault-free import of the same rows on
    ``twin``, a second sandbox process: the two meet the same machine, whose pace on a shared
    2-core host moved by half from one import to the next (one fault-free import before each
    draw, as this bench did first, judged the machine's moods as much as the pacer). The share
    is the faulty import's accepted answers a second over the fault-free one's, both counted
    while both ran; ``whole`` is the faulty import's rate over all of it (its tail included: the
    few rows refused two or three times in a row that wait their backoff after every other row
    is done) over the fault-free import's whole rate."""
    twin = twin or server
    free = _rate(server, 2000, workers, "FREE")
    n = max(100, round(free * seconds))
    print(f"\nfaults: 429, 500 and 503 at random, no limit; {n} rows a draw ({free:.0f} rows/s)")
    print(
        f"{'faults':>7} {'Retry-After':>12} {'seeds':>6} {'worst':>6} {'median':>7} "
        f"{'target':>7} {'failed':>7} {'whole: worst':>13} {'median':>7}  each draw"
    )
    fig: dict[str, Any] = {"rows": n, "seeds": seeds, "cases": []}
    verdict = True
    for rate, target in FAULTS.items():
        for retry in (0, 1, None):
            profile = {"retryAfter": "absent"} if retry is None else {}
            shares: list[float] = []
            wholes: list[float] = []
            failed = 0
            for seed in range(seeds):
                share, whole, lost = _draw(server, twin, n, workers, rate, retry, seed, profile)
                shares.append(share)
                wholes.append(whole)
                failed += lost
            worst, median = min(shares), statistics.median(shares)
            passed = worst >= target and not failed
            verdict = verdict and passed
            shown = "absent" if retry is None else f"{retry} s"
            fig["cases"].append(
                {
                    "faults": rate,
                    "retry_after": retry,
                    "worst": round(worst, 3),
                    "median": round(median, 3),
                    "shares": [round(x, 3) for x in shares],
                    "whole": [round(x, 3) for x in wholes],
                    "failed": failed,
                    "pass": passed,
                }
            )
            print(
                f"{rate:7.0%} {shown:>12} {seeds:6d} {worst:6.0%} {median:7.0%} "
                f"{target:7.0%} {failed:7d} {min(wholes):13.0%} {statistics.median(wholes):7.0%}"
                f"  {'PASS' if passed else 'FAIL'}  " + " ".join(f"{x:.0%}" for x in shares)
            )
    fig["pass"] = verdict
    print(
        f"targets, on the worst draw: 80%, 60%, 40% of the fault-free rate -> "
        f"{'PASS' if verdict else 'FAIL'}"
    )
    return fig


def _draw(
    server: Server,
    twin: Server,
    n: int,
    workers: int,
    rate: float,
    retry: int | None,
    seed: int,
    profile: dict[str, Any],
) -> tuple[float, float, int]:
    """One draw of the faults beside its fault-free twin: (share while both ran, share of the
    whole imports, rows not accepted)."""
    runs: dict[str, tuple[Client, list[tuple[float, int | None]]]] = {
        "free": _customer(twin, **profile),
        "faulty": _customer(server, **profile),
    }
    ends: dict[str, tuple[float, float, int]] = {}
    errors: dict[str, BaseException] = {}
    lost: list[str] = []  # the rows not accepted: said, not only counted

    def one(name: str) -> None:
        client = runs[name][0]
        start = time.perf_counter()
        try:
            result = client.import_clients(make_clients(n, name), workers=workers, progress=False)
        except BaseException as exc:  # said below, with the draw, not lost with the thread
            errors[name] = exc
            return
        ends[name] = (start, time.perf_counter(), int(result["ok"].sum()))
        for row in result[~result["ok"]].head(3).itertuples():
            lost.append(
                f"{name} seed {seed}: {row.status} {row.httpStatus} {row.error!r}, "
                f"{row.attempts} attempts"
            )

    server.admin.set_faults(
        rate=rate, statuses=[429, 500, 503], retry_after_seconds=retry or 0, seed=seed
    )
    try:
        threads = [threading.Thread(target=one, args=(name,)) for name in runs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
    finally:
        server.admin.clear_faults()
    if errors or len(ends) < len(runs):
        raise RuntimeError(
            f"draw seed={seed} at {rate:.0%} faults: the imports did not end: {errors or 'timeout'}"
        )
    start, end = max(e[0] for e in ends.values()), min(e[1] for e in ends.values())
    both = {
        name: sum(1 for t, s in log if start <= t < end and s is not None and s < 300)
        for name, (_, log) in runs.items()
    }
    whole = {name: ok / (stop - begin) for name, (begin, stop, ok) in ends.items()}
    share = both["faulty"] / max(both["free"], 1)
    for line in lost:
        print(f"  not accepted: {line}")
    return share, whole["faulty"] / whole["free"], n - ends["faulty"][2]


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(_parser)
    run(_parser.parse_args())
