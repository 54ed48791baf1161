"""``toolkit lab``: a clear word when JupyterLab is missing, and a working folder outside the
repository's tracked files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolkit.sandbox
from toolkit._cli import main
from toolkit.sandbox import Sandbox, write_env_file

REPO = Path(__file__).resolve().parents[2]


def test_lab_without_the_notebooks_extra_names_the_extra_and_exits_2(tmp_path: Path) -> None:
    blocked = (  # as if jupyterlab were not installed: its import fails
        "import sys; sys.modules['jupyterlab'] = None; from toolkit._cli import main; "
        "sys.exit(main(['lab']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'timebill-toolkit[notebooks]'" in done.stderr
    assert "Traceback" not in done.stderr and "No module named" not in done.stderr
    assert not (tmp_path / "out").exists()  # nothing started, nothing written


def test_lab_roots_jupyter_in_a_working_folder_with_copies_of_the_notebooks(
    tmp_path: Path,
    sandbox: Sandbox,
    no_toolkit_env: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    write_env_file(tmp_path / ".env", sandbox.env())
    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks")
    shutil.copytree(REPO / "sample_data", tmp_path / "sample_data")
    monkeypatch.chdir(tmp_path)
    started: list[list[str]] = []

    def jupyter(cmd: list[str], env: dict[str, str]) -> int:  # the process JupyterLab would be
        started.append(cmd)
        (Path(cmd[4]) / "notebooks" / "analyst.ipynb").write_text("{}")  # the analyst's file
        return 0

    monkeypatch.setattr(subprocess, "call", jupyter)
    assert main(["lab"]) == 0
    work = tmp_path / "out" / "lab"
    assert started[0][1:5] == ["-m", "jupyter", "lab", str(Path("out") / "lab")]
    assert "JupyterLab's folder: out/lab" in capsys.readouterr().out
    assert (work / "notebooks" / "02_export_and_release.ipynb").read_bytes() == (
        tmp_path / "notebooks" / "02_export_and_release.ipynb"
    ).read_bytes()
    assert (work / "sample_data" / "clients.csv").is_file()  # ../sample_data holds there
    assert not (tmp_path / "notebooks" / "analyst.ipynb").exists()
    (work / "notebooks" / "01_onboarding.ipynb").write_text("{}")  # the analyst's edits
    assert main(["lab"]) == 0
    assert (work / "notebooks" / "01_onboarding.ipynb").read_text() == "{}"  # kept


def test_make_lab_runs_toolkit_lab_whose_folder_git_ignores() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "$(PY) -m toolkit lab\n" in makefile
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "out/lab/notebooks/analyst.ipynb"], cwd=REPO, timeout=30
    )
    assert ignored.returncode == 0


# -- make lab reuses a running sandbox and never writes over .env ------------------------------


def _capture_jupyter(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """Replace the JupyterLab process by a recorder of its environment."""
    calls: list[dict[str, str]] = []

    def call(cmd: list[str], env: dict[str, str]) -> int:
        assert cmd[1:4] == ["-m", "jupyter", "lab"]
        calls.append(env)
        return 0

    monkeypatch.setattr(subprocess, "call", call)  # what toolkit._cli.sandbox starts
    return calls


def test_lab_reuses_the_running_sandbox_the_env_file_names(
    project: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    before = (project / ".env").read_bytes()
    calls = _capture_jupyter(monkeypatch)

    def no_new_sandbox(**kwargs: Any) -> None:
        raise AssertionError("make lab started a sandbox of its own")

    monkeypatch.setattr(toolkit.sandbox, "running", no_new_sandbox)
    assert main(["lab"]) == 0
    assert (project / ".env").read_bytes() == before
    assert calls[0]["TOOLKIT_USE_ENV"] == "1"
    assert f"using the sandbox running at {sandbox.url}" in capsys.readouterr().out


def test_lab_with_no_sandbox_running_leaves_the_env_file_alone(
    tmp_path: Path, no_toolkit_env: None, unused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    env = toolkit.sandbox.env_for(dead, "c", "i", "s", "aud")
    write_env_file(tmp_path / ".env", env)
    before = (tmp_path / ".env").read_bytes()
    monkeypatch.chdir(tmp_path)
    calls = _capture_jupyter(monkeypatch)
    assert main(["lab", "--seed", str(REPO / "sample_data")]) == 0
    assert (tmp_path / ".env").read_bytes() == before
    assert calls[0]["TOOLKIT_TIME_URL"] not in (dead, "")
    assert calls[0]["TOOLKIT_USE_ENV"] == "1"
