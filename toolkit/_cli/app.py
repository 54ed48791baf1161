"""Running a parsed command: warnings and errors one line each, and what an interrupt left."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from types import ModuleType

from toolkit._cli.common import explain, interrupted
from toolkit._egress import RENAMED, sync_status
from toolkit.errors import ConfigError, InputWarning, Interrupted, ToolkitError


def run(command: ModuleType, args: argparse.Namespace) -> int:
    """Run ``command.run(args)``: an error is one line (2), an interrupt says what resumes (130).

    The library's log lines (a request that got no answer) are not printed by Python's
    last-resort handler while it runs: the command prints its own account of each, once.

    Returns:
        The exit status.

    >>> from toolkit._cli import parser, validate
    >>> args = parser().parse_args(["validate", "no/such/folder"])
    >>> run(validate, args)  # the message goes to stderr
    2
    """
    quiet, logger = logging.NullHandler(), logging.getLogger("toolkit")
    logger.addHandler(quiet)
    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        warnings.filterwarnings("always", "--", DeprecationWarning)  # a flag kept one release
        warnings.showwarning = lambda message, *_: print(f"warning: {message}", file=sys.stderr)
        try:
            _renamed_flags(args)
            return int(command.run(args))
        except Interrupted as exc:
            if exc.result is not None:
                return interrupted(
                    exc, args, key="entryId" if args.command == "acknowledge" else ""
                )
            print("interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # stdout closed early (`| head`): the executable ends quietly
            raise
        except (ToolkitError, OSError) as exc:
            print(f"error: {explain(exc, args)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"\ninterrupted: {_what_was_written(args)}", file=sys.stderr)
            return 130
        finally:
            logger.removeHandler(quiet)


def _renamed_flags(args: argparse.Namespace) -> None:
    """Read a flag kept one release (:data:`~toolkit._core.windows.RENAMED`) as its one flag,
    with a ``DeprecationWarning`` naming it."""
    for old, new in RENAMED.items():
        if old.startswith("--") and (value := getattr(args, old[2:], None)) is not None:
            dest = new[2:].replace("-", "_")
            if getattr(args, dest) is not None:
                raise ConfigError(f"{old} is {new} kept one release: give {new} only")
            message = f"{old} is deprecated and goes in the next release; use {new}"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            setattr(args, dest, value)


def _what_was_written(args: argparse.Namespace) -> str:
    """What a command stopped by Ctrl+C (with no partial result) left behind."""
    command, out = args.command, getattr(args, "out", None)
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
    if command == "demo":
        return (
            f"{out}/sandbox.db holds what the steps before the interrupt did (an earlier "
            f"database was moved aside, as printed above, and an earlier {out}/export and "
            f"chart are kept until a run replaces them): run toolkit demo --out {out} again "
            "to start afresh"
        )
    if command in ("export", "pending") and out:
        return f"nothing was written to {out}"
    if out:
        return f"{command} stopped before it finished; nothing was written to {out}"
    return f"{command} stopped before it finished"
