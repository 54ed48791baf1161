"""The Client: configuration, tokens, the HTTP layer's retries and the typed error tree."""

from __future__ import annotations

import inspect
import logging
import pickle
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit import Client
from toolkit._core.auth import Secret, TokenProvider
from toolkit._ingress.imports import import_table
from toolkit.errors import (
    ApiError,
    AuthError,
    ConfigError,
    ConflictError,
    NotFoundError,
    ToolkitError,
    TransportError,
)


def test_all_is_complete_and_every_name_resolves() -> None:
    public = {n for n in dir(toolkit) if not n.startswith("_")} - {"annotations"}
    assert set(toolkit.__all__) - {"__version__"} == public & set(toolkit.__all__)
    for name in toolkit.__all__:
        assert getattr(toolkit, name) is not None
    assert callable(toolkit.reconcile) and callable(toolkit.load_folder)


#: the second ways retired after one release (docs/jobs.md, "Removed"), by where they were
RETIRED: dict[str, tuple[object, str]] = {
    "toolkit": (toolkit, "acknowledge flatten_export flatten_pending"),
    "Client": (Client, "from_connection send call url urls transport auth workers client_id"),
    "toolkit.schemas": (toolkit.schemas, "check check_frame check_chunks CheckResult"),
}
JOBS_PAGE = Path(__file__).parents[1] / "docs" / "jobs.md"


def test_the_second_ways_retired_after_one_release_are_gone_and_on_the_jobs_page() -> None:
    removed = JOBS_PAGE.read_text(encoding="utf-8").split("### Removed")[1]
    for where, (owner, names) in RETIRED.items():
        for name in names.split():
            assert not hasattr(owner, name), f"{where}.{name}"
            assert f"`{where}.{name}`" in removed, f"{where}.{name}"


def test_the_client_docstring_lists_every_method_by_job() -> None:
    doc = inspect.getdoc(Client) or ""
    members = [n for n in dir(Client) if not n.startswith("_")]
    missing = [n for n in members if f":meth:`{n}`" not in doc and f":attr:`{n}`" not in doc]
    assert missing == []


def test_repr_and_str_never_show_secret_or_token(client: Client, sandbox) -> None:
    client.user(sandbox.admin.records("users")[0]["_id"])
    token = client.connection.auth.token()
    for text in (
        repr(client),
        str(client),
        repr(client.connection.auth),
        f"{client.connection.auth._secret}",
    ):
        assert sandbox.client_secret not in text
        assert token not in text
    pickled = pickle.dumps(Secret("hunter2"))
    assert b"hunter2" not in pickled
    assert pickle.loads(pickled).reveal() == "********"


def test_from_env_reads_the_env_file_the_sandbox_writes(sandbox, tmp_path, no_toolkit_env) -> None:
    path = sandbox.write_env(tmp_path / ".env")
    c = Client.from_env(path)
    assert c.customer_id == sandbox.customer_id
    body = c.connection.call("starred", params={"timekeeperExternalId": "TK-101"})
    assert "initiativeExternalIds" in body and "nextCursor" in body


def test_from_env_names_every_missing_variable(tmp_path, no_toolkit_env) -> None:
    with pytest.raises(ConfigError) as info:
        Client.from_env(tmp_path / "missing.env")
    for var in (
        "TOOLKIT_CUSTOMER_ID",
        "TOOLKIT_CLIENT_SECRET",
        "TOOLKIT_TIME_URL",
        "TOOLKIT_AUDIENCE",
    ):
        assert var in str(info.value)


def _token_requests(sandbox) -> int:  # noqa: ANN001
    routes = sandbox.admin.stats()["routes"]
    return sum(v["count"] for k, v in routes.items() if "oauth/token" in k)


def test_a_missing_audience_is_a_config_error_naming_it_before_any_request(
    sandbox, tmp_path
) -> None:
    sandbox.admin.reset_stats()
    creds = (
        sandbox.customer_id,
        sandbox.client_id,
        sandbox.client_secret,
        sandbox.url,
        sandbox.url,
    )
    for audience in (None, ""):
        with pytest.raises(ConfigError, match="TOOLKIT_AUDIENCE"):
            Client(*creds, audience=audience)
    env = {k: v for k, v in sandbox.env().items() if k != "TOOLKIT_AUDIENCE"}
    with pytest.raises(ConfigError, match="TOOLKIT_AUDIENCE"):
        Client.from_env(None, environ=env)
    with pytest.raises(ConfigError, match="TOOLKIT_AUDIENCE"):
        TokenProvider(sandbox.token_url, sandbox.client_id, sandbox.client_secret, "")
    assert _token_requests(sandbox) == 0 and sandbox.admin.stats()["total"] == 0
    # with it, the token request carries it and the service accepts it
    Client(*creds, audience=sandbox.audience).connection.auth.token()
    assert _token_requests(sandbox) == 1


