"""The sandbox's application: the app factory, its two middlewares and its routers.

The routes live in :mod:`toolkit.sandbox._routes`, one router per part of the interface beside
the store's parts in :mod:`toolkit.sandbox._models` (moto's ``responses.py`` beside
``models.py``); :func:`create_app` includes them. Errors are raised by the store and rendered by
the one handler of :mod:`toolkit.sandbox._exceptions`. The root serves every path: the identity
(``/api/v1/oauth/token``, the user record), time and ingestion paths of the spec, and the
sandbox's own administration paths under ``/sandbox/v1``. Each service also has its own base,
a path prefix on the same server (:data:`SERVICE_BASES`): ``/identity``, ``/time`` and
``/ingestion`` serve the interface paths the real service publishes on that host, and answer
404 for the others (the user record under ``/time``, as on the service).

Four ASGI middlewares sit in front, from the outside in:

0. ``_ServiceBases`` strips a service's prefix from a path that service serves, so every other
   layer (profile answers, rate limit, faults, latency, request counts per route template, the
   body limit) sees it exactly as the root path.
1. ``_ProfileAnswers``, on the interface paths (``/api/...``), shapes every answer as the
   customer's profile (:mod:`toolkit.sandbox._profiles`) says: the body of an error, the form of
   ``Retry-After``, the rate limit headers.
2. ``_RequestGuard``, on every path, routes on the path as sent (percent-encoded: an id holding
   ``/`` sent as ``%2F``, or ``.``/``..`` sent as ``%2E``, is one segment, decoded by the ``seg``
   convertor of every path parameter) and refuses a body over the size limit (413).
3. ``_InterfaceMiddleware``, on the interface routes, counts requests per route template and
   applies fault injection, the customer's rate limit (:mod:`toolkit.sandbox._ratelimit`) and
   its latency, before any route does work.
"""

import asyncio
import random
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import BaseRoute, Match

from ._bodies import AckOut, TokenIn
from ._exceptions import (
    PROBLEM_MEDIA_TYPE,
    InjectedFault,
    PayloadTooLarge,
    SandboxError,
    install_handlers,
    render_error_body,
    safe_body,
)
from ._faults import Faults, Stats, latency_seconds
from ._ratelimit import (
    Admission,
    Limits,
    RateLimited,
    customer_of,
    limit_headers,
    retry_after_value,
)
from ._routes import administration, auth, egress, ingress, profiles, starring
from ._routes.core import NOTE, RETRY_AFTER, TOKEN_PATH, WWW_AUTHENTICATE
from ._store import Store

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "IDENTITY_ROUTES",
    "INGESTION_ROUTES",
    "SERVICE_BASES",
    "TOKEN_PATH",
    "create_app",
    "split_base",
]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body accepted (4 MiB); a larger one is answered 413."""
_DRAIN_LIMIT = 64 * 1024 * 1024
"""A body over the limit is read (and dropped) up to this size before the 413 is sent, so an
ordinary client reads the answer instead of a reset connection."""
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
SERVICE_BASES = ("identity", "time", "ingestion")
"""The services' path prefixes: ``{url}/identity``, ``{url}/time``, ``{url}/ingestion``."""
IDENTITY_ROUTES = frozenset({"token", "get_user"})
"""Routes (by name) served under ``/identity``; ``/time`` serves every other interface route."""
INGESTION_ROUTES = frozenset(
    {
        "import_clients",
        "import_initiatives",
        "import_code_types",
        "import_codes",
        "set_code_range",
        "release_pending",
    }
)
"""Routes (by name) served under ``/ingestion``: the imports, the code range, release-pending."""


def split_base(path: str) -> tuple[str | None, str]:
    """Split a service's prefix off an interface path.

    Args:
        path: A request path.

    Returns:
        The service (a name in :data:`SERVICE_BASES`) and the path under it, or None and the
        path unchanged when it is not an interface path under a service's prefix.

    >>> split_base("/time/api/v1/customers/c/entries/release-pending")
    ('time', '/api/v1/customers/c/entries/release-pending')
    >>> split_base("/api/v1/oauth/token"), split_base("/time/docs")
    ((None, '/api/v1/oauth/token'), (None, '/time/docs'))
    """
    head, _, rest = path[1:].partition("/")
    if head in SERVICE_BASES and rest.startswith("api/"):
        return head, "/" + rest
    return None, path


