"""Checks of requests and answers against ``published.json``, the service's published contract.

The fixture (made by ``derive.py``) holds, per service, the operations of the interface as the
service's OpenAPI 3.0 documents publish them. :func:`request_problems` says what is wrong with a
request sent to one service's base address (an operation that service does not publish there, a
parameter or body field it does not declare, a missing required one, a wrong type, enum, bound or
format); :func:`answer_problems` does the same for an answer whose status has a declared schema.
An empty list is a request or answer the documents allow.

>>> op = operation("time", "POST", "/api/v1/customers/c1/clients/import")
>>> op["path"]
'/api/v1/customers/{customerId}/clients/import'
>>> request_problems("time", "POST", "/api/v1/customers/c1/clients/import", {},
...                  {"externalId": "C1", "name": "Acme", "callSign": "1001"})
["body: 'description' is a required property"]
>>> request_problems("time", "GET", "/api/v1/customers/c1/users/u1", {}, None)
['GET /api/v1/customers/c1/users/u1: the time service publishes no such operation']
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, FormatChecker

__all__ = [
    "FIXTURE",
    "INTERFACE_MD_WINS",
    "answer_problems",
    "contract",
    "operation",
    "request_problems",
]

FIXTURE = Path(__file__).with_name("published.json")

_formats = FormatChecker(formats=())


@_formats.checks("objectid")
def _objectid(value: object) -> bool:
    return not isinstance(value, str) or re.fullmatch(r"[0-9a-f]{24}", value) is not None


@_formats.checks("date-time")
@_formats.checks("iso-date-time")
def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value and parsed.tzinfo is not None


@_formats.checks("date")
@_formats.checks("iso-date")
def _date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


@_formats.checks("color-hex")
def _color(value: object) -> bool:
    return not isinstance(value, str) or re.fullmatch(r"[0-9a-fA-F]{6}", value) is not None


@cache
def contract() -> dict[str, list[dict[str, Any]]]:
    """The fixture's operations by service."""
    services: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))[
        "services"
    ]
    return services


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")


def operation(service: str, method: str, path: str) -> dict[str, Any] | None:
    """The published operation of ``service`` that ``method path`` is, or None."""
    for op in contract()[service]:
        if op["method"] == method and _pattern(op["path"]).match(path):
            return op
    return None


def json_schema(schema: Any, *, closed: bool = False) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema (``nullable``); ``closed`` refuses undeclared fields."""
    if isinstance(schema, list):
        return [json_schema(s, closed=closed) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: json_schema(v, closed=closed)
        for k, v in schema.items()
        if k not in ("nullable", "properties", "discriminator")
    }
    if "properties" in schema:
        out["properties"] = {
            k: json_schema(v, closed=closed) for k, v in schema["properties"].items()
        }
        if closed and "additionalProperties" not in schema:
            out["additionalProperties"] = False
    if schema.get("format") == "double":
        out.pop("format")
    if schema.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _problems(schema: Any, value: Any, where: str, *, closed: bool) -> list[str]:
    validator = Draft7Validator(json_schema(schema, closed=closed), format_checker=_formats)
    found = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        at = ".".join(str(p) for p in error.absolute_path)
        found.append(f"{where}{'.' + at if at else ''}: {error.message}")
    return found


#: where interface.md speaks and the published documents differ, the toolkit follows
#: interface.md (published.md, "Where interface.md and the published documents differ"):
#: (operation's path ends with, the problem's start) of each difference allowed
INTERFACE_MD_WINS: tuple[tuple[str, str], ...] = (
    # interface.md: semanticType "string or null", null "for any other kind"; published: not
    # nullable in the import body
    ("/code-types/import", "body.semanticType: None is not"),
)


def request_problems(
    service: str, method: str, path: str, query: dict[str, list[str]], body: Any
) -> list[str]:
    """What the published documents of ``service`` refuse in a request (empty: nothing).

    Body fields the operation does not declare are refused too: the toolkit sends only fields
    the service publishes.
    """
    op = operation(service, method, path)
    if op is None:
        return [f"{method} {path}: the {service} service publishes no such operation"]
    found = []
    declared = {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
    for name in query:
        if name not in declared:
            found.append(f"query: {name!r} is not a published parameter")
    for name, param in declared.items():
        if name not in query:
            if param["required"]:
                found.append(f"query: {name!r} is required")
            continue
        for value in query[name]:
            found += _problems(param["schema"], value, f"query {name}", closed=False)
    if op["requestBody"] is None:
        if body not in (None, b"", {}):
            found.append("body: the operation takes no body")
    elif body is None:
        if op["requestBodyRequired"]:
            found.append("body: required")
    else:
        found += _problems(op["requestBody"], body, "body", closed=True)
    return [
        p
        for p in found
        if not any(
            op["path"].endswith(end) and p.startswith(start) for end, start in INTERFACE_MD_WINS
        )
    ]


def answer_problems(service: str, method: str, path: str, status: int, body: Any) -> list[str]:
    """What the published documents of ``service`` refuse in an answer with a declared status.

    An answer whose status the documents do not declare (they declare no 4xx or 5xx), or
    declare without a schema (the imports' 201, the export's 200), is not checked.
    """
    op = operation(service, method, path)
    if op is None or op["responses"].get(str(status)) is None:
        return []
    return _problems(op["responses"][str(status)], body, f"answer {status}", closed=False)
