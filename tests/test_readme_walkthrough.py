"""The README walked through as a newcomer does: ``make demo``, ``make sandbox``, then every
```python block in order, in a fresh copy of the repository: no error, no untracked file.

A block line that cannot run as written (a ``[...]`` placeholder for the reader's own values)
must carry ``# readme-test: skip``, and a block that does not belong to the walk-through (a
notebook's cell) follows a ``<!-- readme-test: skip (why) -->`` line; the test leaves those out
and refuses an unmarked ``[...]``, so a placeholder is always a deliberate choice.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit import _demo
from toolkit._core.settings import ENV_KEYS
from toolkit._demo import run_demo
from toolkit.sandbox import running

REPO = Path(__file__).resolve().parent.parent
PLACEHOLDER = "[...]"
SKIP = "# readme-test: skip"
SKIP_BLOCK = "<!-- readme-test: skip"


def python_blocks(text: str) -> list[str]:
    """The README's ```python blocks, in order, with the lines marked :data:`SKIP` and the
    blocks after a :data:`SKIP_BLOCK` line left out."""
    found = re.findall(r"^([^\n]*)\n```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    kept = []
    for before, block in found:
        if before.startswith(SKIP_BLOCK):
            continue
        lines = [line for line in block.splitlines() if SKIP not in line]
        unmarked = [line for line in lines if PLACEHOLDER in line]
        assert not unmarked, f"a placeholder the README does not mark with {SKIP!r}: {unmarked}"
        kept.append("\n".join(lines) + "\n")
    return kept


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def fresh_copy(dest: Path) -> Path:
    """The working tree's files (tracked and not ignored, as they are now) in a new repository
    whose one commit holds them all: what a fresh clone of this state would be."""
    listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(
        dest,
        "-c",
        "user.name=readme",
        "-c",
        "user.email=readme@example.invalid",
        "commit",
        "-q",
        "-m",
        "fresh copy",
    )
    return dest


def test_readme_python_blocks_run_in_order_after_the_demo_and_leave_no_untracked_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = fresh_copy(tmp_path / "repo")
    blocks = python_blocks((repo / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    for var in ENV_KEYS.values():  # only the .env `make sandbox` writes
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(_demo, "DEMO_ENTRIES", 40)  # a shorter run, the same steps
    assert run_demo("out", workers=8) == 0, capsys.readouterr().out  # make demo
    # make sandbox: serve what the demo left, seeded from sample_data, credentials in .env
    with running(seed=repo / "sample_data", db=repo / "out" / "sandbox.db") as sb:
        sb.write_env(repo / ".env")
        scope: dict[str, object] = {"__name__": "readme"}
        for number, block in enumerate(blocks, start=1):
            exec(compile(block, f"README.md python block {number}", "exec"), scope)  # noqa: S102
    pending = scope["pending"]
    assert len(pending) == 3  # type: ignore[arg-type]  # the acknowledge example acted on some
    assert _git(repo, "status", "--porcelain") == ""
