"""Peak memory of a windowed export straight to Parquet, against loading everything at once.

Issue 4 (c): the peak memory of ``client.export_to_parquet(after, before, path, window="1D")``
at 100,000 and at 1,000,000 entries should be about equal, and far below loading the
1,000,000 at once with ``client.export_entries(after, before)`` (no window).

The sandbox's store is seeded in bulk (:meth:`Store.seed_entries_bulk`, 3 codes per entry)
with entries released evenly, ``--export-memory-per-day`` (10,000) a day, so every ``1D``
window holds the same number of entries whatever the range. The sandbox then runs in its own
process, and each measurement runs in a fresh Python process of its own that reports its peak
resident set at the end (``VmHWM``; see :func:`_peak_mb` for why not ``ru_maxrss`` on Linux),
so each peak is the client's alone. Two baselines are measured the same way: a process that
only imports ``toolkit`` and ``pandas`` (the reference the figures are net of), and one that
also imports everything an export uses (``pyarrow``, the flattening, the client) and fetches
nothing.

By default the sizes are 100,000 and 300,000 entries (about a minute); ``--export-memory-full``
measures 100,000 and 1,000,000 (seeding 1,000,000 entries takes about 20 s, the whole run about
three minutes and a few GB of memory for the one-shot load and for the sandbox serving it).

Run: ``python -m bench --only export_memory [--export-memory-full]`` or
``python -m bench.bench_export_memory [--export-memory-full]``.

Only the standard library is imported at module level: a measured child process runs this
module too, and must not carry the parent's imports.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["ONE_SHOT_FACTOR", "WINDOWED_TOLERANCE", "add_arguments", "run"]

#: "About equal": the larger windowed peak (net of the baseline) over the smaller, at most.
WINDOWED_TOLERANCE = 1.25
#: "Far below": the one-shot peak (net) over the larger windowed peak (net), at least.
ONE_SHOT_FACTOR = 4.0

_START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
_ROOT = Path(__file__).resolve().parents[1]
_CHILD_TIMEOUT = 1800.0


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _peak_mb() -> float:
    """Peak resident set of this process in MB.

    ``VmHWM`` of ``/proc/self/status`` where there is one (Linux): ``ru_maxrss`` is not used
    there because Linux carries the parent's peak into a child across ``fork``/``exec``, so a
    child started by a 600 MB parent reports at least 600 MB. Elsewhere ``ru_maxrss`` (KB,
    bytes on macOS), which is then only right for children of a small parent.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# --- the measured child process ----------------------------------------------------------------


def _child(argv: list[str]) -> int:
    """Run one measurement in this (fresh) process and print its figures as one JSON line.

    Modes: ``baseline`` (import ``toolkit`` and ``pandas``), ``imports`` (also the client, the
    export modules and pyarrow), ``windowed`` (``export_to_parquet``), ``oneshot``
    (``export_entries`` without a window). Credentials come from ``TOOLKIT_*`` variables.
    """
    parser = argparse.ArgumentParser(prog="bench_export_memory --child")
    parser.add_argument("mode", choices=["baseline", "imports", "windowed", "oneshot"])
    parser.add_argument("--after")
    parser.add_argument("--before")
    parser.add_argument("--window", default="1D")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    import pandas  # noqa: F401  - part of every baseline

    import toolkit

    out: dict[str, Any] = {"mode": args.mode}
    if args.mode != "baseline":
        import pyarrow.dataset  # noqa: F401

        import toolkit._egress.fetch  # noqa: F401

        client = toolkit.Client.from_env(None, timeout=(5.0, _CHILD_TIMEOUT))
        t0 = time.perf_counter()
        if args.mode == "windowed":
            totals = client.export_to_parquet(args.after, args.before, args.out, window=args.window)
            out.update(totals)
        elif args.mode == "oneshot":
            export = client.export_entries(args.after, args.before)
            out.update(entries=len(export.entries), codes=len(export.codes), windows=1)
        out["seconds"] = round(time.perf_counter() - t0, 2)
    out["peak_mb"] = round(_peak_mb(), 1)
    print(json.dumps(out), flush=True)
    return 0


# --- the orchestrating parent ------------------------------------------------------------------


def _measure(
    mode: str, env: dict[str, str], *extra: str, module: str = "bench.bench_export_memory"
) -> dict[str, Any]:
    """Run ``module``'s ``_child`` in a fresh interpreter; return the figures it printed."""
    cmd = [sys.executable, "-m", module, "--child", mode, *extra]
    done = subprocess.run(
        cmd, cwd=_ROOT, env=env, capture_output=True, text=True, timeout=_CHILD_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} measurement failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _seed(db: Path, n: int, days: int) -> dict[str, str]:
    """A fresh customer with ``n`` entries released evenly over ``days`` days from _START."""
    from toolkit.sandbox._store import Store

    store = Store(db)
    try:
        creds = store.create_customer("bench export memory")
        store.seed_entries_bulk(
            creds["customerId"],
            n,
            released_from=_START,
            released_to=_START + dt.timedelta(days=days),
            codes_per_entry=3,
        )
    finally:
        store.close()
    return creds


