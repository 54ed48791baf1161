"""Routes of egress: the v2 export, release-pending, the acknowledgements, the user record.

Besides interface.md's routes, the published batch release-succeeded (1 to 20 items, a 207
answer with one result per item) is served unless the customer's profile turns it off.

The export streams one JSON array a chunk of entries at a time, so a large window is never
held whole in memory. The rules are the store's (:mod:`toolkit.sandbox._models.egress`).
"""

from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, params
from fastapi.responses import StreamingResponse

from .._bodies import (
    DATETIME_PATTERN,
    AckFailedIn,
    AckOut,
    AckSucceededIn,
    BatchAckIn,
    BatchAckOut,
    ExportEntry,
    PendingEntry,
    UserOut,
    UserRecordOut,
    parse_datetime,
)
from .._exceptions import BadRequest
from .._store import Store
from .core import AUTH, FAULTS, dumps, problems

__all__ = ["ack_answer", "router"]

_ACK_PATH = "/api/v1/customers/{customerId:seg}/users/{userId:seg}/entries/{entryId:seg}"
_ACK_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Applied; no body (as the service publishes). When the profile's "
        "`ackAnswer` is `200-record`, the entry's state after the call (`AckOut`).",
    }
}


def ack_answer(style: str, state: dict[str, Any]) -> Response:
    """Answer an acknowledgement (already applied) as a profile's ``ackAnswer`` says.

    Args:
        style: ``200-empty`` (the default: 200, no body) or ``200-record`` (the entry's state
            after the call, as :class:`~toolkit.sandbox._bodies.AckOut`).
        state: The entry's state after the call.

    Returns:
        The response.

    >>> ack_answer("200-empty", {}).body
    b''
    >>> ack_answer("200-record", {"_id": "e", "userId": "u", "state": "failed",
    ...     "externalId": None, "errors": ["x"], "updatedAt": "t"}).body[:30]
    b'{"_id":"e","userId":"u","state'
    """
    if style == "200-empty":
        return Response(status_code=200)
    body = AckOut.model_validate(state).model_dump_json(by_alias=True)
    return Response(body, status_code=200, media_type="application/json")


def router(store: Store, *, dependencies: Sequence[params.Depends] = ()) -> APIRouter:
    """Return the egress router.

    Args:
        store: State and rules.
        dependencies: Dependencies of every route (the bearer check).

    Returns:
        The router (tag ``egress``).

    >>> import tempfile, os
    >>> len(router(Store(os.path.join(tempfile.mkdtemp(), "s.db"))).routes)
    6
    """
    egress = APIRouter(dependencies=list(dependencies), tags=["egress"])

    @egress.get(
        "/api/v2/customers/{customerId:seg}/entries/export",
        name="export_entries",
        operation_id="export_entries",
        response_model=list[ExportEntry],
        summary="Entries released in (releasedAfter, releasedOnOrBefore], export form",
        responses=problems(400, *AUTH, *FAULTS),
    )
    def export_entries(
        customerId: str,
        releasedAfter: Annotated[
            str,
            Query(
                pattern=DATETIME_PATTERN,
                description="Exclusive lower bound of release time, ISO 8601 (naive = UTC), "
                "year 0001 to 9999 (year 0000 is refused).",
            ),
        ],
        releasedOnOrBefore: Annotated[
            str,
            Query(
                pattern=DATETIME_PATTERN,
                description="Inclusive upper bound of release time, ISO 8601 (naive = UTC), "
                "year 0001 to 9999 (year 0000 is refused).",
            ),
        ],
    ) -> Response:
        try:
            after, before = parse_datetime(releasedAfter), parse_datetime(releasedOnOrBefore)
        except ValueError as exc:
            raise BadRequest(str(exc), slug="invalid-request") from exc
        chunks = store.iter_export_entries(customerId, after, before)  # checks the window

        def body() -> Iterator[bytes]:
            # one JSON array, sent a chunk of entries at a time
            yield b"["
            first = True
            for chunk in chunks:
                if chunk:
                    if not first:
                        yield b","
                    yield dumps(chunk)[1:-1]
                    first = False
            yield b"]"

        return StreamingResponse(body(), media_type="application/json")

    @egress.get(
        "/api/v1/customers/{customerId:seg}/entries/release-pending",
        name="release_pending",
        operation_id="release_pending",
        response_model=list[PendingEntry],
        summary="Entries still pending, detailed form",
        responses=problems(*AUTH, *FAULTS),
    )
    def release_pending(customerId: str) -> Response:
        return Response(dumps(store.release_pending(customerId)), media_type="application/json")

    @egress.post(
        _ACK_PATH + "/release-succeeded",
        name="release_succeeded",
        operation_id="release_succeeded",
        response_class=Response,
        summary="Acknowledge a pending entry as written to the billing system",
        responses={**_ACK_ANSWERS, **problems(*AUTH, 404, 409, 422, *FAULTS)},
    )
    def release_succeeded(
        customerId: str, userId: str, entryId: str, body: AckSucceededIn
    ) -> Response:
        store.check_body(customerId, body)
        state = store.release_succeeded(customerId, userId, entryId, body.model_dump())
        return ack_answer(store.profile(customerId)["ackAnswer"], state)

    @egress.post(
        "/api/v1/customers/{customerId:seg}/entries/release-succeeded/batch",
        name="release_succeeded_batch",
        operation_id="release_succeeded_batch",
        status_code=207,
        response_model=BatchAckOut,
        summary="Acknowledge 1 to 20 pending entries as written (published; not in the spec)",
        responses=problems(*AUTH, 404, 422, *FAULTS),
    )
    def release_succeeded_batch(customerId: str, body: BatchAckIn) -> Response:
        store.check_body(customerId, body)
        items = [item.model_dump() for item in body.request]
        answer = {"response": store.release_succeeded_batch(customerId, items)}
        return Response(dumps(answer), status_code=207, media_type="application/json")

    @egress.post(
        _ACK_PATH + "/release-failed",
        name="release_failed",
        operation_id="release_failed",
        response_class=Response,
        summary="Acknowledge a pending entry as failed to write",
        responses={**_ACK_ANSWERS, **problems(*AUTH, 404, 409, 422, *FAULTS)},
    )
    def release_failed(customerId: str, userId: str, entryId: str, body: AckFailedIn) -> Response:
        store.check_body(customerId, body)
        state = store.release_failed(customerId, userId, entryId, body.model_dump())
        return ack_answer(store.profile(customerId)["ackAnswer"], state)

    @egress.get(
        "/api/v1/customers/{customerId:seg}/users/{userId:seg}",
        name="get_user",
        operation_id="get_user",
        response_model=UserRecordOut | UserOut,
        response_model_exclude_unset=True,
        summary="User record (identity service)",
        description="The identity service's published user by default; the profile's "
        "`userRecord: legacy` answers `{_id, customerId, timekeeperExternalId, name, email}`.",
        responses=problems(*AUTH, 404, *FAULTS),
    )
    def get_user(customerId: str, userId: str) -> dict[str, Any]:
        return store.get_user(customerId, userId)

    return egress
