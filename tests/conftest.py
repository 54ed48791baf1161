"""Shared fixtures: one sandbox per test session, started in a thread on a free port.

``sandbox`` is the running :class:`toolkit.sandbox.Sandbox` (demo customer seeded from
``sample_data/`` when those files exist); ``sandbox_env`` its ``TOOLKIT_*`` variables;
``sandbox_token`` an access token of the demo customer; ``tenant`` makes a fresh, empty
customer with its own token, so a test's data never meets another's; ``firm`` fills such a
customer with a small reference set.

The harnesses repeated across files live here once: ``read_env`` and ``client_env`` (a
``.env``'s variables, a client's ``TOOLKIT_*`` variables), ``write_client_env`` (its ``.env``),
``no_toolkit_env`` / ``project`` (settings from files only; a project folder whose ``.env``
names the sandbox), ``sandbox_process`` (``python -m toolkit.sandbox`` as a real process),
``kill_9_when`` (a command killed with SIGKILL once a condition holds) and ``settle`` (wait
until a killed run's requests in flight have landed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests

import toolkit
from toolkit._core.settings import ENV_KEYS
from toolkit._ingress.chunking import with_lines
from toolkit.sandbox import Admin, Sandbox, running, write_env_file
from toolkit.sandbox._cli import READY_MARKER

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO / "sample_data"
SAMPLE_FILES = ("clients.csv", "initiatives.csv", "code_types.csv", "codes.csv")
TIMEOUT = 10
T0 = datetime(2026, 10, 1, tzinfo=UTC)
"""Where ``release_entries`` starts releasing by default."""


def check(table: str, df: Any, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One import table checked the public way, :func:`toolkit.validate`: its rows safe to
    import, coerced, or :class:`toolkit.ValidationError` naming every failure."""
    report = toolkit.validate(**{table: df}, columns=columns)
    report.raise_if_failed()
    return report.frames[table]


def line_numbers(frame: pd.DataFrame, rows: Any) -> list[int | None]:
    """Each row's file line as a failure frame's ``line`` column names it (``None``: no line),
    for rows of a frame read from a file."""
    lines = with_lines(pd.DataFrame({"row": list(rows)}), frame)["line"]
    return [None if pd.isna(line) else int(line) for line in lines]


def check_frame(table: str, df: Any, *, columns: Mapping[str, str] | None = None) -> Any:
    """One import table checked the public way, :func:`toolkit.validate`, never raising on data:
    its :class:`~toolkit._ingress.checks.CheckResult` (``report.results[table]``)."""
    return toolkit.validate(**{table: df}, columns=columns).results[table]


def sample_dir() -> Path | None:
    """The sample data folder, when it holds the sample CSV files."""
    if all((SAMPLE_DIR / name).is_file() for name in SAMPLE_FILES):
        return SAMPLE_DIR
    return None


