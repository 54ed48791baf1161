"""Ingress: the five imports (clients, initiatives, code types, codes, code ranges).

Imports upsert by ``externalId`` within the customer (or, when the customer's profile says
``reimport: conflict``, refuse an existing ``externalId`` with a 409 and leave it unchanged);
references (an initiative's client, a code's code type, a code range's initiative and codes)
must exist, otherwise nothing is stored and the error lists the unknown ids. The record
renderers here also serve the administration listing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from .._bodies import CODE_TYPE_SPEC_FIELDS, MAX_UNIT_INCREMENTS, MIN_UNIT_INCREMENTS
from .._exceptions import Conflict, NotFound, Unprocessable
from .core import dedupe, format_timestamp, new_id, number
from .profiles import ProfileStore

__all__ = ["OPTIONAL_FIELDS", "UNIT_BOUNDS", "IngressStore"]

UNIT_BOUNDS = (MIN_UNIT_INCREMENTS, MAX_UNIT_INCREMENTS)
"""The ``unitIncrements`` (seconds) the sandbox takes by default, so that every count stays
exact; the profile's ``unitBounds: none`` takes any finite number."""

#: The optional fields the service publishes beyond the spec, per import: stored as sent
#: (an import replaces them: a field left out, or null, is no longer held) and shown in the
#: record only when held.
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "clients": ("type", "parentClientId"),
    "initiatives": ("externalGroupIds", "locale", "allowFrom", "allowTo"),
    "code_types": ("orderingSequence",),
    "codes": ("orderingSequence", "group", "userGroupExternalIds", "isDisabled"),
}


