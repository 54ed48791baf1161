"""Issue 20, items 10, 13, 16 and 19: what a newcomer ran into in the first week."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pandas as pd
import pytest
import requests

from tests.conftest import TIMEOUT
from toolkit import Client
from toolkit.egress.sync import SyncReport
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
    schema = limit["schema"]  # an integer from 1 to 2500
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 1, 2500)


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


# -- 10: SyncReport in Jupyter; an empty sync says what the lag holds back ---------------------


def test_sync_report_has_an_html_table_with_iso_times() -> None:
    report = SyncReport("out/time", pd.Timestamp("2026-11-01", tz="UTC"),
                        pd.Timestamp("2026-11-21 09:00", tz="UTC"), 3, 12, 1, 0, 20,
                        pd.Timestamp("2026-11-21 09:00", tz="UTC"))
    html = report._repr_html_()
    assert html.startswith("<table") and "</table>" in html
    assert "Timestamp(" not in html
    assert "2026-11-21T09:00:00Z" in html
    for name in ("inserted", "updated", "unchanged", "watermark", "out/time"):
        assert name in html


def test_an_empty_sync_says_what_the_lag_holds_back(fresh_client: Client,
                                                     tmp_path: Path) -> None:
    since = pd.Timestamp.now("UTC") - pd.Timedelta("1h")
    report = fresh_client.sync(tmp_path / "time", since=since, progress=False)
    assert report.rows_written == 0
    text = str(report)
    assert "nothing new up to" in text and " UTC" in text
    assert "held back by lag=10min" in text and "next sync" in text
    assert "held back by lag=10min" in report._repr_html_()
    # from the watermark, with the range already covered: the same words
    again = fresh_client.sync(tmp_path / "time", progress=False)
    assert "held back by lag=10min" in str(again)


# -- 16: one bad byte in a UTF-8 CSV -----------------------------------------------------------


def test_one_bad_byte_keeps_the_file_utf8_and_names_the_line(tmp_path: Path) -> None:
    from toolkit.errors import InputWarning
    from toolkit.ingress.readers import read_table
    from toolkit.ingress.validation import load_folder

    f = tmp_path / "clients.csv"
    f.write_bytes("externalId,name\nC-1,Müller & Søn GmbH\n".encode()
                  + b"C-2,Caf\xe9 Noir\n" + "C-3,Zoë\n".encode())
    with pytest.warns(InputWarning, match=r"line 3"):
        df = read_table(f)
    assert list(df["name"]) == ["Müller & Søn GmbH", "Caf\ufffd Noir", "Zoë"]
    with pytest.warns(InputWarning, match=r"line 3"):
        frames = load_folder(tmp_path)
    assert frames["clients"]["name"].iloc[0] == "Müller & Søn GmbH"
    # encoding= overrides the guess
    assert read_table(f, encoding="cp1252")["name"].iloc[0] == "MÃ¼ller & SÃ¸n GmbH"
    assert load_folder(tmp_path, encoding="latin-1")["clients"]["name"].iloc[1] == "Café Noir"


def test_a_windows_1252_file_still_falls_back_with_a_warning(tmp_path: Path) -> None:
    from toolkit.errors import InputWarning
    from toolkit.ingress.readers import read_table

    f = tmp_path / "clients.csv"
    f.write_bytes("externalId,name\nC-1,Müller & Søn GmbH\n".encode("cp1252"))
    with pytest.warns(InputWarning, match="Windows-1252"):
        df = read_table(f)
    assert df["name"].iloc[0] == "Müller & Søn GmbH"


# -- 13: progress on by default for the long operations, off for a single request -------------


def test_long_operations_show_progress_by_default() -> None:
    import inspect

    from toolkit.egress import fetch
    from toolkit.egress import sync as syncing

    for func in (fetch.export_entries, fetch.iter_export, fetch.export_to_parquet, syncing.sync):
        assert inspect.signature(func).parameters["progress"].default is True, func.__name__


def test_a_single_star_request_shows_no_bar(fresh_client: Client,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    fresh_client.star("TK-NOBODY", ["I-1"])
    assert "1/1" not in capsys.readouterr().err
