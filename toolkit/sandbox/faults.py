"""Seeded fault injection and request counting for the interface routes; profile draws.

:class:`Faults` and :class:`Stats` are plain thread-safe objects; :mod:`toolkit.sandbox.app`
consults them in one ASGI middleware before any route does work, and exposes them on
``/sandbox/v1/faults`` and ``/sandbox/v1/stats``. :func:`latency_seconds` and
:func:`token_fault` draw what a customer's profile (:mod:`toolkit.sandbox.profiles`) asks for:
the added delay of one request, and the fault of one token request.
"""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["Faults", "Stats", "latency_seconds", "token_fault"]

_Z99 = 2.3263478740408408
"""The standard normal's 99th percentile."""
_TAIL_CAP = 4
"""A latency draw is at most this many times ``p99Ms``."""


def latency_seconds(setting: Mapping[str, Any], rng: random.Random) -> float:
    """Draw the delay a profile's ``latency`` adds to one request, in seconds.

    With probability ``stallRate`` the request stalls ``stallMs``. Otherwise the delay is
    log-normal with median ``p50Ms`` and 99th percentile ``p99Ms`` (constant when they are
    equal), capped at four times ``p99Ms``.

    Args:
        setting: ``{"p50Ms", "p99Ms", "stallRate", "stallMs"}``.
        rng: The random source.

    Returns:
        Seconds to sleep (0 for none).

    >>> rng = random.Random(1)
    >>> latency_seconds({"p50Ms": 20, "p99Ms": 20, "stallRate": 0, "stallMs": 0}, rng)
    0.02
    >>> latency_seconds({"p50Ms": 0, "p99Ms": 0, "stallRate": 1, "stallMs": 1500}, rng)
    1.5
    """
    stall_rate = setting.get("stallRate") or 0
    if stall_rate and rng.random() < stall_rate:
        return float(setting.get("stallMs") or 0) / 1000
    p50 = float(setting.get("p50Ms") or 0)
    p99 = float(setting.get("p99Ms") or p50)
    if p50 <= 0:
        return 0.0
    if p99 <= p50:
        return p50 / 1000
    sigma = math.log(p99 / p50) / _Z99
    return min(p50 * math.exp(sigma * rng.gauss(0.0, 1.0)), _TAIL_CAP * p99) / 1000


def token_fault(setting: Mapping[str, Any], rng: random.Random) -> int | None:
    """Draw whether one token request fails, as a profile's ``tokenFaults`` says.

    Args:
        setting: ``{"rate", "statuses", "retryAfterSeconds"}``.
        rng: The random source.

    Returns:
        The status to answer, or None to serve the request.

    >>> token_fault({"rate": 1.0, "statuses": [429]}, random.Random(0))
    429
    >>> token_fault({"rate": 0.0, "statuses": [503]}, random.Random(0)) is None
    True
    """
    rate = setting.get("rate") or 0
    if rate <= 0 or rng.random() >= rate:
        return None
    return int(rng.choice(list(setting.get("statuses") or [503])))


class Faults:
    """Fault injection settings, their seeded random source and counters.

    All rates are off by default. ``decide()`` is called once per interface request and
    ``item_fails()`` once per star/unstar item.

    >>> faults = Faults()
    >>> faults.configure(rate=1.0, statuses=[503], seed=1)["rate"]
    1.0
    >>> faults.decide()
    503
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.configure()

    def configure(
        self,
        *,
        rate: float = 0.0,
        statuses: list[int] | None = None,
        retry_after_seconds: int = 1,
        latency_ms: int = 0,
        item_error_rate: float = 0.0,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """Replace the settings and reset the counters and the random source.

        Args:
            rate: Fraction (0 to 1) of interface requests answered with a fault status.
            statuses: Statuses to draw from (429, 500, 503); default ``[503]``.
            retry_after_seconds: ``Retry-After`` of 429 and 503 answers.
            latency_ms: Delay added to every interface request.
            item_error_rate: Fraction of star/unstar items answered 500 (and not applied).
            seed: Seed of the random source; None draws one.

        Returns:
            The settings and counters, as :meth:`snapshot`.

        >>> Faults().configure(latency_ms=5)["latencyMs"]
        5
        """
        with self._lock:
            self.rate = float(rate)
            self.statuses = list(statuses or [503])
            self.retry_after = int(retry_after_seconds)
            self.latency_ms = int(latency_ms)
            self.item_error_rate = float(item_error_rate)
            self.seed = seed
            self._random = random.Random(seed)
            self._injected: Counter[int] = Counter()
            self._item_errors = 0
            self._seen = 0
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        """Return the settings and the counters since the last :meth:`configure`.

        >>> Faults().snapshot()["counters"]
        {'requests': 0, 'injected': {}, 'itemErrors': 0}
        """
        with self._lock:
            return {
                "rate": self.rate,
                "statuses": list(self.statuses),
                "retryAfterSeconds": self.retry_after,
                "latencyMs": self.latency_ms,
                "itemErrorRate": self.item_error_rate,
                "seed": self.seed,
                "counters": {
                    "requests": self._seen,
                    "injected": {str(k): v for k, v in sorted(self._injected.items())},
                    "itemErrors": self._item_errors,
                },
            }

    def decide(self) -> int | None:
        """Return the status to inject for this request, or None to serve it.

        >>> Faults().decide() is None
        True
        """
        with self._lock:
            self._seen += 1
            if self.rate <= 0 or self._random.random() >= self.rate:
                return None
            status = self._random.choice(self.statuses)
            self._injected[status] += 1
            return status

    def item_fails(self) -> bool:
        """Return True when this star/unstar item must answer 500.

        >>> Faults().item_fails()
        False
        """
        with self._lock:
            if self.item_error_rate <= 0 or self._random.random() >= self.item_error_rate:
                return False
            self._item_errors += 1
            return True


class Stats:
    """Counts of interface requests per ``"METHOD /route/template"`` and status.

    >>> stats = Stats()
    >>> stats.record("GET", "/a/{id}", 200)
    >>> stats.snapshot()
    {'total': 1, 'routes': {'GET /a/{id}': {'count': 1, 'statuses': {'200': 1}}}}
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[int]] = {}

    def record(self, method: str, template: str, status: int) -> None:
        """Count one answered request.

        Args:
            method: HTTP method.
            template: The route's path template.
            status: The status answered.

        >>> Stats().record("POST", "/x", 201)
        """
        with self._lock:
            self._counts.setdefault(f"{method} {template}", Counter())[status] += 1

    def snapshot(self) -> dict[str, Any]:
        """Return ``{"total": n, "routes": {key: {"count": n, "statuses": {...}}}}``.

        >>> Stats().snapshot()
        {'total': 0, 'routes': {}}
        """
        with self._lock:
            routes = {
                key: {
                    "count": sum(counter.values()),
                    "statuses": {str(k): v for k, v in sorted(counter.items())},
                }
                for key, counter in sorted(self._counts.items())
            }
        return {"total": sum(r["count"] for r in routes.values()), "routes": routes}

    def reset(self) -> None:
        """Forget every count.

        >>> Stats().reset()
        """
        with self._lock:
            self._counts.clear()
