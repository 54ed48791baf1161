"""MkDocs hooks: the reference and the command line pages are written from the code itself.

``<!-- public-api -->`` in a page becomes one mkdocstrings entry per public name of
``toolkit.__all__`` (grouped as :data:`GROUPS` says), so a name added to the package is in the
reference the next build; ``<!-- public-modules -->`` one entry per public module
(:data:`MODULES`); ``<!-- deprecated -->`` the table of the names kept one release and the one
way replacing each; ``<!-- cli-help -->`` becomes ``toolkit --help`` and the help of every
command, as argparse prints them.

The pacing page's ``<!-- pacing-constants -->`` becomes the
table of the pacer's constants, read from ``toolkit/_bulk/budget.py`` (name, value, unit and
reason, by mechanism), and ``<!-- pacing-measured -->`` the simulated bench's tables and one
picture per case, drawn by this build (``DOCS_EXECUTE=true``, as ``make docs``; about 30 s).
:class:`DocstringMarkup` is a griffe extension (mkdocs.yml).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from importlib import import_module
from pathlib import Path
from typing import Any

import griffe
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

import toolkit
from toolkit._cli import parser as cli_parser
from toolkit._core.windows import RENAMED

#: heading -> the public names under it, in order; any name of ``toolkit.__all__`` left out
#: here lands under "Other names"
GROUPS: dict[str, list[str]] = {
    "The client": ["Client", "connect", "Settings", "Connection"],
    "Validate, plan and import": [
        "validate",
        "load_folder",
        "ValidationReport",
        "Plan",
        "OnboardReport",
        "schemas",
        "codesets",
    ],
    "Export and sync": ["Export", "SyncReport", "read_sync"],
    "Reconcile": ["reconcile", "Reconciliation", "read_ledes"],
    "Errors": [
        "errors",
        "ToolkitError",
        "ConfigError",
        "ValidationError",
        "ApiError",
        "AuthError",
        "NotFoundError",
        "ConflictError",
        "RateLimitError",
        "ServerError",
        "TransportError",
        "PaginationError",
        "FlattenError",
        "Interrupted",
        "ConcurrentWriteError",
        "JournalInUseError",
    ],
}


#: the public modules documented whole on their own page (``toolkit.errors`` and
#: ``toolkit.schemas`` are names of ``toolkit.__all__``: they are on the API page)
MODULES = [
    "toolkit.notebook",
    "toolkit.testing",
    "toolkit.sandbox",
    "toolkit.firms",
    "toolkit.dagster",
]


#: a Sphinx cross-reference role (the package's docstrings use them: ``:meth:`close```)
_ROLE = re.compile(r":(?:meth|func|class|attr|mod|data|exc|obj):`~?([^`]+)`")


class DocstringMarkup(griffe.Extension):
    """Read the package's docstrings as they are written for ``help()`` and Jupyter's ``?``:
    Google's singular ``Example:`` section as ``Examples:`` (griffe would render it as an
    admonition of quotes), and a Sphinx role as code (``:meth:`~toolkit.Client.close``` as
    ``close``; Markdown would show the role as text)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = re.sub(r"^(\s*)Example:[ \t]*$", r"\1Examples:", obj.docstring.value, flags=re.M)
            obj.docstring.value = _ROLE.sub(_as_code, text)


def _as_code(role: re.Match[str]) -> str:
    """``~a.b.c`` as ``c`` (Sphinx's short form), anything else as written."""
    target = role.group(1)
    return f"`{target.rsplit('.', 1)[-1]}`" if role.group(0).find("`~") >= 0 else f"`{target}`"


def public_names() -> list[str]:
    """Every public name of the package, as ``toolkit.__all__`` lists it."""
    return [n for n in toolkit.__all__ if not n.startswith("_")]


def _path(name: str) -> str:
    """The dotted path where ``name`` is defined (mkdocstrings documents it there)."""
    module = toolkit._EXPORTS[name]
    return module if module.rsplit(".", 1)[-1] == name else f"{module}.{name}"


