"""Shared fixtures: one sandbox per test session, started in a thread on a free port.

``sandbox`` is the running :class:`toolkit.sandbox.Sandbox` (demo customer seeded from
``sample_data/`` when those files exist); ``sandbox_env`` its ``TOOLKIT_*`` variables;
``sandbox_token`` an access token of the demo customer; ``tenant`` makes a fresh, empty
customer with its own token, so a test's data never meets another's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from toolkit.sandbox import Sandbox, running

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
