"""``toolkit sync PATH``: sync released time into Delta tables; ``--status``, ``--compact``."""

from __future__ import annotations

import argparse
import sys

from toolkit._cli.common import FLAGS, client_from
from toolkit._egress import Window, compact, sync_options, sync_status
from toolkit.errors import ConcurrentWriteError


def run(args: argparse.Namespace) -> int:
    """Sync (or, with ``--status`` or ``--compact``, show or compact the tables).

    Returns:
        0 done, 1 another sync holds the folder, 2 ``--after``/``--on-or-before`` with
        ``--status``.

    >>> import contextlib, io
    >>> from toolkit._cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["-q", "--env-file", env_file, "sync", str(tmp / "time"),
    ...                  "--after", "2026-11-01", "--on-or-before", "2026-11-21"])
    >>> code, out.getvalue().split()[0]
    (0, 'sync')
    """
    if args.status or args.compact:
        if args.after or args.on_or_before:
            print("--status and --compact take no --after/--on-or-before", file=sys.stderr)
            return 2
        if args.compact:
            for table, m in compact(args.path).items():
                removed, added = m.get("numFilesRemoved", 0), m.get("numFilesAdded", 0)
                print(f"{table}: {removed} files compacted into {added}")
        status = sync_status(args.path)
        mark = status["watermark"]
        print(f"{status['path']}: watermark {mark.isoformat() if mark is not None else 'none'}")
        for table in ("entries", "codes"):
            version, files = status[f"{table}_version"], status[f"{table}_files"]
            print(f"  {table}: {status[table]:,} rows, version {version}, {files} files")
        return 0
    span = Window.of(args.after, args.on_or_before, FLAGS)
    sync_options(args.window, args.lag)  # before the token is asked for
    same = {name: getattr(args, name) for name in ("window", "lag", "batch_rows")}
    try:
        report = client_from(args).sync(args.path, **vars(span), **same, progress=not args.quiet)
    except ConcurrentWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report)
    return 0
