"""Rate limits of the interface routes: three limiter kinds, one limiter per customer.

The real service has rate limits the spec does not state; these let the toolkit meet one. A
customer's profile (:mod:`toolkit.sandbox._profiles`) names its ``rateLimit``:

- :class:`TokenBucket` (``token-bucket``): ``perSecond`` tokens a second, at most ``burst``
  stored; a request takes one.
- :class:`FixedWindow` (``fixed-window``): at most ``limit`` requests in a window of
  ``windowSeconds``, which opens at the first request after the previous window closed.
- :class:`ConcurrencyCap` (``concurrency``): at most ``maxInFlight`` requests served at once.

:class:`Limits` keeps one limiter per customer, made from its setting (a changed setting makes a
fresh one), and the counters. :mod:`toolkit.sandbox._app` consults it in its interface middleware
(after fault injection, before any route does work): a refused request is answered 429 (or the
concurrency cap's ``status``) with ``Retry-After`` and a problem body. Every answer of a
limited customer can carry the limit's state (:func:`limit_headers`). Off by default; the old
``/sandbox/v1/rate-limit`` route sets a token bucket in the default profile.
"""

from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Annotated, Any
from urllib.parse import unquote

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ._exceptions import SandboxError
from ._profiles import whole

__all__ = [
    "Admission",
    "ConcurrencyCap",
    "FixedWindow",
    "Limits",
    "RateLimitIn",
    "RateLimitOut",
    "RateLimited",
    "TokenBucket",
    "customer_of",
    "limit_headers",
    "retry_after_value",
]

Clock = Callable[[], float]
"""Seconds from any origin (``time.monotonic``)."""


class RateLimitIn(BaseModel):
    """Rate limit settings: ``perSecond`` null turns the limit off."""

    model_config = ConfigDict(strict=True, extra="forbid")

    perSecond: Annotated[float, Field(gt=0, le=100_000)] | None = None
    # JSON Schema counts 2.0 as an integer: take a whole number written with a fraction too
    burst: Annotated[Annotated[int, Field(ge=1, le=1_000_000)], BeforeValidator(whole)] | None = (
        None
    )


class RateLimitOut(BaseModel):
    """Rate limit settings and counters."""

    perSecond: float | None
    burst: int | None
    counters: dict[str, Any]


class RateLimited(SandboxError):
    """429 (or the concurrency cap's 503): the customer is over its rate limit.

    Args:
        retry_after: Seconds for ``Retry-After``.
        status: 429 or 503.
        detail: The problem's ``detail``.

    >>> RateLimited(2).headers
    {'Retry-After': '2'}
    """

    slug = "rate-limited"

    def __init__(self, retry_after: int, *, status: int = 429, detail: str | None = None) -> None:
        self.status = status
        super().__init__(
            detail or f"rate limit exceeded; retry after {retry_after} s",
            title=HTTPStatus(status).phrase,
            headers={"Retry-After": str(retry_after)},
        )


def customer_of(path: str) -> str | None:
    """The ``customerId`` segment of an interface path (percent-decoded), if it has one.

    >>> customer_of("/api/v1/public/customers/c1/initiative-props/star")
    'c1'
    >>> customer_of("/api/v1/oauth/token") is None
    True
    """
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "customers":
            return unquote(parts[i + 1]) or None
    return None


@dataclass(frozen=True)
class Admission:
    """A limiter's answer to one request, and its state after it.

    Attributes:
        allowed: Serve the request.
        status: The status refusing it (429, or 503 for a concurrency cap so set).
        retry_after: Seconds before a retry can pass (refused requests only).
        policy: The limiter's kind, which names its policy in the ``RateLimit`` headers.
        limit: Requests the policy allows (the bucket size, the window's limit, the cap).
        window: Seconds the policy's ``limit`` is over, or None (concurrency).
        remaining: Requests that would pass now.
        reset: Seconds until ``remaining`` is back to ``limit`` (0 for a concurrency cap).
        release: Call once the request is answered (concurrency caps), else None.
    """

    allowed: bool
    status: int
    retry_after: int | None
    policy: str
    limit: int
    window: int | None
    remaining: int
    reset: int
    release: Callable[[], None] | None = None


class TokenBucket:
    """``per_second`` tokens a second, at most ``burst`` stored; a request takes one.

    >>> bucket = TokenBucket(1, 2, clock=lambda: 0.0)
    >>> [bucket.admit().allowed for _ in range(3)]
    [True, True, False]
    """

    kind = "token-bucket"

    def __init__(self, per_second: float, burst: int, *, clock: Clock = time.monotonic) -> None:
        self.per_second = float(per_second)
        self.burst = int(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.per_second)
        self._at = now
        return self._tokens

    def _state(self, allowed: bool, retry_after: int | None) -> Admission:
        tokens = self._tokens
        return Admission(
            allowed=allowed,
            status=429,
            retry_after=retry_after,
            policy=self.kind,
            limit=self.burst,
            window=max(1, math.ceil(self.burst / self.per_second)),
            remaining=int(tokens),
            reset=math.ceil((self.burst - tokens) / self.per_second),
        )

    def admit(self) -> Admission:
        """Take a token for one request.

        >>> TokenBucket(1, 1, clock=lambda: 0.0).admit().remaining
        0
        """
        tokens = self._refill()
        if tokens >= 1.0:
            self._tokens = tokens - 1.0
            return self._state(True, None)
        return self._state(False, max(1, math.ceil((1.0 - tokens) / self.per_second)))

    def peek(self) -> Admission:
        """The state, without taking a token.

        >>> TokenBucket(5, 10, clock=lambda: 0.0).peek().remaining
        10
        """
        self._refill()
        return self._state(True, None)


