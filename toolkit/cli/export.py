"""``toolkit export`` (released entries of a time range) and ``toolkit pending`` (the
release-pending entries): written to a folder or workbook."""

from __future__ import annotations

import argparse

from toolkit.cli.common import client_from, command_of
from toolkit.egress import Export, claim_target

__all__ = ["COMMANDS", "add_arguments", "run"]

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "export": (
        "export released entries to a folder",
        ("toolkit export --after 2024-03-01 --on-or-before 2024-04-01 --out out/march",),
    ),
    "pending": (
        "write the release-pending entries to a folder",
        ("toolkit pending --out out/pending --format csv",),
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit export`` or ``toolkit pending`` (by the parser's prog).

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit pending")
        >>> add_arguments(parser)
        >>> parser.parse_args(["--out", "out/pending"]).format
        'parquet'
    """
    if command_of(parser) == "pending":
        parser.add_argument("--out", required=True, help="folder to write entries/ and codes/ to")
        parser.add_argument("--format", choices=["parquet", "csv", "xlsx"], default="parquet",
                            help="file format (default parquet)")
        parser.add_argument("--overwrite", action="store_true", help="replace an earlier export")
        return
    parser.add_argument("--after", required=True, help="releasedAfter (ISO 8601; naive = UTC)")
    parser.add_argument("--on-or-before", required=True, help="releasedOnOrBefore")
    parser.add_argument("--out", required=True,
                        help="folder (parquet: OUT/entries and OUT/codes; csv) or .xlsx file")
    parser.add_argument("--format", choices=["parquet", "csv", "xlsx"], default="parquet",
                        help="file format (default parquet)")
    parser.add_argument("--window",
                        help="pandas offset of the sub-windows (parquet default 1D)")
    parser.add_argument("--encoding", default="utf-8",
                        help="CSV encoding; utf-8-sig lets Excel show accents (default utf-8)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier export at --out (otherwise refused, exit 2)")


def run(args: argparse.Namespace) -> int:
    """Export the released entries of a range, or the release-pending ones (``pending``).

    Args:
        args: the parsed arguments (``args.command`` is ``export`` or ``pending``).

    Returns:
        0 (errors end the command with status 2 by :func:`toolkit.cli.main`).

    Example:
        >>> import contextlib, io
        >>> from toolkit.cli import main
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main(["-q", "--env-file", env_file, "export", "--after", "2026-11-01",
        ...                  "--on-or-before", "2026-11-21", "--out", str(tmp / "export")])
        >>> code, out.getvalue().split()[0]
        (0, 'wrote')
    """
    if args.command == "pending":
        return _pending(args)
    client = client_from(args)
    if args.format == "parquet":  # streamed window by window: memory of one buffer
        totals = client.export_to_parquet(
            args.after, args.on_or_before, args.out, window=args.window or "1D",
            overwrite=args.overwrite, progress=not args.quiet,
        )
        print(f"wrote {totals['entries']} entries and {totals['codes']} codes in"
              f" {totals['windows']} window(s) to {args.out}/entries and {args.out}/codes")
        return 0
    claim_target(args.out, overwrite=args.overwrite)  # refuse before fetching anything
    export = client.export_entries(args.after, args.on_or_before, window=args.window,
                                   progress=not args.quiet)
    _write(export, args)
    print(export)
    return 0


def _pending(args: argparse.Namespace) -> int:
    export = client_from(args).release_pending()
    _write(export, args)
    print(export)
    return 0


def _write(export: Export, args: argparse.Namespace) -> None:
    out, overwrite = args.out, getattr(args, "overwrite", False)
    if args.format == "csv":
        export.to_csv(out, encoding=getattr(args, "encoding", "utf-8"), overwrite=overwrite)
        where = f"{out}/entries.csv and {out}/codes.csv"
    elif args.format == "xlsx":
        export.to_excel(out, overwrite=overwrite)
        where = f"{out} (sheets entries and codes)"
    else:
        export.to_parquet(out, overwrite=overwrite)
        where = f"{out}/entries and {out}/codes"
    print(f"wrote {len(export.entries)} entries and {len(export.codes)} codes to {where}")
