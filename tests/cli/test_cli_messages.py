"""The first run goes right: files as people have them, exit codes, messages and help."""

from __future__ import annotations

import argparse
import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

import toolkit._cli as cli
import toolkit.sandbox
from tests.conftest import write_client_env
from toolkit._cli import EXIT_CODES, main
from toolkit._cli import acknowledge as cli_acknowledge
from toolkit._cli import common as cli_common
from toolkit._cli import export as cli_export
from toolkit._cli import sync as cli_sync
from toolkit._cli import validate as cli_validate
from toolkit._client import Client
from toolkit._egress import DEFAULT_LAG
from toolkit._ingress.ranges import CODE_RANGE_POSTS
from toolkit._ingress.readers import read_table
from toolkit._reconciliation import COMPARISONS, FAILED_STATUSES
from toolkit.errors import Interrupted
from toolkit.sandbox import Sandbox, write_env_file

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"
TABLES = ("clients", "initiatives", "code_types", "codes", "code_ranges")


@pytest.fixture
def env_file(fresh_client, sandbox, tmp_path, no_toolkit_env) -> Path:
    return write_client_env(fresh_client, sandbox, tmp_path / ".env")


def _european_folder(folder: Path) -> Path:
    """The sample firm as Excel in most of Europe writes it: ; separated, BOM, odd names."""
    folder.mkdir()
    names = {
        "clients": "Clients",
        "initiatives": "matters",
        "code_types": "Code-Types",
        "codes": "codes",
        "code_ranges": "ranges",
    }
    for table, name in names.items():
        df = pd.read_csv(SAMPLE / f"{table}.csv", dtype=str, keep_default_na=False)
        df.to_csv(folder / f"{name}.csv", sep=";", index=False, encoding="utf-8-sig")
    return folder


def test_a_semicolon_bom_folder_with_people_names_onboards(env_file, tmp_path, capsys) -> None:
    folder = _european_folder(tmp_path / "firm")
    (folder / "notes.csv").write_text("a\n1\n")
    base = ["--env-file", str(env_file), "-q"]
    assert main([*base, "validate", str(folder)]) == 0
    assert main([*base, "onboard", str(folder), "--out", str(tmp_path / "res.csv")]) == 0
    err = capsys.readouterr().err
    assert "notes.csv" in err and "warning" in err
    res = pd.read_csv(tmp_path / "res.csv")
    assert set(res["table"]) == set(TABLES) and res["ok"].all()
    assert main([*base, "onboard", str(folder), "--dry-run"]) == 0


