"""Pydantic models of every body the sandbox reads or writes.

Request models are strict: JSON types are never coerced (``"360"`` is not a number, ``"yes"``
is not a boolean, ``1`` is not a string) and unknown fields are rejected, so a client bug shows
up here rather than at the operator. Response models exist to document ``/openapi.json``.

The field rules of the spec's tables live in the request models (like a pandera model per
table); the referential and state rules live in :mod:`toolkit.sandbox._store` (its parts
are in :mod:`toolkit.sandbox._models`).
"""

from __future__ import annotations

import re
import types
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

__all__ = [
    "DATETIME_PATTERN",
    "FILLED",
    "MAX_DURATION_SECONDS",
    "MAX_UNIT_INCREMENTS",
    "MIN_UNIT_INCREMENTS",
    "AckFailedIn",
    "AckOut",
    "AckSucceededIn",
    "BatchAckIn",
    "BatchAckOut",
    "ClientIn",
    "ClientOut",
    "CodeIn",
    "CodeOut",
    "CodeRangeIn",
    "CodeRangeOut",
    "CodeTypeIn",
    "CodeTypeOut",
    "ExportEntry",
    "FieldError",
    "IdentityOut",
    "InitiativeIn",
    "InitiativeOut",
    "OAuthErrorOut",
    "PendingEntry",
    "Problem",
    "StarItem",
    "StarRequest",
    "StarResponse",
    "StarredPage",
    "TokenIn",
    "TokenOut",
    "UserOut",
    "UserRecordOut",
    "empty_values",
    "unknown_fields",
    "lone_surrogate_path",
    "parse_datetime",
    "whole",
]

MIN_UNIT_INCREMENTS = 1e-6
"""Smallest ``unitIncrements`` the sandbox keeps (seconds)."""
MAX_UNIT_INCREMENTS = 1e9
"""Largest ``unitIncrements`` the sandbox keeps (seconds)."""
MAX_DURATION_SECONDS = 2**31 - 1
"""Largest ``incrementDurationInSeconds`` (about 68 years). With the increment bounds every
``unitIncrementCount`` stays below 2**53, exact as a JSON number in every language."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """Return the dotted path of the first string (value or key) holding a lone surrogate.

    JSON's ``\\ud800`` escape decodes to a code point no UTF-8 text can hold; such a string
    could be neither stored nor sent back, so every body is checked before any rule runs.

    Args:
        value: A decoded JSON value.
        path: The path of ``value`` itself.

    Returns:
        The path (``""`` for the value itself), or ``None`` when every string is clean.

    >>> lone_surrogate_path({"a": ["x", "\\ud800"]})
    'a.1'
    >>> lone_surrogate_path({"a": "fine"}) is None
    True
    """
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _SURROGATE.search(key):
                return path
            found = lone_surrogate_path(item, inner)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


def _refuse_lone_surrogates(data: Any) -> Any:
    found = lone_surrogate_path(data)
    if found is not None:
        raise PydanticCustomError(
            "lone_surrogate",
            "a string holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape), which is "
            "not Unicode text",
            {"path": found},
        )
    return data


# a year from 0001 to 9999: year 0000 names no date
_YEAR = r"(000[1-9]|00[1-9]\d|0[1-9]\d{2}|[1-9]\d{3})"

#: RFC 3339 / ISO 8601 date-time the sandbox accepts: ``YYYY-MM-DD``, ``T``, ``t`` or a space,
#: ``HH:MM[:SS[.f…]]`` with 1 to 9 fraction digits (``.`` or ``,``), and an optional offset
#: ``Z``, ``±HH:MM``, ``±HHMM`` or ``±HH``. Without an offset the time is UTC. A ``+`` sent
#: unencoded in a query string arrives as a space; a space before the offset is read as ``+``.
#: The year runs from 0001 (year 0000 is refused, and the pattern says so in ``/openapi.json``).
DATETIME_PATTERN = (
    r"^" + _YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d"
    r"(:[0-5]\d([.,]\d{1,9})?)?([Zz]|[+ -]([01]\d|2[0-3])(:?[0-5]\d)?)?$"
)
_DATETIME_RE = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<h>\d{2}):(?P<m>\d{2})"
    r"(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"(?P<tz>[Zz]|(?P<sign>[+ -])(?P<oh>\d{2})(?::?(?P<om>\d{2}))?)?$"
)
_DATE_PATTERN = r"^" + _YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"


def parse_datetime(text: str) -> datetime:
    """Parse an RFC 3339 / ISO 8601 date-time of :data:`DATETIME_PATTERN` into UTC.

    A value without an offset is taken as UTC. Fractions beyond microseconds are truncated.

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
    >>> parse_datetime("2025-03-01 10:30:00.123456789+0100").isoformat()
    '2025-03-01T09:30:00.123456+00:00'
    >>> parse_datetime("2025-03-01T10:30:00 01").isoformat()  # "+01" unencoded in a query
    '2025-03-01T09:30:00+00:00'
    """
    match = _DATETIME_RE.match(text) if isinstance(text, str) else None
    if match is None or not re.match(DATETIME_PATTERN, text):
        raise ValueError(f"not an ISO 8601 date-time: {text!r:.80}")
    try:
        day = date.fromisoformat(match["date"])
        fraction = (match["f"] or "").ljust(6, "0")[:6]
        offset = timedelta(0)
        if match["sign"]:
            offset = timedelta(hours=int(match["oh"]), minutes=int(match["om"] or 0))
            if match["sign"] == "-":
                offset = -offset
        value = datetime(
            day.year,
            day.month,
            day.day,
            int(match["h"]),
            int(match["m"]),
            int(match["s"] or 0),
            int(fraction),
            tzinfo=timezone(offset),
        )
        return value.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"no such date-time: {text!r:.80}") from exc


def _check_date(text: str) -> str:
    date.fromisoformat(text)
    return text


def _check_datetime(text: str) -> str:
    parse_datetime(text)
    return text


NonEmpty = Annotated[str, StringConstraints(min_length=1)]
"""A string of at least one character, always (where a document bounds it, or outside them)."""


class _Filled:
    """Marks a value the sandbox refuses empty by default though neither interface.md nor the
    published documents bound it: an identifier ``""`` or a list ``[]``.

    The model takes it empty; the customer's profile (``emptyValues``) decides, where
    :func:`empty_values` finds it. The OpenAPI document shows the default (``minLength`` or
    ``minItems`` 1).
    """

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        schema["minItems" if schema.get("type") == "array" else "minLength"] = 1
        return schema

    def __repr__(self) -> str:
        return "FILLED"


FILLED = _Filled()
"""The marker of :class:`_Filled` (``Annotated[str, FILLED]``, ``Annotated[list[...], FILLED]``)."""
Filled = Annotated[str, FILLED]
"""An identifier refused empty unless the profile's ``emptyValues`` is ``accept``."""


