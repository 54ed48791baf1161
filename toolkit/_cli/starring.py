"""``toolkit star`` / ``unstar`` (from arguments or a file) and ``toolkit starred``."""

from __future__ import annotations

import argparse
import sys

from toolkit._cli.common import client_from, out_path, print_frame, with_row, write_out
from toolkit._ingress import match_headers, read_table
from toolkit.errors import ConfigError

#: the columns of a ``--file``, matched to its headers ignoring case, spaces, ``_`` and ``-``
_PAIR = ["timekeeperExternalId", "initiativeExternalId"]


def run(args: argparse.Namespace) -> int:
    """Star or unstar (``args.command``) and print the counts, or list the starred ones.

    Returns:
        0 every row done, 1 some failed (``starred``: the timekeeper is unknown or ambiguous).

    >>> import contextlib, io
    >>> from toolkit._cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["-q", "--env-file", env_file, "starred", "TK-101"])
    >>> code, out.getvalue().split()[:2]
    (0, ['initiativeExternalId', 'page'])
    """
    out = out_path(args)
    if args.command == "starred":
        res = client_from(args).starred(args.timekeeper, limit=args.limit)
        write_out(res, out, "starred initiatives")
        failed = res[res["httpStatus"] != 200]
        if len(failed):  # the timekeeper could not be resolved: one row, no initiative
            print(
                f"{args.timekeeper}: {failed['httpStatus'].iloc[0]} {failed['error'].iloc[0]}",
                file=sys.stderr,
            )
        elif out is None:  # one timekeeper's listing: its ids and pages (the others are constant)
            print_frame(res[["initiativeExternalId", "page"]], 100)
        return 1 if len(failed) else 0
    if args.file:
        frame = read_table(args.file)
        frame.columns = match_headers("stars", _PAIR, [str(c) for c in frame.columns]).names
        if _PAIR[1] not in frame:
            raise ConfigError(f"{args.file} has no {_PAIR[1]} column")
        if _PAIR[0] not in frame:
            if not args.timekeeper:
                raise ConfigError(
                    f"{args.file} has no {_PAIR[0]} column: name the timekeeper before --file "
                    f"(toolkit {args.command} TK-101 --file {args.file})"
                )
            frame = frame.assign(timekeeperExternalId=args.timekeeper)
        client = client_from(args)
        res = with_row(getattr(client, args.command)(frame, progress=not args.quiet), frame)
    else:
        if not args.timekeeper or not args.ids:
            raise ConfigError("give TK and at least one ID, or --file")
        client = client_from(args)
        res = getattr(client, args.command)(args.timekeeper, args.ids, progress=not args.quiet)
    print(res.groupby(["status", "httpStatus"], dropna=False, observed=True).size().to_string())
    if not res["ok"].all():
        print_frame(res[~res["ok"]])
    write_out(res, out, "results")
    return 0 if res["ok"].all() else 1
