"""Routes of profiles (``/sandbox/v1``): read and set each customer's switches.

``PUT /sandbox/v1/customers/{customerId}/profile`` sets the switches given (the others keep
their value), ``GET`` reads the whole profile with every default filled in, ``DELETE`` forgets
the customer's switches; ``GET /sandbox/v1/profile`` reads the default profile every customer
starts from. The rules are the store's (:mod:`toolkit.sandbox._models.profiles`); the switches
are described in :mod:`toolkit.sandbox._profiles`.
"""

from typing import Any

from fastapi import APIRouter

from .._profiles import Profile
from .._ratelimit import Limits
from .._store import Store
from .core import problems

__all__ = ["router"]

_PROFILE = "/customers/{customerId:seg}/profile"


def router(store: Store, *, limits: Limits) -> APIRouter:
    """Return the profiles router (prefix ``/sandbox/v1``, tag ``sandbox``).

    Args:
        store: State and rules.
        limits: The customers' rate limiters (a customer's is renewed when its profile is set).

    Returns:
        The router.

    >>> import tempfile, os
    >>> r = router(Store(os.path.join(tempfile.mkdtemp(), "s.db")), limits=Limits())
    >>> sorted({route.path for route in r.routes})
    ['/sandbox/v1/customers/{customerId:seg}/profile', '/sandbox/v1/profile']
    """
    admin = APIRouter(prefix="/sandbox/v1", tags=["sandbox"])

    @admin.get(
        _PROFILE,
        name="admin_get_profile",
        operation_id="admin_get_profile",
        response_model=Profile,
        summary="A customer's profile, every switch filled in",
        responses=problems(404),
    )
    def get_profile(customerId: str) -> dict[str, Any]:
        return store.get_profile(customerId)

    @admin.put(
        _PROFILE,
        name="admin_set_profile",
        operation_id="admin_set_profile",
        response_model=Profile,
        summary="Set some switches of a customer's profile",
        description="The switches given replace the customer's; the others keep their value. "
        "A nested switch (`tokenFaults`, `rateLimit`, `latency`) is replaced whole. An unknown "
        "switch or a bad value is a 422 and changes nothing. Answers the whole profile.",
        responses=problems(404, 422),
    )
    def set_profile(customerId: str, body: Profile) -> dict[str, Any]:
        profile = store.set_profile(customerId, body.model_dump(include=set(body.model_fields_set)))
        limits.reset(customerId)  # a fresh limiter: a full bucket, a new window
        return profile

    @admin.delete(
        _PROFILE,
        name="admin_reset_profile",
        operation_id="admin_reset_profile",
        response_model=Profile,
        summary="Forget a customer's switches (the default applies)",
        responses=problems(404),
    )
    def reset_profile(customerId: str) -> dict[str, Any]:
        profile = store.reset_profile(customerId)
        limits.reset(customerId)
        return profile

    @admin.get(
        "/profile",
        name="admin_get_default_profile",
        operation_id="admin_get_default_profile",
        response_model=Profile,
        summary="The default profile every customer starts from",
    )
    def get_default_profile() -> dict[str, Any]:
        return store.default_profile()

    return admin
