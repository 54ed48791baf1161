"""``toolkit demo`` (the whole flow on a sandbox) and ``toolkit lab`` (JupyterLab with one)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from toolkit import Connection, Settings
from toolkit._cli.common import env_file_of
from toolkit._demo import run_demo
from toolkit.errors import ToolkitError
from toolkit.notebook import SAMPLE_DATA


def run(args: argparse.Namespace) -> int:
    """Run the demo, or JupyterLab over a sandbox (``args.command``: ``demo`` or ``lab``).

    Returns:
        The demo's or JupyterLab's exit status.

    >>> run(argparse.Namespace(command="demo", out="out", workers=8))  # doctest: +SKIP
    0
    """
    return _lab(args) if args.command == "lab" else run_demo(out=args.out, workers=args.workers)


def _running_sandbox(name: str) -> Settings | None:
    """The settings of a sandbox on this machine the ``.env`` names, if it answers."""
    try:
        settings = Settings.from_env(name)
        if urlsplit(settings.urls["time"]).hostname not in ("127.0.0.1", "localhost", "::1"):
            return None
        Connection(settings, timeout=(2.0, 5.0), retries=0).auth.secret_token(retry=False)
    except ToolkitError:
        return None
    return settings


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails, or an import blocked in sys.modules
        return False


def _lab_folder(folder: str, source: str = ".") -> Path:
    """JupyterLab's folder: copies of ``notebooks/`` (kept once there), a link to sample_data."""
    work, src = Path(folder), Path(source)
    work.mkdir(parents=True, exist_ok=True)
    if (src / "notebooks").is_dir():
        (work / "notebooks").mkdir(exist_ok=True)
        for nb in sorted((src / "notebooks").glob("*.ipynb")):
            if not (work / "notebooks" / nb.name).exists():
                shutil.copy2(nb, work / "notebooks" / nb.name)
    data = work / "sample_data"
    if (src / "sample_data").is_dir() and not data.exists() and not data.is_symlink():
        try:
            data.symlink_to((src / "sample_data").resolve(), target_is_directory=True)
        except OSError:  # no symlinks here (Windows without the right): a copy
            shutil.copytree(src / "sample_data", data)
    return work


def _lab(args: argparse.Namespace) -> int:
    """JupyterLab over the sandbox the ``.env`` names if it runs, else its own (.env untouched)."""
    if not (_installed("jupyterlab") and _installed("jupyter_core")):
        print(
            "toolkit lab needs JupyterLab, which comes with the notebooks extra: pip install "
            "'timebill-toolkit[notebooks]' (in a clone of the repository, `make lab` installs it)",
            file=sys.stderr,
        )
        return 2
    work = _lab_folder(args.dir)
    print(
        f"JupyterLab's folder: {work} (your notebooks and files go there; the examples are "
        "copies of notebooks/, kept once changed: delete one to get it afresh)"
    )
    # the notebooks use the configured service (TOOLKIT_USE_ENV) instead of starting their own
    cmd = [sys.executable, "-m", "jupyter", "lab", str(work)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers often run as root
        cmd.append("--allow-root")
    settings = _running_sandbox(env_file_of(args))
    if settings is not None:
        print(
            f"using the sandbox running at {settings.urls['time']} (settings from "
            f"{settings.source})"
        )
        return subprocess.call(cmd, env={**os.environ, "TOOLKIT_USE_ENV": "1"})
    from toolkit.sandbox import running

    seed = args.seed or ("sample_data" if os.path.isdir("sample_data") else SAMPLE_DATA)
    with running(seed=seed, db=args.db) as sb:
        print(
            f"sandbox at {sb.url}, for JupyterLab only: its credentials are in JupyterLab's "
            "environment (.env is left as it is; `make sandbox` serves one for every command)"
        )
        return subprocess.call(cmd, env={**os.environ, **sb.env(), "TOOLKIT_USE_ENV": "1"})
