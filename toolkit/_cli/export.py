"""``toolkit export`` (released entries of a range) and ``toolkit pending``, to files."""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit._cli.common import FLAGS, client_from
from toolkit._egress import Window, claim_target
from toolkit.errors import ConfigError

#: suffixes of a file, never given to a folder: ``--out`` with one is a workbook or refused
FILE_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".csv", ".tsv", ".txt", ".parquet", ".pq", ".json")


def out_format(out: str, given: str | None) -> str:
    """The format of ``--out``: ``--format`` if given, else from the suffix (folders have none).

    Returns:
        ``"xlsx"`` for a ``.xlsx`` file, else ``"parquet"`` or ``"csv"`` (folders).

    >>> out_format("march.xlsx", None), out_format("out/march", None)
    ('xlsx', 'parquet')
    """
    suffix = Path(out).suffix.casefold()
    if suffix in (".xlsx", ".xlsm"):
        if given not in (None, "xlsx"):
            raise ConfigError(
                f"--out {out} is a workbook, but --format {given} writes a folder; "
                f"leave --format out, or give a folder to --out"
            )
        return "xlsx"
    if suffix in FILE_SUFFIXES:
        stem = str(Path(out).with_suffix(""))
        raise ConfigError(
            f"--out {out}: an export is two tables (entries and codes); write a .xlsx "
            f"workbook, or a folder: --out {stem} --format csv ({stem}/entries.csv and "
            f"{stem}/codes.csv) or --out {stem} (Parquet)"
        )
    if given == "xlsx":
        raise ConfigError(f"--format xlsx writes a workbook: give --out a .xlsx name, not {out}")
    return given or "parquet"


def run(args: argparse.Namespace) -> int:
    """Export the released entries of a range, or the release-pending ones (``pending``).

    Returns:
        0 (errors end the command with status 2).

    >>> import contextlib, io
    >>> from toolkit._cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["-q", "--env-file", env_file, "export", "--after", "2026-11-01",
    ...                  "--on-or-before", "2026-11-21", "--out", str(tmp / "export")])
    >>> code, out.getvalue().splitlines()[0][-37:]  # a bare date: the whole day
    (0, 'on or before 2026-11-21T23:59:59.999Z')
    """
    args.format = out_format(args.out, args.format)  # before any request
    if args.command == "pending":
        export = client_from(args).release_pending()
    else:
        span = Window.of(args.after, args.on_or_before, FLAGS)
        assert span.after is not None and span.on_or_before is not None  # both are required
        print(f"export window: entries {span}")
        parquet = args.format == "parquet"  # streamed window by window: memory of one buffer
        window = args.window or ("1D" if parquet else None)
        span.split(window)  # a bad --window: before the token is asked for
        client, ends, shown = client_from(args), (span.after, span.on_or_before), not args.quiet
        if parquet:
            totals = client.export_to_parquet(
                *ends, args.out, window=window or "1D", overwrite=args.overwrite, progress=shown
            )
            print(
                f"wrote {totals['entries']} entries and {totals['codes']} codes in"
                f" {totals['windows']} window(s) to {args.out}/entries and {args.out}/codes"
            )
            return 0
        claim_target(args.out, overwrite=args.overwrite)  # refuse before fetching anything
        export = client.export_entries(*ends, window=args.window, progress=shown)
    out, overwrite = args.out, args.overwrite
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
    print(export)
    return 0
