"""Routes of starring (public): star, unstar and the starred pages.

Star and unstar answer 207 with one result per distinct id; fault injection may fail single
items (``item_fault``). The rules are the store's (:mod:`toolkit.sandbox._models.starring`).
"""

import re
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Query, params
from pydantic import BeforeValidator

from .._bodies import StarredPage, StarRequest, StarResponse
from .._faults import Faults
from .._store import Store
from .core import AUTH, FAULTS, problems

__all__ = ["LIMIT_MAX", "plain_digits", "router"]

LIMIT_MAX = 2500
"""The largest starred ``limit`` (the spec's bound; the smallest is 1), stated in the schema as
``maximum``."""


def plain_digits(value: object) -> object:
    """Let an integer written in plain digits through, as text for pydantic to read; refuse
    any other text (``5.0``, ``+5``, `` 5``, ``05``, ``1e3``) rather than coerce it.

    Args:
        value: The query parameter as sent.

    Returns:
        The value.

    Raises:
        ValueError: Text that is not plain digits without a leading zero.

    >>> plain_digits("25")
    '25'
    >>> plain_digits("5.0")
    Traceback (most recent call last):
    ...
    ValueError: an integer from 1 to 2500 in plain digits
    """
    if isinstance(value, str) and not re.fullmatch(r"[1-9][0-9]{0,8}", value):
        raise ValueError(f"an integer from 1 to {LIMIT_MAX} in plain digits")
    return value


_PROPS = "/api/v1/public/customers/{customerId:seg}/initiative-props"


def router(
    store: Store, faults: Faults, *, dependencies: Sequence[params.Depends] = ()
) -> APIRouter:
    """Return the starring router.

    Args:
        store: State and rules.
        faults: Fault injection (its ``item_fails`` fails single star/unstar items).
        dependencies: Dependencies of every route (the bearer check).

    Returns:
        The router (tag ``starring``).

    >>> import tempfile, os
    >>> len(router(Store(os.path.join(tempfile.mkdtemp(), "s.db")), Faults()).routes)
    3
    """
    starring = APIRouter(dependencies=list(dependencies), tags=["starring"])
    responses = problems(400, *AUTH, 404, 409, *FAULTS)

    @starring.post(
        _PROPS + "/star",
        name="star",
        operation_id="star",
        status_code=207,
        response_model=StarResponse,
        response_model_exclude_none=True,
        summary="Star initiatives for a user",
        responses=responses,
    )
    def star(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {"response": store.star(customerId, body.model_dump(), item_fault=faults.item_fails)}

    @starring.post(
        _PROPS + "/unstar",
        name="unstar",
        operation_id="unstar",
        status_code=207,
        response_model=StarResponse,
        response_model_exclude_none=True,
        summary="Unstar initiatives for a user",
        responses=responses,
    )
    def unstar(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {
            "response": store.unstar(customerId, body.model_dump(), item_fault=faults.item_fails)
        }

    @starring.get(
        _PROPS + "/starred",
        name="starred",
        operation_id="starred",
        response_model=StarredPage,
        summary="One page of a user's starred initiatives",
        responses=responses,
    )
    def starred(
        customerId: str,
        timekeeperExternalId: Annotated[str, Query(min_length=1)],
        limit: Annotated[
            int,
            Query(
                ge=1,
                le=LIMIT_MAX,
                description="Raw pinned props fetched: an integer from 1 to 2500, digits only "
                "(`5.0`, `+5`, ` 5`, `05` are refused).",
            ),
            BeforeValidator(plain_digits),
        ] = LIMIT_MAX,
        cursor: Annotated[
            str | None, Query(description="`nextCursor` of the previous page (empty = first page).")
        ] = None,
    ) -> dict[str, Any]:
        return store.starred(customerId, timekeeperExternalId, limit, cursor)

    return starring