def test_an_expires_in_given_as_a_double_sets_the_same_lifetime(sandbox) -> None:
    now = [0.0]
    tp = TokenProvider(
        sandbox.token_url,
        sandbox.client_id,
        sandbox.client_secret,
        sandbox.audience,
        clock=lambda: now[0],
    )
    send = tp._transport.send

    def as_double(*args: Any, **kwargs: Any) -> Any:
        reply = send(*args, **kwargs)
        reply.body["expires_in"] = float(reply.body["expires_in"])  # 86400.0, as published
        return reply

    tp._transport.send = as_double  # type: ignore[method-assign]
    first = tp.token()
    now[0] = 86400 - 301
    assert tp.token() == first and tp.fetches == 1
    now[0] = 86400 - 299
    assert tp.token() != first and tp.fetches == 2


def test_token_is_fetched_lazily_once_and_reused(fresh_client: Client, sandbox) -> None:
    assert fresh_client.connection.auth.fetches == 0
    fresh_client.users(["a", "b", "c"])
    assert fresh_client.connection.auth.fetches == 1


def test_token_is_refreshed_before_it_expires(sandbox) -> None:
    now = [0.0]
    tp = TokenProvider(
        sandbox.token_url,
        sandbox.client_id,
        sandbox.client_secret,
        sandbox.audience,
        clock=lambda: now[0],
    )
    first = tp.token()
    now[0] = 86400 - 301  # just before the refresh margin
    assert tp.token() == first and tp.fetches == 1
    now[0] = 86400 - 299
    assert tp.token() != first and tp.fetches == 2


def test_a_token_s_life_counts_from_its_request_not_its_late_answer(sandbox) -> None:
    now = [0.0]
    tp = TokenProvider(
        sandbox.token_url,
        sandbox.client_id,
        sandbox.client_secret,
        sandbox.audience,
        clock=lambda: now[0],
    )
    send = tp._transport.send

    def late(*args: Any, **kwargs: Any) -> Any:
        reply = send(*args, **kwargs)
        now[0] += 1000.0  # the answer took 1000 s to come back
        return reply

    tp._transport.send = late  # type: ignore[method-assign]
    first = tp.token()
    now[0] = 86400 - 301  # seconds after the request: just before the refresh margin
    assert tp.token() == first and tp.fetches == 1
    now[0] = 86400 - 299
    assert tp.token() != first and tp.fetches == 2


def test_a_401_drops_the_token_and_retries_once_with_a_fresh_one(fresh_client, sandbox) -> None:
    fresh_client.users(["x"])
    fresh_client.connection.auth._token = Secret("revoked-or-unknown-token")
    reply = fresh_client.connection.send("user", path={"userId": "nobody"})
    assert reply.status == 404
    assert fresh_client.connection.auth.fetches == 2


def test_wrong_secret_is_an_auth_error_that_does_not_hold_the_secret(sandbox) -> None:
    c = Client(
        sandbox.customer_id,
        sandbox.client_id,
        "wrong-secret-value",
        sandbox.url,
        sandbox.url,
        audience=sandbox.audience,
    )
    with pytest.raises(AuthError) as info:
        c.connection.call("user", path={"userId": "x"})
    assert info.value.status == 401
    assert "wrong-secret-value" not in str(info.value) + repr(info.value.problem)


def test_http_errors_are_typed_and_carry_status_and_problem(client: Client) -> None:
    with pytest.raises(NotFoundError) as info:
        client.connection.call("user", path={"userId": "0" * 24})
    err = info.value
    assert isinstance(err, LookupError) and isinstance(err, ToolkitError)
    assert err.status == 404 and isinstance(err.problem, dict)
    assert err.method == "GET" and err.url.endswith("/users/" + "0" * 24)
    with pytest.raises(ApiError) as info:
        client.connection.call(
            "starred", params={"timekeeperExternalId": "TK-001", "cursor": "garbage"}
        )
    assert info.value.status == 400


