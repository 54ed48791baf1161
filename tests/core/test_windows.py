"""Dates as people write them: one release window (:class:`toolkit._core.windows.Window`) read the
same way by export, sync, reconcile, the command line and ``firms.toml``: a bare day is its start
as ``after`` and its end as ``on_or_before``; an ambiguous date (day first or month first) is
refused by all of them, before any request; the window's old names warn at the caller's line."""

from __future__ import annotations

import datetime as dt
import re
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.conftest import write_client_env
from toolkit import Client
from toolkit._cli import main
from toolkit._core.windows import RENAMED, Window, ambiguous_date_message, iso, to_utc
from toolkit._egress import fetch, sync_status
from toolkit.errors import ConfigError, ValidationError
from toolkit.firms import load


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


# -- one window: the same bare dates give the same window and entries at every entry point ------

AFTER, ON_OR_BEFORE = "2026-11-20", "2026-11-27"
#: the window those bare days mean: the start of the first, the end (to the ms) of the last
WINDOW = Window(pd.Timestamp("2026-11-20T00:00Z"), pd.Timestamp("2026-11-27T23:59:59.999Z"))
WORDS = "released after 2026-11-20T00:00:00.000Z, on or before 2026-11-27T23:59:59.999Z"


@pytest.fixture
def week(client: Client) -> list[str]:
    """The ids of the entries the seeded sandbox released in :data:`WINDOW`, asked as instants;
    the 27th holds some (a first-instant reading of it would leave them out)."""
    ends = (iso(WINDOW.after), iso(WINDOW.on_or_before))  # type: ignore[arg-type]
    ids = sorted(client.export_entries(*ends, progress=False).entries["_id"])
    first_instant = client.export_entries(ends[0], "2026-11-27T00:00Z", progress=False)
    assert len(first_instant) < len(ids)
    return ids


def _env(client: Client, sandbox: Any, tmp_path: Path) -> list[str]:
    return ["--env-file", str(write_client_env(client, sandbox, tmp_path / ".env")), "-q"]


def test_window_of_bare_days_is_the_start_of_the_first_and_the_end_of_the_last() -> None:
    assert Window.of(AFTER, ON_OR_BEFORE) == WINDOW
    assert Window.of(dt.date(2026, 11, 20), dt.date(2026, 11, 27)) == WINDOW
    assert str(WINDOW) == WORDS
    day = Window.of("2026-11-22", "2026-11-22")  # one bare day is all of it, not empty
    assert day.on_or_before - day.after == pd.Timedelta(days=1) - pd.Timedelta(milliseconds=1)
    instant = Window.of("2026-11-20T06:00", pd.Timestamp("2026-11-27"))
    assert instant == Window(
        WINDOW.after + pd.Timedelta(hours=6), pd.Timestamp("2026-11-27", tz="UTC")
    )


def test_cli_export_reads_bare_dates_as_the_window(
    client: Client, sandbox: Any, tmp_path: Path, week: list[str], capsys: Any
) -> None:
    out = tmp_path / "out"
    argv = ["export", "--after", AFTER, "--on-or-before", ON_OR_BEFORE, "--out", str(out)]
    assert main([*_env(client, sandbox, tmp_path), *argv]) == 0
    captured = capsys.readouterr()
    assert f"export window: entries {WORDS}" in captured.out and "warning" not in captured.err
    assert sorted(toolkit.Export.read_parquet(out).entries["_id"]) == week


