"""The example notebooks are committed clean: no outputs, no execution counts.

``make test`` runs them through nbval with ``--nbval-lax``; outputs saved in the file would be
noise in review (and hold ids, ports and timestamps of someone's run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
EXPECTED = {
    "01_onboarding.ipynb",
    "02_export_and_release.ipynb",
    "03_starring.ipynb",
    "04_reconciliation.ipynb",
}


def _code_cells(path: Path) -> list[dict]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def test_the_four_walkthroughs_exist() -> None:
    assert EXPECTED <= {path.name for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path: Path) -> None:
    dirty = [i for i, cell in enumerate(_code_cells(path)) if cell.get("outputs")]
    assert not dirty, f"{path.name}: code cells {dirty} have outputs; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_execution_counts(path: Path) -> None:
    counted = [
        i for i, cell in enumerate(_code_cells(path)) if cell.get("execution_count") is not None
    ]
    assert not counted, f"{path.name}: code cells {counted} have execution counts"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_checks_results(path: Path) -> None:
    cells = _code_cells(path)
    sources = ["".join(cell["source"]) for cell in cells]
    checked = [c for c in cells if "nbval-check-output" in c["metadata"].get("tags", [])]
    assert checked, "no cell is tagged nbval-check-output"
    assert any("assert " in s for s in sources), "no cell asserts anything"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_reader_sees_no_test_marker_in_the_cells(path: Path) -> None:
    # nbval's marker is the cell's tag (metadata), not a comment every reader would see
    shown = [i for i, cell in enumerate(_code_cells(path)) if "NBVAL" in "".join(cell["source"])]
    assert shown == [], f"{path.name}: code cells {shown} show an nbval marker"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_closes_its_sandbox(path: Path) -> None:
    sources = ["".join(cell["source"]) for cell in _code_cells(path)]
    assert "toolkit.notebook.stop()" in sources[-1]  # the sandbox toolkit.connect() started


def test_notebook_02_names_the_dtype_its_durations_have() -> None:
    import re

    import toolkit
    from toolkit.testing import fake_export_entries

    cells = json.loads(NOTEBOOKS[1].read_text(encoding="utf-8"))["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    said = re.search(r"durations\s(?:and\s+counts\s+)?are\s+`?([\w ]+?)`?[\s,(]", text)
    entries = toolkit.Export.from_records(fake_export_entries(3)).entries
    assert said is not None and said.group(1) == str(entries["incrementDurationInSeconds"].dtype)


def _prints(nodes: list) -> bool:  # noqa: ANN001
    import ast

    return any(
        isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"
        for node in nodes
        for n in ast.walk(node)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_cell_that_prints_on_its_own_sandbox_says_something_on_a_service_too(path: Path) -> None:
    # run on `make sandbox` (sb is None) a cell must not fall silent, nor show empty results
    # without saying why
    import ast

    silent = []
    for i, cell in enumerate(_code_cells(path)):
        source = "".join(cell["source"])
        for node in ast.walk(ast.parse(source)):
            own = isinstance(node, ast.If) and ast.unparse(node.test) == "sb is not None"
            if own and _prints(node.body) and not _prints(node.orelse):
                silent.append(i)
    assert silent == []
    if path.name.startswith("04"):  # acknowledging what an earlier notebook acknowledged
        assert any("acks.empty" in "".join(c["source"]) for c in _code_cells(path))
