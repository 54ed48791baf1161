"""OAuth 2.0 client-credentials tokens, fetched lazily, cached and refreshed; secrets masked."""

from __future__ import annotations

import hmac
import math
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import orjson
import requests

from toolkit._core.http import LOST, RETRY_STATUSES, UNREACHABLE, Transport, problem_of
from toolkit.errors import (
    ApiError,
    AuthError,
    ConfigError,
    InputWarning,
    TransportError,
    api_error_for,
)

#: The longest ``Retry-After`` of the identity service waited for, in seconds.
_MAX_RETRY_AFTER = 60.0

#: what a :class:`Secret` shows instead of its value (and what its pickled form holds)
_MASK = "********"


class Secret:
    """A string that never shows itself in a repr, a str, a format or a pickle.

    >>> s = Secret("hunter2")
    >>> s, s.reveal()
    (Secret('********'), 'hunter2')
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
        return (Secret, (_MASK,))

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self


@dataclass(eq=False, slots=True)
class BearerAuth(requests.auth.AuthBase):
    """A ``requests`` auth hook writing ``Authorization: Bearer <token>`` as it is prepared.

    >>> requests.Request("GET", "http://h/", auth=BearerAuth(Secret("t"))).prepare().headers[
    ...     "Authorization"]
    'Bearer t'
    """

    token: Secret

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.headers["Authorization"] = "Bearer " + self.token.reveal()
        return r


@dataclass(eq=False, slots=True)
class ClientCredentials(requests.auth.AuthBase):
    """A ``requests`` auth hook writing the token exchange's JSON body as it is prepared.

    >>> "s3cr3t" in repr(ClientCredentials("app", Secret("s3cr3t"), "aud"))
    False
    """

    client_id: str
    client_secret: Secret
    audience: str

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


#: seconds a token lives when its answer does not say (no ``expires_in``)
DEFAULT_TOKEN_LIFETIME_S = 3600.0
#: seconds a token is used when its answer's ``expires_in`` is not a positive number (0, negative,
#: text): long enough not to ask for a token before every request, short enough that a token the
#: service has already let lapse costs one 401 and one retry with a new one (Connection.send)
MIN_TOKEN_LIFETIME_S = 30.0


def _lifetime(given: Any) -> float:
    """A token's lifetime in seconds from its answer's ``expires_in``; a value that is not a
    positive number warns and gives :data:`MIN_TOKEN_LIFETIME_S`."""
    if given is None:
        return DEFAULT_TOKEN_LIFETIME_S
    seconds = math.nan
    with suppress(TypeError, ValueError):
        seconds = float(given)
    if math.isfinite(seconds) and seconds > 0:
        return seconds
    warnings.warn(
        f"the token answer's expires_in {given!r} is not a positive number of seconds: the token "
        f"is used for {MIN_TOKEN_LIFETIME_S:g} s, then a new one is asked for",
        InputWarning,
        stacklevel=4,
    )
    return MIN_TOKEN_LIFETIME_S


class TokenProvider:
    """Exchange client credentials for a bearer token and keep it fresh (thread-safe); a refusal
    (400, 401, 403) is raised again without a request. It refreshes ``refresh_margin`` seconds
    before expiry (at most 10% of the token's life).

    >>> TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")  # doctest: +ELLIPSIS
    TokenProvider(token_url='http://127.0.0.1:9/t', client_id='id', ...)
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
        if not audience:
            raise ConfigError("no audience for the token request: set TOOLKIT_AUDIENCE")
        self.token_url, self.client_id, self.audience = token_url, client_id, audience
        self._secret = client_secret if isinstance(client_secret, Secret) else Secret(client_secret)
        self._transport = transport or Transport(timeout=timeout, retries=0)
        self._margin, self._clock, self._lock = refresh_margin, clock, threading.Lock()
        self._token: Secret | None = None
        self._refresh_at, self.fetches = 0.0, 0
        self._refused: AuthError | None = None

    def __repr__(self) -> str:
        return (
            f"TokenProvider(token_url={self.token_url!r}, client_id={self.client_id!r}, "
            f"client_secret=Secret('********'), has_token={self._token is not None})"
        )

    def secret_token(self, retry: bool = True) -> Secret:
        """A valid access token, still wrapped, fetched when needed (``retry=False``: an
        unreachable identity service is not retried).

        Returns:
            The bearer token in a :class:`Secret`.

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
        """The access token as plain text (prefer :meth:`secret_token`, which keeps it masked).

        >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
        >>> tp._token, tp._refresh_at = Secret("abc"), float("inf")
        >>> tp.token()
        'abc'
        """
        return self.secret_token().reveal()

    def invalidate(self, token: str | Secret | None = None) -> None:
        """Forget the cached token (only if it is still ``token``, plain or wrapped, when given).

        >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
        >>> tp._token = Secret("abc")
        >>> tp.invalidate(Secret("other")); tp._token is None
        False
        """
        if isinstance(token, str):
            token = Secret(token)
        with self._lock:
            if token is None or self._token == token:
                self._token = None

    def lapsed(self, token: Secret) -> bool:
        """Whether ``token`` is the cached token and its time is up (due for a new one): a 401
        for it says it expired, not that the credentials are refused.

        >>> tp = TokenProvider("http://127.0.0.1:9/t", "id", "secret", "aud")
        >>> tp._token, tp._refresh_at = Secret("abc"), 0.0
        >>> tp.lapsed(Secret("abc")), tp.lapsed(Secret("other"))
        (True, False)
        """
        with self._lock:
            return self._token == token and self._clock() >= self._refresh_at

    def _fetch(self, retry: bool = True) -> None:
        # 429, 5xx and a lost answer are retried; an unreachable service only with ``retry``
        transport = self._transport
        for attempt in range(1, transport.retries + 2):
            asked = self._clock()  # a token's life runs from when it was asked for, at the latest
            auth = ClientCredentials(self.client_id, self._secret, self.audience)
            reply = transport.send("POST", self.token_url, auth=auth, retry=False)
            again = reply.failure == LOST or (retry and reply.failure == UNREACHABLE)
            if attempt > transport.retries or not (again or reply.status in RETRY_STATUSES):
                break
            after = reply.retry_after
            time.sleep(transport.delay(attempt) if after is None else min(after, _MAX_RETRY_AFTER))
        if reply.status is None:
            why, failure = f"token request failed: {reply.error}", reply.failure or ""
            raise TransportError(why, method="POST", url=self.token_url, failure=failure)
        data = reply.body if isinstance(reply.body, dict) else None
        token = Secret(str(data.pop("access_token"))) if data and "access_token" in data else None
        if reply.status != 200 or token is None or data is None:  # no token means no data too
            problem = problem_of(reply)
            if reply.status in (400, 401, 403):
                # a refusal of the request or of the credentials: asking again cannot help
                self._refused = AuthError(reply.status, problem, "POST", self.token_url)
                raise self._refused
            if 200 <= reply.status < 300:
                missing = {"detail": "the identity service's answer holds no access_token"}
                raise ApiError(reply.status, missing, "POST", self.token_url)
            # 429, 5xx or another status: no verdict on the credentials (a later call asks again)
            raise api_error_for(reply.status, problem, "POST", self.token_url)
        lifetime = _lifetime(data.get("expires_in"))
        self._token, self._refresh_at = token, asked + lifetime - min(self._margin, lifetime * 0.1)
        self.fetches += 1
