"""Sandbox profiles: per-customer switches for what the spec leaves open ("not shown").

A profile is one JSON object of switches; :class:`Profile` is its schema (strict, unknown keys
refused) and the one declaration of every switch (its settings, default, description and
published value: :func:`switch`), :data:`DEFAULT_PROFILE` its defaults (interface.md, and where
it is silent what the real service publishes: imports answer 201 and acknowledgements 200 with
no body, the user record has the identity service's shape) and :data:`PROFILES` a few named
presets. The store keeps one profile per customer (:mod:`toolkit.sandbox._models.profiles`); the
rules read it where they apply: the token exchange (``tokenLifetimeSeconds``, ``expiresIn``),
the imports (``reimport``, ``codeTypeBody``), the acknowledgements (``ackRepeat``), the export
(``exportMaxEntries``, ``exportMaxWindowDays``) and the user record (``userRecord``) in the
store; the answer of an import (``importAnswer``) or an acknowledgement (``ackAnswer``) and
token faults (``tokenFaults``) in the routes; the rate limit, latency and the shape of error
answers (``rateLimit``, ``retryAfter``, ``rateLimitHeaders``, ``errorBody``, ``latency``) in the
app's middlewares; the shape of entries where interface.md and the published documents differ
(``counts``, ``codeAssigner``, ``digests``) and the published batch release-succeeded route
(``batchAck``) in the store's egress part (the ``published`` preset sets their published
values); the empty values and unknown fields of request bodies (``emptyValues``,
``unknownFields``) where the routes and the seeding hand a body to the store, the bounds of
``unitIncrements`` (``unitBounds``) in the initiative import, and the odd values of
release-pending's extras (``oddExtras``) in the store's egress part.

A nested switch (``tokenFaults``, ``rateLimit``, ``latency``) is replaced whole: its members left
out take their defaults.

>>> validate_profile({"reimport": "conflict"})
{'reimport': 'conflict'}
>>> validate_profile({"reimport": "never"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
toolkit.sandbox._profiles.ProfileError: invalid profile: reimport: Input should be 'upsert' or ...
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ._bodies import whole
from ._faults import Latency, TokenFaults

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
    "describe_switches",
    "merge_profile",
    "published_value",
    "switch",
    "validate_profile",
    "whole",
]


# integers within bounds that also take a whole number written 2.0 (JSON Schema's integer)
Lifetime = Annotated[Annotated[int, Field(ge=1, le=31_536_000)], BeforeValidator(whole)]
Count = Annotated[Annotated[int, Field(ge=1, le=1_000_000)], BeforeValidator(whole)]
Window = Annotated[Annotated[int, Field(ge=1, le=86_400)], BeforeValidator(whole)]
InFlight = Annotated[Annotated[int, Field(ge=1, le=10_000)], BeforeValidator(whole)]
Entries = Annotated[Annotated[int, Field(ge=0, le=1_000_000_000)], BeforeValidator(whole)]


class _Switch(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


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


def switch(default: Any, description: str, *, published: Any = None) -> Any:
    """Declare one switch of :class:`Profile`: its default, description and published value.

    Args:
        default: The sandbox's behaviour without a profile (a model class: its defaults).
        description: One line saying what the switch changes.
        published: What the real service does where its published documents say (see
            docs/sandbox.md, "Open points"); None where they are silent. The ``published``
            preset is every switch's published value; the OpenAPI document shows it as
            ``x-published``.

    Returns:
        The switch's pydantic field.

    >>> Profile.model_fields["expiresIn"].json_schema_extra
    {'x-published': 'double'}
    """
    given = {"default_factory": default} if isinstance(default, type) else {"default": default}
    extra = None if published is None else {"x-published": published}
    return Field(**given, description=description, json_schema_extra=extra)


def published_value(name: str) -> Any:
    """Return what the real service does for a switch, or None where its documents are silent.

    Args:
        name: A switch of :class:`Profile`.

    >>> published_value("counts"), published_value("reimport")
    ('double', None)
    """
    extra = Profile.model_fields[name].json_schema_extra
    return extra.get("x-published") if isinstance(extra, dict) else None


class Profile(_Switch):
    """The one declaration of a sandbox profile's switches.

    Each member is a switch: its JSON name, its type and bounds, its default, its one-line
    description and its published value (:func:`switch`). Everything else derives from it:
    the validation of profiles (:func:`validate_profile`, the administration routes),
    :data:`DEFAULT_PROFILE`, the ``published`` preset, the switches
    :meth:`toolkit.sandbox._admin.Admin.set_profile` takes, the CLI's help
    (:func:`describe_switches`) and the OpenAPI document; docs/sandbox.md's table of switches
    is checked against it by a test. The fault-like switches (``tokenFaults``, ``latency``)
    are kinds of fault declared in :mod:`toolkit.sandbox._faults`.
    """

    tokenLifetimeSeconds: Lifetime = switch(
        86_400, "`expires_in` of new tokens, and their lifetime."
    )
    tokenFaults: TokenFaults = switch(
        TokenFaults, "A fraction of the customer's token requests answered with a fault status."
    )
    rateLimit: RateLimitSetting | None = switch(
        None, "The customer's rate limit on its interface routes; null is none."
    )
    retryAfter: Literal["seconds", "http-date", "absent"] = switch(
        "seconds", "How 429 and 503 answers carry `Retry-After`."
    )
    rateLimitHeaders: Literal["none", "ietf", "x-ratelimit"] = switch(
        "none", "Rate limit headers on every interface answer when a limit is set."
    )
    importAnswer: Literal["201-empty", "201-record", "200-record", "204", "202"] = switch(
        "201-empty",
        "Status and body of the five imports (published: 201, no body).",
        published="201-empty",
    )
    reimport: Literal["upsert", "conflict"] = switch(
        "upsert", "An import of an existing externalId: update it, or 409."
    )
    errorBody: Literal["problem", "message", "text", "empty", "nestjs"] = switch(
        "problem",
        "Body of every 4xx/5xx problem answer on the interface routes.",
        published="nestjs",  # none declared; the service is a NestJS application
    )
    ackRepeat: Literal["200", "409", "422"] = switch(
        "200", "Acknowledging an entry already in the requested state."
    )
    exportMaxEntries: Entries | None = switch(
        None, "An export window holding more entries is refused."
    )
    exportRefusal: Literal[400, 413, 422] = switch(
        400, "Status refusing an export window over `exportMaxEntries`."
    )
    exportMaxWindowDays: Annotated[float, Field(gt=0, le=36_500)] | None = switch(
        None, "An export window longer than this many days is refused (400)."
    )
    latency: Latency = switch(
        Latency, "Delay added to every interface request of the customer, and stalls."
    )
    # where interface.md is silent and the published documents speak (published.md)
    ackAnswer: Literal["200-empty", "200-record"] = switch(
        "200-empty",
        "Answer of the two acknowledgements: 200 with no body (as "
        "published) or with the entry's state after the call.",
        published="200-empty",
    )
    userRecord: Literal["published", "legacy"] = switch(
        "published",
        "Shape of the user record: the identity service's "
        "published user, or `{_id, customerId, timekeeperExternalId, name, email}`.",
        published="published",
    )
    expiresIn: Literal["integer", "double"] = switch(
        "integer",
        "`expires_in` of the token answer: an integer (interface.md) or "
        "a double such as 86400.0 (published).",
        published="double",
    )
    # --- egress: what the published documents say where interface.md differs (issue 25)
    counts: Literal["integer", "double"] = switch(
        "integer",
        "`unitIncrementCount` and `incrementDurationInSeconds` in "
        "entries: whole numbers as JSON integers (interface.md; a stored fraction is rounded "
        "up), or JSON doubles as stored (published), fractions included; under `double` "
        "seeded entries carry some fractions.",
        published="double",
    )
    codeAssigner: Literal["service", "laurel"] = switch(
        "service",
        "`assignedBy` of a code the service assigned: `service` "
        "(interface.md) or `laurel` (published).",
        published="laurel",
    )
    digests: Literal["spec", "published"] = switch(
        "spec",
        "Digests of release-pending: as interface.md, or with the "
        "published extras (initiative `status`, `locale`; client `type`, `parentClientId`; "
        "code type `orderingSequence`, `semanticType` absent where null; `callSign` may be "
        "null).",
        published="published",
    )
    batchAck: bool = switch(
        True, "Serve the published batch release-succeeded route (false: 404).", published=True
    )
    # -- ingress (the published contract) ---------------------------------------------------
    codeRangePost: Literal["replace", "add"] = switch(
        "replace",
        "A code range request replaces the initiative's range, or adds "
        "its ids to it (the published documents do not say which).",
    )
    codeRangeMax: Annotated[int, Field(ge=1, le=1_000_000)] = switch(
        2500, "Most ids one code range request may carry (published: 2500).", published=2500
    )
    codeTypeBody: Literal["spec", "published"] = switch(
        "spec",
        "A code type import body as interface.md (all five fields, `semanticType` null for "
        "another kind) or as published (only `externalId` and `name` required; "
        "`semanticType` may be left out but not null: 422).",
        published="published",
    )
    emptyValues: Literal["refuse", "accept"] = switch(
        "refuse",
        "An empty identifier (an import's `externalId`, `clientExternalId` or "
        "`codeTypeExternalId`, a code range's id, an acknowledgement's `externalId`, a batch "
        "item's `entryId` or `userId`) or an empty release-failed `errors`: refused (422), or "
        "accepted (the published documents bound none of them; interface.md is silent).",
        published="accept",
    )
    unknownFields: Literal["refuse", "ignore"] = switch(
        "refuse",
        "A field an interface request body does not declare (a typo such as "
        "`clientExternalID`): refused (422), or ignored, not stored (the published documents do "
        "not close their bodies; interface.md is silent).",
        published="ignore",
    )
    unitBounds: Literal["sandbox", "none"] = switch(
        "sandbox",
        "An initiative's `unitIncrements`: within the sandbox's bounds, 0.000001 to "
        "1000000000 (422 outside), or any finite number (the published documents bound it not; "
        "an entry on a unit below 0.000001, zero and negative included, counts 0 increments).",
        published="none",
    )
    oddExtras: Literal["none", "allowed", "mistyped"] = switch(
        "none",
        "Odd values in release-pending's fields outside interface.md: none; `allowed`, what the "
        "published documents let through (`releaseCount` a fraction on every second entry: "
        "their `number`, format int64); `mistyped`, also what they do not (with published "
        "digests, a code type's `orderingSequence` a number where they say text).",
        published="allowed",
    )


DEFAULT_PROFILE: dict[str, Any] = Profile().model_dump()
"""Every switch at its default: the sandbox's behaviour without a profile.

