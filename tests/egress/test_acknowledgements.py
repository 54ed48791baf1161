"""toolkit._egress.acknowledgements: the frame's ``errors`` are taken as given; a succeeded row
without ``externalId`` is sent without it; succeeded rows go through the batch route."""

from __future__ import annotations

import _thread
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.proxy import DroppingProxy
from toolkit import Client
from toolkit._egress.ack_batch import item_status
from toolkit._egress.acknowledgements import check_acknowledgements
from toolkit.errors import InputWarning, Interrupted, ValidationError
from toolkit.sandbox import Sandbox


def failed(*errors: object) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "userId": ["u1"] * len(errors),
            "entryId": [f"e{i}" for i in range(len(errors))],
            "outcome": ["failed"] * len(errors),
            "errors": list(errors),
        }
    )


def test_error_text_containing_a_semicolon_is_one_message() -> None:
    checked = check_acknowledgements(failed("rate missing; client closed"))
    assert checked.loc[0, "errors"] == ["rate missing; client closed"]


def test_error_list_stays_a_list_and_its_items_are_not_split() -> None:
    checked = check_acknowledgements(failed(["rate missing; see note", "client closed"]))
    assert checked.loc[0, "errors"] == ["rate missing; see note", "client closed"]


def test_error_text_is_split_only_on_an_explicit_separator() -> None:
    frame = failed("rate missing; client closed", ["a; b"])
    checked = check_acknowledgements(frame, separator=";")
    assert checked["errors"].tolist() == [["rate missing", "client closed"], ["a; b"]]


def test_a_batch_item_status_no_http_status_has_reads_as_none() -> None:
    assert item_status("MAYBE") is None


def test_a_refusal_says_what_the_entry_holds_and_may_have_landed_only_after_a_lost_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """issue 39: two definite 409s (the batch item's, then the per-entry route's) are a conflict
    naming the earlier acknowledgement, not "the first may have been applied"."""
    from toolkit._core.http import LOST, Reply
    from toolkit._egress import acknowledgements

    lost = "conflict (after an attempt whose answer was lost: it may have landed)"
    replies = [
        Reply(409, error="conflict", attempts=2),
        Reply(409, {"state": "succeeded", "externalId": "INV-9"}, "clash", attempts=2),
        Reply(404, error="no entry 'e2'"),
        Reply(409, error=lost, attempts=2, failure=LOST, lost=True),
        Reply(409, {"state": "editable"}, "not released"),
    ]
    monkeypatch.setattr(acknowledgements, "_send", lambda *args, **kwargs: replies)
    res = acknowledgements.acknowledge(None, failed("a", "b", "c", "d", "e"), progress=False)  # type: ignore[arg-type]
    assert res["status"].tolist() == ["conflict", "conflict", "failed", "unknown", "failed"]
    assert res["error"].tolist() == [
        "conflict: the service refuses it as conflicting with what the entry holds (an earlier"
        " acknowledgement, most likely; its answer does not say which): conflict",
        "conflict: the entry was acknowledged earlier as succeeded with externalId 'INV-9'; this"
        " row says failed, which the service refuses (it keeps the earlier acknowledgement)",
        "unknown entry: the service has no such entry for this user (no entry 'e2')",
        lost,
        "the entry is editable, not pending: not released",
    ]
    assert not res["error"].str.contains("may have been applied").any()
    assert res["error"].dtype == "string"


@pytest.mark.parametrize("blank", ["", "   ", None, []])
def test_a_failed_row_without_error_text_is_refused(blank: object) -> None:
    with pytest.raises(ValidationError) as info:
        check_acknowledgements(failed(blank))
    assert info.value.failure_cases["column"].tolist() == ["errors"]


# -- issue 25: the published contract (optional externalId, the batch route) -------------------

T0 = datetime(2026, 10, 1, tzinfo=UTC)
ACK_COLUMNS = ["outcome", "status", "ok", "httpStatus", "error", "attempts"]


