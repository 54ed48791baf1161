"""User look-ups: the identity service's user records, one or many, as a frame.

A published user has no ``timekeeperExternalId``: it is the identity of type
:data:`BILLING_IDENTITY`; :func:`users` carries it as that column all the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import pandas as pd

from toolkit._bulk.runner import Call, run_bulk
from toolkit._core.connection import Connection
from toolkit._core.dtypes import TEXT, nullable

#: The ``type`` of the identity holding a user's timekeeper id in the billing system.
BILLING_IDENTITY = "external-billing-system"


def timekeeper_id(record: dict[str, Any]) -> str | None:
    """A record's ``timekeeperExternalId``, else its first :data:`BILLING_IDENTITY`, or ``None``.

    Example:
        >>> timekeeper_id({"identities": [{"type": "email", "value": "ann@example.com"},
        ...                               {"type": "external-billing-system", "value": "TK-1"}]})
        'TK-1'
    """
    if isinstance(record.get("timekeeperExternalId"), str):
        return str(record["timekeeperExternalId"])
    identities = record.get("identities")
    for identity in identities if isinstance(identities, list) else []:
        if isinstance(identity, dict) and identity.get("type") == BILLING_IDENTITY:
            value = identity.get("value")
            return None if value is None else str(value)
    return None


def user(conn: Connection, user_id: str) -> dict[str, Any]:
    """One user record, from the identity service.

    Args:
        conn: the connection.
        user_id: the user's ``_id``.

    Returns:
        The record as the service returns it.

    Example:
        >>> record = client.user(user_id)
        >>> record["identities"][0]
        {'type': 'external-billing-system', 'value': 'TK-101'}
    """
    return cast("dict[str, Any]", conn.call("user", path={"userId": user_id}))


def users(conn: Connection, user_ids: Iterable[str], *, workers: int | None = None) -> pd.DataFrame:
    """Several user records as one frame (dotted columns): one row per distinct id.

    Args:
        conn: the connection.
        user_ids: the ``_id`` values (repeats are asked once).
        workers: worker threads (default: the connection's).

    Returns:
        A frame of the records, with an ``error`` column naming the users that failed.

    Example:
        >>> found = client.users([user_id, "0" * 24])
        >>> found["timekeeperExternalId"].tolist()
        ['TK-101', <NA>]
    """
    ids = list(dict.fromkeys(str(u) for u in user_ids))
    calls = [Call("user", {"userId": u}, key=u) for u in ids]
    replies = run_bulk(conn, calls, workers=workers, progress=False, desc="users")
    rows = []
    for uid, reply in zip(ids, replies, strict=True):
        row = dict(reply.body) if reply.ok and isinstance(reply.body, dict) else {"_id": uid}
        row["timekeeperExternalId"] = timekeeper_id(row) if reply.ok else None
        row["error"] = None if reply.ok else reply.error
        rows.append(row)
    found = nullable(pd.json_normalize(rows))
    return found.astype({"timekeeperExternalId": TEXT, "error": TEXT})
