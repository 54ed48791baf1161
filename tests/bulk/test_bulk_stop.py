"""Bulk runs stop when asked, fail fast when the service is gone, say what they cannot know,
and keep their journal sound."""

from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import client_env
from toolkit import Client, ConfigError, Interrupted, JournalInUseError
from toolkit._bulk.runner import Call, Journal
from toolkit._ingress import plan

JOURNAL_URL = "https://svc/api/v1/customers/c1/clients/import"


def _clients(n: int, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": [f"{prefix}-{i:05d}" for i in range(n)],
            "name": [f"Client {i}" for i in range(n)],
            "callSign": [f"{i:05d}" for i in range(n)],
            "description": ["generated"] * n,
        }
    )


def _settle(sandbox, seconds: float = 5.0) -> int:
    """The sandbox's request count once it stops growing (bounded)."""
    previous, deadline = -1, time.monotonic() + seconds
    while time.monotonic() < deadline:
        total = sandbox.admin.stats()["total"]
        if total == previous:
            return total
        previous = total
        time.sleep(0.3)
    return previous


# -- stop when asked ------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [None, 100], ids=["one batch", "batches of 100"])
def test_interrupt_in_the_main_thread_raises_interrupted_within_a_second_with_every_row(
    fresh_client: Client, sandbox, no_faults, monkeypatch: pytest.MonkeyPatch, batch: int | None
) -> None:
    if batch is not None:  # two batches in flight at once (the next starts as the last ends)
        monkeypatch.setattr(plan, "BATCH", batch)
    frame = _clients(3000, prefix="INT")
    sandbox.admin.set_faults(latency_ms=50)
    fired: list[float] = []

    def interrupt() -> None:
        fired.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(1.0, interrupt)
    timer.start()
    try:
        with pytest.raises(Interrupted) as info:
            fresh_client.import_clients(frame, progress=False, workers=8)
        raised = time.monotonic()
    finally:
        timer.cancel()
        sandbox.admin.clear_faults()
    assert fired and raised - fired[0] < 1.0
    result = info.value.result
    assert isinstance(info.value, KeyboardInterrupt)
    assert len(result) == len(frame) and result.index.equals(frame.index)
    counts = result["status"].value_counts()
    assert counts["sent"] > 0 and counts["not_sent"] > 0
    assert set(result["status"].astype(str)) <= {"sent", "unknown", "not_sent"}
    assert result.loc[result["status"] == "not_sent", "error"].str.contains("interrupted").all()
    # every row is accounted for: what was sent is stored, what was not is not
    stored = {
        r["externalId"]
        for r in sandbox.admin.records("clients", customer_id=fresh_client.customer_id)
    }
    sent = set(result.loc[result["status"] == "sent", "externalId"])
    never = set(result.loc[result["status"] == "not_sent", "externalId"])
    both = result[result["externalId"].isin(never & stored)]
    shown = both[["externalId", "attempts", "error"]].head().to_string()
    assert sent <= stored and not (never & stored), shown


def test_sigint_to_onboard_exits_130_fast_and_the_rerun_sends_exactly_the_rest(
    fresh_client: Client, sandbox, tmp_path: Path, no_faults
) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    n = 3000
    _clients(n, prefix="SIG").to_csv(folder / "clients.csv", index=False)
    journal = tmp_path / "onboard.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "toolkit",
        "--env-file",
        str(tmp_path / "none.env"),
        "-q",
        "onboard",
        str(folder),
        "--journal",
        str(journal),
        "--workers",
        "8",
    ]
    env = {**os.environ, **client_env(fresh_client, sandbox)}
    sandbox.admin.set_faults(latency_ms=50)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and journal.read_bytes().count(b"\n") >= 100:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before the interrupt"
        proc.send_signal(signal.SIGINT)
        sent_at = time.monotonic()
        out, err = proc.communicate(timeout=20)
        exited = time.monotonic() - sent_at
        print(f"exited {exited:.2f} s after SIGINT")
        at_exit = sandbox.admin.stats()["total"]
        time.sleep(1.0)
        after = sandbox.admin.stats()["total"]
    finally:
        sandbox.admin.clear_faults()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    assert exited < 2.0
    assert after == at_exit, "requests left after the process exited"
    assert "not sent:" in err and "resume with: toolkit" in err and "Traceback" not in err
    not_sent = int(err.split("not sent: ")[1].split()[0].rstrip(","))
    unknown = int(err.split("unknown: ")[1].split(",")[0])
    acknowledged = len(Journal(journal))
    assert 0 < not_sent < n and acknowledged + not_sent + unknown == n
    sandbox.admin.reset_stats()
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    routes = sandbox.admin.stats()["routes"]
    resent = sum(v["count"] for k, v in routes.items() if "clients/import" in k)
    assert resent == not_sent + unknown
    stored = sandbox.admin.records("clients", customer_id=fresh_client.customer_id)
    assert len(stored) == n and len({r["externalId"] for r in stored}) == n