class IngressStore(ProfileStore):
    """The five imports of reference data, with their reference rules.

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> cid = store.create_customer()["customerId"]
    >>> store.import_client(cid, {"externalId": "C1", "name": "Acme", "callSign": "A",
    ...     "description": ""})["externalId"]
    'C1'
    """

    def import_client(
        self, customer_id: str, body: dict[str, Any], *, reimport: str | None = None
    ) -> dict[str, Any]:
        """Create or update (by ``externalId``) one client.

        Args:
            customer_id: The customer.
            body: A valid Client payload.
            reimport: ``upsert`` or ``conflict``; default the customer's profile.

        Returns:
            The stored client.

        Raises:
            Conflict: The client exists and ``reimport`` is ``conflict``.
            Unprocessable: ``parentClientExternalId`` names no client, or another one than
                ``parentClientId``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_client(cid, {"externalId": "C1", "name": "Acme", "callSign": "A",
        ...     "description": ""})["name"]
        'Acme'
        """
        mode = reimport or self.profile(customer_id)["reimport"]
        with self._tx() as db:
            if (parent := body.get("parentClientExternalId")) is not None:
                body = {**body, "parentClientId": self._parent_id(db, customer_id, parent, body)}
            record_id = self._upsert(
                db,
                "clients",
                customer_id,
                body["externalId"],
                mode,
                {
                    "name": body["name"],
                    "call_sign": body["callSign"],
                    "description": body["description"],
                },
            )
            self._set_extras(db, record_id, "clients", body)
            return self._client_record(db, record_id)

    def import_initiative(
        self, customer_id: str, body: dict[str, Any], *, reimport: str | None = None
    ) -> dict[str, Any]:
        """Create or update (by ``externalId``) one initiative; its client must exist.

        Args:
            customer_id: The customer.
            body: A valid Initiative payload.
            reimport: ``upsert`` or ``conflict``; default the customer's profile.

        Returns:
            The stored initiative.

        Raises:
            Unprocessable: ``clientExternalId`` names no client (``unknownIds`` lists it), or
                ``unitIncrements`` is outside the sandbox's bounds (:data:`UNIT_BOUNDS`) under
                the profile's ``unitBounds: sandbox`` (the default).
            Conflict: The initiative exists and ``reimport`` is ``conflict``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_initiative(cid, {"externalId": "M1", "clientExternalId": "nope",
        ...     "billingType": "billable", "name": "", "description": "", "callSign": "",
        ...     "unitIncrements": 360, "status": "active"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.Unprocessable: unknown client externalId 'nope'
        """
        profile = self.profile(customer_id)
        low, high = UNIT_BOUNDS
        if profile["unitBounds"] == "sandbox" and not low <= body["unitIncrements"] <= high:
            raise Unprocessable(
                "invalid request: body.unitIncrements",
                slug="validation-failed",
                errors=[
                    {
                        "in": "body",
                        "field": "unitIncrements",
                        "detail": f"from {low:g} to {high:g} (the sandbox's bounds: unitBounds)",
                    }
                ],
            )
        mode = reimport or profile["reimport"]
        with self._tx() as db:
            client = db.execute(
                "SELECT id FROM clients WHERE customer_id = ? AND external_id = ?",
                (customer_id, body["clientExternalId"]),
            ).fetchone()
            if client is None:
                raise self._unknown("client", "clientExternalId", [body["clientExternalId"]])
            record_id = self._upsert(
                db,
                "initiatives",
                customer_id,
                body["externalId"],
                mode,
                {
                    "source": "pms",
                    "billing_type": body["billingType"],
                    "name": body["name"],
                    "description": body["description"],
                    "call_sign": body["callSign"],
                    "client_id": client["id"],
                    "unit_increments": float(body["unitIncrements"]),
                    "status": body["status"],
                },
            )
            self._set_extras(db, record_id, "initiatives", body)
            return self._initiative_record(db, record_id)

    def import_code_type(
        self, customer_id: str, body: dict[str, Any], *, reimport: str | None = None
    ) -> dict[str, Any]:
        """Create or update (by ``externalId``) one code type.

        Args:
            customer_id: The customer.
            body: A valid Code type payload.
            reimport: ``upsert`` or ``conflict``; default the customer's profile.

        Returns:
            The stored code type.

        Raises:
            Conflict: The code type exists and ``reimport`` is ``conflict``.
            Unprocessable: The body breaks the profile's ``codeTypeBody``: ``spec`` (the
                default, interface.md) needs ``semanticType``, ``customerDefaultable`` and
                ``userDefaultable``; ``published`` lets them be left out (a code type of
                another kind, not defaultable) and refuses a null ``semanticType``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_code_type(cid, {"externalId": "task-code", "name": "task-code",
        ...     "semanticType": "task", "customerDefaultable": True,
        ...     "userDefaultable": False})["semanticType"]
        'task'
        """
        profile = self.profile(customer_id)
        if profile["codeTypeBody"] == "spec":
            errors = [(f, "Field required") for f in CODE_TYPE_SPEC_FIELDS if f not in body]
        else:
            errors = [("semanticType", "may be left out, but not null")]
            errors = errors if "semanticType" in body and body["semanticType"] is None else []
        if errors:
            raise Unprocessable(
                "invalid request: " + "; ".join(f"body.{f}: {d}" for f, d in errors),
                slug="validation-failed",
                errors=[{"in": "body", "field": f, "detail": d} for f, d in errors],
            )
        mode = reimport or profile["reimport"]
        with self._tx() as db:
            record_id = self._upsert(
                db,
                "code_types",
                customer_id,
                body["externalId"],
                mode,
                {
                    "name": body["name"],
                    "semantic_type": body.get("semanticType"),
                    "customer_defaultable": int(body.get("customerDefaultable", False)),
                    "user_defaultable": int(body.get("userDefaultable", False)),
                },
            )
            self._set_extras(db, record_id, "code_types", body)
            return self._code_type_record(db, record_id)

    def import_code(
        self, customer_id: str, body: dict[str, Any], *, reimport: str | None = None
    ) -> dict[str, Any]:
        """Create or update (by ``externalId``) one code; its code type must exist.

        Args:
            customer_id: The customer.
            body: A valid Code payload.
            reimport: ``upsert`` or ``conflict``; default the customer's profile.

        Returns:
            The stored code.

        Raises:
            Unprocessable: ``codeTypeExternalId`` names no code type.
            Conflict: The code exists and ``reimport`` is ``conflict``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_code(cid, {"externalId": "L110", "name": "L110", "description": "",
        ...     "codeTypeExternalId": "task-code"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.Unprocessable: unknown code type externalId 'task-code'
        """
        mode = reimport or self.profile(customer_id)["reimport"]
        with self._tx() as db:
            code_type = db.execute(
                "SELECT id FROM code_types WHERE customer_id = ? AND external_id = ?",
                (customer_id, body["codeTypeExternalId"]),
            ).fetchone()
            if code_type is None:
                raise self._unknown("code type", "codeTypeExternalId", [body["codeTypeExternalId"]])
            record_id = self._upsert(
                db,
                "codes",
                customer_id,
                body["externalId"],
                mode,
                {
                    "name": body["name"],
                    "description": body["description"],
                    "code_type_id": code_type["id"],
                },
            )
            self._set_extras(db, record_id, "codes", body)
            return self._code_record(db, record_id)

    def set_code_range(
        self, customer_id: str, initiative_external_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Set the code range of one initiative: replace it, or add to it (the profile's
        ``codeRangePost``).

        Args:
            customer_id: The customer.
            initiative_external_id: The initiative's ``externalId``.
            body: A valid Code range payload; duplicate ids are dropped.

        Returns:
            ``{initiativeExternalId, codeExternalIds, updatedAt}``: the whole range now stored.

        Raises:
            NotFound: No such initiative.
            Unprocessable: More ids than the profile's ``codeRangeMax``, or some codes do not
                exist (``unknownIds`` lists every one).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.set_code_range(cid, "M1", {"codeExternalIds": []})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: no initiative with externalId 'M1'
        """
        profile = self.profile(customer_id)
        most = profile["codeRangeMax"]
        if len(body["codeExternalIds"]) > most:
            raise Unprocessable(
                f"invalid request: body.codeExternalIds holds {len(body['codeExternalIds'])} "
                f"ids; at most {most} per request",
                slug="validation-failed",
                errors=[
                    {"in": "body", "field": "codeExternalIds", "detail": f"at most {most} items"}
                ],
            )
        wanted = dedupe(body["codeExternalIds"])
        with self._tx() as db:
            initiative = self._pms_initiative(db, customer_id, initiative_external_id)
            if initiative is None:
                raise NotFound(
                    f"no initiative with externalId {initiative_external_id!r}",
                    slug="unknown-initiative",
                )
            codes = self._code_ids(db, customer_id, wanted)
            missing = [code for code in wanted if code not in codes]
            if missing:
                raise self._unknown(
                    "code", "codeExternalIds", missing, positions=body["codeExternalIds"]
                )
            now = self.now_ms()
            if profile["codeRangePost"] == "add":  # the stored ids first, the new ones after
                held = [
                    r[0]
                    for r in db.execute(
                        "SELECT c.external_id FROM code_ranges r JOIN codes c ON c.id = r.code_id "
                        "WHERE r.initiative_id = ? ORDER BY r.position",
                        (initiative["id"],),
                    )
                ]
                wanted = dedupe([*held, *wanted])
                codes.update(self._code_ids(db, customer_id, held))
            db.execute("DELETE FROM code_ranges WHERE initiative_id = ?", (initiative["id"],))
            db.executemany(
                "INSERT INTO code_ranges (initiative_id, position, code_id, updated_at) "
                "VALUES (?, ?, ?, ?)",
                [(initiative["id"], i, codes[c], now) for i, c in enumerate(wanted)],
            )
        return {
            "initiativeExternalId": initiative_external_id,
            "codeExternalIds": wanted,
            "updatedAt": format_timestamp(now),
        }

    def remove_code_range(self, customer_id: str, initiative_external_id: str) -> None:
        """Remove every code of an initiative's range (the published ``DELETE`` on the code
        range's path: no body, 200 with no body; removing an empty range is no error).

        Args:
            customer_id: The customer.
            initiative_external_id: The initiative's ``externalId``.

        Raises:
            NotFound: No such initiative.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.remove_code_range(store.create_customer()["customerId"], "M1")
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: no initiative with externalId 'M1'
        """
        with self._tx() as db:
            initiative = self._pms_initiative(db, customer_id, initiative_external_id)
            if initiative is None:
                raise NotFound(
                    f"no initiative with externalId {initiative_external_id!r}",
                    slug="unknown-initiative",
                )
            db.execute("DELETE FROM code_ranges WHERE initiative_id = ?", (initiative["id"],))

    def _upsert(
        self,
        db: sqlite3.Connection,
        table: str,
        customer_id: str,
        external_id: str,
        reimport: str,
        values: dict[str, Any],
    ) -> str:
        now = self.now_ms()
        row = db.execute(
            f"SELECT id FROM {table} WHERE customer_id = ? AND external_id = ?",
            (customer_id, external_id),
        ).fetchone()
        if row is not None and reimport == "conflict":
            what = table.rstrip("s").replace("_", " ")
            raise Conflict(
                f"a {what} with externalId {external_id!r} already exists",
                slug="already-exists",
                externalId=external_id,
            )
        if row is None:
            record_id = new_id()
            cols = ["id", "customer_id", "external_id", *values, "created_at", "updated_at"]
            db.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                (record_id, customer_id, external_id, *values.values(), now, now),
            )
            return record_id
        sets = ", ".join(f"{col} = ?" for col in values)
        db.execute(
            f"UPDATE {table} SET {sets}, updated_at = ? WHERE id = ?",
            (*values.values(), now, row["id"]),
        )
        return str(row["id"])

    def _parent_id(
        self, db: sqlite3.Connection, customer_id: str, external_id: str, body: dict[str, Any]
    ) -> str:
        """The ``_id`` of the client ``parentClientExternalId`` names (the same parent as a
        ``parentClientId`` sent beside it)."""
        row = db.execute(
            "SELECT id FROM clients WHERE customer_id = ? AND external_id = ?",
            (customer_id, external_id),
        ).fetchone()
        if row is None:
            raise self._unknown("client", "parentClientExternalId", [external_id])
        if body.get("parentClientId") not in (None, row["id"]):
            raise Unprocessable(
                f"parentClientId {body['parentClientId']!r} and parentClientExternalId "
                f"{external_id!r} name two clients",
                slug="validation-failed",
                errors=[
                    {"in": "body", "field": "parentClientExternalId", "detail": "another client"}
                ],
            )
        return str(row["id"])

    @staticmethod
    def _unknown(
        what: str, field: str, ids: Sequence[str], positions: Sequence[str] | None = None
    ) -> Unprocessable:
        errors = []
        for value in ids:
            where = field
            if positions is not None:
                where = f"{field}.{list(positions).index(value)}"
            errors.append(
                {"in": "body", "field": where, "detail": f"unknown {what} externalId {value!r}"}
            )
        listed = ", ".join(repr(v) for v in ids)
        plural = "s" if len(ids) > 1 else ""
        return Unprocessable(
            f"unknown {what} externalId{plural} {listed}",
            slug="unknown-reference",
            errors=errors,
            unknownIds=list(ids),
        )

    @staticmethod
    def _code_ids(
        db: sqlite3.Connection, customer_id: str, external_ids: Sequence[str]
    ) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(external_ids), 500):
            chunk = list(external_ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for row in db.execute(
                f"SELECT id, external_id FROM codes WHERE customer_id = ? "
                f"AND external_id IN ({marks})",
                (customer_id, *chunk),
            ):
                found[row["external_id"]] = row["id"]
        return found

    @staticmethod
    def _set_extras(
        db: sqlite3.Connection, record_id: str, table: str, body: dict[str, Any]
    ) -> None:
        extras = {k: body[k] for k in OPTIONAL_FIELDS[table] if body.get(k) is not None}
        db.execute("DELETE FROM import_extras WHERE record_id = ?", (record_id,))
        if extras:
            db.execute(
                "INSERT INTO import_extras (record_id, fields) VALUES (?, ?)",
                (record_id, json.dumps(extras)),
            )

    @staticmethod
    def _extras(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        row = db.execute(
            "SELECT fields FROM import_extras WHERE record_id = ?", (record_id,)
        ).fetchone()
        return dict(json.loads(row[0])) if row is not None else {}

    @staticmethod
    def _client_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute("SELECT * FROM clients WHERE id = ?", (record_id,)).fetchone()
        return {
            "_id": r["id"],
            "externalId": r["external_id"],
            "name": r["name"],
            "callSign": r["call_sign"],
            "description": r["description"],
            **IngressStore._extras(db, record_id),
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _initiative_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute(
            "SELECT i.*, c.external_id AS client_external_id FROM initiatives i "
            "LEFT JOIN clients c ON c.id = i.client_id WHERE i.id = ?",
            (record_id,),
        ).fetchone()
        return {
            "_id": r["id"],
            "source": r["source"],
            "billingType": r["billing_type"],
            "externalId": r["external_id"],
            "name": r["name"],
            "description": r["description"],
            "callSign": r["call_sign"],
            "clientExternalId": r["client_external_id"],
            "unitIncrements": number(r["unit_increments"]),
            "status": r["status"],
            **IngressStore._extras(db, record_id),
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _code_type_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute("SELECT * FROM code_types WHERE id = ?", (record_id,)).fetchone()
        return {
            "_id": r["id"],
            "externalId": r["external_id"],
            "name": r["name"],
            "semanticType": r["semantic_type"],
            "customerDefaultable": bool(r["customer_defaultable"]),
            "userDefaultable": bool(r["user_defaultable"]),
            **IngressStore._extras(db, record_id),
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _code_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute(
            "SELECT co.*, ct.external_id AS type_external_id FROM codes co "
            "JOIN code_types ct ON ct.id = co.code_type_id WHERE co.id = ?",
            (record_id,),
        ).fetchone()
        return {
            "_id": r["id"],
            "externalId": r["external_id"],
            "name": r["name"],
            "description": r["description"],
            "codeTypeExternalId": r["type_external_id"],
            **IngressStore._extras(db, record_id),
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _code_ranges(db: sqlite3.Connection, customer_id: str) -> list[dict[str, Any]]:
        ranges: dict[str, dict[str, Any]] = {}
        for r in db.execute(
            "SELECT i.external_id AS ini, co.external_id AS code, cr.updated_at "
            "FROM code_ranges cr JOIN initiatives i ON i.id = cr.initiative_id "
            "JOIN codes co ON co.id = cr.code_id WHERE i.customer_id = ? "
            "ORDER BY i.created_at, i.rowid, cr.position",
            (customer_id,),
        ):
            item = ranges.setdefault(
                r["ini"],
                {
                    "initiativeExternalId": r["ini"],
                    "codeExternalIds": [],
                    "updatedAt": format_timestamp(r["updated_at"]),
                },
            )
            item["codeExternalIds"].append(r["code"])
        return list(ranges.values())
