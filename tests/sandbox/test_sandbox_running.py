"""Starting the sandbox: running(), the Sandbox object, the CLI, sample seeding, bulk seeding."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

import toolkit.sandbox
import toolkit.sandbox as sandbox_pkg
import toolkit.sandbox._cli
from tests.conftest import SAMPLE_DIR, TIMEOUT, fetch_token, sample_dir
from toolkit.sandbox import Sandbox, Store, running
from toolkit.sandbox._cli import READY_MARKER, is_loopback, main
from toolkit.sandbox._server import bind

REPO = Path(__file__).resolve().parents[2]
ENV_KEYS = {
    "TOOLKIT_CUSTOMER_ID",
    "TOOLKIT_CLIENT_ID",
    "TOOLKIT_CLIENT_SECRET",
    "TOOLKIT_AUTH_URL",
    "TOOLKIT_TIME_URL",
    "TOOLKIT_INGESTION_URL",
    "TOOLKIT_AUDIENCE",
}


def test_all_is_complete() -> None:
    exported = set(sandbox_pkg.__all__)
    assert all(hasattr(sandbox_pkg, name) for name in exported)
    defined_here = {
        name
        for name, value in vars(sandbox_pkg).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == "toolkit.sandbox"
    }
    assert defined_here <= exported
    assert {"running", "Sandbox", "Admin", "AdminError", "Store", "create_app"} <= exported


def test_sandbox_exposes_url_credentials_and_a_base_per_service(sandbox: Sandbox) -> None:
    assert sandbox.url.startswith("http://127.0.0.1:")
    env = sandbox.env()
    assert set(env) == ENV_KEYS
    assert env["TOOLKIT_AUTH_URL"] == sandbox.url + "/identity"
    assert env["TOOLKIT_TIME_URL"] == sandbox.url + "/time"
    assert env["TOOLKIT_INGESTION_URL"] == sandbox.url + "/ingestion"
    assert env["TOOLKIT_CLIENT_SECRET"] == sandbox.client_secret
    assert sandbox.token_url == sandbox.url + "/identity/api/v1/oauth/token"


def test_repr_hides_the_secret(sandbox: Sandbox) -> None:
    assert sandbox.client_secret not in repr(sandbox)
    assert sandbox.customer_id in repr(sandbox)


def test_write_env_writes_key_value_lines_readable_by_owner_only(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    path = sandbox.write_env(tmp_path / "sub" / ".env")
    lines = path.read_text().splitlines()
    assert dict(line.split("=", 1) for line in lines) == sandbox.env()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_running_starts_fast_on_a_free_port_and_stops_cleanly() -> None:
    start = time.perf_counter()
    with running() as sb:
        assert time.perf_counter() - start < 10
        assert requests.get(sb.url + "/openapi.json", timeout=TIMEOUT).status_code == 200
        url, db = sb.url, sb.db_path
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/openapi.json", timeout=2)
    assert not db.exists()  # the temporary database is removed


def test_two_sandboxes_run_side_by_side() -> None:
    with running() as a, running() as b:
        assert a.url != b.url
        assert a.customer_id != b.customer_id


def test_demo_customer_is_reused_on_the_same_file(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with running(db=db) as first:
        customer = first.customer_id
    with running(db=db) as second:
        assert second.customer_id == customer
        assert len(second.admin.records("users")) == 0
    assert db.exists()


def test_custom_audience_and_ttl() -> None:
    with running(audience="https://api.example/time", token_ttl=120) as sb:
        response = requests.post(
            sb.token_url,
            json={
                "audience": "https://api.example/time",
                "grant_type": "client_credentials",
                "client_id": sb.client_id,
                "client_secret": sb.client_secret,
            },
            timeout=TIMEOUT,
        )
        assert response.json()["expires_in"] == 120
        assert sb.env()["TOOLKIT_AUDIENCE"] == "https://api.example/time"


def test_start_failure_is_reported_not_hung(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:  # a port someone else already listens on
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises((RuntimeError, OSError)):
            with running(db=tmp_path / "s.db", port=port, start_timeout=10, log_level="critical"):
                pass


# --- sample data ------------------------------------------------------------------------------


@pytest.mark.skipif(sample_dir() is None, reason="sample_data/ not present")
def test_session_sandbox_is_seeded_from_sample_data(sandbox: Sandbox) -> None:
    counts = {
        kind: len(sandbox.admin.records(kind))
        for kind in ("clients", "initiatives", "code-types", "codes", "users")
    }
    rows = {
        name: len((SAMPLE_DIR / f"{name}.csv").read_text(encoding="utf-8").splitlines()) - 1
        for name in ("clients", "initiatives", "code_types", "codes", "timekeepers")
    }
    assert counts["clients"] == rows["clients"]
    assert counts["code-types"] == rows["code_types"]
    assert counts["codes"] == rows["codes"]
    assert counts["users"] == rows["timekeepers"]
    pms = [i for i in sandbox.admin.records("initiatives") if i["source"] == "pms"]
    assert len(pms) == rows["initiatives"]


@pytest.mark.skipif(sample_dir() is None, reason="sample_data/ not present")
def test_seeded_entries_are_released_over_the_last_four_weeks(sandbox: Sandbox) -> None:
    token = fetch_token(sandbox.url, sandbox.client_id, sandbox.client_secret, sandbox.audience)
    now = datetime.now(UTC)
    entries = requests.get(
        f"{sandbox.url}/api/v2/customers/{sandbox.customer_id}/entries/export",
        params={
            "releasedAfter": (now - timedelta(days=28, minutes=5)).isoformat(),
            "releasedOnOrBefore": now.isoformat(),
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    ).json()
    assert 250 <= len(entries) <= 350
    code_counts = {len(e["codes"]) for e in entries}
    assert 0 in code_counts and max(code_counts) >= 2
    assert any(any(ord(ch) > 127 for ch in e["summary"]) for e in entries)


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, encoding="utf-8")


def test_seed_sample_reads_the_contract_columns_and_skips_missing_files(tmp_path: Path) -> None:
    _write(tmp_path, "clients.csv", "externalId,name,callSign,description\nC1,Acme,1,x\n")
    _write(
        tmp_path,
        "initiatives.csv",
        "billingType,externalId,name,description,callSign,clientExternalId,unitIncrements,"
        "status\nbillable,M1,Matter,d,1-1,C1,360,active\nnon-billable,M2,Pro bono,,1-2,C1,"
        "0.25,inactive\n",
    )
    _write(
        tmp_path,
        "code_types.csv",
        "externalId,name,semanticType,customerDefaultable,userDefaultable\n"
        "task-code,task-code,task,true,false\nexpense-code,expense-code,,false,false\n",
    )
    _write(
        tmp_path,
        "codes.csv",
        "externalId,name,description,codeTypeExternalId\n"
        "L110,L110,Fact,task-code\nE101,E101,Copies,expense-code\n",
    )
    _write(tmp_path, "code_ranges.csv", "initiativeExternalId,codeExternalId\nM1,L110\n")
    _write(tmp_path, "timekeepers.csv", "timekeeperExternalId,name,email\nTK1,Ann,a@x\n")
    store = Store(tmp_path / "s.db")
    try:
        customer = store.create_customer()["customerId"]
        counts = store.seed_sample(tmp_path, customer, entries=20)
        assert counts == {
            "clients": 1,
            "initiatives": 2,
            "code-types": 2,
            "codes": 2,
            "code-ranges": 1,
            "users": 1,
            "entries": 20,
        }
        types = {t["externalId"]: t for t in store.records(customer, "code-types")}
        assert types["expense-code"]["semanticType"] is None
        assert types["task-code"]["userDefaultable"] is False
        m2 = store.records(customer, "initiatives")[1]
        assert (m2["unitIncrements"], m2["status"]) == (0.25, "inactive")
        # Entries only use active initiatives and respect code ranges; one of them is on a
        # user initiative (made in the product: no externalId), as the service publishes
        entries = store.records(customer, "entries")
        held = [e["initiativeExternalId"] for e in entries]
        assert set(held) == {"M1", None} and held.count(None) == 1
        assert {c["codeExternalId"] for e in entries for c in e["codes"]} <= {"L110"}
        # Seeding again changes nothing.
        again = store.seed_sample(tmp_path, customer, entries=20)
        assert (again["users"], again["entries"]) == (0, 0)
        empty = store.create_customer()["customerId"]
        (tmp_path / "empty").mkdir()
        assert sum(store.seed_sample(tmp_path / "empty", empty).values()) == 0
        with pytest.raises(FileNotFoundError):
            store.seed_sample(tmp_path / "missing", empty)
    finally:
        store.close()


def test_seed_sample_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    if sample_dir() is None:
        pytest.skip("sample_data/ not present")
    store = Store(tmp_path / "s.db")
    try:

        def summaries(seed: int) -> list[tuple]:
            customer = store.create_customer()["customerId"]
            store.seed_sample(SAMPLE_DIR, customer, seed=seed, entries=30)
            return [
                (e["initiativeExternalId"], e["summary"], e["incrementDurationInSeconds"])
                for e in store.records(customer, "entries")
            ]

        assert summaries(3) == summaries(3)
        assert summaries(3) != summaries(4)
    finally:
        store.close()


def test_seed_sample_names_the_file_and_line_of_a_bad_row(tmp_path: Path) -> None:
    _write(tmp_path, "clients.csv", "externalId,name,callSign,description\nC1,Acme,1,x\n")
    _write(
        tmp_path,
        "initiatives.csv",
        "billingType,externalId,name,description,callSign,clientExternalId,unitIncrements,"
        "status\nbillable,M1,Matter,d,1-1,C1,360,active\nBillable,M2,x,,1,C1,360,active\n",
    )
    store = Store(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError, match="initiatives.csv line 3"):
            store.seed_sample(tmp_path, store.create_customer()["customerId"])
    finally:
        store.close()


# --- bulk seeding -----------------------------------------------------------------------------


def test_bulk_seeding_spreads_release_times_evenly(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        customer = store.create_customer()["customerId"]
        t0 = datetime(2025, 1, 1, tzinfo=UTC)
        start = time.perf_counter()
        assert (
            store.seed_entries_bulk(
                customer,
                100_000,
                released_from=t0,
                released_to=t0 + timedelta(days=10),
                batch=20_000,
            )
            == 100_000
        )
        assert time.perf_counter() - start < 20  # about 1.5 s here; 1,000,000 in ~15 s
        day = store.export_entries(customer, t0, t0 + timedelta(days=1))
        assert len(day) == 10_000
        assert all(len(e["codes"]) == 3 for e in day[:100])
        assert store.export_entries(customer, t0 - timedelta(days=1), t0) == []
    finally:
        store.close()


# --- command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.1.2.3", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_cli_refuses_a_non_loopback_host_without_allow_remote(capsys) -> None:
    assert main(["--host", "0.0.0.0", "--port", "0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_cli_reports_a_busy_port(capsys) -> None:
    sock = bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        assert main(["--port", str(port)]) == 1
        assert "cannot listen" in capsys.readouterr().err
    finally:
        sock.close()


def test_cli_reports_a_missing_seed_folder(tmp_path: Path, capsys) -> None:
    assert main(["--port", "0", "--seed", str(tmp_path / "nope")]) == 1
    assert "no sample data folder" in capsys.readouterr().err


def _serving(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    """``toolkit sandbox`` as a user starts it, its temporary folder under ``tmp_path``; returns
    once it prints that it is ready."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolkit",
            "sandbox",
            "--port",
            "0",
            "--env-file",
            str(tmp_path / ".env"),
            "--log-level",
            "warning",
            *extra,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:  # the ready line comes within seconds; the deadline guards it
        if line.startswith(READY_MARKER) or time.monotonic() > deadline:
            break
    else:
        proc.kill()
        pytest.fail(f"the sandbox never said it was ready: {proc.communicate(timeout=10)}")
    return proc


