"""Administration: the state behind the ``/sandbox/v1`` routes, which are not the interface.

What users do inside the product (create users and time entries, release entries, wall
initiatives off, create product initiatives), the listing of stored records, and seeding (the
sample firm from CSV files, and bulk entries for benchmarks). Seeding goes through the
ingress rules, so this part builds on :class:`~toolkit.sandbox._models.ingress.IngressStore`.
Fault injection and request counts are not stored state: they live in
:mod:`toolkit.sandbox._faults`.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import secrets
import sqlite3
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .._admin_bodies import UserIn
from .._bodies import (
    ClientIn,
    CodeIn,
    CodeRangeIn,
    CodeTypeIn,
    InitiativeIn,
    parse_datetime,
)
from .._exceptions import Conflict, NotFound, Unprocessable
from .core import EPOCH, PRODUCT_UNIT_INCREMENTS, dedupe, format_timestamp, new_id, object_id, to_ms
from .ingress import IngressStore
from .profiles import refuse_body

__all__ = ["RECORD_KINDS", "AdministrationStore"]

RECORD_KINDS = (
    "clients",
    "initiatives",
    "code-types",
    "codes",
    "code-ranges",
    "entries",
    "users",
    "stars",
)
"""Kinds the administration ``records`` listing serves."""
_MAX_LAG = 14 * 86_400_000
"""Longest time, in ms, from recording to release of a bulk-seeded entry (two weekly releases)."""
_LAG_STEP = 2_654_435_761
"""Knuth's multiplicative hash: ``i * _LAG_STEP`` spreads the lags of consecutive entries."""

_SUMMARIES = (
    "Review and revise draft share purchase agreement",
    "Telephone conference with client re settlement strategy",
    "Research case law on limitation periods",
    "Prepare witness statement outline",
    "Draft letter to opposing counsel",
    "Réunion avec le client — révision du contrat de bail",
    "Telefonat mit Mandantin über Vergleichsangebot (Größenordnung klären)",
    "審査書類の確認と修正",
    "会议纪要整理及客户邮件回复",
    "Due diligence: review of IP assignments ✓",
    "Análisis de la cláusula de no competencia",
    "Attend hearing; travel time excluded",
    "Revise board minutes — “final” version",
    "",
)


