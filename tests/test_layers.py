"""The package's layers, read from its imports with ``ast``: no cycle, nothing imports upward.

Layers from the bottom: settings and the connection; the data's shapes (schemas, payloads,
flattening, the export object, validation); the operations over a connection; the ``Client``
facade; the CLI and demo on top. ``toolkit.sandbox`` stands beside them and shares nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from toolkit import exports, imports
from toolkit.connection import Connection
from toolkit.settings import Settings

ROOT = Path(__file__).resolve().parents[1] / "toolkit"

#: module (without ``toolkit.``) -> layer; a module may import its own layer or lower ones
LAYERS: dict[str, int] = {
    "errors": 0,
    "http": 0,
    "auth": 1,
    "settings": 2,
    "connection": 3,
    "schemas": 4,
    "flatten": 4,
    "payloads": 5,
    "export": 5,
    "validation": 5,
    "testing": 5,
    "bulk": 6,
    "imports": 7,
    "exports": 7,
    "acknowledgements": 7,
    "starring": 7,
    "users": 7,
    "reconciliation": 7,
    "sync": 7,
    "pacing": 6,
    "readers": 4,
    "client": 8,
    "demo": 9,
    "cli": 10,
    "__main__": 10,
}
FACADE = LAYERS["client"]


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module an import names: ``toolkit.schemas.check`` -> ``toolkit.schemas``."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported toolkit module, line, inside a function) for every import of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("toolkit"):
                        found.append((_resolve(alias.name), child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    # the package a relative import starts from, then up ``level - 1`` more
                    pkg = module.split(".")
                    if path.name != "__init__.py":
                        pkg = pkg[:-1]
                    pkg = pkg[: len(pkg) - (child.level - 1)]
                    base = ".".join([*pkg, base]) if base else ".".join(pkg)
                if base.startswith("toolkit"):
                    for alias in child.names:
                        found.append((_resolve(f"{base}.{alias.name}"), child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return [(m, line, f) for m, line, f in found if m and m != module]


def _layer(module: str) -> int | None:
    if module == "toolkit":  # the package's lazy table of public names: the very top
        return LAYERS["cli"]
    name = module.removeprefix("toolkit.").split(".")[0]
    return LAYERS.get(name)


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if module == "toolkit":  # the package's lazy name table sits above everything
            continue
        graph[module] = {m for m, _, _ in _imports(module, path) if m != "toolkit"}
    return graph


def test_every_toolkit_module_has_a_layer():
    unplaced = [
        m
        for m in MODULES
        if m != "toolkit" and not m.startswith("toolkit.sandbox") and _layer(m) is None
    ]
    assert unplaced == []


def test_no_import_cycle_among_toolkit_modules():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def dfs(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                dfs(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node)
    assert cycles == []


def test_no_module_imports_a_layer_above_it():
    upward = []
    for module, path in MODULES.items():
        mine = _layer(module)
        if mine is None:
            continue
        for target, line, _ in _imports(module, path):
            theirs = _layer(target)
            if target.startswith("toolkit.sandbox") or theirs is None:
                continue
            if theirs > mine:
                upward.append(f"{module}:{line} imports {target}")
    assert upward == []


def test_nothing_below_the_facade_imports_the_client():
    below = [
        f"{module}:{line}"
        for module, path in MODULES.items()
        if (_layer(module) or 0) < FACADE or module.startswith("toolkit.sandbox")
        for target, line, _ in _imports(module, path)
        if target == "toolkit.client"
    ]
    assert below == []


def test_no_function_level_imports_of_toolkit_modules():
    # the CLI and the demo may defer the sandbox (an optional extra: fastapi, uvicorn)
    deferred = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        for target, line, in_function in _imports(module, path)
        if in_function and not (target.startswith("toolkit.sandbox") and _layer(module) in (9, 10))
        and not module.startswith("toolkit.sandbox")
    ]
    assert deferred == []


def test_the_sandbox_shares_nothing_with_the_toolkit():
    shared = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        if module.startswith("toolkit.sandbox")
        for target, line, _ in _imports(module, path)
        if not target.startswith("toolkit.sandbox")
    ]
    assert shared == []


@pytest.mark.parametrize("module", ["toolkit.client"])
def test_facade_has_no_import_inside_a_function(module):
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner = [
        node.lineno
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert inner == []


def test_no_sandbox_module_is_over_800_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / "sandbox").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert long == {}


def test_operations_work_on_a_bare_connection_without_a_client(sandbox):
    # a new customer, reached through a Connection alone: no Client is built anywhere
    creds = sandbox.admin.create_customer("Connection-only firm")
    conn = Connection(
        Settings(creds["customerId"], creds["clientId"], creds["clientSecret"], sandbox.url,
                 sandbox.url, audience=creds["audience"]),
        retries=1,
    )
    clients = pd.DataFrame(
        [{"externalId": "C-1", "name": "Acme", "callSign": "ACME", "description": "Widgets"}]
    )
    result = imports.import_table(conn, "clients", clients, progress=False)
    assert result["ok"].tolist() == [True]
    assert result["httpStatus"].tolist() == [201]
    assert len(exports.release_pending(conn).entries) == 0