# -- fail fast ------------------------------------------------------------------------------------


def test_closed_identity_port_ends_a_1000_row_run_within_10_seconds_naming_the_host(
    fresh_client: Client, sandbox, unused_port: int
) -> None:
    client = Client(
        fresh_client.customer_id,
        fresh_client.settings.client_id,
        fresh_client.connection.auth._secret,
        f"http://127.0.0.1:{unused_port}",
        sandbox.url,
        audience=sandbox.audience,
        retries=5,
    )
    start = time.monotonic()
    result = client.import_clients(_clients(1000, prefix="CLOSED"), progress=False)
    assert time.monotonic() - start < 10
    assert (result["status"] == "not_sent").all()
    assert result["error"].str.contains(f"127.0.0.1:{unused_port}").all()
    assert result["error"].str.contains("TOOLKIT_AUTH_URL").all()
    assert result["error"].str.contains("connection refused").all()


def test_closed_port_fails_the_whole_onboarding_once_not_per_table(
    fresh_client: Client, sandbox, unused_port: int
) -> None:
    client = Client(
        fresh_client.customer_id,
        fresh_client.settings.client_id,
        fresh_client.connection.auth._secret,
        sandbox.url,
        f"http://127.0.0.1:{unused_port}",
        audience=fresh_client.connection.settings.audience,
    )
    initiatives = pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": ["M-1", "M-2"],
            "name": "n",
            "description": "d",
            "callSign": ["1", "2"],
            "clientExternalId": "CLOSED-00000",
            "unitIncrements": 360,
            "status": "active",
        }
    )
    start = time.monotonic()
    report = client.onboard(
        {"clients": _clients(50, "CLOSED"), "initiatives": initiatives}, progress=False
    )
    assert time.monotonic() - start < 10
    assert (report.results["status"] == "not_sent").all()
    assert report.results["error"].str.contains("TOOLKIT_TIME_URL").all()


@pytest.mark.parametrize("url", ["localhost:8765", "http://", "ftp://host", "http://h:port"])
def test_a_malformed_url_is_refused_when_the_client_is_built(url: str) -> None:
    with pytest.raises(ConfigError, match="TOOLKIT_TIME_URL"):
        Client("c", "i", "s", "http://127.0.0.1:1", url, audience="a")


# -- what cannot be known -------------------------------------------------------------------------


def test_a_lost_answer_is_unknown_not_failed(fresh_client: Client, sandbox, no_faults) -> None:
    fresh_client.import_clients(_clients(1, "LOST"), progress=False)  # token fetched already
    fresh_client.connection.transport.timeout = (5.0, 0.2)
    fresh_client.connection.transport.retries = 1
    sandbox.admin.set_faults(latency_ms=600)
    try:
        result = fresh_client.import_clients(_clients(3, "LOST"), progress=False)
    finally:
        sandbox.admin.clear_faults()
    assert (result["status"] == "unknown").all(), result
    assert not result["ok"].any()
    assert result["error"].str.contains("read timeout").all()


def test_per_item_500s_are_retried_like_whole_requests(firm, sandbox, no_faults) -> None:
    client = Client(
        firm.customer_id,
        firm.tenant.client_id,
        firm.tenant.client_secret,
        sandbox.url,
        sandbox.url,
        audience=sandbox.audience,
        retries=8,
        backoff=0.01,
    )
    pairs = pd.DataFrame(
        {
            "timekeeperExternalId": ["TK1", "TK1", "TK2", "TK2"],
            "initiativeExternalId": ["M1", "M2", "M1", "M2"],
        }
    )
    sandbox.admin.set_faults(item_error_rate=0.5, seed=5)
    try:
        results = [client.star(pairs, progress=False, workers=1) for _ in range(3)]
        injected = sandbox.admin.faults()["counters"]["itemErrors"]
    finally:
        sandbox.admin.clear_faults()
    assert all(r["ok"].all() for r in results)
    # half the items fail each time: more than the one retry of old was needed
    assert injected > 4 and max(r["attempts"].max() for r in results) > 2


# -- the journal ----------------------------------------------------------------------------------


def test_a_second_run_on_the_same_journal_fails_at_once_naming_the_process(tmp_path) -> None:
    first = Journal(tmp_path / "j.jsonl")
    try:
        with pytest.raises(JournalInUseError, match=f"process {os.getpid()}"):
            Journal(tmp_path / "j.jsonl")
    finally:
        first.close()
    Journal(tmp_path / "j.jsonl").close()  # free again once the first run closed it


def test_a_second_process_on_the_same_journal_is_refused(tmp_path) -> None:
    first = Journal(tmp_path / "j.jsonl")
    try:
        code = (
            "import sys; from toolkit._bulk.runner import Journal\n"
            "try:\n    Journal(sys.argv[1])\nexcept Exception as e:\n    print(e); sys.exit(3)"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "j.jsonl")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        first.close()
    assert proc.returncode == 3 and f"process {os.getpid()}" in proc.stdout