def test_sigterm_stops_a_serving_sandbox_with_the_right_words_and_removes_its_folder(
    tmp_path: Path,
) -> None:
    proc = _serving(tmp_path)
    assert len(list(tmp_path.glob("toolkit-sandbox-*"))) == 1
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Sandbox stopped; its temporary database" in out
    assert "interrupted while starting" not in err and "Traceback" not in err
    assert list(tmp_path.glob("toolkit-sandbox-*")) == []


def test_a_sandbox_whose_output_pipe_closed_stops_without_a_traceback(tmp_path: Path) -> None:
    proc = _serving(tmp_path, "--db", str(tmp_path / "kept.db"))
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `toolkit sandbox | head` leaves it
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    err = proc.stderr.read()
    assert proc.returncode == 0, err
    assert "BrokenPipeError" not in err and "Traceback" not in err
    assert (tmp_path / "kept.db").is_file()  # a database it was given stays


# -- the banner says what is pending -----------------------------------------------------------


class _Entries:
    """A store holding entries in the given states."""

    def __init__(self, *states: str) -> None:
        self.states = states

    def records(self, customer_id: str, kind: str) -> list[dict[str, str]]:
        return [{"state": state} for state in self.states]


def test_the_sandbox_banner_says_what_is_pending_and_how_to_release_more() -> None:
    _pending_line = toolkit.sandbox._cli._pending_line
    assert _pending_line(_Entries("pending", "succeeded"), "c") == (  # type: ignore[arg-type]
        "1 of its 2 entries are pending: release-pending and the acknowledgements act on them"
    )
    nothing = _pending_line(_Entries("succeeded", "failed"), "c")  # type: ignore[arg-type]
    assert nothing.startswith("Nothing is pending") and "make demo" in nothing
    assert "/release" in nothing
