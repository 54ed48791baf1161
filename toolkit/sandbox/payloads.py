"""Pydantic models of every body the sandbox reads or writes.

Request models are strict: JSON types are never coerced (``"360"`` is not a number, ``"yes"``
is not a boolean, ``1`` is not a string) and unknown fields are rejected, so a client bug shows
up here rather than at the operator. Response models exist to document ``/openapi.json``.

The field rules of the spec's tables live in the request models (like a pandera model per
table); the referential and state rules live in :mod:`toolkit.sandbox.store` (its parts
are in :mod:`toolkit.sandbox.models`).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

__all__ = [
    "DATETIME_PATTERN",
    "AckFailedIn",
    "AckOut",
    "AckSucceededIn",
    "ClientIn",
    "ClientOut",
    "CodeIn",
    "CodeOut",
    "CodeRangeIn",
    "CodeRangeOut",
    "CodeTypeIn",
    "CodeTypeOut",
    "CustomerIn",
    "CustomerOut",
    "EntryAdminOut",
    "EntryIn",
    "ExportEntry",
    "FaultsIn",
    "FaultsOut",
    "FieldError",
    "InitiativeIn",
    "InitiativeOut",
    "OAuthErrorOut",
    "PendingEntry",
    "Problem",
    "ProductInitiativeIn",
    "ProductInitiativeOut",
    "ReleaseIn",
    "StarItem",
    "StarRequest",
    "StarResponse",
    "StarredPage",
    "StatsOut",
    "TokenIn",
    "TokenOut",
    "UserIn",
    "UserOut",
    "WallsIn",
    "WallsOut",
    "parse_datetime",
]

#: ISO 8601 date-time the sandbox accepts: ``YYYY-MM-DDTHH:MM[:SS[.fff…]]`` and an optional
#: ``Z`` or ``±HH:MM`` offset. Without an offset the time is UTC.
DATETIME_PATTERN = (
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d"
    r"(:[0-5]\d(\.\d{1,6})?)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)?$"
)
_DATETIME_RE = re.compile(DATETIME_PATTERN)
_DATE_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"


def parse_datetime(text: str) -> datetime:
    """Parse an ISO 8601 date-time of :data:`DATETIME_PATTERN` into an aware UTC datetime.

    A value without an offset is taken as UTC.

    Args:
        text: The value, for example ``2025-03-01T09:30:00Z``.

    Returns:
        The instant, timezone-aware, in UTC.

    Raises:
        ValueError: The text is not such a date-time, or names no real instant.

    >>> parse_datetime("2025-03-01T10:30:00+01:00").isoformat()
    '2025-03-01T09:30:00+00:00'
    >>> parse_datetime("2025-03-01T09:30").isoformat()
    '2025-03-01T09:30:00+00:00'
    """
    if not isinstance(text, str) or not _DATETIME_RE.match(text):
        raise ValueError(f"not an ISO 8601 date-time: {text!r}")
    try:
        value = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"date-time out of range: {text!r}") from exc


def _check_date(text: str) -> str:
    date.fromisoformat(text)
    return text


def _check_datetime(text: str) -> str:
    parse_datetime(text)
    return text


NonEmpty = Annotated[str, StringConstraints(min_length=1)]
"""A string of at least one character (identifiers: an empty ``externalId`` is rejected)."""
DateText = Annotated[str, StringConstraints(pattern=_DATE_PATTERN), AfterValidator(_check_date)]
DateTimeText = Annotated[
    str, StringConstraints(pattern=DATETIME_PATTERN), AfterValidator(_check_datetime)
]
Rate = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
SemanticType = Literal["action", "activity", "location", "phase", "task"]


class _In(BaseModel):
    """Base of request bodies: strict JSON types, unknown fields rejected."""

    model_config = ConfigDict(strict=True, extra="forbid")


class _Out(BaseModel):
    """Base of response bodies (documentation only)."""

    model_config = ConfigDict(populate_by_name=True)


# --- identity ---------------------------------------------------------------------------------


class TokenIn(BaseModel):
    """Token request of the spec (unknown fields are ignored, as RFC 6749 requires)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    audience: str = Field(description="Must equal the sandbox's audience.")
    grant_type: str = Field(description="Only `client_credentials` is supported.")
    client_id: str
    client_secret: str


class TokenOut(_Out):
    """Token response of the spec."""

    access_token: str
    expires_in: int = Field(description="Lifetime in seconds (86400 by default).")
    token_type: Literal["Bearer"]


class OAuthErrorOut(_Out):
    """RFC 6749 section 5.2 error body of the token endpoint."""

    error: Literal["invalid_request", "invalid_client", "unsupported_grant_type"]
    error_description: str