def api_markdown() -> str:
    """The reference entries of every public name, grouped."""
    listed = [n for names in GROUPS.values() for n in names]
    others = [n for n in public_names() if n not in listed and n != "__version__"]
    groups = {**GROUPS, **({"Other names": others} if others else {})}
    out = []
    for heading, names in groups.items():
        out.append(f"## {heading}\n")
        for name in names:
            options = ""
            if name == "errors":  # its classes are entries of their own, below
                options = "\n    options:\n      members: false"
            elif name in ("schemas", "codesets"):
                options = f"\n    options:{_members(_path(name))}"
            elif name == "Client":  # its methods are made by a decorator: read them live
                options = '\n    options:\n      force_inspection: true\n      filters: ["!^_"]'
            out.append(f"::: {_path(name)}{options}\n")
    return "\n".join(out)


def _members(module: str) -> str:
    """The option naming a module's members: its ``__all__`` (the modules are loaded by
    inspection for the client's entry, so the names they import would show too)."""
    return f"\n      members: {list(import_module(module).__all__)}"


def modules_markdown() -> str:
    """One entry per public module, its members (``__all__``) included."""
    entries = [f"::: {m}\n    options:\n      heading_level: 2{_members(m)}\n" for m in MODULES]
    return "\n".join(entries)


def deprecated_markdown() -> str:
    """The names kept one release, each with the one way that replaces it."""
    rows = [f"| `{old}` (a release window's end) | `{new}` |" for old, new in RENAMED.items()]
    return "\n".join(["| kept one release (warns) | the one way |", "|---|---|", *rows])


def cli_markdown() -> str:
    """``toolkit --help`` and every command's ``--help``, as argparse prints them."""
    parser = cli_parser()
    sub = next(a for a in parser._actions if a.choices and "validate" in a.choices)
    out = ["## toolkit\n", "```text", parser.format_help().rstrip(), "```\n"]
    for name, command in sub.choices.items():
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            command.print_help()
        out += [f"## toolkit {name}\n", "```text", buffer.getvalue().rstrip(), "```\n"]
    return "\n".join(out)


class _Doctests(Preprocessor):
    """Fence the doctest blocks of docstrings (``>>>`` lines and their output) as Python."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fenced = False
        for line in lines:
            opening = re.match(r"^(\s*)>>> ", line)
            if opening and not fenced:
                out.append(f"{opening.group(1)}```pycon")
                fenced = True
            elif fenced and not line.strip():
                out.append(out[-1][: len(out[-1]) - len(out[-1].lstrip())] + "```")
                fenced = False
            out.append(line)
        if fenced:
            out.append("```")
        return out


class DoctestExtension(Extension):
    """Registers :class:`_Doctests` before the fenced code blocks are read."""

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 -- Markdown's name
        md.preprocessors.register(_Doctests(md), "doctests", 40)


def on_config(config: Any, **kwargs: Any) -> Any:
    """Add :class:`DoctestExtension` to every Markdown the site renders, docstrings too."""
    config.markdown_extensions.append(DoctestExtension())
    return config


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Fill the markers of a page."""
    if "<!-- public-api -->" in markdown:
        markdown = markdown.replace("<!-- public-api -->", api_markdown())
    if "<!-- public-modules -->" in markdown:
        markdown = markdown.replace("<!-- public-modules -->", modules_markdown())
    if "<!-- deprecated -->" in markdown:
        markdown = markdown.replace("<!-- deprecated -->", deprecated_markdown())
    if "<!-- cli-help -->" in markdown:
        markdown = markdown.replace("<!-- cli-help -->", cli_markdown())
    if "<!-- pacing-constants -->" in markdown:
        markdown = markdown.replace("<!-- pacing-constants -->", pacing_constants_markdown())
    if "<!-- pacing-measured -->" in markdown:
        markdown = markdown.replace("<!-- pacing-measured -->", pacing_measured_markdown())
    return markdown


DOCS = Path(__file__).resolve().parent
#: one constant (or several, comma-separated) of the pacer and its comment
_CONSTANT = re.compile(r"^(_?[A-Z][A-Z_0-9, ]*) = (.+?)(?:  # (.*))?$")


