"""``python -m toolkit``: the command line (import-light: Ctrl+C is handled while it loads)."""

from toolkit._cli import console

if __name__ == "__main__":
    console()
