"""Every command of ``toolkit`` and its options, written once: :data:`COMMANDS` and :func:`parser`
(standard library only, so ``--help`` loads neither pandas nor pyarrow)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any, NamedTuple

#: exit status -> meaning (also shown by ``toolkit --help``)
EXIT_CODES: dict[int, str] = {
    0: "everything done (every row valid, sent or already journaled)",
    1: "some rows invalid, failed, skipped, unknown or in conflict (see the table printed, "
    "or --out)",
    2: "usage or input error: bad arguments, an unreadable file, missing or refused "
    "settings, an unreachable service",
    130: "interrupted (Ctrl+C or SIGTERM): the rows not sent are listed, with the command "
    "that resumes",
    141: "the output was closed early (as by `| head`): the command stopped there, quietly",
}

#: how the ``key=value`` words after an argument's names in :data:`COMMANDS` become keywords of
#: ``ArgumentParser.add_argument`` (any other key: the text as it is)
_READ: dict[str, Callable[[str], Any]] = {
    "type": lambda v: {"int": int, "float": float, "statuses": _statuses}[v],
    "action": lambda v: getattr(argparse, v, v),
    "choices": lambda v: v.split("|"),
    "required": lambda v: v == "True",
}


def _argument(spec: str) -> tuple[list[str], dict[str, Any]]:
    """An argument's names and ``add_argument`` keywords from its key in :data:`COMMANDS`.

    >>> _argument("--workers type=int default=8")
    (['--workers'], {'type': <class 'int'>, 'default': '8'})
    """
    words = [word.partition("=") for word in spec.split()]
    return [name for name, eq, _ in words if not eq], {
        key: _READ.get(key, str)(value) for key, eq, value in words if eq
    }


class Command(NamedTuple):
    """One command: help, examples, args, sub-commands, and the module whose ``run(args)`` runs
    it (its own name's when not given: :func:`toolkit._cli.main` reads it so).

    ``args`` maps each argument to its help: the key is its names, then ``add_argument``'s
    keywords as ``key=value`` words (``nargs=?``, ``type=int``, ``choices=a|b``, ``default=8``:
    argparse reads a text default with the ``type``), as :func:`_argument` reads them.
    """

    help: str
    examples: tuple[str, ...] = ()
    args: dict[str, str] = {}
    notes: str = ""
    sub: dict[str, Command] | None = None
    module: str = ""


TABLE_FILES = "CSV (, ; tab or | separated; UTF-8 or cp1252), .xlsx or .parquet"
ENV_FILE_HELP = "file of TOOLKIT_* settings (default: .env here or in the nearest parent folder)"
FAILED = "missing_in_billing, duration_differs, date_or_matter_differs, code_differs"


def _out(what: str) -> str:
    return f"also write {what} to this file: .csv, .xlsx or .parquet (with row and line columns)"


def _statuses(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


INCLUDE = "--include metavar=STATUSES type=statuses"


def _include(what: str) -> str:
    return (
        f"{what}, comma-separated: matched (as succeeded), failed (all of {FAILED}) or any "
        "of those (as failed, detail as error). Default: matched only, what the billing extract "
        "proves; the others stay pending"
    )


CODE_RANGE_POST = {
    "--code-range-post choices=replace|add default=replace": "what the service does with a code "
    "range request: replace (default: over 2500 codes is invalid) or add (sent in parts of 2500)"
}
WORKERS = {"--workers type=int default=8": "parallel requests (default 8)"}
EXPORT_ARGS = {
    "--out required=True": "a folder (Parquet OUT/entries and OUT/codes, or CSV with --format "
    "csv) or a .xlsx workbook (sheets entries and codes)",
    "--format choices=parquet|csv|xlsx": "file format (default: xlsx for a .xlsx --out, else "
    "parquet)",
}
OVERWRITE = {
    "--overwrite action=store_true": "replace an earlier export at --out (otherwise refused, "
    "exit 2)"
}
STAR_ARGS = {
    "timekeeper nargs=? metavar=TK": "timekeeperExternalId",
    "ids nargs=* metavar=ID": "initiativeExternalId(s)",
    "--file": f"{TABLE_FILES} with columns initiativeExternalId and timekeeperExternalId (any"
    " case; without the latter, give the argument TK)",
    "--out": _out("every row's result"),
}

#: command -> what it is; ``toolkit sandbox`` is handed to the sandbox's own command line
COMMANDS: dict[str, Command] = {
    "sandbox": Command(
        "run the local sandbox (see `toolkit sandbox --help`)",
        (
            "toolkit sandbox --demo                 # the sample firm the package carries",
            "toolkit sandbox --seed sample_data --db out/sandbox.db",
        ),
    ),
    "validate": Command(
        "check a folder of import tables, sending nothing",
        (
            "toolkit validate sample_data --out failures.xlsx",
            "toolkit validate failures.xlsx",
            "toolkit validate sample_data/clients.csv",
        ),
        {
            "dir": "folder of clients, initiatives (or matters), code_types, codes, code_ranges "
            f"files ({TABLE_FILES}; names match case-insensitively), or a .xlsx workbook with one "
            "sheet per table (such as a fixed --out workbook), or one table's file named as in "
            "the folder (clients.csv)",
            "--out": "also write the failures to this file (.csv or .parquet, with row and line "
            "columns); .xlsx writes the workbook to fix: the tables with failing cells marked "
            "and commented, plus errors and summary sheets",
            **CODE_RANGE_POST,
        },
    ),
    "onboard": Command(
        "validate and import a folder of tables, parents first",
        (
            "toolkit onboard sample_data --dry-run            # no secret, no network",
            "toolkit onboard firm/ --journal j.jsonl --mirror  # retire closed matters",
            "toolkit onboard --codeset utbms-litigation --journal j.jsonl  # the UTBMS codes",
        ),
        {
            "dir nargs=?": f"folder of import tables ({TABLE_FILES}) as for validate",
            "--codeset action=append metavar=NAME": "instead of a folder, a public code set's code "
            "types and codes: utbms-litigation, utbms-bankruptcy or utbms-counseling (each with "
            "the UTBMS activities and expenses); repeatable",
            "--codeset-matters metavar=FILE": "with --codeset: also a code range of the set's task "
            f"codes for each initiative FILE names ({TABLE_FILES} with externalId or "
            "initiativeExternalId; the initiatives already imported)",
            "--dry-run action=store_true": "validate and show the plan per record, against the "
            "journal; send nothing, need no secret",
            "--journal": "journal: a re-run sends only what is new, changed or failed",
            "--mirror action=store_true": "deactivate the initiatives the journal holds as active "
            "and the folder lacks",
            "--max-deactivate type=int metavar=N": "with --mirror: refuse to deactivate more than "
            "N initiatives (default 5%% of the journal's active ones, at least 1)",
            "--failures action=store_true": "list the records of --journal still failing, oldest "
            "first; send nothing",
            **WORKERS,
            "--on-invalid choices=raise|skip default=raise": "raise: send nothing when a row is "
            "invalid (default); skip: send valid rows",
            "--strict action=store_true": "send nothing while a validation warning stands (by "
            "default such rows are sent as given and their warnings printed)",
            **CODE_RANGE_POST,
            "--out": _out("every row's result (the plan with --dry-run)"),
        },
    ),
    "export": Command(
        "export released entries to a folder",
        ("toolkit export --after 2024-03-01 --on-or-before 2024-04-01 --out march.xlsx",),
        {
            "--after required=True": "releasedAfter (ISO 8601; naive = UTC)",
            "--on-or-before required=True": "releasedOnOrBefore (a bare date: the end of that day)",
            **EXPORT_ARGS,
            "--window": "pandas offset of the sub-windows (parquet default 1D)",
            "--encoding default=utf-8": "CSV encoding; utf-8-sig lets Excel show accents (default "
            "utf-8)",
            **OVERWRITE,
        },
    ),
    "sync": Command(
        "incrementally sync released time into Delta tables at PATH",
        ("toolkit sync out/time --after 2026-11-01", "toolkit sync out/time --status"),
        {
            "path": "the sync folder (entries/ and codes/ Delta tables)",
            "--after": "releasedAfter: needed the first time; default the watermark",
            "--on-or-before": "releasedOnOrBefore (a bare date: its end); default now minus --lag",
            **dict.fromkeys(["--since", "--until"], argparse.SUPPRESS),  # RENAMED
            "--window default=1D": "window size, a pandas offset (default 1D)",
            "--lag default=10min": "how far --on-or-before lags now (default 10min)",
            "--batch-rows type=int default=100000": "entries of consecutive windows written per "
            "commit (default 100000)",
            "--status action=store_true": "print watermark, rows and versions",
            "--compact action=store_true": "compact small files (optimize)",
        },
    ),
    "pending": Command(
        "write the release-pending entries to a folder",
        ("toolkit pending --out out/pending --format csv",),
        {**EXPORT_ARGS, **OVERWRITE},
        module="export",
    ),
    "acknowledge": Command(
        "acknowledge released entries listed in a file",
        (
            "toolkit acknowledge acks.csv --journal acks.jsonl --out ack-results.xlsx",
            "toolkit acknowledge rec.xlsx --include matched,duration_differs",
        ),
        {
            "file": f"{TABLE_FILES} with userId, entryId (or _id), outcome (succeeded/failed), "
            "externalId (succeeded rows), errors (failed rows); or the rows of toolkit "
            "reconcile --out (see --include)",
            INCLUDE: _include("for the rows of toolkit reconcile --out: which to acknowledge"),
            "--journal": "journal file: a re-run skips what it already sent",
            "--out": _out("every row's result"),
        },
    ),
    "reconcile": Command(
        "compare exported or synced entries with a billing extract, entry by entry",
        (
            "toolkit reconcile out/march billing.xlsx --out rec.xlsx  # then toolkit acknowledge",
            "toolkit reconcile out/time hours.csv --duration hours --duration-unit hours",
            "toolkit reconcile out/time week-47.csv --after 2026-11-16 --on-or-before 2026-11-23",
            "toolkit reconcile out/march invoice.txt  # a LEDES 1998B or 98BI V2 invoice",
        ),
        {
            "export metavar=EXPORT": "a folder of toolkit sync, a folder or .xlsx of toolkit "
            f"export, or one table of entries ({TABLE_FILES})",
            "billing metavar=BILLING": f"the billing extract, one row per record: {TABLE_FILES}; "
            "or a LEDES invoice (a file starting LEDES1998B or LEDES98BI V2): its fee lines are "
            "paired with entries by timekeeper, date and matter",
            "--timekeepers metavar=FILE": f"with a LEDES invoice: {TABLE_FILES} of userId (or "
            "_id) and timekeeperExternalId; default: each user's billing-system identity, asked "
            "of the service",
            "--matters choices=externalId|callSign default=externalId": "with a LEDES invoice: "
            "what its LAW_FIRM_MATTER_ID holds, the initiative's externalId (default) or callSign",
            "--key choices=auto|_id|entryId|externalId default=auto": "the entry column the "
            "billing key refers to (default auto: the one it hits most)",
            "--billing-key metavar=COL": "billing column of the key (default the first of "
            "entryId, _id, externalId)",
            "--billing-id metavar=COL": "billing record id column (default billingId or recordId "
            "if present)",
            **{
                f"--{name} metavar=COL": f"billing column with the {what} (default {default} if "
                "present, else not compared)"
                for name, what, default in (
                    ("duration", "duration", "duration"),
                    ("date", "date worked", "workDate"),
                    ("matter", "matter", "matter"),
                )
            },
            "--duration-unit choices=seconds|minutes|hours default=seconds": "unit of the billing "
            "durations (default seconds)",
            "--decimal choices=.|, default=.": "decimal mark of durations written as text "
            "(default .; --decimal , reads 1,5)",
            "--tolerance-seconds type=float default=0 metavar=S": "largest duration difference "
            "still counted as equal (default 0)",
            "--dayfirst action=BooleanOptionalAction": "read non-ISO text dates day first "
            "(03/04/2026 is 3 April) or month first (--no-dayfirst); without either, only dates "
            "that read the same both ways",
            "--after metavar=T": "compare only the entries the service released after T (ISO "
            "8601; naive = UTC): it is asked for its export of that window",
            "--on-or-before metavar=T": "compare only the entries released on or before T; a "
            "bare date means the end of that day",
            "--out": "also write every reconciliation row to this file: .csv, .xlsx or .parquet "
            "(toolkit acknowledge reads it)",
            "--acknowledge-out metavar=FILE": "also write what toolkit acknowledge takes (.csv, "
            ".xlsx or .parquet): the rows --include names",
            INCLUDE: _include("which rows --acknowledge-out writes"),
        },
        notes="only the values the billing file holds are compared (duration, workDate, matter"
        "\nby default; with a LEDES invoice: hours, and task and activity codes when the export"
        "\nhas its codes); exit status 0 every entry matched, 1 some differ, 2 bad input",
    ),
    "star": Command(
        "star initiatives for a timekeeper",
        ("toolkit star TK-101 M-1001-001 M-1001-002", "toolkit star --file stars.csv"),
        STAR_ARGS,
        module="starring",
    ),
    "unstar": Command(
        "unstar initiatives for a timekeeper",
        ("toolkit unstar TK-101 M-1001-001", "toolkit unstar --file stars.csv --out res.csv"),
        STAR_ARGS,
        module="starring",
    ),
    "starred": Command(
        "list a timekeeper's starred initiatives",
        ("toolkit starred TK-101 --out starred.xlsx",),
        {
            "timekeeper metavar=TK": "timekeeperExternalId",
            "--limit type=int default=2500": "page size (default 2500)",
            "--out": "write the list to this file: .csv, .xlsx or .parquet",
        },
        module="starring",
    ),
    "demo": Command(
        "run the whole flow on a sandbox",
        ("toolkit demo --out out",),
        {"--out default=out": "folder for the demo's files (default out)", **WORKERS},
        module="sandbox",
    ),
    "firms": Command(
        "many firms from one firms.toml: their status",
        ("toolkit firms status firms.toml --out status.xlsx",),
        sub={
            "status": Command(
                "one row per firm of FIRMS.toml: its last push and counts, the rows still "
                "failing, the watermark and its age, the Delta version (reads local files only)",
                args={
                    "firms_file metavar=FIRMS.toml": "the firms file",
                    "--out": "also write the table to a .csv, .xlsx or .parquet file",
                },
            )
        },
    ),
    "lab": Command(
        "JupyterLab with a sandbox: the one .env names if it runs (make sandbox), else its own",
        ("toolkit lab --seed sample_data",),
        {
            "--seed": "folder of sample CSV files to load (default ./sample_data, else the "
            "package's sample firm)",
            "--db": "SQLite file of the sandbox (default: temporary)",
            f"--dir default={os.path.join('out', 'lab')}": "JupyterLab's working folder (default "
            "out/lab, which git ignores); missing copies of ./notebooks go to its notebooks/",
        },
        module="sandbox",
    ),
}


def _epilog(*examples: str) -> str:
    return "examples:\n" + "\n".join(f"  {e}" for e in examples)


def _add(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    command: Command,
    parents: list[argparse.ArgumentParser],
) -> None:
    """Add a command's parser, its arguments and its own sub-commands."""
    epilog = _epilog(*command.examples) if command.examples else None
    if command.notes:
        epilog = f"{epilog}\n\n{command.notes}"
    p = sub.add_parser(
        name,
        help=command.help,
        description=command.help,
        parents=parents,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter,
    )
    for spec, text in command.args.items():
        names, options = _argument(spec)
        p.add_argument(*names, help=text, **options)
    if command.sub:
        inner = p.add_subparsers(
            dest=f"{name}_command",
            required=True,
            metavar="SUBCOMMAND",
            help="; ".join(f"{n}: {c.help.split(':')[0]}" for n, c in command.sub.items()),
        )
        for inner_name, inner_command in command.sub.items():
            _add(inner, inner_name, inner_command, [])


def parser() -> argparse.ArgumentParser:
    """The ``toolkit`` command line's parser (``toolkit sandbox`` is there for its help only).

    Returns:
        The parser; ``parse_args`` sets ``command`` to the command's name.

    >>> parser().parse_args(["onboard", "sample_data", "--dry-run", "-q"]).quiet
    True
    """
    exits = "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())
    p = argparse.ArgumentParser(
        prog="toolkit",
        description="Move DataFrames through the time-billing connector interface.",
        epilog=f"exit status:\n{exits}\n\n"
        + _epilog(
            "toolkit sandbox --demo                  # a local service with the sample firm",
            "toolkit validate sample_data",
            "toolkit onboard sample_data --journal out/onboard.jsonl",
            "toolkit <command> --help                # each command's options and examples",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)  # the same two after the command too
    for target, default in ((p, None), (common, argparse.SUPPRESS)):
        target.add_argument("--env-file", default=default, help=ENV_FILE_HELP)
        target.add_argument(
            "-q", "--quiet", action="store_true", default=default or False, help="no progress bars"
        )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    for name, command in COMMANDS.items():
        _add(sub, name, command, [] if name == "sandbox" else [common])
    return p
