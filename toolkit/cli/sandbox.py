"""The sandbox at hand: ``toolkit sandbox`` (handed to :mod:`toolkit.sandbox.cli`),
``toolkit demo`` (the whole flow on a sandbox) and ``toolkit lab`` (JupyterLab with a sandbox
running). The sandbox is an optional extra (FastAPI, uvicorn): it is imported only when run."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence

from toolkit.cli.common import command_of
from toolkit.demo import run_demo

__all__ = ["COMMANDS", "SANDBOX", "add_arguments", "run", "run_sandbox"]

#: ``toolkit sandbox``: (help, examples); its arguments are the sandbox's own
SANDBOX: tuple[str, tuple[str, ...]] = (
    "run the local sandbox (see `toolkit sandbox --help`)",
    ("toolkit sandbox --seed sample_data --db out/sandbox.db",),
)

#: command -> (help, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "demo": ("run the whole flow on a sandbox", ("toolkit demo --out out",)),
    "lab": ("JupyterLab with the sandbox running", ("toolkit lab --seed sample_data",)),
}


def run_sandbox(argv: Sequence[str]) -> int:
    """``toolkit sandbox ARGS``: the sandbox's own command line.

    Args:
        argv: the arguments after ``sandbox``.

    Returns:
        The sandbox's exit status.

    Example:
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     try:
        ...         run_sandbox(["--help"])
        ...     except SystemExit as done:  # --help prints the usage and exits
        ...         code = done.code
        >>> code, out.getvalue().split()[:2]
        (0, ['usage:', 'toolkit'])
    """
    from toolkit.sandbox.cli import main as sandbox_main

    return sandbox_main(list(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``toolkit demo`` or ``toolkit lab`` (by the parser's prog).

    Args:
        parser: the command's parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="toolkit lab")
        >>> add_arguments(parser)
        >>> parser.parse_args([]).seed
        'sample_data'
    """
    if command_of(parser) == "lab":
        parser.add_argument("--seed", default="sample_data",
                            help="folder of sample CSV files to load")
        parser.add_argument("--db", default=None,
                            help="SQLite file of the sandbox (default: temporary)")
        return
    parser.add_argument("--out", default="out", help="folder for the demo's files (default out)")
    parser.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")


def run(args: argparse.Namespace) -> int:
    """Run the demo, or JupyterLab over a sandbox (``args.command`` is ``demo`` or ``lab``).

    Args:
        args: the parsed arguments.

    Returns:
        The demo's or JupyterLab's exit status.

    Example:
        >>> run(argparse.Namespace(command="demo", out="out", workers=8))  # doctest: +SKIP
        0
    """
    if args.command == "lab":
        return _lab(args)
    return run_demo(out=args.out, workers=args.workers)


def _lab(args: argparse.Namespace) -> int:
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
