"""``python -m toolkit``: the command line."""

from toolkit.cli import main

raise SystemExit(main())
