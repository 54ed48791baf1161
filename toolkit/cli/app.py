"""The ``toolkit`` command line.

::

    toolkit sandbox [--port 8765] [--seed sample_data] ...   run the local sandbox
    toolkit validate DIR [--out F]                            check a folder of import tables
    toolkit onboard DIR [--dry-run] [--journal F] [--workers N] [--out F]
    toolkit export --after T --on-or-before T --out DIR [--format parquet|csv|xlsx] [--overwrite]
    toolkit sync PATH [--since T] [--until T] [--window 1D] [--lag 10min]
    toolkit sync PATH --status | --compact
    toolkit pending --out DIR
    toolkit acknowledge FILE [--journal F] [--out F]
    toolkit reconcile EXPORT BILLING [--out F]     compare an export or sync with billing
    toolkit star TK ID... | --file F [--out F]     (unstar likewise)
    toolkit starred TK [--out F]
    toolkit demo [--out out]                                  the whole flow on a sandbox
    toolkit lab                                               JupyterLab with a sandbox running

Commands that talk to the service read ``TOOLKIT_*`` variables and ``--env-file`` (default
``.env``, which ``toolkit sandbox`` writes). Table files may be CSV (any of ``,`` ``;`` tab
``|``; UTF-8 with or without BOM), ``.xlsx`` or Parquet (:mod:`toolkit.ingress.readers`); ``--out``
writes ``.csv``, ``.xlsx`` or ``.parquet`` by its extension, with ``row`` (0-based data row)
and ``line`` (the input file's line, header = 1). Exit status: see :data:`EXIT_CODES`; on
Ctrl+C or SIGTERM sending stops at once and the summary and the command that resumes are
printed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from toolkit.bulk.runner import Journal
from toolkit.cli import firms as firms_cli
from toolkit.client import Client
from toolkit.core.connection import ENDPOINTS, Connection
from toolkit.core.settings import ENV_KEYS, Settings
from toolkit.demo import run_demo
from toolkit.egress.export import Export, claim_target
from toolkit.egress.sync import DEFAULT_LAG, compact, read_sync, sync_status
from toolkit.errors import (
    ApiError,
    AuthError,
    ConcurrentWriteError,
    ConfigError,
    InputWarning,
    Interrupted,
    ToolkitError,
    TransportError,
    ValidationError,
)
from toolkit.ingress.imports import IMPORTS, OnboardReport
from toolkit.ingress.readers import check_out_path, read_table, with_lines, write_table
from toolkit.ingress.validation import load_folder, validate
from toolkit.reconciliation.reconciliation import COMPARISONS, reconcile

__all__ = ["EXIT_CODES", "console", "main"]

#: exit status -> meaning (also shown by ``toolkit --help``)
EXIT_CODES: dict[int, str] = {
    0: "everything done (every row valid, sent or already journaled)",
    1: "some rows invalid, failed or skipped (see the table printed, or --out)",
    2: "usage or input error: bad arguments, an unreadable file, missing or refused "
    "settings, an unreachable service",
    130: "interrupted (Ctrl+C or SIGTERM): the rows not sent are listed, with the command "
    "that resumes",
}


def _client(args: argparse.Namespace) -> Client:
    """A client from the settings, with a token fetched first: bad credentials fail fast."""
    client = Client.from_env(args.env_file, workers=getattr(args, "workers", None) or 8)
    args.settings = client.connection.settings
    # one attempt: an unreachable identity service ends the command at once, with the setting
    client.connection.auth.secret_token(retry=False)
    return client


def _check_journal(args: argparse.Namespace) -> None:
    """Open and close the journal before any request: a folder, an unwritable path or a
    journal another run holds is an error before anything is sent."""
    if getattr(args, "journal", None) and not getattr(args, "dry_run", False):
        Journal(args.journal).close()


def _dry_run_client(args: argparse.Namespace) -> Client:
    """A client that sends nothing: no secret and no address is needed."""
    try:
        settings = Settings.from_env(args.env_file)
    except ConfigError:
        unset = "http://not-configured.invalid"
        settings = Settings("<customerId>", "<clientId>", "<unused>", unset, unset)
    return Client.from_connection(Connection(settings))


def _cut(value: object, width: int = 80) -> object:
    text = value if isinstance(value, str) else None
    return text[: width - 3] + "..." if text is not None and len(text) > width else value


def _print_frame(df: pd.DataFrame, max_rows: int = 30) -> None:
    shown = df.head(max_rows).copy()
    for col in shown.select_dtypes(include=["object", "string"]).columns:
        shown[col] = shown[col].astype(object).map(_cut)
    with pd.option_context("display.width", 200):
        print(shown.to_string(index=False))
    if len(df) > max_rows:
        print(f"... {len(df) - max_rows} more (write them all with --out FILE)")


def _out(args: argparse.Namespace) -> Path | None:
    """The ``--out`` file, checked before any work is done."""
    return check_out_path(args.out) if getattr(args, "out", None) else None


def _write_out(frame: pd.DataFrame, out: Path | None, what: str) -> None:
    if out is not None:
        write_table(frame, out)
        print(f"wrote {len(frame)} {what} to {out}")


def _with_row(frame: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    """A result frame aligned to a file's rows, with ``row`` and ``line`` first."""
    out = frame.reset_index(drop=True)
    out.insert(0, "row", range(len(out)))
    return with_lines(out, source)


