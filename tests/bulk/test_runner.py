"""The runner sends an import's batches as one run: a batch's calls that wait to be tried again
never leave the workers idle."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.bulk.test_bulk_stop import _clients
from toolkit import Client
from toolkit._core.http import Reply
from toolkit._ingress import plan


def _sends(client: Client) -> list[tuple[float, float, str, int | None]]:
    """Wrap the client's transport: every request's start, end, externalId and status."""
    log: list[tuple[float, float, str, int | None]] = []
    lock = threading.Lock()
    transport = client.connection.transport
    send = transport.send

    def noting(*args: Any, **kwargs: Any) -> Reply:
        start = time.monotonic()
        reply = send(*args, **kwargs)
        body = kwargs.get("json")
        if isinstance(body, dict) and "externalId" in body:
            with lock:
                log.append((start, time.monotonic(), body["externalId"], reply.status))
        return reply

    transport.send = noting  # type: ignore[method-assign]
    return log


def test_the_next_batch_is_sent_while_the_last_one_waits_for_a_retry_after(
    fresh_client: Client, sandbox, no_faults, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan, "BATCH", 40)
    frame = _clients(80, prefix="RA")
    log = _sends(fresh_client)
    sandbox.admin.set_faults(rate=0.15, statuses=[503], retry_after_seconds=1, seed=3)
    result = fresh_client.import_clients(frame, progress=False, workers=4)
    sandbox.admin.clear_faults()
    assert result["ok"].all() and len(result) == 80
    first = {f"RA-{i:05d}" for i in range(40)}
    refused = [end for _, end, key, status in log if key in first and status == 503]
    last_of_first = max(end for _, end, key, status in log if key in first and status == 201)
    first_of_second = min(start for start, _, key, _ in log if key not in first)
    assert refused, "no call of the first batch was refused: the test shows nothing"
    # a call refused with Retry-After 1 s holds its batch open for a second at least; the
    # workers meanwhile send the next batch
    assert first_of_second < last_of_first, (first_of_second, last_of_first)
    assert result["externalId"].tolist() == frame["externalId"].tolist()
    assert set(result["status"].astype(str)) == {"sent"}
