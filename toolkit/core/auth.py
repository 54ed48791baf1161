"""OAuth 2.0 client-credentials tokens: fetched lazily, cached, refreshed before they expire.

The secret and the token live in :class:`Secret` wrappers whose ``repr``, ``str`` and pickled
forms are masked, so neither can reach a log line, an exception message, a notebook output or a
pickle by accident. They stay wrapped along the whole request path: the request body of the
token exchange and the ``Authorization`` header are written by ``requests`` auth hooks
(:class:`BearerAuth`, :class:`ClientCredentials`) inside their ``__call__``, whose frame is gone
before anything can fail, so no traceback's locals (rich, IPython's verbose mode, an error
tracker) hold a plain secret or token.
"""

from __future__ import annotations

import hmac
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
import requests

from toolkit.core.http import LOST, RETRY_STATUSES, UNREACHABLE, Transport, problem_of
from toolkit.errors import ApiError, AuthError, ConfigError, TransportError, api_error_for

__all__ = [
    "MASK",
    "BearerAuth",
    "ClientCredentials",
    "Secret",
    "TokenProvider",
]

#: The longest ``Retry-After`` of the identity service waited for, in seconds.
_MAX_RETRY_AFTER = 60.0

#: what a :class:`Secret` shows instead of its value (and what its pickled form holds)
MASK = "********"


class Secret:
    """A string that never shows itself in a repr, a str or a format.

    Example:
        >>> s = Secret("hunter2")
        >>> s
        Secret('********')
        >>> s.reveal()
        'hunter2'
        >>> import pickle
        >>> pickle.loads(pickle.dumps(s)).reveal()  # the pickled form holds the mask only
        '********'
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """Return the plain value, for the one place that must send it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        mine = self._value.encode("utf-8", "surrogatepass")
        return hmac.compare_digest(mine, other._value.encode("utf-8", "surrogatepass"))

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self) -> Any:
        # pickling (multiprocessing, a cache, a crash dump) carries the mask, never the value
        return (Secret, (MASK,))

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self


class BearerAuth(requests.auth.AuthBase):
    """A ``requests`` auth hook that writes ``Authorization: Bearer <token>`` when called.

    The token stays in its :class:`Secret` until ``requests`` prepares the request, so the
    caller's frames hold no plain token.

    Args:
        token: the access token.

    Example:
        >>> import requests
        >>> auth = BearerAuth(Secret("t0k3n"))
        >>> auth
        BearerAuth(Secret('********'))
        >>> req = requests.Request("GET", "http://127.0.0.1:9/", auth=auth).prepare()
        >>> req.headers["Authorization"]
        'Bearer t0k3n'
    """

    __slots__ = ("token",)

    def __init__(self, token: Secret) -> None:
        self.token = token

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.headers["Authorization"] = "Bearer " + self.token.reveal()
        return r

    def __repr__(self) -> str:
        return f"BearerAuth({self.token!r})"


class ClientCredentials(requests.auth.AuthBase):
    """A ``requests`` auth hook that writes the token exchange's JSON body when called.

    The body is the spec's: ``grant_type``, ``client_id``, ``client_secret`` and ``audience``,
    as JSON. It is built inside :meth:`__call__`, so the secret is plain text
    only in that short-lived frame and in the prepared request's body.

    Args:
        client_id: the application's ``clientId``.
        client_secret: its ``clientSecret``.
        audience: the operator-supplied audience.

    Example:
        >>> import requests
        >>> auth = ClientCredentials("app", Secret("s3cr3t"), "aud")
        >>> "s3cr3t" in repr(auth)
        False
        >>> req = requests.Request("POST", "http://127.0.0.1:9/t", auth=auth).prepare()
        >>> req.headers["Content-Type"], b"s3cr3t" in req.body
        ('application/json', True)
    """

    __slots__ = ("audience", "client_id", "client_secret")

    def __init__(self, client_id: str, client_secret: Secret, audience: str) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.audience = audience

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.body = orjson.dumps(
            {
                "grant_type": "client_credentials",
                "client_id": self.client_id,
                "client_secret": self.client_secret.reveal(),
                "audience": self.audience,
            }
        )
        r.headers["Content-Type"] = "application/json"
        return r

    def __repr__(self) -> str:
        return (
            f"ClientCredentials(client_id={self.client_id!r}, "
            f"client_secret={self.client_secret!r}, audience={self.audience!r})"
        )


