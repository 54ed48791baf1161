"""A token's lifetime as its answer gives it: a value that is not a positive number is floored."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit._core.auth import MIN_TOKEN_LIFETIME_S, TokenProvider
from toolkit._core.http import Reply, Transport
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
