"""Routes of the five imports (clients, initiatives, code types, codes, code ranges).

The four record imports differ only in path, schema and store method: one table of them
drives one function (:func:`_add_import_route`). The rules are the store's
(:mod:`toolkit.sandbox._models.ingress`); the answer is the customer's profile's
``importAnswer`` (:func:`import_answer`).
"""

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, Response, params
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from .._bodies import (
    ClientIn,
    ClientOut,
    CodeIn,
    CodeOut,
    CodeRangeIn,
    CodeRangeOut,
    CodeTypeIn,
    CodeTypeOut,
    InitiativeIn,
    InitiativeOut,
)
from .._store import Store
from .core import AUTH, FAULTS, problems

__all__ = ["ACCEPTED_BODY", "import_answer", "router"]

ACCEPTED_BODY = {"status": "accepted"}
"""The body of an import answered 202 (``importAnswer: "202"``)."""
_ANSWER_TEXT = (
    "Answers 201 with no body (as the service publishes); the profile's "
    "`importAnswer` may answer the stored record (201 or 200), 204, or 202."
)


def import_answer(style: str, record: dict[str, Any], model: type[BaseModel]) -> Response:
    """Answer an import (already stored) as a profile's ``importAnswer`` says.

    ``201-empty`` (the default, as the service publishes) answers 201 with no body;
    ``201-record`` and ``200-record`` answer the stored record (as ``model``) with that
    status; ``204`` answers no body; ``202`` answers :data:`ACCEPTED_BODY`.

    Args:
        style: ``201-empty``, ``201-record``, ``200-record``, ``204`` or ``202``.
        record: The stored record.
        model: The record's response model.

    Returns:
        The response.

    >>> empty = import_answer("201-empty", {}, CodeRangeOut)
    >>> empty.status_code, empty.body
    (201, b'')
    >>> stored = {"initiativeExternalId": "M1", "codeExternalIds": ["L1"], "updatedAt": "t"}
    >>> answer = import_answer("200-record", stored, CodeRangeOut)
    >>> answer.status_code, answer.body
    (200, b'{"initiativeExternalId":"M1","codeExternalIds":["L1"],"updatedAt":"t"}')
    """
    if style in ("201-empty", "204"):
        return Response(status_code=int(style[:3]))
    if style == "202":
        return JSONResponse(ACCEPTED_BODY, status_code=202)
    # an optional field the record does not hold is not shown
    body = model.model_validate(record).model_dump_json(by_alias=True, exclude_unset=True)
    return Response(body, status_code=int(style[:3]), media_type="application/json")


def _answers(model: type[BaseModel]) -> dict[int | str, dict[str, Any]]:
    """The documented answers of an import: 201 with no body, and the record's shape (the
    ``200-record`` answer) so that the document holds it."""
    return {
        201: {"description": "Stored; no body (as the service publishes)."},
        200: {
            "model": model,
            "description": "Stored; the stored record, when the profile's "
            "`importAnswer` is `200-record` (`201-record` answers it with 201).",
        },
    }


def router(store: Store, *, dependencies: Sequence[params.Depends] = ()) -> APIRouter:
    """Return the ingress router: the four record imports and the code range (set, remove).

    Args:
        store: State and rules.
        dependencies: Dependencies of every route (the bearer check).

    Returns:
        The router (tag ``ingress``).

    >>> import tempfile, os
    >>> len(router(Store(os.path.join(tempfile.mkdtemp(), "s.db"))).routes)
    6
    """
    ingress = APIRouter(dependencies=list(dependencies))
    imports: list[tuple[str, type[Any], type[Any], Callable[..., dict[str, Any]], str]] = [
        ("clients", ClientIn, ClientOut, store.import_client, "Import one client"),
        (
            "initiatives",
            InitiativeIn,
            InitiativeOut,
            store.import_initiative,
            "Import one initiative (its client must exist)",
        ),
        ("code-types", CodeTypeIn, CodeTypeOut, store.import_code_type, "Import one code type"),
        ("codes", CodeIn, CodeOut, store.import_code, "Import one code (its code type must exist)"),
    ]
    for kind, model_in, model_out, importer, summary in imports:
        _add_import_route(ingress, store, kind, model_in, model_out, importer, summary)

    @ingress.post(
        "/api/v1/customers/{customerId:seg}/initiatives/{initiativeExternalId:seg}/codes",
        name="set_code_range",
        operation_id="set_code_range",
        status_code=201,
        response_class=Response,
        tags=["ingress"],
        summary="Set the code range of one initiative (replace, or add: a profile switch)",
        description=_ANSWER_TEXT,
        responses={**_answers(CodeRangeOut), **problems(*AUTH, 404, 422, *FAULTS)},
    )
    def set_code_range(customerId: str, initiativeExternalId: str, body: CodeRangeIn) -> Response:
        store.check_body(customerId, body)
        stored = store.set_code_range(customerId, initiativeExternalId, body.model_dump())
        return import_answer(store.profile(customerId)["importAnswer"], stored, CodeRangeOut)

    @ingress.delete(
        "/api/v1/customers/{customerId:seg}/initiatives/{initiativeExternalId:seg}/codes",
        name="remove_code_range",
        operation_id="remove_code_range",
        response_class=Response,
        tags=["ingress"],
        summary="Remove the code range of one initiative (as published)",
        description="Answers 200 with no body (as the service publishes).",
        responses={200: {"description": "Removed; no body."}, **problems(*AUTH, 404, *FAULTS)},
    )
    def remove_code_range(customerId: str, initiativeExternalId: str) -> Response:
        store.remove_code_range(customerId, initiativeExternalId)
        return Response(status_code=200)

    return ingress


def _add_import_route(
    router: APIRouter,
    store: Store,
    kind: str,
    model_in: type[BaseModel],
    model_out: type[Any],
    importer: Callable[..., dict[str, Any]],
    summary: str,
) -> None:
    """Add one import route; the four differ only in path, schema and store method."""

    def endpoint(customerId: str, body: BaseModel) -> Response:
        store.check_body(customerId, body)
        stored = importer(customerId, body.model_dump(exclude_unset=True))  # absent stays so
        return import_answer(store.profile(customerId)["importAnswer"], stored, model_out)

    endpoint.__annotations__["body"] = model_in  # FastAPI reads the body's model from here

    name = "import_" + kind.replace("-", "_")
    router.add_api_route(
        f"/api/v1/customers/{{customerId:seg}}/{kind}/import",
        endpoint,
        methods=["POST"],
        name=name,
        operation_id=name,
        status_code=201,
        response_class=Response,
        tags=["ingress"],
        summary=summary + " (upsert by externalId)",
        description=_ANSWER_TEXT,
        responses={**_answers(model_out), **problems(*AUTH, 422, *FAULTS)},
    )
