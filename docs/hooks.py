"""MkDocs hooks: the reference and the command line pages are written from the code itself.

``<!-- public-api -->`` in a page becomes one mkdocstrings entry per public name of
``toolkit.__all__`` (grouped as :data:`GROUPS` says), so a name added to the package is in the
reference the next build; ``<!-- cli-help -->`` becomes ``toolkit --help`` and the help of every
command, as argparse prints them.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

from griffe import DocstringSectionKind
from griffe._internal.docstrings import google
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

import toolkit
from toolkit.cli import parser as cli_parser

# the package writes Google's "Example:" sections with doctest lines; griffe reads only
# "Examples:" as such (the singular becomes an admonition whose ">>>" lines render as quotes)
google._section_kind.setdefault("example", DocstringSectionKind.examples)

#: heading -> the public names under it, in order; any name of ``toolkit.__all__`` left out
#: here lands under "Other names"
GROUPS: dict[str, list[str]] = {
    "The client": ["Client", "connect", "Settings", "Connection"],
    "Validate and import": ["validate", "load_folder", "ValidationReport", "OnboardReport",
                            "schemas"],
    "Export, sync and acknowledge": ["Export", "SyncReport", "read_sync", "acknowledge",
                                     "flatten_export", "flatten_pending"],
    "Reconcile": ["reconcile", "Reconciliation"],
    "Errors": ["errors", "ToolkitError", "ConfigError", "ValidationError", "ApiError",
               "AuthError", "NotFoundError", "ConflictError", "RateLimitError", "ServerError",
               "TransportError", "PaginationError", "FlattenError", "Interrupted",
               "ConcurrentWriteError", "JournalInUseError"],
}


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
            if name in ("errors", "schemas"):
                options = "\n    options:\n      members: false"
            elif name == "Client":  # its methods are made by a decorator: read them live
                options = "\n    options:\n      force_inspection: true"
            out.append(f"::: {_path(name)}{options}\n")
    return "\n".join(out)


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
    if "<!-- cli-help -->" in markdown:
        markdown = markdown.replace("<!-- cli-help -->", cli_markdown())
    return markdown
