"""The documentation site: it builds with ``--strict``, and every public name has its entry.

The build here does not run the notebooks (``make docs`` does, against a sandbox of their own);
it renders them as committed, without outputs.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit
from toolkit._core.windows import RENAMED

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DOCS_EXECUTE": "false"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))


def test_every_public_name_of_the_package_has_a_reference_entry(site: Path) -> None:
    anchors = _anchors(site / "reference" / "api.html")
    missing = []
    for name in toolkit.__all__:
        if name == "__version__":
            continue
        module = toolkit._EXPORTS[name]
        path = module if module.rsplit(".", 1)[-1] == name else f"{module}.{name}"
        if path not in anchors:
            missing.append(name)
    assert missing == []


def test_every_public_client_method_has_a_reference_entry_with_its_docstring(
    site: Path,
) -> None:
    anchors = _anchors(site / "reference" / "api.html")
    members = [name for name, _ in inspect.getmembers(toolkit.Client) if not name.startswith("_")]
    assert "onboard" in members and "export_entries" in members
    assert [m for m in members if f"toolkit._client.Client.{m}" not in anchors] == []


def test_the_public_modules_have_their_reference_page(site: Path) -> None:
    anchors = _anchors(site / "reference" / "modules.html")
    for module in ("notebook", "testing", "sandbox", "firms", "dagster"):
        assert f"toolkit.{module}" in anchors, module
    assert "toolkit.testing.fake_export_entries" in anchors
    assert "toolkit.notebook.connect" in anchors


def test_the_jobs_page_names_one_way_per_job_the_window_names_kept_and_those_removed(
    site: Path,
) -> None:
    page = html.unescape((site / "jobs.html").read_text(encoding="utf-8"))
    for job in (
        "get a client",
        "validate",
        "plan",
        "import one table",
        "onboard a firm",
        "export released time",
        "sync into Delta tables",
        "read a sync",
        "acknowledge",
        "star",
        "list starred",
        "reconcile",
        "many firms",
    ):
        assert f"<td>{job}" in page, job
    kept, removed = page.split('id="kept-one-release"')[1].split('id="removed"')
    for name in RENAMED:  # the window's old names only; the others are retired
        assert f"<code>{name}</code>" in kept, name
    assert kept.count("<tr>") == len(RENAMED) + 1  # and the heading
    assert "retired after one release; use" in removed


def test_doctest_examples_render_as_code_not_as_a_quote(site: Path) -> None:
    page = (site / "reference" / "api.html").read_text(encoding="utf-8")
    assert "admonition" not in page and page.count("Examples:") > 20
    assert ":meth:" not in page and ":func:" not in page and ":class:" not in page


def test_the_command_line_page_holds_every_command_s_help(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for command in (
        "sandbox",
        "validate",
        "onboard",
        "export",
        "sync",
        "pending",
        "acknowledge",
        "reconcile",
        "star",
        "unstar",
        "starred",
        "demo",
        "firms",
        "lab",
    ):
        assert f"usage: toolkit {command}" in page, command


def test_the_notebooks_are_pages_of_the_site(site: Path) -> None:
    for name in ("01_onboarding", "02_export_and_release", "03_starring", "04_reconciliation"):
        page = site / "notebooks" / f"{name}.html"
        assert page.is_file(), name
        text = page.read_text(encoding="utf-8")
        marker = "NBVAL_" in re.sub(r"<[^>]+>", " ", text) or '"cell-tag">nbval' in text
        assert not marker, f"{name}: a test marker shows on the page"


def _signature_text(page: Path, anchor: str) -> str:
    """The rendered signature under a heading: the text between the heading and its docstring."""
    text = page.read_text(encoding="utf-8")
    start = text.index(f'id="{anchor}"')
    block = re.sub(r"<[^>]+>", "", text[start : start + 4000])
    return " ".join(html.unescape(block).split())


@pytest.mark.parametrize("method", ["export_entries", "onboard", "star", "sync", "import_clients"])
def test_the_reference_shows_client_methods_as_they_are_called(site: Path, method: str) -> None:
    # the signature a user calls: no ``conn: Connection``, the operation's bound argument
    shown = _signature_text(site / "reference" / "api.html", f"toolkit._client.Client.{method}")
    call = shown[shown.index(f"{method}(") :][:200]
    assert "conn" not in call and "Connection" not in call, call
    if method == "onboard":
        assert "source: ImportSource" in call, call


def test_every_link_of_the_site_opened_from_disk_names_a_file(site: Path) -> None:
    # file:// has no index pages: a link to a folder shows a directory listing there
    folders = []
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)', page.read_text(encoding="utf-8")):
            if "://" in href or href.startswith(("mailto:", "data:")):
                continue
            target = (page.parent / href).resolve()
            if target.is_dir():
                folders.append(f"{page.relative_to(site)} -> {href}")
    assert folders == []


def test_a_returns_section_renders_as_one_value_however_many_lines_it_takes() -> None:
    import griffe
    import yaml

    class Loader(yaml.SafeLoader):  # mkdocs' own tags (!ENV) read as nothing
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    site = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)  # noqa: S506
    handler = next(p["mkdocstrings"] for p in site["plugins"] if "mkdocstrings" in p)
    options = handler["handlers"]["python"]["options"]["docstring_options"]
    functions = [toolkit._ingress.imports.import_table, toolkit.reconcile]
    functions += [getattr(toolkit.Client, n) for n in dir(toolkit.Client) if not n.startswith("_")]
    for function in functions:
        if not inspect.isfunction(function) or "Returns:" not in (function.__doc__ or ""):
            continue
        text = inspect.cleandoc(function.__doc__)
        sections = griffe.Docstring(text, parser="google", parser_options=options).parse()
        returns = [s for s in sections if s.kind.value == "returns"]
        assert [len(s.value) for s in returns] == [1], function.__qualname__


def test_the_pacing_page_gives_every_constant_of_the_pacer_its_unit_and_reason(site: Path) -> None:
    # issue 38: every constant of the budget named, with its unit and why, on the pacing page
    # (the table is read from the code: a constant without its comment shows an empty reason)
    source = (REPO / "toolkit" / "_bulk" / "budget.py").read_text(encoding="utf-8")
    names = re.findall(r"^(_?[A-Z][A-Z_0-9]*)(?:, _?[A-Z][A-Z_0-9]*)* = ", source, re.M)
    names += re.findall(r"^_?[A-Z][A-Z_0-9]*, (_?[A-Z][A-Z_0-9, ]*) = ", source, re.M)
    names = [n.strip() for group in names for n in group.split(",")]
    page = html.unescape((site / "pacing.html").read_text(encoding="utf-8"))
    assert len(names) > 40
    shown = {n.strip() for code in re.findall(r"<code>(.*?)</code>", page) for n in code.split(",")}
    missing = [n for n in names if n not in shown]
    assert not missing, missing
    rows = re.findall(
        r"<tr>\s*<td><code>([^<]+)</code></td>\s*<td>.*?</td>\s*<td>(.*?)</td>", page, re.S
    )
    assert rows and not [name for name, reason in rows if not reason.strip()]