def _marked(annotation: Any) -> bool:
    """Whether a type (or a branch of a union) carries :data:`FILLED`."""
    if FILLED in getattr(annotation, "__metadata__", ()):
        return True
    return get_origin(annotation) in (Union, types.UnionType) and any(
        _marked(branch) for branch in get_args(annotation)
    )


def empty_values(body: BaseModel, at: str = "") -> list[str]:
    """Return the dotted paths of the values of ``body`` marked :data:`FILLED` that are empty.

    Nested bodies (items of a list of models) are searched too.

    Args:
        body: A validated request body.
        at: The path of ``body`` itself (with its trailing dot).

    Returns:
        The paths, in field order; empty when there is none.

    >>> empty_values(CodeRangeIn(codeExternalIds=["L1", ""]))
    ['codeExternalIds.1']
    >>> empty_values(AckFailedIn(errors=[])), empty_values(AckFailedIn(errors=["x"]))
    (['errors'], [])
    """
    found: list[str] = []
    for name, field in type(body).model_fields.items():
        value, path = getattr(body, name), f"{at}{name}"
        if value in ("", []) and (FILLED in field.metadata or _marked(field.annotation)):
            found.append(path)
        if not isinstance(value, list):
            continue
        item = (get_args(field.annotation) or (None,))[0]
        for index, element in enumerate(value):
            if element == "" and _marked(item):
                found.append(f"{path}.{index}")
            elif isinstance(element, BaseModel):
                found += empty_values(element, f"{path}.{index}.")
    return found


