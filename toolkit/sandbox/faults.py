"""Seeded fault injection and request counting for the interface routes.

Both are plain thread-safe objects; :mod:`toolkit.sandbox.app` consults them in one ASGI
middleware before any route does work, and exposes them on ``/sandbox/v1/faults`` and
``/sandbox/v1/stats``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Any

__all__ = ["Faults", "Stats"]


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