def test_a_folder_where_nothing_matches_is_exit_2(tmp_path, capsys) -> None:
    (tmp_path / "notes.csv").write_text("a\n1\n")
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no import table found" in err and "notes.csv" in err


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".parquet"])
def test_validate_out_writes_each_format_and_line_matches_the_file(tmp_path, suffix) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    shutil.copy(SAMPLE / "codes.csv", folder / "codes.csv")
    lines = (folder / "codes.csv").read_text().splitlines()
    lines[7] = lines[7].replace("task-code", "")  # file line 8: a required value emptied
    lines.insert(3, "")  # a blank line before it: now file line 9, data row 6
    (folder / "codes.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / f"failures{suffix}"
    assert main(["validate", str(folder), "--out", str(out)]) == 1
    failures = read_table(out)
    assert [int(v) for v in failures["row"]] == [6]
    assert [int(v) for v in failures["line"]] == [9]
    assert (folder / "codes.csv").read_text().splitlines()[8].endswith(",")


def test_an_unknown_out_format_is_exit_2_before_any_work(tmp_path, capsys) -> None:
    assert main(["validate", str(SAMPLE), "--out", str(tmp_path / "f.txt")]) == 2
    assert ".csv, .xlsx or .parquet" in capsys.readouterr().err


def test_onboard_dry_run_needs_no_secret_and_no_network(sandbox, tmp_path, no_toolkit_env, capsys):
    nothing = ["--env-file", str(tmp_path / "none.env"), "-q"]
    sandbox.admin.reset_stats()
    assert main([*nothing, "onboard", str(SAMPLE), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "nothing sent" in out and "/clients/import" in out and "requests" in out
    broken = SAMPLE / "broken"
    assert main([*nothing, "onboard", str(broken), "--dry-run"]) == 1
    assert main([*nothing, "onboard", str(broken), "--dry-run", "--on-invalid", "skip"]) == 1
    assert sandbox.admin.stats()["total"] == 0


def test_onboard_and_acknowledge_out_carry_row_and_line(env_file, tmp_path, sandbox) -> None:
    base = ["--env-file", str(env_file), "-q"]
    out = tmp_path / "res.xlsx"
    assert (
        main([*base, "onboard", str(SAMPLE / "broken"), "--on-invalid", "skip", "--out", str(out)])
        == 1
    )
    res = read_table(out)
    assert (res["line"].astype(int) == res["row"].astype(int) + 2).all()  # no blank lines
    acks = tmp_path / "acks.csv"
    # issue 25: a succeeded row may leave externalId out; a row without userId may not
    acks.write_text("userId;entryId;outcome;externalId\nu-1;e-1;done;X\n\n;e-2;succeeded;\n")
    out = tmp_path / "ack-failures.csv"
    assert main([*base, "acknowledge", str(acks), "--out", str(out)]) == 1
    failures = pd.read_csv(out)
    assert failures[["row", "line", "check"]].values.tolist() == [
        [0, 2, "allowed_values"],
        [1, 4, "required"],
    ]
    assert not failures["message"].str.contains(r"isin\(|failed for").any()


def test_star_out_writes_results(env_file, tmp_path, sandbox) -> None:
    base = ["--env-file", str(env_file), "-q"]
    out = tmp_path / "stars.parquet"
    assert main([*base, "star", "TK-NOBODY", "M-1", "--out", str(out)]) == 1
    assert len(pd.read_parquet(out)) == 1


def test_exit_codes_are_listed_in_help(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for code, text in EXIT_CODES.items():
        assert f"{code}" in out and text.split()[0] in out
    assert main(["validate"]) == 2  # usage error
    assert main(["no-such-command"]) == 2


def test_an_interrupt_is_exit_130(monkeypatch) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_validate, "run", interrupted)
    assert main(["validate", str(SAMPLE)]) == 130


def test_a_refused_secret_names_invalid_client_and_the_setting(
    fresh_client, sandbox, tmp_path, no_toolkit_env, capsys
) -> None:
    env = write_client_env(fresh_client, sandbox, tmp_path / ".env", TOOLKIT_CLIENT_SECRET="wrong")
    for argv in (["starred", "TK"], ["star", "TK", "M-1"], ["onboard", str(SAMPLE)]):
        assert main(["--env-file", str(env), "-q", *argv]) == 2
        err = capsys.readouterr().err
        assert "invalid_client" in err and "TOOLKIT_CLIENT_SECRET" in err
        assert "GET" not in err and "Traceback" not in err


def test_a_malformed_url_names_its_setting(fresh_client, sandbox, tmp_path, no_toolkit_env, capsys):
    env = write_client_env(
        fresh_client,
        sandbox,
        tmp_path / ".env",
        TOOLKIT_CLIENT_SECRET="s",
        TOOLKIT_TIME_URL="htp:/time.example",
    )
    assert main(["--env-file", str(env), "starred", "TK"]) == 2
    err = capsys.readouterr().err
    assert "TOOLKIT_TIME_URL" in err and "htp:/time.example" in err


def test_an_unreachable_url_names_the_host_and_its_setting(
    fresh_client, sandbox, tmp_path, no_toolkit_env, unused_port, monkeypatch, capsys
) -> None:
    original = Client.from_env.__func__

    def no_retries(cls, *args, **kwargs):  # noqa: ANN001, ANN202
        return original(cls, *args, **{**kwargs, "retries": 0})

    monkeypatch.setattr(Client, "from_env", classmethod(no_retries))
    env = write_client_env(
        fresh_client,
        sandbox,
        tmp_path / ".env",
        TOOLKIT_CLIENT_SECRET="s",
        TOOLKIT_AUTH_URL=f"http://127.0.0.1:{unused_port}",
    )
    assert main(["--env-file", str(env), "starred", "TK"]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{unused_port}" in err and "TOOLKIT_AUTH_URL" in err


def _broken_inputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    files = {
        "ragged.csv": "a,b\n1,2\n3,4,5\n",
        "quote.csv": 'a,b\n1,"x\n',
        "binary.csv": "a,b\n\x00,1\n",
        "empty.csv": "",
        "notexcel.xlsx": "plain text",
        "notparquet.parquet": "plain text",
        "latin.csv": "userId;entryId;outcome\nü;\xa0;x\n",
        "old.xls": "x",
    }
    paths = {}
    for name, text in files.items():
        paths[name] = folder / name
        paths[name].write_bytes(text.encode("cp1252" if name == "latin.csv" else "utf-8"))
    (folder / "tables").mkdir()
    (folder / "tables" / "clients.csv").write_text("externalId,name\nC-1,A,extra\n")
    (folder / "tables" / "codes.csv").write_bytes(b"\x81\x8d\x8f")
    (folder / "nothing").mkdir()
    (folder / "nothing" / "readme.txt").write_text("hi")
    return paths


def test_no_command_ends_in_a_traceback_on_broken_inputs(env_file, tmp_path, capsys) -> None:
    paths = _broken_inputs(tmp_path / "broken")
    base = ["--env-file", str(env_file), "-q"]
    folders = [
        tmp_path / "broken" / "tables",
        tmp_path / "broken" / "nothing",
        tmp_path / "missing",
        paths["ragged.csv"],
    ]
    runs: list[list[str]] = []
    for folder in folders:
        runs += [
            ["validate", str(folder)],
            ["onboard", str(folder)],
            ["onboard", str(folder), "--dry-run"],
        ]
    for path in [*paths.values(), tmp_path / "missing.csv"]:
        runs += [
            ["acknowledge", str(path)],
            ["star", "--file", str(path)],
            ["unstar", "TK", "--file", str(path)],
        ]
    runs += [
        ["validate", str(SAMPLE), "--out", str(tmp_path / "no" / "such" / "dir.csv")],
        ["starred", "TK", "--limit", "many"],
        ["star"],
        [
            "export",
            "--after",
            "not a date",
            "--on-or-before",
            "2024-01-01",
            "--out",
            str(tmp_path / "exp"),
        ],
    ]
    for argv in runs:
        code = main([*base, *argv])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err, argv
        assert code in (1, 2), (argv, code, captured.err)
        assert captured.err.strip(), argv


def test_every_parser_argument_has_help_and_every_command_an_example() -> None:
    parser = cli.parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [a.dest for a in parser._actions if not a.help]
    for name, sub in subparsers.choices.items():
        missing += [f"{name} {a.dest}" for a in sub._actions if not a.help]
        assert sub.epilog and f"toolkit {name}" in sub.epilog, name
    assert missing == []


def test_every_public_client_method_has_an_example() -> None:
    methods = [
        name
        for name, member in inspect.getmembers(Client)
        if not name.startswith("_") and callable(member)
    ]
    assert len(methods) > 15
    lacking = [m for m in methods if ">>>" not in (inspect.getdoc(getattr(Client, m)) or "")]
    assert lacking == []
    for m in methods:
        doc = inspect.getdoc(getattr(Client, m))
        assert "Returns" in doc or "Yields" in doc, m


# -- messages name the setting that is wrong ---------------------------------------------------


def test_a_wrong_audience_names_toolkit_audience(
    project: Path, sandbox: Sandbox, capsys: Any
) -> None:
    write_env_file(project / ".env", {**sandbox.env(), "TOOLKIT_AUDIENCE": "wrong"})
    assert main(["--env-file", str(project / ".env"), "-q", "pending", "--out", "p"]) == 2
    err = capsys.readouterr().err
    assert "TOOLKIT_AUDIENCE" in err and str(project / ".env") in err
    assert "TOOLKIT_CLIENT_SECRET" not in err


def test_a_missing_env_file_is_named_as_absent(project: Path, capsys: Any) -> None:
    assert main(["--env-file", "nope.env", "-q", "pending", "--out", "p"]) == 2
    assert f"{project / 'notebooks' / 'nope.env'}: no such file" in capsys.readouterr().err


def test_an_unreachable_service_says_could_not_reach_the_host(
    tmp_path: Path,
    no_toolkit_env: None,
    unused_port: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    write_env_file(
        tmp_path / ".env",
        toolkit.sandbox.env_for(f"http://127.0.0.1:{unused_port}", "c", "i", "s", "a"),
    )
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "pending", "--out", "p"]) == 2
    err = capsys.readouterr().err
    assert f"could not reach 127.0.0.1:{unused_port}" in err
    assert "failed after" not in err and "TOOLKIT_AUTH_URL" in err


# -- onboard validates before any token or request ---------------------------------------------


def test_onboard_with_the_service_down_shows_the_data_errors(
    tmp_path: Path,
    no_toolkit_env: None,
    unused_port: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    write_env_file(
        tmp_path / ".env",
        toolkit.sandbox.env_for(f"http://127.0.0.1:{unused_port}", "c", "i", "s", "a"),
    )
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "onboard", str(REPO / "sample_data" / "broken")]) == 1
    captured = capsys.readouterr()
    assert "validation failed, nothing sent" in captured.err
    assert "could not reach" not in captured.err and "externalId" in captured.out
    assert main(["-q", "onboard", str(REPO / "sample_data")]) == 2  # valid: then the service
    assert "could not reach" in capsys.readouterr().err


# -- SIGINT from the first instruction to the last ---------------------------------------------


def test_the_command_line_entry_point_loads_no_pandas_before_its_handler() -> None:
    code = "import sys, toolkit._cli; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.split() == ["False", "False"], out.stderr
    assert "from toolkit._cli import console" in (REPO / "toolkit" / "__main__.py").read_text()


def test_help_of_toolkit_and_of_every_command_loads_neither_pandas_nor_pyarrow() -> None:
    # `toolkit --help` and `toolkit COMMAND --help` read the table of options only
    commands = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    runs = [[], *([name] for name in commands.choices), ["firms", "status"]]
    code = textwrap.dedent(
        f"""
        import runpy, sys
        heavy = []
        for argv in {runs!r}:
            sys.argv = ["toolkit", *argv, "--help"]
            try:
                runpy.run_module("toolkit", run_name="__main__")
            except SystemExit as done:
                assert done.code == 0, (argv, done.code)
            if "pandas" in sys.modules or "pyarrow" in sys.modules:
                heavy.append(" ".join(argv) or "toolkit")
                break
        print("heavy:", heavy)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "heavy: []"


def test_the_parser_offers_the_library_s_choices_and_defaults() -> None:
    # the option table holds them as literals, to stay import-light
    parser = cli.parser()
    args = parser.parse_args(["sync", "out/time"])
    assert args.lag == DEFAULT_LAG
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {
        (name, option): action
        for name, sub in commands.choices.items()
        for action in sub._actions
        for option in action.option_strings
    }
    for name in ("validate", "onboard"):
        assert tuple(options[name, "--code-range-post"].choices) == CODE_RANGE_POSTS
    for name in ("acknowledge", "reconcile"):
        assert f"(all of {', '.join(FAILED_STATUSES)})" in options[name, "--include"].help
    assert all(("reconcile", f"--{name}") in options for name in COMPARISONS)


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback() -> None:
    code = textwrap.dedent(
        """
        import os, signal, sys
        import toolkit._cli as cli
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
    assert main(["-q", "sync", str(path)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and str(path) in err and "committed" in err
    assert "Traceback" not in err


def test_ctrl_c_during_acknowledge_writes_the_unsent_entries(tmp_path, monkeypatch, capsys) -> None:
    acks = tmp_path / "acks.csv"
    acks.write_text("userId,entryId,outcome\nu-1,e-1,succeeded\nu-1,e-2,succeeded\n")
    rows = pd.DataFrame({"entryId": ["e-1", "e-2"], "status": ["succeeded", "not_sent"]})
    result = rows.assign(ok=[True, False], error=[None, "not sent"])

    def stop(*args: object, **kwargs: object) -> None:
        raise Interrupted("stopped", result=result)

    client = SimpleNamespace(acknowledge=stop, release_pending=stop)
    monkeypatch.setattr(cli_acknowledge, "client_from", lambda args: client)
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "acknowledge", str(acks)]) == 130
    err = capsys.readouterr().err
    assert "ok: 1" in err and "1 row(s) not sent (or unknown) written to acknowledge" in err
    assert f"resume with: toolkit -q acknowledge {acks} --journal journal.jsonl" in err
    assert pd.read_csv(tmp_path / "acknowledge.unsent.csv")["entryId"].tolist() == ["e-2"]


def test_ctrl_c_during_export_says_what_was_written(tmp_path, monkeypatch, capsys) -> None:
    client = _stopping_client("export_to_parquet")
    monkeypatch.setattr(cli_export, "client_from", lambda args: client)
    out = tmp_path / "export"
    argv = [
        "-q",
        "export",
        "--after",
        "2026-11-01",
        "--on-or-before",
        "2026-11-02",
        "--out",
        str(out),
    ]
    assert main(argv) == 130
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
    args = argparse.Namespace(
        argv=["onboard", "firm", "--journal", str(journal)], journal=str(journal), command="onboard"
    )
    assert cli_common.interrupted(Interrupted("stopped", result=result), args) == 130
    err = capsys.readouterr().err
    assert len(err.splitlines()) < 10
    unsent = Path(f"{journal}.unsent.csv")
    assert str(unsent) in err
    assert len(pd.read_csv(unsent)) == 4990


def test_validate_says_which_header_to_rename_in_full_without_python(tmp_path, capsys) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    text = (SAMPLE / "clients.csv").read_text().replace("externalId", "ExtrnalId", 1)
    (folder / "clients.csv").write_text(text)
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    words = " ".join(out.split())  # the message column wrapped over lines, never cut
    assert "columns=" not in out and "..." not in out
    assert "the file has 'ExtrnalId': rename the header 'ExtrnalId' to 'externalId'" in words
    assert "did you mean 'externalId'? rename the header 'ExtrnalId' to 'externalId'" in words


def test_an_export_onto_data_names_the_overwrite_flag_only(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli_export, "client_from", lambda args: SimpleNamespace())
    out = tmp_path / "export"
    out.mkdir()
    (out / "entries.csv").write_text("a\n")
    argv = ["export", "--after", "2026-11-01", "--on-or-before", "2026-11-02"]
    assert main([*argv, "--out", str(out), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "give --overwrite to replace it" in err and "overwrite=True" not in err


def test_star_file_headers_match_ignoring_case_and_errors_name_the_file(
    env_file, tmp_path, sandbox, capsys
) -> None:
    base = ["--env-file", str(env_file), "-q"]
    stars = tmp_path / "stars.csv"
    stars.write_text("TimekeeperExternalID,initiative_external_id\nTK-NOBODY,M-1\n")
    out = tmp_path / "res.csv"
    assert main([*base, "star", "--file", str(stars), "--out", str(out)]) == 1  # sent, refused
    assert pd.read_csv(out)["timekeeperExternalId"].tolist() == ["TK-NOBODY"]
    capsys.readouterr()
    stars.write_text("tk,Initiative External Id\nTK-NOBODY,M-1\n")
    assert main([*base, "star", "--file", str(stars)]) == 2
    err = capsys.readouterr().err
    assert f"{stars} has no timekeeperExternalId column" in err
    assert f"toolkit star TK-101 --file {stars}" in err
    stars.write_text("timekeeperExternalId,matter\nTK-NOBODY,M-1\n")
    assert main([*base, "unstar", "--file", str(stars)]) == 2
    assert f"{stars} has no initiativeExternalId column" in capsys.readouterr().err


def test_validate_reads_one_table_s_file_and_calls_a_missing_path_missing(tmp_path, capsys) -> None:
    matters = tmp_path / "Matters.csv"
    shutil.copy(SAMPLE / "initiatives.csv", matters)
    assert main(["validate", str(matters)]) == 0
    assert "initiatives" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "a-typo")]) == 2
    assert f"{tmp_path / 'a-typo'}: no such file or folder" in capsys.readouterr().err
    (tmp_path / "notes.csv").write_text("a\n1\n")
    assert main(["validate", str(tmp_path / "notes.csv")]) == 2
    assert "nor a file named after an import table" in capsys.readouterr().err


def test_a_closed_stdout_ends_the_command_quietly_as_sigpipe_does() -> None:
    code = "import sys, toolkit._cli as cli; sys.argv = ['toolkit', *sys.argv[1:]]; cli.console()"
    argv = [sys.executable, "-c", code, "validate", "sample_data/broken"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `| head` does once it has its lines
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_a_refused_onboard_says_nothing_was_sent_once(tmp_path, capsys) -> None:
    assert main(["-q", "--env-file", str(tmp_path / "none.env"), "onboard", str(SAMPLE / "broken")])
    err = capsys.readouterr().err
    assert err.startswith("validation failed, nothing sent: 18 validation failure(s)\n")
    assert err.count("nothing") == 1


@pytest.fixture
def down(tmp_path: Path, no_toolkit_env: None, unused_port: int, monkeypatch) -> Path:
    """A working folder whose .env names a service that does not answer."""
    env = toolkit.sandbox.env_for(f"http://127.0.0.1:{unused_port}", "c", "i", "s", "a")
    write_env_file(tmp_path / ".env", env)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_with_the_service_down_the_error_is_printed_once(down: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    argv = [sys.executable, "-m", "toolkit", "-q", "onboard", str(SAMPLE)]
    out = subprocess.run(argv, capture_output=True, text=True, cwd=down, env=env, timeout=120)
    assert out.returncode == 2
    assert out.stderr.count("could not reach") == 1  # not the library's log line as well
    assert out.stderr.startswith("error: could not reach")


def test_a_journal_that_was_only_checked_is_not_left_behind(down: Path, capsys: Any) -> None:
    assert main(["-q", "onboard", str(SAMPLE), "--journal", "j.jsonl"]) == 2
    assert "could not reach" in capsys.readouterr().err
    assert not (down / "j.jsonl").exists()


def test_sync_and_export_options_are_checked_before_any_request(down: Path, capsys: Any) -> None:
    window = ["--after", "2026-11-01", "--on-or-before", "2026-11-03"]
    for argv, said in (
        (
            ["sync", "time", *window, "--window", "xyz"],
            "error: --window 'xyz' is not a pandas offset",
        ),
        (["sync", "time", *window, "--lag", "xyz"], "error: --lag: cannot read 'xyz'"),
        (
            ["export", *window, "--out", "e", "--window", "0D"],
            "error: --window '0D' must be a positive",
        ),
        (
            ["export", "--after", "2026-13-01", "--on-or-before", "2026-11-03", "--out", "e"],
            "--after",
        ),
        (["sync", "time", "--after", "2026-11-03", "--on-or-before", "2026-11-01"], "is empty"),
    ):
        assert main(["-q", *argv]) == 2
        err = capsys.readouterr().err
        assert said in err and "could not reach" not in err, argv


def test_every_command_line_of_the_jobs_page_parses() -> None:
    text = (REPO / "docs" / "jobs.md").read_text()
    commands = re.findall(r"`(toolkit [^`]+)`", text)
    assert len(commands) > 10
    for command in commands:
        try:
            cli.parser().parse_args(shlex.split(command)[1:])
        except SystemExit:
            pytest.fail(f"docs/jobs.md: {command} is refused by the parser")


def test_ctrl_c_between_two_tables_of_onboard_prints_counts_unsent_rows_and_resume(
    env_file, tmp_path, monkeypatch, capsys
) -> None:
    from toolkit._ingress import imports

    real, seen = imports.held_children, []

    def stopped_before_the_matters(table: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(table)
        if table == "initiatives":  # the clients' bar is done, the matters' not begun
            raise KeyboardInterrupt
        return real(table, *args, **kwargs)

    monkeypatch.setattr(imports, "held_children", stopped_before_the_matters)
    journal = tmp_path / "j.jsonl"
    argv = ["--env-file", str(env_file), "-q", "onboard", str(SAMPLE), "--journal", str(journal)]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "ok: 20, failed: 0, unknown: 0, not sent: 142" in err
    unsent = pd.read_csv(f"{journal}.unsent.csv")
    assert len(unsent) == 142 and "clients" not in set(unsent["table"])
    assert f"resume with: toolkit {' '.join(argv)}" in err


# -- Ctrl+C during the demo ----------------------------------------------------------------------


def _demo_stopped_at(step: str, stop: BaseException, tmp_path, monkeypatch, capsys) -> str:  # noqa: ANN001
    from toolkit import _demo

    def stopping(run: Any) -> str:
        raise stop

    steps = [(name, stopping if name == step else fn) for name, fn in _demo._STEPS]
    monkeypatch.setattr(_demo, "_STEPS", steps)
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--out", "out", "--workers", "2"]) == 130
    return capsys.readouterr().err


def test_ctrl_c_while_the_demo_sends_says_run_it_again_and_keeps_its_files_in_out(
    tmp_path, monkeypatch, capsys
) -> None:
    rows = pd.DataFrame(
        {"table": ["clients"], "externalId": ["C-1"], "status": ["not_sent"], "ok": [False]}
    )
    stop = Interrupted("stopped", result=rows.assign(error="not sent"))
    err = _demo_stopped_at("onboard", stop, tmp_path, monkeypatch, capsys)
    assert "--journal" not in err and "run it again with: toolkit demo --out out" in err
    assert (tmp_path / "out" / "unsent.csv").is_file()
    assert not (tmp_path / "out.unsent.csv").exists()


def test_ctrl_c_between_the_demo_s_steps_says_what_out_holds(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "sandbox.db").write_bytes(b"")  # an earlier run's, moved aside
    err = _demo_stopped_at("export", KeyboardInterrupt(), tmp_path, monkeypatch, capsys)
    assert "nothing was written" not in err
    assert "out/sandbox.db holds what the steps before the interrupt did" in err