def pacing_constants_markdown() -> str:
    """The pacer's constants as tables, one per mechanism (its ``# --`` comments), from the code.

    Returns:
        Markdown.
    """
    source = (DOCS.parent / "toolkit" / "_bulk" / "budget.py").read_text(encoding="utf-8")
    rows: list[list[str]] = []
    doc, after_constant = "", False
    for line in source.split("\n@dataclass")[0].splitlines():
        found = _CONSTANT.match(line)
        if line.startswith("# -- "):
            rows.append(["", "", f"**{line[5:]}**"])
        elif line.startswith("#: "):
            doc = line[3:]
        elif found is not None:
            names, value, comment = found.groups()
            rows.append([f"`{names}`", f"`{value}`", comment or doc])
            doc = ""
        elif line.startswith("# ") and after_constant:
            rows[-1][2] += " " + line[2:]  # its comment continued
            continue
        after_constant = found is not None
    table = ["| name | value | unit and reason |", "|---|---|---|"]
    return "\n".join(table + ["| " + " | ".join(r) + " |" for r in rows])


#: the simulated bench's figures, drawn once a build (``None``: not yet)
_PACING: dict[str, Any] | None = None


def on_pre_build(config: Any, **kwargs: Any) -> None:
    """Draw the simulated pacing cases into docs/pacing/ (``make docs`` only: they take 30 s)."""
    global _PACING
    if os.environ.get("DOCS_EXECUTE") == "true" and _PACING is None:
        from bench import pacing_sim

        with contextlib.redirect_stdout(io.StringIO()):
            _PACING = pacing_sim.report(10, DOCS / "pacing")


def pacing_measured_markdown() -> str:
    """The simulated bench's tables and pictures, or where to get them.

    Returns:
        Markdown.
    """
    if _PACING is None:
        return "*(drawn by `make docs`: this build did not run the simulated bench.)*"
    from bench.pacing_sim import FAULTS  # the goals, stated once

    free = _PACING["fault_free"]
    out = [
        f"Random 429/500/503 faults, no limit, 20 s, seeds 0 to 9; accepted answers a second "
        f"as a share of the fault-free rate ({free:,.0f} a second):",
        "",
        "| faults | Retry-After | worst (seed) | median | goal |",
        "|---|---|---:|---:|---:|",
    ]
    for f in _PACING["faults"]:
        retry = "absent" if f["retry_after"] is None else f"{f['retry_after']:g} s"
        goal = FAULTS[f["faults"]]
        out.append(
            f"| {f['faults']:.0%} | {retry} | {f['worst']:.0%} ({f['seed']}) | "
            f"{f['median']:.0%} | {goal:.0%} |"
        )
    out += [
        "",
        "Limits (accepted from 5 s into each step to its end, refused over the whole step):",
        "",
        "| case | step from | limit /s | accepted /s | share | refused |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for f in _PACING["limits"]:
        out.append(
            f"| {f['case']} | {f['from']:.0f} s | {f['limit']:.1f} | {f['accepted']:.1f} | "
            f"{f['accepted'] / f['limit']:.0%} | {f['refused']:.1%} |"
        )
    out += ["", "The pictures, one per case:", ""]
    for png in sorted((DOCS / "pacing").glob("*.png")):
        out += [f"![{png.stem.replace('-', ' ')}](pacing/{png.name})", ""]
    return "\n".join(out)


#: a code cell's toolbar holding only nbval's tags (which cells ``make test`` checks): for the
#: tests, not the reader, so the notebook pages leave it out
_NBVAL_TOOLBAR = re.compile(
    r'<div class="celltoolbar">\s*<div class="button_container tags_button_container">\s*'
    r'<span class="tag-container">(?:\s*<span class="cell-tag">nbval-[\w-]+</span>)+\s*'
    r"</span>\s*</div>\s*</div>"
)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """A notebook page without nbval's tags (the reader's cells, as JupyterLab shows them)."""
    return _NBVAL_TOOLBAR.sub("", output)