class TokenProvider:
    """Exchange client credentials for a bearer token and keep it fresh.

    The token is fetched on first use, cached, refreshed ``refresh_margin`` seconds before it
    expires (or at 90% of its life for short lifetimes), and dropped by :meth:`invalidate`
    (the client calls it once when the service answers 401). A refusal (400/401/403) is
    remembered: later calls raise it again without another request, so a bulk run with wrong
    credentials makes one token request, not one per row. Thread-safe.

    Args:
        token_url: full URL of ``POST /api/v1/oauth/token``.
        client_id: the application's ``clientId``.
        client_secret: the application's ``clientSecret``.
        audience: the operator-supplied audience (the identity service requires it).
        transport: the HTTP layer to post with (the client's, so proxies and timeouts match).
        timeout: seconds for the token request when no transport is given.
        refresh_margin: refresh this many seconds before expiry.
        clock: returns the current time in seconds (for tests).

    Raises:
        ConfigError: ``audience`` is empty (before any request: the service would refuse it).

    Example:
        >>> tp = TokenProvider("http://127.0.0.1:9/api/v1/oauth/token", "id", "secret", "aud")
        >>> tp  # doctest: +ELLIPSIS
        TokenProvider(token_url='http://127.0.0.1:9/api/v1/oauth/token', client_id='id', ...)
        >>> TokenProvider("http://127.0.0.1:9/t", "id", "secret", "")
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: no audience for the token request: set TOOLKIT_AUDIENCE
    """

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | Secret,
        audience: str,
        *,
        transport: Transport | None = None,
        timeout: float = 30.0,
        refresh_margin: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.token_url = token_url
        self.client_id = client_id
        self._secret = client_secret if isinstance(client_secret, Secret) else Secret(client_secret)
        if not audience:
            raise ConfigError("no audience for the token request: set TOOLKIT_AUDIENCE")
        self.audience = audience
        self._transport = transport or Transport(timeout=timeout, retries=0)
        self._margin = refresh_margin
        self._clock = clock
        self._lock = threading.Lock()
        self._token: Secret | None = None
        self._refresh_at = 0.0
        self._refused: AuthError | None = None
        self.fetches = 0

    def __repr__(self) -> str:
        return (
            f"TokenProvider(token_url={self.token_url!r}, client_id={self.client_id!r}, "
            f"client_secret=Secret('********'), has_token={self._token is not None})"
        )

    def secret_token(self, retry: bool = True) -> Secret:
        """Return a valid access token, still wrapped, fetching one when needed.

        What the request path uses: the token is revealed only when :class:`BearerAuth` writes
        the header.

        Args:
            retry: let the transport retry a failed token request (the bulk runner passes
                ``False``: it applies one retry policy to the whole run instead of each row).

        Returns:
            The bearer token in a :class:`Secret`.

        Raises:
            AuthError: the identity service refused the credentials.
            TransportError: the identity service could not be reached.

        Example:
            >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
            >>> tp._token, tp._refresh_at = Secret("abc"), float("inf")  # a cached token
            >>> tp.secret_token()
            Secret('********')
        """
        with self._lock:
            if self._refused is not None:
                raise self._refused
            if self._token is None or self._clock() >= self._refresh_at:
                self._fetch(retry)
            assert self._token is not None
            return self._token

    def token(self) -> str:
        """Return a valid access token, fetching one if none is cached or it is about to expire.

        Prefer :meth:`secret_token`, which keeps the token masked.

        Returns:
            The bearer token value.

        Raises:
            AuthError: the identity service refused the credentials.
            TransportError: the identity service could not be reached.

        Example:
            >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
            >>> tp._token, tp._refresh_at = Secret("abc"), float("inf")  # a cached token
            >>> tp.token()
            'abc'
        """
        return self.secret_token().reveal()

    def invalidate(self, token: str | Secret | None = None) -> None:
        """Forget the cached token (only if it is still ``token``, when given).

        Args:
            token: the token a request was refused with (plain or wrapped), or ``None``.

        Example:
            >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
            >>> tp._token = Secret("abc")
            >>> tp.invalidate(Secret("other")); tp._token is None
            False
            >>> tp.invalidate(Secret("abc")); tp._token is None
            True
        """
        if isinstance(token, str):
            token = Secret(token)
        with self._lock:
            if token is None or self._token == token:
                self._token = None

    def _fetch(self, retry: bool = True) -> None:
        # the body is written by the ClientCredentials hook while requests prepares the
        # request: no frame here holds the plain secret. A token exchange is safe to repeat,
        # and goes through the same policy as any request: 429 and 5xx are retried (after
        # Retry-After, else with backoff) up to the transport's retries, and so is a lost
        # answer, always; a service that cannot be reached is retried only with ``retry``
        # (the bulk runner passes False: its pacer gives the verdict for the whole run).
        transport = self._transport
        limit = 1 + transport.retries
        attempt = 0
        while True:
            attempt += 1
            # a token's life runs from when the service issued it, at the latest: count it
            # from the request, so an answer that came late does not outlive its token
            asked = self._clock()
            reply = transport.send(
                "POST",
                self.token_url,
                auth=ClientCredentials(self.client_id, self._secret, self.audience),
                retry=False,
            )
            if attempt >= limit:
                break
            if reply.status is None and (
                reply.failure == LOST or (retry and reply.failure == UNREACHABLE)
            ):
                self._sleep(None, attempt)  # a lost answer: the service is there, ask again
            elif reply.status in RETRY_STATUSES:
                self._sleep(reply.retry_after, attempt)
            else:
                break
        if reply.status is None:
            raise TransportError(
                f"token request failed: {reply.error}",
                method="POST",
                url=self.token_url,
                failure=reply.failure or "",
            )
        data = reply.body if isinstance(reply.body, dict) else None
        # take the token out of the parsed body at once, straight into its wrapper
        token = Secret(str(data.pop("access_token"))) if data and "access_token" in data else None
        if reply.status != 200 or token is None or data is None:  # no token means no data too
            problem = problem_of(reply)
            if reply.status in (400, 401, 403):
                # a refusal of the request or of the credentials: asking again cannot help
                self._refused = AuthError(reply.status, problem, "POST", self.token_url)
                raise self._refused
            if 200 <= reply.status < 300:
                raise ApiError(
                    reply.status,
                    {"detail": "the identity service's answer holds no access_token"},
                    "POST",
                    self.token_url,
                )
            # 429, 5xx after the retries, or another status: the identity service's answer,
            # not a verdict on the credentials (a later call asks again)
            raise api_error_for(reply.status, problem, "POST", self.token_url)
        try:
            lifetime = float(data.get("expires_in") or 3600)
        except (TypeError, ValueError):
            lifetime = 3600.0
        margin = min(self._margin, lifetime * 0.1)
        self._token = token
        self._refresh_at = asked + lifetime - margin
        self.fetches += 1

    def _sleep(self, retry_after: float | None, attempt: int) -> None:
        """Wait before the next token request: ``Retry-After`` when given, else backoff."""
        t = self._transport
        if retry_after is not None:
            delay = min(retry_after, _MAX_RETRY_AFTER)
        else:
            delay = min(t.backoff_max, t.backoff * 2.0 ** (attempt - 1))
            delay += random.uniform(0, t.jitter)
        time.sleep(delay)
