"""Incremental sync into Delta tables: memory flat in the range, re-sync adds nothing, speed.

Issues 10 and 28: ``client.sync(path, after=..., on_or_before=..., window="1D")`` of 100,000 and of
1,000,000 entries from the sandbox: the peak memory of the larger within 1.3x of the smaller
(net of a baseline process: set by the batch, not the total); a re-sync of the same range adds
0 rows; and the sync no slower than ``client.export_to_parquet`` (what
``toolkit export --format parquet`` runs) over the same range, in the same run (entries/s; with
``--repeat N`` above 2 the larger sync and the export alternate N - 1 times and each one's best
counts, as every timing of ``python -m bench``).
The load average is printed before and after.

Seeding, the sandbox process and the fresh measuring processes are those of
:mod:`bench.bench_export_memory` (entries released evenly, ``--sync-per-day`` a day, 3 codes
each; peak resident set ``VmHWM`` of each child process).

By default the sizes are 100,000 and 300,000 entries; ``--sync-full`` measures 100,000 and
1,000,000 (several minutes on a quiet machine).

Run: ``python -m bench --only sync [--sync-full]`` or ``python -m bench.bench_sync``.
Only the standard library is imported at module level (the children run this module too).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_export_memory import _measure as measure_child

__all__ = ["MEMORY_TOLERANCE", "THROUGHPUT_FLOOR", "add_arguments", "run"]

#: The larger sync's peak (net of the baseline) over the smaller's, at most.
MEMORY_TOLERANCE = 1.3
#: Sync throughput over export-to-Parquet throughput, same range, at least.
THROUGHPUT_FLOOR = 1.0

_ROOT = Path(__file__).resolve().parents[1]
_CHILD_TIMEOUT = 3600.0


def _child(argv: list[str]) -> int:
    """One measurement in this fresh process; prints one JSON line."""
    from bench.bench_export_memory import _peak_mb

    parser = argparse.ArgumentParser(prog="bench_sync --child")
    parser.add_argument("mode", choices=["baseline", "sync", "export"])
    parser.add_argument("--after")
    parser.add_argument("--before")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    import pandas  # noqa: F401

    import toolkit

    out: dict[str, Any] = {"mode": args.mode}
    if args.mode != "baseline":
        import toolkit._egress.sync  # noqa: F401

        client = toolkit.Client.from_env(None, timeout=(5.0, _CHILD_TIMEOUT))
        t0, c0 = time.perf_counter(), time.process_time()
        if args.mode == "sync":
            report = client.sync(args.out, after=args.after, on_or_before=args.before, window="1D")
            out.update(
                entries=report.inserted + report.updated + report.unchanged,
                inserted=report.inserted,
                updated=report.updated,
                windows=report.windows,
            )
        else:
            totals = client.export_to_parquet(args.after, args.before, args.out, window="1D")
            out.update(entries=totals["entries"], windows=totals["windows"])
        out["seconds"] = round(time.perf_counter() - t0, 2)
        out["cpu_s"] = round(time.process_time() - c0, 2)  # the process's, every thread's
    out["peak_mb"] = round(_peak_mb(), 1)
    print(json.dumps(out), flush=True)
    return 0


def _measure(mode: str, env: dict[str, str], *extra: str) -> dict[str, Any]:
    """One measurement of this module's ``_child`` in a fresh interpreter."""
    return measure_child(mode, env, *extra, module="bench.bench_sync")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    Args:
        parser: The ``python -m bench`` parser.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).sync_full
    False
    """
    group = parser.add_argument_group("sync")
    group.add_argument(
        "--sync-full",
        action="store_true",
        help="measure 100,000 and 1,000,000 entries (default 100,000 and 300,000)",
    )
    group.add_argument(
        "--sync-small", type=int, default=100_000, help="the smaller size (default 100,000)"
    )
    group.add_argument(
        "--sync-per-day",
        type=int,
        default=10_000,
        help="entries released per day, i.e. per 1D window (default 10,000)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, start the sandbox in its own process, measure each run in a fresh process.

    Args:
        args: ``sync_full``, ``sync_small``, ``sync_per_day``.

    Returns:
        Peaks, seconds, throughputs, ratios and whether each target is met.
    """
    from bench.bench_export_memory import _START, _iso, _seed
    from bench.bench_imports import sandbox_process

    per_day = args.sync_per_day
    small = args.sync_small
    big = 1_000_000 if args.sync_full else 3 * small
    print(
        f"bench sync: 1D windows of {per_day:,} entries; sync at {small:,} and {big:,},"
        f" re-sync and export_to_parquet at {big:,}; each in a fresh process",
        flush=True,
    )
    rows: dict[str, dict[str, Any]] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        db = Path(tmp) / "sync.db"
        t0 = time.perf_counter()
        creds = _seed(db, big, -(-big // per_day))
        print(f"  seeded {big:,} entries x 3 codes in {time.perf_counter() - t0:.1f} s", flush=True)
        with sandbox_process(db) as server:
            env = {
                **os.environ,
                "TOOLKIT_CUSTOMER_ID": creds["customerId"],
                "TOOLKIT_CLIENT_ID": creds["clientId"],
                "TOOLKIT_CLIENT_SECRET": creds["clientSecret"],
                "TOOLKIT_AUTH_URL": server.url,
                "TOOLKIT_TIME_URL": server.url,
                "TOOLKIT_AUDIENCE": creds["audience"],
            }
            after = _iso(_START)

            def until(n: int) -> str:
                return _iso(_START + dt.timedelta(days=n / per_day))

            def run(mode: str, n: int, out: Path, name: str) -> dict[str, Any]:
                """One measurement of ``mode`` over the first ``n`` entries into ``out``."""
                row = _measure(mode, env, "--after", after, "--before", until(n), "--out", str(out))
                print(f"  {name}: {row}", flush=True)
                return row

            rows["baseline"] = _measure("baseline", env)
            for n in (small, big):
                out = Path(tmp) / f"sync-{n}"
                rows[f"sync_{n}"] = run("sync", n, out, f"sync {n:,}")
                if n == big:
                    rows["resync"] = run("sync", n, out, f"re-sync {n:,}")
                shutil.rmtree(out, ignore_errors=True)
            # the throughput: the larger sync and the export alternate, each one's best counts
            syncs, exports = [rows[f"sync_{big}"]], []
            for k in range(max(1, getattr(args, "repeat", 1) - 1)):
                if k:
                    out = Path(tmp) / f"sync-again-{k}"
                    syncs.append(run("sync", big, out, f"sync {big:,} again"))
                    shutil.rmtree(out, ignore_errors=True)
                out = Path(tmp) / f"export-{k}"
                exports.append(run("export", big, out, f"export_to_parquet {big:,}"))
                shutil.rmtree(out, ignore_errors=True)
            rows["fastest_sync"] = min(syncs, key=lambda row: row["seconds"])
            rows["export"] = min(exports, key=lambda row: row["seconds"])
    print(f"  load average (1, 5, 15 min): before {load}, after {os.getloadavg()}", flush=True)
    return _report(rows, small, big)


def _report(rows: dict[str, dict[str, Any]], small: int, big: int) -> dict[str, Any]:
    base = rows["baseline"]["peak_mb"]
    net_small = rows[f"sync_{small}"]["peak_mb"] - base
    net_big = rows[f"sync_{big}"]["peak_mb"] - base
    memory_ratio = net_big / max(net_small, 1.0)
    resync = rows["resync"]["inserted"] + rows["resync"]["updated"]
    fastest = rows.get("fastest_sync", rows[f"sync_{big}"])
    sync_rate = fastest["entries"] / fastest["seconds"]
    export_rate = rows["export"]["entries"] / rows["export"]["seconds"]
    speed = sync_rate / export_rate
    ok_mem, ok_resync, ok_speed = (
        memory_ratio <= MEMORY_TOLERANCE,
        resync == 0,
        (speed >= THROUGHPUT_FLOOR),
    )
    print(f"\n  baseline peak {base:.0f} MB")
    print(
        f"  sync peaks net of baseline: {small:,} {net_small:.0f} MB, {big:,} {net_big:.0f} MB"
        f" -> x{memory_ratio:.2f} (at most x{MEMORY_TOLERANCE}: "
        f"{'PASS' if ok_mem else 'FAIL'})"
    )
    print(f"  re-sync of {big:,}: {resync} rows written ({'PASS' if ok_resync else 'FAIL'})")
    print(
        f"  throughput at {big:,}: sync {sync_rate:,.0f}/s, export_to_parquet"
        f" {export_rate:,.0f}/s -> x{speed:.2f} (at least x{THROUGHPUT_FLOOR}: "
        f"{'PASS' if ok_speed else 'FAIL'})"
    )
    return {
        "small": small,
        "big": big,
        "baseline_peak_mb": base,
        "sync_small_net_mb": round(net_small, 1),
        "sync_big_net_mb": round(net_big, 1),
        "memory_ratio": round(memory_ratio, 3),
        "resync_rows_written": resync,
        "sync_rows_per_s": round(sync_rate),
        "export_rows_per_s": round(export_rate),
        "throughput_ratio": round(speed, 3),
        "sync_big_seconds": rows[f"sync_{big}"]["seconds"],
        "resync_seconds": rows["resync"]["seconds"],
        "memory_ok": ok_mem,
        "resync_ok": ok_resync,
        "throughput_ok": ok_speed,
    }


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_sync",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
