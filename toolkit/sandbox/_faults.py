"""Every kind of fault: its settings, how it is drawn, and the global fault injection.

Faults come in two scopes that share one mechanism. The global ones (:class:`FaultSettings`,
held by :class:`Faults`) hit every customer's interface requests and are set on
``/sandbox/v1/faults``; the per-customer ones are switches of a customer's profile
(:class:`TokenFaults` is its ``tokenFaults``, :class:`Latency` its ``latency``; see
:class:`toolkit.sandbox._profiles.Profile`). Each kind is declared once here, as a pydantic model
whose members carry their bounds, defaults and descriptions (the administration routes, the
:class:`~toolkit.sandbox._admin.Admin` client and the OpenAPI document derive from them), and is
drawn by the functions below: :func:`hit` (an event of some probability), :func:`fault_status`
(a status drawn from ``statuses`` for a fraction ``rate`` of requests) and
:func:`latency_seconds` (an added delay). :mod:`toolkit.sandbox._app` consults :class:`Faults` in
one ASGI middleware before any route does work and exposes it on ``/sandbox/v1/faults``, beside
the request counts of :class:`Stats` on ``/sandbox/v1/stats``.

A new kind of fault is a model (or a member of one) and its draw in this module; a
per-customer kind becomes a profile switch by one line of
:class:`~toolkit.sandbox._profiles.Profile`.
"""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ._bodies import Rate, RequestBody, whole

__all__ = [
    "FaultSettings",
    "Faults",
    "Latency",
    "Stats",
    "StatusFaults",
    "TokenFaults",
    "fault_status",
    "hit",
    "latency_seconds",
]

_Z99 = 2.3263478740408408
"""The standard normal's 99th percentile."""
_TAIL_CAP = 4
"""A latency draw is at most this many times ``p99Ms``."""

FaultStatus = Literal[429, 500, 503]
"""The statuses a fault answers with (429 and 503 carry ``Retry-After``)."""
Millis = Annotated[Annotated[int, Field(ge=0, le=600_000)], BeforeValidator(whole)]


def _only_503() -> list[FaultStatus]:
    """The default statuses of faults: 503 alone."""
    return [503]


class StatusFaults(RequestBody):
    """Requests answered with a fault status instead of being served: the part every status
    fault shares."""

    rate: Rate = Field(0.0, description="Fraction (0 to 1) of requests answered with a fault.")
    statuses: list[FaultStatus] = Field(
        default_factory=_only_503, min_length=1, description="Statuses drawn from (429, 500, 503)."
    )


class TokenFaults(StatusFaults):
    """Faults of the token route only: a fraction of token requests answered with a status."""

    retryAfterSeconds: (
        Annotated[Annotated[int, Field(ge=0, le=86_400)], BeforeValidator(whole)] | None
    ) = Field(1, description="`Retry-After` of 429 and 503 faults; null sends none.")
    seed: Annotated[int, Field(ge=0, le=2**32)] | None = Field(
        None,
        description="Makes the draws repeatable: the customer's token requests draw, in "
        "order, from a random source of their own seeded with it; null draws freely.",
    )

    @model_serializer(mode="wrap")
    def _without_a_null_seed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("seed") is None:  # shown only when set: the profile's shape is unchanged
            data.pop("seed", None)
        return data


class FaultSettings(StatusFaults):
    """Fault injection on every interface route, token included (all off by default)."""

    retryAfterSeconds: Annotated[int, Field(ge=0, le=3600)] = Field(
        1, description="`Retry-After` of 429 and 503 faults."
    )
    latencyMs: Annotated[int, Field(ge=0, le=60_000)] = Field(
        0, description="Delay added to every interface request (ms)."
    )
    itemErrorRate: Rate = Field(
        0.0, description="Fraction of star/unstar items answered 500 (and not applied)."
    )
    seed: int | None = Field(
        None, description="Seed of the random source, for repeatable runs; null draws one."
    )


class Latency(RequestBody):
    """Delay added to every interface request: log-normal from its median and 99th percentile,
    plus rare stalls."""

    p50Ms: Millis = Field(0, description="Median added delay (ms).")
    p99Ms: Millis | None = Field(
        None,
        description="99th percentile of the added delay (ms); default `p50Ms` "
        "(a constant delay). Draws are capped at four times it.",
    )
    stallRate: Rate = Field(0.0, description="Fraction of requests that stall instead.")
    stallMs: Millis = Field(0, description="Length of a stall (ms).")

    @model_validator(mode="after")
    def _tail(self) -> Latency:
        if self.p99Ms is None:
            self.p99Ms = self.p50Ms
        if self.p99Ms < self.p50Ms:
            raise ValueError("p99Ms must not be less than p50Ms")
        if self.p99Ms and not self.p50Ms:
            raise ValueError("a p99Ms above 0 needs a p50Ms above 0")
        return self


