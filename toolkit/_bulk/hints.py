"""What an answer's rate limit headers say: ``RateLimit``/``RateLimit-Policy`` (IETF draft) or
``X-RateLimit-*`` (:func:`limit_hints`), read for :mod:`toolkit._bulk.budget`."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class LimitHints:
    """What an answer's rate limit headers say (every field ``None`` when not said).

    Attributes:
        quota: requests the policy allows per ``window`` (``q``, ``X-RateLimit-Limit``).
        window: seconds of the policy's window (``w``), when said.
        remaining: requests left now (``r``, ``X-RateLimit-Remaining``).
        reset: seconds until the quota is whole again (``t``, ``X-RateLimit-Reset``).
    """

    quota: float | None = None
    window: float | None = None
    remaining: float | None = None
    reset: float | None = None


_PARAM = re.compile(r";\s*([a-z]+)\s*=\s*([0-9]+\.?[0-9]*|\.[0-9]+)(?![0-9.])")


def _params(value: str) -> dict[str, float]:
    """The numeric parameters of the first item of a structured-field list."""
    return {key: float(number) for key, number in _PARAM.findall(value.split(",", 1)[0])}


def _number(value: str) -> float | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def limit_hints(headers: Mapping[str, str] | None, *, now: float | None = None) -> LimitHints:
    """Read ``RateLimit``/``RateLimit-Policy`` (IETF draft) or ``X-RateLimit-*`` headers.

    Args:
        headers: header names (any case) and values; ``None`` for none.
        now: the wall clock (epoch seconds), to read an ``X-RateLimit-Reset`` given as an
            epoch time; default ``time.time()``.

    Returns:
        The hints; every field ``None`` when the headers say nothing.

    Example:
        >>> limit_hints({"RateLimit-Policy": '"w";q=300;w=10', "RateLimit": '"w";r=0;t=6'})
        LimitHints(quota=300.0, window=10.0, remaining=0.0, reset=6.0)
    """
    low = {k.lower(): v for k, v in (headers or {}).items()}
    policy = _params(low.get("ratelimit-policy", ""))
    state = _params(low.get("ratelimit", ""))
    quota = policy.get("q", _number(low.get("x-ratelimit-limit", "")))
    remaining = state.get("r", _number(low.get("x-ratelimit-remaining", "")))
    reset = state.get("t")
    if reset is None:
        reset = _number(low.get("x-ratelimit-reset", ""))
        if reset is not None and reset > 1e9:  # an epoch time (GitHub and others)
            reset = max(0.0, reset - (time.time() if now is None else now))
    return LimitHints(quota, policy.get("w"), remaining, reset)
