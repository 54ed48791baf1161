"""OAuth 2.0 client-credentials tokens: fetched lazily, cached, refreshed before they expire.

The secret and the token live in :class:`Secret` wrappers whose ``repr`` and ``str`` are masked,
so neither can reach a log line, an exception message or a notebook output by accident.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from toolkit.errors import AuthError, TransportError, api_error_for
from toolkit.http import Transport

__all__ = ["Secret", "TokenProvider"]


class Secret:
    """A string that never shows itself in a repr, a str or a format.

    Example:
        >>> s = Secret("hunter2")
        >>> s
        Secret('********')
        >>> s.reveal()
        'hunter2'
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

    def __reduce__(self) -> Any:
        raise TypeError("Secret values are not picklable")


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
        audience: the operator-supplied audience, sent when given.
        transport: the HTTP layer to post with (the client's, so proxies and timeouts match).
        timeout: seconds for the token request when no transport is given.
        refresh_margin: refresh this many seconds before expiry.
        clock: returns the current time in seconds (for tests).

    Example:
        >>> tp = TokenProvider("http://127.0.0.1:9/api/v1/oauth/token", "id", "secret")
        >>> tp  # doctest: +ELLIPSIS
        TokenProvider(token_url='http://127.0.0.1:9/api/v1/oauth/token', client_id='id', ...)
    """

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str | Secret,
        audience: str | None = None,
        *,
        transport: Transport | None = None,
        timeout: float = 30.0,
        refresh_margin: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.token_url = token_url
        self.client_id = client_id
        self._secret = client_secret if isinstance(client_secret, Secret) else Secret(client_secret)
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

    def token(self, retry: bool = True) -> str:
        """Return a valid access token, fetching one if none is cached or it is about to expire.

        Args:
            retry: let the transport retry a failed token request (the bulk runner passes
                ``False``: it applies one retry policy to the whole run instead of each row).

        Returns:
            The bearer token value.

        Raises:
            AuthError: the identity service refused the credentials.
            TransportError: the identity service could not be reached.
        """
        with self._lock:
            if self._refused is not None:
                raise self._refused
            if self._token is None or self._clock() >= self._refresh_at:
                self._fetch(retry)
            assert self._token is not None
            return self._token.reveal()

    def invalidate(self, token: str | None = None) -> None:
        """Forget the cached token (only if it is still ``token``, when given)."""
        with self._lock:
            if token is None or (self._token is not None and self._token.reveal() == token):
                self._token = None

    def _fetch(self, retry: bool = True) -> None:
        body: dict[str, str] = {
            "grant_type": "client_credentials",
            "client_id": self.client_id,
            "client_secret": self._secret.reveal(),
        }
        if self.audience:
            body["audience"] = self.audience
        # a token exchange is safe to repeat: connection errors and 5xx are retried, unless the
        # caller (the bulk runner) retries for the whole run itself
        reply = self._transport.send("POST", self.token_url, json=body, retry=retry)
        if reply.status is None:
            raise TransportError(
                f"token request failed: {reply.error}",
                method="POST",
                url=self.token_url,
                failure=reply.failure or "",
            )
        data = reply.body if isinstance(reply.body, dict) else None
        if reply.status != 200 or data is None or "access_token" not in data:
            problem = {k: v for k, v in (data or {}).items() if k != "access_token"} or None
            if reply.status >= 500:
                raise api_error_for(reply.status, problem, "POST", self.token_url)
            refused = AuthError(reply.status, problem, "POST", self.token_url)
            if reply.status in (400, 401, 403):
                self._refused = refused
            raise refused
        lifetime = float(data.get("expires_in") or 3600)
        margin = min(self._margin, lifetime * 0.1)
        self._token = Secret(str(data["access_token"]))
        self._refresh_at = self._clock() + lifetime - margin
        self.fetches += 1
