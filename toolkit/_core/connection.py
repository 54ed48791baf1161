"""``Connection``: one customer's session with the service (settings, transport, token, the
endpoint paths of :data:`ENDPOINTS` and one request); it knows no operation."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from toolkit._core.auth import BearerAuth, TokenProvider
from toolkit._core.http import (
    INVALID_URL,
    LOST,
    NOT_SENT,
    UNREACHABLE,
    Reply,
    Transport,
    problem_of,
)
from toolkit._core.settings import ENV_KEYS, Settings
from toolkit.errors import ApiError, AuthError, TransportError, api_error_for

log = logging.getLogger("toolkit._core.connection")

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

#: tokens one request is sent with at most: a 401 is retried once with a new token, and a 401
#: for a token whose life ran out while its request was being retried (a short-lived token, a
#: slow service) is not counted as that one refusal, a few times over
TOKEN_TRIES = 4

_CUSTOMER = "/api/v1/customers/{customerId}"
_INITIATIVES = _CUSTOMER + "/initiatives"
_RELEASE = _CUSTOMER + "/users/{userId}/entries/{entryId}/release"
_PROPS = "/api/v1/public/customers/{customerId}/initiative-props"

#: name -> (method, service, path template).
ENDPOINTS: dict[Endpoint, tuple[Literal["GET", "POST"], Service, str]] = {
    "token": ("POST", "auth", "/api/v1/oauth/token"),
    "import_clients": ("POST", "ingestion", f"{_CUSTOMER}/clients/import"),
    "import_initiatives": ("POST", "ingestion", f"{_INITIATIVES}/import"),
    "import_code_types": ("POST", "ingestion", f"{_CUSTOMER}/code-types/import"),
    "import_codes": ("POST", "ingestion", f"{_CUSTOMER}/codes/import"),
    "import_code_ranges": ("POST", "ingestion", f"{_INITIATIVES}/{{initiativeExternalId}}/codes"),
    "export": ("GET", "time", "/api/v2/customers/{customerId}/entries/export"),
    "release_pending": ("GET", "time", f"{_CUSTOMER}/entries/release-pending"),
    "release_succeeded": ("POST", "time", f"{_RELEASE}-succeeded"),
    "release_failed": ("POST", "time", f"{_RELEASE}-failed"),
    "user": ("GET", "auth", f"{_CUSTOMER}/users/{{userId}}"),  # identity only
    # published, not in interface.md: 1 to 20 release-succeeded in one request, a 207 answer
    "release_succeeded_batch": ("POST", "time", f"{_CUSTOMER}/entries/release-succeeded/batch"),
    "star": ("POST", "time", f"{_PROPS}/star"),
    "unstar": ("POST", "time", f"{_PROPS}/unstar"),
    "starred": ("GET", "time", f"{_PROPS}/starred"),
}


def _segment(value: object) -> str:
    """Percent-encode one path segment, ``.`` too (a segment ``..`` would be removed on the way)."""
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

    >>> conn = Connection(Settings("c1", "app", "s3cr3t", "http://a", "http://t", audience="a"))
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
        self.settings, self.max_rate, self.workers = settings, max_rate, workers
        self.customer_id, self.urls = settings.customer_id, settings.urls
        self.transport = Transport(timeout=timeout, retries=retries, backoff=backoff)
        #: whether the batch release-succeeded route is served (``None``: not known yet)
        self.ack_batch: bool | None = None
        credentials = (settings.client_id, settings.client_secret, settings.audience)
        self.auth = TokenProvider(self.url("token"), *credentials, transport=self.transport)

    def __repr__(self) -> str:
        return (
            f"Connection(customer_id={self.customer_id!r}, "
            f"client_id={self.settings.client_id!r}, time_url={self.urls['time']!r})"
        )

    def url(self, endpoint: Endpoint, **path: str) -> str:
        """Full URL of an endpoint, path parameters percent-encoded (``.`` as ``%2E`` too).

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            **path: path parameters other than ``customerId``.

        Returns:
            The URL.

        >>> Connection(Settings("c1", "i", "s", "http://a", "http://t", audience="a")).url(
        ...     "user", userId="..")
        'http://a/api/v1/customers/c1/users/%2E%2E'
        """
        _, service, template = ENDPOINTS[endpoint]
        values = {"customerId": self.customer_id, **path}
        filled = template.format(**{k: _segment(v) for k, v in values.items()})
        return self.urls[service] + filled

    def _unreachable(self, service: Service, url: str, error: str | None) -> str:
        """A reason naming the host and the setting to check: the ``TOOLKIT_*`` variable that
        sets the service's base address (the time service's when no ingestion address is set)."""
        why = (error or "no answer").removeprefix("no answer (").removesuffix(")")
        host = urlsplit(url).netloc or url
        what = "the identity service" if service == "auth" else f"the {service} service"
        named = "time" if service == "ingestion" and not self.settings.ingestion_url else service
        return f"cannot reach {what} at {host} ({why}); check {ENV_KEYS[f'{named}_url']}"

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
        """Send one authenticated request; never raises (a 401 is retried once with a new token;
        a 401 for a token whose time ran out while the request was retried does not count, up
        to :data:`TOKEN_TRIES` tokens).

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            path: path parameters other than ``customerId``.
            params: query parameters.
            json: JSON body.
            retry: whether the request is safe to repeat.
            raw: keep a 2xx body as bytes.

        Returns:
            The :class:`~toolkit._core.http.Reply`.

        >>> s = Settings("c", "i", "s", "http://127.0.0.1:9", "http://t", audience="aud")
        >>> Connection(s, retries=0).send("user", path={"userId": "u"}).status is None
        True
        """
        method, service, _ = ENDPOINTS[endpoint]
        url = self.url(endpoint, **(path or {}))
        attempts, elapsed, refused = 0, 0.0, 0
        for _ in range(TOKEN_TRIES):
            try:
                token = self.auth.secret_token(retry=retry)  # wrapped until the header is built
            except TransportError as exc:
                why = str(exc).split(": ", 1)[-1]
                if exc.failure == LOST:  # the identity service is there; this request never left
                    error = f"not sent: the token request's answer was lost ({why})"
                    return Reply(None, None, error, attempts, elapsed, method, url, NOT_SENT)
                error = self._unreachable("auth", self.auth.token_url, why)
                failure = exc.failure or UNREACHABLE
                return Reply(None, None, error, attempts + 1, elapsed, method, url, failure)
            except ApiError as exc:
                what = "refused" if isinstance(exc, AuthError) else f"answered {exc.status}"
                error = f"token request {what}: {exc.detail}"
                return Reply(exc.status, exc.problem, error, attempts + 1, elapsed, method, url)
            hdrs, query = {"Accept": "application/json"}, dict(params) if params else None
            auth = BearerAuth(token)
            reply = self.transport.send(
                method, url, headers=hdrs, params=query, json=json, auth=auth, retry=retry, raw=raw
            )
            attempts, elapsed = attempts + reply.attempts, elapsed + reply.elapsed
            if reply.failure in (UNREACHABLE, INVALID_URL):
                reply.error = self._unreachable(service, url, reply.error)
            if reply.status != 401:
                break
            refused += not self.auth.lapsed(token)  # a token that ran out is no refusal
            self.auth.invalidate(token)
            if refused > 1:
                break
        reply.attempts, reply.elapsed = attempts, elapsed
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
        """Send one request as :meth:`send` does; raise a typed error for a failure.

        Returns:
            The parsed JSON body (``None`` for an empty one), or bytes with ``raw``.

        >>> s = Settings("c", "i", "s", "http://127.0.0.1:9", "http://t", audience="aud")
        >>> Connection(s, retries=0).call("user", path={"userId": "u"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        toolkit.errors.TransportError: cannot reach the identity service at 127.0.0.1:9 ...
        """  # noqa: E501 - a doctest's output is one line
        reply = self.send(endpoint, path=path, params=params, json=json, retry=retry, raw=raw)
        if reply.status is None:
            raise TransportError(reply.error or "no answer", method=reply.method, url=reply.url)
        if not reply.ok:
            raise api_error_for(reply.status, problem_of(reply), reply.method, reply.url)
        return reply.body

    def close(self) -> None:
        """Close the pooled HTTP sessions (the token stays cached; a later request reconnects).

        >>> Connection(Settings("c", "i", "s", "http://a", "http://t", audience="aud")).close()
        """
        self.transport.close()
