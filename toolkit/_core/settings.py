"""Settings of one customer's connection, from arguments or ``TOOLKIT_*`` variables and ``.env``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dotenv import dotenv_values, find_dotenv

from toolkit._core.auth import Secret
from toolkit.errors import ConfigError

_SETTINGS = (
    "customer_id client_id client_secret auth_url time_url ingestion_url audience"
    " null_semantic_type"
)
#: setting -> environment variable: ``TOOLKIT_`` and its name in capitals (TOOLKIT_CUSTOMER_ID)
ENV_KEYS: dict[str, str] = {name: f"TOOLKIT_{name.upper()}" for name in _SETTINGS.split()}
#: settings that may be left unset (the others are required)
OPTIONAL_SETTINGS = ("ingestion_url", "null_semantic_type")
#: the values of ``null_semantic_type``: interface.md's form first (the default)
NULL_SEMANTIC_TYPE = ("null", "omit")


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a ``.env`` file with python-dotenv, values literal (``${VAR}`` is not expanded).

    >>> read_env_file("/nonexistent/.env")
    {}
    """
    p = Path(path)
    if not p.is_file():
        return {}
    values = dotenv_values(p, interpolate=False, encoding="utf-8")
    return {key: value for key, value in values.items() if value is not None}


def _check_url(name: str, value: str | None) -> None:
    """Refuse a base address that is not ``http(s)://host[:port][/path]``, naming its variable."""
    if value is None:
        return
    try:
        parts = urlsplit(str(value).strip())
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as exc:
        raise ConfigError(
            f"{name} {value!r} is not a valid address ({exc}); check {ENV_KEYS[name]}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{name} {value!r} is not an http(s) address such as https://host.example; "
            f"check {ENV_KEYS[name]}"
        )


@dataclass(frozen=True, init=False)
class Settings:
    """What one customer's conversation with the service needs.

    Args:
        customer_id: the customer's identifier.
        client_id: the application's ``clientId``.
        client_secret: its ``clientSecret``, plain or a :class:`~toolkit._core.auth.Secret`
            (the attribute is always a ``Secret``).
        auth_url: base address of the identity service (the token and the user records).
        time_url: base address of the time service.
        ingestion_url: base address of the import paths; defaults to ``time_url``.
        audience: the audience of the token request (required; ``TOOLKIT_AUDIENCE``).
        null_semantic_type: how a code type of another kind (no ``semanticType``) is sent
            (``TOOLKIT_NULL_SEMANTIC_TYPE``): ``"null"`` (the default) sends
            ``"semanticType": null``, as interface.md says ("use null for any other kind");
            ``"omit"`` leaves the key out, the form the service's published documents take
            (the field optional and not nullable: a service that validates requests against
            them refuses a null with a 422, and ``onboard`` then skips the codes of that
            type). No body meets both: interface.md requires the field, the documents refuse
            its null. The toolkit follows interface.md where it speaks (as everywhere), and
            this setting serves a service that validates as published (the sandbox's
            ``published`` preset is one). Null and absent mean the same: another kind.
        source: the ``.env`` file read, ``"environment"`` or ``"arguments"``.

    >>> s = Settings("c", "app", "s3cr3t", "http://127.0.0.1:1/", "http://h", audience="a")
    >>> s.urls["auth"], "s3cr3t" in repr(s)
    ('http://127.0.0.1:1', False)
    """

    customer_id: str
    client_id: str
    client_secret: Secret = field(repr=False)
    auth_url: str
    time_url: str
    ingestion_url: str | None = None
    audience: str = ""
    null_semantic_type: str = "null"
    source: str = field(default="arguments", compare=False)

    # takes the secret as plain text too: the attribute is always a ``Secret``
    def __init__(
        self,
        customer_id: str,
        client_id: str,
        client_secret: str | Secret,
        auth_url: str,
        time_url: str,
        ingestion_url: str | None = None,
        audience: str | None = None,
        *,
        null_semantic_type: str | None = None,
        source: str = "arguments",
    ) -> None:
        given: dict[str, object] = {"customer_id": customer_id, "client_id": client_id}
        given["client_secret"] = client_secret
        given |= {"auth_url": auth_url, "time_url": time_url, "audience": audience}
        missing = [f"{name} ({ENV_KEYS[name]})" for name, value in given.items() if not value]
        if missing:
            raise ConfigError(f"missing setting(s): {', '.join(missing)}")
        for name, url in (("auth_url", auth_url), ("time_url", time_url)):
            _check_url(name, url)
        _check_url("ingestion_url", ingestion_url or None)
        null_semantic_type = null_semantic_type or NULL_SEMANTIC_TYPE[0]
        if null_semantic_type not in NULL_SEMANTIC_TYPE:
            raise ConfigError(
                f"null_semantic_type {null_semantic_type!r} is not 'null' or 'omit'; check "
                f"{ENV_KEYS['null_semantic_type']}"
            )
        secret = client_secret if isinstance(client_secret, Secret) else Secret(str(client_secret))
        given |= {"customer_id": str(customer_id), "client_id": str(client_id)}
        given |= {"client_secret": secret, "audience": str(audience), "source": str(source)}
        given |= {"ingestion_url": ingestion_url, "null_semantic_type": null_semantic_type}
        for name, value in given.items():
            object.__setattr__(self, name, value)

    @property
    def urls(self) -> dict[str, str]:
        """Base address of each service (``auth``, ``time``, ``ingestion``), no trailing ``/``."""
        return {
            "auth": self.auth_url.rstrip("/"),
            "time": self.time_url.rstrip("/"),
            "ingestion": (self.ingestion_url or self.time_url).rstrip("/"),
        }

    @classmethod
    def from_env(
        cls,
        env_file: str | os.PathLike[str] | None = ".env",
        *,
        environ: Mapping[str, str] | None = None,
    ) -> Settings:
        """Read ``TOOLKIT_*`` variables and a ``.env`` file, found here or in the nearest parent
        folder (the environment wins over the file).

        Args:
            env_file: name or path of the ``.env`` file, or ``None`` to read none.
            environ: variables to use instead of ``os.environ``.

        Returns:
            The settings; ``source`` names the file read, or ``"environment"``.

        >>> env = {name: "http://h" for name in ENV_KEYS.values()}
        >>> env["TOOLKIT_NULL_SEMANTIC_TYPE"] = "omit"
        >>> Settings.from_env(None, environ=env).source
        'environment'
        """
        found = find_dotenv(os.fspath(env_file), usecwd=True) if env_file is not None else ""
        path = Path(found).resolve() if found else None
        values = read_env_file(path) if path is not None else {}
        values.update(environ if environ is not None else os.environ)
        required = [var for key, var in ENV_KEYS.items() if key not in OPTIONAL_SETTINGS]
        missing = [var for var in required if not values.get(var)]
        if missing:
            name = os.fspath(env_file) if env_file is not None else None
            if path is not None:
                where = f"read {path}"
            elif name is None:
                where = "no file read"
            elif Path(name).is_absolute():
                where = f"{name}: no such file"
            else:
                where = f"no {name} file in this folder or a parent"
            raise ConfigError(
                f"missing environment variable(s): {', '.join(missing)} ({where}; set them, "
                f"or write them to {env_file or '.env'}; `toolkit sandbox` writes one)"
            )

        given: dict[str, Any] = {key: values.get(var) or None for key, var in ENV_KEYS.items()}
        return cls(**given, source=str(path) if path is not None else "environment")
