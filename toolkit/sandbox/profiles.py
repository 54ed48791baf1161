"""Sandbox profiles: per-customer switches for what the spec leaves open ("not shown").

A profile is one JSON object of switches; :class:`Profile` is its schema (strict, unknown keys
refused), :data:`DEFAULT_PROFILE` its defaults (interface.md, and where it is silent what the
real service publishes: imports answer 201 and acknowledgements 200 with no body, the user
record has the identity service's shape) and :data:`PROFILES` a few named presets. The store
keeps one profile per customer (:mod:`toolkit.sandbox.models.profiles`); the rules read it where
they apply: the token exchange (``tokenLifetimeSeconds``, ``expiresIn``), the imports
(``reimport``), the acknowledgements (``ackRepeat``), the export (``exportMaxEntries``,
``exportMaxWindowDays``) and the user record (``userRecord``) in the store; the answer of an
import (``importAnswer``) or an acknowledgement (``ackAnswer``) and token faults
(``tokenFaults``) in the routes; the rate limit, latency and the shape of error answers
(``rateLimit``, ``retryAfter``, ``rateLimitHeaders``, ``errorBody``, ``latency``) in the app's
middlewares; the shape of entries where interface.md and the published documents differ
(``counts``, ``codeAssigner``, ``digests``) and the published batch release-succeeded route
(``batchAck``) in the store's egress part (the ``published`` preset sets their published
values).

A nested switch (``tokenFaults``, ``rateLimit``, ``latency``) is replaced whole: its members left
out take their defaults.

>>> validate_profile({"reimport": "conflict"})
{'reimport': 'conflict'}
>>> validate_profile({"reimport": "never"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
toolkit.sandbox.profiles.ProfileError: invalid profile: reimport: Input should be 'upsert' or ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "Concurrency",
    "FixedWindow",
    "Latency",
    "Profile",
    "ProfileError",
    "TokenBucket",
    "TokenFaults",
    "merge_profile",
    "validate_profile",
    "whole",
]


def whole(value: Any) -> Any:
    """``2.0`` as ``2`` (JSON Schema's integer); anything else as given, for the strict check.

    >>> whole(2.0), whole(2.5), whole("2")
    (2, 2.5, '2')
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# integers within bounds that also take a whole number written 2.0 (JSON Schema's integer)
Seconds = Annotated[Annotated[int, Field(ge=0, le=86_400)], BeforeValidator(whole)]
Lifetime = Annotated[Annotated[int, Field(ge=1, le=31_536_000)], BeforeValidator(whole)]
Count = Annotated[Annotated[int, Field(ge=1, le=1_000_000)], BeforeValidator(whole)]
Window = Annotated[Annotated[int, Field(ge=1, le=86_400)], BeforeValidator(whole)]
InFlight = Annotated[Annotated[int, Field(ge=1, le=10_000)], BeforeValidator(whole)]
Entries = Annotated[Annotated[int, Field(ge=0, le=1_000_000_000)], BeforeValidator(whole)]
Millis = Annotated[Annotated[int, Field(ge=0, le=600_000)], BeforeValidator(whole)]
Rate = Annotated[float, Field(ge=0, le=1)]
FaultStatus = Literal[429, 500, 503]


def _only_503() -> list[FaultStatus]:
    """The default statuses of faults: 503 alone."""
    return [503]


class _Switch(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class TokenFaults(_Switch):
    """Faults of the token route only: a fraction of token requests answered with a status."""

    rate: Rate = Field(
        0.0, description="Fraction (0 to 1) of token requests answered with a fault."
    )
    statuses: list[FaultStatus] = Field(
        default_factory=_only_503, min_length=1, description="Statuses drawn from (429, 500, 503)."
    )
    retryAfterSeconds: Seconds | None = Field(
        1, description="`Retry-After` of 429 and 503 faults; null sends none."
    )
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


class TokenBucket(_Switch):
    """A token bucket per customer: ``perSecond`` tokens a second, at most ``burst`` stored."""

    kind: Literal["token-bucket"]
    perSecond: Annotated[float, Field(gt=0, le=100_000)]
    burst: Count | None = Field(
        None, description="Bucket size; default one second's worth (at least 1)."
    )

    @model_validator(mode="after")
    def _default_burst(self) -> TokenBucket:
        if self.burst is None:
            self.burst = max(1, math.ceil(self.perSecond))
        return self


class FixedWindow(_Switch):
    """At most ``limit`` requests per customer in a window of ``windowSeconds``.

    A window opens at the first request after the previous one closed.
    """

    kind: Literal["fixed-window"]
    limit: Count
    windowSeconds: Window


class Concurrency(_Switch):
    """At most ``maxInFlight`` requests of a customer served at once; beyond, ``status``."""

    kind: Literal["concurrency"]
    maxInFlight: InFlight
    status: Literal[429, 503] = 429


RateLimitSetting = Annotated[TokenBucket | FixedWindow | Concurrency, Field(discriminator="kind")]
"""One of the three rate limiter kinds, told apart by ``kind``."""


class Latency(_Switch):
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


class Profile(_Switch):
    """Every switch of a sandbox profile, with its default."""

    tokenLifetimeSeconds: Lifetime = Field(
        86_400, description="`expires_in` of new tokens, and their lifetime."
    )
    tokenFaults: TokenFaults = Field(default_factory=TokenFaults)
    rateLimit: RateLimitSetting | None = Field(
        None, description="The customer's rate limit on its interface routes; null is none."
    )
    retryAfter: Literal["seconds", "http-date", "absent"] = Field(
        "seconds", description="How 429 and 503 answers carry `Retry-After`."
    )
    rateLimitHeaders: Literal["none", "ietf", "x-ratelimit"] = Field(
        "none", description="Rate limit headers on every interface answer when a limit is set."
    )
    importAnswer: Literal["201-empty", "201-record", "200-record", "204", "202"] = Field(
        "201-empty", description="Status and body of the five imports (published: 201, no body)."
    )
    reimport: Literal["upsert", "conflict"] = Field(
        "upsert", description="An import of an existing externalId: update it, or 409."
    )
    errorBody: Literal["problem", "message", "text", "empty", "nestjs"] = Field(
        "problem", description="Body of every 4xx/5xx problem answer on the interface routes."
    )
    ackRepeat: Literal["200", "409", "422"] = Field(
        "200", description="Acknowledging an entry already in the requested state."
    )
    exportMaxEntries: Entries | None = Field(
        None, description="An export window holding more entries is refused."
    )
    exportRefusal: Literal[400, 413, 422] = Field(
        400, description="Status refusing an export window over `exportMaxEntries`."
    )
    exportMaxWindowDays: Annotated[float, Field(gt=0, le=36_500)] | None = Field(
        None, description="An export window longer than this many days is refused (400)."
    )
    latency: Latency = Field(default_factory=Latency)
    # where interface.md is silent and the published documents speak (published.md)
    ackAnswer: Literal["200-empty", "200-record"] = Field(
        "200-empty",
        description="Answer of the two acknowledgements: 200 with no body (as "
        "published) or with the entry's state after the call.",
    )
    userRecord: Literal["published", "legacy"] = Field(
        "published",
        description="Shape of the user record: the identity service's "
        "published user, or `{_id, customerId, timekeeperExternalId, name, email}`.",
    )
    expiresIn: Literal["integer", "double"] = Field(
        "integer",
        description="`expires_in` of the token answer: an integer (interface.md) or "
        "a double such as 86400.0 (published).",
    )
    # --- egress: what the published documents say where interface.md differs (issue 25)
    counts: Literal["integer", "double"] = Field(
        "integer",
        description="`unitIncrementCount` and `incrementDurationInSeconds` in "
        "entries: whole numbers as JSON integers (interface.md; a stored fraction is rounded "
        "up), or JSON doubles as stored (published), fractions included; under `double` "
        "seeded entries carry some fractions.",
    )
    codeAssigner: Literal["service", "laurel"] = Field(
        "service",
        description="`assignedBy` of a code the service assigned: `service` "
        "(interface.md) or `laurel` (published).",
    )
    digests: Literal["spec", "published"] = Field(
        "spec",
        description="Digests of release-pending: as interface.md, or with the "
        "published extras (initiative `status`, `locale`; client `type`, `parentClientId`; "
        "code type `orderingSequence`, `semanticType` absent where null; `callSign` may be "
        "null).",
    )
    batchAck: bool = Field(
        True, description="Serve the published batch release-succeeded route (false: 404)."
    )
    # -- ingress (the published contract) ---------------------------------------------------
    codeRangePost: Literal["replace", "add"] = Field(
        "replace",
        description="A code range request replaces the initiative's range, or adds "
        "its ids to it (the published documents do not say which).",
    )
    codeRangeMax: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        2500, description="Most ids one code range request may carry (published: 2500)."
    )


DEFAULT_PROFILE: dict[str, Any] = Profile().model_dump()
"""Every switch at its default: the sandbox's behaviour without a profile.

>>> DEFAULT_PROFILE["importAnswer"], DEFAULT_PROFILE["ackAnswer"], DEFAULT_PROFILE["rateLimit"]
('201-empty', '200-empty', None)
"""

PROFILES: dict[str, dict[str, Any]] = {
    "strict": {
        "reimport": "conflict",
        "ackRepeat": "409",
        "errorBody": "text",
        "exportMaxEntries": 50,
        "exportRefusal": 413,
        "exportMaxWindowDays": 31,
        "rateLimit": {"kind": "token-bucket", "perSecond": 5, "burst": 2},
        "rateLimitHeaders": "ietf",
    },
    "slow": {
        "latency": {"p50Ms": 150, "p99Ms": 1500, "stallRate": 0.02, "stallMs": 35_000},
    },
    "stingy": {
        "tokenLifetimeSeconds": 5,
        "tokenFaults": {"rate": 0.2, "statuses": [429, 503], "retryAfterSeconds": 2},
        "rateLimit": {"kind": "fixed-window", "limit": 20, "windowSeconds": 10},
        "rateLimitHeaders": "x-ratelimit",
        "retryAfter": "http-date",
    },
    "terse": {
        "importAnswer": "204",
        "errorBody": "empty",
        "ackRepeat": "422",
        "retryAfter": "absent",
    },
    "queued": {
        "importAnswer": "202",
        "errorBody": "message",
        "rateLimit": {"kind": "concurrency", "maxInFlight": 2, "status": 503},
    },
    "published": {
        "importAnswer": "201-empty",
        "ackAnswer": "200-empty",
        "userRecord": "published",
        "errorBody": "nestjs",
        "expiresIn": "double",
        # the entries' shapes: counts as doubles (some fractional), assignedBy "laurel", the
        # digests' published extras (a null callSign, an absent semanticType), the batch route
        "counts": "double",
        "codeAssigner": "laurel",
        "digests": "published",
        "batchAck": True,
    },
}
"""Named presets, each a profile (a JSON object of switches) to apply as a whole.

- ``strict``: nothing is forgiven: a reimport is a 409, a repeated acknowledgement a 409, errors
  are bare text, an export window is at most 31 days and 50 entries (413 beyond), and a token
  bucket of 5 a second with a burst of 2, announced in IETF ``RateLimit`` headers.
- ``slow``: 150 ms median latency with a long tail (1.5 s at the 99th percentile) and 2 % of
  requests stalling 35 s, longer than many clients' read timeout.
- ``stingy``: tokens live 5 seconds, a fifth of token requests fail (429/503, ``Retry-After``
  2), and 20 requests per 10-second window, with ``X-RateLimit-*`` headers and
  ``Retry-After`` as an HTTP date.
- ``terse``: imports answer 204, errors have no body, a repeated acknowledgement is a 422,
  and 429/503 answers carry no ``Retry-After``.
- ``queued``: imports answer 202 (stored all the same), errors are ``{"message"}`` JSON, and
  at most 2 requests in flight (503 beyond).
- ``published``: where interface.md and the service's published documents differ (see
  docs/sandbox.md), as published: ``expires_in`` a double, NestJS error bodies
  (``{statusCode, message, error}``), imports 201 and acknowledgements 200 with no body, the
  identity service's user record, counts as doubles (some fractional), ``assignedBy``
  ``laurel``, release-pending's digests with their published extras, the batch route.

>>> sorted(PROFILES)
['published', 'queued', 'slow', 'stingy', 'strict', 'terse']
>>> all(validate_profile(p) == p for p in PROFILES.values())
True
"""


class ProfileError(ValueError):
    """Switches that break the profile's schema.

    Attributes:
        errors: One ``{"in": "body", "field", "detail"}`` per bad switch (as in problem bodies).

    >>> ProfileError("bad", [{"in": "body", "field": "x", "detail": "unknown"}]).errors[0]["field"]
    'x'
    """

    def __init__(self, message: str, errors: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.errors = errors


def validate_profile(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Check switches against :class:`Profile`; return them with their nested defaults filled.

    Only the switches given are returned (a partial profile stays partial).

    Args:
        changes: Some switches, by their JSON names.

    Returns:
        The same switches, validated (``rateLimit``'s ``burst``, ``latency``'s ``p99Ms`` and
        ``tokenFaults``' members filled in).

    Raises:
        ProfileError: An unknown switch or a bad value; the message names every one.

    >>> validate_profile({"rateLimit": {"kind": "token-bucket", "perSecond": 2.5}})
    {'rateLimit': {'kind': 'token-bucket', 'perSecond': 2.5, 'burst': 3}}
    """
    if not isinstance(changes, Mapping):
        raise ProfileError(
            "invalid profile: a profile is a JSON object of switches",
            [{"in": "body", "field": "", "detail": "not an object"}],
        )
    try:
        profile = Profile.model_validate(dict(changes))
    except ValidationError as exc:
        errors = [
            {"in": "body", "field": ".".join(str(p) for p in err["loc"]), "detail": err["msg"]}
            for err in exc.errors()
        ]
        reasons = "; ".join(f"{e['field'] or 'profile'}: {e['detail']}" for e in errors)
        raise ProfileError(f"invalid profile: {reasons}", errors) from exc
    return profile.model_dump(include=set(profile.model_fields_set))


def merge_profile(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Return :data:`DEFAULT_PROFILE` overlaid with each layer in turn (later layers win).

    Args:
        *layers: Validated switches (see :func:`validate_profile`).

    Returns:
        A whole profile.

    >>> merge_profile({"reimport": "conflict"}, {"ackRepeat": "409"})["reimport"]
    'conflict'
    """
    merged = dict(DEFAULT_PROFILE)
    for layer in layers:
        merged.update(layer)
    return merged
