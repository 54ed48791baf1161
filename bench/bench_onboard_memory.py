"""Peak memory of onboarding a folder of CSV files: ``toolkit onboard DIR --dry-run``.

Issue 28 (3): reading, validating and planning a folder of 200,000 rows should peak at
most at 300 MB, and 1,000,000 rows at most at 1.3 times that. The benchmark writes a folder
of generated, valid tables (clients, initiatives, code types, codes, code ranges; the
initiatives reference the clients, the codes the code types, the ranges both), runs
``python -m toolkit onboard DIR --dry-run --out plan.csv`` in a fresh process and prints its
peak resident set (``VmHWM``, written by the child as it exits, so a large parent, as in a run of
every bench, does not count), and the peak of a process that only runs ``toolkit --help`` (the
baseline).

Run: ``python -m bench --only onboard_memory [--onboard-memory-full]`` or
``python -m bench.bench_onboard_memory [--onboard-memory-rows 200000]``;
``--onboard-memory-format xlsx`` (or ``parquet``) writes the tables as one workbook (Parquet
file) each instead of CSV, their cells as text (a workbook of 200,000 rows takes a minute).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from toolkit._ingress.readers import read_table
from toolkit._ingress.writer import write_table

__all__ = ["PEAK_TARGET_MB", "SCALE_TARGET", "add_arguments", "run", "write_folder"]

#: Peak RSS at 200,000 rows, at most (MB).
PEAK_TARGET_MB = 300.0
#: Peak at 1,000,000 rows over the peak at 200,000 rows, at most.
SCALE_TARGET = 1.3

_ROOT = Path(__file__).resolve().parents[1]
_TIMEOUT = 1800.0


def write_folder(folder: Path, rows: int) -> dict[str, int]:
    """Write the five generated tables, ``rows`` rows in all, into ``folder``.

    Args:
        folder: An existing folder.
        rows: Rows over all the tables (10% clients, 40% initiatives, 2,000 codes, the
            rest code ranges).

    Returns:
        Rows written per table.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_folder(Path(tmp), 3000)["code_ranges"]
    1467
    """
    n_clients = max(rows // 10, 1)
    n_initiatives = max(rows * 4 // 10, 1)
    n_codes = min(2000, max(rows // 100, 2))
    n_types = 3
    n_ranges = max(rows - n_clients - n_initiatives - n_codes - n_types, 0)
    counts = {
        "clients": n_clients,
        "initiatives": n_initiatives,
        "code_types": n_types,
        "codes": n_codes,
        "code_ranges": n_ranges,
    }

    def table(name: str, header: list[str], body: Any) -> None:
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(body)

    table(
        "clients",
        ["externalId", "name", "callSign", "description"],
        (
            (f"C-{i:07d}", f"Client {i}, Inc.", f"{i}", f"Generated client number {i}.")
            for i in range(n_clients)
        ),
    )
    table(
        "initiatives",
        [
            "billingType",
            "externalId",
            "name",
            "description",
            "callSign",
            "clientExternalId",
            "unitIncrements",
            "status",
        ],
        (
            (
                "billable",
                f"M-{i:08d}",
                f"Matter {i}",
                f"Generated matter {i} of client {i % n_clients}.",
                f"{i % n_clients}-{i}",
                f"C-{i % n_clients:07d}",
                "360",
                "active",
            )
            for i in range(n_initiatives)
        ),
    )
    types = ["task-code", "activity-code", "expense-code"]
    table(
        "code_types",
        ["externalId", "name", "semanticType", "customerDefaultable", "userDefaultable"],
        [
            ["task-code", "task-code", "task", "true", "true"],
            ["activity-code", "activity-code", "activity", "true", "true"],
            ["expense-code", "expense-code", "", "false", "false"],
        ],
    )
    table(
        "codes",
        ["externalId", "name", "description", "codeTypeExternalId"],
        ((f"K{i:05d}", f"K{i:05d}", f"Generated code {i}", types[i % 3]) for i in range(n_codes)),
    )
    table(
        "code_ranges",
        ["initiativeExternalId", "codeExternalId"],
        # distinct pairs: range k goes to matter k % n, with code k // n (+ an offset)
        (
            (f"M-{k % n_initiatives:08d}", f"K{(k // n_initiatives + k) % n_codes:05d}")
            for k in range(n_ranges)
        ),
    )
    return counts


def _convert(folder: Path, suffix: str) -> None:
    """Each CSV file of the folder as a file of another format (its cells as text) instead."""
    for file in sorted(folder.glob("*.csv")):
        write_table(read_table(file), file.with_suffix(suffix))
        file.unlink()


_CHILD = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def hwm():
    with open("/proc/self/status") as status:
        kb = next(line for line in status if line.startswith("VmHWM:")).split()[1]
    with open(out, "w") as f:
        f.write(kb)
atexit.register(hwm)
sys.argv[0] = "toolkit"
runpy.run_module("toolkit", run_name="__main__", alter_sys=True)
"""
"""Runs ``python -m toolkit ARGS`` and writes its own ``VmHWM`` (KB) to a file as it exits."""


