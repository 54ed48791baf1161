"""``Client``: the facade analysts call, one method per job.

Each method is an operation (a plain function of a connection) with the client's connection
bound: the same signature and docstring without it, so ``client.star?`` shows the operation's.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from toolkit._bulk.journal import Journal as Journal
from toolkit._core.auth import Secret
from toolkit._core.connection import ENDPOINTS as ENDPOINTS
from toolkit._core.connection import Connection
from toolkit._core.settings import ENV_KEYS as ENV_KEYS
from toolkit._core.settings import Settings
from toolkit._core.settings import read_env_file as read_env_file
from toolkit._egress import acknowledgements, fetch
from toolkit._egress import sync as syncing
from toolkit._egress import users as people
from toolkit._ingress import imports
from toolkit._ingress import plan as planning
from toolkit._starring import operations as starring
from toolkit.errors import ConfigError

# ENDPOINTS, ENV_KEYS, Journal and read_env_file stay importable from here for the command line

P = ParamSpec("P")
R = TypeVar("R")
_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _dress(method: Any, fn: Callable[..., Any], name: str, bound: Collection[str]) -> None:
    """Give ``method`` the signature and docstring of ``fn`` without the ``bound`` parameters."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name not in bound]
    method.__signature__ = sig.replace(parameters=[_SELF, *params])
    entry = rf"^( +)(?:{'|'.join(map(re.escape, bound))}):.*\n(?:\1 +\S.*\n)*"  # their Args
    method.__doc__ = re.sub(entry, "", fn.__doc__ or "", flags=re.MULTILINE)
    method.__module__, method.__name__, method.__qualname__ = __name__, name, f"Client.{name}"


def _operation(fn: Callable[Concatenate[Connection, P], R]) -> Callable[Concatenate[Client, P], R]:
    """A ``Client`` method calling the operation ``fn`` with the client's connection."""

    @functools.wraps(fn)
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self.connection, *args, **kwargs)

    del method.__wrapped__  # the docs' reader (griffe) would show the operation's ``conn``
    method.operation = fn  # type: ignore[attr-defined]
    _dress(method, fn, fn.__name__, [next(iter(inspect.signature(fn).parameters))])
    return method


def _importer(
    fn: Callable[Concatenate[Connection, str, P], R], table: str
) -> Callable[Concatenate[Client, P], R]:
    """``Client.import_<table>``: ``fn`` with the connection and the table bound."""

    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self.connection, table, *args, **kwargs)

    ranges_only = [] if table == "code_ranges" else ["code_range_post"]
    _dress(method, fn, f"import_{table}", ["conn", "table", *ranges_only])
    text, _, example = (method.__doc__ or "").partition("Example:")
    method.__doc__ = f"{text}Example:{example.replace('clients', table)}"
    return method


