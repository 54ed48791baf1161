"""Dates as people write them: an ambiguous date (day first or month first) is refused the same
way by export, sync, reconcile and the command line, before any request."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import toolkit
from toolkit.cli.app import main
from toolkit.core.windows import to_utc
from toolkit.errors import ConfigError, ValidationError


def test_export_refuses_an_ambiguous_date_before_any_request(unused_port: int) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    client = toolkit.Client("c", "i", "s", dead, dead, audience="a")
    with pytest.raises(ConfigError) as info:
        client.export_entries("11/12/2026", "2026-12-20")
    assert str(info.value) == (
        "after: '11/12/2026' reads differently day first (2026-12-11) and month first "
        "(2026-11-12), so it is refused, never guessed; write it as ISO 8601 (YYYY-MM-DD)"
    )


def test_export_sync_and_reconcile_refuse_ambiguous_dates_with_the_same_words(
    tmp_path: Path, unused_port: int
) -> None:
    dead = f"http://127.0.0.1:{unused_port}"
    client = toolkit.Client("c", "i", "s", dead, dead, audience="a")
    core = re.escape(
        "'11/12/2026' reads differently day first (2026-12-11) and month first "
        "(2026-11-12), so it is refused, never guessed"
    )
    with pytest.raises(ConfigError, match=core):
        client.sync(tmp_path / "time", after="11/12/2026")
    exported = pd.DataFrame({"_id": ["e1"], "userId": ["u1"], "workDate": ["2026-11-12"]})
    with pytest.raises(ValidationError, match=core):
        toolkit.reconcile(exported, pd.DataFrame({"entryId": ["e1"], "workDate": ["11/12/2026"]}))
    assert (
        main(
            [
                "export",
                "--after",
                "11/12/2026",
                "--on-or-before",
                "2026-12-20",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert to_utc("13/12/2026", "after") == pd.Timestamp("2026-12-13", tz="UTC")
