"""``make firms-demo`` stopped by SIGTERM (as ``make`` forwards it) stops ``dagster dev`` and
every process it started: the example runs it in a process group of its own and stops the
group. A shell with two children stands in for ``dagster dev``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _alive_in_group(pgid: int) -> list[int]:
    """Processes of the group that still run (zombies waiting for a reaper do not count)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


def test_sigterm_to_the_firms_demo_stops_dagster_dev_and_its_children(tmp_path: Path) -> None:
    stand_in = ["/bin/sh", "-c", "sleep 300 & sleep 300 & wait"]
    script = (
        "import sys, pathlib; sys.path.insert(0, 'examples/dagster'); import firms_demo; "
        f"sys.exit(firms_demo.run_until_stopped({stand_in!r}, {{}}, "
        f"pathlib.Path({str(tmp_path)!r}), grace=5))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "sh runs as process group N"
        pgid = int(line.split()[-1])
        assert _alive_in_group(pgid)  # the shell (and soon its two sleeps)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
        assert "stopping dagster dev" in proc.stdout.read()
        assert _alive_in_group(pgid) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
