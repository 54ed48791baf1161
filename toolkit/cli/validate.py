"""``toolkit validate DIR``: check a folder of import tables, sending nothing.

With ``--out failures.xlsx`` it writes the workbook the analyst fixes (the tables with every
failing cell marked, then ``errors`` and ``summary`` sheets; the ``errors`` sheet comes first);
``toolkit validate failures.xlsx`` checks the fixed workbook.
"""

from __future__ import annotations

import argparse

from toolkit.cli.common import (
    CODE_RANGE_POST_HELP,
    TABLE_FILES,
    out_path,
    print_frame,
    write_out,
)
from toolkit.ingress import CODE_RANGE_POSTS, load_folder, validate, with_lines

__all__ = ["COMMANDS", "add_arguments", "run"]

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "validate": (
        "check a folder of import tables, sending nothing",
        (
            "toolkit validate sample_data",
            "toolkit validate exports/firm --out failures.xlsx",
            "toolkit validate failures.xlsx",
        ),
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit validate``.

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit validate")
        >>> add_arguments(parser)
        >>> parser.parse_args(["sample_data"]).dir
        'sample_data'
    """
    parser.add_argument(
        "dir",
        help="folder of clients, initiatives (or matters), code_types, codes, code_ranges "
        f"files: {TABLE_FILES}; names match case-insensitively; or a workbook (.xlsx) with "
        "one sheet per table, such as a fixed --out workbook",
    )
    parser.add_argument(
        "--out",
        help="also write the failures to this file (with row and line columns): .csv or "
        ".parquet; .xlsx writes the workbook to fix: the tables with every failing cell "
        "marked and commented, plus errors and summary sheets",
    )
    parser.add_argument(
        "--code-range-post",
        choices=CODE_RANGE_POSTS,
        default="replace",
        help=CODE_RANGE_POST_HELP,
    )


def run(args: argparse.Namespace) -> int:
    """Validate the folder; print the report and the failures (errors and warnings).

    Args:
        args: the parsed arguments.

    Returns:
        0 when every row is valid, 1 when some are not (warnings alone do not fail).

    Example:
        >>> import contextlib, io
        >>> from toolkit.cli import main
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main(["validate", "sample_data"])
        >>> code, out.getvalue().split(",")[0]
        (0, 'ValidationReport: ok')
    """
    out = out_path(args)
    frames = load_folder(args.dir)
    report = validate(
        clients=frames.get("clients"),
        initiatives=frames.get("initiatives"),
        code_types=frames.get("code_types"),
        codes=frames.get("codes"),
        code_ranges=frames.get("code_ranges"),
        code_range_post=args.code_range_post,
    )
    print(report)
    failures = with_lines(report.failures, frames)
    if not failures.empty:  # errors and warnings; only errors fail the command
        print_frame(failures, 200)
    if out is not None and out.suffix.casefold() == ".xlsx":
        report.to_excel(out)
        print(f"wrote {len(failures)} failures to {out}, with the tables, failing cells marked")
    else:
        write_out(failures, out, "failures")
    return 0 if report.ok else 1