def _vm_hwm_mb(pid: int | None) -> float | None:
    """Peak resident set of another process (``VmHWM`` in ``/proc``), in MB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, TypeError):
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    Args:
        parser: The ``python -m bench`` parser.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).export_memory_full
    False
    """
    group = parser.add_argument_group("export_memory")
    group.add_argument(
        "--export-memory-full",
        action="store_true",
        help="measure 100,000 and 1,000,000 entries (default 100,000 and 300,000)",
    )
    group.add_argument(
        "--export-memory-per-day",
        type=int,
        default=10_000,
        help="entries released per day, i.e. per 1D window (default 10,000)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, start the sandbox in its own process, measure each peak in a fresh process.

    Args:
        args: ``export_memory_full``, ``export_memory_per_day``.

    Returns:
        Peak RSS in MB of each measurement (absolute and net of the baseline), the ratios and
        whether both targets are met.
    """
    from bench.bench_imports import sandbox_process

    per_day = args.export_memory_per_day
    small, big = (100_000, 1_000_000) if args.export_memory_full else (100_000, 300_000)
    print(
        f"bench export_memory: windowed (1D, {per_day:,} entries a window) at {small:,} and"
        f" {big:,} entries, one-shot at {big:,}; each in a fresh process",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-export-memory-") as tmp:
        db = Path(tmp) / "export.db"
        t0 = time.perf_counter()
        creds = _seed(db, big, -(-big // per_day))
        print(
            f"  seeded {big:,} entries x 3 codes in {time.perf_counter() - t0:.1f} s"
            " (not measured)",
            flush=True,
        )
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

            rows: dict[str, dict[str, Any]] = {}
            rows["baseline"] = _measure("baseline", env)
            rows["imports"] = _measure("imports", env)
            for n in (small, big):
                out = Path(tmp) / f"parquet-{n}"
                rows[f"windowed_{n}"] = _measure(
                    "windowed",
                    env,
                    "--after",
                    after,
                    "--before",
                    until(n),
                    "--window",
                    "1D",
                    "--out",
                    str(out),
                )
                shutil.rmtree(out, ignore_errors=True)
                if rows[f"windowed_{n}"]["entries"] != n:
                    raise RuntimeError(f"windowed export wrote {rows[f'windowed_{n}']} entries")
            rows[f"oneshot_{big}"] = _measure(
                "oneshot", env, "--after", after, "--before", until(big)
            )
            if rows[f"oneshot_{big}"]["entries"] != big:
                raise RuntimeError(f"one-shot export loaded {rows[f'oneshot_{big}']} entries")
            server_peak = _vm_hwm_mb(server.pid)
    return _report(rows, small, big, server_peak)


def _report(
    rows: dict[str, dict[str, Any]], small: int, big: int, server_peak: float | None
) -> dict[str, Any]:
    base = rows["baseline"]["peak_mb"]
    labels = {
        "baseline": "baseline: import toolkit, pandas",
        "imports": "baseline + client, exports, pyarrow",
        f"windowed_{small}": f"export_to_parquet, window 1D, {small:,}",
        f"windowed_{big}": f"export_to_parquet, window 1D, {big:,}",
        f"oneshot_{big}": f"export_entries, no window, {big:,}",
    }
    print(
        f"\n  {'client process':<40} {'entries':>10} {'windows':>8} {'seconds':>8}"
        f" {'peak RSS MB':>12} {'minus baseline':>15}"
    )
    for key, label in labels.items():
        r = rows[key]
        print(
            f"  {label:<40} {r.get('entries', 0):>10,} {r.get('windows', 0):>8}"
            f" {r.get('seconds', 0.0):>8.1f} {r['peak_mb']:>12,.0f}"
            f" {r['peak_mb'] - base:>15,.0f}"
        )
    net_small = rows[f"windowed_{small}"]["peak_mb"] - base
    net_big = rows[f"windowed_{big}"]["peak_mb"] - base
    net_one = rows[f"oneshot_{big}"]["peak_mb"] - base
    flat = max(net_small, net_big) / max(min(net_small, net_big), 1.0)
    far = net_one / max(net_big, 1.0)
    flat_ok, far_ok = flat <= WINDOWED_TOLERANCE, far >= ONE_SHOT_FACTOR
    print(
        f"  windowed peaks, {big:,} vs {small:,} (net): x{net_big / max(net_small, 1.0):.2f}"
        f"  (about equal, within x{WINDOWED_TOLERANCE:g}: {'PASS' if flat_ok else 'FAIL'})"
    )
    print(
        f"  one-shot {big:,} / windowed {big:,} (net): x{far:.1f}"
        f"  (far below, at least x{ONE_SHOT_FACTOR:g}: {'PASS' if far_ok else 'FAIL'})"
    )
    if server_peak is not None:
        print(f"  (the sandbox process peaked at {server_peak:,.0f} MB; not the client's)")
    figures: dict[str, Any] = {
        "small": small,
        "big": big,
        "baseline_peak_mb": base,
        "imports_peak_mb": rows["imports"]["peak_mb"],
    }
    for key in labels:
        if key not in ("baseline", "imports"):
            figures[f"{key}_peak_mb"] = rows[key]["peak_mb"]
            figures[f"{key}_net_mb"] = round(rows[key]["peak_mb"] - base, 1)
            figures[f"{key}_seconds"] = rows[key]["seconds"]
    figures.update(
        {
            "windowed_big_vs_small": round(net_big / max(net_small, 1.0), 3),
            "oneshot_vs_windowed": round(far, 2),
            "windowed_about_equal": flat_ok,
            "oneshot_far_above": far_ok,
            "sandbox_peak_mb": None if server_peak is None else round(server_peak, 1),
        }
    )
    return figures


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_export_memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
