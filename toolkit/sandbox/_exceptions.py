"""Errors of the sandbox and the one place that turns them into HTTP responses.

Every rule of the store raises one of these; the app never builds an error body by hand.
Whole-request failures answer an RFC 9457 problem body (``application/problem+json``); the
token endpoint answers RFC 6749 section 5.2 bodies instead::

    Exception
    +-- SandboxError                 problem+json, carries status, title, type slug, headers
    |   +-- BadRequest        400    (also ValueError)   bad query, cursor, star/unstar body
    |   +-- Unauthorized      401    (also PermissionError)  with WWW-Authenticate: Bearer
    |   +-- Forbidden         403    (also PermissionError)  token of another customer
    |   +-- NotFound          404    (also LookupError)
    |   +-- Conflict          409
    |   +-- PayloadTooLarge   413    a body over the size limit
    |   +-- Unprocessable     422    (also ValueError)   bad body, unknown references
    |   +-- InjectedFault     429/500/503            fault injection, with Retry-After
    +-- OAuthError                   {"error": ..., "error_description": ...}
        +-- InvalidRequest           400 invalid_request (missing field, wrong audience)
        +-- UnsupportedGrantType     400 unsupported_grant_type
        +-- InvalidClient            401 invalid_client

:func:`install_handlers` registers the one handler for each family, plus handlers that give
FastAPI's own validation errors and unknown routes (404/405) problem bodies too.

No error body echoes more than :data:`MAX_ECHO` characters of any string (a 10 MB id sent by
mistake comes back as its prefix and ``…``), and a lone surrogate is never echoed (it is
replaced by U+FFFD), so an error body can always be encoded.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "InjectedFault",
    "InvalidClient",
    "InvalidRequest",
    "MAX_ECHO",
    "NESTJS_ERRORS",
    "NotFound",
    "OAuthError",
    "PayloadTooLarge",
    "SandboxError",
    "Unauthorized",
    "Unprocessable",
    "UnsupportedGrantType",
    "install_handlers",
    "problem_type",
    "render_error_body",
    "safe_body",
]

_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_ECHO = 200
"""Longest string (in characters) an error body carries; longer ones are cut and end in ``…``."""

PROBLEM_MEDIA_TYPE = "application/problem+json"
"""Media type of every whole-request error body except the token endpoint's."""

_TYPE_PREFIX = "tag:timebill-toolkit.sandbox,2025:problem:"
_log = logging.getLogger("toolkit.sandbox")

#: Route names whose request validation failures are 400 (the spec's "bounds" errors)
#: rather than 422. Query and path parameter failures are 400 on every route.
BAD_REQUEST_ROUTES = frozenset({"star", "unstar"})
#: Route name of the token endpoint, whose errors follow RFC 6749 instead of RFC 9457.
TOKEN_ROUTE = "token"


