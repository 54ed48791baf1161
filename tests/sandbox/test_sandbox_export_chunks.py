"""The export is read and sent in chunks: order and content equal the one-piece answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import requests

from toolkit.sandbox import Sandbox

WIDE = ("2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z")
NONE = ("1990-01-01T00:00:00Z", "1990-01-02T00:00:00Z")


def test_chunks_keep_order_and_content_across_ties_and_boundaries(sandbox: Sandbox) -> None:
    store = sandbox.store
    creds = store.create_customer("Chunky")
    cid = creds["customerId"]
    start = datetime(2026, 3, 1, tzinfo=UTC)
    store.seed_entries_bulk(cid, 13, released_from=start, released_to=start + timedelta(hours=1))
    # ten released at the very same instant: the keyset paging must not skip or repeat ties
    tie = start + timedelta(minutes=30, milliseconds=1)
    store.seed_entries_bulk(cid, 10, released_from=tie, released_to=tie)
    whole = store.export_entries(cid, start - timedelta(days=1), start + timedelta(days=1))
    for batch in (1, 4, 7, 23, 100):
        chunks = list(
            store.iter_export_entries(
                cid, start - timedelta(days=1), start + timedelta(days=1), batch=batch
            )
        )
        assert all(0 < len(c) <= batch for c in chunks)
        assert [e for c in chunks for e in c] == whole
    assert len(whole) == 23 and len({e["_id"] for e in whole}) == 23
    assert sum(e["updatedAt"] == "2026-03-01T00:30:00.001Z" for e in whole) == 10


def test_streamed_answer_is_one_json_array(sandbox: Sandbox, sandbox_token: str) -> None:
    r = requests.get(
        f"{sandbox.url}/api/v2/customers/{sandbox.customer_id}/entries/export",
        params={
            "releasedAfter": "2000-01-01T00:00:00Z",
            "releasedOnOrBefore": "2100-01-01T00:00:00Z",
        },
        headers={"Authorization": f"Bearer {sandbox_token}"},
        timeout=30,
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert isinstance(body, list) and len(body) == len({e["_id"] for e in body}) > 0
    empty = requests.get(
        f"{sandbox.url}/api/v2/customers/{sandbox.customer_id}/entries/export",
        params={
            "releasedAfter": "1990-01-01T00:00:00Z",
            "releasedOnOrBefore": "1990-01-02T00:00:00Z",
        },
        headers={"Authorization": f"Bearer {sandbox_token}"},
        timeout=30,
    )
    assert empty.json() == []