def fetch_token(url: str, client_id: str, client_secret: str, audience: str) -> str:
    """Exchange credentials for an access token at a sandbox."""
    response = requests.post(
        f"{url}/api/v1/oauth/token",
        json={
            "audience": audience,
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": client_secret,
        },
        timeout=TIMEOUT,
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl+C raises ``KeyboardInterrupt`` in the tests, as in a terminal, even when the suite
    was started with SIGINT ignored (a background job of a non-interactive shell, ``nohup``):
    the stop tests simulate it with ``_thread.interrupt_main``, which an ignored SIGINT drops."""
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """The session's sandbox (seeded from sample_data/ when present)."""
    db = tmp_path_factory.mktemp("sandbox") / "sandbox.db"
    with running(seed=sample_dir(), db=db) as sb:
        yield sb


@pytest.fixture(scope="session")
def sandbox_env(sandbox: Sandbox) -> dict[str, str]:
    """``TOOLKIT_*`` variables of the demo customer."""
    return sandbox.env()


@pytest.fixture(scope="session")
def sandbox_token(sandbox: Sandbox) -> str:
    """An access token of the demo customer."""
    return fetch_token(sandbox.url, sandbox.client_id, sandbox.client_secret, sandbox.audience)


@dataclass
class Tenant:
    """A fresh customer of the session sandbox, with a token and an HTTP session."""

    url: str
    customer_id: str
    client_id: str
    client_secret: str
    token: str
    http: requests.Session

    @property
    def headers(self) -> dict[str, str]:
        """The ``Authorization`` header."""
        return {"Authorization": f"Bearer {self.token}"}

    def api(self, method: str, path: str, **kwargs: object) -> requests.Response:
        """Call ``{url}{path}`` with the token; ``{cid}`` in path is the customer id."""
        kwargs.setdefault("timeout", TIMEOUT)
        headers = {**self.headers, **dict(kwargs.pop("headers", {}) or {})}  # type: ignore[call-overload]
        return self.http.request(
            method, self.url + path.format(cid=self.customer_id), headers=headers, **kwargs
        )


@pytest.fixture
def tenant(sandbox: Sandbox) -> Iterator[Tenant]:
    """A new, empty customer with its own token."""
    creds = sandbox.admin.create_customer("Test firm")
    token = fetch_token(sandbox.url, creds["clientId"], creds["clientSecret"], creds["audience"])
    with requests.Session() as http:
        yield Tenant(
            sandbox.url, creds["customerId"], creds["clientId"], creds["clientSecret"], token, http
        )


@pytest.fixture
def tenant_factory(sandbox: Sandbox) -> Iterator[Callable[[], Tenant]]:
    """Make more fresh customers within one test."""
    sessions: list[requests.Session] = []

    def make() -> Tenant:
        creds = sandbox.admin.create_customer("Test firm")
        token = fetch_token(
            sandbox.url, creds["clientId"], creds["clientSecret"], creds["audience"]
        )
        http = requests.Session()
        sessions.append(http)
        return Tenant(
            sandbox.url, creds["customerId"], creds["clientId"], creds["clientSecret"], token, http
        )

    yield make
    for http in sessions:
        http.close()


@dataclass
class Firm:
    """A fresh customer holding a small reference set (see the ``firm`` fixture)."""

    tenant: Tenant
    admin: Admin
    users: dict[str, str]

    @property
    def customer_id(self) -> str:
        return self.tenant.customer_id

    def api(self, method: str, path: str, **kwargs: object) -> requests.Response:
        """As :meth:`Tenant.api`."""
        return self.tenant.api(method, path, **kwargs)

    def entry(
        self,
        user: str = "TK1",
        initiative: str = "M1",
        *,
        duration: int = 1800,
        codes: tuple = (),
        summary: str = "Work",
        work_date: str = "2025-03-03",
        released_at: str | None = None,
    ) -> dict:
        """Create an entry for a timekeeper; release it at ``released_at`` when given."""
        entry = self.admin.create_entry(
            self.users[user],
            initiative,
            work_date=work_date,
            summary=summary,
            increment_duration_in_seconds=duration,
            codes=codes,
        )
        if released_at is not None:
            entry = self.admin.release_entry(self.users[user], entry["_id"], at=released_at)
        return entry


FIRM_IMPORTS = [
    (
        "clients",
        {"externalId": "C1", "name": "Acme Corp", "callSign": "1001", "description": "A client"},
    ),
    (
        "initiatives",
        {
            "billingType": "billable",
            "externalId": "M1",
            "name": "Acme v. Roe",
            "description": "Litigation",
            "callSign": "1001-001",
            "clientExternalId": "C1",
            "unitIncrements": 360,
            "status": "active",
        },
    ),
    (
        "initiatives",
        {
            "billingType": "non-billable",
            "externalId": "M2",
            "name": "Pro bono",
            "description": "",
            "callSign": "1001-002",
            "clientExternalId": "C1",
            "unitIncrements": 900,
            "status": "active",
        },
    ),
    (
        "initiatives",
        {
            "billingType": "billable",
            "externalId": "M3",
            "name": "Closed matter",
            "description": "",
            "callSign": "1001-003",
            "clientExternalId": "C1",
            "unitIncrements": 360,
            "status": "inactive",
        },
    ),
    (
        "code-types",
        {
            "externalId": "task-code",
            "name": "task-code",
            "semanticType": "task",
            "customerDefaultable": True,
            "userDefaultable": False,
        },
    ),
    (
        "code-types",
        {
            "externalId": "activity-code",
            "name": "activity-code",
            "semanticType": "activity",
            "customerDefaultable": False,
            "userDefaultable": True,
        },
    ),
    (
        "codes",
        {
            "externalId": "L110",
            "name": "L110",
            "description": "Fact investigation",
            "codeTypeExternalId": "task-code",
        },
    ),
    (
        "codes",
        {
            "externalId": "L120",
            "name": "L120",
            "description": "Analysis/Strategy",
            "codeTypeExternalId": "task-code",
        },
    ),
    (
        "codes",
        {
            "externalId": "A101",
            "name": "A101",
            "description": "Plan and prepare",
            "codeTypeExternalId": "activity-code",
        },
    ),
]
"""Records of the ``firm`` fixture, in import order."""


@pytest.fixture
def firm(sandbox: Sandbox, tenant: Tenant) -> Iterator[Firm]:
    """A fresh customer with client C1, initiatives M1 (active, 360 s), M2 (non-billable,
    900 s), M3 (inactive), code types task-code and activity-code, codes L110, L120 (task)
    and A101 (activity), and users with timekeepers TK1 and TK2."""
    for kind, body in FIRM_IMPORTS:
        response = tenant.api("POST", f"/api/v1/customers/{{cid}}/{kind}/import", json=body)
        assert response.status_code == 201, response.text
    admin = Admin(sandbox.url, customer_id=tenant.customer_id)
    users = {
        tk: admin.create_user(tk, f"User {tk}", f"{tk.lower()}@example.com")["_id"]
        for tk in ("TK1", "TK2")
    }
    yield Firm(tenant, admin, users)
    admin.close()


# -- a firm the service accepts but that looks wrong (validation warnings only) -----------------


@pytest.fixture
def firm_with_warnings() -> dict[str, pd.DataFrame]:
    """Import tables the service accepts as given, each with something that looks wrong: empty
    descriptions, blank call signs (one a missing cell), spaces around ids, fractional
    ``unitIncrements`` and a code range listing a pair twice."""
    return {
        "clients": pd.DataFrame(
            {
                "externalId": [" C-1 ", "C-2"],
                "name": ["Acme", "Beta"],
                "callSign": ["", None],
                "description": ["", "Banking"],
            }
        ),
        "initiatives": pd.DataFrame(
            {
                "billingType": ["billable", "non-billable"],
                "externalId": ["M-1 ", "M-2"],
                "name": ["Acme v. Roe", "Advice"],
                "description": ["", ""],
                "callSign": ["", "2-001"],
                "clientExternalId": [" C-1 ", "C-2"],
                "unitIncrements": ["360.5", 90.25],
                "status": ["active", "inactive"],
            }
        ),
        "code_types": pd.DataFrame(
            {
                "externalId": ["task-code"],
                "name": ["task-code"],
                "semanticType": ["task"],
                "customerDefaultable": [True],
                "userDefaultable": [False],
            }
        ),
        "codes": pd.DataFrame(
            {
                "externalId": ["L110", " L120"],
                "name": ["L110", "L120"],
                "description": ["", "Analysis"],
                "codeTypeExternalId": ["task-code", "task-code"],
            }
        ),
        "code_ranges": pd.DataFrame(
            {
                "initiativeExternalId": ["M-1 ", "M-1 ", "M-1 "],
                "codeExternalId": ["L110", " L120", "L110"],
            }
        ),
    }


# -- toolkit client fixtures --------------------------------------------------------------------


@pytest.fixture(scope="session")
def client(sandbox: Sandbox):  # noqa: ANN201
    """A :class:`toolkit.Client` of the demo customer (sample data loaded)."""
    from toolkit import Client

    return Client.from_env(None, environ=sandbox.env(), retries=3)


def new_client(sandbox: Sandbox, name: str = "Fresh firm", **given: Any) -> Any:
    """A :class:`toolkit.Client` of a new, empty customer (``given``: its keyword arguments,
    ``retries=3`` unless given)."""
    from toolkit import Client

    creds = sandbox.admin.create_customer(name)
    return Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sandbox.url,
        sandbox.url,
        audience=creds["audience"],
        **{"retries": 3, **given},
    )


