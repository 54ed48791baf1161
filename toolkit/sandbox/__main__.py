"""``python -m toolkit.sandbox``: start the sandbox in the foreground (see :mod:`.cli`)."""

from .cli import main

raise SystemExit(main())
