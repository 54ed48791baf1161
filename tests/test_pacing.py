"""The pacer finds any limit: token buckets with small bursts, fixed windows, concurrency caps;
concurrent runs of one client share one budget; the headers help and are never needed."""

from __future__ import annotations

import threading
import time
from typing import Any

import pandas as pd
import pytest

from toolkit import Client
from toolkit.bulk.pacer import Budget, Budgets, Pacer, budgets_of, limit_hints
from toolkit.core.http import Reply, _retry_after

# margins: each case runs a few seconds against the session's sandbox (a thread of this
# process); finding the limit costs up to ~1 s of that, and a loaded machine delays wake-ups
# by several ms. The issue's own targets (90%, 5%) are measured on 20 s runs, with the sandbox
# in its own process, by bench/bench_pacing.py
SHARE = 0.85
REFUSED = 0.05


def _clients(n: int, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": [f"{prefix}-{i:05d}" for i in range(n)],
            "name": [f"Client {i}" for i in range(n)],
            "callSign": [f"{i:05d}" for i in range(n)],
            "description": "pacing",
        }
    )


def _client(sandbox: Any, **profile: Any) -> Client:
    creds = sandbox.admin.create_customer("Pacing firm")
    if profile:
        sandbox.admin.set_profile(customer_id=creds["customerId"], **profile)
    client = Client(creds["customerId"], creds["clientId"], creds["clientSecret"], sandbox.url,
                    sandbox.url, audience=creds["audience"], retries=3)
    client.connection.auth.secret_token()  # the token exchange is not timed
    return client


def _noted(client: Client) -> list[int | None]:
    """Every status the client's transport gets back (the token route aside)."""
    statuses: list[int | None] = []
    lock = threading.Lock()
    send = client.connection.transport.send

    def noting(*args: Any, **kwargs: Any) -> Reply:
        reply = send(*args, **kwargs)
        with lock:
            statuses.append(reply.status)
        return reply

    client.connection.transport.send = noting  # type: ignore[method-assign]
    return statuses


def _import(client: Client, rows: int, prefix: str = "PACE") -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    result = client.import_clients(_clients(rows, prefix), workers=8, progress=False)
    return rows / (time.perf_counter() - start), result


def _refused(statuses: list[int | None]) -> float:
    return sum(s in (429, 503) for s in statuses) / max(len(statuses), 1)


# -- against the sandbox -------------------------------------------------------------------------


def test_a_token_bucket_with_a_small_burst_is_found_and_kept(sandbox: Any) -> None:
    client = _client(sandbox, rateLimit={"kind": "token-bucket", "perSecond": 40, "burst": 4})
    statuses = _noted(client)
    rate, result = _import(client, 320)  # 8 s at the limit
    assert result["ok"].all()
    assert rate >= SHARE * 40, rate
    assert rate <= 1.1 * 40 + 4 / 8  # never above the limit (its burst aside)
    assert _refused(statuses) <= REFUSED, _refused(statuses)


def test_a_fixed_window_is_paced_at_its_quota_per_window(sandbox: Any) -> None:
    # the sandbox rounds Retry-After up to the second: a longer window loses less to it
    client = _client(sandbox, rateLimit={"kind": "fixed-window", "limit": 160,
                                         "windowSeconds": 4})
    statuses = _noted(client)
    rate, result = _import(client, 320)  # two windows' quota
    assert result["ok"].all()
    # the windows are the service's, not aligned to the run's start: two windows' quota takes
    # at most three windows (the first one partly gone), never more (a wasted window)
    assert rate >= 320 / (3 * 4), rate
    assert _refused(statuses) <= REFUSED, _refused(statuses)


@pytest.mark.parametrize("status", [429, 503])
def test_a_concurrency_cap_bounds_the_requests_in_flight_not_the_rate(
    sandbox: Any, status: int
) -> None:
    latency = {"p50Ms": 40}
    free = _client(sandbox, latency=latency)
    start = time.perf_counter()
    free.import_clients(_clients(120, "FREE"), workers=3, progress=False)
    limit = 120 / (time.perf_counter() - start)  # what 3 workers reach with no cap
    client = _client(sandbox, latency=latency,
                     rateLimit={"kind": "concurrency", "maxInFlight": 3, "status": status})
    statuses = _noted(client)
    rate, result = _import(client, round(4 * limit))  # about 4 s
    assert result["ok"].all()
    assert rate >= SHARE * limit, (rate, limit)
    assert _refused(statuses) <= REFUSED, _refused(statuses)
    budget = budgets_of(client.connection).all()[0]
    assert budget.limit is not None and budget.limit <= 4


