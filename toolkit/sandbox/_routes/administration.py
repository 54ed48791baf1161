"""Routes of administration (``/sandbox/v1``): what users do inside the product, and test controls.

Not the interface: no authentication. Customers, users, walls, entries and their release,
product initiatives and the records listing call the store
(:mod:`toolkit.sandbox._models.administration`); fault injection and the request counts are
in-memory controls (:mod:`toolkit.sandbox._faults`). ``/rate-limit`` is the older way to set a
token bucket for every customer: it sets the default profile's ``rateLimit``
(:mod:`toolkit.sandbox._routes.profiles` has the profiles).
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body

from .._admin_bodies import (
    CustomerIn,
    CustomerOut,
    EntryAdminOut,
    EntryIn,
    FaultsIn,
    FaultsOut,
    ProductInitiativeIn,
    ProductInitiativeOut,
    ReleaseIn,
    StatsOut,
    UserIn,
    WallsIn,
    WallsOut,
)
from .._bodies import UserOut
from .._faults import Faults, Stats
from .._ratelimit import Limits, RateLimitIn, RateLimitOut
from .._store import RECORD_KINDS, Store
from .core import problems

__all__ = ["router"]

_CUSTOMER = "/customers/{customerId:seg}"
_USER = _CUSTOMER + "/users/{userId:seg}"


def router(store: Store, *, faults: Faults, stats: Stats, limits: Limits) -> APIRouter:
    """Return the administration router (prefix ``/sandbox/v1``, tag ``sandbox``).

    Args:
        store: State and rules.
        faults: Fault injection settings.
        stats: Request counters.
        limits: The customers' rate limiters (``/rate-limit`` resets them).

    Returns:
        The router.

    >>> import tempfile, os
    >>> admin = router(Store(os.path.join(tempfile.mkdtemp(), "s.db")), faults=Faults(),
    ...                stats=Stats(), limits=Limits())
    >>> admin.routes[0].path
    '/sandbox/v1/customers'
    """
    admin = APIRouter(prefix="/sandbox/v1", tags=["sandbox"])

    @admin.post(
        "/customers",
        name="admin_create_customer",
        operation_id="admin_create_customer",
        status_code=201,
        response_model=CustomerOut,
        summary="Create a customer and API client",
        responses=problems(422),
    )
    def create_customer(body: Annotated[CustomerIn | None, Body()] = None) -> dict[str, Any]:
        return store.create_customer(body.name if body else None)

    @admin.post(
        _CUSTOMER + "/users",
        name="admin_create_user",
        operation_id="admin_create_user",
        status_code=201,
        response_model=UserOut,
        summary="Create a user",
        responses=problems(404, 422),
    )
    def create_user(customerId: str, body: UserIn) -> dict[str, Any]:
        return store.create_user(customerId, body.model_dump())

    @admin.put(
        _USER + "/walls",
        name="admin_set_walls",
        operation_id="admin_set_walls",
        response_model=WallsOut,
        summary="Replace the initiatives the user has no access to",
        responses=problems(404, 422),
    )
    def set_walls(customerId: str, userId: str, body: WallsIn) -> dict[str, Any]:
        return store.set_walls(customerId, userId, body.model_dump())

    @admin.post(
        _USER + "/entries",
        name="admin_create_entry",
        operation_id="admin_create_entry",
        status_code=201,
        response_model=EntryAdminOut,
        summary="Create an editable entry",
        responses=problems(404, 422),
    )
    def create_entry(customerId: str, userId: str, body: EntryIn) -> dict[str, Any]:
        return store.create_entry(customerId, userId, body.model_dump())

    @admin.post(
        _USER + "/entries/{entryId:seg}/release",
        name="admin_release_entry",
        operation_id="admin_release_entry",
        response_model=EntryAdminOut,
        summary="The user releases an entry (editable or failed -> pending)",
        responses=problems(404, 409, 422),
    )
    def release_entry(
        customerId: str,
        userId: str,
        entryId: str,
        body: Annotated[ReleaseIn | None, Body()] = None,
    ) -> dict[str, Any]:
        return store.release_entry(customerId, userId, entryId, body.model_dump() if body else None)

    @admin.post(
        _USER + "/product-initiatives",
        name="admin_create_product_initiative",
        operation_id="admin_create_product_initiative",
        status_code=201,
        response_model=ProductInitiativeOut,
        summary="Create an initiative inside the product, pinned for the user",
        responses=problems(404, 422),
    )
    def create_product_initiative(
        customerId: str, userId: str, body: ProductInitiativeIn
    ) -> dict[str, Any]:
        return store.create_product_initiative(customerId, userId, body.model_dump())

    @admin.get(
        _CUSTOMER + "/records/{kind:seg}",
        name="admin_records",
        operation_id="admin_records",
        response_model=list[dict[str, Any]],
        summary="Every stored record of one kind",
        responses=problems(400, 404),
    )
    def records(
        customerId: str,
        kind: Literal[RECORD_KINDS],  # type: ignore[valid-type]  # a Literal built from a tuple, for OpenAPI
    ) -> list[dict[str, Any]]:
        return store.records(customerId, kind)

    @admin.put(
        "/faults",
        name="admin_set_faults",
        operation_id="admin_set_faults",
        response_model=FaultsOut,
        summary="Set fault injection on interface routes",
        responses=problems(422),
    )
    def set_faults(body: FaultsIn) -> dict[str, Any]:
        return faults.configure(**body.model_dump())

    @admin.get(
        "/faults",
        name="admin_get_faults",
        operation_id="admin_get_faults",
        response_model=FaultsOut,
        summary="Fault injection settings and counters",
    )
    def get_faults() -> dict[str, Any]:
        return faults.snapshot()

    @admin.put(
        "/rate-limit",
        name="admin_set_rate_limit",
        operation_id="admin_set_rate_limit",
        response_model=RateLimitOut,
        summary="Set the rate limit of the interface routes",
        description="A token bucket per customer: `perSecond` tokens a second, at most "
        "`burst` stored (default: one second's worth); `perSecond: null` turns it off. Over "
        "the limit an interface request is answered 429 with an integer `Retry-After`.",
        responses=problems(422),
    )
    def set_rate_limit(body: RateLimitIn) -> dict[str, Any]:
        bucket = None
        if body.perSecond is not None:
            bucket = {"kind": "token-bucket", "perSecond": body.perSecond, "burst": body.burst}
            bucket = {k: v for k, v in bucket.items() if v is not None}
        store.set_default_profile({"rateLimit": bucket})
        limits.reset()  # every bucket full again, counters zero
        return get_rate_limit()

    @admin.get(
        "/rate-limit",
        name="admin_get_rate_limit",
        operation_id="admin_get_rate_limit",
        response_model=RateLimitOut,
        summary="Rate limit settings and counters",
    )
    def get_rate_limit() -> dict[str, Any]:
        setting = store.default_profile()["rateLimit"]
        bucket = setting if setting is not None and setting["kind"] == "token-bucket" else None
        return {
            "perSecond": float(bucket["perSecond"]) if bucket else None,
            "burst": bucket["burst"] if bucket else None,
            "counters": limits.counters(),
        }

    @admin.get(
        "/stats",
        name="admin_stats",
        operation_id="admin_stats",
        response_model=StatsOut,
        summary="Interface request counts per route template and method",
    )
    def get_stats() -> dict[str, Any]:
        return stats.snapshot()

    @admin.post(
        "/stats/reset",
        name="admin_reset_stats",
        operation_id="admin_reset_stats",
        response_model=StatsOut,
        summary="Reset the request counts",
    )
    def reset_stats() -> dict[str, Any]:
        stats.reset()
        return stats.snapshot()

    return admin
