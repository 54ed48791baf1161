"""User look-ups: the time service's user records, one or many, as a frame."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from toolkit.bulk.runner import Call, run_bulk
from toolkit.core.connection import Connection

__all__ = ["user", "users"]


def user(conn: Connection, user_id: str) -> dict[str, Any]:
    """One user record.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        user_id: the user's ``_id``.

    Returns:
        The record as the service returns it.

    Raises:
        NotFoundError: no such user.

    Example:
        >>> client.user(user_id)["timekeeperExternalId"]
        'TK-101'
    """
    record: dict[str, Any] = conn.call("user", path={"userId": user_id})
    return record


def users(
    conn: Connection, user_ids: Iterable[str], *, workers: int | None = None
) -> pd.DataFrame:
    """Several user records as one frame: one row per distinct id, failures as rows.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        user_ids: the ``_id`` values (repeats are asked once).
        workers: worker threads (default: the connection's).

    Returns:
        A frame of the records, with an ``error`` column naming the users that failed.

    Example:
        >>> found = client.users([user_id, "0" * 24])
        >>> found["timekeeperExternalId"].tolist()
        ['TK-101', nan]
        >>> print(found["error"][1])
        no user '000000000000000000000000' for this customer
    """
    ids = list(dict.fromkeys(str(u) for u in user_ids))
    calls = [Call("user", {"userId": u}, key=u) for u in ids]
    replies = run_bulk(conn, calls, workers=workers, progress=False, desc="users")
    rows = []
    for uid, reply in zip(ids, replies, strict=True):
        row = dict(reply.body) if reply.ok and isinstance(reply.body, dict) else {"_id": uid}
        row["error"] = None if reply.ok else reply.error
        rows.append(row)
    return pd.DataFrame(rows)
