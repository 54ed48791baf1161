"""``python -m toolkit``: the command line."""

from toolkit.cli.app import console

console()
