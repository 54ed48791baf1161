"""kill -9 of the sandbox during 400 concurrent imports loses no write answered 2xx.

The sandbox runs as a real process here (``python -m toolkit.sandbox``), since SIGKILL must
hit the whole server. Readiness is the line the CLI prints from uvicorn's startup hook, read
from its stdout by a thread and waited on with a deadline.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from tests.conftest import TIMEOUT, fetch_token, read_env, sandbox_process
from toolkit.sandbox._models.core import StoreCore

IMPORTS = 400
KILL_AFTER = 120


def test_kill_9_during_concurrent_imports_loses_no_answered_write(tmp_path: Path) -> None:
    db, env_file = tmp_path / "sandbox.db", tmp_path / ".env"
    answered: list[str] = []
    lock = threading.Lock()
    enough = threading.Event()

    with sandbox_process(db, env_file) as (proc, url):
        creds = read_env(env_file)
        customer = creds["TOOLKIT_CUSTOMER_ID"]
        token = fetch_token(
            url,
            creds["TOOLKIT_CLIENT_ID"],
            creds["TOOLKIT_CLIENT_SECRET"],
            creds["TOOLKIT_AUDIENCE"],
        )
        session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(pool_connections=32, pool_maxsize=32)
        session.mount("http://", adapter)

        def send(i: int) -> None:
            body = {
                "externalId": f"K{i:04d}",
                "name": f"Client {i}",
                "callSign": str(i),
                "description": "durability",
            }
            try:
                response = session.post(
                    f"{url}/api/v1/customers/{customer}/clients/import",
                    json=body,
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=TIMEOUT,
                )
            except requests.RequestException:
                return
            if 200 <= response.status_code < 300:
                with lock:
                    answered.append(body["externalId"])
                    if len(answered) >= KILL_AFTER:
                        enough.set()

        with ThreadPoolExecutor(max_workers=32) as pool:
            futures = [pool.submit(send, i) for i in range(IMPORTS)]
            assert enough.wait(60), "imports did not get going"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            for future in futures:
                future.result(timeout=60)
        session.close()

    assert KILL_AFTER <= len(answered) < IMPORTS, "the kill must land mid-way"
    with sandbox_process(db, env_file) as (_, url):
        creds = read_env(env_file)
        assert creds["TOOLKIT_CUSTOMER_ID"] == customer
        stored = requests.get(
            f"{url}/sandbox/v1/customers/{customer}/records/clients", timeout=TIMEOUT
        ).json()
        stored_ids = {c["externalId"] for c in stored}
        assert set(answered) <= stored_ids
        # The token issued before the kill is still valid after the restart.
        pending = requests.get(
            f"{url}/api/v1/customers/{customer}/entries/release-pending",
            headers={"Authorization": f"Bearer {token}"},
            timeout=TIMEOUT,
        )
        assert pending.status_code == 200


def test_ctrl_c_stops_the_foreground_sandbox_cleanly(tmp_path: Path) -> None:
    with sandbox_process(tmp_path / "sandbox.db", tmp_path / ".env") as (proc, url):
        assert requests.get(f"{url}/openapi.json", timeout=TIMEOUT).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0


# -- the sandbox's database files are private (0600) -------------------------------------------


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
