"""Issue 20, items 6, 7, 10, 11, 13, 15-19: what a newcomer and a fault hunt ran into."""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from toolkit.cli import app as cli_app
from toolkit.cli import common as cli_common
from toolkit.cli import export as cli_export
from toolkit.cli import sync as cli_sync
from toolkit.errors import Interrupted

REPO = Path(__file__).resolve().parent.parent


# -- 7. SIGINT from the first instruction to the last --------------------------------------------


def test_the_command_line_entry_point_loads_no_pandas_before_its_handler() -> None:
    code = "import sys, toolkit.cli; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.split() == ["False", "False"], out.stderr
    assert "from toolkit.cli import console" in (REPO / "toolkit" / "__main__.py").read_text()


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback() -> None:
    code = textwrap.dedent(
        """
        import os, signal, sys
        import toolkit.cli as cli
        real = cli.import_module
        def interrupted_while_loading(name):
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C while pandas loads
            return real(name)
        cli.import_module = interrupted_while_loading
        sys.argv = ["toolkit", "validate", "sample_data"]
        cli.console()
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 130
    assert "Traceback" not in out.stderr and "KeyboardInterrupt" not in out.stderr
    assert "interrupted" in out.stderr


def _stopping_client(method: str) -> Any:
    def stop(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    return SimpleNamespace(**{method: stop})


def test_ctrl_c_during_sync_says_what_the_folder_holds(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli_sync, "client_from", lambda args: _stopping_client("sync"))
    path = tmp_path / "time"
    assert cli_app.main(["-q", "sync", str(path)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and str(path) in err and "committed" in err
    assert "Traceback" not in err


def test_ctrl_c_during_export_says_what_was_written(tmp_path, monkeypatch, capsys) -> None:
    client = _stopping_client("export_to_parquet")
    monkeypatch.setattr(cli_export, "client_from", lambda args: client)
    out = tmp_path / "export"
    argv = ["-q", "export", "--after", "2026-11-01", "--on-or-before", "2026-11-02",
            "--out", str(out)]
    assert cli_app.main(argv) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and f"{out}/entries" in err and "incomplete" in err


def test_an_interrupted_run_writes_its_unsent_rows_to_a_file_not_the_terminal(
    tmp_path, capsys
) -> None:
    result = pd.DataFrame(
        {
            "table": "clients",
            "row": pd.array(range(5000), dtype="Int64"),
            "externalId": [f"C{i}" for i in range(5000)],
            "status": ["sent"] * 10 + ["not_sent"] * 4990,
            "ok": [True] * 10 + [False] * 4990,
            "error": None,
        }
    )
    journal = tmp_path / "onboard.jsonl"
    args = argparse.Namespace(argv=["onboard", "firm", "--journal", str(journal)],
                              journal=str(journal), command="onboard")
    assert cli_common.interrupted(Interrupted("stopped", result=result), args) == 130
    err = capsys.readouterr().err
    assert len(err.splitlines()) < 10
    unsent = Path(f"{journal}.unsent.csv")
    assert str(unsent) in err
    assert len(pd.read_csv(unsent)) == 4990


# -- 6. row and line: nullable integers everywhere; messages name the line -----------------------


def _clients_csv(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "clients.csv"
    path.write_text(
        "externalId,name,callSign\n"  # a missing column: a failure with no row
        "C1,Acme,AC\n"
        "\n"  # a blank line: lines and rows part ways
        "C1,Acme again,AG\n",
        encoding="utf-8",
    )
    return path


def test_failure_rows_are_nullable_integers_and_messages_name_the_lines(tmp_path) -> None:
    from toolkit import load_folder, validate

    _clients_csv(tmp_path)
    report = validate(**load_folder(tmp_path))
    failures = report.failures
    assert str(failures["row"].dtype) == "Int64"
    assert failures["row"].isna().any()  # the column-level failure
    unique = failures[failures["check"] == "unique"]
    assert unique["row"].tolist() == [0, 1]
    assert set(unique["message"]) == {"externalId 'C1' is not unique: lines 2, 4 share it"}


def test_a_frame_built_in_pandas_names_rows_in_messages() -> None:
    from toolkit.ingress.checks import check_frame

    df = pd.DataFrame({"externalId": ["C1", "C1"], "name": ["a", "b"], "callSign": ["a", "b"],
                       "description": ["", ""]})
    failures = check_frame("clients", df).failures
    assert str(failures["row"].dtype) == "Int64"
    assert "rows 0, 1 share it" in failures["message"].iloc[0]


def test_the_cli_prints_and_writes_row_and_line_as_integers(tmp_path, capsys) -> None:
    _clients_csv(tmp_path / "firm")
    out = tmp_path / "failures.csv"
    assert cli_app.main(["validate", str(tmp_path / "firm"), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "NaN" not in printed and "1.0" not in printed and "<NA>" not in printed
    written = out.read_text().splitlines()
    assert written[0].startswith("table,row,line,")
    assert any(line.startswith("clients,1,4,C1,") for line in written)
    assert any(line.startswith("clients,,,") for line in written)
    back = pd.read_csv(out, dtype={"row": "Int64", "line": "Int64"})
    assert back["row"].dropna().tolist() == [0, 1]


# -- 17. export answers are checked ----------------------------------------------------------------


def _answer(*entries: dict[str, Any]) -> bytes:
    import orjson

    return orjson.dumps(list(entries))


def _entry(**changes: Any) -> dict[str, Any]:
    from toolkit.testing import fake_export_entry

    return {**fake_export_entry(), **changes}


@pytest.mark.parametrize("flatten", ["raw", "records"])
def test_an_entry_without_id_is_refused_and_named(flatten: str) -> None:
    from toolkit.egress.flatten import flatten_export, parse_and_flatten_export
    from toolkit.errors import FlattenError

    entry = _entry()
    del entry["_id"]
    with pytest.raises(FlattenError, match=r"entry 1 .*has no _id"):
        if flatten == "raw":
            parse_and_flatten_export(_answer(_entry(_id="e0"), entry))
        else:
            flatten_export([_entry(_id="e0"), entry])


def test_a_duplicated_id_is_refused_and_named() -> None:
    from toolkit.egress.flatten import parse_and_flatten_export
    from toolkit.errors import FlattenError

    with pytest.raises(FlattenError, match="entry 'e1': its _id comes more than once"):
        parse_and_flatten_export(_answer(_entry(_id="e1"), _entry(_id="e1")))


@pytest.mark.parametrize("flatten", ["raw", "records"])
def test_a_fractional_duration_is_kept_not_truncated(flatten: str) -> None:
    # issue 25: the published service sends counts as doubles; a fraction is kept as it is
    from toolkit.egress.flatten import flatten_export, parse_and_flatten_export

    odd = _entry(_id="e9", incrementDurationInSeconds=360.5)
    entries, _ = parse_and_flatten_export(_answer(odd)) if flatten == "raw" else flatten_export(
        [odd])
    assert entries["incrementDurationInSeconds"].tolist() == [360.5]
    entries, _ = parse_and_flatten_export(_answer(_entry(incrementDurationInSeconds=360.0)))
    assert entries["incrementDurationInSeconds"].tolist() == [360]


def test_a_bad_timestamp_names_the_field_and_entry_not_pandas_hint() -> None:
    from toolkit.egress.flatten import parse_and_flatten_export
    from toolkit.errors import FlattenError

    with pytest.raises(FlattenError) as info:
        parse_and_flatten_export(_answer(_entry(_id="e5", createdAt="yesterday at noon")))
    text = str(info.value)
    assert "entry 'e5'" in text and "createdAt" in text and "'yesterday at noon'" in text
    assert "format" not in text and "dayfirst" not in text


def test_a_malformed_export_answer_names_the_window(monkeypatch) -> None:
    from toolkit.egress import fetch
    from toolkit.errors import FlattenError

    class Conn:
        def call(self, *args: object, **kwargs: object) -> bytes:
            return _answer(_entry(_id="e1"), _entry(_id="e1"))

    start, end = fetch.split_windows("2026-11-01", "2026-11-02")[0]
    with pytest.raises(FlattenError, match=r"'e1'.*window 2026-11-01"):
        fetch.fetch_window(Conn(), start, end)  # type: ignore[arg-type]