def test_a_torn_last_line_is_skipped_and_repaired(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    j = Journal(path)
    calls = [Call("import_clients", json={"externalId": f"C{i}"}, key=f"C{i}") for i in range(3)]
    ids = [c.journal_id(JOURNAL_URL) for c in calls]
    j.record(ids[0], calls[0], 201)
    j.close()
    with path.open("ab") as fh:
        fh.write(b'{"id": "' + ids[1].encode()[:10])  # killed mid-write
    j = Journal(path)
    assert ids[0] in j and ids[1] not in j and len(j) == 1
    j.record(ids[2], calls[2], 201)
    j.close()
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and all(line.startswith(b"{") and line.endswith(b"}") for line in lines)
    assert ids[2] in Journal(path)


def test_bytes_that_are_not_utf8_do_not_crash_the_journal(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    call = Call("import_clients", json={"externalId": "C1"}, key="C1")
    line = call.journal_id(JOURNAL_URL)
    j = Journal(path)
    j.record(line, call, 201)
    j.close()
    with path.open("ab") as fh:
        fh.write(b"\xff\xfe garbage \xc3\x28\n")
    j = Journal(path)
    assert line in j and len(j) == 1
    j.close()


def test_a_journal_path_that_is_a_folder_is_a_clear_error_before_any_request(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    sandbox.admin.reset_stats()
    with pytest.raises(ConfigError, match="is a folder"):
        fresh_client.import_clients(_clients(5, "DIR"), journal=tmp_path, progress=False)
    with pytest.raises(ConfigError, match="is a folder"):
        fresh_client.onboard({"clients": _clients(5, "DIR")}, journal=tmp_path, progress=False)
    assert sandbox.admin.stats()["total"] == 0


def test_an_unwritable_journal_is_a_clear_error(tmp_path) -> None:
    if os.geteuid() == 0:
        blocked = Path("/proc/self/no-such-dir/j.jsonl")  # root writes anywhere else
    else:
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o500)
        blocked = locked / "j.jsonl"
    with pytest.raises(ConfigError, match="cannot write the journal"):
        Journal(blocked)


def test_the_cli_reports_a_journal_folder_without_a_traceback(tmp_path) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    _clients(2, "CLI").to_csv(folder / "clients.csv", index=False)
    env = {
        **os.environ,
        "TOOLKIT_CUSTOMER_ID": "c",
        "TOOLKIT_CLIENT_ID": "i",
        "TOOLKIT_CLIENT_SECRET": "s",
        "TOOLKIT_AUTH_URL": "http://127.0.0.1:9",
        "TOOLKIT_TIME_URL": "http://127.0.0.1:9",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolkit",
            "--env-file",
            "none",
            "-q",
            "onboard",
            str(folder),
            "--journal",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "is a folder" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- the sandbox's rate limit ---------------------------------------------------------------------


def test_the_sandbox_rate_limit_answers_429_with_retry_after_per_customer(
    sandbox, tenant_factory, no_faults
) -> None:
    a, b = tenant_factory(), tenant_factory()
    assert sandbox.admin.rate_limit()["perSecond"] is None
    try:
        settings = sandbox.admin.set_rate_limit(2, burst=3)
        assert (settings["perSecond"], settings["burst"]) == (2.0, 3)
        statuses = [
            a.api("GET", "/api/v1/customers/{cid}/users/nobody").status_code for _ in range(5)
        ]
        other = b.api("GET", "/api/v1/customers/{cid}/users/nobody")
        limited = a.api("GET", "/api/v1/customers/{cid}/users/nobody")
    finally:
        off = sandbox.admin.set_rate_limit(None)
    assert statuses[:3] == [404, 404, 404] and statuses[3:] == [429, 429]
    assert other.status_code == 404  # another customer has its own bucket
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "1"
    assert limited.headers["content-type"].startswith("application/problem+json")
    assert limited.json()["status"] == 429 and "rate limit" in limited.json()["detail"]
    assert off["perSecond"] is None
    openapi = a.http.get(f"{sandbox.url}/openapi.json", timeout=10).json()
    assert "put" in openapi["paths"]["/sandbox/v1/rate-limit"]


def test_a_closed_journal_leaves_no_lock_file_and_an_open_one_still_excludes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "acks.jsonl"
    lock = tmp_path / "acks.jsonl.lock"
    journal = Journal(path)
    assert lock.is_file()
    with pytest.raises(JournalInUseError):
        Journal(path)
    journal.close()
    assert not lock.exists() and path.exists()
    again = Journal(path)  # taken afresh, and held as before
    with pytest.raises(JournalInUseError):
        Journal(path)
    again.close()
    assert not lock.exists()
