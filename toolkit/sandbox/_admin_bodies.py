"""Pydantic models of the bodies of the sandbox's own administration routes (``/sandbox/v1``).

The interface's bodies are in :mod:`toolkit.sandbox._bodies`; these are the sandbox's own:
customers, users, walls, entries made "in the product", their release, faults and counters.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._bodies import (
    MAX_DURATION_SECONDS,
    Count,
    DateText,
    DateTimeText,
    NonEmpty,
    RequestBody,
    ResponseBody,
)
from ._faults import FaultSettings

__all__ = [
    "CustomerIn",
    "CustomerOut",
    "EntryAdminOut",
    "EntryCodeIn",
    "EntryCodeOut",
    "EntryIn",
    "FaultsIn",
    "FaultsOut",
    "ProductInitiativeIn",
    "ProductInitiativeOut",
    "ReleaseIn",
    "StatsOut",
    "UserIn",
    "WallsIn",
    "WallsOut",
]


class CustomerIn(RequestBody):
    """New customer."""

    name: str | None = None


class CustomerOut(ResponseBody):
    """A new customer and its API credentials (the secret is shown only here)."""

    customerId: str
    clientId: str
    clientSecret: str
    audience: str


class UserIn(RequestBody):
    """New user."""

    timekeeperExternalId: NonEmpty
    name: str
    email: str


class WallsIn(RequestBody):
    """The initiatives (by externalId) the user has no access to; replaces the previous set."""

    initiativeExternalIds: list[NonEmpty]


class WallsOut(ResponseBody):
    """The user's walls after the call."""

    userId: str
    initiativeExternalIds: list[str]


class EntryCodeIn(RequestBody):
    """A code on a new entry."""

    codeExternalId: NonEmpty
    assignedBy: Literal["user", "service"]


class EntryIn(RequestBody):
    """New time entry, created in the editable state."""

    initiativeExternalId: NonEmpty
    workDate: DateText
    summary: str
    incrementDurationInSeconds: Annotated[
        int | float, Field(ge=0, le=MAX_DURATION_SECONDS, allow_inf_nan=False)
    ]
    unitIncrementCount: (
        Annotated[int | float, Field(ge=0, le=MAX_DURATION_SECONDS, allow_inf_nan=False)] | None
    ) = Field(
        None,
        description="Stored as given (fractions too); default: from the duration and "
        "the initiative's unitIncrements.",
    )
    codes: list[EntryCodeIn] = Field(default_factory=list)


class ReleaseIn(RequestBody):
    """The user's release of an entry, at ``at`` (ISO 8601, UTC when naive; default now)."""

    at: DateTimeText | None = None


class EntryCodeOut(ResponseBody):
    """A code on an entry (administration view)."""

    codeExternalId: str
    assignedBy: str


class EntryAdminOut(ResponseBody):
    """An entry as the administration routes show it."""

    id: str = Field(alias="_id")
    userId: str
    initiativeExternalId: str | None
    workDate: str
    summary: str
    incrementDurationInSeconds: Count
    unitIncrementCount: Count | None = None
    codes: list[EntryCodeOut]
    state: Literal["editable", "pending", "succeeded", "failed"]
    releasedAt: str | None
    externalId: str | None
    errors: list[str] | None
    createdAt: str
    updatedAt: str


class ProductInitiativeIn(RequestBody):
    """An initiative created in the product (no externalId), pinned for the user."""

    name: str


class ProductInitiativeOut(ResponseBody):
    """The created product initiative."""

    id: str = Field(alias="_id")
    name: str
    userId: str
    pinned: bool


class FaultsIn(FaultSettings):
    """Fault injection settings for interface routes (all off by default)."""


class FaultsOut(FaultSettings):
    """Fault settings and counters."""

    counters: dict[str, Any]


class StatsOut(ResponseBody):
    """Interface request counts since start or the last reset."""

    total: int
    routes: dict[str, Any] = Field(
        description='Keyed "METHOD /path/template": {"count": n, "statuses": {"200": n}}.'
    )
