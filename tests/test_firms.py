"""``toolkit.firms``: the firms file checked (firm and key in every error), secrets by reference,
relative paths, one firm's steps against the sandbox, and ``toolkit firms status``."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from toolkit._cli import main
from toolkit.errors import AuthError, ConfigError
from toolkit.firms import Firm, load, status

GOOD = """
[firms.harbor-lane]
customer_id = "cust-1"
client_id = "app-1"
client_secret_env = "HARBOR_LANE_SECRET"
auth_url = "https://auth.example"
time_url = "https://time.example"
audience = "https://time.example"
source = "extracts/harbor-lane"
journal = "state/harbor-lane.jsonl"
sync = "lake/harbor-lane"
billing = "billing/harbor-lane.xlsx"

[firms.north-quay]
customer_id = "cust-2"
client_id = "app-2"
client_secret_file = "secrets/north-quay"
auth_url = "https://auth.example"
time_url = "https://time.example"
audience = "https://time.example"
journal = "state/north-quay.jsonl"
sync = "lake/north-quay"
after = 2026-01-31
max_rate = 5
[firms.north-quay.reconcile]
duration = "hours"
duration_unit = "hours"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "firms.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_reads_every_firm_with_paths_against_its_folder(tmp_path):
    firms = load(_write(tmp_path, GOOD))
    assert list(firms) == ["harbor-lane", "north-quay"]
    harbor, north = firms["harbor-lane"], firms["north-quay"]
    assert harbor.source == tmp_path / "extracts" / "harbor-lane"
    assert harbor.journal == tmp_path / "state" / "harbor-lane.jsonl"
    assert harbor.billing == tmp_path / "billing" / "harbor-lane.xlsx"
    assert harbor.after == "30D" and north.after == pd.Timestamp("2026-01-31", tz="UTC")
    assert north.source is None and north.billing is None and north.max_rate == 5.0
    assert north.client_secret_file == tmp_path / "secrets" / "north-quay"
    assert dict(north.reconcile_options) == {"duration": "hours", "duration_unit": "hours"}
    assert harbor.service_host == "time.example"


