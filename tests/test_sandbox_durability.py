"""kill -9 of the sandbox during 400 concurrent imports loses no write answered 2xx.

The sandbox runs as a real process here (``python -m toolkit.sandbox``), since SIGKILL must
hit the whole server. Readiness is the line the CLI prints from uvicorn's startup hook, read
from its stdout by a thread and waited on with a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.conftest import REPO, TIMEOUT, fetch_token
from toolkit.sandbox.cli import READY_MARKER

IMPORTS = 400
KILL_AFTER = 120


def _read_env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@contextmanager
def sandbox_process(
    db: Path, env_file: Path, extra: Sequence[str] = ()
) -> Iterator[tuple[subprocess.Popen, str]]:
    """Start ``python -m toolkit.sandbox`` on a free port (with ``extra`` arguments); yield the
    process and its URL."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolkit.sandbox", "--port", "0", "--db", str(db),
         "--env-file", str(env_file), "--log-level", "warning", *extra],
        cwd=db.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    ready = threading.Event()
    found: dict[str, str] = {}
    output: list[str] = []

    def watch() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if line.startswith(READY_MARKER):
                found["url"] = line.split()[3]
                ready.set()
        ready.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        if not ready.wait(30) or "url" not in found:
            raise AssertionError("sandbox process did not start:\n" + "".join(output))
        yield proc, found["url"]
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def test_kill_9_during_concurrent_imports_loses_no_answered_write(tmp_path: Path) -> None:
    db, env_file = tmp_path / "sandbox.db", tmp_path / ".env"
    answered: list[str] = []
    lock = threading.Lock()
    enough = threading.Event()

    with sandbox_process(db, env_file) as (proc, url):
        creds = _read_env(env_file)
        customer = creds["TOOLKIT_CUSTOMER_ID"]
        token = fetch_token(url, creds["TOOLKIT_CLIENT_ID"], creds["TOOLKIT_CLIENT_SECRET"],
                            creds["TOOLKIT_AUDIENCE"])
        session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(pool_connections=32, pool_maxsize=32)
        session.mount("http://", adapter)

        def send(i: int) -> None:
            body = {"externalId": f"K{i:04d}", "name": f"Client {i}", "callSign": str(i),
                    "description": "durability"}
            try:
                response = session.post(
                    f"{url}/api/v1/customers/{customer}/clients/import", json=body,
                    headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
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
        creds = _read_env(env_file)
        assert creds["TOOLKIT_CUSTOMER_ID"] == customer
        stored = requests.get(f"{url}/sandbox/v1/customers/{customer}/records/clients",
                              timeout=TIMEOUT).json()
        stored_ids = {c["externalId"] for c in stored}
        assert set(answered) <= stored_ids
        # The token issued before the kill is still valid after the restart.
        pending = requests.get(f"{url}/api/v1/customers/{customer}/entries/release-pending",
                               headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
        assert pending.status_code == 200


def test_ctrl_c_stops_the_foreground_sandbox_cleanly(tmp_path: Path) -> None:
    with sandbox_process(tmp_path / "sandbox.db", tmp_path / ".env") as (proc, url):
        assert requests.get(f"{url}/openapi.json", timeout=TIMEOUT).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
