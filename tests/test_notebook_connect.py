"""toolkit.connect: a notebook's one-line start, on the configured service or its own sandbox."""

from __future__ import annotations

from pathlib import Path

import dotenv
import pytest

import toolkit
from toolkit import ConfigError, notebook
from toolkit._core.settings import ENV_KEYS

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"
SWITCHES = ("TOOLKIT_USE_ENV", "TOOLKIT_NOTEBOOK_SANDBOX", "TOOLKIT_ALLOW_WRITES")


@pytest.fixture(autouse=True)
def nothing_configured(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    """No TOOLKIT_* variable, and a working folder with no .env above it."""
    for var in (*ENV_KEYS.values(), *SWITCHES):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(notebook, "find_dotenv", lambda usecwd: _find(Path.cwd()))
    yield
    notebook.stop()


def _find(folder: Path) -> str:
    """find_dotenv(usecwd=True), stopping at the test's temporary folder's root."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".env").is_file():
            return str(candidate / ".env")
        if candidate.name.startswith("pytest-"):
            break
    return ""


def _remote(monkeypatch) -> None:  # noqa: ANN001
    env = {
        "TOOLKIT_CUSTOMER_ID": "c",
        "TOOLKIT_CLIENT_ID": "i",
        "TOOLKIT_CLIENT_SECRET": "s",
        "TOOLKIT_AUTH_URL": "https://auth.example.com",
        "TOOLKIT_TIME_URL": "https://time.example.com",
        "TOOLKIT_AUDIENCE": "a",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def test_connect_is_a_public_name() -> None:
    assert toolkit.connect is notebook.connect
    assert "connect" in toolkit.__all__


def test_the_notebook_sandbox_switch_starts_a_seeded_sandbox_kept_until_stop(
    monkeypatch, capsys, sandbox
) -> None:  # noqa: ANN001
    for key, value in sandbox.env().items():  # configured, but the switch wins
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TOOLKIT_NOTEBOOK_SANDBOX", "1")
    client = toolkit.connect(seed=SAMPLE)
    assert capsys.readouterr().out == (
        "using the notebook's own sandbox (demo customer seeded with sample_data/)\n"
    )
    own = notebook.sandbox()
    assert own is not None and own.url != sandbox.url
    assert client.customer_id == own.customer_id
    assert len(client.starred("TK-101")) > 0  # the seed's starred lists
    assert notebook.stop() is True
    assert notebook.sandbox() is None and notebook.stop() is False


def test_toolkit_variables_give_the_configured_service(monkeypatch, capsys, sandbox) -> None:  # noqa: ANN001
    for key, value in sandbox.env().items():
        monkeypatch.setenv(key, value)
    client = toolkit.connect()
    assert client.customer_id == sandbox.customer_id
    assert notebook.sandbox() is None
    assert capsys.readouterr().out.startswith("using the configured service (TOOLKIT_* variables)")


def test_a_dotenv_in_a_parent_folder_is_found(tmp_path, monkeypatch, capsys, sandbox) -> None:  # noqa: ANN001
    monkeypatch.setattr(notebook, "find_dotenv", dotenv.find_dotenv)  # the real search
    env = sandbox.write_env(tmp_path / ".env")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    client = toolkit.connect()
    assert client.customer_id == sandbox.customer_id
    assert f"({env})" in capsys.readouterr().out


def test_a_service_elsewhere_needs_writes_allowed(monkeypatch, capsys) -> None:  # noqa: ANN001
    _remote(monkeypatch)
    with pytest.raises(ConfigError, match="is not on this machine .* TOOLKIT_ALLOW_WRITES=1"):
        toolkit.connect()
    assert toolkit.connect(allow_writes=True).customer_id == "c"
    monkeypatch.setenv("TOOLKIT_ALLOW_WRITES", "1")
    assert toolkit.connect().connection.urls["time"] == "https://time.example.com"
    with pytest.raises(ConfigError, match="is not on this machine"):
        toolkit.connect(allow_writes=False)


def test_a_local_service_that_does_not_answer_is_a_clear_error(tmp_path, unused_port) -> None:  # noqa: ANN001
    url = f"http://127.0.0.1:{unused_port}"
    (tmp_path / ".env").write_text(
        f"TOOLKIT_CUSTOMER_ID=c\nTOOLKIT_CLIENT_ID=i\nTOOLKIT_CLIENT_SECRET=s\n"
        f"TOOLKIT_AUTH_URL={url}\nTOOLKIT_TIME_URL={url}\nTOOLKIT_AUDIENCE=a\n"
    )
    with pytest.raises(ConfigError, match="nothing answers.*TOOLKIT_NOTEBOOK_SANDBOX=1"):
        toolkit.connect()


def test_use_env_demands_a_configuration(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("TOOLKIT_USE_ENV", "1")
    with pytest.raises(ConfigError, match="TOOLKIT_CUSTOMER_ID"):
        toolkit.connect()


def test_a_missing_seed_or_env_file_is_named(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(ConfigError, match="nowhere.env is not a file"):
        toolkit.connect(env_file=tmp_path / "nowhere.env")
    with pytest.raises(ConfigError, match="seed .*nowhere is not a folder"):
        toolkit.connect(seed=tmp_path / "nowhere")
