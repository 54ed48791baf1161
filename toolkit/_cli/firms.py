"""``toolkit firms status FIRMS.toml [--out F]``: one row per firm, from local files only."""

from __future__ import annotations

import argparse

import pandas as pd

from toolkit._cli.common import cut, out_path, write_out
from toolkit.firms import load, status

_TIMES = ("last_push", "last_error_at", "watermark")


def run(args: argparse.Namespace) -> int:
    """Print the firms' status, and write it to ``--out``.

    Returns:
        0; 1 when a firm is failing.

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = run(argparse.Namespace(firms_file=firms_file, out=None))
    >>> code, out.getvalue().split()[0]
    (0, 'firm')
    """
    out = out_path(args)
    frame = status(load(args.firms_file))
    # times to the second, missing values as -
    shown = frame.assign(**{col: frame[col].dt.strftime("%Y-%m-%d %H:%M:%SZ") for col in _TIMES})
    shown["last_error"] = shown["last_error"].map(cut)
    shown["watermark_age"] = shown["watermark_age"].astype(str).replace("NaT", None)
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(shown.astype(object).where(shown.notna(), "-").to_string(index=False))
    if out is not None:
        # Excel keeps no time zone: UTC, named so
        written = frame.assign(**{col: frame[col].dt.tz_localize(None) for col in _TIMES})
        written["watermark_age"] = written["watermark_age"].dt.total_seconds()
        names = {col: f"{col}_utc" for col in _TIMES} | {"watermark_age": "watermark_age_seconds"}
        write_out(written.rename(columns=names), out, "firm(s)")
    return 1 if bool((frame["state"] == "failing").any()) else 0
