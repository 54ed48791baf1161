"""``toolkit onboard DIR``: validate and import a folder of tables, parents first."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from toolkit.cli.common import (
    OUT_HELP,
    TABLE_FILES,
    check_journal,
    client_from,
    dry_run_client,
    interrupted,
    out_path,
    print_frame,
    write_out,
)
from toolkit.client import ENDPOINTS
from toolkit.errors import Interrupted, ValidationError
from toolkit.ingress import IMPORTS, OnboardReport, load_folder, with_lines

__all__ = ["COMMANDS", "add_arguments", "run"]

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "onboard": (
        "validate and import a folder of tables, parents first",
        (
            "toolkit onboard sample_data --dry-run            # no secret, no network",
            "toolkit onboard sample_data --journal onboard.jsonl --out results.csv",
            "toolkit onboard firm/ --on-invalid skip           # import the valid rows",
        ),
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit onboard``.

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit onboard")
        >>> add_arguments(parser)
        >>> parser.parse_args(["sample_data", "--dry-run"]).dry_run
        True
    """
    parser.add_argument("dir", help=f"folder of import tables ({TABLE_FILES}), as for validate")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and count the requests per table; send nothing, need no secret",
    )
    parser.add_argument("--journal", help="journal file: a re-run skips what it already sent")
    parser.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")
    parser.add_argument(
        "--on-invalid",
        choices=["raise", "skip"],
        default="raise",
        help="raise: send nothing when any row is invalid (default); skip: send the valid rows",
    )
    parser.add_argument("--out", help=OUT_HELP.format("every row's result"))


def _dry_run_plan(report: OnboardReport) -> pd.DataFrame:
    """Per table: rows, requests that would be sent, rows held back, and where to."""
    res = report.results
    data = []
    for table, group in res.groupby("table", sort=False):
        method, _, path = ENDPOINTS[IMPORTS[str(table)][0]]
        data.append(
            {
                "table": table,
                "rows": len(group),
                "requests": len(report.payloads.get(str(table), ())),
                "held back": int((group["error"] != "dry run").sum()),
                "would send": f"{method} {path}",
            }
        )
    return pd.DataFrame(data)


def run(args: argparse.Namespace) -> int:
    """Onboard the folder (or, with ``--dry-run``, show what would be sent).

    Args:
        args: the parsed arguments.

    Returns:
        0 when every row was sent (or would be), 1 when some are invalid or failed, 130 when
        interrupted.

    Example:
        >>> import contextlib, io
        >>> from toolkit.cli import main
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main(["-q", "--env-file", env_file, "onboard", "sample_data", "--dry-run"])
        >>> code, out.getvalue().splitlines()[0]
        (0, 'dry run: nothing sent; validation ok')
    """
    out = out_path(args)
    frames = load_folder(args.dir)
    check_journal(args)
    client = dry_run_client(args) if args.dry_run else client_from(args)
    try:
        report = client.onboard(
            frames,
            journal=args.journal,
            workers=args.workers,
            dry_run=args.dry_run,
            on_invalid=args.on_invalid,
            progress=not args.quiet,
        )
    except ValidationError as exc:
        print(f"validation failed, nothing sent: {exc}", file=sys.stderr)
        failures = with_lines(exc.failure_cases, frames)
        print_frame(failures, 200)
        write_out(failures, out, "failures")
        return 1
    except Interrupted as exc:
        partial: OnboardReport | None = getattr(exc, "report", None)
        if partial is not None:
            print(partial.counts.to_string())
        return interrupted(exc, args)
    results = with_lines(report.results, frames)
    if args.dry_run:
        valid = report.validation is None or report.validation.ok
        print(f"dry run: nothing sent; validation {'ok' if valid else 'NOT ok'}")
        print_frame(_dry_run_plan(report), 50)
        if not valid:
            print_frame(results[results["error"] != "dry run"], 200)
        write_out(results, out, "results")
        return 0 if valid else 1
    print(report)
    if not report.ok:
        cols = ["table", "row", "line", "externalId", "status", "error"]
        print_frame(results[~results["ok"]][cols])
    write_out(results, out, "results")
    return 0 if report.ok else 1
