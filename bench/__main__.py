"""Run the benchmarks: ``python -m bench [--only flatten] [--repeat 3] [--json out.json]``.

Each ``bench/bench_*.py`` module prints its own table while it runs; at the end a summary
lists every figure each one returned (and ``--json`` saves them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from bench import discover


def _parser(names: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"run only this benchmark (repeatable); one of: {', '.join(names)}",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings are best of N (default 3)")
    parser.add_argument("--json", type=Path, help="also write all results to this JSON file")
    return parser


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the selected benchmarks, print the summary."""
    modules = discover()
    parser = _parser(list(modules))
    for module in modules.values():
        add = getattr(module, "add_arguments", None)
        if add is not None:
            add(parser)
    args = parser.parse_args(argv)
    selected = args.only or list(modules)
    results: dict[str, Any] = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "machine": f"{platform.system()} {platform.machine()}",
    }
    for name in selected:
        print(f"\n=== bench {name} ===", flush=True)
        t0 = time.perf_counter()
        results[name] = modules[name].run(args)
        print(f"--- {name} took {time.perf_counter() - t0:.1f} s", flush=True)
    print("\n=== summary ===")
    for name in selected:
        for key, value in results[name].items():
            print(f"{name:>12}  {key:<44} {_show(value)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
