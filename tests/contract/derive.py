"""Derive ``published.json``, the contract fixture, from the service's published OpenAPI documents.

The documents are a public third-party copy (GitHub ``api-evangelist/laurel``, folder
``openapi/_original/``; see ``shared/spec/published.md``) and are not part of this repository.
The fixture keeps, for the operations of the interface only, what a contract needs: the path,
method, parameters, request body and answers by status, with every ``$ref`` resolved and every
description, title and example left out. Run it again when the documents change::

    python tests/contract/derive.py DIR_OF_THE_THREE_DOCUMENTS > tests/contract/published.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: service -> (document's file name, the operations of the interface it publishes)
OPERATIONS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "identity": (
        "laurel-identity-openapi-original.json",
        [
            ("post", "/api/v1/oauth/token"),
            ("get", "/api/v1/customers/{customerId}/users/{userId}"),
        ],
    ),
    "time": (
        "laurel-time-openapi-original.json",
        [
            ("post", "/api/v1/customers/{customerId}/clients/import"),
            ("post", "/api/v1/customers/{customerId}/initiatives/import"),
            ("post", "/api/v1/customers/{customerId}/code-types/import"),
            ("post", "/api/v1/customers/{customerId}/codes/import"),
            ("post", "/api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes"),
            ("get", "/api/v2/customers/{customerId}/entries/export"),
            ("get", "/api/v1/customers/{customerId}/entries/release-pending"),
            ("post", "/api/v1/customers/{customerId}/entries/release-succeeded/batch"),
            (
                "post",
                "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-succeeded",
            ),
            (
                "post",
                "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-failed",
            ),
        ],
    ),
    "ingestion": (
        "laurel-ingestion-openapi-original.json",
        [
            ("post", "/api/v1/customers/{customerId}/clients/import"),
            ("post", "/api/v1/customers/{customerId}/initiatives/import"),
            ("post", "/api/v1/customers/{customerId}/code-types/import"),
            ("post", "/api/v1/customers/{customerId}/codes/import"),
            ("post", "/api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes"),
            ("get", "/api/v1/customers/{customerId}/entries/release-pending"),
        ],
    ),
}

#: schema keywords kept; everything else (description, title, example, default...) is left out
KEPT = {
    "type",
    "format",
    "enum",
    "required",
    "properties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "nullable",
    "oneOf",
    "anyOf",
    "allOf",
    "additionalProperties",
    "discriminator",
    "pattern",
}


def resolve(node: Any, doc: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """``node`` with every ``$ref`` replaced by what it names and only :data:`KEPT` keywords."""
    if isinstance(node, list):
        return [resolve(item, doc, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        if ref in seen:  # a recursive schema: stop at an open object
            return {"type": "object"}
        target: Any = doc
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
        return resolve(target, doc, (*seen, ref))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEPT:
            continue
        if key == "properties":
            out[key] = {name: resolve(sub, doc, seen) for name, sub in value.items()}
        elif key == "discriminator":
            out[key] = {"propertyName": value["propertyName"]}
        else:
            out[key] = resolve(value, doc, seen)
    return out


def operation(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """One operation of a document, reduced to its contract."""
    op = doc["paths"][path][method]
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    answers: dict[str, Any] = {}
    for status, answer in op.get("responses", {}).items():
        content = answer.get("content", {}).get("application/json")
        answers[status] = resolve(content["schema"], doc) if content else None
    return {
        "method": method.upper(),
        "path": path,
        "deprecated": bool(op.get("deprecated", False)),
        "parameters": [
            {
                "name": p["name"],
                "in": p["in"],
                "required": bool(p.get("required", False)),
                "schema": resolve(p.get("schema", {}), doc),
            }
            for p in op.get("parameters", [])
        ],
        "requestBody": resolve(body["schema"], doc) if body else None,
        "requestBodyRequired": bool(op.get("requestBody", {}).get("required", False)),
        "responses": answers,
    }


def derive(folder: Path) -> dict[str, Any]:
    """The fixture: ``{"services": {service: [operation, ...]}}``."""
    services: dict[str, list[dict[str, Any]]] = {}
    for service, (name, ops) in OPERATIONS.items():
        doc = json.loads((folder / name).read_text(encoding="utf-8"))
        services[service] = [operation(doc, method, path) for method, path in ops]
    return {
        "source": "api-evangelist/laurel openapi/_original (the service's published documents)",
        "services": services,
    }


if __name__ == "__main__":
    print(json.dumps(derive(Path(sys.argv[1])), indent=1, sort_keys=True))