class Client:
    """A connection to one customer of the interface, with one method per job.

    Get one with :meth:`from_env` (a notebook: :func:`toolkit.connect`). The methods, by job:

    - import: :meth:`import_clients`, :meth:`import_initiatives`, :meth:`import_code_types`,
      :meth:`import_codes`, :meth:`import_code_ranges`; a firm: :meth:`onboard`, :meth:`plan`,
      :meth:`failures`
    - export: :meth:`export_entries`, :meth:`export_to_parquet`, :meth:`release_pending`;
      Delta tables: :meth:`sync`, :meth:`compact`; :meth:`acknowledge`
    - star: :meth:`star`, :meth:`unstar`, :meth:`starred`, :meth:`starred_many`,
      :meth:`starred_pages`; users: :meth:`user`, :meth:`users`
    - :meth:`close` (or ``with``); :attr:`settings`, :attr:`customer_id`; the low level (one
      request, the token, the URLs) is ``client.connection``.

    Args:
        customer_id: the customer's identifier.
        client_id: the application's ``clientId``.
        client_secret: the application's ``clientSecret`` (kept masked).
        auth_url: base address of the identity service (the token and the user records).
        time_url: base address of the time service.
        ingestion_url: base address of the import paths; defaults to ``time_url``.
        audience: the audience of the token request (required; ``TOOLKIT_AUDIENCE``).
        timeout: request timeout in seconds (connect, read) or one number.
        retries: retries of a request that is safe to repeat.
        backoff: base of the exponential backoff in seconds.
        workers: default number of worker threads of bulk operations.
        max_rate: requests per second a bulk operation never exceeds (default: the service's
            pace, backing off on 429 and 503).
        null_semantic_type: ``"null"`` (default, interface.md) or ``"omit"`` (the published
            form: a code type of another kind is sent without ``semanticType``); see
            :class:`~toolkit._core.settings.Settings` (``TOOLKIT_NULL_SEMANTIC_TYPE``).

    Example:
        >>> c = Client("cust", "app", "s3cr3t", "http://127.0.0.1:8765", "http://127.0.0.1:8765",
        ...            audience="https://time.example")
        >>> "s3cr3t" in repr(c)
        False
    """

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
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        backoff: float = 0.25,
        workers: int = 8,
        max_rate: float | None = None,
        null_semantic_type: str | None = None,
    ) -> None:
        if max_rate is not None and not max_rate > 0:
            raise ConfigError("max_rate must be a positive number of requests per second")
        given = (customer_id, client_id, client_secret, auth_url, time_url, ingestion_url)
        settings = Settings(*given, audience, null_semantic_type=null_semantic_type)
        self.connection = Connection(
            settings,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            workers=workers,
            max_rate=max_rate,
        )

    @classmethod
    def from_env(
        cls,
        env_file: str | os.PathLike[str] | None = ".env",
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        workers: int = 8,
        max_rate: float | None = None,
    ) -> Client:
        """Build a client from ``TOOLKIT_*`` variables and a ``.env`` file.

        The file is found from this folder up; ``client.settings.source`` names it. The
        environment wins.

        Args:
            env_file: name or path of the ``.env`` file, or ``None`` to read none.
            environ: variables to use instead of ``os.environ``.
            timeout: request timeout in seconds.
            retries: retries of a request that is safe to repeat.
            workers: default worker threads of bulk operations.
            max_rate: requests per second a bulk operation never exceeds.

        Returns:
            A configured client.

        Example:
            >>> Client.from_env(None, environ=sb.env()).customer_id == sb.customer_id
            True
        """
        given = Settings.from_env(env_file, environ=environ)
        client = cls.__new__(cls)
        client.connection = Connection(
            given, timeout=timeout, retries=retries, workers=workers, max_rate=max_rate
        )
        return client

    def __repr__(self) -> str:
        return "Client" + repr(self.connection).removeprefix("Connection")

    @property
    def customer_id(self) -> str:
        """The customer every path is scoped to."""
        return self.connection.customer_id

    @property
    def settings(self) -> Settings:
        """The settings; ``.source`` is the ``.env`` file read, or ``"environment"``."""
        return self.connection.settings

    def close(self) -> None:
        """Close the client's HTTP sessions (``with`` does it); a later request opens new ones.

        Returns:
            Nothing.

        Example:
            >>> with Client.from_env(None, environ=sb.env()) as c:
            ...     c.close()  # closing twice is harmless
        """
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingress -----------------------------------------------------------------------------

    import_clients = _importer(imports.import_table, "clients")
    import_initiatives = _importer(imports.import_table, "initiatives")
    import_code_types = _importer(imports.import_table, "code_types")
    import_codes = _importer(imports.import_table, "codes")
    import_code_ranges = _importer(imports.import_table, "code_ranges")
    onboard = _operation(imports.onboard)
    plan = _operation(planning.plan)
    failures = _operation(planning.failures)

    # -- egress ------------------------------------------------------------------------------

    export_entries = _operation(fetch.export_entries)
    export_to_parquet = _operation(fetch.export_to_parquet)
    release_pending = _operation(fetch.release_pending)
    sync = _operation(syncing.sync)
    compact = staticmethod(syncing.compact)
    acknowledge = _operation(acknowledgements.acknowledge)
    user = _operation(people.user)
    users = _operation(people.users)

    # -- starring ----------------------------------------------------------------------------

    star = _operation(starring.star)
    unstar = _operation(starring.unstar)
    starred = _operation(starring.starred)
    starred_pages = _operation(starring.starred_pages)
    starred_many = _operation(starring.starred_many)