def unknown_fields(body: BaseModel, at: str = "") -> list[str]:
    """Return the dotted paths of the fields of ``body`` its model does not declare.

    Nested bodies (items of a list of models) are searched too.

    Args:
        body: A validated request body.
        at: The path of ``body`` itself (with its trailing dot).

    Returns:
        The paths, in the order sent; empty when there is none.

    >>> unknown_fields(BatchAckIn(request=[{"entryId": "e", "userId": "u", "entryID": "e"}]))
    ['request.0.entryID']
    """
    found = [f"{at}{name}" for name in body.model_extra or {}]
    for name in type(body).model_fields:
        if isinstance(value := getattr(body, name), list):
            for index, element in enumerate(value):
                if isinstance(element, BaseModel):
                    found += unknown_fields(element, f"{at}{name}.{index}.")
    return found


ObjectId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{24}$")]
"""An ``_id`` of the service (format ``objectid``: 24 lower-case hexadecimal digits)."""
DateText = Annotated[str, StringConstraints(pattern=_DATE_PATTERN), AfterValidator(_check_date)]
DateTimeText = Annotated[
    str, StringConstraints(pattern=DATETIME_PATTERN), AfterValidator(_check_datetime)
]
Rate = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


def whole(value: Any) -> Any:
    """``2.0`` as ``2`` (JSON Schema's integer); anything else as given, for the strict check.

    >>> whole(2.0), whole(2.5), whole("2")
    (2, 2.5, '2')
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


SemanticType = Literal["action", "activity", "location", "phase", "task"]
Locale = Literal[
    "da-DK",
    "de-DE",
    "en-CA",
    "en-GB",
    "en-US",
    "es-ES",
    "es-MX",
    "fi-FI",
    "fr-CA",
    "fr-FR",
    "is-IS",
    "it-IT",
    "ko-KR",
    "nl-NL",
    "no-NO",
    "pt-PT",
    "sv-SE",
]
"""The 17 BCP-47 tags an initiative's ``locale`` may be (published)."""


def _never_null_schema(schema: dict[str, Any]) -> None:
    """The JSON schema of a field that may be left out but is never null: its non-null form."""
    branches = [b for b in schema.pop("anyOf", []) if b.get("type") != "null"]
    if branches:
        schema.update(branches[0])
    schema.pop("default", None)


def _not_null(value: Any) -> Any:
    """An optional field the service publishes without ``nullable``: absent, never null."""
    if value is None:
        raise PydanticCustomError("not_null", "may be left out, but not null")
    return value