def _peak_mb(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """Run ``python -m toolkit ARGS`` in a fresh process; return its peak RSS in MB, its seconds
    and its exit code.

    The peak is the child's own ``VmHWM``, written by the child as it exits: ``ru_maxrss`` of a
    child is not used because Linux carries the parent's peak into a child across
    ``fork``/``exec`` (a child of a 2 GB parent reports 2 GB). Without ``/proc`` (not Linux),
    ``ru_maxrss``, which is then only right for children of a small parent.
    """
    with tempfile.NamedTemporaryFile(suffix=".hwm") as out:
        proc = Path("/proc/self/status").exists()
        cmd = (
            [sys.executable, "-c", _CHILD, out.name, *args]
            if proc
            else [sys.executable, "-m", "toolkit", *args]
        )
        t0 = time.perf_counter()
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT, check=False
        )
        seconds = time.perf_counter() - t0
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{cmd} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        if proc:
            return int(Path(out.name).read_text()) / 1024, seconds, done.returncode
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024), seconds, done.returncode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    Args:
        parser: The ``python -m bench`` parser.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).onboard_memory_full
    False
    """
    group = parser.add_argument_group("onboard_memory")
    group.add_argument(
        "--onboard-memory-full",
        action="store_true",
        help="also measure 1,000,000 rows (default only 200,000)",
    )
    group.add_argument(
        "--onboard-memory-rows",
        type=int,
        default=200_000,
        help="rows of the smaller folder (default 200,000)",
    )
    group.add_argument(
        "--onboard-memory-format",
        choices=("csv", "xlsx", "parquet"),
        default="csv",
        help="the tables' file format (default csv)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write each folder, run the dry run in a fresh process, print and return its peak.

    Args:
        args: ``onboard_memory_full``, ``onboard_memory_rows``, ``onboard_memory_format``.

    Returns:
        Peak RSS in MB and seconds per size, the baseline's peak, and whether the targets hold.
    """
    sizes = [args.onboard_memory_rows]
    fmt = args.onboard_memory_format
    if args.onboard_memory_full:
        sizes.append(1_000_000)
    figures: dict[str, Any] = {}
    base, _, _ = _peak_mb(["--help"], _ROOT)
    figures["baseline_peak_mb"] = round(base, 1)
    print(f"bench onboard_memory: `toolkit --help` peaks at {base:,.0f} MB", flush=True)
    if fmt != "csv":
        figures["format"] = fmt
        print(f"  the tables as .{fmt} files", flush=True)
    print(f"  {'rows':>10} {'seconds':>8} {'exit':>5} {'peak RSS MB':>12}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-onboard-memory-") as tmp:
        for n in sizes:
            folder = Path(tmp) / f"firm-{n}"
            folder.mkdir()
            write_folder(folder, n)
            if fmt != "csv":
                _convert(folder, f".{fmt}")
            plan = Path(tmp) / f"plan-{n}.csv"
            cmd = ["-q", "onboard", str(folder), "--dry-run", "--out", str(plan)]
            peak, seconds, code = _peak_mb(cmd, _ROOT)
            print(f"  {n:>10,} {seconds:>8.1f} {code:>5} {peak:>12,.0f}", flush=True)
            figures[f"rows_{n}_peak_mb"] = round(peak, 1)
            figures[f"rows_{n}_seconds"] = round(seconds, 1)
            figures[f"rows_{n}_exit"] = code
            for f in folder.iterdir():
                f.unlink()
    small = figures[f"rows_{sizes[0]}_peak_mb"]
    figures["small_within_target"] = small <= PEAK_TARGET_MB
    if len(sizes) > 1:
        ratio = figures[f"rows_{sizes[1]}_peak_mb"] / small
        figures["big_over_small"] = round(ratio, 2)
        figures["big_within_target"] = ratio <= SCALE_TARGET
    print(f"  target: {PEAK_TARGET_MB:g} MB at 200,000 rows, x{SCALE_TARGET:g} at 1,000,000")
    print(f"  load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return figures


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_onboard_memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
