"""A rate limit for the interface routes: one token bucket per customer.

The real service has rate limits the spec does not state; this lets the toolkit meet one.
:mod:`toolkit.sandbox.app` consults :class:`RateLimit` in its interface middleware (after fault
injection, before any route does work) and exposes it on ``/sandbox/v1/rate-limit``. Off by
default. A request over the limit is answered 429 with an integer ``Retry-After`` (seconds until
the bucket holds a token again, at least 1) and a problem body.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .exceptions import SandboxError

__all__ = ["RateLimit", "RateLimitIn", "RateLimitOut", "RateLimited", "customer_of"]


def _whole(value: Any) -> Any:
    """``2.0`` as ``2`` (JSON Schema's integer); anything else as given, for the strict check.

    >>> _whole(2.0), _whole(2.5), _whole("2")
    (2, 2.5, '2')
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class RateLimitIn(BaseModel):
    """Rate limit settings: ``perSecond`` null turns the limit off."""

    model_config = ConfigDict(strict=True, extra="forbid")

    perSecond: Annotated[float, Field(gt=0, le=100_000)] | None = None
    # JSON Schema counts 2.0 as an integer: take a whole number written with a fraction too
    burst: Annotated[
        Annotated[int, Field(ge=1, le=1_000_000)], BeforeValidator(_whole)
    ] | None = None


class RateLimitOut(BaseModel):
    """Rate limit settings and counters."""

    perSecond: float | None
    burst: int | None
    counters: dict[str, Any]


class RateLimited(SandboxError):
    """429: the customer's token bucket is empty.

    >>> RateLimited(2).headers
    {'Retry-After': '2'}
    """

    slug = "rate-limited"

    def __init__(self, retry_after: int) -> None:
        self.status = 429
        super().__init__(
            f"rate limit exceeded; retry after {retry_after} s",
            title=HTTPStatus(429).phrase,
            headers={"Retry-After": str(retry_after)},
        )


def customer_of(path: str) -> str | None:
    """The ``customerId`` segment of an interface path, if it has one.

    >>> customer_of("/api/v1/public/customers/c1/initiative-props/star")
    'c1'
    >>> customer_of("/api/v1/oauth/token") is None
    True
    """
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "customers":
            return parts[i + 1] or None
    return None


class RateLimit:
    """Token buckets per customer: ``perSecond`` tokens a second, at most ``burst`` stored.

    >>> limit = RateLimit(clock=lambda: 0.0)
    >>> limit.configure(per_second=1, burst=2)["burst"]
    2
    >>> [limit.take("c1") for _ in range(3)]
    [None, None, 1]
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self.configure()

    def configure(self, *, per_second: float | None = None, burst: int | None = None) -> dict:
        """Replace the settings, refill every bucket and reset the counters.

        Args:
            per_second: tokens added per second, or ``None`` to turn the limit off.
            burst: bucket size; default one second's worth (at least 1).

        Returns:
            The settings and counters, as :meth:`snapshot`.

        >>> RateLimit().configure(per_second=40)["burst"]
        40
        """
        with self._lock:
            self.per_second = float(per_second) if per_second is not None else None
            self.burst = (
                None
                if per_second is None
                else int(burst if burst is not None else max(1, math.ceil(per_second)))
            )
            self._buckets: dict[str, tuple[float, float]] = {}
            self._allowed = 0
            self._limited = 0
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        """The settings and the counters since the last :meth:`configure`.

        >>> RateLimit().snapshot()
        {'perSecond': None, 'burst': None, 'counters': {'allowed': 0, 'limited': 0}}
        """
        with self._lock:
            return {
                "perSecond": self.per_second,
                "burst": self.burst,
                "counters": {"allowed": self._allowed, "limited": self._limited},
            }

    def take(self, customer: str | None) -> int | None:
        """Take a token for one request; return ``None`` to serve it, else ``Retry-After``.

        >>> RateLimit().take("c1") is None
        True
        """
        with self._lock:
            if self.per_second is None or self.burst is None or customer is None:
                return None
            now = self._clock()
            tokens, at = self._buckets.get(customer, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.per_second)
            if tokens >= 1.0:
                self._buckets[customer] = (tokens - 1.0, now)
                self._allowed += 1
                return None
            self._buckets[customer] = (tokens, now)
            self._limited += 1
            return max(1, math.ceil((1.0 - tokens) / self.per_second))
