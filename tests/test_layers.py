"""The package's layers, read from its imports with ``ast``: the folders are the layers.

From the bottom: ``core/`` (with ``errors.py``) imports no other toolkit folder; ``bulk/`` only
``core``; the operations (``ingress/``, ``egress/``, ``starring/``, ``reconciliation/``) only
what is below them, never each other; the facade (``client.py``, ``schemas.py``, ``testing.py``,
the package's name table) above them; ``cli/`` and ``demo.py`` on top. ``toolkit.sandbox``
stands beside them and shares nothing. No cycle, no import inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from toolkit._core.connection import Connection
from toolkit._core.settings import Settings
from toolkit._egress import fetch as exports
from toolkit._ingress import imports

ROOT = Path(__file__).resolve().parents[1] / "toolkit"

#: top-level module or folder (without ``toolkit.``) -> layer; a module may import its own
#: layer or lower ones, and an operation folder only itself and the layers below operations
LAYERS: dict[str, int] = {
    "errors": 0,
    "_core": 0,
    "_bulk": 1,
    "_ingress": 2,
    "_egress": 2,
    "_starring": 2,
    "_reconciliation": 2,
    "testing": 3,
    "schemas": 3,
    "_client": 3,
    "_demo": 4,
    "notebook": 4,
    "firms": 4,
    "dagster": 4,
    "_cli": 5,
    "__main__": 5,
}
OPERATIONS = {"_ingress", "_egress", "_starring", "_reconciliation"}
FACADE = LAYERS["_client"]


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
    if module == "toolkit":  # the package's lazy table of public names: the facade
        return LAYERS["_client"]
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
        if mine is None or module == "toolkit":  # the name table names every layer's exports
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
        if target == "toolkit._client"
    ]
    assert below == []


def test_no_function_level_imports_of_toolkit_modules():
    # the CLI and the demo may defer the sandbox (an optional extra: fastapi, uvicorn)
    deferred = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        for target, line, in_function in _imports(module, path)
        if in_function
        and not (target.startswith("toolkit.sandbox") and (_layer(module) or 0) >= LAYERS["_demo"])
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


@pytest.mark.parametrize("module", ["toolkit._client"])
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


def _folder(module: str) -> str:
    return module.removeprefix("toolkit.").split(".")[0]


def test_operations_never_import_each_other():
    crossing = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        if _folder(module) in OPERATIONS
        for target, line, _ in _imports(module, path)
        if _folder(target) in OPERATIONS and _folder(target) != _folder(module)
    ]
    assert crossing == []


def test_core_imports_no_other_toolkit_folder_and_bulk_only_core():
    allowed = {"_core": {"_core", "errors"}, "_bulk": {"_bulk", "_core", "errors"}}
    wrong = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        if _folder(module) in allowed
        for target, line, _ in _imports(module, path)
        if _folder(target) not in allowed[_folder(module)]
    ]
    assert wrong == []


def test_the_cli_calls_the_facade_and_the_folders_public_names_only():
    # ``toolkit._cli`` imports ``toolkit``, the client, errors, the demo and the operation
    # folders' packages (their ``__all__``), never a module inside core, bulk or an operation
    deep = [
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        if _folder(module) == "_cli"
        for target, line, _ in _imports(module, path)
        if _folder(target) in {"_core", "_bulk", *OPERATIONS} and target.count(".") > 1
    ]
    assert deep == []


def test_operations_work_on_a_bare_connection_without_a_client(sandbox):
    # a new customer, reached through a Connection alone: no Client is built anywhere
    creds = sandbox.admin.create_customer("Connection-only firm")
    conn = Connection(
        Settings(
            creds["customerId"],
            creds["clientId"],
            creds["clientSecret"],
            sandbox.url,
            sandbox.url,
            audience=creds["audience"],
        ),
        retries=1,
    )
    clients = pd.DataFrame(
        [{"externalId": "C-1", "name": "Acme", "callSign": "ACME", "description": "Widgets"}]
    )
    result = imports.import_table(conn, "clients", clients, progress=False)
    assert result["ok"].tolist() == [True]
    assert result["httpStatus"].tolist() == [201]
    assert len(exports.release_pending(conn).entries) == 0


def test_no_module_imports_another_module_s_private_name():
    # a leading underscore says "mine": the module's own, never borrowed by another one
    borrowed = [
        f"{module}:{node.lineno} imports {node.module}.{alias.name}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        and ((node.module or "").startswith("toolkit") or node.level)  # (relative: the sandbox's)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert borrowed == []


def test_implementation_modules_are_private_by_name():
    # the public face: the package, its public modules and the sandbox package; every other
    # module lives in a folder or file whose name starts with an underscore (as httpx's)
    public = {"toolkit", "toolkit.errors", "toolkit.schemas", "toolkit.notebook"}
    public |= {"toolkit.testing", "toolkit.firms", "toolkit.dagster", "toolkit.sandbox"}
    exposed = [
        module
        for module in MODULES
        if module not in public and not any(part.startswith("_") for part in module.split(".")[1:])
    ]
    assert exposed == []


def test_no_function_is_longer_than_80_lines_unless_its_docstring_says_why():
    # a function's span less its docstring's lines; "long because" in the docstring allows more
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("sandbox/"):
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            doc = ast.get_docstring(fn, clean=False)
            first = fn.body[0]
            skip = first.end_lineno - first.lineno + 1 if doc is not None else 0
            n = fn.end_lineno - fn.lineno + 1 - skip
            if n > 80 and "long because" not in (doc or ""):
                long.append(f"{rel}: {fn.name} has {n} lines")
    assert long == []
