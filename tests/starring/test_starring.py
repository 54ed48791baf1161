"""Starring as frames against the sandbox: per-item outcomes, chunking, whole-request failures,
paging through short and empty pages, and injected faults."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from toolkit import Client, ConflictError, NotFoundError, load_folder
from toolkit._starring.operations import (
    INITIATIVE_ACCESS_DENIED,
    INITIATIVE_INACTIVE,
    INITIATIVE_NOT_FOUND,
    ITEM_ERRORS,
)
from toolkit.errors import ConfigError, PaginationError

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture
def firm(fresh_client: Client, sandbox):  # noqa: ANN201
    """A fresh customer with the sample firm, two timekeepers and one ambiguous one."""
    assert fresh_client.onboard(SAMPLE, progress=False).ok
    cid = fresh_client.customer_id
    ann = sandbox.admin.create_user("TK-A", "Ann", "ann@x.example", customer_id=cid)
    sandbox.admin.create_user("TK-B", "Bob", "bob@x.example", customer_id=cid)
    sandbox.admin.create_user("TK-DUP", "One", "one@x.example", customer_id=cid)
    sandbox.admin.create_user("TK-DUP", "Two", "two@x.example", customer_id=cid)
    inits = load_folder(SAMPLE)["initiatives"]
    active = inits[inits["status"] == "active"]["externalId"].tolist()
    inactive = inits[inits["status"] == "inactive"]["externalId"].tolist()
    return {"client": fresh_client, "ann": ann, "active": active, "inactive": inactive}


def test_star_reports_each_item_with_its_status_and_code(firm, sandbox) -> None:
    client, ann, active = firm["client"], firm["ann"], firm["active"]
    walled = active[0]
    sandbox.admin.set_walls(ann["_id"], [walled], customer_id=client.customer_id)
    ids = [active[1], walled, firm["inactive"][0], "M-NOPE"]
    res = client.star("TK-A", ids, progress=False)
    assert res["initiativeExternalId"].tolist() == ids
    assert res["status"].tolist() == ["sent", "failed", "failed", "failed"]
    assert res["httpStatus"].tolist() == [200, 403, 422, 404]
    assert res["errorCode"].tolist()[1:] == [
        INITIATIVE_ACCESS_DENIED,
        INITIATIVE_INACTIVE,
        INITIATIVE_NOT_FOUND,
    ]
    assert pd.isna(res["errorCode"].iloc[0]) and pd.isna(res["error"].iloc[0])
    assert res["error"].iloc[1:].notna().all()
    assert res["ok"].tolist() == [True, False, False, False]
    assert client.starred("TK-A")["initiativeExternalId"].tolist() == [active[1]]


def test_duplicates_are_removed_in_first_seen_order_and_star_is_idempotent(firm) -> None:
    client, active = firm["client"], firm["active"]
    ids = [active[2], active[1], active[2], active[1], active[3]]
    res = client.star("TK-B", ids, progress=False)
    assert res["initiativeExternalId"].tolist() == [active[2], active[1], active[3]]
    again = client.star("TK-B", ids, progress=False)
    assert again["ok"].all()
    assert sorted(client.starred("TK-B")["initiativeExternalId"]) == sorted(set(ids))
    client.unstar("TK-B", [active[1]], progress=False)
    assert active[1] not in set(client.starred("TK-B")["initiativeExternalId"])


def test_250_ids_go_in_three_requests(firm, sandbox) -> None:
    client, active = firm["client"], firm["active"]
    ids = (active * 10)[:45] + [f"M-UNKNOWN-{i:03d}" for i in range(250)]
    sandbox.admin.reset_stats()
    res = client.star("TK-B", ids, progress=False)
    distinct = list(dict.fromkeys(ids))
    assert len(distinct) > 250 and len(res) == len(distinct)
    routes = sandbox.admin.stats()["routes"]
    sent = sum(v["count"] for k, v in routes.items() if k.endswith("/initiative-props/star"))
    assert sent == -(-len(distinct) // 100)
    assert (
        res.loc[res["initiativeExternalId"].str.startswith("M-UNKNOWN"), "httpStatus"] == 404
    ).all()


def test_whole_request_failures_become_rows_and_keep_other_timekeepers(firm) -> None:
    client, active = firm["client"], firm["active"]
    frame = pd.DataFrame(
        {
            "timekeeperExternalId": ["TK-A", "TK-GHOST", "TK-DUP", "TK-A", "TK-GHOST"],
            "initiativeExternalId": [active[4], active[4], active[4], active[5], active[5]],
        },
        index=[7, 8, 9, 10, 11],
    )
    res = client.star(frame, progress=False)
    assert list(res.index) == [7, 8, 9, 10, 11]
    assert res["httpStatus"].tolist() == [200, 404, 409, 200, 404]
    assert res["status"].tolist() == ["sent", "failed", "failed", "sent", "failed"]
    assert res.loc[8, "error"] and "TK-GHOST" in res.loc[8, "error"]
    assert res["ok"].tolist() == [True, False, False, True, False]


def test_per_item_500s_are_retried_on_their_own_like_whole_requests(
    firm, sandbox, no_faults
) -> None:
    client, active = firm["client"], firm["active"]
    sandbox.admin.set_faults(item_error_rate=0.3, seed=5)
    res = client.star("TK-A", active[:30], progress=False)
    sandbox.admin.clear_faults()
    assert (res["attempts"] >= 1).all()
    retried = res[res["attempts"] > 1]
    assert len(retried) > 0
    # the same policy as whole requests: up to `retries` more attempts, with backoff
    assert res["attempts"].max() <= 1 + client.connection.transport.retries
    assert set(res["httpStatus"]) <= {200, 500}
    # whatever still failed after its retries is reported with a message, never dropped
    assert len(res) == 30
    failed = res[res["httpStatus"] == 500]
    assert (failed["status"] == "failed").all() and failed["error"].notna().all()


def test_injected_whole_request_faults_lose_nothing(firm, sandbox, no_faults) -> None:
    client, active = firm["client"], firm["active"]
    client.connection.transport.retries, client.connection.transport.backoff = 10, 0.01
    sandbox.admin.set_faults(rate=0.2, statuses=[500, 503, 429], retry_after_seconds=0, seed=9)
    frame = pd.DataFrame(
        [(tk, i) for tk in ("TK-A", "TK-B") for i in active[:40]],
        columns=["timekeeperExternalId", "initiativeExternalId"],
    )
    res = client.star(frame, progress=False, workers=4)
    sandbox.admin.clear_faults()
    assert res["ok"].all() and len(res) == len(frame)
    assert len(client.starred("TK-A")) == 40


def test_starred_follows_the_cursor_through_short_and_empty_pages(firm, sandbox) -> None:
    client, ann, active = firm["client"], firm["ann"], firm["active"]
    cid = client.customer_id
    assert client.star("TK-A", active[:6], progress=False)["ok"].all()
    for name in ("Internal 1", "Internal 2", "Internal 3"):  # pinned raw props never listed
        sandbox.admin.create_product_initiative(ann["_id"], name, customer_id=cid)
    assert client.star("TK-A", active[6:8], progress=False)["ok"].all()
    sandbox.admin.set_walls(ann["_id"], [active[0]], customer_id=cid)  # lost access
    pages = list(client.starred_pages("TK-A", limit=3))
    sizes = [len(p) for p in pages]
    assert sum(sizes) == 7
    assert any(s < 3 for s in sizes[:-1]), sizes  # a short (or empty) page before the end
    whole = client.starred("TK-A", limit=3)
    assert whole["initiativeExternalId"].tolist() == active[1:8]
    assert whole["page"].is_monotonic_increasing
    many = client.starred_many(["TK-A", "TK-B", "TK-GHOST"], limit=2500)
    assert set(many["timekeeperExternalId"]) == {"TK-A", "TK-B", "TK-GHOST"}
    assert many.loc[many["timekeeperExternalId"] == "TK-GHOST", "error"].notna().all()


def test_an_empty_page_with_a_cursor_is_followed(firm, sandbox) -> None:
    client, ann = firm["client"], firm["ann"]
    for i in range(4):
        sandbox.admin.create_product_initiative(ann["_id"], f"P{i}", customer_id=client.customer_id)
    client.star("TK-A", firm["active"][:1], progress=False)
    pages = list(client.starred_pages("TK-A", limit=2))
    assert [len(p) for p in pages][:2] == [0, 0]
    assert sum(len(p) for p in pages) == 1


def test_an_unknown_timekeeper_s_list_is_a_404_row_as_star_makes_it(firm) -> None:
    client, active = firm["client"], firm["active"]
    starred = client.starred("TK-GHOST")
    assert starred["httpStatus"].tolist() == [404]
    assert starred["initiativeExternalId"].isna().all() and "TK-GHOST" in starred.loc[0, "error"]
    assert client.star("TK-GHOST", active[:1], progress=False)["httpStatus"].tolist() == [404]
    assert client.starred("TK-DUP")["httpStatus"].tolist() == [409]
    many = client.starred_many(["TK-GHOST"])
    pd.testing.assert_frame_equal(many, starred)


def test_the_starred_pages_of_unknown_and_ambiguous_timekeepers_raise_typed_errors(firm) -> None:
    with pytest.raises(NotFoundError):
        next(firm["client"].starred_pages("TK-GHOST"))
    with pytest.raises(ConflictError):
        next(firm["client"].starred_pages("TK-DUP"))


def test_a_repeating_cursor_stops_with_a_clear_error(firm, monkeypatch) -> None:
    client = firm["client"]
    monkeypatch.setattr(  # the sandbox never repeats a cursor: this is the one thing mocked
        client.connection,
        "call",
        lambda *a, **k: {"initiativeExternalIds": [], "nextCursor": "same"},
    )
    with pytest.raises(PaginationError, match="repeated"):
        client.starred("TK-A")


def test_every_item_error_code_has_an_explanation() -> None:
    assert set(ITEM_ERRORS) == {20080, 20081, 20083}
    assert all(text for text in ITEM_ERRORS.values())


def test_ids_read_from_a_spreadsheet_are_sent_as_their_digits(firm) -> None:
    frame = pd.DataFrame({"timekeeperExternalId": ["TK-A"], "initiativeExternalId": [1001.0]})
    res = firm["client"].star(frame, progress=False)
    assert res["initiativeExternalId"].tolist() == ["1001"]
    with pytest.raises(ConfigError):
        firm["client"].star(
            pd.DataFrame(
                {"timekeeperExternalId": ["TK-A", "TK-A"], "initiativeExternalId": ["M-1", None]}
            )
        )


def test_bad_listing_arguments_are_config_errors(firm) -> None:
    with pytest.raises(ConfigError):
        firm["client"].starred_many("TK-A")
    with pytest.raises(ConfigError):
        firm["client"].starred("TK-A", limit="bogus")
    with pytest.raises(ConfigError):
        firm["client"].starred("TK-A", limit=2501)


# -- a single request shows no progress bar ----------------------------------------------------


def test_a_single_star_request_shows_no_bar(
    fresh_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh_client.star("TK-NOBODY", ["I-1"])
    assert "1/1" not in capsys.readouterr().err


def test_a_lost_answer_is_unknown_with_its_error_and_no_http_status(
    firm, sandbox, no_faults
) -> None:
    client, active = firm["client"], firm["active"]
    client.star("TK-A", active[:1], progress=False)  # the token fetched already
    client.connection.transport.timeout = (5.0, 0.2)
    client.connection.transport.retries = 1
    sandbox.admin.set_faults(latency_ms=600)
    try:
        res = client.star("TK-A", active[1:3], progress=False)
    finally:
        sandbox.admin.clear_faults()
    assert res["status"].tolist() == ["unknown", "unknown"]
    assert res["httpStatus"].isna().all() and res["errorCode"].isna().all()
    assert res["error"].str.contains("read timeout").all() and not res["ok"].any()
    assert (res["attempts"] == 2).all()


# -- issue 39 finding 6: a service without the starring routes -----------------------------------


class _NoStarring:
    """A loopback time service that serves no path: every request is a web server's 404."""

    def __init__(self, body: bytes) -> None:
        import http.server
        import threading

        answer = body

        class Handler(http.server.BaseHTTPRequestHandler):
            def _no_path(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                text = answer.replace(b"{method}", self.command.encode())
                text = text.replace(b"{path}", self.path.split("?")[0].encode())
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            do_GET = do_POST = _no_path

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.timeout = 5
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _NoStarring:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.mark.parametrize(
    "body",
    [  # NestJS (as the real service is), Starlette/FastAPI
        b'{"statusCode": 404, "message": "Cannot {method} {path}", "error": "Not Found"}',
        b'{"detail": "Not Found"}',
    ],
)
def test_a_service_without_the_starring_routes_is_one_error_naming_the_route(
    fresh_client: Client, sandbox, body: bytes
) -> None:
    ids = [f"M-{i}" for i in range(150)]
    with _NoStarring(body) as service:
        client = Client(
            fresh_client.customer_id,
            fresh_client.settings.client_id,
            fresh_client.settings.client_secret,
            sandbox.url,  # tokens from the sandbox's identity service
            service.url,
            audience=sandbox.audience,
            retries=1,
        )
        for call in (
            lambda: client.star("TK-A", ids, progress=False),
            lambda: client.unstar("TK-A", ids, progress=False),
            lambda: client.starred("TK-A"),
            lambda: client.starred_many(["TK-A", "TK-B"]),
        ):
            with pytest.raises(NotFoundError) as info:
                call()
            text = str(info.value)
            assert "the service does not serve the" in text and "route" in text
            assert f"{service.url}/api/v1/public/customers/{client.customer_id}/" in text
            assert "initiative-props/" in text and "published document" in text


def test_an_unknown_timekeeper_is_still_a_row_per_item_not_a_missing_route(firm) -> None:
    res = firm["client"].star("TK-NOBODY", firm["active"][:2], progress=False)
    assert res["status"].tolist() == ["failed", "failed"]
    assert res["httpStatus"].tolist() == [404, 404]