def _succeeded(client: Client, sandbox: Sandbox, n: int) -> pd.DataFrame:
    """``n`` pending entries of the client's customer, as succeeded acknowledgements."""
    sandbox.store.seed_entries_bulk(
        client.customer_id,
        n,
        released_from=T0,
        released_to=T0 + timedelta(days=1),
        codes_per_entry=1,
    )
    pending = client.release_pending().entries
    return pd.DataFrame(
        {
            "userId": pending["userId"],
            "entryId": pending["_id"],
            "outcome": "succeeded",
            "externalId": [f"B-{i}" for i in range(len(pending))],
        }
    )


def _ack_requests(sandbox: Sandbox) -> dict[str, int]:
    routes = sandbox.admin.stats()["routes"]
    count = {"batch": 0, "single": 0}
    for key, value in routes.items():
        if key.endswith("/release-succeeded/batch"):
            count["batch"] += value["count"]
        elif key.endswith("/release-succeeded"):
            count["single"] += value["count"]
    return count


def _other_client(sandbox: Sandbox) -> Client:
    creds = sandbox.admin.create_customer("Second firm")
    return Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sandbox.url,
        sandbox.url,
        audience=creds["audience"],
        retries=3,
    )


def test_a_succeeded_row_without_external_id_is_sent_without_it_with_a_warning(
    fresh_client: Client, sandbox: Sandbox
) -> None:
    acks = _succeeded(fresh_client, sandbox, 3)
    acks.loc[1, "externalId"] = None
    with pytest.warns(InputWarning, match=r"1 succeeded row\(s\) without externalId \(rows 1\)"):
        res = fresh_client.acknowledge(acks, progress=False)
    assert res["status"].tolist() == ["sent"] * 3
    stored = {
        e["_id"]: e for e in sandbox.admin.records("entries", customer_id=fresh_client.customer_id)
    }
    held = [stored[e]["externalId"] for e in acks["entryId"]]
    assert held == ["B-0", None, "B-2"]
    assert {stored[e]["state"] for e in acks["entryId"]} == {"succeeded"}


def test_a_thousand_succeeded_rows_take_50_batch_requests_or_1000_single_ones(
    fresh_client: Client, sandbox: Sandbox
) -> None:
    batched = _succeeded(fresh_client, sandbox, 1000)
    single_client = _other_client(sandbox)
    single = _succeeded(single_client, sandbox, 1000)
    single_client.connection.ack_batch = False  # as after a 404 from the batch route

    sandbox.admin.reset_stats()
    started = time.perf_counter()
    with_batches = fresh_client.acknowledge(batched, progress=False)
    took = {"batch": time.perf_counter() - started}
    requests = {"batch": _ack_requests(sandbox)}

    sandbox.admin.reset_stats()
    started = time.perf_counter()
    one_by_one = single_client.acknowledge(single, progress=False)
    took["single"] = time.perf_counter() - started
    requests["single"] = _ack_requests(sandbox)

    print(
        f"\n1,000 succeeded acknowledgements: {requests} requests, "
        + ", ".join(f"{k} {v:.2f} s" for k, v in took.items())
    )
    assert requests["batch"] == {"batch": 50, "single": 0}
    assert requests["single"] == {"batch": 0, "single": 1000}
    assert fresh_client.connection.ack_batch is True
    pd.testing.assert_frame_equal(with_batches[ACK_COLUMNS], one_by_one[ACK_COLUMNS])
    assert with_batches["status"].eq("sent").all()
    assert with_batches["entryId"].tolist() == batched["entryId"].tolist()
    assert fresh_client.release_pending().entries.empty


def test_a_service_without_the_batch_route_gets_one_request_per_entry_and_it_is_remembered(
    fresh_client: Client, sandbox: Sandbox
) -> None:
    sandbox.admin.set_profile(customer_id=fresh_client.customer_id, batchAck=False)
    acks = _succeeded(fresh_client, sandbox, 45)
    sandbox.admin.reset_stats()
    res = fresh_client.acknowledge(acks.iloc[:30], progress=False)
    assert res["status"].eq("sent").all() and res["httpStatus"].eq(200).all()
    assert _ack_requests(sandbox) == {"batch": 1, "single": 30}  # the first batch finds out
    assert fresh_client.connection.ack_batch is False
    again = fresh_client.acknowledge(acks.iloc[30:], progress=False)
    assert again["status"].eq("sent").all()
    assert _ack_requests(sandbox) == {"batch": 1, "single": 45}


