"""Settings and secrets: ``.env`` files read with python-dotenv, written 0600 and never through a
symlink, and no secret or token in any traceback's locals along the request path."""

from __future__ import annotations

import copy
import errno
import os
import pickle
import traceback
from pathlib import Path
from typing import Any

import pytest
import urllib3

import toolkit
from toolkit import Client
from toolkit._cli import main
from toolkit._core.auth import Secret
from toolkit._core.connection import Connection
from toolkit._core.settings import Settings, read_env_file
from toolkit.errors import AuthError, ConfigError
from toolkit.sandbox import Sandbox, write_env_file

README_LINES = """\
# written by hand, as the README shows
TOOLKIT_CUSTOMER_ID=6f1c0ffee0000000000000aa # your customerId
export TOOLKIT_CLIENT_ID=app-1
TOOLKIT_CLIENT_SECRET='s3cr#t with spaces'
TOOLKIT_AUTH_URL="http://127.0.0.1:8765"   # identity
TOOLKIT_TIME_URL=http://127.0.0.1:8765
TOOLKIT_AUDIENCE= "https://time.example"  # required
"""


def test_env_file_comments_quotes_and_export_prefixes_are_read_as_dotenv_does(tmp_path) -> None:
    path = tmp_path / ".env"
    path.write_text(README_LINES, encoding="utf-8")
    values = read_env_file(path)
    assert values == {
        "TOOLKIT_CUSTOMER_ID": "6f1c0ffee0000000000000aa",
        "TOOLKIT_CLIENT_ID": "app-1",
        "TOOLKIT_CLIENT_SECRET": "s3cr#t with spaces",
        "TOOLKIT_AUTH_URL": "http://127.0.0.1:8765",
        "TOOLKIT_TIME_URL": "http://127.0.0.1:8765",
        "TOOLKIT_AUDIENCE": "https://time.example",
    }
    settings = Settings.from_env(path, environ={})
    assert settings.customer_id == "6f1c0ffee0000000000000aa"
    assert settings.client_secret.reveal() == "s3cr#t with spaces"
    assert settings.audience == "https://time.example"


def test_env_file_values_are_literal_without_variable_expansion(tmp_path) -> None:
    path = tmp_path / ".env"
    path.write_text("A=x\nB=${A}$HOME\n", encoding="utf-8")
    assert read_env_file(path)["B"] == "${A}$HOME"


def test_a_new_env_file_is_written_owner_only(tmp_path) -> None:
    path = write_env_file(tmp_path / "sub" / ".env", {"TOOLKIT_CLIENT_SECRET": "x"})
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_rewritten_env_file_is_made_owner_only(tmp_path) -> None:
    path = tmp_path / ".env"
    path.write_text("OLD=1\n", encoding="utf-8")
    os.chmod(path, 0o644)
    write_env_file(path, {"TOOLKIT_CLIENT_SECRET": "x"})
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_env_file(path) == {"TOOLKIT_CLIENT_SECRET": "x"}
    assert [p.name for p in tmp_path.iterdir()] == [".env"]  # no temporary file left over


def test_a_symlinked_env_file_is_refused_and_its_target_untouched(tmp_path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n", encoding="utf-8")
    link = tmp_path / ".env"
    link.symlink_to(target)
    with pytest.raises(OSError) as info:
        write_env_file(link, {"TOOLKIT_CLIENT_SECRET": "x"})
    assert info.value.errno == errno.ELOOP
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert link.is_symlink()


def test_written_values_read_back_whatever_they_hold(tmp_path) -> None:
    env = {"A": "plain-1.2:3@x/y", "B": "with space # not a comment", "C": "it's \\ odd", "D": ""}
    path = write_env_file(tmp_path / ".env", env)
    assert read_env_file(path) == env


def test_a_secret_pickles_and_prints_masked() -> None:
    secret = Secret("hunter2")
    for form in (repr(secret), str(secret), f"{secret}", f"{secret!r:>40}"):
        assert "hunter2" not in form
    pickled = pickle.dumps(secret)
    assert b"hunter2" not in pickled
    assert pickle.loads(pickled).reveal() == "********"
    assert copy.deepcopy(secret).reveal() == "hunter2"  # copies in memory keep the value


def _formatted_with_locals(exc: BaseException) -> str:
    return "".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format())


