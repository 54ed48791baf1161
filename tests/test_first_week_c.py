"""Issue 20, items 10, 13, 16 and 19: what a newcomer ran into in the first week."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
import requests

from tests.conftest import TIMEOUT
from toolkit.sandbox import Sandbox
from toolkit.sandbox.models.core import StoreCore

# -- 19: sandbox files 0600, every enforced bound in the OpenAPI document ---------------------


def test_sandbox_database_files_are_private(tmp_path: Path) -> None:
    core = StoreCore(tmp_path / "s.db")
    try:
        core._db.execute("CREATE TABLE IF NOT EXISTS t (x)")
        files = [p for p in tmp_path.iterdir() if p.name.startswith("s.db")]
        assert {p.name for p in files} >= {"s.db", "s.db-wal", "s.db-shm"}
        for p in files:
            assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name
    finally:
        core.close()


@pytest.fixture(scope="module")
def openapi(sandbox: Sandbox) -> dict:
    response = requests.get(f"{sandbox.url}/openapi.json", timeout=TIMEOUT)
    assert response.status_code == 200
    return response.json()


def test_openapi_states_the_starred_limit_bound(openapi: dict) -> None:
    op = openapi["paths"]["/api/v1/public/customers/{customerId}/initiative-props/starred"]
    (limit,) = [p for p in op["get"]["parameters"] if p["name"] == "limit"]
    pattern = limit["schema"]["pattern"]
    for good in ("1", "9", "10", "999", "1000", "2499", "2500"):
        assert re.match(pattern, good), good
    for bad in ("0", "2501", "2600", "3000", "9999", "05", "10000"):
        assert not re.match(pattern, bad), bad


def test_openapi_refuses_year_zero_in_date_patterns(openapi: dict) -> None:
    op = openapi["paths"]["/api/v2/customers/{customerId}/entries/export"]["get"]
    patterns = [p["schema"]["pattern"] for p in op["parameters"]
                if p["name"] in ("releasedAfter", "releasedOnOrBefore")]
    patterns += [found for found in _patterns(openapi["components"]["schemas"])
                 if "(0[1-9]|1[0-2])" in found]
    assert len(patterns) >= 3
    for pattern in patterns:
        sample = "0000-01-01T00:00Z" if "T" in pattern or ":" in pattern else "0000-01-01"
        assert not re.match(pattern, sample), pattern
        assert re.match(pattern, sample.replace("0000", "0001")), pattern


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return found + [p for value in node.values() for p in _patterns(value)]
    if isinstance(node, list):
        return [p for value in node for p in _patterns(value)]
    return []
