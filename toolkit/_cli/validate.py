"""``toolkit validate DIR``: check a folder of import tables (or a workbook, or one table's file),
sending nothing."""

from __future__ import annotations

import argparse

from toolkit._cli.common import out_path, print_frame, write_out
from toolkit._ingress import folder_sources, validate


def run(args: argparse.Namespace) -> int:
    """Validate the folder; print the report and the failures (errors and warnings).

    Returns:
        0 when every row is valid, 1 when some are not (warnings alone do not fail).

    >>> import contextlib, io
    >>> from toolkit._cli import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = main(["validate", "sample_data"])
    >>> code, out.getvalue().split(",")[0]
    (0, 'ValidationReport: ok')
    """
    out = out_path(args)
    # the files, read a chunk at a time: never held whole
    report = validate(**folder_sources(args.dir), code_range_post=args.code_range_post)
    print(report)
    failures = report.failures  # with each row's line
    if not failures.empty:  # errors and warnings; only errors fail the command
        print_frame(failures, 200)
    if out is not None and out.suffix.casefold() == ".xlsx":
        report.to_excel(out)
        print(f"wrote {len(failures)} failures to {out}, with the tables, failing cells marked")
    else:
        write_out(failures, out, "failures")
    return 0 if report.ok else 1
