"""``Client``: the facade analysts call, one method per capability.

The top of the library's layers. A client builds a :class:`~toolkit.core.connection.Connection`
(settings, transport, token, URLs, one request) and hands it to the operations, plain functions
of a connection: :mod:`toolkit.ingress.imports`, :mod:`toolkit.ingress.plan`,
:mod:`toolkit.egress.fetch`, :mod:`toolkit.egress.sync`, :mod:`toolkit.egress.acknowledgements`,
:mod:`toolkit.egress.users`, :mod:`toolkit.starring.operations`. Each method is made from the
operation it calls (:func:`_operation`): the same signature without the connection, the same
docstring, so the text exists once and ``client.star?`` in Jupyter shows the operation's whole
documentation. The five ``import_<table>`` methods call
:func:`~toolkit.ingress.imports.import_table` with their table and carry its docstring.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Collection, Mapping
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import pandas as pd

from toolkit.bulk.journal import Journal
from toolkit.core.auth import Secret, TokenProvider
from toolkit.core.connection import ENDPOINTS, Connection, Endpoint
from toolkit.core.frames import FrameLike
from toolkit.core.http import Transport
from toolkit.core.settings import ENV_KEYS, Settings, read_env_file
from toolkit.egress import acknowledgements
from toolkit.egress import fetch as exports
from toolkit.egress import sync as syncing
from toolkit.egress import users as people
from toolkit.errors import ConfigError
from toolkit.ingress import imports
from toolkit.ingress.plan import failures as plan_failures
from toolkit.ingress.plan import plan as make_plan
from toolkit.ingress.ranges import CodeRangePost
from toolkit.starring import operations as starring

# besides the facade, the lower names the command line needs (``toolkit.cli`` reads no module
# inside core/ or bulk/): the endpoint table, the setting -> variable table, the journal
__all__ = ["ENDPOINTS", "ENV_KEYS", "Client", "Journal", "read_env_file"]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


def _without_args(doc: str | None, names: Collection[str]) -> str:
    r"""A Google-style docstring without the ``Args:`` entries of ``names`` (and their
    continuation lines).

    >>> print(_without_args("Do.\n\nArgs:\n    conn: c\n        more.\n    x: y", ["conn"]))
    Do.
    <BLANKLINE>
    Args:
        x: y
    """
    out: list[str] = []
    args_indent: int | None = None  # indentation of the "Args:" header while inside it
    dropping: int | None = None  # indentation of the entry being dropped
    for line in (doc or "").splitlines():
        text = line.lstrip()
        indent = len(line) - len(text)
        if dropping is not None:
            if text and indent > dropping:
                continue
            dropping = None
        if text == "Args:":
            args_indent = indent
        elif args_indent is not None and text and indent <= args_indent:
            args_indent = None
        if args_indent is not None and indent > args_indent and text.split(":")[0] in names:
            dropping = indent
            continue
        out.append(line)
    return "\n".join(out) + ("\n" if (doc or "").endswith("\n") else "")


def _operation(fn: Callable[Concatenate[Connection, P], R]) -> Callable[Concatenate[Client, P], R]:
    """A ``Client`` method that calls ``fn`` with the client's connection.

    The method shows ``fn``'s signature without its first (connection) parameter and
    ``fn``'s docstring without that argument, so both exist once, in the operation;
    ``__wrapped__`` is the operation.

    Args:
        fn: an operation: a function whose first parameter is a
            :class:`~toolkit.core.connection.Connection`.

    Returns:
        The method.

    Example:
        >>> str(inspect.signature(_operation(people.user)))
        "(self, user_id: 'str') -> 'dict[str, Any]'"
    """

    @functools.wraps(fn)
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self.connection, *args, **kwargs)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = sig.replace(parameters=[self_param, *params[1:]])  # type: ignore[attr-defined]  # inspect reads __signature__
    method.__doc__ = _without_args(fn.__doc__, [params[0].name])
    method.__module__ = __name__
    method.__qualname__ = f"Client.{fn.__name__}"
    return method


def _import_doc(table: str) -> Callable[[F], F]:
    """Give ``Client.import_<table>`` the docstring of
    :func:`~toolkit.ingress.imports.import_table`, without its ``conn`` and ``table``
    arguments, its example run on ``table``."""

    def decorate(method: F) -> F:
        only_ranges = [] if table == "code_ranges" else ["code_range_post"]
        doc = _without_args(imports.import_table.__doc__, ["conn", "table", *only_ranges])
        text, _, example = doc.partition("Example:")
        method.__doc__ = f"{text}Example:{example.replace('clients', table)}"
        return method

    return decorate


class Client:
    """A connection to one customer of the interface, with one method per capability.

    Args:
        customer_id: the customer's identifier (every customer-scoped path holds it).
        client_id: the application's ``clientId``.
        client_secret: the application's ``clientSecret`` (kept masked).
        auth_url: base address of the identity service (the token and the user records).
        time_url: base address of the time service (also used for the customer-scoped v1 and
            v2 paths other than the user records).
        ingestion_url: base address for the import paths; defaults to ``time_url``.
        audience: the operator-supplied audience of the token request (required: the identity
            service refuses a token request without one; ``TOOLKIT_AUDIENCE``).
        timeout: request timeout in seconds (connect, read) or one number.
        retries: retries of a request that is safe to repeat.
        backoff: base of the exponential backoff in seconds.
        workers: default number of worker threads of bulk operations.
        max_rate: requests per second a bulk operation never exceeds, for users who know their
            quota; without it each run finds the service's pace on its own (it backs off
            together on 429 and 503 and probes upward again).

    Raises:
        ConfigError: a required setting (the audience too) is empty, or a URL is not an
            http(s) URL with a host; raised here, before any request.

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
    ) -> None:
        if max_rate is not None and not max_rate > 0:
            raise ConfigError("max_rate must be a positive number of requests per second")
        settings = Settings(
            customer_id,
            client_id,
            client_secret,
            auth_url,
            time_url,
            ingestion_url,
            audience,
        )
        self.connection = Connection(
            settings,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            workers=workers,
            max_rate=max_rate,
        )

    @classmethod
    def from_connection(cls, connection: Connection) -> Client:
        """Wrap an existing connection in the facade (no new session or token).

        Args:
            connection: the connection to use.

        Returns:
            A client over that connection.

        Example:
            >>> from toolkit.core.settings import Settings
            >>> s = Settings("c", "i", "s", "http://127.0.0.1:1", "http://t", audience="aud")
            >>> conn = Connection(s)
            >>> Client.from_connection(conn).connection is conn
            True
        """
        client = cls.__new__(cls)
        client.connection = connection
        return client

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

        The file is found as python-dotenv's ``find_dotenv(usecwd=True)`` finds it: in the
        current folder, else the nearest parent (a notebook in ``notebooks/`` reads the
        repository's ``.env``); ``client.settings.source`` names it. The environment wins over
        the file. The file written by ``toolkit sandbox`` works as is.

        Args:
            env_file: name or path of the ``.env`` file, or ``None`` to read none.
            environ: variables to use instead of ``os.environ``.
            timeout: request timeout in seconds.
            retries: retries of a request that is safe to repeat.
            workers: default worker threads of bulk operations.
            max_rate: requests per second a bulk operation never exceeds.

        Returns:
            A configured client.

        Raises:
            ConfigError: a required variable is missing.

        Example:
            >>> env = {"TOOLKIT_CUSTOMER_ID": "c", "TOOLKIT_CLIENT_ID": "i",
            ...        "TOOLKIT_CLIENT_SECRET": "s", "TOOLKIT_AUTH_URL": "http://127.0.0.1:1",
            ...        "TOOLKIT_TIME_URL": "http://127.0.0.1:1", "TOOLKIT_AUDIENCE": "a"}
            >>> Client.from_env(None, environ=env).customer_id
            'c'
        """
        settings = Settings.from_env(env_file, environ=environ)
        return cls.from_connection(
            Connection(
                settings, timeout=timeout, retries=retries, workers=workers, max_rate=max_rate
            )
        )

    def __repr__(self) -> str:
        return (
            f"Client(customer_id={self.customer_id!r}, "
            f"client_id={self.connection.settings.client_id!r}, "
            f"time_url={self.urls['time']!r})"
        )

    # -- the connection underneath ---------------------------------------------------------

    @property
    def customer_id(self) -> str:
        """The customer every path is scoped to."""
        return self.connection.customer_id

    @property
    def settings(self) -> Settings:
        """The settings; ``.source`` is the ``.env`` file read, or ``"environment"``."""
        return self.connection.settings

    @property
    def client_id(self) -> str:
        """The application's ``clientId``."""
        return self.connection.settings.client_id

    @property
    def urls(self) -> dict[str, str]:
        """Base address of each service (``auth``, ``time``, ``ingestion``)."""
        return self.connection.urls

    @property
    def workers(self) -> int:
        """Default worker threads of bulk operations."""
        return self.connection.workers

    @property
    def transport(self) -> Transport:
        """The HTTP layer (pooled sessions, timeouts, retries)."""
        return self.connection.transport

    @property
    def auth(self) -> TokenProvider:
        """The token provider (lazy, cached, refreshed)."""
        return self.connection.auth

    def url(self, endpoint: Endpoint, *, path: Mapping[str, str] | None = None) -> str:
        """Full URL of an endpoint, with path parameters filled in and percent-encoded.

        Args:
            endpoint: a key of :data:`~toolkit.core.connection.ENDPOINTS`.
            path: path parameters other than ``customerId`` (as in :meth:`send`).

        Returns:
            The URL.

        Example:
            >>> c = Client("c1", "i", "s", "http://a", "http://t", audience="aud")
            >>> c.url("user", path={"userId": "u 1"})
            'http://a/api/v1/customers/c1/users/u%201'
        """
        return self.connection.url(endpoint, **(path or {}))

    send = _operation(Connection.send)
    call = _operation(Connection.call)

    def close(self) -> None:
        """Close the client's HTTP sessions; ``with Client.from_env() as client:`` does it
        at the end of the block. A later request opens new ones.

        Returns:
            Nothing; closing twice is harmless.

        Example:
            >>> url = "http://127.0.0.1:9"
            >>> with Client("c", "i", "s", url, url, audience="aud") as c:
            ...     c.customer_id
            'c'
        """
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- ingress -----------------------------------------------------------------------------

    @_import_doc("clients")
    def import_clients(
        self,
        df: FrameLike,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | Journal | None = None,
        dry_run: bool = False,
        on_warning: str = "send",
    ) -> pd.DataFrame:
        return imports.import_table(
            self.connection,
            "clients",
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
        )

    @_import_doc("initiatives")
    def import_initiatives(
        self,
        df: FrameLike,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | Journal | None = None,
        dry_run: bool = False,
        on_warning: str = "send",
    ) -> pd.DataFrame:
        return imports.import_table(
            self.connection,
            "initiatives",
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
        )

    @_import_doc("code_types")
    def import_code_types(
        self,
        df: FrameLike,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | Journal | None = None,
        dry_run: bool = False,
        on_warning: str = "send",
    ) -> pd.DataFrame:
        return imports.import_table(
            self.connection,
            "code_types",
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
        )

    @_import_doc("codes")
    def import_codes(
        self,
        df: FrameLike,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | Journal | None = None,
        dry_run: bool = False,
        on_warning: str = "send",
    ) -> pd.DataFrame:
        return imports.import_table(
            self.connection,
            "codes",
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
        )

    @_import_doc("code_ranges")
    def import_code_ranges(
        self,
        df: FrameLike,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | Journal | None = None,
        dry_run: bool = False,
        on_warning: str = "send",
        code_range_post: CodeRangePost = "replace",
    ) -> pd.DataFrame:
        return imports.import_table(
            self.connection,
            "code_ranges",
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
            code_range_post=code_range_post,
        )

    onboard = _operation(imports.onboard)
    plan = _operation(make_plan)
    failures = _operation(plan_failures)

    # -- egress ------------------------------------------------------------------------------

    export_entries = _operation(exports.export_entries)
    export_to_parquet = _operation(exports.export_to_parquet)
    release_pending = _operation(exports.release_pending)
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
