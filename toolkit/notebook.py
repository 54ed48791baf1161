"""Notebooks start in one line: ``client = toolkit.connect()``.

Which service :func:`connect` uses, first match wins: 1. ``env_file=``'s; 2. the notebook's own
sandbox when ``TOOLKIT_NOTEBOOK_SANDBOX=1`` or ``TOOLKIT_USE_ENV=0``; 3. the configured service
when ``TOOLKIT_USE_ENV=1`` or a ``TOOLKIT_*`` variable is in the environment or the ``.env``
found (one not on this machine needs ``allow_writes=True`` or ``TOOLKIT_ALLOW_WRITES=1``);
4. a sandbox seeded with ``sample_data/`` (:func:`sandbox`), stopped at exit or by :func:`stop`.
"""

from __future__ import annotations

import atexit
import os
import socket
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from dotenv import find_dotenv

from toolkit._client import Client
from toolkit._core.settings import ENV_KEYS, read_env_file
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from toolkit.sandbox import Sandbox

__all__ = ["connect", "sandbox", "stop"]

#: The sample firm, the sandbox's default seed (in a clone, a link to ``sample_data/``).
SAMPLE_DATA = Path(__file__).resolve().parent / "sample_data"

_LOCAL = frozenset({"127.0.0.1", "localhost", "::1"})


class _Kernel:
    """The sandbox this kernel started, if any, and the context that stops it."""

    context: AbstractContextManager[Sandbox] | None = None
    sandbox: Sandbox | None = None


_KERNEL = _Kernel()


def sandbox() -> Sandbox | None:
    """The sandbox :func:`connect` started, or ``None``.

    Returns:
        The running :class:`toolkit.sandbox.Sandbox`, or ``None``.

    Example:
        >>> sandbox() is None
        True
    """
    return _KERNEL.sandbox


def stop() -> bool:
    """Stop the sandbox :func:`connect` started (and its temporary database); runs at exit.

    Returns:
        ``True`` when a sandbox was running.

    Example:
        >>> stop()
        False
    """
    context, _KERNEL.context, _KERNEL.sandbox = _KERNEL.context, None, None
    if context is None:
        return False
    context.__exit__(None, None, None)
    return True


def _configured(path: Path | None, explicit: bool) -> bool:
    """Whether the configured service is to be used (the module's rules)."""
    if explicit:
        return True
    if os.environ.get("TOOLKIT_NOTEBOOK_SANDBOX") == "1":
        return False
    use_env = os.environ.get("TOOLKIT_USE_ENV")
    if use_env in ("0", "1"):
        return use_env == "1"
    values = {**(read_env_file(path) if path is not None else {}), **os.environ}
    return any(values.get(var) for var in ENV_KEYS.values())


def _check_service(client: Client, where: str, allow_writes: bool | None) -> None:
    """Refuse a service elsewhere unless writes are allowed; a local one must answer."""
    if allow_writes is None:
        allow_writes = os.environ.get("TOOLKIT_ALLOW_WRITES") == "1"
    urls = client.connection.urls
    for url in dict.fromkeys((urls["time"], urls["ingestion"], urls["auth"])):
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host not in _LOCAL:
            if not allow_writes:
                raise ConfigError(
                    f"{url} is not on this machine and this notebook writes to it; pass "
                    "allow_writes=True or set TOOLKIT_ALLOW_WRITES=1 to go ahead"
                )
            continue
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            socket.create_connection((host, port), timeout=2).close()
        except OSError:
            raise ConfigError(
                f"{where} configures {url}, where nothing answers: start that service "
                "(make sandbox), remove the .env, or set TOOLKIT_NOTEBOOK_SANDBOX=1 for the "
                "notebook's own sandbox"
            ) from None


def connect(
    *,
    seed: str | os.PathLike[str] | None = None,
    env_file: str | os.PathLike[str] | None = None,
    allow_writes: bool | None = None,
) -> Client:
    """A client for a notebook: the configured service, or a sandbox of the notebook's own.

    Prints which; the rules are in :mod:`toolkit.notebook`.

    Args:
        seed: folder of sample CSV files for the sandbox; default the package's sample firm.
        env_file: a ``.env`` to read instead of the one found: the configured service is used.
        allow_writes: whether the notebook may write to a service not on this machine;
            ``None`` allows it when ``TOOLKIT_ALLOW_WRITES=1``.

    Returns:
        A :class:`toolkit.Client`.

    Example:
        >>> connect(env_file="missing.env")
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: env_file missing.env is not a file
    """
    found = find_dotenv(usecwd=True) if env_file is None else env_file
    path = Path(found) if found else None
    if env_file is not None and not Path(env_file).is_file():
        raise ConfigError(f"env_file {path} is not a file")
    stop()  # a re-run starts afresh, as the notebook did before
    if _configured(path, explicit=env_file is not None):
        client = Client.from_env(path)
        where = str(path) if path is not None else "TOOLKIT_* variables"
        _check_service(client, where, allow_writes)
        print(
            f"using the configured service ({where}): "
            f"customer {client.customer_id} at {client.connection.urls['time']}"
        )
        return client
    folder = Path(seed) if seed is not None else SAMPLE_DATA if SAMPLE_DATA.is_dir() else None
    if seed is not None and not Path(seed).is_dir():
        raise ConfigError(f"seed {folder} is not a folder of sample CSV files")
    try:
        from toolkit.sandbox import running  # optional extra: fastapi, uvicorn
    except ImportError as exc:
        raise ConfigError(
            f"no service is configured (TOOLKIT_* variables or a .env) and the sandbox "
            f"cannot start: {exc}; install the sandbox extra or configure a service"
        ) from None
    context = running(seed=folder)
    _KERNEL.sandbox = context.__enter__()
    _KERNEL.context = context
    atexit.unregister(stop)  # registered once, however many times the notebook connects
    atexit.register(stop)
    what = f"seeded with {folder.name}/" if folder is not None else "empty"
    print(f"using the notebook's own sandbox (demo customer {what})")
    return Client.from_env(None, environ=_KERNEL.sandbox.env())