def test_a_refused_token_fetch_leaves_no_secret_in_traceback_locals(sandbox) -> None:
    # the test's own frame is in the traceback too: it holds the secret wrapped as well
    wrong = Secret("wrong-" + sandbox.client_secret)
    conn = Connection(
        Settings(
            sandbox.customer_id,
            sandbox.client_id,
            wrong,
            sandbox.url,
            sandbox.url,
            audience=sandbox.audience,
        ),
        retries=0,
    )
    with pytest.raises(AuthError) as info:
        conn.auth.token()
    text = _formatted_with_locals(info.value)
    assert "_fetch" in text and "self = TokenProvider(" in text  # the locals were captured
    assert wrong.reveal() not in text


def _fail_inside_urllib3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the socket-level send fail (the sandbox cannot produce an exception in urllib3)."""

    def broken(self, conn, method, url, body=None, headers=None, **kwargs):  # noqa: ANN001
        raise RuntimeError("injected failure below requests")

    monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool, "_make_request", broken)


def test_a_token_fetch_failing_inside_urllib3_leaves_no_secret_in_traceback_locals(
    sandbox, monkeypatch
) -> None:
    conn = Connection(
        Settings(
            sandbox.customer_id,
            sandbox.client_id,
            sandbox.client_secret,
            sandbox.url,
            sandbox.url,
            audience=sandbox.audience,
        ),
        retries=0,
    )
    _fail_inside_urllib3(monkeypatch)
    with pytest.raises(RuntimeError) as info:
        conn.auth.token()
    text = _formatted_with_locals(info.value)
    assert "Transport.send" in text or "in send" in text
    assert sandbox.client_secret not in text


def test_a_request_failing_inside_urllib3_leaves_no_token_in_traceback_locals(
    sandbox, monkeypatch
) -> None:
    client = Client.from_env(None, environ=sandbox.env(), retries=0)
    users = sandbox.admin.records("users")
    client.user(users[0]["_id"])  # a token is now cached
    token = client.connection.auth.secret_token()  # wrapped: this frame is in the traceback too
    _fail_inside_urllib3(monkeypatch)
    with pytest.raises(RuntimeError) as info:
        client.user(users[0]["_id"])
    text = _formatted_with_locals(info.value)
    assert "token = Secret('********')" in text  # Connection.send's frame, captured and masked
    assert token.reveal() not in text
    assert sandbox.client_secret not in text


def test_a_request_refused_by_the_service_leaves_no_token_in_traceback_locals(sandbox) -> None:
    client = Client.from_env(None, environ=sandbox.env(), retries=0)
    with pytest.raises(Exception) as info:
        client.user("0" * 24)  # no such user: 404
    text = _formatted_with_locals(info.value)
    assert client.connection.auth.secret_token().reveal() not in text
    assert sandbox.client_secret not in text


# -- .env is found as find_dotenv finds it, and the settings say which file --------------------


def test_from_env_in_a_subfolder_finds_the_env_file_above_and_connects(
    project: Path, sandbox: Sandbox
) -> None:
    client = toolkit.Client.from_env()
    assert client.settings.source == str((project / ".env").resolve())
    assert client.customer_id == sandbox.customer_id
    assert client.connection.auth.secret_token().reveal()


def test_from_env_without_a_file_says_environment_or_that_none_was_found(
    tmp_path: Path, sandbox: Sandbox, no_toolkit_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert toolkit.Client.from_env(environ=sandbox.env()).settings.source == "environment"
    with pytest.raises(ConfigError, match=r"no \.env file in this folder or a parent"):
        toolkit.Client.from_env(environ={})


def test_the_cli_in_a_subfolder_reads_the_env_file_above(project: Path, capsys: Any) -> None:
    assert main(["-q", "pending", "--out", "pending", "--format", "csv"]) == 0
    assert (project / "notebooks" / "pending" / "entries.csv").is_file()