@pytest.fixture
def fresh_client(sandbox: Sandbox):  # noqa: ANN201
    """A :class:`toolkit.Client` of a new, empty customer."""
    return new_client(sandbox)


@pytest.fixture
def profiled_client(sandbox: Sandbox) -> Iterator[Callable[..., tuple[Any, Admin]]]:
    """Make a client of a new, empty customer whose sandbox profile is set first: call it with
    the profile's switches (a mapping, e.g. ``PROFILES["published"]``) and the client's keyword
    arguments; it returns the client and the customer's :class:`Admin` (both closed after the
    test)."""
    made: list[tuple[Any, Admin]] = []

    def make(profile: Mapping[str, Any], **given: Any) -> tuple[Any, Admin]:
        client = new_client(sandbox, "Profiled firm", **given)
        admin = Admin(sandbox.url, customer_id=client.customer_id)
        admin.set_profile(**profile)
        made.append((client, admin))
        return client, admin

    yield make
    for client, admin in made:
        client.close()
        admin.close()


@pytest.fixture
def no_faults(sandbox: Sandbox) -> Iterator[None]:
    """Make sure fault injection is off after the test, whatever it set."""
    yield
    sandbox.admin.clear_faults()


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- harnesses shared by many files -------------------------------------------------------------


def read_env(path: Path) -> dict[str, str]:
    """The variables of a ``.env`` file."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def client_env(client: Any, sandbox: Sandbox) -> dict[str, str]:
    """The ``TOOLKIT_*`` variables of ``client``'s customer on ``sandbox`` (one base for all)."""
    return {
        "TOOLKIT_CUSTOMER_ID": client.customer_id,
        "TOOLKIT_CLIENT_ID": client.settings.client_id,
        "TOOLKIT_CLIENT_SECRET": client.connection.auth._secret.reveal(),
        "TOOLKIT_AUTH_URL": sandbox.url,
        "TOOLKIT_TIME_URL": sandbox.url,
        "TOOLKIT_AUDIENCE": sandbox.audience,
    }