def _firm(**changes: object) -> str:
    base = {
        "customer_id": '"c"',
        "client_id": '"i"',
        "client_secret_env": '"S"',
        "auth_url": '"https://a.example"',
        "time_url": '"https://t.example"',
        "audience": '"https://t.example"',
        "journal": '"j.jsonl"',
        "sync": '"lake"',
    }
    base.update({k: v for k, v in changes.items() if v is not None})
    lines = [f"{k} = {v}" for k, v in base.items() if changes.get(k, "") is not None]
    return "[firms.acme]\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_firm(customer_id=None), "firm 'acme', key 'customer_id': is missing"),
        (_firm(customer_id="7"), "firm 'acme', key 'customer_id': must be a string, not 7"),
        (_firm(client_id='""'), "firm 'acme', key 'client_id': is empty"),
        (_firm(audience=None), "firm 'acme', key 'audience': is missing"),
        (
            _firm(clent_id='"x"'),
            "firm 'acme', key 'clent_id': unknown key (did you mean 'client_id'?)",
        ),
        (
            _firm(client_secret_env=None),
            "firm 'acme', key 'client_secret_env': give the secret by reference",
        ),
        (_firm(client_secret_file='"s"'), "(both are given)"),
        (
            _firm(time_url='"time.example"'),
            "firm 'acme', key 'time_url': 'time.example' is not an http(s) address",
        ),
        (
            _firm(after='"last tuesday"'),
            "firm 'acme', key 'after': 'last tuesday' is neither a date",
        ),
        (_firm(max_rate="0"), "firm 'acme', key 'max_rate': must be a positive number"),
        (_firm(workers="true"), "firm 'acme', key 'workers': must be an integer, not True"),
        (
            _firm(reconcile='{ duraton = "hours" }'),
            "firm 'acme', key 'reconcile.duraton': "
            "unknown key (did you mean "
            "'reconcile.duration'?)",
        ),
        ("[firms.acme]\ncustomer_id = \n", "is not valid TOML"),
        ("[firm.acme]\n", "unknown table 'firm'"),
        ("", "no firm"),
        ('[firms."a b"]\n', "firm 'a b': a firm's key holds letters, digits"),
        (
            _firm() + _firm().replace("acme", "other").replace('"j.jsonl"', '"k.jsonl"'),
            "firm 'other', key 'sync': the same sync as firm 'acme'",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_the_firm_and_the_key(tmp_path, text, expected):
    with pytest.raises(ConfigError) as raised:
        load(_write(tmp_path, text))
    assert expected in str(raised.value)


def test_a_missing_file_is_refused_with_its_path(tmp_path):
    with pytest.raises(ConfigError, match="firms.toml: cannot be read"):
        load(tmp_path / "firms.toml")


def test_the_secret_is_read_from_the_environment_or_a_dotenv_beside_the_file(tmp_path, monkeypatch):
    firms = load(_write(tmp_path, GOOD))
    monkeypatch.delenv("HARBOR_LANE_SECRET", raising=False)
    with pytest.raises(
        ConfigError,
        match="firm 'harbor-lane': client_secret_env: the variable HARBOR_LANE_SECRET is not set",
    ):
        firms["harbor-lane"].client()
    (tmp_path / ".env").write_text("HARBOR_LANE_SECRET=from-dotenv-0001\n")
    client = load(tmp_path / "firms.toml")["harbor-lane"].client()
    assert client.connection.auth is not None and "from-dotenv-0001" not in repr(client)
    monkeypatch.setenv("HARBOR_LANE_SECRET", "from-env-0002")
    firm = load(tmp_path / "firms.toml")["harbor-lane"]
    assert firm._secret() == "from-env-0002"
    with pytest.raises(ConfigError, match="firm 'north-quay': client_secret_file .* cannot be"):
        firms["north-quay"].client()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "north-quay").write_text("from-file-0003\n")
    assert firms["north-quay"]._secret() == "from-file-0003"


def test_no_secret_in_any_repr_or_pickle(tmp_path, monkeypatch):
    monkeypatch.setenv("HARBOR_LANE_SECRET", "hush-hush-0004")
    firms = load(_write(tmp_path, GOOD))
    firm = firms["harbor-lane"]
    shown = [repr(firms), repr(firm), str(firm), repr(firm.client()), str(pickle.dumps(firm))]
    assert all("hush-hush-0004" not in text for text in shown)
    assert "HARBOR_LANE_SECRET" in repr(firm)


