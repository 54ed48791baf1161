"""The command line: ``toolkit COMMAND``; :func:`main` returns the exit status.

This module is the import-light entry point (``toolkit = "toolkit.cli:console"`` and
``python -m toolkit``): :func:`console` installs its Ctrl+C and SIGTERM handler before pandas,
pyarrow and the commands load, so an interrupt in the first seconds ends with a short message
and exit status 130, never a ``KeyboardInterrupt`` traceback. ``main`` and ``EXIT_CODES`` load
:mod:`toolkit.cli.app` on first use.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from importlib import import_module
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.cli.app import EXIT_CODES, main

__all__ = ["EXIT_CODES", "console", "main"]


def _stop_while_loading(signum: int, frame: FrameType | None) -> None:
    """Ctrl+C (or SIGTERM) before the command started: nothing was done yet."""
    sys.stderr.write("\ninterrupted while starting: nothing was read, sent or written\n")
    sys.stderr.flush()
    os._exit(130)


def console() -> None:
    """The ``toolkit`` executable: SIGINT handled from its first instruction to its last.

    While the command line loads (pandas, pyarrow: a second or two) Ctrl+C prints one line and
    exits 130; then :func:`toolkit.cli.app.console` runs the command, which prints what an
    interrupted run did (and where its unsent rows went) and exits 130.

    Example:
        >>> console()  # doctest: +SKIP
    """
    if _main_thread():
        signal.signal(signal.SIGINT, _stop_while_loading)
        signal.signal(signal.SIGTERM, _stop_while_loading)
    app = import_module("toolkit.cli.app")
    if _main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    app.console()


def _main_thread() -> bool:
    """Whether signal handlers may be installed (only in the main thread)."""
    return threading.current_thread() is threading.main_thread()


def __getattr__(name: str) -> object:
    """``main`` and ``EXIT_CODES``, loaded from :mod:`toolkit.cli.app` on first use."""
    if name in ("main", "EXIT_CODES"):
        return getattr(import_module("toolkit.cli.app"), name)
    raise AttributeError(f"module 'toolkit.cli' has no attribute {name!r}")