# --- errors -----------------------------------------------------------------------------------


class FieldError(_Out):
    """One invalid field or unknown reference inside a problem body."""

    in_: str = Field(alias="in", description="body, query or path")
    field: str = Field(description="Dotted path of the field inside `in`.")
    detail: str


class Problem(BaseModel):
    """RFC 9457 problem body (``application/problem+json``) of every whole-request failure."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[FieldError] | None = Field(
        default=None, description="Every invalid field, or every unknown referenced id."
    )
    unknownIds: list[str] | None = Field(
        default=None, description="Referenced externalIds that do not exist."
    )


# --- ingress ----------------------------------------------------------------------------------


class ClientIn(_In):
    """Client import payload."""

    externalId: NonEmpty
    name: str
    callSign: str
    description: str


class InitiativeIn(_In):
    """Initiative (matter or project) import payload."""

    billingType: Literal["billable", "non-billable"]
    externalId: NonEmpty
    name: str
    description: str
    callSign: str
    clientExternalId: NonEmpty
    unitIncrements: Annotated[float, Field(gt=0, allow_inf_nan=False)] = Field(
        description="Smallest billable unit in seconds; a positive JSON number."
    )
    status: Literal["active", "inactive"]


class CodeTypeIn(_In):
    """Code type import payload."""

    externalId: NonEmpty
    name: str
    semanticType: SemanticType | None
    customerDefaultable: bool
    userDefaultable: bool


class CodeIn(_In):
    """Code import payload."""

    externalId: NonEmpty
    name: str
    description: str
    codeTypeExternalId: NonEmpty


class CodeRangeIn(_In):
    """Code range payload: the permitted codes of one initiative (replaces the previous range;
    an empty list removes the restriction)."""

    codeExternalIds: list[NonEmpty]


class _Stored(_Out):
    id: str = Field(alias="_id")
    createdAt: str
    updatedAt: str


class ClientOut(_Stored):
    """A stored client."""

    externalId: str
    name: str
    callSign: str
    description: str


class InitiativeOut(_Stored):
    """A stored initiative (product-created ones have null externalId and client)."""

    source: Literal["pms", "product"]
    billingType: str | None
    externalId: str | None
    name: str
    description: str | None
    callSign: str | None
    clientExternalId: str | None
    unitIncrements: float | None
    status: str


class CodeTypeOut(_Stored):
    """A stored code type."""

    externalId: str
    name: str
    semanticType: SemanticType | None
    customerDefaultable: bool
    userDefaultable: bool


class CodeOut(_Stored):
    """A stored code."""

    externalId: str
    name: str
    description: str
    codeTypeExternalId: str


class CodeRangeOut(_Out):
    """The stored code range of one initiative."""

    initiativeExternalId: str
    codeExternalIds: list[str]
    updatedAt: str


# --- egress -----------------------------------------------------------------------------------


class ClientRef(_Out):
    """Client as nested in entries."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    description: str
    callSign: str


class CodeTypeRef(_Out):
    """Code type as nested in entry codes."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    semanticType: SemanticType | None


class CodeRef(_Out):
    """Code as nested in entries."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    description: str
    type: CodeTypeRef


class AssignedCode(_Out):
    """Element of ``codes`` in the export form."""

    code: CodeRef
    assignedBy: Literal["user", "service"]


class ExportInitiative(_Out):
    """Initiative as nested in the export form."""

    client: ClientRef
    externalId: str
    name: str


class ExportEntry(_Out):
    """Time entry, export form (v2 export)."""

    id: str = Field(alias="_id")
    codes: list[AssignedCode]
    createdAt: str
    customerId: str
    externalId: str | None = Field(
        description="Billing-system id stored by release-succeeded; null until then."
    )
    incrementDurationInSeconds: int
    initiative: ExportInitiative
    summary: str
    unitIncrementCount: int
    updatedAt: str
    userId: str
    workDate: str


class PropsInitiative(_Out):
    """Initiative inside ``initiativeProps``."""

    type: Literal["pms"]
    id: str = Field(alias="_id")
    billingType: str
    callSign: str
    unitIncrements: float
    externalId: str
    name: str
    description: str
    client: ClientRef


class InitiativeProps(_Out):
    """The user's view of an initiative (detailed form)."""

    type: Literal["pms"]
    colorHex: str
    tags: list[str]
    nickname: str
    initiative: PropsInitiative


class PendingEntry(_Out):
    """Time entry, detailed form (release-pending list)."""

    id: str = Field(alias="_id")
    customerId: str
    userId: str
    workDate: str
    summary: str
    unitIncrementCount: int
    incrementDurationInSeconds: int
    initiativeProps: InitiativeProps
    externalId: str | None
    codes: list[CodeRef]