def test_another_customers_path_is_refused(client: Client, sandbox) -> None:
    creds = sandbox.admin.create_customer("Other")
    other = Client(
        creds["customerId"],
        client.settings.client_id,
        sandbox.client_secret,
        sandbox.url,
        sandbox.url,
        audience=sandbox.audience,
    )
    with pytest.raises(AuthError) as info:
        other.connection.call("user", path={"userId": "x"})
    assert info.value.status == 403


def test_no_answer_is_a_transport_error(unused_port: int) -> None:
    url = f"http://127.0.0.1:{unused_port}"
    c = Client("c", "i", "s", url, url, audience="a", retries=1, timeout=1)
    with pytest.raises(TransportError) as info:
        c.connection.call("user", path={"userId": "x"})
    assert isinstance(info.value, ConnectionError)


def test_injected_faults_are_retried_until_they_pass(client: Client, sandbox, no_faults) -> None:
    sandbox.admin.set_faults(rate=0.5, statuses=[500, 503, 429], retry_after_seconds=0, seed=3)
    user = sandbox.admin.records("users")[0]["_id"]
    frame = client.users([user] * 1 + ["0" * 24])
    assert frame.loc[0, "_id"] == user
    replies = [client.connection.send("user", path={"userId": user}) for _ in range(20)]
    assert all(r.status == 200 for r in replies)
    assert max(r.attempts for r in replies) > 1
    assert sandbox.admin.faults()["counters"]["injected"]


def test_conflict_maps_to_conflict_error() -> None:
    err = toolkit.errors.api_error_for(409, {"detail": "already failed"}, "POST", "/x")
    assert isinstance(err, ConflictError) and "already failed" in str(err)


