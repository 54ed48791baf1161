"""A local, faithful implementation of the whole time-billing interface.

One FastAPI app serves the identity, time and ingestion paths, with its state in one SQLite
file. Each service has its own base on the one server (``{url}/identity``, ``{url}/time``,
``{url}/ingestion``, the paths the real service publishes on each host), and the root ``{url}``
serves every path (one base address for everything). From Python::

    from toolkit.sandbox import running

    with running(seed="sample_data") as sb:
        sb.url, sb.customer_id, sb.client_id    # credentials of the demo customer
        sb.env()                                 # TOOLKIT_* variables (the three bases)
        sb.admin.create_user("TK-1", "Ann Lee", "ann@example.com")

From a shell: ``toolkit sandbox --seed sample_data`` (or ``python -m toolkit.sandbox``).

Where the spec leaves behaviour open, a per-customer profile switches it (:mod:`.profiles`:
reimport conflicts, 204 imports, text error bodies, rate limiters, latency, short tokens...):
``running(profile=PROFILES["strict"])``, ``sb.admin.set_profile(reimport="conflict")``, or
``toolkit sandbox --profile FILE|PRESET`` for every customer.
Layout, like moto (``models.py`` beside ``responses.py`` per service): :mod:`.store` (state
and rules, composed from one module per part of the interface in :mod:`.models`), :mod:`.routes`
(thin routes, one router module per part, named like its :mod:`.models` module), :mod:`.app`
(the app factory and its middlewares), :mod:`.exceptions` (errors and the one handler),
:mod:`.bodies` (pydantic request and response bodies; :mod:`.admin_bodies` those of the
administration routes), :mod:`.profiles` (the one declaration of the
profile's switches, their defaults and presets), :mod:`.faults` (every kind of fault: its
settings and draws), :mod:`.ratelimit`,
:mod:`.server`, :mod:`.admin` and :mod:`.cli`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._admin import Admin, AdminError
from ._app import create_app
from ._exceptions import SandboxError
from ._faults import Faults, Stats
from ._profiles import DEFAULT_PROFILE, PROFILES
from ._server import ServerThread, bind
from ._store import DEFAULT_AUDIENCE, DEFAULT_TOKEN_TTL, Clock, Store

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_PROFILE",
    "DEFAULT_TOKEN_TTL",
    "PROFILES",
    "Admin",
    "AdminError",
    "Faults",
    "Sandbox",
    "SandboxError",
    "Stats",
    "Store",
    "create_app",
    "env_for",
    "running",
    "write_env_file",
]


def env_for(
    url: str, customer_id: str, client_id: str, client_secret: str, audience: str
) -> dict[str, str]:
    """Return the ``TOOLKIT_*`` environment variables for a sandbox's credentials.

    Each service gets its own base on the sandbox (``{url}/identity``, ``{url}/time``,
    ``{url}/ingestion``), as the real service has three hosts; ``url`` itself would serve all.

    Args:
        url: The sandbox's root address.
        customer_id: Customer id.
        client_id: API client id.
        client_secret: API client secret.
        audience: Token audience.

    Returns:
        ``TOOLKIT_CUSTOMER_ID``, ``TOOLKIT_CLIENT_ID``, ``TOOLKIT_CLIENT_SECRET``,
        ``TOOLKIT_AUTH_URL``, ``TOOLKIT_TIME_URL``, ``TOOLKIT_INGESTION_URL``,
        ``TOOLKIT_AUDIENCE``.

    >>> env_for("http://127.0.0.1:8765", "c", "i", "s", "aud")["TOOLKIT_TIME_URL"]
    'http://127.0.0.1:8765/time'
    """
    return {
        "TOOLKIT_CUSTOMER_ID": customer_id,
        "TOOLKIT_CLIENT_ID": client_id,
        "TOOLKIT_CLIENT_SECRET": client_secret,
        "TOOLKIT_AUTH_URL": f"{url}/identity",
        "TOOLKIT_TIME_URL": f"{url}/time",
        "TOOLKIT_INGESTION_URL": f"{url}/ingestion",
        "TOOLKIT_AUDIENCE": audience,
    }


def _env_value(value: str) -> str:
    """A value as a ``.env`` line holds it: bare when plain, else single-quoted (dotenv rules)."""
    if re.fullmatch(r"[A-Za-z0-9_./:@+,=-]*", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_env_file(path: str | os.PathLike[str], env: dict[str, str]) -> Path:
    """Write ``KEY=value`` lines to ``path``, readable by the owner only (mode 0600).

    The file is written beside the target and renamed over it, so a new file and a rewritten
    one alike end up 0600 (an existing file's looser mode is not kept) and a reader never sees
    half a file. A symlink at ``path`` is refused rather than followed: a secret is never
    written through a link to somewhere else. Values other than plain ones are single-quoted,
    as python-dotenv reads them.

    Args:
        path: The file (for example ``.env``).
        env: The variables.

    Returns:
        The path written.

    Raises:
        OSError: ``path`` is a symlink (``errno.ELOOP``), or the file cannot be written.

    >>> import tempfile, os
    >>> p = write_env_file(os.path.join(tempfile.mkdtemp(), ".env"), {"A": "1", "B": "x y"})
    >>> p.read_text()
    "A=1\\nB='x y'\\n"
    >>> oct(p.stat().st_mode & 0o777)
    '0o600'
    """
    target = Path(path)
    if target.is_symlink():
        raise OSError(errno.ELOOP, "refusing to write secrets through a symlink", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(f"{key}={_env_value(value)}\n" for key, value in env.items())
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


@dataclass(frozen=True)
class Sandbox:
    """A running sandbox and the demo customer's credentials (the secret is not in repr).

    Attributes:
        url: Root address: it serves every path (identity, time, ingestion,
            administration); each service's own base is a prefix under it (see :meth:`env`).
        customer_id: The demo customer.
        client_id: Its API client id.
        client_secret: Its API client secret.
        audience: The audience the token endpoint requires.
        db_path: The SQLite file.
        admin: Helper for the administration routes, bound to the demo customer.
        store: The in-process store (for direct inspection in tests).
    """

    url: str
    customer_id: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str
    db_path: Path
    admin: Admin = field(repr=False)
    store: Store = field(repr=False, compare=False)

    @property
    def token_url(self) -> str:
        """The token endpoint, on the identity service's base.

        >>> sb.token_url == sb.url + "/identity/api/v1/oauth/token"
        True
        """
        return f"{self.url}/identity/api/v1/oauth/token"

    def env(self) -> dict[str, str]:
        """Return the ``TOOLKIT_*`` variables of the demo customer (see :func:`env_for`).

        >>> sorted(sb.env())[0], sb.env()["TOOLKIT_AUTH_URL"] == sb.url + "/identity"
        ('TOOLKIT_AUDIENCE', True)
        """
        return env_for(
            self.url, self.customer_id, self.client_id, self.client_secret, self.audience
        )

    def write_env(self, path: str | os.PathLike[str] = ".env") -> Path:
        """Write :meth:`env` as ``KEY=value`` lines (mode 0600).

        Args:
            path: The file to write.

        Returns:
            The path written.

        >>> sb.write_env(tmp / ".env").name
        '.env'
        """
        return write_env_file(path, self.env())


@contextmanager
def running(
    *,
    seed: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    token_ttl: int = DEFAULT_TOKEN_TTL,
    audience: str = DEFAULT_AUDIENCE,
    clock: Clock | None = None,
    log_level: str = "warning",
    start_timeout: float = 30.0,
    profile: Mapping[str, Any] | None = None,
) -> Iterator[Sandbox]:
    """Run the sandbox in a background thread for the duration of a ``with`` block.

    A demo customer is created (or reused when ``db`` already holds one; it then gets an
    additional secret, earlier ones stay valid).

    Args:
        seed: Folder of sample CSV files to load for the demo customer (see
            :meth:`Store.seed_sample`); None loads nothing.
        db: SQLite file; default a temporary file removed on exit.
        host: Interface to listen on.
        port: Port; 0 picks a free one.
        token_ttl: Access token lifetime in seconds.
        audience: Audience the token endpoint requires.
        clock: Source of "now" for the store (tests pass a fake to expire tokens).
        log_level: uvicorn's log level.
        start_timeout: Seconds to wait for the server to start.
        profile: Switches set in the demo customer's profile (see
            :mod:`toolkit.sandbox._profiles`; a preset is ``PROFILES["strict"]``), for
            example ``{"reimport": "conflict"}``; other customers keep the defaults.

    Yields:
        The :class:`Sandbox`.

    Raises:
        RuntimeError: The server did not start in time.
        SandboxError: ``profile`` holds an unknown switch or a bad value (422).

    >>> import requests
    >>> with running() as sb:
    ...     requests.post(sb.token_url, json={"audience": sb.audience,
    ...         "grant_type": "client_credentials", "client_id": sb.client_id,
    ...         "client_secret": sb.client_secret}, timeout=10).status_code
    200
    """
    tmpdir = None
    if db is None:
        tmpdir = tempfile.mkdtemp(prefix="toolkit-sandbox-")
        db = Path(tmpdir) / "sandbox.db"
    store = Store(db, token_ttl=token_ttl, audience=audience, clock=clock)
    admin: Admin | None = None
    try:
        creds = store.demo_customer()
        if profile:  # first: seeding follows the profile (counts: double makes fractions)
            store.set_profile(creds["customerId"], profile)
        if seed is not None:
            store.seed_sample(seed, creds["customerId"])
        sock = bind(host, port)
        server = ServerThread(create_app(store), sock, log_level=log_level)
        server.start(start_timeout)
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        url = f"http://{shown}:{bound_port}"
        admin = Admin(url, customer_id=creds["customerId"])
        try:
            yield Sandbox(
                url=url,
                customer_id=creds["customerId"],
                client_id=creds["clientId"],
                client_secret=creds["clientSecret"],
                audience=audience,
                db_path=Path(db),
                admin=admin,
                store=store,
            )
        finally:
            server.stop()
    finally:
        if admin is not None:
            admin.close()
        store.close()
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
