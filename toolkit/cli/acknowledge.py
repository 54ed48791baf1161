"""``toolkit acknowledge FILE``: acknowledge released entries listed in a file."""

from __future__ import annotations

import argparse
import sys

from toolkit.cli.common import (
    OUT_HELP,
    TABLE_FILES,
    check_journal,
    client_from,
    interrupted,
    out_path,
    print_frame,
    with_row,
    write_out,
)
from toolkit.errors import Interrupted, ValidationError
from toolkit.ingress import read_table, with_lines

__all__ = ["COMMANDS", "add_arguments", "run"]

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "acknowledge": (
        "acknowledge released entries listed in a file",
        ("toolkit acknowledge acks.csv --journal acks.jsonl --out ack-results.xlsx",),
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit acknowledge``.

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit acknowledge")
        >>> add_arguments(parser)
        >>> parser.parse_args(["acks.csv"]).file
        'acks.csv'
    """
    parser.add_argument(
        "file",
        help=f"{TABLE_FILES} with userId, entryId (or _id), outcome (succeeded/failed), "
        "externalId (succeeded rows), errors (failed rows; ;-separated)",
    )
    parser.add_argument("--journal", help="journal file: a re-run skips what it already sent")
    parser.add_argument("--out", help=OUT_HELP.format("every row's result"))


def run(args: argparse.Namespace) -> int:
    """Acknowledge the file's rows; print the counts and the rows that failed.

    Args:
        args: the parsed arguments.

    Returns:
        0 every row acknowledged, 1 some invalid or failed, 130 interrupted.

    Example:
        >>> import contextlib, io
        >>> from toolkit.cli import main
        >>> acks = tmp / "acks.csv"
        >>> _ = acks.write_text("userId,entryId,outcome,externalId\\nu1,e1,maybe,B-1\\n")
        >>> with contextlib.redirect_stdout(io.StringIO()) as out, \\
        ...         contextlib.redirect_stderr(io.StringIO()) as err:
        ...     code = main(["-q", "--env-file", env_file, "acknowledge", str(acks)])
        >>> code, err.getvalue().split(",")[0]  # the row is invalid: nothing is sent
        (1, 'validation failed')
    """
    out = out_path(args)
    frame = read_table(args.file)
    check_journal(args)
    client = client_from(args)
    try:
        res = client.acknowledge(frame, journal=args.journal, progress=not args.quiet)
    except ValidationError as exc:
        print(f"validation failed, nothing sent: {exc}", file=sys.stderr)
        failures = with_lines(exc.failure_cases, frame)
        print_frame(failures, 200)
        write_out(failures, out, "failures")
        return 1
    except Interrupted as exc:
        return interrupted(exc, args, key="entryId")
    res = with_row(res, frame)
    print(res.groupby(["outcome", "status"], observed=True).size().to_string())
    if not res["ok"].all():
        cols = ["row", "line", "userId", "entryId", "outcome", "httpStatus", "error"]
        print_frame(res[~res["ok"]][cols])
    write_out(res, out, "results")
    return 0 if res["ok"].all() else 1