class FixedWindow:
    """At most ``limit`` requests in a window of ``window_seconds``.

    A window opens at the first request after the previous one closed, so a burst at the start
    of a test always meets a whole window.

    >>> clock = iter([0.0, 0.1, 0.2, 1.5]).__next__
    >>> window = FixedWindow(2, 1, clock=clock)
    >>> [window.admit().allowed for _ in range(4)]
    [True, True, False, True]
    """

    kind = "fixed-window"

    def __init__(self, limit: int, window_seconds: int, *, clock: Clock = time.monotonic) -> None:
        self.limit = int(limit)
        self.window_seconds = int(window_seconds)
        self._clock = clock
        self._opened: float | None = None
        self._count = 0

    def _roll(self) -> float:
        now = self._clock()
        if self._opened is not None and now >= self._opened + self.window_seconds:
            self._opened, self._count = None, 0
        return now

    def _state(self, now: float, allowed: bool) -> Admission:
        left = 0.0 if self._opened is None else self._opened + self.window_seconds - now
        reset = max(0, math.ceil(left))
        return Admission(
            allowed=allowed,
            status=429,
            retry_after=None if allowed else max(1, reset),
            policy=self.kind,
            limit=self.limit,
            window=self.window_seconds,
            remaining=self.limit - self._count,
            reset=reset,
        )

    def admit(self) -> Admission:
        """Count one request in the current window.

        >>> FixedWindow(3, 10, clock=lambda: 0.0).admit().remaining
        2
        """
        now = self._roll()
        if self._count < self.limit:
            if self._opened is None:
                self._opened = now
            self._count += 1
            return self._state(now, True)
        return self._state(now, False)

    def peek(self) -> Admission:
        """The state, without counting a request.

        >>> FixedWindow(3, 10, clock=lambda: 0.0).peek().remaining
        3
        """
        return self._state(self._roll(), True)


class ConcurrencyCap:
    """At most ``max_in_flight`` requests served at once; beyond, ``status`` (429 or 503).

    >>> cap = ConcurrencyCap(1)
    >>> first = cap.admit()
    >>> cap.admit().allowed
    False
    >>> first.release()
    >>> cap.admit().allowed
    True
    """

    kind = "concurrency"

    def __init__(self, max_in_flight: int, status: int = 429) -> None:
        self.max_in_flight = int(max_in_flight)
        self.status = int(status)
        self._lock = threading.Lock()
        self._in_flight = 0

    def _state(self, allowed: bool, release: Callable[[], None] | None) -> Admission:
        return Admission(
            allowed=allowed,
            status=self.status,
            retry_after=None if allowed else 1,
            policy=self.kind,
            limit=self.max_in_flight,
            window=None,
            remaining=max(0, self.max_in_flight - self._in_flight),
            reset=0,
            release=release,
        )

    def _release(self) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

    def admit(self) -> Admission:
        """Take a place for one request; its ``release`` gives it back.

        >>> ConcurrencyCap(2).admit().remaining
        1
        """
        with self._lock:
            if self._in_flight < self.max_in_flight:
                self._in_flight += 1
                released = threading.Event()

                def release() -> None:
                    if not released.is_set():
                        released.set()
                        self._release()

                return self._state(True, release)
            return self._state(False, None)

    def peek(self) -> Admission:
        """The state, without taking a place.

        >>> ConcurrencyCap(2).peek().remaining
        2
        """
        with self._lock:
            return self._state(True, None)


Limiter = TokenBucket | FixedWindow | ConcurrencyCap


def limiter(setting: Mapping[str, Any], clock: Clock) -> Limiter:
    """A fresh limiter of a ``rateLimit`` setting, on ``clock`` (the store's, or a simulated one).

    >>> bucket = limiter({"kind": "token-bucket", "perSecond": 5, "burst": 2}, clock=lambda: 0.0)
    >>> bucket.peek().remaining
    2
    """
    kind = setting["kind"]
    if kind == "token-bucket":
        return TokenBucket(setting["perSecond"], setting["burst"], clock=clock)
    if kind == "fixed-window":
        return FixedWindow(setting["limit"], setting["windowSeconds"], clock=clock)
    return ConcurrencyCap(setting["maxInFlight"], setting.get("status", 429))