def test_two_concurrent_runs_of_one_client_share_one_budget(sandbox: Any) -> None:
    client = _client(sandbox, rateLimit={"kind": "token-bucket", "perSecond": 40, "burst": 4})
    statuses = _noted(client)
    results: dict[str, pd.DataFrame] = {}

    def run(prefix: str) -> None:
        results[prefix] = client.import_clients(_clients(160, prefix), workers=8,
                                                progress=False)

    threads = [threading.Thread(target=run, args=(p,)) for p in ("A", "B")]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    combined = 320 / (time.perf_counter() - start)
    assert all(r["ok"].all() for r in results.values())
    assert combined <= 40 * 1.1 + 4 / 8, combined  # together within the one limit
    assert combined >= SHARE * 40, combined
    assert _refused(statuses) <= REFUSED, _refused(statuses)
    assert len(budgets_of(client.connection).all()) == 1


def test_rate_limit_headers_and_http_date_retry_after_are_read(sandbox: Any) -> None:
    client = _client(sandbox, rateLimit={"kind": "fixed-window", "limit": 60,
                                         "windowSeconds": 3},
                     rateLimitHeaders="ietf", retryAfter="http-date")
    reply = client.connection.send("user", path={"userId": "nobody"})
    assert reply.headers is not None and "ratelimit-policy" in reply.headers
    assert limit_hints(reply.headers).quota == 60
    statuses = _noted(client)
    rate, result = _import(client, 180)
    assert result["ok"].all()
    assert rate >= SHARE * 20, rate
    assert _refused(statuses) <= REFUSED


# -- the budget on a simulated clock -----------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_retry_after_pauses_every_run_of_the_budget() -> None:
    clock = _Clock()
    budget = Budget(clock=clock)
    ticket = budget.take()
    budget.answer(ticket, 429, retry_after=9.0)
    assert budget.delay() == pytest.approx(9.0)
    clock.now += 9.0
    assert budget.delay() == 0.0


def test_retry_after_zero_changes_nothing() -> None:
    budget = Budget(clock=_Clock())
    budget.answer(budget.take(), 429, retry_after=0.0)
    assert budget.phase == "start" and budget.rate is None


def test_a_refusal_with_others_in_flight_bounds_the_requests_in_flight() -> None:
    budget = Budget(clock=_Clock())
    budget.limit = None  # past the slow start
    tickets = [budget.take() for _ in range(5)]
    for ticket in tickets[:4]:
        budget.answer(ticket, 201)
    budget.answer(tickets[4], 429, retry_after=1.0)  # the fifth in flight was refused
    assert budget.limit == 4
    assert budget.rate is None  # a concurrency cap: no pace needed


def test_a_refusal_of_a_request_sent_alone_is_a_rate_limit() -> None:
    budget = Budget(clock=_Clock())
    budget.answer(budget.take(), 201)
    budget.answer(budget.take(), 429, retry_after=1.0)
    assert budget.limit is None and budget.phase == "seek" and budget.rate is not None


def test_max_rate_caps_a_run() -> None:
    clock = _Clock()
    pacer = Pacer(max_rate=10, clock=clock)
    sent = 0
    while clock.now < 102.0:
        ticket = pacer.acquire()
        assert ticket is not None
        pacer.observe(ticket, Reply(201))
        sent += 1
        clock.now = max(clock.now + 0.001, pacer._next)  # jump to the run's next slot
    assert 19 <= sent <= 21


def test_budgets_are_per_connection_and_service() -> None:
    budgets = Budgets()
    assert budgets.get("http://a") is budgets.get("http://a")
    assert budgets.get("http://a") is not budgets.get("http://b")


def test_retry_after_as_an_http_date() -> None:
    assert _retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0) == 6.0
    assert _retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=20.0) == 0.0
    assert _retry_after("3") == 3.0
    assert _retry_after("not a date") is None


def test_x_ratelimit_headers_are_read() -> None:
    hints = limit_hints({"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0",
                         "X-RateLimit-Reset": "7"})
    assert (hints.quota, hints.remaining, hints.reset) == (100.0, 0.0, 7.0)
    assert limit_hints({"x-ratelimit-reset": "1000000050"}, now=1000000000).reset == 50.0
    assert limit_hints(None).quota is None
