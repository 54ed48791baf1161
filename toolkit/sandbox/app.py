"""The sandbox's HTTP layer: thin FastAPI routes over :class:`~toolkit.sandbox.store.Store`.

Every route reads its parameters through FastAPI and pydantic, calls one store method and
returns its dict; errors are raised by the store and rendered by the one handler of
:mod:`toolkit.sandbox.exceptions`. All paths share one base address: the identity
(``/api/v1/oauth/token``), time and ingestion paths of the spec, and the sandbox's own
administration paths under ``/sandbox/v1``.

Two ASGI middlewares sit in front. The outer one, on every path, routes on the path as sent
(percent-encoded: an id holding ``/`` sent as ``%2F``, or ``.``/``..`` sent as ``%2E``, is one
segment, decoded by the ``seg`` convertor of every path parameter) and refuses a body over the
size limit (413). The inner one, on the interface paths (``/api/...``), counts requests per
route template and applies fault injection and the rate limit (one token bucket per customer,
:mod:`toolkit.sandbox.ratelimit`) before any route does work.
"""

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Annotated, Any, Literal
from urllib.parse import quote, unquote

from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request, Response, Security
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import OAuth2
from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import BaseRoute, Match

from .exceptions import (
    PROBLEM_MEDIA_TYPE,
    BadRequest,
    InjectedFault,
    InvalidClient,
    PayloadTooLarge,
    install_handlers,
    safe_body,
)
from .faults import Faults, Stats
from .oauth import TokenRequest, read_token_request
from .payloads import (
    DATETIME_PATTERN,
    AckFailedIn,
    AckOut,
    AckSucceededIn,
    ClientIn,
    ClientOut,
    CodeIn,
    CodeOut,
    CodeRangeIn,
    CodeRangeOut,
    CodeTypeIn,
    CodeTypeOut,
    CustomerIn,
    CustomerOut,
    EntryAdminOut,
    EntryIn,
    ExportEntry,
    FaultsIn,
    FaultsOut,
    InitiativeIn,
    InitiativeOut,
    OAuthErrorOut,
    PendingEntry,
    Problem,
    ProductInitiativeIn,
    ProductInitiativeOut,
    ReleaseIn,
    StarredPage,
    StarRequest,
    StarResponse,
    StatsOut,
    TokenIn,  # noqa: F401 - documented in the OpenAPI components (the token request body)
    TokenOut,
    UserIn,
    UserOut,
    WallsIn,
    WallsOut,
    parse_datetime,
)
from .ratelimit import RateLimit, RateLimited, RateLimitIn, RateLimitOut, customer_of
from .store import RECORD_KINDS, Store

try:  # orjson is a toolkit dependency; the sandbox also works without it
    import orjson

    def _dumps(value: Any) -> bytes:
        return orjson.dumps(value)
except ImportError:  # pragma: no cover
    def _dumps(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

__all__ = ["DEFAULT_MAX_BODY_BYTES", "TOKEN_PATH", "create_app"]

TOKEN_PATH = "/api/v1/oauth/token"
"""Path of the token endpoint (identity service)."""
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body accepted (4 MiB); a larger one is answered 413."""
_DRAIN_LIMIT = 64 * 1024 * 1024
"""A body over the limit is read (and dropped) up to this size before the 413 is sent, so an
ordinary client reads the answer instead of a reset connection."""
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


class _Segment(Convertor[str]):
    """One path segment as sent (``%2F`` stays inside it), percent-decoded for the route."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("seg", _Segment())

_STATUS_TEXT = {
    400: "Bad request: a query parameter, cursor or identifier list outside its bounds.",
    401: "Missing, unknown or expired bearer token (see `WWW-Authenticate`).",
    403: "The token belongs to another customer than the path's `customerId`.",
    404: "Not found.",
    409: "Conflict with the resource's state.",
    413: "The body is larger than the sandbox's limit (4 MiB by default).",
    422: "Invalid body (every invalid field is listed in `errors`) or unknown references "
         "(listed in `unknownIds`).",
    429: "Too many requests (rate limit or fault injection); retry after `Retry-After` "
         "seconds.",
    500: "Internal error (or fault injection).",
    503: "Unavailable (fault injection); retry after `Retry-After` seconds.",
}
_FAULTS = (429, 500, 503)
_AUTH = (401, 403)
_RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying.",
                    "schema": {"type": "integer"}}
}
_WWW_AUTHENTICATE = {
    "WWW-Authenticate": {"description": "Bearer challenge (RFC 6750).",
                         "schema": {"type": "string"}}
}