def _serves(base: str, name: str) -> bool:
    """Whether the service ``base`` serves the route ``name``."""
    if base == "identity":
        return name in IDENTITY_ROUTES
    if base == "ingestion":
        return name in INGESTION_ROUTES
    return name not in IDENTITY_ROUTES


class _ServiceBases:
    """Serve each service's interface paths under its prefix too, as the root serves them.

    A path under ``/identity``, ``/time`` or ``/ingestion`` whose route that service serves
    goes on with the prefix stripped (``path`` and ``raw_path``); any other is left as sent,
    which no route matches: a 404 like any unknown path.
    """

    def __init__(self, app: Any, *, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    def _route_name(self, scope: MutableMapping[str, Any]) -> str | None:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match != Match.NONE:
                return str(getattr(route, "name", ""))
        return None

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http":
            base, rest = split_base(scope["path"])
            prefix = f"/{base}".encode()
            raw = scope.get("raw_path")
            if base is not None and (not raw or bytes(raw).startswith(prefix + b"/")):
                inner = {**scope, "path": rest}
                if raw:
                    inner["raw_path"] = bytes(raw)[len(prefix) :]
                as_sent = quote(inner["raw_path"], safe=_PATH_SAFE) if raw else rest
                name = self._route_name({**inner, "path": as_sent})
                if name is not None and _serves(base, name):
                    scope = inner
        await self.app(scope, receive, send)


class _RequestGuard:
    """Route on the path as sent, and refuse bodies over the size limit with a 413 problem."""

    def __init__(self, app: Any, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _too_large(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        err = PayloadTooLarge(
            f"the body is larger than the sandbox's limit of {self.max_body_bytes} bytes",
            limitBytes=self.max_body_bytes,
        )
        response = JSONResponse(
            safe_body(err.to_problem(scope["path"])),
            status_code=413,
            media_type=PROBLEM_MEDIA_TYPE,
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path")
        if raw:
            # route on the percent-encoded path: "a%2Fb" is one segment, not two
            scope = {**scope, "path": quote(bytes(raw), safe=_PATH_SAFE)}
        declared = None
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = None
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            more = bool(message.get("more_body"))
            if size > self.max_body_bytes or (declared or 0) > self.max_body_bytes:
                while more and size <= _DRAIN_LIMIT:
                    message = await receive()
                    size += len(message.get("body", b""))
                    more = message["type"] == "http.request" and bool(message.get("more_body"))
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class _InterfaceMiddleware:
    """Count interface requests; inject faults, apply the rate limit and latency before any
    route does work."""

    def __init__(
        self,
        app: Any,
        *,
        routes: list[BaseRoute],
        store: Store,
        faults: Faults,
        stats: Stats,
        limits: Limits,
    ) -> None:
        self.app = app
        self.routes = routes
        self.store = store
        self.faults = faults
        self.stats = stats
        self.limits = limits
        self._random = random.Random()

    def _template(self, scope: MutableMapping[str, Any]) -> str | None:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return str(getattr(route, "path_format", getattr(route, "path", "")))
        return None

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        template = self._template(scope)
        if template is None:
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        status_seen = 500
        customer = customer_of(scope["path"])
        profile = self.store.profile(customer)
        note = scope.get(NOTE)
        admission = None

        async def counting_send(message: Any) -> None:
            nonlocal status_seen
            if message["type"] == "http.response.start":
                status_seen = message["status"]
            await send(message)

        try:
            if self.faults.settings["latencyMs"]:
                await asyncio.sleep(self.faults.settings["latencyMs"] / 1000)
            fault = self.faults.decide()
            if fault is None:
                admission = self.limits.admit(customer, profile["rateLimit"])
            if isinstance(note, dict):
                note["limit"] = admission or self.limits.peek(customer, profile["rateLimit"])
            err: SandboxError | None = None
            if fault is not None:
                err = InjectedFault(fault, retry_after=self.faults.settings["retryAfterSeconds"])
            elif admission is not None and not admission.allowed:
                err = RateLimited(
                    admission.retry_after or 1,
                    status=admission.status,
                    detail=None
                    if admission.policy != "concurrency"
                    else f"too many requests in flight (at most {admission.limit}); retry after "
                    f"{admission.retry_after or 1} s",
                )
            if err is not None:
                response = JSONResponse(
                    err.to_problem(scope["path"]),
                    status_code=err.status,
                    headers=err.headers,
                    media_type=PROBLEM_MEDIA_TYPE,
                )
                await response(scope, receive, counting_send)
                return
            delay = latency_seconds(profile["latency"], self._random)
            if delay > 0:
                await asyncio.sleep(delay)
            await self.app(scope, receive, counting_send)
        finally:
            if admission is not None and admission.release is not None:
                admission.release()
            self.stats.record(method, template, status_seen)


class _ProfileAnswers:
    """Shape every answer under ``/api/`` as its customer's profile says: the body of an error
    (``errorBody``), ``Retry-After`` (``retryAfter``) and the rate limit headers
    (``rateLimitHeaders``).

    The customer is the path's ``customerId``, or the one a route noted (the token route notes
    the client's); otherwise the default profile applies. Outside the body limit, so that the
    413 of an oversized body is shaped too; a path under a service's prefix that the service
    does not serve (a 404) is shaped as well.
    """

    def __init__(self, app: Any, *, store: Store) -> None:
        self.app = app
        self.store = store

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        path = split_base(scope["path"])[1] if scope["type"] == "http" else ""
        if not path.startswith("/api/"):  # a prefixed path left as sent (a 404) is shaped too
            await self.app(scope, receive, send)
            return
        note: dict[str, Any] = {}
        scope = {**scope, NOTE: note}
        hint = customer_of(path)
        held: tuple[dict[str, Any], str] | None = None
        chunks: list[bytes] = []

        async def shaping_send(message: Any) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                profile = self.store.profile(note.get("customer", hint))
                start = _shape_start(message, profile, note.get("limit"))
                headers = Headers(raw=start["headers"])
                if (
                    start["status"] >= 400
                    and profile["errorBody"] != "problem"
                    and headers.get("content-type", "").startswith(PROBLEM_MEDIA_TYPE)
                ):
                    held = (start, profile["errorBody"])
                    return
                await send(start)
                return
            if held is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                start, style = held
                body, media = render_error_body(style, b"".join(chunks))
                headers = MutableHeaders(raw=list(start["headers"]))
                del headers["content-type"]
                if media is not None:
                    headers["content-type"] = media
                headers["content-length"] = str(len(body))
                await send({**start, "headers": headers.raw})
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, shaping_send)


def _shape_start(
    message: dict[str, Any], profile: dict[str, Any], limit: Admission | None
) -> dict[str, Any]:
    """The response start with the profile's ``Retry-After`` and rate limit headers."""
    style = profile["rateLimitHeaders"]
    retry_style = profile["retryAfter"]
    status = message["status"]
    if (limit is None or style == "none") and (
        retry_style == "seconds" or status not in (429, 503)
    ):
        return message
    headers = MutableHeaders(raw=list(message.get("headers", [])))
    if limit is not None:
        for name, value in limit_headers(style, limit).items():
            headers[name] = value
    retry = headers.get("retry-after")
    if status in (429, 503) and retry is not None and retry.isdigit():
        retry_value = retry_after_value(retry_style, int(retry))
        if retry_value is None:
            del headers["retry-after"]
        else:
            headers["retry-after"] = retry_value
    return {**message, "headers": headers.raw}


def _openapi(app: FastAPI, max_body_bytes: int) -> Callable[[], dict[str, Any]]:
    """Build the OpenAPI document with problem bodies under ``application/problem+json``, and
    the 413 of a body over ``max_body_bytes`` on every operation that takes a body."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
            tags=app.openapi_tags,
        )
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                if "requestBody" in operation:
                    responses["413"] = {
                        "description": f"The body is larger than {max_body_bytes} bytes "
                        "(`limitBytes` in the problem body); nothing is stored.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                        },
                    }
                for status, response in list(responses.items()):
                    content = response.get("content", {})
                    ref = content.get("application/json", {}).get("schema", {}).get("$ref", "")
                    if ref.endswith("/HTTPValidationError"):
                        del responses[status]
                        continue
                    if ref.endswith("/Problem"):
                        response["content"] = {PROBLEM_MEDIA_TYPE: content["application/json"]}
                    if status in ("429", "503"):
                        response["headers"] = dict(RETRY_AFTER)
                    if status == "401" and ref.endswith("/Problem"):
                        response["headers"] = dict(WWW_AUTHENTICATE)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        for model in (TokenIn, AckOut):  # the token's body; an acknowledgement's record answer
            components[model.__name__] = model.model_json_schema(
                ref_template="#/components/schemas/{model}"
            )
        app.openapi_schema = schema
        return schema

    return build


def create_app(
    store: Store,
    *,
    faults: Faults | None = None,
    stats: Stats | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    limits: Limits | None = None,
) -> FastAPI:
    """Build the sandbox application over a store.

    Args:
        store: State and rules.
        faults: Fault injection settings (a fresh, switched-off one by default).
        stats: Request counters (fresh by default).
        max_body_bytes: Largest request body accepted; larger ones are answered 413.
        limits: The rate limiters of the customers (fresh by default); their settings are
            in the customers' profiles.

    Returns:
        The FastAPI application; ``app.state`` holds ``store``, ``faults``, ``stats`` and
        ``limits``.

    >>> import tempfile, os
    >>> app = create_app(Store(os.path.join(tempfile.mkdtemp(), "s.db")))
    >>> "/api/v1/oauth/token" in app.openapi()["paths"]
    True
    """
    faults = faults or Faults()
    stats = stats or Stats()
    limits = limits or Limits()
    app = FastAPI(
        title="Time-billing connector sandbox",
        version="1.0.0",
        description=(
            "A local implementation of the time-billing connector and starred-initiatives "
            "interface, plus sandbox administration routes under `/sandbox/v1`. The paths "
            "below are served at the root (one base address for everything) and under each "
            "service's base: `/identity` (token, user record), `/time` (every other "
            "interface path) and `/ingestion` (imports, code range, release-pending). See "
            "docs/sandbox.md."
        ),
        openapi_tags=[
            {"name": "identity", "description": "Token exchange (client credentials)."},
            {"name": "ingress", "description": "Imports: one record per request, upsert."},
            {"name": "egress", "description": "Export, release-pending, acknowledgements."},
            {"name": "starring", "description": "Starred initiatives (public)."},
            {"name": "sandbox", "description": "Sandbox administration (not the interface)."},
        ],
    )
    app.state.store = store
    app.state.faults = faults
    app.state.stats = stats
    app.state.limits = limits

    app.state.authenticate_request = auth.authenticator(store)
    guarded = [Depends(auth.token_guard(store))]
    routers = [
        auth.router(store),
        ingress.router(store, dependencies=guarded),
        egress.router(store, dependencies=guarded),
        starring.router(store, faults, dependencies=guarded),
        administration.router(store, faults=faults, stats=stats, limits=limits),
        profiles.router(store, limits=limits),
    ]
    interface = routers[:4]
    for router in routers:
        app.include_router(router)
    app.state.sandbox_routes = [route for router in routers for route in router.routes]
    install_handlers(app)
    app.add_middleware(
        _InterfaceMiddleware,
        routes=[route for router in interface for route in router.routes],
        store=store,
        faults=faults,
        stats=stats,
        limits=limits,
    )
    app.add_middleware(_RequestGuard, max_body_bytes=max_body_bytes)
    app.add_middleware(_ProfileAnswers, store=store)
    app.add_middleware(  # outermost
        _ServiceBases, routes=[route for router in interface for route in router.routes]
    )
    app.openapi = _openapi(app, max_body_bytes)  # type: ignore[method-assign]  # FastAPI's documented override
    return app
