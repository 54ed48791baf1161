"""Exit codes of ``toolkit export --out DIR`` (Parquet) and ``toolkit sync`` on a loaded machine.

Issue 39 finding 8: ``toolkit export --out DIR`` sometimes aborted as it exited
(``terminate called without an active exception``, exit 134) after the export was fully
written: an Arrow thread-pool thread released the data given to ``ds.write_dataset`` during
interpreter shutdown. This benchmark runs each command ``--exit-runs`` times, one after the
other, each in a fresh process against one sandbox (the package's sample firm: 300 entries
released over about a month, so a Parquet export writes one window a day), while
``--exit-load`` CPU-bound processes (``while True: pass``, each under ``timeout``) run beside
it, and counts the exit codes. Every run must exit 0; the stderr of the first failures is
printed.

Run: ``python -m bench --only exit --exit-runs 300`` or
``python -m bench.bench_exit --exit-runs 300 [--exit-commands export] [--exit-budget-s 570]``.
The default (30 runs of each) is a quick look; the proof is 300 of each (a run takes about
3 s on a quiet machine, far more on a loaded one: ``--exit-budget-s`` bounds each command's
time and the count says how many ran). A progress line is printed every 25 runs; a TERM
signal (``timeout``) still ends the load processes. Only the standard library and the sandbox
are used here; the toolkit runs in the children.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]

_ROOT = Path(__file__).resolve().parents[1]
#: Seconds one command may take before it counts as hung (a run takes about a second).
_RUN_TIMEOUT_S = 120.0
#: Seconds the CPU-bound load processes live at most (``timeout`` ends them; we end them first).
_LOAD_TIMEOUT_S = 3600
#: The sample firm's entries are released in the month before the sandbox starts.
_SPAN_DAYS = 40
#: Failures whose stderr is printed.
_SHOWN = 3
#: Runs between two progress lines.
_EVERY = 25


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--exit-runs`` (per command), ``--exit-load`` (CPU-bound processes beside them) and
    ``--exit-commands`` (``export``, ``sync``)."""
    parser.add_argument("--exit-runs", type=int, default=30, help="runs of each command")
    parser.add_argument(
        "--exit-load", type=int, default=2, help="CPU-bound processes beside (default 2)"
    )
    parser.add_argument(
        "--exit-commands", nargs="+", default=["export", "sync"], choices=["export", "sync"]
    )
    parser.add_argument(
        "--exit-budget-s",
        type=float,
        default=None,
        help="stop a command's runs after this many seconds (default: no limit)",
    )


def _argv(command: str, out: Path, after: str, before: str) -> list[str]:
    toolkit = [sys.executable, "-m", "toolkit"]
    if command == "export":
        return [
            *toolkit,
            "export",
            "-q",
            "--after",
            after,
            "--on-or-before",
            before,
            "--out",
            str(out),
        ]
    return [*toolkit, "sync", "-q", "--after", after, "--on-or-before", before, str(out)]


def _load(n: int) -> list[subprocess.Popen[bytes]]:
    spin = [
        "timeout",
        str(_LOAD_TIMEOUT_S),
        sys.executable,
        "-c",
        "while True: pass",
    ]
    return [subprocess.Popen(spin) for _ in range(n)]


def _runs(
    command: str, n: int, env_file: Path, after: str, before: str, budget: float | None
) -> dict[str, Any]:
    codes: collections.Counter[int] = collections.Counter()
    shown: list[str] = []
    work = Path(tempfile.mkdtemp(prefix=f"bench-exit-{command}-"))
    t0 = time.perf_counter()
    try:
        for i in range(n):
            if budget is not None and time.perf_counter() - t0 > budget:
                break
            if i and i % _EVERY == 0:
                print(f"  {command}: {i} runs, exit codes {dict(codes)}", flush=True)
            out = work / f"out-{i}"
            try:
                done = subprocess.run(
                    _argv(command, out, after, before),
                    cwd=env_file.parent,
                    capture_output=True,
                    timeout=_RUN_TIMEOUT_S,
                    check=False,
                )
                code = done.returncode
                stderr = done.stderr.decode(errors="replace")
            except subprocess.TimeoutExpired:
                code, stderr = -999, "timed out"
            codes[code] += 1
            if code != 0 and len(shown) < _SHOWN:
                shown.append(f"run {i}: exit {code}\n{stderr[-1500:]}")
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for text in shown:
        print(text)
    return {
        "runs": sum(codes.values()),
        "exit 0": codes.get(0, 0),
        "aborts (134 or -6)": codes.get(134, 0) + codes.get(-6, 0),
        "other": {str(k): v for k, v in codes.items() if k not in (0, 134, -6)},
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run each command ``--exit-runs`` times beside ``--exit-load`` busy processes."""
    sys.path.insert(0, str(_ROOT))
    import datetime as dt

    import toolkit
    from toolkit.sandbox import running

    now = dt.datetime.now(dt.UTC)
    after = (now - dt.timedelta(days=_SPAN_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
    before = (now + dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    folder = Path(tempfile.mkdtemp(prefix="bench-exit-"))
    results: dict[str, Any] = {}
    load: list[subprocess.Popen[bytes]] = []
    signal.signal(signal.SIGTERM, _stop)  # a timeout's TERM still ends the load and cleans up
    try:
        with running(seed=Path(toolkit.__file__).parent / "sample_data") as sandbox:
            env_file = sandbox.write_env(folder / ".env")
            load = _load(args.exit_load)
            print(
                f"load average before: {os.getloadavg()}; {len(load)} busy processes beside",
                flush=True,
            )
            for command in args.exit_commands:
                budget = args.exit_budget_s
                results[command] = _runs(command, args.exit_runs, env_file, after, before, budget)
                print(f"{command}: {results[command]}; load average {os.getloadavg()}", flush=True)
    finally:
        for proc in load:
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="bench_exit", description=__doc__)
    add_arguments(parser)
    print(run(parser.parse_args()))