def _validated(
    model: type[BaseModel], data: dict[str, Any], profile: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``data`` as ``model`` takes it, and as ``profile`` (default: the defaults) takes its
    empty values and unknown fields; an unknown field is dropped when taken."""
    try:
        body = model.model_validate(data)
    except ValidationError as exc:
        errors = [
            {
                "in": "body",
                "field": ".".join(str(p) for p in err["loc"]),
                "detail": err["msg"],
            }
            for err in exc.errors()
        ]
        raise Unprocessable(f"invalid {model.__name__}", errors=errors) from exc
    profile = profile or {"emptyValues": "refuse", "unknownFields": "refuse"}
    empty, unknown = profile["emptyValues"] == "refuse", profile["unknownFields"] == "refuse"
    refuse_body(body, empty=empty, unknown=unknown)
    return body.model_dump(exclude_unset=True, exclude=set(body.model_extra or ()))


class AdministrationStore(IngressStore):
    """Users, walls, entries and product initiatives; the records listing; seeding.

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> cid = store.create_customer()["customerId"]
    >>> store.create_user(cid, {"timekeeperExternalId": "T", "name": "N", "email": ""})["name"]
    'N'
    """

    def create_user(self, customer_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create a user (a timekeeper id may repeat, which makes it ambiguous).

        Args:
            customer_id: The customer.
            body: ``{timekeeperExternalId, name, email}``.

        Returns:
            The user record.

        Raises:
            NotFound: Unknown customer.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.create_user(cid, {"timekeeperExternalId": "T", "name": "N", "email": "e"})["name"]
        'N'
        """
        user_id = new_id()
        with self._tx() as db:
            self._require_customer(db, customer_id)
            db.execute(
                "INSERT INTO users (id, customer_id, timekeeper_external_id, name, email, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    user_id,
                    customer_id,
                    body["timekeeperExternalId"],
                    body["name"],
                    body["email"],
                    self.now_ms(),
                ),
            )
            return self._user_record(self._require_user(db, customer_id, user_id))

    def set_walls(self, customer_id: str, user_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Replace the initiatives (by externalId) the user has no access to.

        Ids need not exist yet: a wall may be set before the initiative is imported.

        Args:
            customer_id: The customer.
            user_id: The user.
            body: ``{initiativeExternalIds: [...]}``.

        Returns:
            ``{userId, initiativeExternalIds}``.

        Raises:
            NotFound: Unknown customer or user.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> uid = store.create_user(cid, {"timekeeperExternalId": "T", "name": "",
        ...     "email": ""})["_id"]
        >>> store.set_walls(cid, uid, {"initiativeExternalIds": ["M1"]})["initiativeExternalIds"]
        ['M1']
        """
        walls = dedupe(body["initiativeExternalIds"])
        with self._tx() as db:
            self._require_customer(db, customer_id)
            self._require_user(db, customer_id, user_id)
            db.execute("DELETE FROM walls WHERE user_id = ?", (user_id,))
            db.executemany(
                "INSERT INTO walls (user_id, initiative_external_id) VALUES (?, ?)",
                [(user_id, w) for w in walls],
            )
        return {"userId": user_id, "initiativeExternalIds": walls}

    def create_entry(self, customer_id: str, user_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create a time entry in the editable state (the user's action in the product).

        Args:
            customer_id: The customer.
            user_id: The entry's user.
            body: ``{initiativeExternalId, workDate, summary, incrementDurationInSeconds,
                unitIncrementCount?, codes: [{codeExternalId, assignedBy}]}``; the duration
                and count may hold fractions (kept as given; the count defaults to the
                duration over the initiative's ``unitIncrements``).

        Returns:
            The entry (administration view).

        Raises:
            NotFound: Unknown customer or user.
            Unprocessable: Unknown initiative or codes, or codes outside the initiative's
                code range.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> uid = store.create_user(cid, {"timekeeperExternalId": "T", "name": "",
        ...     "email": ""})["_id"]
        >>> store.create_entry(cid, uid, {"initiativeExternalId": "M1", "workDate": "2025-01-02",
        ...     "summary": "", "incrementDurationInSeconds": 60, "codes": []})
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.Unprocessable: unknown initiative externalId 'M1'
        """
        with self._tx() as db:
            self._require_customer(db, customer_id)
            self._require_user(db, customer_id, user_id)
            entry_id = self._insert_entry(db, customer_id, user_id, body, self.now_ms())
            return self._entry_record(db, entry_id)

    def release_entry(
        self, customer_id: str, user_id: str, entry_id: str, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The user releases an entry: editable or failed becomes pending at ``at``.

        ``updatedAt`` and the release time are set to ``at`` (default now); errors of an
        earlier failure are cleared.

        Args:
            customer_id: The customer.
            user_id: The entry's user.
            entry_id: The entry.
            body: ``{"at": ISO 8601 date-time or None}``.

        Returns:
            The entry (administration view).

        Raises:
            NotFound: Unknown customer, user or entry.
            Conflict: The entry is already pending or released successfully.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_entry("c", "u", "e")
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.NotFound: no customer 'c'
        """
        at = (body or {}).get("at")
        moment = to_ms(parse_datetime(at)) if at else self.now_ms()
        with self._tx() as db:
            self._require_customer(db, customer_id)
            self._require_user(db, customer_id, user_id)
            row = db.execute(
                "SELECT state FROM entries WHERE id = ? AND customer_id = ? AND user_id = ?",
                (entry_id, customer_id, user_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"no entry {entry_id!r} for user {user_id!r}", slug="unknown-entry")
            if row["state"] not in ("editable", "failed"):
                raise Conflict(
                    f"an entry in state {row['state']} cannot be released",
                    slug="entry-not-releasable",
                    state=row["state"],
                )
            db.execute(
                "UPDATE entries SET state = 'pending', released_at = ?, updated_at = ?, "
                "errors = NULL WHERE id = ?",
                (moment, moment, entry_id),
            )
            return self._entry_record(db, entry_id)

    def create_product_initiative(
        self, customer_id: str, user_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Create an initiative inside the product (no externalId) and pin it for the user.

        Args:
            customer_id: The customer.
            user_id: The user who created (and pinned) it.
            body: ``{"name": str}``.

        Returns:
            ``{_id, name, userId, pinned}``.

        Raises:
            NotFound: Unknown customer or user.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> uid = store.create_user(cid, {"timekeeperExternalId": "T", "name": "",
        ...     "email": ""})["_id"]
        >>> store.create_product_initiative(cid, uid, {"name": "Admin"})["pinned"]
        True
        """
        initiative_id = new_id()
        now = self.now_ms()
        with self._tx() as db:
            self._require_customer(db, customer_id)
            self._require_user(db, customer_id, user_id)
            db.execute(
                "INSERT INTO initiatives (id, customer_id, external_id, source, name, status, "
                "billing_type, unit_increments, created_at, updated_at) "
                "VALUES (?, ?, NULL, 'product', ?, 'active', 'non-billable', ?, ?, ?)",
                (initiative_id, customer_id, body["name"], PRODUCT_UNIT_INCREMENTS, now, now),
            )
            db.execute(
                "INSERT INTO pins (user_id, initiative_id) VALUES (?, ?)", (user_id, initiative_id)
            )
        return {"_id": initiative_id, "name": body["name"], "userId": user_id, "pinned": True}

    def _insert_entry(
        self,
        db: sqlite3.Connection,
        customer_id: str,
        user_id: str,
        body: dict[str, Any],
        created_at: int,
    ) -> str:
        initiative = self._pms_initiative(db, customer_id, body["initiativeExternalId"])
        if initiative is None:
            raise self._unknown(
                "initiative", "initiativeExternalId", [body["initiativeExternalId"]]
            )
        codes = body.get("codes") or []
        wanted = [c["codeExternalId"] for c in codes]
        found = self._code_ids(db, customer_id, wanted)
        missing = dedupe([c for c in wanted if c not in found])
        if missing:
            raise self._unknown("code", "codes", missing)
        allowed = {
            r[0]
            for r in db.execute(
                "SELECT code_id FROM code_ranges WHERE initiative_id = ?", (initiative["id"],)
            )
        }
        outside = dedupe([c for c in wanted if allowed and found[c] not in allowed])
        if outside:
            raise Unprocessable(
                f"codes outside the initiative's code range: {', '.join(outside)}",
                slug="code-outside-range",
                unknownIds=outside,
            )
        entry_id = new_id()
        db.execute(
            "INSERT INTO entries (id, customer_id, user_id, initiative_id, work_date, summary, "
            "duration, state, created_at, updated_at, unit_count) VALUES (?, ?, ?, ?, ?, ?, ?, "
            "'editable', ?, ?, ?)",
            (
                entry_id,
                customer_id,
                user_id,
                initiative["id"],
                body["workDate"],
                body["summary"],
                body["incrementDurationInSeconds"],
                created_at,
                created_at,
                body.get("unitIncrementCount"),
            ),
        )
        db.executemany(
            "INSERT INTO entry_codes (entry_id, position, code_id, assigned_by) "
            "VALUES (?, ?, ?, ?)",
            [
                (entry_id, i, found[c["codeExternalId"]], c["assignedBy"])
                for i, c in enumerate(codes)
            ],
        )
        return entry_id

    def records(self, customer_id: str, kind: str) -> list[dict[str, Any]]:
        """List every stored record of one kind for a customer (administration view).

        Args:
            customer_id: The customer.
            kind: One of :data:`RECORD_KINDS`.

        Returns:
            The records, oldest first.

        Raises:
            NotFound: Unknown customer or kind.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.records(store.create_customer()["customerId"], "clients")
        []
        """
        tables = {
            "clients": ("clients", self._client_record),
            "initiatives": ("initiatives", self._initiative_record),
            "code-types": ("code_types", self._code_type_record),
            "codes": ("codes", self._code_record),
            "entries": ("entries", self._entry_record),
        }
        with self._read() as db:
            self._require_customer(db, customer_id)
            if kind in tables:
                table, render = tables[kind]
                ids = [
                    r["id"]
                    for r in db.execute(
                        f"SELECT id FROM {table} WHERE customer_id = ? ORDER BY created_at, rowid",
                        (customer_id,),
                    )
                ]
                return [render(db, record_id) for record_id in ids]
            if kind == "code-ranges":
                return self._code_ranges(db, customer_id)
            if kind == "users":
                return [
                    self._user_record(r)
                    for r in db.execute(
                        "SELECT * FROM users WHERE customer_id = ? ORDER BY created_at, rowid",
                        (customer_id,),
                    )
                ]
            if kind == "stars":
                return [
                    {
                        "userId": r["user_id"],
                        "timekeeperExternalId": r["tk"],
                        "initiativeId": r["initiative_id"],
                        "initiativeExternalId": r["ext"],
                        "source": r["source"],
                        "seq": r["seq"],
                    }
                    for r in db.execute(
                        "SELECT p.seq, p.user_id, u.timekeeper_external_id AS tk, "
                        "p.initiative_id, i.external_id AS ext, i.source FROM pins p "
                        "JOIN users u ON u.id = p.user_id "
                        "JOIN initiatives i ON i.id = p.initiative_id "
                        "WHERE u.customer_id = ? ORDER BY p.seq",
                        (customer_id,),
                    )
                ]
        raise NotFound(f"no record kind {kind!r}; use one of {', '.join(RECORD_KINDS)}")

    @staticmethod
    def _entry_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute(
            "SELECT e.*, i.external_id AS initiative_external_id FROM entries e "
            "JOIN initiatives i ON i.id = e.initiative_id WHERE e.id = ?",
            (record_id,),
        ).fetchone()
        codes = [
            {"codeExternalId": c["external_id"], "assignedBy": c["assigned_by"]}
            for c in db.execute(
                "SELECT co.external_id, ec.assigned_by FROM entry_codes ec "
                "JOIN codes co ON co.id = ec.code_id WHERE ec.entry_id = ? ORDER BY ec.position",
                (record_id,),
            )
        ]
        return {
            "_id": r["id"],
            "userId": r["user_id"],
            "initiativeExternalId": r["initiative_external_id"],
            "workDate": r["work_date"],
            "summary": r["summary"],
            "incrementDurationInSeconds": r["duration"],
            "unitIncrementCount": r["unit_count"],
            "codes": codes,
            "state": r["state"],
            "releasedAt": format_timestamp(r["released_at"])
            if r["released_at"] is not None
            else None,
            "externalId": r["external_id"],
            "errors": json.loads(r["errors"]) if r["errors"] else None,
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    def seed_sample(
        self,
        directory: str | os.PathLike[str],
        customer_id: str,
        *,
        seed: int = 0,
        entries: int = 300,
    ) -> dict[str, int]:
        """Load the sample firm from CSV files through the import rules, then make entries.

        Reads ``clients.csv``, ``initiatives.csv``, ``code_types.csv``, ``codes.csv``,
        ``code_ranges.csv`` (long form) and ``timekeepers.csv``, skipping missing files.
        Imports upsert, users are created for timekeepers not yet present, and when the
        customer has no entries yet, ``entries`` entries released over the last four weeks
        (relative to the clock) are created, deterministically for a given ``seed``, and
        each user stars three initiatives and gets one product-created initiative; the
        latest of those entries is moved to its user's product-created initiative (a user
        initiative). Under the profile switch ``counts: double`` every tenth entry stores a
        fractional count (2.5 for 3 increments) and every 25th a fractional duration (1234.5
        for 1235 seconds), so a whole-number reading of them is unchanged.

        Args:
            directory: The folder holding the CSV files.
            customer_id: The customer to load into.
            seed: Seed of the random choices.
            entries: Number of entries to create.

        Returns:
            Counts of what was loaded, by kind.

        Raises:
            FileNotFoundError: ``directory`` is not a folder.
            Unprocessable: A row breaks a field or reference rule (the message names it).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.seed_sample(tempfile.mkdtemp(), store.create_customer()["customerId"])
        {'clients': 0, 'initiatives': 0, 'code-types': 0, 'codes': 0, 'code-ranges': 0, 'users': 0, 'entries': 0}
        """  # noqa: E501
        folder = Path(directory)
        if not folder.is_dir():
            raise FileNotFoundError(f"no sample data folder {str(folder)!r}")
        counts = dict.fromkeys(
            ("clients", "initiatives", "code-types", "codes", "code-ranges", "users", "entries"),
            0,
        )

        def rows(name: str) -> list[dict[str, str]]:
            path = folder / name
            if not path.is_file():
                return []
            with path.open(newline="", encoding="utf-8-sig") as handle:
                return list(csv.DictReader(handle))

        def number(text: str) -> int | float | str:
            try:
                return int(text)
            except ValueError:
                try:
                    return float(text)
                except ValueError:
                    return text

        def boolean(text: str) -> bool | str:
            return {"true": True, "false": False}.get(text.strip().lower(), text)

        published = self.profile(customer_id)["codeTypeBody"] == "published"
        profile = self.profile(customer_id)

        def code_type(row: dict[str, str]) -> dict[str, Any]:  # no kind: as the profile takes it
            body: dict[str, Any] = {**row, "semanticType": row.get("semanticType") or None}
            for name in ("customerDefaultable", "userDefaultable"):
                body[name] = boolean(row.get(name, ""))
            if body["semanticType"] is None and published:
                del body["semanticType"]
            return body

        steps: list[tuple[str, str, type[BaseModel], Callable[..., Any], Callable[..., Any]]] = [
            ("clients", "clients.csv", ClientIn, self.import_client, lambda r: r),
            (
                "initiatives",
                "initiatives.csv",
                InitiativeIn,
                self.import_initiative,
                lambda r: {**r, "unitIncrements": number(r.get("unitIncrements", ""))},
            ),
            (
                "code-types",
                "code_types.csv",
                CodeTypeIn,
                self.import_code_type,
                code_type,
            ),
            ("codes", "codes.csv", CodeIn, self.import_code, lambda r: r),
        ]
        for kind, filename, model, importer, convert in steps:
            for line, row in enumerate(rows(filename), start=2):
                try:
                    # seeding upserts whatever the customer's profile says
                    importer(
                        customer_id, _validated(model, convert(row), profile), reimport="upsert"
                    )
                except Unprocessable as exc:
                    raise Unprocessable(
                        f"{filename} line {line}: {exc.detail}", errors=exc.extra.get("errors", [])
                    ) from exc
                counts[kind] += 1
        ranges: dict[str, list[str]] = {}
        for row in rows("code_ranges.csv"):
            ranges.setdefault(row["initiativeExternalId"], []).append(row["codeExternalId"])
        for initiative, code_ids in ranges.items():
            try:
                self.set_code_range(
                    customer_id,
                    initiative,
                    _validated(CodeRangeIn, {"codeExternalIds": code_ids}, profile),
                )
            except (NotFound, Unprocessable) as exc:
                raise Unprocessable(f"code_ranges.csv: {exc.detail}") from exc
            counts["code-ranges"] += 1
        with self._read() as db:
            known = {
                r[0]
                for r in db.execute(
                    "SELECT timekeeper_external_id FROM users WHERE customer_id = ?", (customer_id,)
                )
            }
        for row in rows("timekeepers.csv"):
            if row["timekeeperExternalId"] not in known:
                self.create_user(customer_id, _validated(UserIn, row))
                known.add(row["timekeeperExternalId"])
                counts["users"] += 1
        counts["entries"] = self._seed_entries(customer_id, random.Random(seed), entries)
        return counts

    def _seed_entries(self, customer_id: str, rng: random.Random, n: int) -> int:
        with self._read() as db:
            if db.execute(
                "SELECT 1 FROM entries WHERE customer_id = ? LIMIT 1", (customer_id,)
            ).fetchone():
                return 0
            users = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM users WHERE customer_id = ? ORDER BY rowid", (customer_id,)
                )
            ]
            initiatives = [
                (r[0], r[1])
                for r in db.execute(
                    "SELECT id, external_id FROM initiatives WHERE customer_id = ? "
                    "AND source = 'pms' AND status = 'active' ORDER BY rowid",
                    (customer_id,),
                )
            ]
            all_codes = [
                r[0]
                for r in db.execute(
                    "SELECT external_id FROM codes WHERE customer_id = ? ORDER BY rowid",
                    (customer_id,),
                )
            ]
            ranges: dict[str, list[str]] = {}
            for r in db.execute(
                "SELECT cr.initiative_id, co.external_id FROM code_ranges cr "
                "JOIN codes co ON co.id = cr.code_id WHERE co.customer_id = ? "
                "ORDER BY cr.initiative_id, cr.position",
                (customer_id,),
            ):
                ranges.setdefault(r[0], []).append(r[1])
        if not users or not initiatives:
            return 0
        now = self.now_ms()
        four_weeks = 28 * 24 * 3_600_000
        made = 0
        fractions = self.profile(customer_id)["counts"] == "double"
        latest: tuple[int, str, str] | None = None  # (released, entry, user)
        with self._tx() as db:
            for i in range(n):
                user = rng.choice(users)
                initiative_id, initiative_ext = rng.choice(initiatives)
                pool = ranges.get(initiative_id, all_codes)
                count = rng.choices((0, 1, 2, 3), weights=(15, 25, 45, 15))[0]
                picked = rng.sample(pool, min(count, len(pool)))
                released = now - rng.randrange(1, four_weeks)
                created = released - rng.randrange(60_000, 3 * 24 * 3_600_000)
                work_date = (EPOCH + timedelta(milliseconds=created)).date()
                duration: float = rng.choice((360 * rng.randint(1, 30), rng.randint(60, 14_400)))
                if fractions and i % 25 == 7:
                    duration -= 0.5
                body = {
                    "initiativeExternalId": initiative_ext,
                    "workDate": date.isoformat(work_date),
                    "summary": rng.choice(_SUMMARIES),
                    "incrementDurationInSeconds": duration,
                    "codes": [
                        {
                            "codeExternalId": c,
                            "assignedBy": "service" if rng.random() < 0.15 else "user",
                        }
                        for c in picked
                    ],
                }
                entry_id = self._insert_entry(db, customer_id, user, body, created)
                db.execute(
                    "UPDATE entries SET state = 'pending', released_at = ?, updated_at = ?, "
                    "unit_count = ? WHERE id = ?",
                    (
                        released,
                        released,
                        self._fraction_below(db, entry_id) if fractions and i % 10 == 3 else None,
                        entry_id,
                    ),
                )
                if latest is None or (released, entry_id) > latest[:2]:
                    latest = (released, entry_id, user)
                made += 1
            for user in users:
                for initiative_id, _ in rng.sample(initiatives, min(3, len(initiatives))):
                    db.execute(
                        "INSERT OR IGNORE INTO pins (user_id, initiative_id) VALUES (?, ?)",
                        (user, initiative_id),
                    )
                product_id = new_id()
                db.execute(
                    "INSERT INTO initiatives (id, customer_id, external_id, source, name, "
                    "status, billing_type, unit_increments, created_at, updated_at) "
                    "VALUES (?, ?, NULL, 'product', ?, 'active', 'non-billable', ?, ?, ?)",
                    (
                        product_id,
                        customer_id,
                        "Knowledge management (internal)",
                        PRODUCT_UNIT_INCREMENTS,
                        now,
                        now,
                    ),
                )
                db.execute(
                    "INSERT INTO pins (user_id, initiative_id) VALUES (?, ?)", (user, product_id)
                )
                if latest is not None and latest[2] == user:  # one entry on a user initiative
                    db.execute(
                        "UPDATE entries SET initiative_id = ? WHERE id = ?", (product_id, latest[1])
                    )
        return made

    @staticmethod
    def _fraction_below(db: sqlite3.Connection, entry_id: str) -> float | None:
        """Half an increment below the entry's whole count (2.5 for 3), or None for 0."""
        r = db.execute(
            "SELECT e.duration, i.unit_increments FROM entries e JOIN initiatives i "
            "ON i.id = e.initiative_id WHERE e.id = ?",
            (entry_id,),
        ).fetchone()
        unit = r["unit_increments"]
        whole = math.ceil(r["duration"] / unit) if unit else 0
        return whole - 0.5 if whole else None

    def seed_entries_bulk(
        self,
        customer_id: str,
        n: int,
        *,
        released_from: datetime,
        released_to: datetime,
        codes_per_entry: int = 3,
        batch: int = 50_000,
    ) -> int:
        """Insert ``n`` pending entries fast, for benchmarks.

        Release times are spread evenly over ``(released_from, released_to]``, the i-th
        (from 1) at ``released_from + i * span / n``, so an export window's count is exact.
        Time is recorded before it is released, as timesheets are released weekly: each
        entry's ``created_at`` and ``work_date`` lie a lag of 0 to 14 days (spread by ``i``,
        the same for every call) before its release, and its id is an ObjectId of its
        ``created_at`` (as the service's), so ids do not follow the release order.
        Entries cycle through the customer's users, active initiatives and codes; a bench
        user, client, initiative, code type and codes are created when missing.

        Args:
            customer_id: The customer.
            n: Number of entries.
            released_from: Exclusive start of the release times.
            released_to: Inclusive end of the release times.
            codes_per_entry: Codes on every entry (at most the number of codes available).
            batch: Rows per ``executemany`` transaction.

        Returns:
            The number of entries inserted.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> from datetime import UTC, datetime
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> t0, t1 = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 2, tzinfo=UTC)
        >>> store.seed_entries_bulk(cid, 1000, released_from=t0, released_to=t1)
        1000
        >>> len(store.export_entries(cid, t0, t1))
        1000
        """
        users, initiatives, codes = self._bench_fixtures(customer_id)
        codes_per_entry = max(0, min(codes_per_entry, len(codes)))
        low, high = to_ms(released_from), to_ms(released_to)
        span = high - low
        unique = secrets.token_hex(5)  # an ObjectId's per-process value: ids unique across calls
        created = 0
        # under counts: double every tenth entry stores a count half an increment below its own
        fraction = 0.5 if self.profile(customer_id)["counts"] == "double" else None
        for start in range(0, n, batch):
            stop = min(n, start + batch)
            entry_rows = []
            code_rows = []
            for i in range(start, stop):
                released = low + (span * (i + 1)) // n
                made = released - (i * _LAG_STEP) % (_MAX_LAG + 1)  # recorded 0 to 14 days before
                entry_id = object_id(made // 1000, unique, i)
                work_date = (EPOCH + timedelta(milliseconds=made)).date().isoformat()
                entry_rows.append(
                    (
                        entry_id,
                        customer_id,
                        users[i % len(users)],
                        initiatives[i % len(initiatives)],
                        work_date,
                        f"Bench entry {i}",
                        360 * (1 + i % 20),
                        "pending",
                        released,
                        made,
                        released,
                        (1 + i % 20) - fraction if fraction is not None and i % 10 == 3 else None,
                    )
                )
                for k in range(codes_per_entry):
                    code_rows.append(
                        (entry_id, k, codes[(i + k) % len(codes)], "user" if k else "service")
                    )
            with self._tx() as db:
                db.executemany(
                    "INSERT INTO entries (id, customer_id, user_id, initiative_id, work_date, "
                    "summary, duration, state, released_at, created_at, updated_at, "
                    "unit_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    entry_rows,
                )
                db.executemany(
                    "INSERT INTO entry_codes (entry_id, position, code_id, assigned_by) "
                    "VALUES (?, ?, ?, ?)",
                    code_rows,
                )
            created += len(entry_rows)
        return created

    def _bench_fixtures(self, customer_id: str) -> tuple[list[str], list[str], list[str]]:
        with self._read() as db:
            self._require_customer(db, customer_id)
            users = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM users WHERE customer_id = ? ORDER BY rowid", (customer_id,)
                )
            ]
            initiatives = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM initiatives WHERE customer_id = ? AND source = 'pms' "
                    "AND status = 'active' ORDER BY rowid",
                    (customer_id,),
                )
            ]
            codes = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM codes WHERE customer_id = ? ORDER BY rowid", (customer_id,)
                )
            ]
        if not users:
            users = [
                self.create_user(
                    customer_id,
                    {
                        "timekeeperExternalId": "BENCH",
                        "name": "Bench User",
                        "email": "bench@example.com",
                    },
                )["_id"]
            ]
        if not initiatives:
            self.import_client(
                customer_id,
                {
                    "externalId": "BENCH-C",
                    "name": "Bench client",
                    "callSign": "BENCH",
                    "description": "",
                },
                reimport="upsert",
            )
            initiatives = [
                self.import_initiative(
                    customer_id,
                    {
                        "externalId": "BENCH-M",
                        "name": "Bench matter",
                        "description": "",
                        "callSign": "BENCH-M",
                        "clientExternalId": "BENCH-C",
                        "billingType": "billable",
                        "unitIncrements": 360,
                        "status": "active",
                    },
                    reimport="upsert",
                )["_id"]
            ]
        if not codes:
            self.import_code_type(
                customer_id,
                {
                    "externalId": "bench-code",
                    "name": "bench-code",
                    "semanticType": "task",
                    "customerDefaultable": False,
                    "userDefaultable": False,
                },
                reimport="upsert",
            )
            codes = [
                self.import_code(
                    customer_id,
                    {
                        "externalId": f"B{k}",
                        "name": f"B{k}",
                        "description": "",
                        "codeTypeExternalId": "bench-code",
                    },
                    reimport="upsert",
                )["_id"]
                for k in range(3)
            ]
        return users, initiatives, codes