def test_log_lines_never_hold_the_token(fresh_client: Client, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    fresh_client.users(["a"])
    token = fresh_client.connection.auth.token()
    assert token not in caplog.text
    assert fresh_client.connection.auth._secret.reveal() not in caplog.text
    assert "Bearer" not in caplog.text


def test_proxy_settings_apply_to_the_token_request_too(sandbox, monkeypatch, unused_port) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{unused_port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{unused_port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    through_dead_proxy = Client.from_env(None, environ=sandbox.env(), retries=0)
    with pytest.raises(TransportError):
        through_dead_proxy.connection.call("user", path={"userId": "x"})
    assert through_dead_proxy.connection.auth.fetches == 0
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    direct = Client.from_env(None, environ=sandbox.env(), retries=0)
    with pytest.raises(NotFoundError):
        direct.connection.call("user", path={"userId": "0" * 24})


# -- the facade: one source per operation ------------------------------------------------------

_SELF_OR_CONN = {"self", "conn"}


def _public_methods() -> dict[str, object]:
    return {
        name: member
        for name, member in vars(Client).items()
        if not name.startswith("_") and not isinstance(member, property)
    }


def _params(fn: object, drop: set[str]) -> list[tuple[str, object, object, object]]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    return [
        (p.name, p.kind, p.default, p.annotation)
        for p in sig.parameters.values()
        if p.name not in drop
    ]


def test_every_public_client_method_has_real_keywords_and_a_docstring() -> None:
    methods = _public_methods()
    assert {"import_clients", "import_code_ranges", "onboard", "close"} <= set(methods)
    for name in methods:
        method = getattr(Client, name)
        params = inspect.signature(method).parameters.values()
        variadic = [p.name for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        assert variadic == [], f"Client.{name} takes {variadic}"
        loose = [p.name for p in params if "Callable[...," in str(p.annotation)]
        assert loose == [], f"Client.{name} takes untyped callables {loose}"
        assert inspect.getdoc(method), f"Client.{name} has no docstring"
        assert ">>>" in inspect.getdoc(method), f"Client.{name} has no example"


def test_each_wrapped_method_shows_its_operations_parameters_and_docstring() -> None:
    wrapped = 0
    for name in _public_methods():
        method = getattr(Client, name)
        operation = getattr(method, "operation", None)
        if operation is None and method.__module__ != "toolkit._client":
            operation = method  # a function of no connection, used as it is (compact)
        if operation is None:
            continue
        wrapped += 1
        first = next(iter(inspect.signature(operation).parameters))
        assert _params(method, {"self"}) == _params(operation, {first} & _SELF_OR_CONN), name
        assert "conn:" not in (method.__doc__ or ""), name
        assert (
            inspect.signature(method).return_annotation
            == inspect.signature(operation).return_annotation
        )
    assert wrapped >= 15


@pytest.mark.parametrize("table", ["clients", "initiatives", "code_types", "codes", "code_ranges"])
def test_each_import_method_takes_import_tables_keywords_and_docstring(table: str) -> None:
    method = getattr(Client, f"import_{table}")
    assert method.__qualname__ == f"Client.import_{table}"
    only_ranges = set() if table == "code_ranges" else {"code_range_post"}
    assert _params(method, {"self"}) == _params(import_table, {"conn", "table", *only_ranges})
    doc = method.__doc__ or ""
    assert "one result row per input row" in doc and f"client.import_{table}(" in doc
    assert "table:" not in doc and "conn:" not in doc


def test_import_methods_send_to_their_own_table(fresh_client: Client, tmp_path) -> None:
    frame = pd.DataFrame(
        [{"externalId": "C-1", "name": "Acme", "callSign": "1", "description": "Widgets"}]
    )
    dry = fresh_client.import_clients(frame, dry_run=True)
    assert dry["url"].iloc[0] == fresh_client.connection.url("import_clients")
    result = fresh_client.import_clients(frame, progress=False, journal=tmp_path / "j.jsonl")
    assert result["ok"].all()


def test_a_client_closes_its_sessions_and_works_in_a_with_block(sandbox) -> None:
    with Client.from_env(None, environ=sandbox.env()) as c:
        c.users(["a"])
        assert c.connection.transport._sessions
    assert c.connection.transport._sessions == []
    assert c.connection.call("starred", params={"timekeeperExternalId": "TK-101"}) is not None


def test_bulk_runs_one_after_another_reuse_the_sessions_of_the_first(fresh_client: Client) -> None:
    ids = [f"C-{i}" for i in range(16)]
    frame = pd.DataFrame({"externalId": ids, "name": "Acme", "callSign": "1", "description": "x"})
    for _ in range(3):  # each run starts its own worker threads
        assert fresh_client.import_clients(frame, workers=8, progress=False)["ok"].all()
    # 8 with retries for the workers (a session per request in flight) and the token's own
    assert len(fresh_client.connection.transport._sessions) <= 8 + 1


# -- error texts: the reason of an error body, whatever its shape -------------------------------

#: the bytes a NestJS service answers for a body its ValidationPipe refuses
NESTJS_400 = (
    b'{"statusCode":400,"message":["name must be shorter than or equal to 10 characters",'
    b'"callSign should not be empty"],"error":"Bad Request"}'
)


@pytest.mark.parametrize(
    ("body", "status", "text", "expected"),
    [
        (
            NESTJS_400,
            400,
            b"",
            "name must be shorter than or equal to 10 characters; callSign should not be empty",
        ),
        (
            b'{"statusCode":404,"message":"Cannot POST /x","error":"Not Found"}',
            404,
            b"",
            "Cannot POST /x",
        ),
        (
            b'{"statusCode":500,"message":"Internal server error"}',
            500,
            b"",
            "Internal server error",
        ),
        (b'{"title":"Conflict","detail":"taken"}', 409, b"", "taken"),
        (b'{"title":"Conflict"}', 409, b"", "Conflict"),
        (b'{"errors":[{"pointer":"#/name","detail":"too long"}]}', 422, b"", "#/name: too long"),
        (b'{"message":"rate limit exceeded"}', 429, b"", "rate limit exceeded"),
        (b'{"error":"invalid_client","error_description":"bad secret"}', 401, b"", "bad secret"),
        (None, 409, b"externalId 'C1' exists\n", "HTTP 409: externalId 'C1' exists"),
        (None, 400, b"", "HTTP 400 Bad Request"),
        (b"{}", 400, b"", "HTTP 400 Bad Request"),
    ],
)
def test_error_text_reads_every_body_shape(
    body: bytes | None, status: int, text: bytes, expected: str
) -> None:
    import orjson

    from toolkit._core.http import error_text

    parsed = orjson.loads(body) if body is not None else None
    assert error_text(parsed, status, body or text) == expected