def test_client_export_entries_reads_bare_dates_as_the_window(
    client: Client, week: list[str]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one meaning: nothing to warn about
        export = client.export_entries(AFTER, ON_OR_BEFORE, progress=False)
    assert sorted(export.entries["_id"]) == week


def test_client_export_to_parquet_reads_bare_dates_as_the_window(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    client.export_to_parquet(AFTER, ON_OR_BEFORE, tmp_path / "out", progress=False)
    assert sorted(toolkit.Export.read_parquet(tmp_path / "out").entries["_id"]) == week


def test_client_sync_reads_bare_dates_as_the_window(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    report = client.sync(tmp_path / "t", after=AFTER, on_or_before=ON_OR_BEFORE, progress=False)
    assert (report.since, report.until) == (WINDOW.after, WINDOW.on_or_before)
    assert sorted(toolkit.read_sync(tmp_path / "t").entries["_id"]) == week


def test_cli_sync_reads_bare_dates_as_the_window(
    client: Client, sandbox: Any, tmp_path: Path, week: list[str], capsys: Any
) -> None:
    path = tmp_path / "t"
    argv = ["sync", str(path), "--after", AFTER, "--on-or-before", ON_OR_BEFORE]
    assert main([*_env(client, sandbox, tmp_path), *argv]) == 0
    assert sync_status(path)["watermark"] == WINDOW.on_or_before
    assert sorted(toolkit.read_sync(path).entries["_id"]) == week


def _all_and_billing(client: Client, tmp_path: Path) -> tuple[Path, Path]:
    """A month's export (wider than the window) and a billing file holding every entry of it."""
    export = client.export_entries("2026-11-01", "2026-11-30", progress=False)
    folder = export.to_parquet(tmp_path / "month")
    billing = tmp_path / "billing.csv"
    pd.DataFrame({"entryId": export.entries["_id"]}).to_csv(billing, index=False)
    return folder, billing


def _compared(rows: pd.DataFrame) -> list[str]:
    return sorted(rows.loc[rows["status"] != "only_in_billing", "key"].astype(str))


def test_cli_reconcile_reads_bare_dates_as_the_window(
    client: Client, sandbox: Any, tmp_path: Path, week: list[str], capsys: Any
) -> None:
    folder, billing = _all_and_billing(client, tmp_path)
    argv = ["reconcile", str(folder), str(billing), "--out", str(tmp_path / "rows.csv")]
    argv += ["--after", AFTER, "--on-or-before", ON_OR_BEFORE]
    main([*_env(client, sandbox, tmp_path), *argv])
    assert f"release window: entries {WORDS}" in capsys.readouterr().out
    assert _compared(pd.read_csv(tmp_path / "rows.csv", dtype=str)) == week


def test_python_reconcile_reads_bare_dates_as_the_window(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    folder, billing = _all_and_billing(client, tmp_path)
    entries = toolkit.Export.read_parquet(folder).entries
    rec = toolkit.reconcile(entries, pd.read_csv(billing), after=AFTER, on_or_before=ON_OR_BEFORE)
    assert f"entries {WORDS} by updatedAt: {len(week)} of" in str(rec.window)
    assert _compared(rec.rows) == week


def _firms_toml(tmp_path: Path, lines: str) -> Path:
    path = tmp_path / "firms.toml"
    path.write_text(
        '[firms.acme]\ncustomer_id = "c"\nclient_id = "i"\nclient_secret_env = "S"\n'
        'auth_url = "https://a.example"\ntime_url = "https://t.example"\n'
        'audience = "https://t.example"\njournal = "j.jsonl"\nsync = "lake"\n'
        'billing = "billing.csv"\n' + lines,
        encoding="utf-8",
    )
    return path


def test_a_firms_toml_reads_bare_dates_as_the_window(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    folder, _ = _all_and_billing(client, tmp_path)
    lines = f'after = "{AFTER}"\n[firms.acme.reconcile]\n'
    lines += f'after = "{AFTER}"\non_or_before = {ON_OR_BEFORE}\n'  # text or a TOML date
    firm = load(_firms_toml(tmp_path, lines))["acme"]
    assert firm.after == WINDOW.after
    options = firm.reconcile_options
    assert Window(options["after"], options["on_or_before"]) == WINDOW
    rec = firm.reconcile(toolkit.Export.read_parquet(folder))
    assert rec is not None and _compared(rec.rows) == week


@pytest.mark.parametrize("key", ["after", "sync_since", "reconcile.on_or_before"])
def test_a_firms_toml_refuses_an_ambiguous_date_with_the_one_message(
    tmp_path: Path, key: str
) -> None:
    table, _, name = key.rpartition(".")
    lines = (
        f'{name} = "01/02/2026"\n'
        if not table
        else f'[firms.acme.{table}]\n{name} = "01/02/2026"\n'
    )
    with pytest.raises(ConfigError) as info:
        load(_firms_toml(tmp_path, lines))
    assert str(info.value) == ambiguous_date_message(
        f"firm 'acme', key {key!r}",
        "01/02/2026",
        pd.Timestamp("2026-02-01"),
        pd.Timestamp("2026-01-02"),
    )


def test_a_reversed_window_is_refused_in_the_callers_words(
    client: Client, sandbox: Any, tmp_path: Path, capsys: Any
) -> None:
    with pytest.raises(ConfigError) as info:
        client.export_entries(ON_OR_BEFORE, AFTER)
    assert str(info.value) == (
        "after (2026-11-27T00:00:00Z) must be before on_or_before (2026-11-20T23:59:59.999Z): "
        "the window (after, on_or_before] is empty"
    )
    argv = ["export", "--after", ON_OR_BEFORE, "--on-or-before", AFTER, "--out", str(tmp_path)]
    assert main([*_env(client, sandbox, tmp_path), *argv]) == 2
    assert "error: --after (2026-11-27T00:00:00Z) must be before --on-or-before" in (
        capsys.readouterr().err
    )


# -- the names kept one release: they warn at the caller's line and still work -----------------


def test_export_entries_and_export_to_parquet_take_the_released_names_one_release(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    old = {"released_after": AFTER, "released_on_or_before": ON_OR_BEFORE}
    with pytest.warns(DeprecationWarning) as caught:
        export = client.export_entries(**old, progress=False)  # type: ignore[call-arg]
        fetch.export_to_parquet(  # the operation itself, without the client
            client.connection, **old, path=tmp_path / "out", progress=False
        )
    assert sorted(export.entries["_id"]) == week
    assert sorted(toolkit.Export.read_parquet(tmp_path / "out").entries["_id"]) == week
    assert [str(w.message) for w in caught] == [
        "released_after= is deprecated and goes in the next release; use after=",
        "released_on_or_before= is deprecated and goes in the next release; use on_or_before=",
    ] * 2
    assert {w.filename for w in caught} == {__file__}


def test_sync_takes_since_and_until_one_release(
    client: Client, tmp_path: Path, week: list[str]
) -> None:
    with pytest.warns(DeprecationWarning) as caught:
        report = client.sync(  # type: ignore[call-arg]
            tmp_path / "t", since=AFTER, until=ON_OR_BEFORE, progress=False
        )
    assert (report.since, report.until) == (WINDOW.after, WINDOW.on_or_before)
    assert sorted(toolkit.read_sync(tmp_path / "t").entries["_id"]) == week
    assert [str(w.message).split()[0] for w in caught] == ["since=", "until="]
    assert {w.filename for w in caught} == {__file__}
    with pytest.raises(TypeError, match="give after= only"):
        client.sync(tmp_path / "t", since=AFTER, after=AFTER)  # type: ignore[call-arg]


def test_cli_sync_takes_since_and_until_one_release(
    client: Client, sandbox: Any, tmp_path: Path, week: list[str], capsys: Any
) -> None:
    path = tmp_path / "t"
    argv = ["sync", str(path), "--since", AFTER, "--until", ON_OR_BEFORE]
    assert main([*_env(client, sandbox, tmp_path), *argv]) == 0
    err = capsys.readouterr().err
    assert "warning: --since is deprecated and goes in the next release; use --after" in err
    assert "warning: --until is deprecated and goes in the next release; use --on-or-before" in err
    assert sorted(toolkit.read_sync(path).entries["_id"]) == week


def test_a_firms_toml_takes_sync_since_one_release(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="key 'sync_since': .* use after") as caught:
        firm = load(_firms_toml(tmp_path, f'sync_since = "{AFTER}"\n'))["acme"]
    assert firm.after == WINDOW.after
    assert caught[0].filename == __file__
    with pytest.raises(ConfigError, match="give after only"):
        load(_firms_toml(tmp_path, f'sync_since = "{AFTER}"\nafter = "{AFTER}"\n'))


def test_the_jobs_page_lists_the_renamed_window_names() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "hooks", Path(__file__).parents[2] / "docs/hooks.py"
    )
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    table = hooks.deprecated_markdown()
    for old, new in RENAMED.items():
        assert f"| `{old}` (a release window's end) | `{new}` |" in table
