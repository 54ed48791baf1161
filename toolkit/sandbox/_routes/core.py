"""What every route module of the sandbox shares: the path convertor, response tables, JSON.

- ``seg``: the convertor of every path parameter. The app routes on the path as sent
  (percent-encoded), so an id holding ``/`` sent as ``%2F`` is one segment; ``seg`` decodes it.
- :func:`problems`: the ``responses=`` table of a route's problem answers, one line per status.
- :data:`OAUTH2`: the ``clientCredentials`` security scheme the interface routes declare.
- :func:`bearer`: the token of an ``Authorization: Bearer`` header.
- :func:`dumps`: JSON bytes (orjson when installed).
- :data:`NOTE`: the scope key of the note the app's middlewares and the routes share (the
  customer an answer belongs to when its path names none, the rate limit's state).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, unquote

from fastapi import Request
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.security import OAuth2
from starlette.convertors import Convertor, register_url_convertor

from .._bodies import Problem

try:  # orjson is a toolkit dependency; the sandbox also works without it
    import orjson
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]  # optional: absent means json

__all__ = [
    "AUTH",
    "FAULTS",
    "NOTE",
    "OAUTH2",
    "RETRY_AFTER",
    "STATUS_TEXT",
    "TOKEN_PATH",
    "WWW_AUTHENTICATE",
    "bearer",
    "dumps",
    "problems",
]

TOKEN_PATH = "/api/v1/oauth/token"
"""Path of the token endpoint (identity service)."""
NOTE = "toolkit.sandbox.note"
"""Scope key of a dict the middlewares put on every interface request: ``customer`` (set by a
route whose path names no customer, such as the token route) and ``limit`` (the customer's rate
limit state, for the rate limit headers)."""


class _Segment(Convertor[str]):
    """One path segment as sent (``%2F`` stays inside it), percent-decoded for the route."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("seg", _Segment())

STATUS_TEXT = {
    400: "Bad request: a query parameter, cursor or identifier list outside its bounds.",
    401: "Missing, unknown or expired bearer token (see `WWW-Authenticate`).",
    403: "The token belongs to another customer than the path's `customerId`.",
    404: "Not found.",
    409: "Conflict with the resource's state.",
    413: "The body is larger than the sandbox's limit (4 MiB by default).",
    422: "Invalid body (every invalid field is listed in `errors`) or unknown references "
    "(listed in `unknownIds`).",
    429: "Too many requests (rate limit or fault injection); retry after `Retry-After` seconds.",
    500: "Internal error (or fault injection).",
    503: "Unavailable (fault injection); retry after `Retry-After` seconds.",
}
"""Description of each problem status in the OpenAPI document."""
FAULTS = (429, 500, 503)
"""Statuses fault injection (and the rate limit) can answer on every interface route."""
AUTH = (401, 403)
"""Statuses of the bearer check of every customer-scoped interface route."""
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer"},
    }
}
"""The ``Retry-After`` header of 429 and 503 answers, as OpenAPI documents it."""
WWW_AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": "Bearer challenge (RFC 6750).",
        "schema": {"type": "string"},
    }
}
"""The ``WWW-Authenticate`` header of 401 answers, as OpenAPI documents it."""

OAUTH2 = OAuth2(
    flows=OAuthFlows(clientCredentials=OAuthFlowClientCredentials(tokenUrl=TOKEN_PATH)),
    scheme_name="clientCredentials",
    description="OAuth 2.0 client credentials; send `Authorization: Bearer <access_token>`.",
    auto_error=False,
)
"""The security scheme of the interface routes (it documents; :func:`bearer` reads)."""


def dumps(value: Any) -> bytes:
    """Return ``value`` as compact UTF-8 JSON bytes (orjson when installed).

    Args:
        value: A JSON-ready value.

    Returns:
        The encoded bytes.

    >>> dumps({"a": [1, "é"]}).decode()
    '{"a":[1,"é"]}'
    """
    if orjson is not None:
        return bytes(orjson.dumps(value))
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Return a route's ``responses=`` entries: a problem body for each status.

    Args:
        *statuses: Keys of :data:`STATUS_TEXT`.

    Returns:
        ``{status: {"model": Problem, "description": ...}}``.

    >>> sorted(problems(404, 409))
    [404, 409]
    """
    return {s: {"model": Problem, "description": STATUS_TEXT[s]} for s in statuses}


def bearer(request: Request) -> str | None:
    """Return the token of the request's ``Authorization: Bearer`` header, if any.

    The scheme name is case-insensitive; any other scheme, or an empty token, is no token.

    Args:
        request: The request.

    Returns:
        The token, or None.

    >>> from starlette.requests import Request
    >>> bearer(Request({"type": "http", "headers": [(b"authorization", b"bearer abc")]}))
    'abc'
    """
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None
