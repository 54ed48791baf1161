"""``Connection``: one customer's conversation with the service, and nothing more.

The bottom of the toolkit's layers, beside :mod:`toolkit.core.settings`, :mod:`toolkit.core.auth`
and
:mod:`toolkit.core.http`. A connection owns the settings, the pooled HTTP transport, the token
provider, the endpoint paths (:data:`ENDPOINTS`, with path segments percent-encoded) and one
request (:meth:`Connection.send`, which never raises for an HTTP status, and
:meth:`Connection.call`, which raises typed errors). It knows no operation: imports, exports,
acknowledgements and starring are functions of a connection in their own modules, and
:class:`~toolkit.client.Client` is the facade over them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from toolkit.core.auth import BearerAuth, TokenProvider
from toolkit.core.http import (
    INVALID_URL,
    LOST,
    NOT_SENT,
    UNREACHABLE,
    Reply,
    Transport,
    problem_of,
)
from toolkit.core.settings import ENV_KEYS, Settings
from toolkit.errors import ApiError, AuthError, TransportError, api_error_for

__all__ = ["ENDPOINTS", "Connection", "Endpoint", "Service"]

log = logging.getLogger("toolkit.core.connection")

#: The name of an operation of the interface (a key of :data:`ENDPOINTS`).
Endpoint = Literal[
    "token",
    "import_clients",
    "import_initiatives",
    "import_code_types",
    "import_codes",
    "import_code_ranges",
    "export",
    "release_pending",
    "release_succeeded",
    "release_failed",
    "release_succeeded_batch",
    "user",
    "star",
    "unstar",
    "starred",
]
#: A service with its own base address.
Service = Literal["auth", "time", "ingestion"]

#: name -> (method, service, path template).
ENDPOINTS: dict[Endpoint, tuple[Literal["GET", "POST"], Service, str]] = {
    "token": ("POST", "auth", "/api/v1/oauth/token"),
    "import_clients": ("POST", "ingestion", "/api/v1/customers/{customerId}/clients/import"),
    "import_initiatives": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/initiatives/import",
    ),
    "import_code_types": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/code-types/import",
    ),
    "import_codes": ("POST", "ingestion", "/api/v1/customers/{customerId}/codes/import"),
    "import_code_ranges": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes",
    ),
    "export": ("GET", "time", "/api/v2/customers/{customerId}/entries/export"),
    "release_pending": ("GET", "time", "/api/v1/customers/{customerId}/entries/release-pending"),
    "release_succeeded": (
        "POST",
        "time",
        "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-succeeded",
    ),
    "release_failed": (
        "POST",
        "time",
        "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-failed",
    ),
    "user": ("GET", "auth", "/api/v1/customers/{customerId}/users/{userId}"),  # identity only
    # published, not in interface.md: 1 to 20 release-succeeded in one request, a 207 answer
    "release_succeeded_batch": (
        "POST",
        "time",
        "/api/v1/customers/{customerId}/entries/release-succeeded/batch",
    ),
    "star": ("POST", "time", "/api/v1/public/customers/{customerId}/initiative-props/star"),
    "unstar": ("POST", "time", "/api/v1/public/customers/{customerId}/initiative-props/unstar"),
    "starred": ("GET", "time", "/api/v1/public/customers/{customerId}/initiative-props/starred"),
}


def _segment(value: object) -> str:
    """Percent-encode one path segment completely, ``.`` included.

    ``quote(safe="")`` leaves ``.``, ``-``, ``_`` and ``~`` alone, and a segment ``.`` or ``..``
    would then be removed on the way (RFC 3986 dot segments), so every ``.`` is sent as
    ``%2E`` (the transport keeps it so); an empty id is sent as an empty segment.
    """
    return quote(str(value), safe="").replace(".", "%2E")


class Connection:
    """One customer's session with the service: transport, token, URLs and one request.

    Args:
        settings: the customer, credentials and base addresses.
        timeout: request timeout in seconds (connect, read) or one number.
        retries: retries of a request that is safe to repeat.
        backoff: base of the exponential backoff in seconds.
        workers: default number of worker threads of bulk operations over this connection.
        max_rate: requests per second a bulk run never exceeds (``None``: found on its own).

    Example:
        >>> conn = Connection(Settings("c1", "app", "s3cr3t", "http://a", "http://t", audience="a"))
        >>> conn.url("user", userId="u 1")
        'http://a/api/v1/customers/c1/users/u%201'
        >>> "s3cr3t" in repr(conn)
        False
    """

    def __init__(
        self,
        settings: Settings,
        *,
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        backoff: float = 0.25,
        workers: int = 8,
        max_rate: float | None = None,
    ) -> None:
        self.settings = settings
        self.max_rate = max_rate
        self.customer_id = settings.customer_id
        self.urls = settings.urls
        self.workers = workers
        self.transport = Transport(timeout=timeout, retries=retries, backoff=backoff)
        #: whether the service serves the batch release-succeeded route: ``None`` until an
        #: acknowledgement finds out, ``False`` once it answered 404 or 405 (then every
        #: acknowledgement over this connection goes one request per entry)
        self.ack_batch: bool | None = None
        self.auth = TokenProvider(
            self.url("token"),
            settings.client_id,
            settings.client_secret,
            settings.audience,
            transport=self.transport,
        )

    def __repr__(self) -> str:
        return (
            f"Connection(customer_id={self.customer_id!r}, "
            f"client_id={self.settings.client_id!r}, time_url={self.urls['time']!r})"
        )

    def url(self, endpoint: Endpoint, **path: str) -> str:
        """Full URL of an endpoint, with path parameters filled in and percent-encoded.

        Every character outside ``A-Z a-z 0-9 - _ ~`` is encoded (``.`` as ``%2E``), so ids
        holding ``/``, ``.``, ``..``, ``?``, ``#``, ``%`` or spaces address their own record.

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            **path: path parameters other than ``customerId``.

        Returns:
            The URL.

        Example:
            >>> conn = Connection(Settings("c1", "i", "s", "http://a", "http://t", audience="aud"))
            >>> conn.url("user", userId="a/b")
            'http://a/api/v1/customers/c1/users/a%2Fb'
            >>> conn.url("user", userId="..")
            'http://a/api/v1/customers/c1/users/%2E%2E'
        """
        _, service, template = ENDPOINTS[endpoint]
        values = {"customerId": self.customer_id, **path}
        filled = template.format(**{k: _segment(v) for k, v in values.items()})
        return self.urls[service] + filled

    def setting(self, service: Service) -> str:
        """The ``TOOLKIT_*`` variable that sets a service's base address.

        Args:
            service: ``auth``, ``time`` or ``ingestion``.

        Returns:
            The variable's name.

        Example:
            >>> s = Settings("c", "i", "s", "http://a", "http://t", audience="aud")
            >>> Connection(s).setting("ingestion")
            'TOOLKIT_TIME_URL'
        """
        if service == "ingestion" and not self.settings.ingestion_url:
            service = "time"
        return ENV_KEYS[f"{service}_url"]

    def _unreachable(self, service: Service, url: str, error: str | None) -> str:
        """A reason naming the host and the setting to check."""
        why = (error or "no answer").removeprefix("no answer (").removesuffix(")")
        host = urlsplit(url).netloc or url
        what = "the identity service" if service == "auth" else f"the {service} service"
        return f"cannot reach {what} at {host} ({why}); check {self.setting(service)}"

    def send(
        self,
        endpoint: Endpoint,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool = True,
        raw: bool = False,
    ) -> Reply:
        """Send one authenticated request and return its :class:`~toolkit.core.http.Reply`.

        Never raises for an HTTP error; a 401 drops the cached token and is retried once with a
        fresh one. The bulk runner sends through this.

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            path: path parameters other than ``customerId``.
            params: query parameters.
            json: JSON body.
            retry: whether the request is safe to repeat.
            raw: keep a 2xx body as bytes (for parsers faster than building Python objects).

        Returns:
            The reply.

        Example:
            >>> url = "http://127.0.0.1:9"
            >>> s = Settings("c", "i", "s", url, url, audience="aud")
            >>> print(Connection(s, retries=0).send("user", path={"userId": "u"}).error)
            ... # doctest: +NORMALIZE_WHITESPACE
            cannot reach the identity service at 127.0.0.1:9 (connection refused);
            check TOOLKIT_AUTH_URL
        """
        method, service, _ = ENDPOINTS[endpoint]
        url = self.url(endpoint, **(path or {}))
        attempts = 0
        elapsed = 0.0
        for _ in range(2):
            try:
                token = self.auth.secret_token(retry=retry)  # wrapped until the header is built
            except TransportError as exc:
                why = str(exc).split(": ", 1)[-1]
                if exc.failure == LOST:  # the identity service is there; this request never left
                    return Reply(
                        None,
                        None,
                        f"not sent: the token request's answer was lost ({why})",
                        attempts,
                        elapsed,
                        method,
                        url,
                        NOT_SENT,
                    )
                return Reply(
                    None,
                    None,
                    self._unreachable("auth", self.auth.token_url, why),
                    attempts + 1,
                    elapsed,
                    method,
                    url,
                    exc.failure or UNREACHABLE,
                )
            except ApiError as exc:
                what = "refused" if isinstance(exc, AuthError) else f"answered {exc.status}"
                return Reply(
                    exc.status,
                    exc.problem,
                    f"token request {what}: {exc.detail}",
                    attempts + 1,
                    elapsed,
                    method,
                    url,
                )
            reply = self.transport.send(
                method,
                url,
                headers={"Accept": "application/json"},
                params=dict(params) if params else None,
                json=json,
                auth=BearerAuth(token),
                retry=retry,
                raw=raw,
            )
            attempts += reply.attempts
            elapsed += reply.elapsed
            if reply.failure in (UNREACHABLE, INVALID_URL):
                reply.error = self._unreachable(service, url, reply.error)
            if reply.status != 401:
                break
            self.auth.invalidate(token)
        reply.attempts = attempts
        reply.elapsed = elapsed
        return reply

    def call(
        self,
        endpoint: Endpoint,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool = True,
        raw: bool = False,
    ) -> Any:
        """Send one request and return its parsed JSON body, raising typed errors.

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            path: path parameters other than ``customerId``.
            params: query parameters.
            json: JSON body.
            retry: whether the request is safe to repeat.
            raw: return the body's bytes unparsed.

        Returns:
            The parsed JSON body (or ``None`` for an empty one), or bytes with ``raw``.

        Raises:
            ApiError: a subclass matching the status (``NotFoundError`` for 404...).
            TransportError: no answer came.

        Example:
            >>> from toolkit.errors import TransportError
            >>> url = "http://127.0.0.1:9"
            >>> s = Settings("c", "i", "s", url, url, audience="aud")
            >>> try:
            ...     Connection(s, retries=0).call("user", path={"userId": "u"})
            ... except TransportError as exc:
            ...     print(type(exc).__name__)
            TransportError
        """
        reply = self.send(endpoint, path=path, params=params, json=json, retry=retry, raw=raw)
        if reply.status is None:
            raise TransportError(reply.error or "no answer", method=reply.method, url=reply.url)
        if not reply.ok:
            raise api_error_for(reply.status, problem_of(reply), reply.method, reply.url)
        return reply.body

    def close(self) -> None:
        """Close the pooled HTTP sessions (the token stays cached; a later request reconnects).

        Example:
            >>> conn = Connection(Settings("c", "i", "s", "http://a", "http://t", audience="aud"))
            >>> conn.close()
        """
        self.transport.close()