def hit(rate: float, rng: random.Random) -> bool:
    """Draw whether an event of probability ``rate`` happens (nothing is drawn at rate 0).

    Args:
        rate: The probability, 0 to 1.
        rng: The random source.

    Returns:
        Whether it happens.

    >>> hit(1.0, random.Random(0)), hit(0.0, random.Random(0))
    (True, False)
    """
    return rate > 0 and rng.random() < rate


def fault_status(setting: Mapping[str, Any], rng: random.Random) -> int | None:
    """Draw whether one request fails, as status faults (global or ``tokenFaults``) say.

    Args:
        setting: ``{"rate", "statuses", ...}`` (:class:`StatusFaults`).
        rng: The random source.

    Returns:
        The status to answer, or None to serve the request.

    >>> fault_status({"rate": 1.0, "statuses": [429]}, random.Random(0))
    429
    >>> fault_status({"rate": 0.0, "statuses": [503]}, random.Random(0)) is None
    True
    """
    if not hit(setting.get("rate") or 0, rng):
        return None
    return int(rng.choice(list(setting.get("statuses") or [503])))


def latency_seconds(setting: Mapping[str, Any], rng: random.Random) -> float:
    """Draw the delay a profile's ``latency`` adds to one request, in seconds.

    With probability ``stallRate`` the request stalls ``stallMs``. Otherwise the delay is
    log-normal with median ``p50Ms`` and 99th percentile ``p99Ms`` (constant when they are
    equal), capped at four times ``p99Ms``.

    Args:
        setting: ``{"p50Ms", "p99Ms", "stallRate", "stallMs"}`` (:class:`Latency`).
        rng: The random source.

    Returns:
        Seconds to sleep (0 for none).

    >>> rng = random.Random(1)
    >>> latency_seconds({"p50Ms": 20, "p99Ms": 20, "stallRate": 0, "stallMs": 0}, rng)
    0.02
    >>> latency_seconds({"p50Ms": 0, "p99Ms": 0, "stallRate": 1, "stallMs": 1500}, rng)
    1.5
    """
    if hit(setting.get("stallRate") or 0, rng):
        return float(setting.get("stallMs") or 0) / 1000
    p50 = float(setting.get("p50Ms") or 0)
    p99 = float(setting.get("p99Ms") or p50)
    if p50 <= 0:
        return 0.0
    if p99 <= p50:
        return p50 / 1000
    sigma = math.log(p99 / p50) / _Z99
    return min(p50 * math.exp(sigma * rng.gauss(0.0, 1.0)), _TAIL_CAP * p99) / 1000


class Faults:
    """The global fault settings (:class:`FaultSettings`), their seeded random source and
    counters.

    All rates are off by default. ``decide()`` is called once per interface request and
    ``item_fails()`` once per star/unstar item.

    Attributes:
        settings: The settings in force, by their JSON names (treat it as read-only).

    >>> faults = Faults()
    >>> faults.configure(rate=1.0, statuses=[503], seed=1)["rate"]
    1.0
    >>> faults.decide()
    503
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.configure()

    def configure(self, **settings: Any) -> dict[str, Any]:
        """Replace the settings and reset the counters and the random source.

        Args:
            **settings: Members of :class:`FaultSettings` (``rate``, ``statuses``,
                ``retryAfterSeconds``, ``latencyMs``, ``itemErrorRate``, ``seed``), by their
                JSON names or in snake case (``retry_after_seconds``); those left out take
                their defaults.

        Returns:
            The settings and counters, as :meth:`snapshot`.

        Raises:
            pydantic.ValidationError: An unknown setting or a bad value; nothing is changed.

        >>> Faults().configure(latency_ms=5)["latencyMs"]
        5
        """
        chosen = FaultSettings.model_validate(
            {to_camel(name): value for name, value in settings.items()}, strict=False
        ).model_dump()
        with self._lock:
            self.settings = chosen
            self._random = random.Random(chosen["seed"])
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
                **self.settings,
                "statuses": list(self.settings["statuses"]),
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
            status = fault_status(self.settings, self._random)
            if status is not None:
                self._injected[status] += 1
            return status

    def item_fails(self) -> bool:
        """Return True when this star/unstar item must answer 500.

        >>> Faults().item_fails()
        False
        """
        with self._lock:
            failed = hit(self.settings["itemErrorRate"], self._random)
            self._item_errors += failed
            return failed


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