def safe_body(value: Any) -> Any:
    """Return an error body fit to send: every string cut to :data:`MAX_ECHO` characters and
    free of lone surrogates.

    Args:
        value: A JSON-like value (dicts, lists, strings, numbers).

    Returns:
        The same structure with its strings made safe.

    >>> safe_body({"detail": "x" * 500})["detail"][-3:]
    'xx…'
    >>> safe_body(["a\\ud800"]) == ["a\\ufffd"]
    True
    """
    if isinstance(value, str):
        if len(value) > MAX_ECHO:
            value = value[: MAX_ECHO - 1] + "…"
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {safe_body(k): safe_body(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_body(v) for v in value]
    return value


def problem_type(slug: str) -> str:
    """Return the problem ``type`` URI for a slug (a ``tag:`` URI: it names, it does not resolve).

    Args:
        slug: Short kebab-case name of the problem.

    Returns:
        The URI used in the ``type`` member of the problem body.

    >>> problem_type("unknown-reference")
    'tag:timebill-toolkit.sandbox,2025:problem:unknown-reference'
    """
    return _TYPE_PREFIX + slug


class SandboxError(Exception):
    """A whole-request failure, rendered as an RFC 9457 problem body.

    Args:
        detail: Human-readable explanation of this occurrence.
        slug: Overrides the class's problem type slug.
        title: Overrides the class's title.
        headers: Extra response headers.
        **extra: Extension members of the problem body (for example ``errors``).

    >>> err = NotFound("no user 'u1'", userId="u1")
    >>> (err.status, err.to_problem("/x")["userId"])
    (404, 'u1')
    """

    status: int = 500
    title: str = "Internal server error"
    slug: str = "internal-error"

    def __init__(
        self,
        detail: str,
        *,
        slug: str | None = None,
        title: str | None = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if slug is not None:
            self.slug = slug
        if title is not None:
            self.title = title
        self.headers: dict[str, str] = dict(headers or {})
        self.extra: dict[str, Any] = extra

    @property
    def type(self) -> str:
        """The problem ``type`` URI."""
        return problem_type(self.slug)

    def to_problem(self, instance: str) -> dict[str, Any]:
        """Return the RFC 9457 body for this error.

        Args:
            instance: The request path the problem occurred on.

        Returns:
            ``{type, title, status, detail, instance, ...extension members}``.

        >>> Conflict("already pending").to_problem("/e/1")["status"]
        409
        """
        body = {
            "type": self.type,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "instance": instance,
        }
        body.update(self.extra)
        return body


class BadRequest(SandboxError, ValueError):
    """400: a query parameter, cursor or star/unstar body outside its bounds."""

    status = 400
    title = "Bad request"
    slug = "bad-request"


class Unauthorized(SandboxError, PermissionError):
    """401: bearer token missing, unknown or expired; carries ``WWW-Authenticate``."""

    status = 401
    title = "Unauthorized"
    slug = "unauthorized"

    def __init__(self, detail: str, *, error: str | None = "invalid_token") -> None:
        challenge = 'Bearer realm="sandbox"'
        if error:
            challenge += f', error="{error}", error_description="{detail}"'
        super().__init__(detail, headers={"WWW-Authenticate": challenge})


class Forbidden(SandboxError, PermissionError):
    """403: the token belongs to another customer than the path's ``customerId``."""

    status = 403
    title = "Forbidden"
    slug = "forbidden"


class NotFound(SandboxError, LookupError):
    """404: the addressed resource does not exist for the customer."""

    status = 404
    title = "Not found"
    slug = "not-found"


class Conflict(SandboxError):
    """409: the request conflicts with the resource's state."""

    status = 409
    title = "Conflict"
    slug = "conflict"


class PayloadTooLarge(SandboxError):
    """413: the request body is larger than the sandbox's limit."""

    status = 413
    title = "Content too large"
    slug = "content-too-large"


class Unprocessable(SandboxError, ValueError):
    """422: a body that breaks a field rule or names records that do not exist."""

    status = 422
    title = "Unprocessable content"
    slug = "unprocessable"


class InjectedFault(SandboxError):
    """429, 500 or 503 answered by fault injection before any work was done.

    Args:
        status: 429, 500 or 503.
        retry_after: Seconds for ``Retry-After`` (sent on 429 and 503 only); None sends none.

    >>> InjectedFault(503, retry_after=2).headers
    {'Retry-After': '2'}
    """

    slug = "injected-fault"

    def __init__(self, status: int, *, retry_after: int | None = 1) -> None:
        self.status = status
        headers = (
            {"Retry-After": str(retry_after)}
            if status in (429, 503) and retry_after is not None
            else {}
        )
        super().__init__(
            "fault injected by the sandbox",
            title=HTTPStatus(status).phrase,
            headers=headers,
        )


class OAuthError(Exception):
    """A token endpoint failure, rendered as RFC 6749 section 5.2 JSON.

    Args:
        description: The ``error_description``.

    >>> InvalidClient("bad secret").to_body()
    {'error': 'invalid_client', 'error_description': 'bad secret'}
    """

    status: int = 400
    error: str = "invalid_request"

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description
        self.headers: dict[str, str] = {}

    def to_body(self) -> dict[str, str]:
        """Return ``{"error", "error_description"}``."""
        body: dict[str, str] = safe_body(
            {"error": self.error, "error_description": self.description}
        )
        return body


class InvalidRequest(OAuthError):
    """400 ``invalid_request``: a missing or mistyped field, or an unknown audience."""

    status = 400
    error = "invalid_request"


class UnsupportedGrantType(OAuthError):
    """400 ``unsupported_grant_type``: anything but ``client_credentials``."""

    status = 400
    error = "unsupported_grant_type"


class InvalidClient(OAuthError):
    """401 ``invalid_client``: unknown client id or wrong secret.

    Args:
        description: The ``error_description``.
        basic: The client tried HTTP Basic authentication: the answer then carries
            ``WWW-Authenticate: Basic`` (RFC 6749 section 5.2).

    >>> InvalidClient("bad secret", basic=True).headers
    {'WWW-Authenticate': 'Basic realm="sandbox"'}
    """

    status = 401
    error = "invalid_client"

    def __init__(self, description: str, *, basic: bool = False) -> None:
        super().__init__(description)
        if basic:
            self.headers = {"WWW-Authenticate": 'Basic realm="sandbox"'}


#: The ``error`` member of a NestJS error body: NestJS's names of the statuses.
NESTJS_ERRORS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def render_error_body(style: str, problem: bytes) -> tuple[bytes, str | None]:
    """Re-render a problem body in a profile's ``errorBody`` style.

    ``problem`` keeps the body as it is; ``message`` answers ``{"message": detail}`` JSON;
    ``text`` answers the detail as ``text/plain``; ``empty`` answers no body; ``nestjs``
    answers what a NestJS service (as the real one is) answers: ``{"statusCode", "message",
    "error"}`` JSON, whose ``message`` is a list of reasons (one per invalid field, as NestJS's
    validation pipe lists them) when the problem lists ``errors``, else the detail. The detail
    is the problem's ``detail`` (its ``title`` when it has none).

    Args:
        style: ``problem``, ``message``, ``text``, ``empty`` or ``nestjs``.
        problem: An RFC 9457 JSON body.

    Returns:
        The new body and its media type (None when there is no body).

    >>> render_error_body("message", b'{"title": "Conflict", "detail": "taken"}')
    (b'{"message": "taken"}', 'application/json')
    >>> render_error_body("empty", b'{"detail": "taken"}')
    (b'', None)
    >>> render_error_body("nestjs", b'{"status": 409, "detail": "taken"}')[0]
    b'{"statusCode": 409, "message": "taken", "error": "Conflict"}'
    >>> json.loads(render_error_body("nestjs", b'{"status": 422, "detail": "invalid", '
    ...     b'"errors": [{"in": "body", "field": "name", "detail": "Field required"}]}')[0])
    {'statusCode': 422, 'message': ['name: Field required'], 'error': 'Unprocessable Entity'}
    """
    if style == "problem":
        return problem, PROBLEM_MEDIA_TYPE
    if style == "empty":
        return b"", None
    try:
        parsed = json.loads(problem)
    except ValueError:
        parsed = {}
    if not isinstance(parsed, dict):
        parsed = {}
    detail = str(parsed.get("detail") or parsed.get("title") or "error")
    if style == "text":
        return detail.encode("utf-8"), "text/plain; charset=utf-8"
    if style == "nestjs":
        return _nestjs_body(parsed, detail), "application/json"
    return json.dumps({"message": detail}, ensure_ascii=False).encode("utf-8"), "application/json"


def _nestjs_body(problem: dict[str, Any], detail: str) -> bytes:
    """``{"statusCode", "message", "error"}`` of a problem (see :func:`render_error_body`)."""
    try:
        status = HTTPStatus(int(problem["status"]))
    except (KeyError, TypeError, ValueError):
        status = HTTPStatus.INTERNAL_SERVER_ERROR
    errors = problem.get("errors")
    message: str | list[str] = detail
    if isinstance(errors, list) and errors:
        message = [
            f"{e.get('field')}: {e.get('detail')}" if e.get("field") else str(e.get("detail"))
            for e in errors
            if isinstance(e, dict)
        ] or detail
    error = NESTJS_ERRORS.get(status.value, status.phrase)
    body = {"statusCode": status.value, "message": message, "error": error}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _problem_response(err: SandboxError, request: Request) -> JSONResponse:
    return JSONResponse(
        safe_body(err.to_problem(request.url.path)),
        status_code=err.status,
        headers=err.headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def _route_name(request: Request) -> str | None:
    route = request.scope.get("route")
    return getattr(route, "name", None)


def _field_errors(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    out = []
    for err in errors:
        loc = list(err.get("loc", ()))
        where = str(loc[0]) if loc else "body"
        field = ".".join(str(part) for part in loc[1:])
        detail = str(err.get("msg", "invalid"))
        if err.get("type") == "lone_surrogate":
            inner = str((err.get("ctx") or {}).get("path", ""))
            field = ".".join(p for p in (field, inner) if p)
        if err.get("type") == "json_invalid":
            field = ""
            reason = (err.get("ctx") or {}).get("error", "")
            detail = f"the body is not valid JSON ({reason})" if reason else "invalid JSON"
        out.append({"in": where, "field": field, "detail": detail})
    return out


async def _on_sandbox_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SandboxError)
    return _problem_response(exc, request)


async def _on_oauth_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OAuthError)
    return JSONResponse(
        exc.to_body(),
        status_code=exc.status,
        headers={"Cache-Control": "no-store", "Pragma": "no-cache", **exc.headers},
    )


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = _field_errors(exc.errors())
    name = _route_name(request)
    if name == TOKEN_ROUTE:
        fields = ", ".join(e["field"] or e["in"] for e in errors)
        return await _on_oauth_error(
            request, InvalidRequest(f"missing or invalid field(s): {fields}")
        )
    # Authentication comes before validation: a body FastAPI could not even parse must not
    # tell an anonymous caller anything but 401.
    auth = getattr(request.app.state, "authenticate_request", None)
    if auth is not None and name is not None and request.url.path.startswith("/api/"):
        try:
            auth(request)
        except SandboxError as err:
            return _problem_response(err, request)
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if any(e["in"] == "body" and not e["field"] for e in errors) and not (
        media == "application/json" or media.endswith("+json")
    ):
        errors = [e for e in errors if not (e["in"] == "body" and not e["field"])]
        errors.append(
            {
                "in": "body",
                "field": "",
                "detail": f"the body must be JSON sent with Content-Type: application/json "
                f"(got {media or 'no Content-Type'})",
            }
        )
    in_query = any(e["in"] in ("query", "path", "header", "cookie") for e in errors)
    cls: type[SandboxError] = (
        BadRequest if in_query or name in BAD_REQUEST_ROUTES else Unprocessable
    )
    fields = ", ".join(f"{e['in']}.{e['field']}" if e["field"] else e["in"] for e in errors)
    problem = cls(
        f"invalid request: {fields}",
        slug="invalid-request" if cls is BadRequest else "validation-failed",
        errors=errors,
    )
    return _problem_response(problem, request)


def _allowed_methods(request: Request) -> list[str]:
    methods: set[str] = set()
    routes = getattr(request.app.state, "sandbox_routes", None) or request.app.router.routes
    for route in routes:
        match, _ = route.matches({**request.scope, "method": "__none__"})
        if match != Match.NONE and getattr(route, "methods", None):
            methods.update(route.methods)
    return sorted(methods)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and _route_name(request) is not None:
        # FastAPI's answer to a body it cannot decode: report it like any invalid body.
        undecodable = {
            "type": "json_invalid",
            "loc": ("body",),
            "msg": str(exc.detail),
            "ctx": {"error": "the body could not be decoded"},
        }
        return await _on_validation_error(request, RequestValidationError([undecodable]))
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(_allowed_methods(request))
    phrase = HTTPStatus(exc.status_code).phrase
    detail = exc.detail if isinstance(exc.detail, str) else phrase
    if exc.status_code == 404 and detail == phrase:
        detail = f"no route for {request.url.path}"
    body = {
        "type": "about:blank",
        "title": phrase,
        "status": exc.status_code,
        "detail": detail,
        "instance": request.url.path,
    }
    return JSONResponse(
        safe_body(body),
        status_code=exc.status_code,
        headers=headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    _log.exception("unexpected error on %s %s", request.method, request.url.path)
    return _problem_response(SandboxError("unexpected error; see the sandbox log"), request)


def install_handlers(app: FastAPI) -> None:
    """Register the sandbox's exception handlers on ``app``.

    Args:
        app: The application; ``app.state.authenticate_request`` must be a callable that
            raises :class:`Unauthorized` or :class:`Forbidden` for a request.

    >>> from fastapi import FastAPI
    >>> install_handlers(FastAPI())
    """
    app.add_exception_handler(SandboxError, _on_sandbox_error)
    app.add_exception_handler(OAuthError, _on_oauth_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