def _read_table(path: str) -> pd.DataFrame:
    return read_table(path)


def _interrupted(exc: Interrupted, args: argparse.Namespace, key: str = "externalId") -> int:
    """Print what an interrupted run did and the command that resumes it; exit status 130."""
    res = exc.result
    print("\ninterrupted: no request was sent after the interrupt", file=sys.stderr)
    if res is not None and len(res):
        status = res["status"].astype(str)
        counts = {
            "ok": int(res["ok"].sum()),
            "failed": int((status == "failed").sum()),
            "unknown": int((status == "unknown").sum()),
            "not sent": int((status == "not_sent").sum()),
        }
        print(", ".join(f"{k}: {n}" for k, n in counts.items()), file=sys.stderr)
        cols = [c for c in ("table", "row", key, "status", "error") if c in res]
        todo = res[status.isin(["not_sent", "unknown"])]
        if len(todo):
            print("rows not sent (or unknown):", file=sys.stderr)
            with pd.option_context("display.max_rows", 20, "display.width", 160):
                print(todo[cols].to_string(max_rows=20), file=sys.stderr)
    command = "toolkit " + " ".join(shlex.quote(a) for a in args.argv)
    if getattr(args, "journal", None):
        print(f"resume with: {command}", file=sys.stderr)
    else:
        print(
            f"resume with: {command} --journal journal.jsonl "
            "(without a journal the rows already sent are sent again: harmless, but slower)",
            file=sys.stderr,
        )
    return 130


def _main_thread() -> bool:
    """Whether this is the main thread (only it may install signal handlers)."""
    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def cmd_validate(args: argparse.Namespace) -> int:
    out = _out(args)
    frames = load_folder(args.dir)
    report = validate(**frames)
    print(report)
    failures = with_lines(report.failures, frames)
    if not failures.empty:  # errors and warnings; only errors fail the command
        _print_frame(failures, 200)
    _write_out(failures, out, "failures")
    return 0 if report.ok else 1


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
                "requests": len(report.payloads.get(table, ())),
                "held back": int((group["error"] != "dry run").sum()),
                "would send": f"{method} {path}",
            }
        )
    return pd.DataFrame(data)


def cmd_onboard(args: argparse.Namespace) -> int:
    out = _out(args)
    frames = load_folder(args.dir)
    _check_journal(args)
    client = _dry_run_client(args) if args.dry_run else _client(args)
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
        _print_frame(failures, 200)
        _write_out(failures, out, "failures")
        return 1
    except Interrupted as exc:
        report = getattr(exc, "report", None)
        if report is not None:
            print(report.counts.to_string())
        return _interrupted(exc, args)
    results = with_lines(report.results, frames)
    if args.dry_run:
        valid = report.validation is None or report.validation.ok
        print(f"dry run: nothing sent; validation {'ok' if valid else 'NOT ok'}")
        _print_frame(_dry_run_plan(report), 50)
        if not valid:
            _print_frame(results[results["error"] != "dry run"], 200)
        _write_out(results, out, "results")
        return 0 if valid else 1
    print(report)
    if not report.ok:
        cols = ["table", "row", "line", "externalId", "status", "error"]
        _print_frame(results[~results["ok"]][cols])
    _write_out(results, out, "results")
    return 0 if report.ok else 1


