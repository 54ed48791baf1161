"""The command line: ``toolkit COMMAND``; :func:`main` returns the exit status."""

from toolkit.cli.app import EXIT_CODES, console, main

__all__ = ["EXIT_CODES", "console", "main"]
