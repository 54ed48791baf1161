"""A token's lifetime as its answer gives it: a value that is not a positive number is floored;
a token that runs out while its request is retried is asked for again, not read as a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit._core.auth import MIN_TOKEN_LIFETIME_S, TokenProvider
from toolkit._core.connection import TOKEN_TRIES, Connection
from toolkit._core.http import Reply, Transport
from toolkit._core.settings import Settings
from toolkit.errors import InputWarning


class _Answers(Transport):
    """A transport whose token answers carry ``expires_in``; it counts the requests."""

    def __init__(self, expires_in: Any) -> None:
        super().__init__(retries=0)
        self.expires_in, self.requests = expires_in, 0

    def send(self, *args: Any, **kwargs: Any) -> Reply:  # type: ignore[override]
        self.requests += 1
        return Reply(200, {"access_token": f"t{self.requests}", "expires_in": self.expires_in})


@pytest.mark.parametrize("expires_in", [0, -5, "soon", float("nan")])
def test_a_lifetime_that_is_not_a_positive_number_warns_and_lasts_the_floor(expires_in) -> None:  # noqa: ANN001
    now = [1000.0]
    answers = _Answers(expires_in)
    tokens = TokenProvider(
        "http://idp/t", "id", "s", "aud", transport=answers, clock=lambda: now[0]
    )
    with pytest.warns(InputWarning, match=f"expires_in {expires_in!r} is not a positive number"):
        tokens.secret_token()
    for _ in range(20):  # one request a second for 20 s: the same token
        now[0] += 1
        tokens.secret_token()
    assert answers.requests == 1
    now[0] += MIN_TOKEN_LIFETIME_S
    with pytest.warns(InputWarning):  # each such answer says so
        tokens.secret_token()
    assert answers.requests == 2


def test_an_answer_without_a_lifetime_keeps_the_token_an_hour(recwarn) -> None:  # noqa: ANN001
    now = [0.0]
    answers = _Answers(None)
    tokens = TokenProvider(
        "http://idp/t", "id", "s", "aud", transport=answers, clock=lambda: now[0]
    )
    tokens.secret_token()
    now[0] += 3000
    tokens.secret_token()
    assert answers.requests == 1 and not recwarn.list


class _SlowService(Transport):
    """Tokens that live 2 s; each data request takes ``takes`` s (its retries) and is answered
    401 for a token older than its life, or ``always_401`` for any token."""

    def __init__(self, clock: list[float], takes: float, always_401: bool = False) -> None:
        super().__init__(retries=0)
        self.clock, self.takes, self.always_401 = clock, takes, always_401
        self.issued: dict[str, float] = {}
        self.tokens = self.data = 0

    def send(self, method: str, url: str, **kwargs: Any) -> Reply:  # type: ignore[override]
        if url.endswith("/token"):
            self.tokens += 1
            self.issued[f"t{self.tokens}"] = self.clock[0]
            return Reply(200, {"access_token": f"t{self.tokens}", "expires_in": 2})
        self.data += 1
        token = kwargs["auth"].token.reveal()
        self.clock[0] += self.takes  # the request's retries take this long
        if self.always_401 or self.clock[0] - self.issued[token] > 2:
            return Reply(401, {"detail": "token expired"}, "401: token expired", 3, self.takes)
        return Reply(200, {"ok": True}, attempts=1, elapsed=self.takes)


def _connection(service: _SlowService) -> Connection:
    settings = Settings("c", "i", "s", "http://idp", "http://time", audience="aud")
    conn = Connection(settings, retries=0)
    conn.transport = service
    conn.auth = TokenProvider(
        "http://idp/token", "i", "s", "aud", transport=service, clock=lambda: service.clock[0]
    )
    return conn


def test_a_token_that_runs_out_during_each_retried_request_is_no_refusal() -> None:
    service = _SlowService([0.0], takes=3.0)  # every token runs out before its answer
    reply = _connection(service).send("user", path={"userId": "u"})
    assert reply.status == 401 and service.data == TOKEN_TRIES  # asked anew each time, bounded
    service = _SlowService([0.0], takes=3.0)
    # the third token's request is answered in time:
    takes = iter([3.0, 3.0, 0.5])
    original = service.send

    def varying(method: str, url: str, **kwargs: Any) -> Reply:
        if not url.endswith("/token"):
            service.takes = next(takes)
        return original(method, url, **kwargs)

    service.send = varying  # type: ignore[method-assign]
    reply = _connection(service).send("user", path={"userId": "u"})
    assert reply.status == 200 and service.data == 3 and service.tokens == 3


def test_a_401_for_a_fresh_token_is_retried_once_then_reported() -> None:
    service = _SlowService([0.0], takes=0.1, always_401=True)
    reply = _connection(service).send("user", path={"userId": "u"})
    assert reply.status == 401 and service.data == 2 and service.tokens == 2
