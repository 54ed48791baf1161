"""Pacing: does a bulk run find the service's pace on its own?

Issue 11 asks, all in one run:

(a) onboarding 3,000 initiatives against sandbox rate limits of 20, 50 and 100 requests per
    second (a token bucket per customer; burst one second's worth unless ``--pacing-burst``):
    throughput at least 90% of the limit, 429s at most 5% of the requests, no failed row;
(b) at 50 ms latency and no limit, 8 workers reach at least 0.8 x 8 / 0.05 s = 128 rows/s.

The sandbox runs in its own process (client and server do not share a GIL). Each limit gets a
fresh customer holding the initiatives' client; the import of the initiatives is timed with
``client.import_initiatives(frame, workers=8)`` and nothing else changed: no ``max_rate``, the
pacer starts unpaced and finds the limit. 429s are read from the sandbox's request counts.

Run: ``python -m bench --only pacing`` or ``python -m bench.bench_pacing``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from bench.bench_imports import client_for, memory_tmp, sandbox_process

__all__ = ["add_arguments", "make_initiatives", "run"]

_ROUTE = "POST /api/v1/customers/{customerId}/initiatives/import"


def make_initiatives(n: int, client: str = "PACE-C") -> pd.DataFrame:
    """``n`` valid initiatives of one client.

    >>> len(make_initiatives(3))
    3
    """
    return pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": [f"PACE-{i:05d}" for i in range(n)],
            "name": [f"Matter {i}" for i in range(n)],
            "description": "bench",
            "callSign": [f"{i:05d}" for i in range(n)],
            "clientExternalId": client,
            "unitIncrements": 360,
            "status": "active",
        }
    )


def _one(server: Any, frame: pd.DataFrame, workers: int) -> dict[str, Any]:
    creds = server.admin.create_customer("Pacing firm")
    client = client_for(server.url, creds)
    parent = pd.DataFrame({"externalId": ["PACE-C"], "name": ["Pace"], "callSign": ["P"],
                           "description": ["bench"]})
    assert client.import_clients(parent, progress=False)["ok"].all()
    server.admin.reset_stats()
    start = time.perf_counter()
    result = client.import_initiatives(frame, workers=workers, progress=False)
    elapsed = time.perf_counter() - start
    route = server.admin.stats()["routes"].get(_ROUTE, {"count": 0, "statuses": {}})
    requests_ = route["count"]
    throttled = int(route["statuses"].get("429", 0))
    return {
        "rows": len(frame),
        "seconds": round(elapsed, 2),
        "rows_per_s": round(len(frame) / elapsed, 1),
        "requests": requests_,
        "429s": throttled,
        "429_share": round(throttled / requests_, 4) if requests_ else 0.0,
        "not_ok_rows": int((~result["ok"]).sum()),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).pacing_limits
    [20, 50, 100]
    """
    group = parser.add_argument_group("pacing")
    group.add_argument("--pacing-rows", type=int, default=3000,
                       help="initiatives per measurement (default 3,000)")
    group.add_argument("--pacing-limits", type=int, nargs="+", default=[20, 50, 100],
                       help="sandbox rate limits per second (default 20 50 100)")
    group.add_argument("--pacing-burst", type=int, default=None,
                       help="bucket size (default one second's worth)")
    group.add_argument("--pacing-workers", type=int, default=8, help="worker threads (8)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start a sandbox process, onboard under each limit and at 50 ms latency, print a table.

    Args:
        args: ``pacing_rows``, ``pacing_limits``, ``pacing_burst``, ``pacing_workers``.

    Returns:
        The figures of each measurement and the verdicts.
    """
    frame = make_initiatives(args.pacing_rows)
    workers = args.pacing_workers
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=memory_tmp()) as tmp:
        with sandbox_process(Path(tmp) / "pacing.db") as server:
            print(f"pacing: {len(frame)} initiatives, {workers} workers")
            for limit in args.pacing_limits:
                server.admin.set_rate_limit(limit, burst=args.pacing_burst)
                try:
                    fig = _one(server, frame, workers)
                finally:
                    server.admin.set_rate_limit(None)
                share = fig["rows_per_s"] / limit
                fig["share_of_limit"] = round(share, 3)
                fig["pass"] = share >= 0.9 and fig["429_share"] <= 0.05 and not fig["not_ok_rows"]
                out[f"limit_{limit}"] = fig
                print(f"  limit {limit:>4}/s burst {args.pacing_burst or limit}: "
                      f"{fig['rows_per_s']:7.1f} rows/s ({share:.0%} of the limit), "
                      f"429s {fig['429s']} of {fig['requests']} ({fig['429_share']:.1%}), "
                      f"rows not ok {fig['not_ok_rows']} -> "
                      f"{'PASS' if fig['pass'] else 'FAIL'} (>= 90%, <= 5%, 0)")
            server.admin.set_faults(latency_ms=50)
            try:
                fig = _one(server, frame, workers)
            finally:
                server.admin.clear_faults()
            target = 0.8 * workers / 0.05
            fig["target_rows_per_s"] = target
            fig["pass"] = fig["rows_per_s"] >= target and not fig["not_ok_rows"]
            out["latency_50ms_no_limit"] = fig
            print(f"  50 ms latency, no limit: {fig['rows_per_s']:7.1f} rows/s "
                  f"(target >= {target:.0f}), 429s {fig['429s']}, rows not ok "
                  f"{fig['not_ok_rows']} -> {'PASS' if fig['pass'] else 'FAIL'}")
    return out


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(_parser)
    run(_parser.parse_args())