def write_client_env(client: Any, sandbox: Sandbox, path: Path, **override: str) -> Path:
    """Write ``client``'s ``TOOLKIT_*`` variables (with ``override``) to the ``.env`` ``path``."""
    return write_env_file(path, {**client_env(client, sandbox), **override})


@pytest.fixture
def no_toolkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TOOLKIT_* variable leaks in from outside: the settings come from files only."""
    for var in (*ENV_KEYS.values(), "TOOLKIT_USE_ENV"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def project(
    tmp_path: Path, sandbox: Sandbox, no_toolkit_env: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A project folder whose .env names the running sandbox, with the cwd in its notebooks/."""
    write_env_file(tmp_path / ".env", sandbox.env())
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    yield tmp_path


@contextmanager
def sandbox_process(
    db: Path, env_file: Path, extra: Sequence[str] = ()
) -> Iterator[tuple[subprocess.Popen, str]]:
    """Start ``python -m toolkit.sandbox`` on a free port (with ``extra`` arguments); yield the
    process and its URL."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolkit.sandbox",
            "--port",
            "0",
            "--db",
            str(db),
            "--env-file",
            str(env_file),
            "--log-level",
            "warning",
            *extra,
        ],
        cwd=db.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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


def kill_9_when(
    cmd: Sequence[str],
    env: dict[str, str],
    when: Callable[[], bool],
    timeout: float = 60,
    poll: float = 0.02,
    stderr: int = subprocess.DEVNULL,
) -> subprocess.Popen:
    """Run ``cmd`` and kill it with SIGKILL as soon as ``when()`` holds (or ``timeout`` seconds
    have passed); return the process, dead (its ``returncode`` is ``-SIGKILL``, or its own if
    it ended first)."""
    proc = subprocess.Popen(list(cmd), env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if when():
                break
            time.sleep(poll)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc


def settle(sandbox: Sandbox, timeout: float = 10) -> None:
    """Wait (bounded) until the requests a killed process had in flight have been answered:
    the sandbox's request count stops moving."""
    previous, deadline = -1, time.monotonic() + timeout
    while time.monotonic() < deadline:
        total = sandbox.admin.stats()["total"]
        if total == previous:
            break
        previous = total
        time.sleep(0.2)


def release_entries(
    sandbox: Sandbox,
    client: Any,
    n: int,
    *,
    every: timedelta,
    start: datetime = T0,
    month_of_work: str = "2026-09",
) -> list[dict]:
    """``n`` entries released one per ``every`` from ``start + every``; i-th has i % 4 codes."""
    cid = client.customer_id
    users = [sandbox.admin.create_user(f"TK-{i}", f"User {i}", customer_id=cid) for i in (1, 2)]
    out = []
    for i in range(n):
        user = users[i % 2]
        codes = ["L110", "A101", "L120"][: i % 4]
        entry = sandbox.admin.create_entry(
            user["_id"],
            "M-1001-002",
            work_date=f"{month_of_work}-{1 + i % 28:02d}",
            increment_duration_in_seconds=600 + 60 * i,
            summary=f"Work {i} — Müller",
            codes=codes,
            customer_id=cid,
        )
        sandbox.admin.release_entry(
            user["_id"], entry["_id"], at=start + every * (i + 1), customer_id=cid
        )
        out.append({**entry, "userId": user["_id"], "codes": codes})
    return out


@pytest.fixture
def firm_client(fresh_client: Any) -> Any:
    """A fresh customer onboarded with ``sample_data/``."""
    assert fresh_client.onboard(SAMPLE_DIR, progress=False).ok
    return fresh_client