def cmd_export(args: argparse.Namespace) -> int:
    client = _client(args)
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


def cmd_pending(args: argparse.Namespace) -> int:
    export = _client(args).release_pending()
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


def cmd_sync(args: argparse.Namespace) -> int:
    if args.status or args.compact:
        if args.since or args.until:
            print("--status and --compact take no --since/--until", file=sys.stderr)
            return 2
        if args.compact:
            metrics = compact(args.path)
            for table, m in metrics.items():
                print(f"{table}: {m.get('numFilesRemoved', 0)} files compacted into"
                      f" {m.get('numFilesAdded', 0)}")
        status = sync_status(args.path)
        mark = status["watermark"]
        print(f"{status['path']}: watermark {mark.isoformat() if mark is not None else 'none'}")
        for table in ("entries", "codes"):
            print(f"  {table}: {status[table]:,} rows, version {status[table + '_version']},"
                  f" {status[table + '_files']} files")
        return 0
    try:
        report = _client(args).sync(args.path, since=args.since, until=args.until,
                                    window=args.window, lag=args.lag,
                                    batch_rows=args.batch_rows, progress=not args.quiet)
    except ConcurrentWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report)
    return 0


def cmd_acknowledge(args: argparse.Namespace) -> int:
    out = _out(args)
    frame = _read_table(args.file)
    _check_journal(args)
    client = _client(args)
    try:
        res = client.acknowledge(frame, journal=args.journal, progress=not args.quiet)
    except ValidationError as exc:
        print(f"validation failed, nothing sent: {exc}", file=sys.stderr)
        failures = with_lines(exc.failure_cases, frame)
        _print_frame(failures, 200)
        _write_out(failures, out, "failures")
        return 1
    except Interrupted as exc:
        return _interrupted(exc, args, key="entryId")
    res = _with_row(res, frame)
    print(res.groupby(["outcome", "status"], observed=True).size().to_string())
    if not res["ok"].all():
        cols = ["row", "line", "userId", "entryId", "outcome", "httpStatus", "error"]
        _print_frame(res[~res["ok"]][cols])
    _write_out(res, out, "results")
    return 0 if res["ok"].all() else 1


