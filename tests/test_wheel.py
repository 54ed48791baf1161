"""The built wheel without the repository: installed with ``[sandbox,excel]`` into a fresh
virtualenv outside the clone, ``toolkit demo`` and ``toolkit sandbox --demo`` run from an empty
folder on the sample firm the wheel carries; ``toolkit lab`` names the extra it lacks.

The wheel and sdist are built as ``make dist`` builds them (``uv build``); the packages come
from the lock, from uv's cache when it holds them (seconds), else from the index.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements" / "lock.txt"

pytestmark = pytest.mark.timeout(900)


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(found).is_file():
        pytest.skip("no uv (make installs it into .venv): the wheel cannot be built here")
    return found


def _run(cmd: list[str], timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)


def _clean_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH, no TOOLKIT_* and no virtualenv of the clone: only the wheel's venv."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin`` folder of a fresh virtualenv holding the built wheel with its extras."""
    uv = _uv()
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    built = _run([uv, "build", "-q", "--out-dir", str(dist), str(REPO)], 300)
    assert built.returncode == 0, built.stderr
    [wheel] = dist.glob("*.whl")
    assert list(dist.glob("*.tar.gz")), "make dist builds the sdist too"
    venv = root / "venv"
    made = _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], 120)
    assert made.returncode == 0, made.stderr
    install = [
        uv,
        "pip",
        "install",
        "-q",
        "--python",
        str(venv / "bin" / "python"),
        "-c",
        str(LOCK),
        f"{wheel}[sandbox,excel]",
    ]
    done = _run([*install[:3], "--offline", *install[3:]], 300)
    if done.returncode != 0:  # uv's cache lacks a package: from the index
        done = _run(install, 600)
    assert done.returncode == 0, done.stderr
    yield venv / "bin"


def test_the_wheel_carries_the_sample_firm_and_runs_the_demo_from_an_empty_folder(
    installed: Path, tmp_path: Path
) -> None:
    done = _run(
        [str(installed / "toolkit"), "demo", "--out", "out"],
        600,
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[ 1/" in done.stdout and "done in" in done.stdout
    assert (tmp_path / "out" / "sandbox.db").is_file()
    assert not (tmp_path / "sample_data").exists()  # read from the package, not copied


def test_the_wheel_s_sandbox_serves_the_sample_firm_with_demo(
    installed: Path, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [str(installed / "toolkit"), "sandbox", "--demo", "--port", "0", "--log-level", "warning"],
        cwd=tmp_path,
        env=_clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = [], ""
        assert proc.stdout is not None
        for line in proc.stdout:  # the ready line comes in seconds; the timeout guards it
            out.append(line)
            if line.startswith("Sandbox ready at"):
                break
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=60)
        printed = "".join(out) + rest
        assert proc.returncode == 0, printed + err
        served = r"Serving the demo customer with 20 clients, \d+ initiatives, 36 codes, 8 users"
        assert re.search(served, printed)
        assert "docs/sandbox.md" not in printed  # the wheel ships no docs/
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    helped = _run(
        [str(installed / "toolkit"), "sandbox", "--help"],
        60,
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert "--demo" in helped.stdout and "docs/sandbox.md" not in helped.stdout


def test_the_wheel_carries_the_utbms_code_sets(installed: Path, tmp_path: Path) -> None:
    done = _run(
        [str(installed / "toolkit"), "onboard", "--codeset", "utbms-litigation", "--dry-run"],
        120,
        cwd=tmp_path,
        env=_clean_env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plan: 67 request(s)" in done.stdout  # 3 code types, 64 codes


def test_the_wheel_s_lab_without_the_notebooks_extra_names_it(
    installed: Path, tmp_path: Path
) -> None:
    done = _run([str(installed / "toolkit"), "lab"], 120, cwd=tmp_path, env=_clean_env(tmp_path))
    assert done.returncode == 2
    assert "pip install 'timebill-toolkit[notebooks]'" in done.stderr
    assert "Traceback" not in done.stderr and "No module named" not in done.stderr


def test_make_dist_builds_the_wheel_and_the_sdist() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^dist: ", makefile, re.M) and "build -q --out-dir dist ." in makefile
    assert os.path.islink(REPO / "toolkit" / "sample_data")  # one copy: the link to it