class RequestBody(BaseModel):
    """Base of request bodies: strict JSON types, unknown fields rejected, Unicode text only."""

    model_config = ConfigDict(strict=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _unicode_only(cls, data: Any) -> Any:
        return _refuse_lone_surrogates(data)


def _closed(schema: dict[str, Any]) -> None:
    """The document shows the default profile: an unknown field is refused."""
    schema["additionalProperties"] = False


class _Interface(RequestBody):
    """Base of the interface's request bodies: an unknown field is kept aside (``model_extra``)
    for the customer's profile (``unknownFields``) to refuse, as by default, or drop; the
    published documents do not close their bodies."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_closed)


class ResponseBody(BaseModel):
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


class TokenOut(ResponseBody):
    """Token response of the spec."""

    access_token: str
    expires_in: int | float = Field(
        description="Lifetime in seconds (86400 by default; 86400.0 when the profile's "
        "`expiresIn` is `double`)."
    )
    token_type: Literal["Bearer"]


class OAuthErrorOut(ResponseBody):
    """RFC 6749 section 5.2 error body of the token endpoint."""

    error: Literal["invalid_request", "invalid_client", "unsupported_grant_type"]
    error_description: str


# --- errors -----------------------------------------------------------------------------------


class FieldError(ResponseBody):
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


class ClientIn(_Interface):
    """Client import payload (``type``, ``parentClientId``, ``parentClientExternalId``:
    optional, published beyond the spec).

    The parent client is named by its ``_id`` (``parentClientId``, the time document's
    field; stored as given, the documents do not say it must exist) or by its ``externalId``
    (``parentClientExternalId``, the ingestion document's field; it must name a client of the
    customer, whose ``_id`` is then stored as ``parentClientId``). The sandbox takes either
    on every base.
    """

    externalId: Filled
    name: str
    callSign: str
    description: str
    type: Literal["client", "parent"] | None = Field(
        None,
        description="Optional (published): `client` or `parent`; not null.",
        json_schema_extra=_never_null_schema,
    )
    parentClientId: ObjectId | None = Field(
        None, description="Optional (published): the parent client's `_id`, or null."
    )
    parentClientExternalId: str | None = Field(
        None,
        description="Optional (published by the ingestion service): the parent client's "
        "`externalId`, or null; it must name a client, stored as the `parentClientId`.",
    )

    _never_null = field_validator("type", mode="before")(_not_null)


class InitiativeIn(_Interface):
    """Initiative (matter or project) import payload."""

    billingType: Literal["billable", "non-billable"]
    externalId: Filled
    name: str
    description: str
    callSign: str
    clientExternalId: Filled
    unitIncrements: Annotated[float, Field(allow_inf_nan=False)] = Field(
        description="Smallest billable unit in seconds; a JSON number from 0.000001 to "
        "1000000000 (the sandbox's bounds, unless the profile's `unitBounds` is `none`; "
        "integer or fraction, returned as sent).",
        json_schema_extra={"minimum": MIN_UNIT_INCREMENTS, "maximum": MAX_UNIT_INCREMENTS},
    )
    status: Literal["active", "inactive"]
    externalGroupIds: list[str] | None = Field(
        None, description="Optional (published): external group ids with access, or null."
    )
    locale: Locale | None = Field(
        None, description="Optional (published): one of 17 BCP-47 tags, or null."
    )
    allowFrom: DateText | None = Field(
        None, description="Optional (published): first date of use (YYYY-MM-DD), or null."
    )
    allowTo: DateText | None = Field(
        None, description="Optional (published): last date of use (YYYY-MM-DD), or null."
    )


def _spec_required(schema: dict[str, Any]) -> None:
    """The document shows interface.md's code type body: all five fields required."""
    schema["required"] = [*schema.get("required", []), *CODE_TYPE_SPEC_FIELDS]
    _closed(schema)


CODE_TYPE_SPEC_FIELDS = ("semanticType", "customerDefaultable", "userDefaultable")
"""Required by interface.md, optional in the published import body (profile ``codeTypeBody``)."""


class CodeTypeIn(_Interface):
    """Code type import payload.

    interface.md requires all five fields (``semanticType`` null for another kind); the
    published body requires only ``externalId`` and ``name``, and its ``semanticType`` is not
    nullable. The model lets the three fields of :data:`CODE_TYPE_SPEC_FIELDS` be left out and
    the store applies the customer's profile (``codeTypeBody``); the document shows
    interface.md's form.
    """

    model_config = ConfigDict(extra="allow", json_schema_extra=_spec_required)

    externalId: Filled
    name: str
    semanticType: SemanticType | None = None
    customerDefaultable: bool = Field(False, json_schema_extra=_never_null_schema)
    userDefaultable: bool = Field(False, json_schema_extra=_never_null_schema)
    orderingSequence: str | None = Field(
        None,
        description="Optional (published): sort key in the product; not null.",
        json_schema_extra=_never_null_schema,
    )

    _never_null = field_validator("orderingSequence", mode="before")(_not_null)


class CodeIn(_Interface):
    """Code import payload."""

    externalId: Filled
    name: str
    description: str
    codeTypeExternalId: Filled
    orderingSequence: str | None = Field(
        None,
        description="Optional (published): sort key in the product; not null.",
        json_schema_extra=_never_null_schema,
    )
    group: str | None = Field(
        None,
        description="Optional (published): a group; not null.",
        json_schema_extra=_never_null_schema,
    )
    userGroupExternalIds: list[str] | None = Field(
        None,
        description="Optional (published): user group external ids; not null.",
        json_schema_extra=_never_null_schema,
    )
    isDisabled: bool | None = Field(
        None,
        description="Optional (published): the code is disabled; not null.",
        json_schema_extra=_never_null_schema,
    )

    _never_null = field_validator(
        "orderingSequence", "group", "userGroupExternalIds", "isDisabled", mode="before"
    )(_not_null)


class CodeRangeIn(_Interface):
    """Code range payload: the permitted codes of one initiative, 1 to ``codeRangeMax`` ids
    (2500 by default, as published); it replaces the previous range, or adds to it under a
    profile's ``codeRangePost: add``."""

    codeExternalIds: Annotated[list[Filled], Field(min_length=1)]


class _Stored(ResponseBody):
    id: str = Field(alias="_id")
    createdAt: str
    updatedAt: str


class ClientOut(_Stored):
    """A stored client."""

    externalId: str
    name: str
    callSign: str
    description: str
    type: str | None = None
    parentClientId: str | None = None


class InitiativeOut(_Stored):
    """A stored initiative (product-created ones have null externalId and client)."""

    source: Literal["pms", "product"]
    billingType: str | None
    externalId: str | None
    name: str
    description: str | None
    callSign: str | None
    clientExternalId: str | None
    unitIncrements: int | float | None
    status: str
    externalGroupIds: list[str] | None = None
    locale: str | None = None
    allowFrom: str | None = None
    allowTo: str | None = None


class CodeTypeOut(_Stored):
    """A stored code type."""

    externalId: str
    name: str
    semanticType: SemanticType | None
    customerDefaultable: bool
    userDefaultable: bool
    orderingSequence: str | None = None


class CodeOut(_Stored):
    """A stored code."""

    externalId: str
    name: str
    description: str
    codeTypeExternalId: str
    orderingSequence: str | None = None
    group: str | None = None
    userGroupExternalIds: list[str] | None = None
    isDisabled: bool | None = None


class CodeRangeOut(ResponseBody):
    """The stored code range of one initiative."""

    initiativeExternalId: str
    codeExternalIds: list[str]
    updatedAt: str


# --- egress -----------------------------------------------------------------------------------


Count = int | float
"""``unitIncrementCount`` and ``incrementDurationInSeconds``: integers (interface.md), or
doubles (published; profile switch ``counts``)."""


class ClientRef(ResponseBody):
    """Client as nested in entries (``type`` and ``parentClientId`` with published digests)."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    description: str
    callSign: str
    type: Literal["client", "parent"] | None = None
    parentClientId: str | None = None


class CodeTypeRef(ResponseBody):
    """Code type as nested in entry codes."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    semanticType: SemanticType | None = Field(
        None, description="Absent where null with published digests."
    )
    orderingSequence: str | int | None = Field(
        None,
        description="With published digests (a number under the profile's `oddExtras` `mistyped`).",
    )