def test_batch_items_have_their_own_status_and_error(
    fresh_client: Client, sandbox: Sandbox
) -> None:
    acks = _succeeded(fresh_client, sandbox, 3)
    acks.loc[1, "entryId"] = "0" * 24  # no such entry
    first = fresh_client.acknowledge(acks.iloc[[0]], progress=False)
    assert first.loc[0, "status"] == "sent"
    sandbox.admin.reset_stats()
    res = fresh_client.acknowledge(acks.assign(externalId=["OTHER", "B-1", "B-2"]), progress=False)
    assert res["status"].tolist() == ["conflict", "failed", "sent"]
    assert res["httpStatus"].tolist() == [409, 404, 200]
    assert "acknowledged earlier as succeeded with externalId 'B-0'" in res.loc[0, "error"]
    assert res.loc[1, "error"].startswith("unknown entry") and "0" * 24 in res.loc[1, "error"]
    # the CONFLICT item went once more on the per-entry route, whose answer names the state
    assert _ack_requests(sandbox) == {"batch": 1, "single": 1}
    assert res["attempts"].tolist() == [2, 1, 1]


def test_a_journal_resumes_batches_without_sending_twice(
    fresh_client: Client, sandbox: Sandbox, tmp_path: Path
) -> None:
    acks = _succeeded(fresh_client, sandbox, 25)
    journal = tmp_path / "acks.jsonl"
    first = fresh_client.acknowledge(acks.iloc[:10], journal=journal, progress=False)
    assert first["status"].eq("sent").all()
    sandbox.admin.reset_stats()
    res = fresh_client.acknowledge(acks, journal=journal, progress=False)
    assert res["status"].tolist() == ["journaled"] * 10 + ["sent"] * 15
    assert _ack_requests(sandbox) == {"batch": 1, "single": 0}
    # the per-entry route reads the same journal lines
    fresh_client.connection.ack_batch = False
    sandbox.admin.reset_stats()
    again = fresh_client.acknowledge(acks, journal=journal, progress=False)
    assert again["status"].eq("journaled").all()
    assert _ack_requests(sandbox) == {"batch": 0, "single": 0}


def test_a_batch_whose_answer_was_lost_makes_every_row_of_it_unknown(sandbox: Sandbox) -> None:
    client = _other_client(sandbox)
    acks = _succeeded(client, sandbox, 30)
    sandbox.admin.reset_stats()
    with DroppingProxy(int(sandbox.url.rsplit(":", 1)[1]), before=1.0, after=0.0) as proxy:
        lossy = Client(
            client.customer_id,
            client.connection.settings.client_id,
            client.connection.settings.client_secret,
            sandbox.url,
            proxy.url,
            audience=sandbox.audience,
            retries=1,
            backoff=0.01,
        )
        res = lossy.acknowledge(acks, progress=False)
    assert res["status"].eq("unknown").all()
    assert res["httpStatus"].isna().all()
    # two batches (20, then the 10 held back while the first found out), each sent twice
    assert _ack_requests(sandbox) == {"batch": 4, "single": 0}
    assert res["attempts"].eq(2).all()
    assert client.release_pending().entries.empty  # they landed: only the answers were lost


def test_ctrl_c_during_batches_gives_a_row_per_input(
    fresh_client: Client, sandbox: Sandbox, no_faults: None
) -> None:
    acks = _succeeded(fresh_client, sandbox, 200)
    sandbox.admin.set_faults(latency_ms=400)
    # Ctrl+C 0.2 s after the first batch left (not 0.2 s after the call: on a loaded machine
    # that landed in the validation, before any batch)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    transport = fresh_client.connection.transport
    send, first = transport.send, threading.Lock()

    def sending(*args: Any, **kwargs: Any) -> Any:
        if first.acquire(blocking=False):  # (never released: the first request alone)
            timer.start()
        return send(*args, **kwargs)

    transport.send = sending  # type: ignore[method-assign]
    try:
        with pytest.raises(Interrupted) as info:
            fresh_client.acknowledge(acks, progress=False)
            time.sleep(5)  # the interrupt lands here if the run ended first (it must not)
    finally:
        timer.cancel()
    result = info.value.result
    assert result is not None and len(result) == 200
    assert list(result.index) == list(acks.index)
    assert set(result["status"]) <= {"sent", "unknown", "not_sent"}
    assert result["status"].eq("not_sent").sum() >= 180  # only the first batch had left


