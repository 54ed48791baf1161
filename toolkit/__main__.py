"""``python -m toolkit``: the command line."""

from toolkit.cli import console

console()