_oauth2 = OAuth2(
    flows=OAuthFlows(clientCredentials=OAuthFlowClientCredentials(tokenUrl=TOKEN_PATH)),
    scheme_name="clientCredentials",
    description="OAuth 2.0 client credentials; send `Authorization: Bearer <access_token>`.",
    auto_error=False,
)


def _problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": Problem, "description": _STATUS_TEXT[s]} for s in statuses}


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


class _RequestGuard:
    """Route on the path as sent, and refuse bodies over the size limit with a 413 problem."""

    def __init__(self, app: Any, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _too_large(
        self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        err = PayloadTooLarge(
            f"the body is larger than the sandbox's limit of {self.max_body_bytes} bytes",
            limitBytes=self.max_body_bytes,
        )
        response = JSONResponse(
            safe_body(err.to_problem(scope["path"])), status_code=413,
            media_type=PROBLEM_MEDIA_TYPE, headers={"Connection": "close"},
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
    """Count interface requests and inject faults before any route does work."""

    def __init__(
        self, app: Any, *, routes: list[BaseRoute], faults: Faults, stats: Stats,
        limit: RateLimit | None = None,
    ) -> None:
        self.app = app
        self.routes = routes
        self.faults = faults
        self.stats = stats
        self.limit = limit or RateLimit()

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

        async def counting_send(message: Any) -> None:
            nonlocal status_seen
            if message["type"] == "http.response.start":
                status_seen = message["status"]
            await send(message)

        try:
            if self.faults.latency_ms:
                await asyncio.sleep(self.faults.latency_ms / 1000)
            fault = self.faults.decide()
            wait = self.limit.take(customer_of(scope["path"])) if fault is None else None
            if fault is not None or wait is not None:
                err = (
                    InjectedFault(fault, retry_after=self.faults.retry_after)
                    if fault is not None
                    else RateLimited(wait or 1)
                )
                fault = err.status
                response = JSONResponse(
                    err.to_problem(scope["path"]), status_code=fault, headers=err.headers,
                    media_type=PROBLEM_MEDIA_TYPE,
                )
                await response(scope, receive, counting_send)
                return
            await self.app(scope, receive, counting_send)
        finally:
            self.stats.record(method, template, status_seen)


def _openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """Build the OpenAPI document with problem bodies under ``application/problem+json``."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description,
            routes=app.routes, tags=app.openapi_tags,
        )
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                for status, response in list(responses.items()):
                    content = response.get("content", {})
                    ref = content.get("application/json", {}).get("schema", {}).get("$ref", "")
                    if ref.endswith("/HTTPValidationError"):
                        del responses[status]
                        continue
                    if ref.endswith("/Problem"):
                        response["content"] = {PROBLEM_MEDIA_TYPE: content["application/json"]}
                    if status in ("429", "503"):
                        response["headers"] = dict(_RETRY_AFTER)
                    if status == "401" and ref.endswith("/Problem"):
                        response["headers"] = dict(_WWW_AUTHENTICATE)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        components["TokenIn"] = TokenIn.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        app.openapi_schema = schema
        return schema

    return build


def create_app(
    store: Store, *, faults: Faults | None = None, stats: Stats | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    limit: RateLimit | None = None,
) -> FastAPI:
    """Build the sandbox application over a store.

    Args:
        store: State and rules.
        faults: Fault injection settings (a fresh, switched-off one by default).
        stats: Request counters (fresh by default).
        max_body_bytes: Largest request body accepted; larger ones are answered 413.
        limit: The rate limit of the interface routes (a fresh, switched-off one by default).

    Returns:
        The FastAPI application; ``app.state`` holds ``store``, ``faults`` and ``stats``.

    >>> import tempfile, os
    >>> app = create_app(Store(os.path.join(tempfile.mkdtemp(), "s.db")))
    >>> "/api/v1/oauth/token" in app.openapi()["paths"]
    True
    """
    faults = faults or Faults()
    stats = stats or Stats()
    limit = limit or RateLimit()
    app = FastAPI(
        title="Time-billing connector sandbox",
        version="1.0.0",
        description=(
            "A local implementation of the time-billing connector and starred-initiatives "
            "interface (identity, time and ingestion paths at one base address), plus "
            "sandbox administration routes under `/sandbox/v1`. See docs/sandbox.md."
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
    app.state.rate_limit = limit

    def authenticate_request(request: Request) -> str:
        return store.authenticate(_bearer(request), request.path_params.get("customerId"))

    app.state.authenticate_request = authenticate_request

    def require_token(request: Request, _: Annotated[Any, Security(_oauth2)] = None) -> str:
        return authenticate_request(request)

    identity = APIRouter(tags=["identity"])
    api = APIRouter(dependencies=[Depends(require_token)])
    admin = APIRouter(prefix="/sandbox/v1", tags=["sandbox"])

    # --- identity -----------------------------------------------------------------------------

    token_body = {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/TokenIn"}},
            "application/x-www-form-urlencoded": {
                "schema": {"$ref": "#/components/schemas/TokenIn"}
            },
        },
    }

    @identity.post(
        TOKEN_PATH, name="token", operation_id="token", response_model=TokenOut,
        summary="Exchange client credentials for an access token",
        description="A JSON body (as the spec shows) or a form body (RFC 6749 section 4.4.2); "
        "client credentials in the body or in HTTP Basic authentication (section 2.3.1).",
        openapi_extra={"requestBody": token_body},
        responses={
            400: {"model": OAuthErrorOut,
                  "description": "`invalid_request` or `unsupported_grant_type`."},
            401: {"model": OAuthErrorOut, "description": "`invalid_client`."},
            **_problems(413, *_FAULTS),
        },
    )
    def token(
        response: Response, body: Annotated[TokenRequest, Depends(read_token_request)]
    ) -> dict[str, Any]:
        response.headers["Cache-Control"] = "no-store"
        response.headers["Pragma"] = "no-cache"
        try:
            return store.token(
                grant_type=body.grant_type, client_id=body.client_id,
                client_secret=body.client_secret, audience=body.audience,
            )
        except InvalidClient as exc:
            if body.basic:
                raise InvalidClient(exc.description, basic=True) from None
            raise

    # --- ingress ------------------------------------------------------------------------------

    imports: list[tuple[str, type[Any], type[Any], Callable[..., dict[str, Any]], str]] = [
        ("clients", ClientIn, ClientOut, store.import_client, "Import one client"),
        ("initiatives", InitiativeIn, InitiativeOut, store.import_initiative,
         "Import one initiative (its client must exist)"),
        ("code-types", CodeTypeIn, CodeTypeOut, store.import_code_type, "Import one code type"),
        ("codes", CodeIn, CodeOut, store.import_code,
         "Import one code (its code type must exist)"),
    ]
    for kind, model_in, model_out, importer, summary in imports:
        _add_import_route(api, kind, model_in, model_out, importer, summary)

    @api.post(
        "/api/v1/customers/{customerId:seg}/initiatives/{initiativeExternalId:seg}/codes",
        name="set_code_range", operation_id="set_code_range", status_code=201,
        response_model=CodeRangeOut, tags=["ingress"],
        summary="Replace the code range of one initiative",
        responses=_problems(*_AUTH, 404, 422, *_FAULTS),
    )
    def set_code_range(
        customerId: str, initiativeExternalId: str, body: CodeRangeIn
    ) -> dict[str, Any]:
        return store.set_code_range(customerId, initiativeExternalId, body.model_dump())

    # --- egress -------------------------------------------------------------------------------

    @api.get(
        "/api/v2/customers/{customerId:seg}/entries/export", name="export_entries",
        operation_id="export_entries", response_model=list[ExportEntry], tags=["egress"],
        summary="Entries released in (releasedAfter, releasedOnOrBefore], export form",
        responses=_problems(400, *_AUTH, *_FAULTS),
    )
    def export_entries(
        customerId: str,
        releasedAfter: Annotated[str, Query(
            pattern=DATETIME_PATTERN,
            description="Exclusive lower bound of release time, ISO 8601 (naive = UTC).")],
        releasedOnOrBefore: Annotated[str, Query(
            pattern=DATETIME_PATTERN,
            description="Inclusive upper bound of release time, ISO 8601 (naive = UTC).")],
    ) -> Response:
        try:
            after, before = parse_datetime(releasedAfter), parse_datetime(releasedOnOrBefore)
        except ValueError as exc:
            raise BadRequest(str(exc), slug="invalid-request") from exc
        chunks = store.iter_export_entries(customerId, after, before)  # checks the window

        def body() -> Iterator[bytes]:
            # one JSON array, sent a chunk of entries at a time: a large window is never
            # held whole in memory
            yield b"["
            first = True
            for chunk in chunks:
                if chunk:
                    if not first:
                        yield b","
                    yield _dumps(chunk)[1:-1]
                    first = False
            yield b"]"

        return StreamingResponse(body(), media_type="application/json")

    @api.get(
        "/api/v1/customers/{customerId:seg}/entries/release-pending", name="release_pending",
        operation_id="release_pending", response_model=list[PendingEntry], tags=["egress"],
        summary="Entries still pending, detailed form",
        responses=_problems(*_AUTH, *_FAULTS),
    )
    def release_pending(customerId: str) -> Response:
        return Response(_dumps(store.release_pending(customerId)), media_type="application/json")

    ack_path = "/api/v1/customers/{customerId:seg}/users/{userId:seg}/entries/{entryId:seg}"

    @api.post(
        ack_path + "/release-succeeded", name="release_succeeded",
        operation_id="release_succeeded", response_model=AckOut, tags=["egress"],
        summary="Acknowledge a pending entry as written to the billing system",
        responses=_problems(*_AUTH, 404, 409, 422, *_FAULTS),
    )
    def release_succeeded(
        customerId: str, userId: str, entryId: str, body: AckSucceededIn
    ) -> dict[str, Any]:
        return store.release_succeeded(customerId, userId, entryId, body.model_dump())

    @api.post(
        ack_path + "/release-failed", name="release_failed", operation_id="release_failed",
        response_model=AckOut, tags=["egress"],
        summary="Acknowledge a pending entry as failed to write",
        responses=_problems(*_AUTH, 404, 409, 422, *_FAULTS),
    )
    def release_failed(
        customerId: str, userId: str, entryId: str, body: AckFailedIn
    ) -> dict[str, Any]:
        return store.release_failed(customerId, userId, entryId, body.model_dump())

    @api.get(
        "/api/v1/customers/{customerId:seg}/users/{userId:seg}", name="get_user",
        operation_id="get_user", response_model=UserOut, tags=["egress"],
        summary="User record", responses=_problems(*_AUTH, 404, *_FAULTS),
    )
    def get_user(customerId: str, userId: str) -> dict[str, Any]:
        return store.get_user(customerId, userId)

    # --- starring -----------------------------------------------------------------------------

    props = "/api/v1/public/customers/{customerId:seg}/initiative-props"
    star_responses = _problems(400, *_AUTH, 404, 409, *_FAULTS)

    @api.post(
        props + "/star", name="star", operation_id="star", status_code=207,
        response_model=StarResponse, response_model_exclude_none=True, tags=["starring"],
        summary="Star initiatives for a user", responses=star_responses,
    )
    def star(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {"response": store.star(customerId, body.model_dump(),
                                       item_fault=faults.item_fails)}

    @api.post(
        props + "/unstar", name="unstar", operation_id="unstar", status_code=207,
        response_model=StarResponse, response_model_exclude_none=True, tags=["starring"],
        summary="Unstar initiatives for a user", responses=star_responses,
    )
    def unstar(customerId: str, body: StarRequest) -> dict[str, Any]:
        return {"response": store.unstar(customerId, body.model_dump(),
                                         item_fault=faults.item_fails)}

    @api.get(
        props + "/starred", name="starred", operation_id="starred", response_model=StarredPage,
        tags=["starring"], summary="One page of a user's starred initiatives",
        responses=star_responses,
    )
    def starred(
        customerId: str,
        timekeeperExternalId: Annotated[str, Query(min_length=1)],
        limit: Annotated[str, Query(
            pattern=r"^[1-9][0-9]{0,3}$",
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

    # --- administration -----------------------------------------------------------------------

    customer_path = "/customers/{customerId:seg}"
    user_path = customer_path + "/users/{userId:seg}"

    @admin.post(
        "/customers", name="admin_create_customer", operation_id="admin_create_customer",
        status_code=201, response_model=CustomerOut, summary="Create a customer and API client",
        responses=_problems(422),
    )
    def create_customer(body: Annotated[CustomerIn | None, Body()] = None) -> dict[str, Any]:
        return store.create_customer(body.name if body else None)

    @admin.post(
        customer_path + "/users", name="admin_create_user", operation_id="admin_create_user",
        status_code=201, response_model=UserOut, summary="Create a user",
        responses=_problems(404, 422),
    )
    def create_user(customerId: str, body: UserIn) -> dict[str, Any]:
        return store.create_user(customerId, body.model_dump())

    @admin.put(
        user_path + "/walls", name="admin_set_walls", operation_id="admin_set_walls",
        response_model=WallsOut, summary="Replace the initiatives the user has no access to",
        responses=_problems(404, 422),
    )
    def set_walls(customerId: str, userId: str, body: WallsIn) -> dict[str, Any]:
        return store.set_walls(customerId, userId, body.model_dump())

    @admin.post(
        user_path + "/entries", name="admin_create_entry", operation_id="admin_create_entry",
        status_code=201, response_model=EntryAdminOut, summary="Create an editable entry",
        responses=_problems(404, 422),
    )
    def create_entry(customerId: str, userId: str, body: EntryIn) -> dict[str, Any]:
        return store.create_entry(customerId, userId, body.model_dump())

    @admin.post(
        user_path + "/entries/{entryId:seg}/release", name="admin_release_entry",
        operation_id="admin_release_entry", response_model=EntryAdminOut,
        summary="The user releases an entry (editable or failed -> pending)",
        responses=_problems(404, 409, 422),
    )
    def release_entry(
        customerId: str, userId: str, entryId: str,
        body: Annotated[ReleaseIn | None, Body()] = None,
    ) -> dict[str, Any]:
        return store.release_entry(customerId, userId, entryId, body.model_dump() if body else None)

    @admin.post(
        user_path + "/product-initiatives", name="admin_create_product_initiative",
        operation_id="admin_create_product_initiative", status_code=201,
        response_model=ProductInitiativeOut,
        summary="Create an initiative inside the product, pinned for the user",
        responses=_problems(404, 422),
    )
    def create_product_initiative(
        customerId: str, userId: str, body: ProductInitiativeIn
    ) -> dict[str, Any]:
        return store.create_product_initiative(customerId, userId, body.model_dump())

    @admin.get(
        customer_path + "/records/{kind:seg}", name="admin_records", operation_id="admin_records",
        response_model=list[dict[str, Any]], summary="Every stored record of one kind",
        responses=_problems(400, 404),
    )
    def records(
        customerId: str, kind: Literal[RECORD_KINDS]  # type: ignore[valid-type]
    ) -> list[dict[str, Any]]:
        return store.records(customerId, kind)

    @admin.put(
        "/faults", name="admin_set_faults", operation_id="admin_set_faults",
        response_model=FaultsOut, summary="Set fault injection on interface routes",
        responses=_problems(422),
    )
    def set_faults(body: FaultsIn) -> dict[str, Any]:
        return faults.configure(
            rate=body.rate, statuses=list(body.statuses),
            retry_after_seconds=body.retryAfterSeconds, latency_ms=body.latencyMs,
            item_error_rate=body.itemErrorRate, seed=body.seed,
        )

    @admin.get(
        "/faults", name="admin_get_faults", operation_id="admin_get_faults",
        response_model=FaultsOut, summary="Fault injection settings and counters",
    )
    def get_faults() -> dict[str, Any]:
        return faults.snapshot()

    @admin.put(
        "/rate-limit", name="admin_set_rate_limit", operation_id="admin_set_rate_limit",
        response_model=RateLimitOut, summary="Set the rate limit of the interface routes",
        description="A token bucket per customer: `perSecond` tokens a second, at most "
        "`burst` stored (default: one second's worth); `perSecond: null` turns it off. Over "
        "the limit an interface request is answered 429 with an integer `Retry-After`.",
        responses=_problems(422),
    )
    def set_rate_limit(body: RateLimitIn) -> dict[str, Any]:
        return limit.configure(per_second=body.perSecond, burst=body.burst)

    @admin.get(
        "/rate-limit", name="admin_get_rate_limit", operation_id="admin_get_rate_limit",
        response_model=RateLimitOut, summary="Rate limit settings and counters",
    )
    def get_rate_limit() -> dict[str, Any]:
        return limit.snapshot()

    @admin.get(
        "/stats", name="admin_stats", operation_id="admin_stats", response_model=StatsOut,
        summary="Interface request counts per route template and method",
    )
    def get_stats() -> dict[str, Any]:
        return stats.snapshot()

    @admin.post(
        "/stats/reset", name="admin_reset_stats", operation_id="admin_reset_stats",
        response_model=StatsOut, summary="Reset the request counts",
    )
    def reset_stats() -> dict[str, Any]:
        stats.reset()
        return stats.snapshot()

    app.include_router(identity)
    app.include_router(api)
    app.include_router(admin)
    app.state.sandbox_routes = [*identity.routes, *api.routes, *admin.routes]
    install_handlers(app)
    app.add_middleware(
        _InterfaceMiddleware, routes=[*identity.routes, *api.routes], faults=faults, stats=stats,
        limit=limit,
    )
    app.add_middleware(_RequestGuard, max_body_bytes=max_body_bytes)  # outermost
    app.openapi = _openapi(app)  # type: ignore[method-assign]
    return app


def _add_import_route(
    router: APIRouter, kind: str, model_in: type[Any], model_out: type[Any],
    importer: Callable[..., dict[str, Any]], summary: str,
) -> None:
    """Add one ingress route; the five imports differ only in path, schema and store method."""

    def endpoint(customerId: str, body: model_in) -> dict[str, Any]:  # type: ignore[valid-type]
        return importer(customerId, body.model_dump())

    name = "import_" + kind.replace("-", "_")
    router.add_api_route(
        f"/api/v1/customers/{{customerId:seg}}/{kind}/import", endpoint, methods=["POST"],
        name=name, operation_id=name, status_code=201, response_model=model_out,
        tags=["ingress"], summary=summary + " (upsert by externalId)",
        responses=_problems(*_AUTH, 422, *_FAULTS),
    )