def test_every_status_name_the_batch_answer_publishes_maps_to_its_number() -> None:
    # the published enum lists 55 names, then their 55 numbers in the same order
    import json

    from toolkit._egress.ack_batch import item_status

    published = json.loads((Path(__file__).parents[1] / "contract" / "published.json").read_text())
    answer = published["services"]["time"][7]["responses"]["207"]["properties"]["response"]
    enum = answer["items"]["properties"]["status"]["enum"]
    names = [v for v in enum if isinstance(v, str)]
    numbers = [v for v in enum if isinstance(v, int)]
    assert len(names) == len(numbers) == 55
    assert {n: item_status(n) for n in names} == dict(zip(names, numbers, strict=True))


# -- issue 39 finding 4: acknowledgement outcomes that say what happened -----------------------


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        # published NestJS bodies do not say what the entry holds: a plain conflict, with the
        # service's message (the issue saw "sent 6, failed 186", each "may have been applied")
        ({"preset": "published", "ackRepeat": "409"}, {"sent": 6, "conflict": 186}),
        # bodies that name the state: a repeat of the same outcome is done, another a conflict
        ({"ackRepeat": "409"}, {"sent": 156, "conflict": 36}),
    ],
)
def test_a_reconcile_file_over_weeks_acknowledged_earlier_says_what_each_entry_holds(
    sandbox: Sandbox, profile: dict[str, str], expected: dict[str, int]
) -> None:
    from toolkit.sandbox import PROFILES

    client = _other_client(sandbox)
    switches = {**PROFILES.get(profile.get("preset", ""), {}), **profile}
    switches.pop("preset", None)
    sandbox.admin.set_profile(customer_id=client.customer_id, **switches)
    sandbox.store.seed_entries_bulk(
        client.customer_id, 192, released_from=T0, released_to=T0 + timedelta(days=21)
    )
    pending = client.release_pending().entries
    file = pd.DataFrame(
        {
            "userId": pending["userId"],
            "entryId": pending["_id"],
            "outcome": "succeeded",
            "externalId": [f"B-{i}" for i in range(192)],
        }
    )
    earlier = file.iloc[:186].copy()  # weeks acknowledged before: 150 alike, 30 with other ids,
    earlier.loc[150:179, "externalId"] = [f"OLD-{i}" for i in range(150, 180)]  # 6 failed
    earlier.loc[180:185, "outcome"] = "failed"
    earlier.loc[180:185, "externalId"] = None
    earlier["errors"] = [None] * 180 + [["no rate"]] * 6
    assert client.acknowledge(earlier, progress=False)["status"].eq("sent").all()

    res = client.acknowledge(file, progress=False)
    counts = {k: v for k, v in res["status"].value_counts().items() if v}
    print(f"\nissue 39 finding 4, {profile}: {counts}")
    assert counts == expected
    assert not res["error"].str.contains("may have", na=False).any()
    assert res["status"].iloc[186:].eq("sent").all() and res["error"].iloc[186:].isna().all()
    conflicts = res[res["status"].eq("conflict")]
    assert conflicts["error"].str.startswith("conflict: ").all()
    if "preset" not in profile:
        assert (
            res["error"]
            .iloc[:150]
            .str.endswith("(the requested state is in force: already done)")
            .all()
        )
        assert (
            "with externalId 'OLD-150'; this row says succeeded with externalId 'B-150'"
            in (res.loc[150, "error"])
        )
        assert "acknowledged earlier as failed with errors ['no rate']" in res.loc[180, "error"]
    else:  # the service's own message names what the entry holds
        assert "already acknowledged as succeeded (externalId 'OLD-150')" in res.loc[150, "error"]


def test_a_journaled_row_keeps_no_error(
    fresh_client: Client, sandbox: Sandbox, tmp_path: Path
) -> None:
    acks = _succeeded(fresh_client, sandbox, 2)
    journal = tmp_path / "acks.jsonl"
    fresh_client.acknowledge(acks, journal=journal, progress=False)
    again = fresh_client.acknowledge(acks, journal=journal, progress=False)
    assert again["status"].tolist() == ["journaled", "journaled"]
    assert again["error"].isna().all()