class AckSucceededIn(_In):
    """release-succeeded payload."""

    externalId: NonEmpty


class AckFailedIn(_In):
    """release-failed payload."""

    errors: Annotated[list[str], Field(min_length=1)]


class AckOut(_Out):
    """Acknowledgement result: the entry's state after the call."""

    id: str = Field(alias="_id")
    userId: str
    state: Literal["succeeded", "failed"]
    externalId: str | None
    errors: list[str] | None
    updatedAt: str


class UserOut(_Out):
    """User record."""

    id: str = Field(alias="_id")
    customerId: str
    timekeeperExternalId: str
    name: str
    email: str


# --- starring ---------------------------------------------------------------------------------


class StarRequest(_In):
    """Starred-initiative request (star and unstar)."""

    timekeeperExternalId: NonEmpty
    initiativeExternalIds: Annotated[list[str], Field(min_length=1, max_length=100)]


class StarItem(_Out):
    """Per-item result inside the 207 response."""

    initiativeExternalId: str
    status: Literal[200, 403, 404, 422, 500]
    errorCode: Literal[20080, 20081, 20083] | None = Field(
        default=None, description="Only when status is not 200 and the failure has a code."
    )
    errorMessage: str | None = Field(default=None, description="Only beside errorCode.")


class StarResponse(_Out):
    """207 body of star and unstar."""

    response: list[StarItem]


class StarredPage(_Out):
    """Starred-initiative list response."""

    initiativeExternalIds: list[str]
    nextCursor: str | None


# --- administration ---------------------------------------------------------------------------


class CustomerIn(_In):
    """New customer."""

    name: str | None = None


class CustomerOut(_Out):
    """A new customer and its API credentials (the secret is shown only here)."""

    customerId: str
    clientId: str
    clientSecret: str
    audience: str


class UserIn(_In):
    """New user."""

    timekeeperExternalId: NonEmpty
    name: str
    email: str


class WallsIn(_In):
    """The initiatives (by externalId) the user has no access to; replaces the previous set."""

    initiativeExternalIds: list[NonEmpty]


class WallsOut(_Out):
    """The user's walls after the call."""

    userId: str
    initiativeExternalIds: list[str]


class EntryCodeIn(_In):
    """A code on a new entry."""

    codeExternalId: NonEmpty
    assignedBy: Literal["user", "service"]


class EntryIn(_In):
    """New time entry, created in the editable state."""

    initiativeExternalId: NonEmpty
    workDate: DateText
    summary: str
    incrementDurationInSeconds: Annotated[int, Field(ge=0)]
    codes: list[EntryCodeIn] = Field(default_factory=list)


class ReleaseIn(_In):
    """The user's release of an entry, at ``at`` (ISO 8601, UTC when naive; default now)."""

    at: DateTimeText | None = None


class EntryCodeOut(_Out):
    """A code on an entry (administration view)."""

    codeExternalId: str
    assignedBy: str


class EntryAdminOut(_Out):
    """An entry as the administration routes show it."""

    id: str = Field(alias="_id")
    userId: str
    initiativeExternalId: str | None
    workDate: str
    summary: str
    incrementDurationInSeconds: int
    codes: list[EntryCodeOut]
    state: Literal["editable", "pending", "succeeded", "failed"]
    releasedAt: str | None
    externalId: str | None
    errors: list[str] | None
    createdAt: str
    updatedAt: str


class ProductInitiativeIn(_In):
    """An initiative created in the product (no externalId), pinned for the user."""

    name: str


class ProductInitiativeOut(_Out):
    """The created product initiative."""

    id: str = Field(alias="_id")
    name: str
    userId: str
    pinned: bool


class FaultsIn(_In):
    """Fault injection settings for interface routes (all off by default)."""

    rate: Rate = 0.0
    statuses: Annotated[list[Literal[429, 500, 503]], Field(min_length=1)] = Field(
        default_factory=lambda: [503]
    )
    retryAfterSeconds: Annotated[int, Field(ge=0, le=3600)] = 1
    latencyMs: Annotated[int, Field(ge=0, le=60_000)] = 0
    itemErrorRate: Rate = 0.0
    seed: int | None = None


class FaultsOut(_Out):
    """Fault settings and counters."""

    rate: float
    statuses: list[int]
    retryAfterSeconds: int
    latencyMs: int
    itemErrorRate: float
    seed: int | None
    counters: dict[str, Any]


class StatsOut(_Out):
    """Interface request counts since start or the last reset."""

    total: int
    routes: dict[str, Any] = Field(
        description='Keyed "METHOD /path/template": {"count": n, "statuses": {"200": n}}.'
    )
