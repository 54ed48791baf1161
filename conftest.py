"""Names every ``>>>`` example in ``toolkit/`` may use, so that the examples run.

``pd`` and ``toolkit`` are always there. A doctest that names ``client`` (a
:class:`toolkit.Client`), ``sb`` (the running :class:`toolkit.sandbox.Sandbox`), ``user_id``
(the user of timekeeper ``TK-101``), ``firm`` (a :class:`toolkit.firms.Firm` of the sandbox's
customer, its source ``sample_data/``, from ``firms_file``), ``env_file`` (a ``.env`` of its
credentials, for the command line's examples) or one of the import frames ``clients``,
``initiatives``, ``code_types``, ``codes``, ``code_ranges`` (a few rows of each
``sample_data/`` table) gets them from one sandbox per session, seeded from ``sample_data/``
with its clock stopped at :data:`NOW` (so the seeded entries, released over the four weeks
before it, are the same in every run). The sandbox starts with the first doctest that needs it,
so a run of plain module doctests never starts one. ``tmp`` is a fresh folder for each doctest
that names it; every doctest runs in the repository's root, where ``sample_data/`` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _pytest.doctest import DoctestItem

import toolkit
import toolkit.firms as toolkit_firms
from toolkit.sandbox import Sandbox, running

ROOT = Path(__file__).resolve().parent
SAMPLE = ROOT / "sample_data"
NOW = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)
"""The sandbox's clock: the seeded entries are released in the four weeks before it."""

#: names a doctest may use that come from the sandbox
SERVICE_NAMES = (
    "client",
    "sb",
    "user_id",
    "clients",
    "initiatives",
    "code_types",
    "codes",
    "code_ranges",
    "env_file",
    "firm",
    "firms_file",
)
_NAMED = re.compile(r"(?<![\w.\"'])(" + "|".join(SERVICE_NAMES) + r")\b")


def _uses(item: DoctestItem, pattern: re.Pattern[str]) -> bool:
    return item.dtest is not None and any(
        pattern.search(example.source) for example in item.dtest.examples
    )


def _frames() -> dict[str, pd.DataFrame]:
    """A few rows of each sample table (whole code ranges of one initiative)."""
    frames = toolkit.load_folder(SAMPLE)
    ranges = frames["code_ranges"]
    return {
        "clients": frames["clients"].head(3),
        "initiatives": frames["initiatives"].head(3),
        "code_types": frames["code_types"].head(2),
        "codes": frames["codes"].head(3),
        "code_ranges": ranges[ranges["initiativeExternalId"] == "M-1001-001"],
    }


@pytest.fixture(scope="session")
def doctest_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """The sandbox of the doctests, seeded from ``sample_data/``, its clock at :data:`NOW`."""
    db = tmp_path_factory.mktemp("doctest-sandbox") / "sandbox.db"
    with running(seed=SAMPLE, db=db, clock=lambda: NOW) as sb:
        yield sb


def _firms_file(sb: Sandbox, folder: Path) -> Path:
    """A firms file of one firm, ``sample``: the doctest sandbox's customer and sample_data."""
    (folder / ".env").write_text(f"SAMPLE_SECRET={sb.client_secret}\n")
    (folder / ".env").chmod(0o600)
    path = folder / "firms.toml"
    path.write_text(
        "[firms.sample]\n"
        f'customer_id = "{sb.customer_id}"\nclient_id = "{sb.client_id}"\n'
        'client_secret_env = "SAMPLE_SECRET"\n'
        f'auth_url = "{sb.url}"\ntime_url = "{sb.url}"\naudience = "{sb.audience}"\n'
        f'source = "{SAMPLE}"\njournal = "state/sample.jsonl"\nsync = "lake/sample"\n'
        'after = "2026-11-01"\n'
    )
    return path


@pytest.fixture(scope="session")
def doctest_service(
    doctest_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The sandbox's names for the doctests; the client is closed at the end."""
    users = doctest_sandbox.admin.records("users")
    env_file = doctest_sandbox.write_env(tmp_path_factory.mktemp("doctest-env") / ".env")
    firms_file = _firms_file(doctest_sandbox, tmp_path_factory.mktemp("doctest-firms"))
    with toolkit.Client.from_env(None, environ=doctest_sandbox.env(), retries=3) as client:
        yield {
            "client": client,
            "sb": doctest_sandbox,
            "env_file": str(env_file),
            "firm": toolkit_firms.load(firms_file)["sample"],
            "firms_file": str(firms_file),
            "user_id": next(u["_id"] for u in users if u["timekeeperExternalId"] == "TK-101"),
            **_frames(),
        }


@pytest.fixture(autouse=True)
def _doctest_names(request: pytest.FixtureRequest, doctest_namespace: dict[str, Any]) -> None:
    """Fill ``doctest_namespace`` for a doctest: the sandbox's names only when it uses one."""
    item = request.node
    if not isinstance(item, DoctestItem):
        return
    doctest_namespace.update(pd=pd, toolkit=toolkit)
    if _uses(item, _NAMED):
        doctest_namespace.update(request.getfixturevalue("doctest_service"))
    if _uses(item, re.compile(r"\btmp\b")):
        doctest_namespace["tmp"] = request.getfixturevalue("tmp_path")
    request.getfixturevalue("monkeypatch").chdir(ROOT)