def test_a_firm_pushes_syncs_and_shows_its_status(sandbox, tmp_path, monkeypatch, capsys):
    creds = sandbox.admin.create_customer("Status firm")
    monkeypatch.setenv("STATUS_SECRET", creds["clientSecret"])
    (tmp_path / "src").mkdir()
    pd.DataFrame(
        [{"externalId": "C-1", "name": "Acme", "callSign": "ACME", "description": "Widgets"}]
    ).to_csv(tmp_path / "src" / "clients.csv", index=False)
    path = _write(
        tmp_path,
        f"""
[firms.status-firm]
customer_id = "{creds["customerId"]}"
client_id = "{creds["clientId"]}"
client_secret_env = "STATUS_SECRET"
auth_url = "{sandbox.url}"
time_url = "{sandbox.url}"
audience = "{creds["audience"]}"
source = "src"
journal = "state/status.jsonl"
sync = "lake/status"
after = "2D"
""",
    )
    firm = load(path)["status-firm"]
    assert status({"status-firm": firm})["delta_version"].isna().all()
    client = firm.client()
    assert firm.push(client).ok
    report = firm.sync_tables(client)
    assert report.watermark is not None and firm.reconcile() is None
    row = status(load(path)).iloc[0]
    assert (row["sent"], row["unchanged"], row["failing"]) == (1, 0, 0)
    assert row["watermark"] == report.watermark and row["delta_version"] >= 1
    assert pd.Timedelta(0) <= row["watermark_age"] < pd.Timedelta("1h")
    assert firm.push(client).counts["journaled"].sum() == 1
    assert status(load(path)).iloc[0]["unchanged"] == 1

    out = tmp_path / "status.xlsx"
    assert main(["firms", "status", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "status-firm" in printed and creds["clientSecret"] not in printed
    written = pd.read_excel(out)
    assert written.loc[0, "firm"] == "status-firm" and written.loc[0, "unchanged"] == 1
    assert "watermark_utc" in written


def test_a_failing_firm_shows_as_failing_with_its_count_and_last_error(
    sandbox, tmp_path, monkeypatch, capsys
):
    creds = sandbox.admin.create_customer("Failing firm")
    monkeypatch.setenv("FAILING_SECRET", "not-the-secret")
    (tmp_path / "src").mkdir()
    pd.DataFrame(
        [{"externalId": "C-1", "name": "Acme", "callSign": "ACME", "description": "Widgets"}]
    ).to_csv(tmp_path / "src" / "clients.csv", index=False)
    path = _write(
        tmp_path,
        f"""
[firms.failing-firm]
customer_id = "{creds["customerId"]}"
client_id = "{creds["clientId"]}"
client_secret_env = "FAILING_SECRET"
auth_url = "{sandbox.url}"
time_url = "{sandbox.url}"
audience = "{creds["audience"]}"
source = "src"
journal = "state/failing.jsonl"
sync = "lake/failing"
""",
    )
    firm = load(path)["failing-firm"]
    assert status(load(path)).loc[0, "state"] == "never run"
    for _ in range(2):
        with pytest.raises(AuthError), firm.recorded("sync"):
            firm.sync_tables()
    row = status(load(path)).iloc[0]
    assert (row["state"], row["failed_runs"]) == ("failing", 2)
    assert row["last_error"].startswith("sync: AuthError: ")
    assert pd.Timestamp.now(tz="UTC") - row["last_error_at"] < pd.Timedelta("1min")
    assert main(["firms", "status", str(path)]) == 1
    printed = capsys.readouterr().out
    assert "failing" in printed and "sync: AuthError" in printed
    with firm.recorded("push"):  # a push whose rows all failed: failing, its rows counted
        assert not firm.push().ok
    row = status(load(path)).iloc[0]
    assert (row["state"], row["failing"], row["failed_runs"]) == ("failing", 1, 2)

    monkeypatch.setenv("FAILING_SECRET", creds["clientSecret"])
    with firm.recorded("push"):
        assert firm.push().ok
    with firm.recorded("sync"):
        firm.sync_tables()
    row = status(load(path)).iloc[0]
    assert (row["state"], row["failed_runs"], row["failing"], row["sent"]) == ("ok", 0, 0, 1)
    assert pd.isna(row["last_error"])
    assert main(["firms", "status", str(path)]) == 0


def test_the_status_command_refuses_a_bad_file_with_exit_status_2(tmp_path, capsys):
    path = _write(tmp_path, _firm(customer_id="7"))
    assert main(["firms", "status", str(path)]) == 2
    assert "firm 'acme', key 'customer_id'" in capsys.readouterr().err


def test_a_firm_without_source_cannot_push(tmp_path):
    firm = Firm(
        "a", "c", "i", "http://x", "http://x", tmp_path / "j", tmp_path / "s", client_secret_env="X"
    )
    with pytest.raises(ConfigError, match="firm 'a': no source"):
        firm.push()


def test_import_toolkit_and_toolkit_firms_never_import_dagster():
    code = (
        "import sys, toolkit, toolkit.firms, toolkit._cli; toolkit.Client; "
        "print('dagster' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_firm_s_sync_since_is_its_after_kept_one_release(tmp_path) -> None:  # noqa: ANN001
    from toolkit.firms import Firm

    firm = Firm("f", "c", "i", "http://a", "http://t", tmp_path / "j", tmp_path / "s", after="30D")
    with pytest.warns(DeprecationWarning, match="use Firm.after"):
        assert firm.sync_since == "30D"