def _read_exported(path: str) -> pd.DataFrame:
    """The entries of a sync folder, an exported folder or workbook, or one entries table."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file or folder")
    try:
        if p.is_dir():
            if (p / "entries" / "_delta_log").is_dir():
                return read_sync(p).entries
            if (p / "entries.csv").is_file():
                return Export.read_csv(p).entries
            if (p / "entries").is_dir() or (p / "_toolkit_export.json").is_file():
                return Export.read_parquet(p).entries
            raise ConfigError(
                f"{p}: neither a synced folder (entries/_delta_log, from toolkit sync) nor an "
                "exported folder (entries/ Parquet or entries.csv, from toolkit export)"
            )
        if p.suffix.casefold() in (".xlsx", ".xlsm"):  # toolkit export --format xlsx
            return pd.read_excel(p, sheet_name="entries", engine="openpyxl")
        return read_table(p)
    except ToolkitError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable input is a one-line message
        raise ConfigError(f"{p}: cannot read it as exported entries ({exc})") from None


def cmd_reconcile(args: argparse.Namespace) -> int:
    out = _out(args)
    exported = _read_exported(args.export)
    billing = _read_table(args.billing)
    rec = reconcile(
        exported,
        billing,
        key=args.key,
        billing_key=args.billing_key,
        billing_id=args.billing_id,
        duration=args.duration,
        date=args.date,
        matter=args.matter,
        duration_unit=args.duration_unit,
        tolerance_seconds=args.tolerance_seconds,
        dayfirst=args.dayfirst,
    )
    print(rec)
    rows = rec.rows
    differ = rows[rows["status"] != "matched"]
    shown = 30
    for key, status, detail in differ[["key", "status", "detail"]].head(shown).itertuples(
        index=False
    ):  # whole details: they carry the numbers
        print(f"{key}  {status}: {detail}")
    if len(differ) > shown:
        print(f"... {len(differ) - shown} more (write them all with --out FILE)")
    _write_out(rows, out, "reconciliation rows")
    return 0 if differ.empty else 1


def cmd_star(args: argparse.Namespace) -> int:
    out = _out(args)
    if args.file:
        frame = _read_table(args.file)
        if "timekeeperExternalId" not in frame:
            if not args.timekeeper:
                raise ConfigError(f"{args.file} has no timekeeperExternalId column: give TK")
            frame = frame.assign(timekeeperExternalId=args.timekeeper)
        client = _client(args)
        res = _with_row(getattr(client, args.command)(frame, progress=not args.quiet), frame)
    else:
        if not args.timekeeper or not args.ids:
            raise ConfigError("give TK and at least one ID, or --file")
        client = _client(args)
        res = getattr(client, args.command)(args.timekeeper, args.ids, progress=not args.quiet)
    print(res.groupby(["status"], dropna=False).size().to_string())
    if not res["ok"].all():
        _print_frame(res[~res["ok"]])
    _write_out(res, out, "results")
    return 0 if res["ok"].all() else 1


def cmd_starred(args: argparse.Namespace) -> int:
    out = _out(args)
    res = _client(args).starred(args.timekeeper, limit=args.limit)
    if out is not None:
        _write_out(res, out, "starred initiatives")
    else:
        _print_frame(res, 100)
    return 0


def cmd_sandbox(argv: Sequence[str]) -> int:
    from toolkit.sandbox.cli import main as sandbox_main

    return sandbox_main(list(argv))


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(out=args.out, workers=args.workers)


def cmd_lab(args: argparse.Namespace) -> int:
    from toolkit.sandbox import running

    with running(seed=args.seed, db=args.db) as sb:
        sb.write_env(args.env_file)
        print(f"sandbox at {sb.url}; credentials written to {args.env_file}")
        # the notebooks use this sandbox (TOOLKIT_USE_ENV) instead of starting their own
        env = {**os.environ, **sb.env(), "TOOLKIT_USE_ENV": "1"}
        cmd = [sys.executable, "-m", "jupyter", "lab", "notebooks"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers often run as root
            cmd.append("--allow-root")
        return subprocess.call(cmd, env=env)


def _epilog(*examples: str) -> str:
    return "examples:\n" + "\n".join(f"  {e}" for e in examples)


_TABLE_FILES = "CSV (, ; tab or | separated; UTF-8 or cp1252), .xlsx or .parquet"
_OUT_HELP = "also write {} to this file: .csv, .xlsx or .parquet (with row and line columns)"


def _parser() -> argparse.ArgumentParser:
    exits = "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())
    p = argparse.ArgumentParser(
        prog="toolkit",
        description="Move DataFrames through the time-billing connector interface.",
        epilog=f"exit status:\n{exits}\n\n"
        + _epilog(
            "toolkit sandbox --seed sample_data      # a local service; writes .env",
            "toolkit validate sample_data",
            "toolkit onboard sample_data --journal onboard.jsonl",
            "toolkit <command> --help                # each command's options and examples",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--env-file", default=".env", help="file of TOOLKIT_* settings")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    # the same two options after the command too (`toolkit onboard DIR -q`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--env-file", default=argparse.SUPPRESS, help="file of TOOLKIT_* settings")
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")

    def command(name: str, help: str, *examples: str) -> argparse.ArgumentParser:  # noqa: A002
        return sub.add_parser(
            name,
            help=help,
            description=help,
            parents=[common],
            epilog=_epilog(*examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    sub.add_parser(
        "sandbox",
        help="run the local sandbox (see `toolkit sandbox --help`)",
        epilog=_epilog("toolkit sandbox --seed sample_data --db out/sandbox.db"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    s = command(
        "validate",
        "check a folder of import tables, sending nothing",
        "toolkit validate sample_data",
        "toolkit validate exports/firm --out failures.xlsx",
    )
    s.add_argument(
        "dir",
        help="folder of clients, initiatives (or matters), code_types, codes, code_ranges "
        f"files: {_TABLE_FILES}; names match case-insensitively",
    )
    s.add_argument("--out", help=_OUT_HELP.format("the failures"))
    s.set_defaults(func=cmd_validate)

    s = command(
        "onboard",
        "validate and import a folder of tables, parents first",
        "toolkit onboard sample_data --dry-run            # no secret, no network",
        "toolkit onboard sample_data --journal onboard.jsonl --out results.csv",
        "toolkit onboard firm/ --on-invalid skip           # import the valid rows",
    )
    s.add_argument("dir", help=f"folder of import tables ({_TABLE_FILES}), as for validate")
    s.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and count the requests per table; send nothing, need no secret",
    )
    s.add_argument("--journal", help="journal file: a re-run skips what it already sent")
    s.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")
    s.add_argument(
        "--on-invalid",
        choices=["raise", "skip"],
        default="raise",
        help="raise: send nothing when any row is invalid (default); skip: send the valid rows",
    )
    s.add_argument("--out", help=_OUT_HELP.format("every row's result"))
    s.set_defaults(func=cmd_onboard)

    s = command(
        "export",
        "export released entries to a folder",
        "toolkit export --after 2024-03-01 --on-or-before 2024-04-01 --out out/march",
    )
    s.add_argument("--after", required=True, help="releasedAfter (ISO 8601; naive = UTC)")
    s.add_argument("--on-or-before", required=True, help="releasedOnOrBefore")
    s.add_argument("--out", required=True,
                   help="folder (parquet: OUT/entries and OUT/codes; csv) or .xlsx file")
    s.add_argument("--format", choices=["parquet", "csv", "xlsx"], default="parquet",
                   help="file format (default parquet)")
    s.add_argument("--window", help="pandas offset of the sub-windows (parquet default 1D)")
    s.add_argument("--encoding", default="utf-8",
                   help="CSV encoding; utf-8-sig lets Excel show accents (default utf-8)")
    s.add_argument("--overwrite", action="store_true",
                   help="replace an earlier export at --out (otherwise refused, exit 2)")
    s.set_defaults(func=cmd_export)

    s = command(
        "sync",
        "incrementally sync released time into Delta tables at PATH",
        "toolkit sync out/time --since 2026-11-01",
        "toolkit sync out/time",
        "toolkit sync out/time --status",
        "toolkit sync out/time --compact",
    )
    s.add_argument("path", help="the sync folder (entries/ and codes/ Delta tables)")
    s.add_argument("--since", help="releasedAfter: needed the first time; default the watermark")
    s.add_argument("--until", help="releasedOnOrBefore; default now minus --lag")
    s.add_argument("--window", default="1D", help="window size, a pandas offset (default 1D)")
    s.add_argument("--lag", default=DEFAULT_LAG,
                   help=f"how far --until stays behind now (default {DEFAULT_LAG})")
    s.add_argument("--batch-rows", type=int, default=100_000,
                   help="entries of consecutive windows written per commit (default 100000)")
    s.add_argument("--status", action="store_true", help="print watermark, rows and versions")
    s.add_argument("--compact", action="store_true", help="compact small files (optimize)")
    s.set_defaults(func=cmd_sync)

    s = command(
        "pending",
        "write the release-pending entries to a folder",
        "toolkit pending --out out/pending --format csv",
    )
    s.add_argument("--out", required=True, help="folder to write entries/ and codes/ to")
    s.add_argument("--format", choices=["parquet", "csv", "xlsx"], default="parquet",
                   help="file format (default parquet)")
    s.add_argument("--overwrite", action="store_true", help="replace an earlier export")
    s.set_defaults(func=cmd_pending)

    s = command(
        "acknowledge",
        "acknowledge released entries listed in a file",
        "toolkit acknowledge acks.csv --journal acks.jsonl --out ack-results.xlsx",
    )
    s.add_argument(
        "file",
        help=f"{_TABLE_FILES} with userId, entryId (or _id), outcome (succeeded/failed), "
        "externalId (succeeded rows), errors (failed rows; ;-separated)",
    )
    s.add_argument("--journal", help="journal file: a re-run skips what it already sent")
    s.add_argument("--out", help=_OUT_HELP.format("every row's result"))
    s.set_defaults(func=cmd_acknowledge)

    s = command(
        "reconcile",
        "compare exported or synced entries with a billing extract, entry by entry",
        "toolkit reconcile out/time billing.csv                 # a folder from toolkit sync",
        "toolkit reconcile out/march billing.xlsx --out rec.xlsx  # from toolkit export",
        "toolkit reconcile out/time ids-and-hours.csv --duration hours --duration-unit hours",
        "toolkit reconcile out/time billing.csv --date 'Date worked' --dayfirst",
    )
    s.epilog += (
        "\n\nonly the values the billing file holds are compared (duration, workDate, matter"
        "\nby default); exit status 0 every entry matched, 1 some differ, 2 bad input"
    )
    s.add_argument(
        "export",
        metavar="EXPORT",
        help="a synced folder (toolkit sync), an exported folder or .xlsx (toolkit export), "
        f"or one table of entries ({_TABLE_FILES})",
    )
    s.add_argument(
        "billing",
        metavar="BILLING",
        help=f"the billing extract, one row per record: {_TABLE_FILES}",
    )
    s.add_argument(
        "--key",
        choices=["auto", "_id", "entryId", "externalId"],
        default="auto",
        help="the entry column the billing key refers to (default auto: the one it hits most)",
    )
    s.add_argument(
        "--billing-key",
        metavar="COL",
        help="billing column holding the key (default the first of entryId, _id, externalId)",
    )
    s.add_argument(
        "--billing-id",
        metavar="COL",
        help="billing record id column (default billingId or recordId if present)",
    )
    defaults = {"duration": "duration", "date": "workDate", "matter": "matter"}
    what = {"duration": "duration", "date": "date worked", "matter": "matter"}
    for name in COMPARISONS:
        s.add_argument(
            f"--{name}",
            metavar="COL",
            help=f"billing column with the {what[name]} (default {defaults[name]} if present, "
            "else not compared)",
        )
    s.add_argument(
        "--duration-unit",
        choices=["seconds", "minutes", "hours"],
        default="seconds",
        help="unit of the billing durations (default seconds)",
    )
    s.add_argument(
        "--tolerance-seconds",
        type=float,
        default=0,
        metavar="S",
        help="largest duration difference still counted as equal (default 0)",
    )
    s.add_argument(
        "--dayfirst",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="read text dates that are not ISO 8601 day first (--dayfirst: 03/04/2026 is "
        "3 April) or month first (--no-dayfirst); without either, such dates are read only "
        "when they read the same both ways",
    )
    s.add_argument(
        "--out", help="also write every reconciliation row to this file: .csv, .xlsx or .parquet"
    )
    s.set_defaults(func=cmd_reconcile)

    for name in ("star", "unstar"):
        s = command(
            name,
            f"{name} initiatives for a timekeeper",
            f"toolkit {name} TK-101 M-1001-001 M-1001-002",
            f"toolkit {name} --file stars.csv --out {name}-results.csv",
        )
        s.add_argument("timekeeper", nargs="?", metavar="TK", help="timekeeperExternalId")
        s.add_argument("ids", nargs="*", metavar="ID", help="initiativeExternalId(s)")
        s.add_argument(
            "--file",
            help=f"{_TABLE_FILES} with initiativeExternalId (and timekeeperExternalId, else TK)",
        )
        s.add_argument("--out", help=_OUT_HELP.format("every row's result"))
        s.set_defaults(func=cmd_star)

    s = command(
        "starred",
        "list a timekeeper's starred initiatives",
        "toolkit starred TK-101",
        "toolkit starred TK-101 --out starred.xlsx",
    )
    s.add_argument("timekeeper", metavar="TK", help="timekeeperExternalId")
    s.add_argument("--limit", type=int, default=2500, help="page size (default 2500)")
    s.add_argument("--out", help="write the list to this file: .csv, .xlsx or .parquet")
    s.set_defaults(func=cmd_starred)

    s = command("demo", "run the whole flow on a sandbox", "toolkit demo --out out")
    s.add_argument("--out", default="out", help="folder for the demo's files (default out)")
    s.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")
    s.set_defaults(func=cmd_demo)

    firms_cli.add_arguments(command("firms", "many firms from one firms.toml: their status"))
    s = command("lab", "JupyterLab with the sandbox running", "toolkit lab --seed sample_data")
    s.add_argument("--seed", default="sample_data", help="folder of sample CSV files to load")
    s.add_argument("--db", default=None, help="SQLite file of the sandbox (default: temporary)")
    s.set_defaults(func=cmd_lab)
    return p


def _setting_of(url: str, settings: Settings | None) -> tuple[str, str]:
    """(host, the TOOLKIT_* variable whose address the URL starts with) for a message."""
    host = urlsplit(url).netloc or url
    if settings is not None:
        for name in ("auth_url", "ingestion_url", "time_url"):
            base = getattr(settings, name)
            if base and url.startswith(base.rstrip("/")):
                return host, ENV_KEYS[name]
    return host, "TOOLKIT_AUTH_URL / TOOLKIT_TIME_URL"


def _explain(exc: ToolkitError, args: argparse.Namespace | None) -> str:
    """One line saying what went wrong and which setting to check."""
    settings = getattr(args, "settings", None)
    env_file = getattr(args, "env_file", ".env")
    if isinstance(exc, AuthError):
        problem = exc.problem or {}
        code = problem.get("error") or ("invalid_client" if exc.status == 401 else None)
        token_url = settings is not None and exc.url.startswith(settings.urls["auth"])
        if code == "invalid_client" or token_url:
            return (
                f"the identity service refused the application's credentials "
                f"({code or exc.status}: {exc.detail}); check TOOLKIT_CLIENT_ID and "
                f"TOOLKIT_CLIENT_SECRET in {env_file} or the environment"
                + ("" if code != "invalid_audience" else ", and TOOLKIT_AUDIENCE")
            )
        return f"{exc} (check the permissions of TOOLKIT_CLIENT_ID)"
    if isinstance(exc, TransportError):
        host, var = _setting_of(exc.url, settings)
        return (
            f"no answer from {host} ({exc}); check {var} in {env_file} and that the "
            "service is running and reachable"
        )
    if isinstance(exc, ApiError):
        return str(exc)
    return str(exc)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status (:data:`EXIT_CODES`): 0 all done, 1 some rows invalid or failed, 2 a
        usage or input error, 130 interrupted. Bad input never ends in a traceback.

    Example:
        >>> main(["validate", "sample_data"])  # doctest: +SKIP
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "sandbox":
        return cmd_sandbox(argv[1:])
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, already printed)
        return exc.code if isinstance(exc.code, int) else 2
    args.argv = argv
    if _main_thread():  # SIGTERM stops a run as Ctrl+C does
        signal.signal(signal.SIGTERM, _raise_interrupt)
    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        warnings.showwarning = _show_warning
        try:
            return args.func(args)
        except Interrupted as exc:
            if exc.result is not None:
                key = "entryId" if args.command == "acknowledge" else ""
                return _interrupted(exc, args, key=key)
            print("interrupted", file=sys.stderr)
            return 130
        except ToolkitError as exc:
            print(f"error: {_explain(exc, args)}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return 130


def console() -> None:
    """The ``toolkit`` executable: :func:`main`, and after an interrupt a prompt exit.

    An interrupted run has already closed its journal and printed its summary; the process
    then ends at once instead of tearing the interpreter down (about a second with pandas and
    pyarrow loaded), so Ctrl+C ends the command within the second it promises.

    Example:
        >>> console()  # doctest: +SKIP
    """
    code = main()
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise SystemExit(code)


if __name__ == "__main__":
    console()