class CodeRef(ResponseBody):
    """Code as nested in entries."""

    id: str = Field(alias="_id")
    externalId: str
    name: str
    description: str
    type: CodeTypeRef


class AssignedCode(ResponseBody):
    """Element of ``codes`` in the export form."""

    code: CodeRef
    assignedBy: Literal["user", "service", "laurel"] = Field(
        description="`service` or `laurel` (profile switch `codeAssigner`) for the service."
    )


class ExportInitiative(ResponseBody):
    """Initiative as nested in the export form (an initiative made in the product, a user
    initiative, has neither ``externalId`` nor ``client``)."""

    client: ClientRef | None = None
    externalId: str | None = None
    name: str


class ExportEntry(ResponseBody):
    """Time entry, export form (v2 export)."""

    id: str = Field(alias="_id")
    codes: list[AssignedCode]
    createdAt: str
    customerId: str
    externalId: str | None = Field(
        description="Billing-system id stored by release-succeeded; null until then."
    )
    incrementDurationInSeconds: Count
    initiative: ExportInitiative
    summary: str
    unitIncrementCount: Count
    updatedAt: str
    userId: str
    workDate: str


class PropsInitiative(ResponseBody):
    """Initiative inside ``initiativeProps``."""

    type: Literal["pms"]
    id: str = Field(alias="_id")
    billingType: str
    callSign: str | None
    unitIncrements: int | float
    externalId: str
    name: str
    description: str
    client: ClientRef
    status: Literal["active", "inactive"] | None = Field(
        None, description="With published digests."
    )
    locale: str | None = Field(None, description="With published digests.")


class UserInitiative(ResponseBody):
    """An initiative made in the product (``initiativeProps.type`` ``user``): as published,
    with its ``billingType`` and ``unitIncrements``."""

    type: Literal["user"]
    id: str = Field(alias="_id")
    billingType: Literal["billable", "non-billable"]
    unitIncrements: int | float
    name: str


class InitiativeProps(ResponseBody):
    """The user's view of an initiative (detailed form)."""

    type: Literal["pms", "user"]
    colorHex: str
    tags: list[str]
    nickname: str
    initiative: PropsInitiative | UserInitiative


