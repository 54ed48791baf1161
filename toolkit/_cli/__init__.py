"""The ``toolkit`` command line: :func:`console` (the executable), :func:`main` and :func:`parser`;
a command's module (and pandas) loads once the arguments are read."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from importlib import import_module
from types import FrameType

from toolkit._cli.options import COMMANDS, parser
from toolkit._cli.options import EXIT_CODES as EXIT_CODES


def _stop_while_loading(signum: int, frame: FrameType | None) -> None:
    """Ctrl+C (or SIGTERM) before the command started: nothing was done yet."""
    sys.stderr.write("\ninterrupted while starting: nothing was read, sent or written\n")
    sys.stderr.flush()
    os._exit(130)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops a run as Ctrl+C does."""
    raise KeyboardInterrupt(f"signal {signum}")


def _main_thread() -> bool:
    """Whether signal handlers may be installed (only in the main thread)."""
    return threading.current_thread() is threading.main_thread()


def _loaded() -> None:
    """The command is loaded: Ctrl+C raises ``KeyboardInterrupt`` again."""
    if _main_thread() and signal.getsignal(signal.SIGINT) is _stop_while_loading:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _command_index(argv: list[str]) -> int | None:
    """Where the command word is, past the global options (``-q``, ``--env-file F``)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "--env-file" else 1
    return i if i < len(argv) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Returns:
        The exit status (:data:`EXIT_CODES`); bad input never ends in a traceback.

    >>> main(["validate", "no/such/folder"])  # the message goes to stderr
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    index = _command_index(argv)
    if index is not None and argv[index] == "sandbox":  # the sandbox's own command line
        sandbox = import_module("toolkit.sandbox._cli")
        _loaded()
        return int(sandbox.main(argv[index + 1 :]))
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, already printed)
        return exc.code if isinstance(exc.code, int) else 2
    args.argv = argv
    app = import_module("toolkit._cli.app")  # pandas, pyarrow: a second or two
    # a command without its own module runs in the one of its name
    command = import_module(f"toolkit._cli.{COMMANDS[args.command].module or args.command}")
    _loaded()
    if _main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)
    return int(app.run(command, args))


def console() -> None:
    """The ``toolkit`` executable: :func:`main`, SIGINT handled from first to last.

    >>> console()  # doctest: +SKIP
    """
    if _main_thread():
        signal.signal(signal.SIGINT, _stop_while_loading)
        signal.signal(signal.SIGTERM, _stop_while_loading)
    try:
        code = main()
    except KeyboardInterrupt:  # between the command's own handlers: nothing half-done
        print("\ninterrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:  # stdout closed early (`| head`): the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush too
        code = 141  # as a program ended by SIGPIPE, quietly
    if _main_thread():  # a Ctrl+C from here on ends quietly with the same status
        signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    raise SystemExit(code)
