"""Routes of the five imports (clients, initiatives, code types, codes, code ranges).

The four record imports differ only in path, schema and store method: one table of them
drives one function (:func:`_add_import_route`). The rules are the store's
(:mod:`toolkit.sandbox.models.ingress`).
"""

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, params

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

__all__ = ["router"]


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
        _add_import_route(ingress, kind, model_in, model_out, importer, summary)

    @ingress.post(
        "/api/v1/customers/{customerId:seg}/initiatives/{initiativeExternalId:seg}/codes",
        name="set_code_range", operation_id="set_code_range", status_code=201,
        response_model=CodeRangeOut, tags=["ingress"],
        summary="Replace the code range of one initiative",
        responses=problems(*AUTH, 404, 422, *FAULTS),
    )
    def set_code_range(
        customerId: str, initiativeExternalId: str, body: CodeRangeIn
    ) -> dict[str, Any]:
        return store.set_code_range(customerId, initiativeExternalId, body.model_dump())

    return ingress


def _add_import_route(
    router: APIRouter, kind: str, model_in: type[Any], model_out: type[Any],
    importer: Callable[..., dict[str, Any]], summary: str,
) -> None:
    """Add one import route; the four differ only in path, schema and store method."""

    def endpoint(customerId: str, body: model_in) -> dict[str, Any]:  # type: ignore[valid-type]
        return importer(customerId, body.model_dump())

    name = "import_" + kind.replace("-", "_")
    router.add_api_route(
        f"/api/v1/customers/{{customerId:seg}}/{kind}/import", endpoint, methods=["POST"],
        name=name, operation_id=name, status_code=201, response_model=model_out,
        tags=["ingress"], summary=summary + " (upsert by externalId)",
        responses=problems(*AUTH, 422, *FAULTS),
    )