class PendingEntry(ResponseBody):
    """Time entry, detailed form (release-pending list)."""

    id: str = Field(alias="_id")
    customerId: str
    userId: str
    workDate: str
    summary: str
    unitIncrementCount: Count
    incrementDurationInSeconds: Count
    initiativeProps: InitiativeProps
    externalId: str | None
    codes: list[CodeRef]
    notes: str | None = Field(description="Published extra; the sandbox keeps none.")
    releaseCount: int | float | None = Field(
        description="Published extra: times released (a fraction on every second entry under "
        "the profile's `oddExtras`)."
    )
    lastSyncedAt: str | None = Field(description="Published extra; null in the sandbox.")
    firstReleaseAttemptedAt: str | None = Field(description="Published extra: release time.")
    isShared: bool | None = Field(description="Published extra; false in the sandbox.")
    sharedFrom: dict[str, Any] | None = Field(description="Published extra; null here.")


class AckSucceededIn(_Interface):
    """release-succeeded payload (``externalId`` optional, as published)."""

    # optional means left out: a null is refused, and the schema does not offer it
    externalId: Filled | SkipJsonSchema[None] = None
    reReleaseFailedMessages: list[str] | SkipJsonSchema[None] = None

    @field_validator("externalId", "reReleaseFailedMessages", mode="before")
    @classmethod
    def _absent_not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("may be left out, but not null")
        return value


class BatchAckItem(AckSucceededIn):
    """One acknowledgement of the batch release-succeeded route."""

    entryId: Filled
    userId: Filled


class BatchAckIn(_Interface):
    """Batch release-succeeded payload: 1 to 20 acknowledgements."""

    request: Annotated[list[BatchAckItem], Field(min_length=1, max_length=20)]


class BatchAckItemOut(ResponseBody):
    """Per-item result of the batch route."""

    entryId: str
    status: str = Field(description="An HTTP status name: `OK`, `NOT_FOUND`, `CONFLICT`...")
    errorCode: int | None = Field(
        default=None,
        description="Only when status is not OK: a number, as published (the sandbox gives "
        "the status's number: 404, 409, 422).",
    )
    errorMessage: str | None = Field(default=None, description="Only when status is not OK.")


class BatchAckOut(ResponseBody):
    """207 body of the batch route: one result per item, in order."""

    response: list[BatchAckItemOut]


class AckFailedIn(_Interface):
    """release-failed payload: reasons, none empty (as published); at least one unless the
    profile's ``emptyValues`` is ``accept`` (the documents set no bound)."""

    errors: Annotated[list[NonEmpty], FILLED]


class AckOut(ResponseBody):
    """Acknowledgement result: the entry's state after the call."""

    id: str = Field(alias="_id")
    userId: str
    state: Literal["succeeded", "failed"]
    externalId: str | None
    errors: list[str] | None
    updatedAt: str


class UserOut(ResponseBody):
    """User record (the administration routes' shape; the interface's as profile ``legacy``)."""

    id: str = Field(alias="_id")
    customerId: str
    timekeeperExternalId: str
    name: str
    email: str


class IdentityOut(ResponseBody):
    """One external identity of a user; the timekeeper id is ``external-billing-system``."""

    type: str
    value: str
    customerId: str | None = None


class UserRecordOut(ResponseBody):
    """User record as the identity service publishes it (the profile's default ``published``)."""

    id: str = Field(alias="_id")
    createdAt: str
    updatedAt: str
    email: str
    firstName: str
    lastName: str
    nickname: str
    jobTitle: str
    status: Literal["active", "adminDisabled", "firmDisabled"] | None
    identities: list[IdentityOut]
    roles: list[dict[str, Any]]
    delegators: list[dict[str, Any]]
    delegates: list[dict[str, Any]]
    customer: dict[str, Any]


# --- starring ---------------------------------------------------------------------------------


class StarRequest(RequestBody):
    """Starred-initiative request (star and unstar)."""

    timekeeperExternalId: NonEmpty
    initiativeExternalIds: Annotated[list[str], Field(min_length=1, max_length=100)]


class StarItem(ResponseBody):
    """Per-item result inside the 207 response."""

    initiativeExternalId: str
    status: Literal[200, 403, 404, 422, 500]
    errorCode: Literal[20080, 20081, 20083] | None = Field(
        default=None, description="Only when status is not 200 and the failure has a code."
    )
    errorMessage: str | None = Field(default=None, description="Only beside errorCode.")


class StarResponse(ResponseBody):
    """207 body of star and unstar."""

    response: list[StarItem]


class StarredPage(ResponseBody):
    """Starred-initiative list response."""

    initiativeExternalIds: list[str]
    nextCursor: str | None
