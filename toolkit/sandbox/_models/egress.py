"""Egress: the v2 export, release-pending, the two acknowledgements and the user lookup.

The export selects entries by release time in ``(releasedAfter, releasedOnOrBefore]`` and
streams them in chunks read in short transactions. Release-pending lists entries awaiting an
acknowledgement; release-succeeded and release-failed move a pending entry to its final state
(repeating the same acknowledgement is a no-op, any other is a conflict).

The customer's profile may refuse an export window over ``exportMaxEntries`` entries (with the
status ``exportRefusal``) or longer than ``exportMaxWindowDays`` (400), and may answer a repeated
acknowledgement 409 or 422 instead of 200 (``ackRepeat``); it also shapes the user record
(``userRecord``). It also says how entries look where
interface.md and the published documents differ: counts as integers or doubles (``counts``),
the ``assignedBy`` of the service's codes (``codeAssigner``), the digests of release-pending
(``digests``), and whether the batch release-succeeded route is served (``batchAck``).

An entry's ``unitIncrementCount`` is the one stored with it (an administrator may give one,
fractions included), else ``incrementDurationInSeconds`` over the initiative's
``unitIncrements``, rounded up. Under ``counts: integer`` a stored fraction is sent rounded up.
An entry on an initiative made in the product (a user initiative) has ``initiativeProps.type``
``user`` and, in the export form, an ``initiative`` without ``externalId`` and ``client``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime
from fractions import Fraction
from http import HTTPStatus
from typing import Any

from .._bodies import MIN_UNIT_INCREMENTS
from .._exceptions import (
    BadRequest,
    Conflict,
    NotFound,
    PayloadTooLarge,
    SandboxError,
    Unprocessable,
)
from .core import PRODUCT_UNIT_INCREMENTS, format_timestamp, number, to_ms
from .profiles import ProfileStore

__all__ = ["ODD_ORDERING_SEQUENCE", "ODD_RELEASE_COUNT", "EgressStore"]


ODD_RELEASE_COUNT = 1.5
"""``releaseCount`` of every second release-pending entry under the profile's ``oddExtras``
(``allowed`` or ``mistyped``): a fraction, which the published ``number`` (format int64) lets
through."""
ODD_ORDERING_SEQUENCE = 1
"""A code type digest's ``orderingSequence`` under ``oddExtras: mistyped`` (and published
digests): a number where the documents say text."""


def _increment_count(duration: float, unit: float | None) -> int:
    """Increments of ``unit`` in ``duration``, rounded up; none of a unit below the sandbox's
    bounds (zero or negative included, taken under the profile's ``unitBounds: none``)."""
    if not unit or unit < MIN_UNIT_INCREMENTS:
        return 0
    if float(unit).is_integer() and float(duration).is_integer():
        return -(-int(duration) // int(unit))
    return math.ceil(Fraction(duration) / _exact(float(unit)))


def _counts(
    duration: float, stored: float | None, unit: float | None, mode: str
) -> tuple[int | float, int | float]:
    """``(unitIncrementCount, incrementDurationInSeconds)`` as the profile's ``counts`` says.

    >>> _counts(900, None, 360, "integer"), _counts(900, 2.5, 360, "double")
    ((3, 900), (2.5, 900.0))
    """
    count = stored if stored is not None else _increment_count(duration, unit)
    if mode == "double":
        return float(count), float(duration)
    return math.ceil(count), math.ceil(duration)


@functools.lru_cache(maxsize=1024)
def _exact(unit: float) -> Fraction:
    """The decimal the client sent (0.3 is 3/10, not the nearest binary fraction)."""
    return Fraction(repr(unit))


def _color(initiative_id: str) -> str:
    return hashlib.sha256(initiative_id.encode()).hexdigest()[:6]


class EgressStore(ProfileStore):
    """Entries out of the product: export, release-pending, acknowledgements, users.

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> store.release_pending(store.create_customer()["customerId"])
    []
    """

    _ENTRY_SELECT = (
        "SELECT e.id, e.created_at, e.updated_at, e.external_id, e.duration, e.summary, "
        "e.user_id, e.work_date, e.released_at, i.id AS i_id, i.external_id AS i_ext, "
        "i.name AS i_name, i.description AS i_desc, i.call_sign AS i_cs, "
        "i.billing_type AS i_bt, i.unit_increments, c.id AS c_id, c.external_id AS c_ext, "
        "c.name AS c_name, c.description AS c_desc, c.call_sign AS c_cs, "
        "e.unit_count, i.source AS i_source, i.status AS i_status "
        "FROM entries e JOIN initiatives i ON i.id = e.initiative_id "
        "LEFT JOIN clients c ON c.id = i.client_id "
    )

    def export_entries(
        self, customer_id: str, released_after: datetime, released_on_or_before: datetime
    ) -> list[dict[str, Any]]:
        """v2 export: entries released in ``(released_after, released_on_or_before]``.

        Selection is by the entry's (latest) release time, whatever its acknowledgement state
        since. Entries come ordered by release time, then id. Nested initiative objects are
        shared between entries of the same initiative (treat the result as read-only).

        Args:
            customer_id: The customer.
            released_after: Exclusive lower bound (aware; naive is taken as UTC).
            released_on_or_before: Inclusive upper bound.

        Returns:
            Entries in the spec's export form.

        Raises:
            BadRequest: The window is inverted (or see :meth:`iter_export_entries`).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> from datetime import UTC, datetime
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> t = datetime(2025, 1, 1, tzinfo=UTC)
        >>> store.export_entries(store.create_customer()["customerId"], t, t)
        []
        """
        chunks = self.iter_export_entries(customer_id, released_after, released_on_or_before)
        return [entry for chunk in chunks for entry in chunk]

    def iter_export_entries(
        self,
        customer_id: str,
        released_after: datetime,
        released_on_or_before: datetime,
        *,
        batch: int = 5000,
    ) -> Iterator[list[dict[str, Any]]]:
        """:meth:`export_entries` in chunks of at most ``batch`` entries, in the same order.

        Each chunk is read in its own short transaction (keyset paging on release time and
        id), so a large export neither holds the store's lock while it is sent nor builds the
        whole answer in memory. The window is checked before the first chunk.

        Args:
            customer_id: The customer.
            released_after: Exclusive lower bound (aware; naive is taken as UTC).
            released_on_or_before: Inclusive upper bound.
            batch: Entries per chunk.

        Returns:
            An iterator of chunks.

        Raises:
            BadRequest: The window is inverted, or longer than the customer's
                ``exportMaxWindowDays`` (raised by this call, not by the iterator).
            SandboxError: The window holds more than the customer's ``exportMaxEntries``:
                :class:`BadRequest`, :class:`PayloadTooLarge` or :class:`Unprocessable` as its
                ``exportRefusal`` says.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> from datetime import UTC, datetime
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> t = datetime(2025, 1, 1, tzinfo=UTC)
        >>> list(store.iter_export_entries(store.create_customer()["customerId"], t, t))
        []
        """
        low, high = to_ms(released_after), to_ms(released_on_or_before)
        if released_after > released_on_or_before:
            raise BadRequest(
                "releasedAfter must not be later than releasedOnOrBefore", slug="invalid-window"
            )
        self._check_export_window(customer_id, low, high)
        return self._export_chunks(customer_id, low, high, batch)

    _REFUSALS: dict[int, type[SandboxError]] = {
        400: BadRequest,
        413: PayloadTooLarge,
        422: Unprocessable,
    }

    def _check_export_window(self, customer_id: str, low: int, high: int) -> None:
        """Refuse a window the customer's profile does not serve (longest first, then size)."""
        profile = self.profile(customer_id)
        days = profile["exportMaxWindowDays"]
        if days is not None and high - low > days * 86_400_000:
            raise BadRequest(
                f"the export window is longer than {days:g} days",
                slug="window-too-long",
                maxWindowDays=days,
            )
        most = profile["exportMaxEntries"]
        if most is None:
            return
        with self._read() as db:
            held = db.execute(
                "SELECT COUNT(*) FROM entries WHERE customer_id = ? AND released_at > ? "
                "AND released_at <= ?",
                (customer_id, low, high),
            ).fetchone()[0]
        if held > most:
            refusal = self._REFUSALS[profile["exportRefusal"]]
            raise refusal(
                f"the export window holds {held} entries, more than {most}; ask for a shorter "
                "window",
                slug="export-too-large",
                entries=held,
                maxEntries=most,
            )

    def _export_chunks(
        self, customer_id: str, low: int, high: int, batch: int
    ) -> Iterator[list[dict[str, Any]]]:
        # Bounds are compared at millisecond precision against millisecond-precise times:
        # t > after  <=>  t_ms > floor(after_ms); t <= before  <=>  t_ms <= floor(before_ms).
        base = "e.customer_id = ? AND e.released_at > ? AND e.released_at <= ?"
        last: tuple[int, str] | None = None
        initiatives: dict[str, dict[str, Any]] = {}
        profile = self.profile(customer_id)
        shown = (profile["counts"], profile["codeAssigner"])
        while True:
            where, params = base, [customer_id, low, high]
            if last is not None:
                where += " AND (e.released_at > ? OR (e.released_at = ? AND e.id > ?))"
                params += [last[0], last[0], last[1]]
            with self._read() as db:
                cursor = db.cursor()
                cursor.row_factory = None  # plain tuples: this loop may run a million times
                rows = cursor.execute(
                    self._ENTRY_SELECT
                    + f"WHERE {where} ORDER BY e.released_at, e.id LIMIT {int(batch)}",
                    params,
                ).fetchall()
                if not rows:
                    return
                last = (rows[-1][8], rows[-1][0])
                bounded = where + " AND (e.released_at < ? OR (e.released_at = ? AND e.id <= ?))"
                codes = self._codes_by_entry(
                    db, customer_id, bounded, [*params, last[0], last[0], last[1]]
                )
            yield [self._export_entry(row, customer_id, codes, initiatives, shown) for row in rows]
            if len(rows) < batch:
                return

    @staticmethod
    def _export_entry(
        row: tuple[Any, ...],
        customer_id: str,
        codes: dict[str, list[tuple[dict[str, Any], str]]],
        initiatives: dict[str, dict[str, Any]],
        shown: tuple[str, str],
    ) -> dict[str, Any]:
        (
            entry_id,
            created,
            updated,
            external_id,
            duration,
            summary,
            user_id,
            work_date,
            _released,
            i_id,
            i_ext,
            i_name,
            _i_desc,
            _i_cs,
            _i_bt,
            unit,
            c_id,
            c_ext,
            c_name,
            c_desc,
            c_cs,
            stored,
            source,
            *_,
        ) = row
        initiative = initiatives.get(i_id)
        if initiative is None:
            initiative = initiatives[i_id] = (
                {"name": i_name}
                if source == "product"
                else {
                    "client": {
                        "_id": c_id,
                        "externalId": c_ext,
                        "name": c_name,
                        "description": c_desc,
                        "callSign": c_cs,
                    },
                    "externalId": i_ext,
                    "name": i_name,
                }
            )
        count, seconds = _counts(duration, stored, unit, shown[0])
        return {
            "_id": entry_id,
            "codes": [
                {"code": code, "assignedBy": shown[1] if by == "service" else by}
                for code, by in codes.get(entry_id, ())
            ],
            "createdAt": format_timestamp(created),
            "customerId": customer_id,
            "externalId": external_id,
            "incrementDurationInSeconds": seconds,
            "initiative": initiative,
            "summary": summary,
            "unitIncrementCount": count,
            "updatedAt": format_timestamp(updated),
            "userId": user_id,
            "workDate": work_date,
        }

    def _codes_by_entry(
        self,
        db: sqlite3.Connection,
        customer_id: str,
        where: str,
        params: Sequence[Any],
        published: bool = False,
        odd: bool = False,
    ) -> dict[str, list[tuple[dict[str, Any], str]]]:
        code_objs: dict[str, dict[str, Any]] = {}
        for r in db.execute(
            "SELECT co.id, co.external_id, co.name, co.description, ct.id AS t_id, "
            "ct.external_id AS t_ext, ct.name AS t_name, ct.semantic_type FROM codes co "
            "JOIN code_types ct ON ct.id = co.code_type_id WHERE co.customer_id = ?",
            (customer_id,),
        ):
            kind = {
                "_id": r["t_id"],
                "externalId": r["t_ext"],
                "name": r["t_name"],
                "semanticType": r["semantic_type"],
            }
            if published:  # semanticType absent where null; orderingSequence (none stored)
                kind = {k: v for k, v in kind.items() if v is not None or k != "semanticType"}
                kind["orderingSequence"] = ODD_ORDERING_SEQUENCE if odd else None
            code_objs[r["id"]] = {
                "_id": r["id"],
                "externalId": r["external_id"],
                "name": r["name"],
                "description": r["description"],
                "type": kind,
            }
        out: dict[str, list[tuple[dict[str, Any], str]]] = {}
        cursor = db.cursor()
        cursor.row_factory = None
        for entry_id, code_id, assigned_by in cursor.execute(
            "SELECT ec.entry_id, ec.code_id, ec.assigned_by FROM entry_codes ec "
            f"JOIN entries e ON e.id = ec.entry_id WHERE {where} "
            "ORDER BY ec.entry_id, ec.position",
            params,
        ):
            out.setdefault(entry_id, []).append((code_objs[code_id], assigned_by))
        return out

    def release_pending(self, customer_id: str) -> list[dict[str, Any]]:
        """Entries still pending, in the spec's detailed form, ordered by release time.

        Args:
            customer_id: The customer.

        Returns:
            Entries in the detailed form (``initiativeProps`` tags hold ``pinned`` when the
            entry's user starred the initiative).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_pending(store.create_customer()["customerId"])
        []
        """
        where = "e.customer_id = ? AND e.state = 'pending'"
        params = (customer_id,)
        profile = self.profile(customer_id)
        published = profile["digests"] == "published"
        with self._read() as db:
            rows = db.execute(
                self._ENTRY_SELECT + f"WHERE {where} ORDER BY e.released_at, e.id", params
            ).fetchall()
            odd = profile["oddExtras"] != "none"
            mistyped = profile["oddExtras"] == "mistyped"
            codes = self._codes_by_entry(db, customer_id, where, params, published, mistyped)
            extras = (  # what the clients' and initiatives' imports carried beyond the spec
                "SELECT x.record_id, x.fields FROM import_extras x WHERE x.record_id IN "
                "(SELECT id FROM clients WHERE customer_id = ? UNION ALL "
                "SELECT id FROM initiatives WHERE customer_id = ?)"
            )
            held = (
                {r[0]: json.loads(r[1]) for r in db.execute(extras, (customer_id, customer_id))}
                if published
                else {}
            )
            pinned = {
                (r["user_id"], r["initiative_id"])
                for r in db.execute(
                    "SELECT p.user_id, p.initiative_id FROM pins p JOIN users u "
                    "ON u.id = p.user_id WHERE u.customer_id = ?",
                    (customer_id,),
                )
            }
        out: list[dict[str, Any]] = []
        for r in rows:
            count, seconds = _counts(
                r["duration"], r["unit_count"], r["unit_increments"], profile["counts"]
            )
            kind = "user" if r["i_source"] == "product" else "pms"
            out.append(
                {
                    "_id": r["id"],
                    "customerId": customer_id,
                    "userId": r["user_id"],
                    "workDate": r["work_date"],
                    "summary": r["summary"],
                    "unitIncrementCount": count,
                    "incrementDurationInSeconds": seconds,
                    "initiativeProps": {
                        "type": kind,
                        "colorHex": _color(r["i_id"]),
                        "tags": ["pinned"] if (r["user_id"], r["i_id"]) in pinned else [],
                        "nickname": r["i_name"],
                        "initiative": self._props_initiative(r, published, held),
                    },
                    "externalId": r["external_id"],
                    "codes": [code for code, _ in codes.get(r["id"], [])],
                    # the published extras: the sandbox keeps no notes, syncs and shares, and
                    # counts no releases beyond the one that made the entry pending
                    "notes": None,
                    "releaseCount": ODD_RELEASE_COUNT if odd and len(out) % 2 else 1,
                    "lastSyncedAt": None,
                    "firstReleaseAttemptedAt": format_timestamp(r["released_at"]),
                    "isShared": False,
                    "sharedFrom": None,
                }
            )
        return out

    @staticmethod
    def _props_initiative(
        r: sqlite3.Row, published: bool, held: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """``initiativeProps.initiative``: a user initiative's, or the pms one (with published
        digests, its ``status`` and ``locale`` and its client's ``type`` and
        ``parentClientId``, as imported)."""
        if r["i_source"] == "product":  # its billingType and unitIncrements, as published
            unit = number(r["unit_increments"] or PRODUCT_UNIT_INCREMENTS)
            kind = {"type": "user", "_id": r["i_id"], "billingType": r["i_bt"] or "non-billable"}
            return {**kind, "unitIncrements": unit, "name": r["i_name"]}
        client = {
            "_id": r["c_id"],
            "externalId": r["c_ext"],
            "name": r["c_name"],
            "description": r["c_desc"],
            "callSign": r["c_cs"],
        }
        initiative = {
            "type": "pms",
            "_id": r["i_id"],
            "billingType": r["i_bt"],
            "callSign": r["i_cs"],
            "unitIncrements": number(r["unit_increments"]),
            "externalId": r["i_ext"],
            "name": r["i_name"],
            "description": r["i_desc"],
            "client": client,
        }
        if published:
            initiative.update(status=r["i_status"], locale=held.get(r["i_id"], {}).get("locale"))
            kept = held.get(r["c_id"], {})
            client.update(
                type=kept.get("type", "client"), parentClientId=kept.get("parentClientId")
            )
        return initiative

    def release_succeeded(
        self, customer_id: str, user_id: str, entry_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Acknowledge a pending entry as written to the billing system.

        Repeating the same acknowledgement is a no-op (or, as the customer's profile's
        ``ackRepeat`` says, a 409 or 422 for any acknowledgement of an entry already succeeded).

        Args:
            customer_id: The customer.
            user_id: The entry's user.
            entry_id: The entry.
            body: ``{"externalId": str}``, stored on the entry; ``externalId`` is optional
                (published), and a repeat without it is the same acknowledgement;
                ``reReleaseFailedMessages`` is accepted and not kept.

        Returns:
            ``{_id, userId, state, externalId, errors, updatedAt}``.

        Raises:
            NotFound: No such entry for this user.
            Conflict: Not released yet, failed, or succeeded with another ``externalId``.
            Unprocessable: Already succeeded, when the profile's ``ackRepeat`` is ``422``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_succeeded("c", "u", "e", {"externalId": "X1"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: no entry 'e' for user 'u'
        """
        return self._acknowledge(
            customer_id, user_id, entry_id, "succeeded", body.get("externalId")
        )

    def release_succeeded_batch(
        self, customer_id: str, items: Sequence[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The published batch release-succeeded: each item as :meth:`release_succeeded`.

        Args:
            customer_id: The customer.
            items: ``{entryId, userId, externalId?, reReleaseFailedMessages?}`` each.

        Returns:
            One ``{entryId, status}`` per item, in order; ``status`` is the HTTP status name
            the single route would answer (``OK``, ``NOT_FOUND``, ``CONFLICT``...), and a
            refused item adds ``errorCode`` (a number, as published: the status's, as the
            documents give no list of codes) and ``errorMessage``.

        Raises:
            NotFound: The customer's profile turns the route off (``batchAck`` false).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_succeeded_batch("c", [{"entryId": "e", "userId": "u"}])[0]["status"]
        'NOT_FOUND'
        """
        if not self.profile(customer_id)["batchAck"]:
            raise NotFound("no batch release-succeeded route here", slug="not-found")
        out: list[dict[str, Any]] = []
        for item in items:
            try:
                self.release_succeeded(customer_id, item["userId"], item["entryId"], item)
            except SandboxError as exc:
                out.append(
                    {
                        "entryId": item["entryId"],
                        "status": HTTPStatus(exc.status).name,
                        "errorCode": exc.status,  # a number, as published
                        "errorMessage": exc.detail,
                    }
                )
            else:
                out.append({"entryId": item["entryId"], "status": "OK"})
        return out

    def release_failed(
        self, customer_id: str, user_id: str, entry_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Acknowledge a pending entry as failed to write; the errors are stored.

        Repeating the same acknowledgement (same errors) is a no-op (or, as the customer's
        profile's ``ackRepeat`` says, a 409 or 422 for any acknowledgement of an entry already
        failed).

        Args:
            customer_id: The customer.
            user_id: The entry's user.
            entry_id: The entry.
            body: ``{"errors": [str, ...]}``.

        Returns:
            ``{_id, userId, state, externalId, errors, updatedAt}``.

        Raises:
            NotFound: No such entry for this user.
            Conflict: Not released yet, succeeded, or failed with other errors.
            Unprocessable: Already failed, when the profile's ``ackRepeat`` is ``422``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_failed("c", "u", "e", {"errors": ["x"]})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: no entry 'e' for user 'u'
        """
        return self._acknowledge(customer_id, user_id, entry_id, "failed", list(body["errors"]))

    def _acknowledge(
        self, customer_id: str, user_id: str, entry_id: str, state: str, value: Any
    ) -> dict[str, Any]:
        column = "external_id" if state == "succeeded" else "errors"
        stored_value = value if state == "succeeded" else json.dumps(value, ensure_ascii=False)
        repeat = self.profile(customer_id)["ackRepeat"]
        with self._tx() as db:
            row = db.execute(
                "SELECT * FROM entries WHERE id = ? AND customer_id = ? AND user_id = ?",
                (entry_id, customer_id, user_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"no entry {entry_id!r} for user {user_id!r}", slug="unknown-entry")
            current = row["state"]
            if current == "editable":
                raise Conflict(
                    "the entry has not been released by its user",
                    slug="entry-not-released",
                    state=current,
                )
            if current == "pending":
                db.execute(
                    f"UPDATE entries SET state = ?, {column} = ?, updated_at = ? WHERE id = ?",
                    (state, stored_value, self.now_ms(), entry_id),
                )
            # the stored acknowledgement goes with a refusal, so a client can tell a repeat
            # from a clash and say which acknowledgement the entry holds
            field = "externalId" if current == "succeeded" else "errors"
            held = (
                row["external_id"]
                if current == "succeeded"
                else json.loads(row["errors"] or "null")
            )
            holds = f"{current} ({field} {held!r})"
            if current not in ("pending", state):
                raise Conflict(
                    f"the entry was already acknowledged as {holds}",
                    slug="conflicting-acknowledgement",
                    state=current,
                    **{field: held},
                )
            if current == state:
                if row[column] != stored_value and value is not None:
                    raise Conflict(
                        f"the entry was already acknowledged as {holds}, with other {field}",
                        slug="conflicting-acknowledgement",
                        state=current,
                        **{field: held},
                    )
                if repeat != "200":
                    refusal = Conflict if repeat == "409" else Unprocessable
                    raise refusal(
                        f"the entry was already acknowledged as {holds}",
                        slug="already-acknowledged",
                        state=current,
                        **{field: held},
                    )
            r = db.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return {
            "_id": r["id"],
            "userId": r["user_id"],
            "state": r["state"],
            "externalId": r["external_id"],
            "errors": json.loads(r["errors"]) if r["errors"] else None,
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    def get_user(self, customer_id: str, user_id: str) -> dict[str, Any]:
        """Return a user record, in the shape the customer's profile's ``userRecord`` says.

        ``published`` (the default) is the identity service's user: ``_id``, ``createdAt``,
        ``updatedAt``, ``email``, ``firstName`` and ``lastName`` (the name split at its first
        space), ``nickname`` and ``jobTitle`` (empty), ``status`` (``active``),
        ``identities`` (the timekeeper id as ``{"type": "external-billing-system", "value"}``,
        then the email as ``{"type": "email", "value"}`` when there is one), ``roles``,
        ``delegators``, ``delegates`` (empty) and ``customer`` (``_id``, ``fullName``,
        ``tenant``). ``legacy`` is ``{_id, customerId, timekeeperExternalId, name, email}``.

        Args:
            customer_id: The customer.
            user_id: The user.

        Returns:
            The user record.

        Raises:
            NotFound: No such user for this customer.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> u = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "Ann Lee",
        ...     "email": "ann@example.com"})
        >>> record = store.get_user(cid, u["_id"])
        >>> record["firstName"], record["lastName"], record["identities"][0]
        ('Ann', 'Lee', {'type': 'external-billing-system', 'value': 'TK1'})
        >>> _ = store.set_profile(cid, {"userRecord": "legacy"})
        >>> store.get_user(cid, u["_id"])["timekeeperExternalId"]
        'TK1'
        """
        shape = self.profile(customer_id)["userRecord"]
        with self._read() as db:
            row = self._require_user(db, customer_id, user_id)
            if shape == "legacy":
                return self._user_record(row)
            customer = db.execute(
                "SELECT name FROM customers WHERE id = ?", (customer_id,)
            ).fetchone()
        return _published_user(row, customer_id, customer["name"])


#: The tenant (region) of every sandbox customer, in the published user record's ``customer``.
_TENANT = {"_id": "000000000000000000000001", "description": "sandbox", "name": "iad"}


def _published_user(row: sqlite3.Row, customer_id: str, customer_name: str) -> dict[str, Any]:
    """A user row as the identity service publishes its user (see ``get_user``)."""
    first, _, last = row["name"].partition(" ")
    created = format_timestamp(row["created_at"])
    identities = [{"type": "external-billing-system", "value": row["timekeeper_external_id"]}]
    if row["email"]:
        identities.append({"type": "email", "value": row["email"]})
    return {
        "_id": row["id"],
        "createdAt": created,
        "updatedAt": created,
        "email": row["email"],
        "firstName": first,
        "lastName": last,
        "nickname": "",
        "jobTitle": "",
        "status": "active",
        "identities": identities,
        "roles": [],
        "delegators": [],
        "delegates": [],
        "customer": {"_id": customer_id, "fullName": customer_name, "tenant": dict(_TENANT)},
    }
