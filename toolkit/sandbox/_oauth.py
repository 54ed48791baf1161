"""Reading a token request the ways RFC 6749 allows: a JSON body (what the spec shows), an
``application/x-www-form-urlencoded`` body (section 4.4.2), and client credentials either in the
body or in HTTP Basic authentication (section 2.3.1).

Checks, in this order, each failing with the RFC 6749 section 5.2 error named:

1. the request is well formed: a JSON object or a form body, UTF-8 text without lone
   surrogates, every field a string given once, the four fields present, at most one client
   authentication method (``invalid_request``, 400);
2. ``grant_type`` is ``client_credentials`` (``unsupported_grant_type``, 400);
3. the client authenticates (``invalid_client``, 401; with ``WWW-Authenticate: Basic`` when
   Basic authentication was tried);
4. ``audience`` is the sandbox's (``invalid_request``, 400).

This module does 1; the store does 2 to 4.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from fastapi import Request

from ._bodies import lone_surrogate_path
from ._exceptions import InvalidClient, InvalidRequest

__all__ = ["FIELDS", "TokenRequest", "parse_basic", "read_token_request"]

FIELDS = ("grant_type", "client_id", "client_secret", "audience")
"""The token request's fields."""

_FORM = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class TokenRequest:
    """A well-formed token request (credentials from the body or from Basic authentication)."""

    grant_type: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str
    basic: bool = False


def parse_basic(header: str) -> tuple[str, str]:
    """Read RFC 6749 section 2.3.1 Basic credentials (each part form-urlencoded, then base64).

    Args:
        header: The ``Authorization`` header value.

    Returns:
        ``(client_id, client_secret)``.

    Raises:
        InvalidClient: The header cannot be read.

    >>> parse_basic("Basic " + base64.b64encode(b"app%3A1:s+cret").decode())
    ('app:1', 's cret')
    """
    scheme, _, value = header.strip().partition(" ")
    try:
        if scheme.lower() != "basic":
            raise ValueError(scheme)
        text = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        user, sep, password = text.partition(":")
        if not sep:
            raise ValueError("no colon")
        return unquote_plus(user, errors="strict"), unquote_plus(password, errors="strict")
    except (ValueError, binascii.Error, UnicodeError) as exc:
        raise InvalidClient("unreadable Basic client authentication", basic=True) from exc


def _fields_from_json(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeError) as exc:
        raise InvalidRequest("the body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise InvalidRequest("the body must be a JSON object")
    return data


def _fields_from_form(raw: bytes) -> dict[str, Any]:
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (ValueError, UnicodeError) as exc:
        raise InvalidRequest("the form body is not UTF-8 form-urlencoded text") from exc
    data: dict[str, Any] = {}
    for key, value in pairs:
        if value == "":  # RFC 6749 section 3.2: a parameter without a value is omitted
            continue
        if key in data and key in FIELDS:  # ... and none may be repeated
            raise InvalidRequest(f"{key} is given more than once")
        data[key] = value
    return data


async def read_token_request(request: Request) -> TokenRequest:
    """Read and check (step 1 above) the token request of ``request``.

    Args:
        request: The incoming request.

    Returns:
        The request's fields.

    Raises:
        InvalidRequest: The request is malformed.
        InvalidClient: Basic authentication was sent but cannot be read.
    """
    raw = await request.body()
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == _FORM:
        data = _fields_from_form(raw)
    elif media == "application/json" or media.endswith("+json"):
        data = _fields_from_json(raw)
    elif not raw.strip():
        data = {}
    else:
        raise InvalidRequest(f"the body must be JSON or {_FORM} (got {media or 'no Content-Type'})")
    if lone_surrogate_path(data) is not None:
        raise InvalidRequest("a field holds a lone UTF-16 surrogate, which is not Unicode text")
    bad = [name for name in FIELDS if name in data and not isinstance(data[name], str)]
    if bad:
        raise InvalidRequest(f"field(s) must be strings: {', '.join(bad)}")
    header = request.headers.get("authorization")
    basic = header is not None and header.strip().lower().startswith("basic")
    if basic:
        assert header is not None
        if "client_secret" in data:
            raise InvalidRequest(
                "the client authenticated twice (Basic and client_secret in the body)"
            )
        client_id, secret = parse_basic(header)
        if data.get("client_id", client_id) != client_id:
            raise InvalidRequest("client_id in the body differs from Basic authentication")
        data = {**data, "client_id": client_id, "client_secret": secret}
    missing = [name for name in FIELDS if name not in data]
    if missing:
        raise InvalidRequest(f"missing field(s): {', '.join(missing)}")
    return TokenRequest(
        grant_type=data["grant_type"],
        client_id=data["client_id"],
        client_secret=data["client_secret"],
        audience=data["audience"],
        basic=basic,
    )
