"""``toolkit sync PATH``: incrementally sync released time into Delta tables; ``--status``
and ``--compact`` read and tidy them."""

from __future__ import annotations

import argparse
import sys

from toolkit.cli.common import client_from
from toolkit.egress import DEFAULT_LAG, compact, sync_status
from toolkit.errors import ConcurrentWriteError

__all__ = ["COMMANDS", "add_arguments", "run"]

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sync": (
        "incrementally sync released time into Delta tables at PATH",
        (
            "toolkit sync out/time --since 2026-11-01",
            "toolkit sync out/time",
            "toolkit sync out/time --status",
            "toolkit sync out/time --compact",
        ),
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit sync``.

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit sync")
        >>> add_arguments(parser)
        >>> parser.parse_args(["out/time"]).window
        '1D'
    """
    parser.add_argument("path", help="the sync folder (entries/ and codes/ Delta tables)")
    parser.add_argument(
        "--since", help="releasedAfter: needed the first time; default the watermark"
    )
    parser.add_argument("--until", help="releasedOnOrBefore; default now minus --lag")
    parser.add_argument("--window", default="1D", help="window size, a pandas offset (default 1D)")
    parser.add_argument(
        "--lag",
        default=DEFAULT_LAG,
        help=f"how far --until stays behind now (default {DEFAULT_LAG})",
    )
    parser.add_argument(
        "--batch-rows",
        type=int,
        default=100_000,
        help="entries of consecutive windows written per commit (default 100000)",
    )
    parser.add_argument("--status", action="store_true", help="print watermark, rows and versions")
    parser.add_argument("--compact", action="store_true", help="compact small files (optimize)")


def run(args: argparse.Namespace) -> int:
    """Sync (or, with ``--status`` or ``--compact``, show or compact the tables).

    Args:
        args: the parsed arguments.

    Returns:
        0 done, 1 another sync holds the folder, 2 ``--since``/``--until`` with ``--status``.

    Example:
        >>> import contextlib, io
        >>> from toolkit.cli import main
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main(["-q", "--env-file", env_file, "sync", str(tmp / "time"),
        ...                  "--since", "2026-11-01", "--until", "2026-11-21"])
        >>> code, out.getvalue().split()[0]
        (0, 'sync')
    """
    if args.status or args.compact:
        if args.since or args.until:
            print("--status and --compact take no --since/--until", file=sys.stderr)
            return 2
        if args.compact:
            metrics = compact(args.path)
            for table, m in metrics.items():
                print(
                    f"{table}: {m.get('numFilesRemoved', 0)} files compacted into"
                    f" {m.get('numFilesAdded', 0)}"
                )
        status = sync_status(args.path)
        mark = status["watermark"]
        print(f"{status['path']}: watermark {mark.isoformat() if mark is not None else 'none'}")
        for table in ("entries", "codes"):
            print(
                f"  {table}: {status[table]:,} rows, version {status[table + '_version']},"
                f" {status[table + '_files']} files"
            )
        return 0
    try:
        report = client_from(args).sync(
            args.path,
            since=args.since,
            until=args.until,
            window=args.window,
            lag=args.lag,
            batch_rows=args.batch_rows,
            progress=not args.quiet,
        )
    except ConcurrentWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report)
    return 0