>>> DEFAULT_PROFILE["importAnswer"], DEFAULT_PROFILE["ackAnswer"], DEFAULT_PROFILE["rateLimit"]
('201-empty', '200-empty', None)
"""


def describe_switches() -> str:
    """Describe every switch of :class:`Profile`, one line each (the CLI's help shows it).

    Returns:
        Lines ``name = default (published: value): description``; the published value only
        where the published documents state one.

    >>> print(describe_switches().splitlines()[0])
    tokenLifetimeSeconds = 86400: `expires_in` of new tokens, and their lifetime.
    """
    return "\n".join(
        f"{name} = {json.dumps(DEFAULT_PROFILE[name])}"
        + ("" if (value := published_value(name)) is None else f" (published: {json.dumps(value)})")
        + f": {field.description}"
        for name, field in Profile.model_fields.items()
    )


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
    # what the real service does, where its published documents say: from the declaration
    "published": {
        name: value for name in Profile.model_fields if (value := published_value(name)) is not None
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
  ``laurel``, release-pending's digests with their published extras, the batch route, at
  most 2500 ids per code range, the published code type body (a null ``semanticType``
  refused), empty identifiers and an empty ``errors`` accepted, unknown body fields ignored,
  any finite ``unitIncrements``, a fractional ``releaseCount`` on every second pending entry:
  every switch's published value
  (:func:`published_value`).

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
