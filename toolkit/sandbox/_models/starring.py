"""Starring: star and unstar initiatives for a timekeeper, and page through the stars.

A timekeeper id must resolve to exactly one user. Each initiative of a star or unstar request
gets its own status, decided in this order (the spec gives the codes, not their precedence):

1. 404 (20080): no initiative with that ``externalId``;
2. 200: the initiative is already in the requested state (starred, or not starred): unchanged;
3. 403 (20083): the initiative is walled off for the user;
4. 422 (20081): star only: the initiative is inactive (so a starred initiative that became
   inactive can always be unstarred);
5. 200: applied.

The starred list pages through the raw pinned props with an opaque cursor, signed with a key of
the database's own (HMAC-SHA256: an edited cursor is a 400), and filters product-created and
walled initiatives after the page is fetched, as the spec describes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import sqlite3
from collections.abc import Callable
from typing import Any

from .._exceptions import BadRequest, Conflict, NotFound
from .core import StoreCore, dedupe

__all__ = ["ERR_ACCESS", "ERR_INACTIVE", "ERR_NOT_FOUND", "StarringStore"]

ERR_NOT_FOUND = (20080, "initiative not found")
"""Per-item error code and message: no initiative with that ``externalId``."""
ERR_INACTIVE = (20081, "initiative is inactive")
"""Per-item error code and message: the initiative is not active."""
ERR_ACCESS = (20083, "initiative access denied")
"""Per-item error code and message: the initiative is walled off for the user."""


class StarringStore(StoreCore):
    """Stars (pins) of initiatives per user, addressed by timekeeper id.

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> cid = store.create_customer()["customerId"]
    >>> _ = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "", "email": ""})
    >>> store.starred(cid, "TK1")["initiativeExternalIds"]
    []
    """

    def star(
        self,
        customer_id: str,
        body: dict[str, Any],
        *,
        item_fault: Callable[[], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Star initiatives for the user with ``timekeeperExternalId``.

        Args:
            customer_id: The customer.
            body: A valid starred-initiative request (1 to 100 ids, deduplicated here).
            item_fault: Called per item; when it returns True the item answers 500 and is
                not applied (fault injection).

        Returns:
            One result per distinct id in first-seen order:
            ``{initiativeExternalId, status[, errorCode, errorMessage]}``.

        Raises:
            NotFound: The timekeeper resolves to no user.
            Conflict: The timekeeper resolves to several users.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> _ = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "", "email": ""})
        >>> store.star(cid, {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M9"]})
        [{'initiativeExternalId': 'M9', 'status': 404, 'errorCode': 20080, 'errorMessage': 'initiative not found'}]
        """  # noqa: E501
        return self._star_or_unstar(customer_id, body, star=True, item_fault=item_fault)

    def unstar(
        self,
        customer_id: str,
        body: dict[str, Any],
        *,
        item_fault: Callable[[], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Unstar initiatives; same rules, checks and results as :meth:`star`.

        Args:
            customer_id: The customer.
            body: A valid starred-initiative request.
            item_fault: As for :meth:`star`.

        Returns:
            One result per distinct id in first-seen order.

        Raises:
            NotFound: The timekeeper resolves to no user.
            Conflict: The timekeeper resolves to several users.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.unstar("c", {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M"]})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: timekeeperExternalId 'TK1' resolves to no user
        """
        return self._star_or_unstar(customer_id, body, star=False, item_fault=item_fault)

    def starred(
        self,
        customer_id: str,
        timekeeper_external_id: str,
        limit: int = 2500,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """One page of the user's starred initiatives.

        The page is ``limit`` raw pinned props in pin order; product-created and walled
        initiatives (the two filters the spec names) are removed *after* the page is fetched,
        so a page can be short or empty while ``nextCursor`` is not null. Inactive initiatives
        the user can still access stay listed.

        Args:
            customer_id: The customer.
            timekeeper_external_id: The user's timekeeper id.
            limit: Raw pinned props to fetch, 1 to 2500.
            cursor: ``nextCursor`` of the previous page; None or empty for the first page.

        Returns:
            ``{initiativeExternalIds, nextCursor}``; ``nextCursor`` is null on the last page.

        Raises:
            BadRequest: Limit out of bounds, or a cursor this user's list did not issue.
            NotFound: The timekeeper resolves to no user.
            Conflict: The timekeeper resolves to several users.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> _ = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "", "email": ""})
        >>> store.starred(cid, "TK1")
        {'initiativeExternalIds': [], 'nextCursor': None}
        """
        if not 1 <= limit <= 2500:
            raise BadRequest("limit must be between 1 and 2500", slug="invalid-request")
        after = None
        if cursor:
            after = self._decode_cursor(cursor)
        with self._read() as db:
            user_id = self._resolve_timekeeper(db, customer_id, timekeeper_external_id)
            if after is not None and after[0] != user_id:
                raise BadRequest("the cursor belongs to another user's list", slug="invalid-cursor")
            rows = db.execute(
                "SELECT p.seq, i.external_id, i.source, i.status FROM pins p "
                "JOIN initiatives i ON i.id = p.initiative_id "
                "WHERE p.user_id = ? AND p.seq > ? ORDER BY p.seq LIMIT ?",
                (user_id, after[1] if after else 0, limit + 1),
            ).fetchall()
            walls = {
                r[0]
                for r in db.execute(
                    "SELECT initiative_external_id FROM walls WHERE user_id = ?", (user_id,)
                )
            }
        page = rows[:limit]
        visible = [
            r["external_id"] for r in page if r["source"] == "pms" and r["external_id"] not in walls
        ]
        next_cursor = self._encode_cursor(user_id, page[-1]["seq"]) if len(rows) > limit else None
        return {"initiativeExternalIds": visible, "nextCursor": next_cursor}

    def _star_or_unstar(
        self,
        customer_id: str,
        body: dict[str, Any],
        *,
        star: bool,
        item_fault: Callable[[], bool] | None,
    ) -> list[dict[str, Any]]:
        ids = dedupe(body["initiativeExternalIds"])
        results: list[dict[str, Any]] = []
        with self._tx() as db:
            user_id = self._resolve_timekeeper(db, customer_id, body["timekeeperExternalId"])
            walls = {
                r[0]
                for r in db.execute(
                    "SELECT initiative_external_id FROM walls WHERE user_id = ?", (user_id,)
                )
            }
            for external_id in ids:
                item: dict[str, Any] = {"initiativeExternalId": external_id}
                initiative = self._pms_initiative(db, customer_id, external_id)
                error = None
                if item_fault is not None and item_fault():
                    item["status"] = 500
                elif initiative is None:
                    item["status"], error = 404, ERR_NOT_FOUND
                elif self._is_pinned(db, user_id, initiative["id"]) == star:
                    item["status"] = 200  # already in the requested state: unchanged
                elif external_id in walls:
                    item["status"], error = 403, ERR_ACCESS
                elif star and initiative["status"] != "active":
                    item["status"], error = 422, ERR_INACTIVE
                else:
                    item["status"] = 200
                    if star:
                        db.execute(
                            "INSERT OR IGNORE INTO pins (user_id, initiative_id) VALUES (?, ?)",
                            (user_id, initiative["id"]),
                        )
                    else:
                        db.execute(
                            "DELETE FROM pins WHERE user_id = ? AND initiative_id = ?",
                            (user_id, initiative["id"]),
                        )
                if error is not None:
                    item["errorCode"], item["errorMessage"] = error
                results.append(item)
        return results

    @staticmethod
    def _resolve_timekeeper(
        db: sqlite3.Connection, customer_id: str, timekeeper_external_id: str
    ) -> str:
        rows = db.execute(
            "SELECT id FROM users WHERE customer_id = ? AND timekeeper_external_id = ? LIMIT 2",
            (customer_id, timekeeper_external_id),
        ).fetchall()
        if not rows:
            raise NotFound(
                f"timekeeperExternalId {timekeeper_external_id!r} resolves to no user",
                slug="unknown-timekeeper",
            )
        if len(rows) > 1:
            raise Conflict(
                f"timekeeperExternalId {timekeeper_external_id!r} resolves to several users",
                slug="ambiguous-timekeeper",
            )
        return str(rows[0]["id"])

    @staticmethod
    def _is_pinned(db: sqlite3.Connection, user_id: str, initiative_id: str) -> bool:
        return (
            db.execute(
                "SELECT 1 FROM pins WHERE user_id = ? AND initiative_id = ?",
                (user_id, initiative_id),
            ).fetchone()
            is not None
        )

    def _sign(self, text: str) -> str:
        return hmac.new(self._cursor_key, text.encode(), hashlib.sha256).hexdigest()[:32]

    def _encode_cursor(self, user_id: str, seq: int) -> str:
        text = f"v2:{user_id}:{seq}"
        raw = f"{text}:{self._sign(text)}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def _decode_cursor(self, cursor: str) -> tuple[str, int]:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
            version, user_id, seq, mac = text.split(":")
            signed = f"{version}:{user_id}:{seq}"
            if version != "v2" or not hmac.compare_digest(mac, self._sign(signed)):
                raise ValueError("unsigned or edited cursor")
            if not seq.isdigit() or len(seq) > 18:
                raise ValueError(text)
            return user_id, int(seq)
        except (ValueError, UnicodeError, binascii.Error) as exc:
            raise BadRequest("invalid cursor", slug="invalid-cursor") from exc
