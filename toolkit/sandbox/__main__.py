"""``python -m toolkit.sandbox``: start the sandbox in the foreground (see :mod:`.cli`)."""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
