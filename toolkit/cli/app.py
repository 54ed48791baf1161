"""The ``toolkit`` command line.

::

    toolkit sandbox [--port 8765] [--seed DIR | --demo] ...   run the local sandbox
    toolkit validate DIR [--out F]                            check a folder of import tables
    toolkit onboard DIR [--dry-run] [--journal F] [--strict] [--workers N] [--out F]
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
``.env`` in the current folder or the nearest parent holding one, as python-dotenv's
``find_dotenv`` finds it; ``toolkit sandbox`` writes it; a ``--env-file`` given must exist).
Table files may be CSV (any of ``,`` ``;`` tab ``|``; UTF-8 with or without BOM), ``.xlsx`` or
Parquet (:mod:`toolkit.ingress.readers`); ``--out`` writes ``.csv``, ``.xlsx`` or ``.parquet``
by its extension, with ``row`` (0-based data row) and ``line`` (the input file's line, header =
1). Exit status: see :data:`EXIT_CODES`; on Ctrl+C or SIGTERM sending stops at once and the
summary and the command that resumes are printed.

This module holds the parser and :func:`main`; each command group is a module beside it with
``COMMANDS`` (help and examples), ``add_arguments(parser)`` and ``run(args)``:
:mod:`~toolkit.cli.validate`, :mod:`~toolkit.cli.onboard`, :mod:`~toolkit.cli.export` (export,
pending), :mod:`~toolkit.cli.sync`, :mod:`~toolkit.cli.acknowledge`,
:mod:`~toolkit.cli.reconcile`, :mod:`~toolkit.cli.starring` (star, unstar, starred),
:mod:`~toolkit.cli.sandbox` (sandbox, demo, lab); :mod:`~toolkit.cli.common` holds what they
share. They call :class:`toolkit.Client` and the folders' package-level names only.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

from toolkit.cli import (
    acknowledge,
    export,
    firms,
    onboard,
    reconcile,
    sandbox,
    starring,
    sync,
    validate,
)
from toolkit.cli.common import ENV_FILE_HELP, epilog, explain, interrupted
from toolkit.egress import sync_status
from toolkit.errors import InputWarning, Interrupted, ToolkitError

__all__ = ["EXIT_CODES", "console", "main"]

#: exit status -> meaning (also shown by ``toolkit --help``)
EXIT_CODES: dict[int, str] = {
    0: "everything done (every row valid, sent or already journaled)",
    1: "some rows invalid, failed, skipped, unknown or in conflict (see the table printed, "
    "or --out)",
    2: "usage or input error: bad arguments, an unreadable file, missing or refused "
    "settings, an unreachable service",
    130: "interrupted (Ctrl+C or SIGTERM): the rows not sent are listed, with the command "
    "that resumes",
}


#: the commands in the order ``toolkit --help`` lists them -> the module that adds their
#: arguments (``add_arguments``), runs them (``run``) and holds their help (``COMMANDS``);
#: ``toolkit sandbox`` comes first and is handed to the sandbox's own command line
_COMMANDS: dict[str, ModuleType] = {
    "validate": validate,
    "onboard": onboard,
    "export": export,
    "sync": sync,
    "pending": export,
    "acknowledge": acknowledge,
    "reconcile": reconcile,
    "star": starring,
    "unstar": starring,
    "starred": starring,
    "demo": sandbox,
    "firms": firms,
    "lab": sandbox,
}


def _main_thread() -> bool:
    """Whether this is the main thread (only it may install signal handlers)."""
    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _parser() -> argparse.ArgumentParser:
    exits = "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())
    p = argparse.ArgumentParser(
        prog="toolkit",
        description="Move DataFrames through the time-billing connector interface.",
        epilog=f"exit status:\n{exits}\n\n"
        + epilog(
            "toolkit sandbox --demo                  # a local service with the sample firm",
            "toolkit validate sample_data",
            "toolkit onboard sample_data --journal out/onboard.jsonl",
            "toolkit <command> --help                # each command's options and examples",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--env-file", default=None, help=ENV_FILE_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    # the same two options after the command too (`toolkit onboard DIR -q`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--env-file", default=argparse.SUPPRESS, help=ENV_FILE_HELP)
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")

    help_, examples = sandbox.SANDBOX
    sub.add_parser(
        "sandbox",
        help=help_,
        epilog=epilog(*examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for name, group in _COMMANDS.items():
        help_, examples = group.COMMANDS[name]
        s = sub.add_parser(
            name,
            help=help_,
            description=help_,
            parents=[common],
            epilog=epilog(*examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        group.add_arguments(s)
        s.set_defaults(func=group.run)
    return p


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _command_index(argv: list[str]) -> int | None:
    """Where the command word is, past the global options (``-q``, ``--env-file F``)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "--env-file" else 1
    return i if i < len(argv) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status (:data:`EXIT_CODES`): 0 all done, 1 some rows invalid or failed, 2 a
        usage or input error, 130 interrupted. Bad input never ends in a traceback.

    Example:
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     main(["validate", "sample_data"])
        >>> main(["validate", "no/such/folder"])  # the message goes to stderr
        2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command_index(argv)
    if command is not None and argv[command] == "sandbox":  # the sandbox's own command line
        return sandbox.run_sandbox(argv[command + 1 :])
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
            code: int = args.func(args)
            return code
        except Interrupted as exc:
            if exc.result is not None:
                key = "entryId" if args.command == "acknowledge" else ""
                return interrupted(exc, args, key=key)
            print("interrupted", file=sys.stderr)
            return 130
        except ToolkitError as exc:
            print(f"error: {explain(exc, args)}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"\ninterrupted: {_what_was_written(args)}", file=sys.stderr)
            return 130


def _what_was_written(args: argparse.Namespace) -> str:
    """What a command stopped by Ctrl+C (with no partial result frame) left behind."""
    command = args.command
    out = getattr(args, "out", None)
    if command == "sync":
        try:
            mark = sync_status(args.path)["watermark"]
        except (ToolkitError, OSError):
            mark = None
        upto = f"up to {mark.isoformat()}" if mark is not None else "none yet"
        return (
            f"{args.path} holds every window committed before the interrupt ({upto}); "
            "nothing half-written: run the same command to continue from there"
        )
    if command == "export" and getattr(args, "format", None) == "parquet" and out:
        return (
            f"{out}/entries and {out}/codes hold only the windows written before the "
            "interrupt (incomplete): run the command again with --overwrite"
        )
    if command in ("export", "pending") and out:
        return f"nothing was written to {out}"
    if out:
        return f"{command} stopped before it finished; nothing was written to {out}"
    return f"{command} stopped before it finished"


def console() -> None:
    """The ``toolkit`` executable: :func:`main`, and after an interrupt a prompt exit.

    An interrupted run has already closed its journal and printed its summary; the process
    then ends at once instead of tearing the interpreter down (about a second with pandas and
    pyarrow loaded), so Ctrl+C ends the command within the second it promises.

    Example:
        >>> console()  # doctest: +SKIP
    """
    try:
        code = main()
    except KeyboardInterrupt:  # between the command's own handlers: nothing half-done
        print("\ninterrupted", file=sys.stderr)
        code = 130
    if _main_thread():  # a Ctrl+C from here on ends quietly with the same status
        signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise SystemExit(code)


if __name__ == "__main__":
    console()