class Limits:
    """One limiter per customer, made from its ``rateLimit`` setting; and the counters.

    A customer whose setting changes gets a fresh limiter (a full bucket, a new window).

    >>> limits = Limits(clock=lambda: 0.0)
    >>> bucket = {"kind": "token-bucket", "perSecond": 1, "burst": 2}
    >>> [limits.admit("c1", bucket).allowed for _ in range(3)]
    [True, True, False]
    >>> limits.admit("c2", bucket).allowed, limits.admit("c1", None)
    (True, None)
    >>> limits.counters()
    {'allowed': 3, 'limited': 1}
    """

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._limiters: dict[str, tuple[str, Limiter]] = {}
        self._allowed = 0
        self._limited = 0

    def _for(self, customer: str, setting: Mapping[str, Any]) -> Limiter:
        key = json.dumps(setting, sort_keys=True)
        held = self._limiters.get(customer)
        if held is None or held[0] != key:
            held = (key, limiter(setting, self._clock))
            self._limiters[customer] = held
        return held[1]

    def admit(self, customer: str | None, setting: Mapping[str, Any] | None) -> Admission | None:
        """Admit one request of a customer under its setting.

        Args:
            customer: The path's ``customerId``; None (the token route) is never limited.
            setting: The customer's ``rateLimit``; None is no limit.

        Returns:
            The admission, or None when no limit applies.

        >>> Limits().admit("c1", None) is None
        True
        """
        if customer is None or setting is None:
            return None
        with self._lock:
            admission = self._for(customer, setting).admit()
            if admission.allowed:
                self._allowed += 1
            else:
                self._limited += 1
        return admission

    def peek(self, customer: str | None, setting: Mapping[str, Any] | None) -> Admission | None:
        """The customer's limiter state, without admitting a request (None when no limit).

        >>> bucket = {"kind": "token-bucket", "perSecond": 1, "burst": 4}
        >>> Limits().peek("c1", bucket).remaining
        4
        """
        if customer is None or setting is None:
            return None
        with self._lock:
            return self._for(customer, setting).peek()

    def reset(self, customer: str | None = None) -> None:
        """Forget one customer's limiter, or (None) every limiter and the counters.

        >>> Limits().reset()
        """
        with self._lock:
            if customer is not None:
                self._limiters.pop(customer, None)
                return
            self._limiters.clear()
            self._allowed = self._limited = 0

    def counters(self) -> dict[str, int]:
        """Requests allowed and limited since the last full :meth:`reset`.

        >>> Limits().counters()
        {'allowed': 0, 'limited': 0}
        """
        with self._lock:
            return {"allowed": self._allowed, "limited": self._limited}


def limit_headers(style: str, admission: Admission) -> dict[str, str]:
    """The rate limit headers of one answer, in a profile's ``rateLimitHeaders`` style.

    ``ietf``: ``RateLimit-Policy`` and ``RateLimit`` as draft-ietf-httpapi-ratelimit-headers
    (-09) writes them (structured fields: ``q`` quota, ``w`` window, ``r`` remaining, ``t``
    seconds to reset). ``x-ratelimit``: ``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset``
    (seconds to reset). ``none``: no header.

    Args:
        style: ``none``, ``ietf`` or ``x-ratelimit``.
        admission: The limiter's state.

    Returns:
        Header names and values.

    >>> state = Admission(True, 429, None, "fixed-window", 10, 60, 7, 42)
    >>> limit_headers("ietf", state)["RateLimit-Policy"]
    '"fixed-window";q=10;w=60'
    >>> limit_headers("x-ratelimit", state)["X-RateLimit-Remaining"]
    '7'
    """
    if style == "ietf":
        policy = f'"{admission.policy}";q={admission.limit}'
        if admission.window is not None:
            policy += f";w={admission.window}"
        return {
            "RateLimit-Policy": policy,
            "RateLimit": f'"{admission.policy}";r={admission.remaining};t={admission.reset}',
        }
    if style == "x-ratelimit":
        return {
            "X-RateLimit-Limit": str(admission.limit),
            "X-RateLimit-Remaining": str(admission.remaining),
            "X-RateLimit-Reset": str(admission.reset),
        }
    return {}


def retry_after_value(style: str, seconds: int, *, now: float | None = None) -> str | None:
    """A ``Retry-After`` value in a profile's ``retryAfter`` style.

    Args:
        style: ``seconds`` (an integer), ``http-date`` (an IMF-fixdate, rounded up to the
            second) or ``absent`` (no header: None).
        seconds: Seconds to wait.
        now: The current time (epoch seconds); default the wall clock.

    Returns:
        The header value, or None to send none.

    >>> retry_after_value("http-date", 2, now=0.5)
    'Thu, 01 Jan 1970 00:00:03 GMT'
    >>> retry_after_value("seconds", 2), retry_after_value("absent", 2)
    ('2', None)
    """
    if style == "absent":
        return None
    if style == "http-date":
        moment = math.ceil((time.time() if now is None else now) + seconds)
        return email.utils.formatdate(moment, usegmt=True)
    return str(seconds)
