"""Routes of the identity service: the token exchange, and the bearer check of the others.

Thin, like moto's ``responses.py``: :mod:`toolkit.sandbox._oauth` reads the request (JSON, form
or HTTP Basic) and :meth:`~toolkit.sandbox._models.auth.AuthStore.token` applies the rules.
Once the request is read, the client's customer's ``tokenFaults`` (its profile) may answer a
fault instead, before the credentials are checked. :func:`token_guard` is the dependency every
customer-scoped interface router declares.
"""

import random
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, Security

from .._bodies import OAuthErrorOut, TokenOut
from .._exceptions import InjectedFault, InvalidClient
from .._faults import fault_status
from .._oauth import TokenRequest, read_token_request
from .._store import Store
from .core import FAULTS, NOTE, OAUTH2, TOKEN_PATH, bearer, problems

__all__ = ["authenticator", "router", "token_guard"]

_TOKEN_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/TokenIn"}},
        "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/TokenIn"}},
    },
}


def authenticator(store: Store) -> Callable[[Request], str]:
    """Return the bearer check of a request: its token's customer, or an error.

    Args:
        store: The store holding the tokens.

    Returns:
        A callable taking a request and returning the token's customer id; it raises
        :class:`~toolkit.sandbox._exceptions.Unauthorized` or
        :class:`~toolkit.sandbox._exceptions.Forbidden`.

    >>> import tempfile, os
    >>> check = authenticator(Store(os.path.join(tempfile.mkdtemp(), "s.db")))
    >>> callable(check)
    True
    """

    def authenticate_request(request: Request) -> str:
        return store.authenticate(bearer(request), request.path_params.get("customerId"))

    return authenticate_request


def token_guard(store: Store) -> Callable[..., str]:
    """Return the dependency that guards every customer-scoped interface route.

    It declares the ``clientCredentials`` scheme in the OpenAPI document and runs
    :func:`authenticator` on the request.

    Args:
        store: The store holding the tokens.

    Returns:
        A FastAPI dependency returning the token's customer id.

    >>> import tempfile, os
    >>> callable(token_guard(Store(os.path.join(tempfile.mkdtemp(), "s.db"))))
    True
    """
    authenticate_request = authenticator(store)

    def require_token(request: Request, _: Annotated[Any, Security(OAUTH2)] = None) -> str:
        return authenticate_request(request)

    return require_token


def router(store: Store) -> APIRouter:
    """Return the identity service's router: ``POST /api/v1/oauth/token``.

    Args:
        store: State and rules.

    Returns:
        The router (tag ``identity``).

    >>> import tempfile, os
    >>> [r.path for r in router(Store(os.path.join(tempfile.mkdtemp(), "s.db"))).routes]
    ['/api/v1/oauth/token']
    """
    identity = APIRouter(tags=["identity"])
    rng = random.Random()
    seeded: dict[tuple[str | None, int], random.Random] = {}  # (customer, seed): its own draws

    @identity.post(
        TOKEN_PATH,
        name="token",
        operation_id="token",
        response_model=TokenOut,
        summary="Exchange client credentials for an access token",
        description="A JSON body (as the spec shows) or a form body (RFC 6749 section 4.4.2); "
        "client credentials in the body or in HTTP Basic authentication (section 2.3.1).",
        openapi_extra={"requestBody": _TOKEN_BODY},
        responses={
            400: {
                "model": OAuthErrorOut,
                "description": "`invalid_request` or `unsupported_grant_type`.",
            },
            401: {"model": OAuthErrorOut, "description": "`invalid_client`."},
            **problems(413, *FAULTS),
        },
    )
    def token(
        request: Request,
        response: Response,
        body: Annotated[TokenRequest, Depends(read_token_request)],
    ) -> dict[str, Any]:
        customer = store.client_customer(body.client_id)
        note = request.scope.get(NOTE)
        if isinstance(note, dict):
            note["customer"] = customer  # its profile shapes this answer
        faults = store.profile(customer)["tokenFaults"]
        seed = faults.get("seed")
        draws = rng if seed is None else seeded.setdefault((customer, seed), random.Random(seed))
        status = fault_status(faults, draws)
        if status is not None:
            raise InjectedFault(status, retry_after=faults["retryAfterSeconds"])
        response.headers["Cache-Control"] = "no-store"
        response.headers["Pragma"] = "no-cache"
        try:
            return store.token(
                grant_type=body.grant_type,
                client_id=body.client_id,
                client_secret=body.client_secret,
                audience=body.audience,
            )
        except InvalidClient as exc:
            if body.basic:
                raise InvalidClient(exc.description, basic=True) from None
            raise

    return identity
