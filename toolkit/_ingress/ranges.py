"""Code ranges and the published bound: at most 2,500 ids per request.

Whether a code range request replaces the initiative's range or adds to it, the service does not
say; ``code_range_post`` says which. ``"replace"`` sends a range whole (a longer one fails
validation); ``"add"`` sends it in parts, in order (see docs/toolkit.md).

>>> split(["L1", "L2", "L3"], limit=2)
[['L1', 'L2'], ['L3']]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final, Literal

from toolkit._bulk.runner import JOURNALED, Call, not_sent
from toolkit._core.http import Reply
from toolkit.errors import ConfigError, Interrupted

#: Most ids one code range request may carry (published: ``maxItems: 2500``).
CODE_RANGE_MAX: Final = 2500

#: What a code range request does to the initiative's range, as the user reads the service.
CodeRangePost = Literal["replace", "add"]
CODE_RANGE_POSTS: tuple[CodeRangePost, ...] = ("replace", "add")

#: error of a later part not sent because an earlier part of its range failed
_EARLIER_PART = "not sent: an earlier part of this code range failed"


def check_post(code_range_post: str) -> None:
    """Refuse a ``code_range_post`` other than ``"replace"`` or ``"add"``.

    Example:
        >>> check_post("add")
        >>> check_post("append")
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: code_range_post must be 'replace' or 'add', not 'append'
    """
    if code_range_post not in CODE_RANGE_POSTS:
        raise ConfigError(f"code_range_post must be 'replace' or 'add', not {code_range_post!r}")


def split(ids: Sequence[str], limit: int = CODE_RANGE_MAX) -> list[list[str]]:
    """The ids in parts of at most ``limit``, in order.

    Example:
        >>> [len(p) for p in split([f"L{i}" for i in range(5001)])]
        [2500, 2500, 1]
    """
    return [list(ids[start : start + limit]) for start in range(0, len(ids), limit)] or [[]]


def _accepted(reply: Reply) -> bool:
    return reply.ok or reply.error == JOURNALED


def merge_parts(first: Reply, then: Reply) -> Reply:
    """One reply for two parts of a range: the first failure, else the later answer; attempts add.

    Example:
        >>> merged = merge_parts(Reply(201, attempts=2, elapsed=0.5), Reply(201, elapsed=0.25))
        >>> merged.status, merged.attempts, merged.elapsed
        (201, 3, 0.75)
    """
    worse = first if not _accepted(first) or then.error == JOURNALED else then
    return replace(
        worse, attempts=first.attempts + then.attempts, elapsed=first.elapsed + then.elapsed
    )


def _part(call: Call) -> Any:
    """What identifies a call's range (its path); ``None`` for a call that is not a part."""
    return tuple(sorted(call.path.items())) if call.path else None


def send_in_parts(run: Callable[[list[Call]], list[Reply]], calls: list[Call]) -> list[Reply]:
    """Send calls with ``run``: part k of every range in round k, once its earlier parts passed.

    The parts of one range share their path and come in order.

    Returns:
        One reply per call, in the calls' order (also on :class:`Interrupted`'s ``replies``).

    Example:
        >>> calls = [Call("import_code_ranges", {"initiativeExternalId": "M-1"}, n, key="M-1")
        ...          for n in (1, 2)]
        >>> rounds = []
        >>> replies = send_in_parts(lambda cs: rounds.append(len(cs)) or [Reply(201)] * len(cs),
        ...                         calls)
        >>> rounds, [r.status for r in replies]
        ([1, 1], [201, 201])
    """
    rounds: dict[int, list[int]] = {}  # round k -> its calls (round k comes after round k - 1)
    seen: dict[Any, int] = {}  # a range's path -> its last part's round
    for i, call in enumerate(calls):
        key = _part(call)
        k = 0 if key is None else seen.setdefault(key, -1) + 1
        seen[key] = k
        rounds.setdefault(k, []).append(i)
    replies: list[Reply] = [not_sent() for _ in calls]
    failed: set[Any] = set()
    for members in rounds.values():
        todo = [i for i in members if _part(calls[i]) not in failed]
        for i in set(members) - set(todo):
            replies[i] = not_sent(_EARLIER_PART)
        try:
            got = run([calls[i] for i in todo])
        except Interrupted as exc:
            for i, reply in zip(todo, exc.replies, strict=False):
                replies[i] = reply
            exc.replies = replies
            raise
        for i, reply in zip(todo, got, strict=True):
            replies[i] = reply
            if not _accepted(reply):
                failed.add(_part(calls[i]))
    return replies
