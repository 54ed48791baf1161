"""The ``toolkit`` command line.

::

    toolkit sandbox [--port 8765] [--seed sample_data] ...   run the local sandbox
    toolkit validate DIR                                      check a folder of import tables
    toolkit onboard DIR [--dry-run] [--journal F] [--workers N]
    toolkit export --after T --on-or-before T --out DIR [--format parquet|csv] [--window 1D]
    toolkit pending --out DIR
    toolkit acknowledge FILE [--journal F]
    toolkit star TK ID... | --file F        (unstar likewise)
    toolkit starred TK [--out F]
    toolkit demo [--out out]                                  the whole flow on a sandbox
    toolkit lab                                               JupyterLab with a sandbox running

Commands that talk to the service read ``TOOLKIT_*`` variables and ``--env-file`` (default
``.env``, which ``toolkit sandbox`` writes). The exit status is 0 when everything succeeded,
1 when any row failed or was skipped, 2 for bad usage or configuration, 130 when interrupted
(Ctrl+C or SIGTERM: sending stops at once, the summary and the command that resumes are
printed).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from toolkit.client import Client
from toolkit.demo import run_demo
from toolkit.errors import ConfigError, Interrupted, ToolkitError, ValidationError
from toolkit.validation import load_folder, validate

__all__ = ["console", "main"]


def _client(args: argparse.Namespace) -> Client:
    return Client.from_env(args.env_file, workers=getattr(args, "workers", None) or 8)


def _print_frame(df: pd.DataFrame, max_rows: int = 30) -> None:
    with pd.option_context("display.max_rows", max_rows, "display.width", 160):
        print(df.to_string(max_rows=max_rows))


def _read_table(path: str) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file")
    try:
        if p.suffix == ".parquet" or p.is_dir():
            return pd.read_parquet(p)
        if p.suffix in (".xlsx", ".xls"):
            return pd.read_excel(p, dtype=str)
        return pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, ImportError) as exc:
        raise ConfigError(f"{p}: cannot read it as a table ({type(exc).__name__}: {exc})") from None


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
    report = validate(**load_folder(args.dir))
    print(report)
    if not report.ok:
        _print_frame(report.failures, 200)
    return 0 if report.ok else 1


def cmd_onboard(args: argparse.Namespace) -> int:
    client = _client(args)
    try:
        report = client.onboard(
            args.dir,
            journal=args.journal,
            workers=args.workers,
            dry_run=args.dry_run,
            on_invalid=args.on_invalid,
            progress=not args.quiet,
        )
    except ValidationError as exc:
        print(f"validation failed, nothing sent: {exc}", file=sys.stderr)
        _print_frame(exc.failure_cases, 200)
        return 1
    except Interrupted as exc:
        report = getattr(exc, "report", None)
        if report is not None:
            print(report.counts.to_string())
        return _interrupted(exc, args)
    print(report)
    if not report.ok and not args.dry_run:
        _print_frame(report.failures[["table", "row", "externalId", "status", "error"]])
    return 0 if report.ok or args.dry_run else 1


def cmd_export(args: argparse.Namespace) -> int:
    client = _client(args)
    export = client.export_entries(args.after, args.on_or_before, window=args.window)
    _write(export, args.out, args.format)
    print(export)
    return 0


def cmd_pending(args: argparse.Namespace) -> int:
    export = _client(args).release_pending()
    _write(export, args.out, args.format)
    print(export)
    return 0


def _write(export, out: str, fmt: str) -> None:  # noqa: ANN001
    if fmt == "csv":
        export.to_csv(out)
    else:
        export.to_parquet(out)
    print(f"wrote {len(export.entries)} entries and {len(export.codes)} codes to {out}/")


def cmd_acknowledge(args: argparse.Namespace) -> int:
    client = _client(args)
    frame = _read_table(args.file)
    try:
        res = client.acknowledge(frame, journal=args.journal, progress=not args.quiet)
    except ValidationError as exc:
        print(f"validation failed, nothing sent: {exc}", file=sys.stderr)
        _print_frame(exc.failure_cases, 200)
        return 1
    except Interrupted as exc:
        return _interrupted(exc, args, key="entryId")
    print(res.groupby(["outcome", "status"], observed=True).size().to_string())
    if not res["ok"].all():
        _print_frame(res[~res["ok"]][["userId", "entryId", "outcome", "httpStatus", "error"]])
    return 0 if res["ok"].all() else 1


def cmd_star(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.file:
        frame = _read_table(args.file)
        if "timekeeperExternalId" not in frame:
            if not args.timekeeper:
                print("--file without a timekeeperExternalId column needs TK", file=sys.stderr)
                return 2
            frame = frame.assign(timekeeperExternalId=args.timekeeper)
        res = getattr(client, args.command)(frame, progress=not args.quiet)
    else:
        if not args.timekeeper or not args.ids:
            print("give TK and at least one ID, or --file", file=sys.stderr)
            return 2
        res = getattr(client, args.command)(args.timekeeper, args.ids, progress=not args.quiet)
    print(res.groupby(["status"], dropna=False).size().to_string())
    if not res["ok"].all():
        _print_frame(res[~res["ok"]])
    return 0 if res["ok"].all() else 1


def cmd_starred(args: argparse.Namespace) -> int:
    res = _client(args).starred(args.timekeeper, limit=args.limit)
    if args.out:
        out = Path(args.out)
        res.to_parquet(out) if out.suffix == ".parquet" else res.to_csv(out, index=False)
        print(f"wrote {len(res)} starred initiatives to {out}")
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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="toolkit", description=__doc__.split("\n")[0])
    p.add_argument("--env-file", default=".env", help="file of TOOLKIT_* settings")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    # the same two options after the command too (`toolkit onboard DIR -q`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--env-file", default=argparse.SUPPRESS, help="file of TOOLKIT_* settings")
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars"
    )
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:  # noqa: A002
        return sub.add_parser(name, help=help, parents=[common])

    sub.add_parser("sandbox", help="run the local sandbox (see `toolkit sandbox --help`)")

    s = command("validate", help="check a folder of import tables")
    s.add_argument("dir")
    s.set_defaults(func=cmd_validate)

    s = command("onboard", help="validate and import a folder of tables")
    s.add_argument("dir")
    s.add_argument("--dry-run", action="store_true")
    s.add_argument("--journal", help="journal file for resumable runs")
    s.add_argument("--workers", type=int, default=8)
    s.add_argument("--on-invalid", choices=["raise", "skip"], default="raise")
    s.set_defaults(func=cmd_onboard)

    s = command("export", help="export released entries to a folder")
    s.add_argument("--after", required=True, help="releasedAfter (ISO 8601; naive = UTC)")
    s.add_argument("--on-or-before", required=True, help="releasedOnOrBefore")
    s.add_argument("--out", required=True)
    s.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    s.add_argument("--window", help="pandas offset, e.g. 1D, to request in sub-windows")
    s.set_defaults(func=cmd_export)

    s = command("pending", help="write the release-pending entries to a folder")
    s.add_argument("--out", required=True)
    s.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    s.set_defaults(func=cmd_pending)

    s = command("acknowledge", help="acknowledge entries listed in a CSV/Parquet file")
    s.add_argument("file")
    s.add_argument("--journal")
    s.set_defaults(func=cmd_acknowledge)

    for name in ("star", "unstar"):
        s = command(name, help=f"{name} initiatives for a timekeeper")
        s.add_argument("timekeeper", nargs="?")
        s.add_argument("ids", nargs="*")
        s.add_argument("--file", help="CSV with initiativeExternalId (and timekeeperExternalId)")
        s.set_defaults(func=cmd_star)

    s = command("starred", help="list a timekeeper's starred initiatives")
    s.add_argument("timekeeper")
    s.add_argument("--limit", type=int, default=2500)
    s.add_argument("--out")
    s.set_defaults(func=cmd_starred)

    s = command("demo", help="run the whole flow on a sandbox")
    s.add_argument("--out", default="out")
    s.add_argument("--workers", type=int, default=8)
    s.set_defaults(func=cmd_demo)

    s = command("lab", help="JupyterLab with the sandbox running")
    s.add_argument("--seed", default="sample_data")
    s.add_argument("--db", default=None)
    s.set_defaults(func=cmd_lab)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status.

    Example:
        >>> main(["validate", "sample_data"])  # doctest: +SKIP
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "sandbox":
        return cmd_sandbox(argv[1:])
    args = _parser().parse_args(argv)
    args.argv = argv
    if _main_thread():  # SIGTERM stops a run as Ctrl+C does
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return args.func(args)
    except Interrupted as exc:
        if exc.result is not None:
            return _interrupted(exc, args, key="entryId" if args.command == "acknowledge" else "")
        print("interrupted", file=sys.stderr)
        return 130
    except ToolkitError as exc:
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
