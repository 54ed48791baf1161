"""Routes of the five imports (clients, initiatives, code types, codes, code ranges).

The four record imports differ only in path, schema and store method: one table of them
drives one function (:func:`_add_import_route`). The rules are the store's
(:mod:`toolkit.sandbox.models.ingress`); the answer is the customer's profile's
``importAnswer`` (:func:`import_answer`).
"""

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, Response, params
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ..bodies import (
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
from ..store import Store
from .core import AUTH, FAULTS, problems

__all__ = ["ACCEPTED_BODY", "import_answer", "router"]

ACCEPTED_BODY = {"status": "accepted"}
"""The body of an import answered 202 (``importAnswer: "202"``)."""


def import_answer(
    style: str, record: dict[str, Any], response: Response
) -> dict[str, Any] | Response:
    """Answer an import (already stored) as a profile's ``importAnswer`` says.

    ``201-record`` (the default) and ``200-record`` answer the stored record with that
    status; ``204`` answers no body; ``202`` answers :data:`ACCEPTED_BODY`.

    Args:
        style: ``201-record``, ``200-record``, ``204`` or ``202``.
        record: The stored record.
        response: The route's response, whose status a ``200-record`` answer sets.

    Returns:
        The record (FastAPI serializes it) or a whole response.

    >>> import_answer("204", {"_id": "x"}, Response()).status_code
    204
    >>> r = Response(); import_answer("200-record", {"_id": "x"}, r)["_id"], r.status_code
    ('x', 200)
    """
    if style == "204":
        return Response(status_code=204)
    if style == "202":
        return JSONResponse(ACCEPTED_BODY, status_code=202)
    if style == "200-record":
        response.status_code = 200
    return record


def router(store: Store, *, dependencies: Sequence[params.Depends] = ()) -> APIRouter:
    """Return the ingress router: the four record imports and the code range.

    Args:
        store: State and rules.
        dependencies: Dependencies of every route (the bearer check).

    Returns:
        The router (tag ``ingress``).

    >>> import tempfile, os
    >>> len(router(Store(os.path.join(tempfile.mkdtemp(), "s.db"))).routes)
    5
    """
    ingress = APIRouter(dependencies=list(dependencies))
    imports: list[tuple[str, type[Any], type[Any], Callable[..., dict[str, Any]], str]] = [
        ("clients", ClientIn, ClientOut, store.import_client, "Import one client"),
        ("initiatives", InitiativeIn, InitiativeOut, store.import_initiative,
         "Import one initiative (its client must exist)"),
        ("code-types", CodeTypeIn, CodeTypeOut, store.import_code_type, "Import one code type"),
        ("codes", CodeIn, CodeOut, store.import_code,
         "Import one code (its code type must exist)"),
    ]
    for kind, model_in, model_out, importer, summary in imports:
        _add_import_route(ingress, store, kind, model_in, model_out, importer, summary)

    @ingress.post(
        "/api/v1/customers/{customerId:seg}/initiatives/{initiativeExternalId:seg}/codes",
        name="set_code_range", operation_id="set_code_range", status_code=201,
        response_model=CodeRangeOut, tags=["ingress"],
        summary="Set the code range of one initiative (replace, or add: a profile switch)",
        responses=problems(*AUTH, 404, 422, *FAULTS),
    )
    def set_code_range(
        customerId: str, initiativeExternalId: str, body: CodeRangeIn, response: Response
    ) -> Any:
        stored = store.set_code_range(customerId, initiativeExternalId, body.model_dump())
        return import_answer(store.profile(customerId)["importAnswer"], stored, response)

    return ingress


def _add_import_route(
    router: APIRouter, store: Store, kind: str, model_in: type[BaseModel], model_out: type[Any],
    importer: Callable[..., dict[str, Any]], summary: str,
) -> None:
    """Add one import route; the four differ only in path, schema and store method."""

    def endpoint(customerId: str, body: BaseModel, response: Response) -> Any:
        stored = importer(customerId, body.model_dump())
        return import_answer(store.profile(customerId)["importAnswer"], stored, response)

    endpoint.__annotations__["body"] = model_in  # FastAPI reads the body's model from here

    name = "import_" + kind.replace("-", "_")
    router.add_api_route(
        f"/api/v1/customers/{{customerId:seg}}/{kind}/import", endpoint, methods=["POST"],
        name=name, operation_id=name, status_code=201, response_model=model_out,
        response_model_exclude_unset=True,  # an optional field not held is not shown
        tags=["ingress"], summary=summary + " (upsert by externalId)",
        responses=problems(*AUTH, 422, *FAULTS),
    )
