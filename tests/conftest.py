"""Shared fixtures: one sandbox per test session, started in a thread on a free port.

``sandbox`` is the running :class:`toolkit.sandbox.Sandbox` (demo customer seeded from
``sample_data/`` when those files exist); ``sandbox_env`` its ``TOOLKIT_*`` variables;
``sandbox_token`` an access token of the demo customer; ``tenant`` makes a fresh, empty
customer with its own token, so a test's data never meets another's; ``firm`` fills such a
customer with a small reference set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import requests

from toolkit.sandbox import Admin, Sandbox, running

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO / "sample_data"
SAMPLE_FILES = ("clients.csv", "initiatives.csv", "code_types.csv", "codes.csv")
TIMEOUT = 10


def sample_dir() -> Path | None:
    """The sample data folder, when it holds the sample CSV files."""
    if all((SAMPLE_DIR / name).is_file() for name in SAMPLE_FILES):
        return SAMPLE_DIR
    return None


def fetch_token(url: str, client_id: str, client_secret: str, audience: str) -> str:
    """Exchange credentials for an access token at a sandbox."""
    response = requests.post(
        f"{url}/api/v1/oauth/token",
        json={"audience": audience, "grant_type": "client_credentials",
              "client_id": client_id, "client_secret": client_secret},
        timeout=TIMEOUT,
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


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
        yield Tenant(sandbox.url, creds["customerId"], creds["clientId"],
                     creds["clientSecret"], token, http)


@pytest.fixture
def tenant_factory(sandbox: Sandbox) -> Iterator[Callable[[], Tenant]]:
    """Make more fresh customers within one test."""
    sessions: list[requests.Session] = []

    def make() -> Tenant:
        creds = sandbox.admin.create_customer("Test firm")
        token = fetch_token(sandbox.url, creds["clientId"], creds["clientSecret"],
                            creds["audience"])
        http = requests.Session()
        sessions.append(http)
        return Tenant(sandbox.url, creds["customerId"], creds["clientId"],
                      creds["clientSecret"], token, http)

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

    def entry(self, user: str = "TK1", initiative: str = "M1", *, duration: int = 1800,
              codes: tuple = (), summary: str = "Work", work_date: str = "2025-03-03",
              released_at: str | None = None) -> dict:
        """Create an entry for a timekeeper; release it at ``released_at`` when given."""
        entry = self.admin.create_entry(
            self.users[user], initiative, work_date=work_date, summary=summary,
            increment_duration_in_seconds=duration, codes=codes,
        )
        if released_at is not None:
            entry = self.admin.release_entry(self.users[user], entry["_id"], at=released_at)
        return entry


FIRM_IMPORTS = [
    ("clients", {"externalId": "C1", "name": "Acme Corp", "callSign": "1001",
                 "description": "A client"}),
    ("initiatives", {"billingType": "billable", "externalId": "M1", "name": "Acme v. Roe",
                     "description": "Litigation", "callSign": "1001-001",
                     "clientExternalId": "C1", "unitIncrements": 360, "status": "active"}),
    ("initiatives", {"billingType": "non-billable", "externalId": "M2", "name": "Pro bono",
                     "description": "", "callSign": "1001-002", "clientExternalId": "C1",
                     "unitIncrements": 900, "status": "active"}),
    ("initiatives", {"billingType": "billable", "externalId": "M3", "name": "Closed matter",
                     "description": "", "callSign": "1001-003", "clientExternalId": "C1",
                     "unitIncrements": 360, "status": "inactive"}),
    ("code-types", {"externalId": "task-code", "name": "task-code", "semanticType": "task",
                    "customerDefaultable": True, "userDefaultable": False}),
    ("code-types", {"externalId": "activity-code", "name": "activity-code",
                    "semanticType": "activity", "customerDefaultable": False,
                    "userDefaultable": True}),
    ("codes", {"externalId": "L110", "name": "L110", "description": "Fact investigation",
               "codeTypeExternalId": "task-code"}),
    ("codes", {"externalId": "L120", "name": "L120", "description": "Analysis/Strategy",
               "codeTypeExternalId": "task-code"}),
    ("codes", {"externalId": "A101", "name": "A101", "description": "Plan and prepare",
               "codeTypeExternalId": "activity-code"}),
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
    users = {tk: admin.create_user(tk, f"User {tk}", f"{tk.lower()}@example.com")["_id"]
             for tk in ("TK1", "TK2")}
    yield Firm(tenant, admin, users)
    admin.close()


# -- a firm the service accepts but that looks wrong (validation warnings only) -----------------


@pytest.fixture
def firm_with_warnings() -> dict[str, pd.DataFrame]:
    """Import tables the service accepts as given, each with something that looks wrong: empty
    descriptions, blank call signs (one a missing cell), spaces around ids, fractional
    ``unitIncrements`` and a code range listing a pair twice."""
    return {
        "clients": pd.DataFrame({
            "externalId": [" C-1 ", "C-2"],
            "name": ["Acme", "Beta"],
            "callSign": ["", None],
            "description": ["", "Banking"],
        }),
        "initiatives": pd.DataFrame({
            "billingType": ["billable", "non-billable"],
            "externalId": ["M-1 ", "M-2"],
            "name": ["Acme v. Roe", "Advice"],
            "description": ["", ""],
            "callSign": ["", "2-001"],
            "clientExternalId": [" C-1 ", "C-2"],
            "unitIncrements": ["360.5", 90.25],
            "status": ["active", "inactive"],
        }),
        "code_types": pd.DataFrame({
            "externalId": ["task-code"], "name": ["task-code"], "semanticType": ["task"],
            "customerDefaultable": [True], "userDefaultable": [False],
        }),
        "codes": pd.DataFrame({
            "externalId": ["L110", " L120"],
            "name": ["L110", "L120"],
            "description": ["", "Analysis"],
            "codeTypeExternalId": ["task-code", "task-code"],
        }),
        "code_ranges": pd.DataFrame({
            "initiativeExternalId": ["M-1 ", "M-1 ", "M-1 "],
            "codeExternalId": ["L110", " L120", "L110"],
        }),
    }


# -- toolkit client fixtures --------------------------------------------------------------------


@pytest.fixture(scope="session")
def client(sandbox: Sandbox):  # noqa: ANN201
    """A :class:`toolkit.Client` of the demo customer (sample data loaded)."""
    from toolkit import Client

    return Client.from_env(None, environ=sandbox.env(), retries=3)


@pytest.fixture
def fresh_client(sandbox: Sandbox):  # noqa: ANN201
    """A :class:`toolkit.Client` of a new, empty customer."""
    from toolkit import Client

    creds = sandbox.admin.create_customer("Fresh firm")
    return Client(creds["customerId"], creds["clientId"], creds["clientSecret"], sandbox.url,
                  sandbox.url, audience=creds["audience"], retries=3)


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
