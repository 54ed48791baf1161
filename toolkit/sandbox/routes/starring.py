"""Routes of starring (public): star, unstar and the starred pages.

Star and unstar answer 207 with one result per distinct id; fault injection may fail single
items (``item_fault``). The rules are the store's (:mod:`toolkit.sandbox.models.starring`).
"""

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Query, params

from ..bodies import StarredPage, StarRequest, StarResponse
from ..exceptions import BadRequest
from ..faults import Faults
from ..store import Store
from .core import AUTH, FAULTS, problems

__all__ = ["LIMIT_PATTERN", "router"]

LIMIT_PATTERN = r"^([1-9][0-9]{0,2}|1[0-9]{3}|2[0-4][0-9]{2}|2500)$"
"""The starred ``limit``: an integer from 1 to 2500 in plain digits, stated in the schema."""

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
        _PROPS + "/star", name="star", operation_id="star", status_code=207,
        response_model=StarResponse, response_model_exclude_none=True,
        summary="Star initiatives for a user", responses=responses,
    )
    def star(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {"response": store.star(customerId, body.model_dump(),
                                       item_fault=faults.item_fails)}

    @starring.post(
        _PROPS + "/unstar", name="unstar", operation_id="unstar", status_code=207,
        response_model=StarResponse, response_model_exclude_none=True,
        summary="Unstar initiatives for a user", responses=responses,
    )
    def unstar(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {"response": store.unstar(customerId, body.model_dump(),
                                         item_fault=faults.item_fails)}

    @starring.get(
        _PROPS + "/starred", name="starred", operation_id="starred", response_model=StarredPage,
        summary="One page of a user's starred initiatives", responses=responses,
    )
    def starred(
        customerId: str,
        timekeeperExternalId: Annotated[str, Query(min_length=1)],
        limit: Annotated[str, Query(
            pattern=LIMIT_PATTERN,
            description="Raw pinned props fetched: an integer from 1 to 2500, digits only "
            "(`5.0`, `+5`, ` 5` are refused).")] = "2500",
        cursor: Annotated[str | None, Query(
            description="`nextCursor` of the previous page (empty = first page).")] = None,
    ) -> dict[str, Any]:
        if int(limit) > 2500:
            raise BadRequest("limit must be between 1 and 2500", slug="invalid-request",
                             errors=[{"in": "query", "field": "limit",
                                      "detail": "an integer from 1 to 2500"}])
        return store.starred(customerId, timekeeperExternalId, int(limit), cursor)

    return starring
