"""State and rules of the sandbox: one SQLite file, one connection, one lock.

:class:`Store` is the sandbox's ``models.py`` in moto's sense: methods are named like the
interface's operations, take and return plain JSON-ready dicts, know nothing about HTTP and
raise the errors of :mod:`toolkit.sandbox.exceptions`. Field-level rules (types, enums,
required fields) are checked before a body reaches the store, by the models of
:mod:`toolkit.sandbox.payloads`; the store checks references and states.

Durability: WAL journal, ``synchronous=FULL``, and every write runs in its own
``BEGIN IMMEDIATE ... COMMIT`` before the method returns, so an answered write survives
``kill -9``.
"""

from __future__ import annotations

import base64
import binascii
import csv
import functools
import hashlib
import hmac
import json
import math
import random
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .exceptions import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidClient,
    InvalidRequest,
    NotFound,
    Unauthorized,
    Unprocessable,
    UnsupportedGrantType,
)
from .payloads import (
    ClientIn,
    CodeIn,
    CodeRangeIn,
    CodeTypeIn,
    InitiativeIn,
    UserIn,
    parse_datetime,
)

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_TOKEN_TTL",
    "RECORD_KINDS",
    "Clock",
    "Store",
    "format_timestamp",
    "new_id",
]

DEFAULT_AUDIENCE = "https://time-api.sandbox.timebill.invalid"
"""Audience the token endpoint expects unless another is configured."""
DEFAULT_TOKEN_TTL = 86400
"""Access token lifetime in seconds, as in the spec's example response."""
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

Clock = Callable[[], datetime]
"""A zero-argument callable returning the current time as an aware datetime."""

ERR_NOT_FOUND = (20080, "initiative not found")
ERR_INACTIVE = (20081, "initiative is inactive")
ERR_ACCESS = (20083, "initiative access denied")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_DUMMY_HASH = hashlib.sha256(b"dummy").hexdigest()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, demo INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_clients (
    client_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_secrets (
    client_id TEXT NOT NULL, secret_hash TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS oauth_secrets_client ON oauth_secrets (client_id);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY, customer_id TEXT NOT NULL, client_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
    name TEXT NOT NULL, call_sign TEXT NOT NULL, description TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (customer_id, external_id));
CREATE TABLE IF NOT EXISTS initiatives (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, external_id TEXT,
    source TEXT NOT NULL, billing_type TEXT, name TEXT NOT NULL, description TEXT,
    call_sign TEXT, client_id TEXT, unit_increments REAL, status TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (customer_id, external_id));
CREATE TABLE IF NOT EXISTS code_types (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
    name TEXT NOT NULL, semantic_type TEXT, customer_defaultable INTEGER NOT NULL,
    user_defaultable INTEGER NOT NULL, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, UNIQUE (customer_id, external_id));
CREATE TABLE IF NOT EXISTS codes (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
    name TEXT NOT NULL, description TEXT NOT NULL, code_type_id TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (customer_id, external_id));
CREATE TABLE IF NOT EXISTS code_ranges (
    initiative_id TEXT NOT NULL, position INTEGER NOT NULL, code_id TEXT NOT NULL,
    updated_at INTEGER NOT NULL, PRIMARY KEY (initiative_id, position));
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, timekeeper_external_id TEXT NOT NULL,
    name TEXT NOT NULL, email TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS users_timekeeper ON users (customer_id, timekeeper_external_id);
CREATE TABLE IF NOT EXISTS walls (
    user_id TEXT NOT NULL, initiative_external_id TEXT NOT NULL,
    PRIMARY KEY (user_id, initiative_external_id));
CREATE TABLE IF NOT EXISTS pins (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL,
    initiative_id TEXT NOT NULL, UNIQUE (user_id, initiative_id));
CREATE INDEX IF NOT EXISTS pins_user_seq ON pins (user_id, seq);
CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, user_id TEXT NOT NULL,
    initiative_id TEXT NOT NULL, work_date TEXT NOT NULL, summary TEXT NOT NULL,
    duration INTEGER NOT NULL, state TEXT NOT NULL, released_at INTEGER,
    external_id TEXT, errors TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entries_released ON entries (customer_id, released_at);
CREATE INDEX IF NOT EXISTS entries_state ON entries (customer_id, state);
CREATE TABLE IF NOT EXISTS entry_codes (
    entry_id TEXT NOT NULL, position INTEGER NOT NULL, code_id TEXT NOT NULL,
    assigned_by TEXT NOT NULL, PRIMARY KEY (entry_id, position));
"""

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


def new_id() -> str:
    """Return a new 24-hex identifier, like the operator's.

    >>> len(new_id()), all(c in "0123456789abcdef" for c in new_id())
    (24, True)
    """
    return secrets.token_hex(12)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _to_ms(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS


def format_timestamp(ms: int) -> str:
    """Format milliseconds since the epoch as ISO 8601 UTC with milliseconds and ``Z``.

    Args:
        ms: Milliseconds since 1970-01-01T00:00:00Z.

    Returns:
        For example ``2025-03-01T09:30:00.123Z``.

    >>> format_timestamp(1_740_821_400_123)
    '2025-03-01T09:30:00.123Z'
    """
    m = _EPOCH + timedelta(milliseconds=ms)
    return (f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:"
            f"{m.second:02d}.{m.microsecond // 1000:03d}Z")


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def _increment_count(duration: int, unit: float | None) -> int:
    if not unit:
        return 0
    if float(unit).is_integer():
        return -(-duration // int(unit))
    return math.ceil(Fraction(duration) / _exact(float(unit)))


@functools.lru_cache(maxsize=1024)
def _exact(unit: float) -> Fraction:
    """The decimal the client sent (0.3 is 3/10, not the nearest binary fraction)."""
    return Fraction(repr(unit))


def _color(initiative_id: str) -> str:
    return hashlib.sha256(initiative_id.encode()).hexdigest()[:6]


def _dedupe(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _validated(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    try:
        return model.model_validate(data).model_dump()
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


class Store:
    """The sandbox's state over one SQLite file.

    Args:
        path: SQLite file; created with its schema when missing, reused as is otherwise.
        token_ttl: Lifetime in seconds of the access tokens issued from now on.
        audience: The audience the token endpoint requires.
        clock: Source of "now" (an aware datetime); tests pass a fake to expire tokens.

    >>> import tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> creds = store.create_customer("Firm")
    >>> store.import_client(creds["customerId"], {"externalId": "C1", "name": "Acme",
    ...     "callSign": "ACME", "description": ""})["externalId"]
    'C1'
    >>> store.close()
    """

    def __init__(
        self,
        path: str | Path,
        *,
        token_ttl: int = DEFAULT_TOKEN_TTL,
        audience: str = DEFAULT_AUDIENCE,
        clock: Clock | None = None,
    ) -> None:
        self.path = Path(path)
        self.token_ttl = int(token_ttl)
        self.audience = audience
        self._clock: Clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30
        )
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    # --- plumbing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent).

        >>> import tempfile, os
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).close()
        """
        with self._lock:
            try:
                self._db.close()
            except sqlite3.ProgrammingError:  # pragma: no cover - already closed
                pass

    def now_ms(self) -> int:
        """Return the store's clock as milliseconds since the epoch.

        >>> import tempfile, os
        >>> fixed = lambda: datetime(2025, 1, 1, tzinfo=UTC)
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db"), clock=fixed).now_ms()
        1735689600000
        """
        return _to_ms(self._clock())

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """Serialize on the lock and run one committed write transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                self._db.execute("COMMIT")

    @staticmethod
    def _require_customer(db: sqlite3.Connection, customer_id: str) -> None:
        if db.execute("SELECT 1 FROM customers WHERE id = ?", (customer_id,)).fetchone() is None:
            raise NotFound(f"no customer {customer_id!r}", slug="unknown-customer")

    @staticmethod
    def _require_user(db: sqlite3.Connection, customer_id: str, user_id: str) -> sqlite3.Row:
        row = db.execute(
            "SELECT * FROM users WHERE id = ? AND customer_id = ?", (user_id, customer_id)
        ).fetchone()
        if row is None:
            raise NotFound(f"no user {user_id!r} for this customer", slug="unknown-user")
        return row

    # --- identity -----------------------------------------------------------------------------

    def create_customer(self, name: str | None = None, *, demo: bool = False) -> dict[str, str]:
        """Create a customer with one API client (the product's console action).

        Args:
            name: Display name; a default is made up when missing.
            demo: Mark it as the sandbox's demo customer.

        Returns:
            ``{customerId, clientId, clientSecret, audience}``; the secret is stored hashed
            and shown only here.

        >>> import tempfile, os
        >>> sorted(Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_customer())
        ['audience', 'clientId', 'clientSecret', 'customerId']
        """
        customer_id, client_id = new_id(), new_id()
        secret = secrets.token_urlsafe(32)
        now = self.now_ms()
        with self._tx() as db:
            db.execute(
                "INSERT INTO customers (id, name, demo, created_at) VALUES (?, ?, ?, ?)",
                (customer_id, name or f"Customer {customer_id[:6]}", int(demo), now),
            )
            db.execute(
                "INSERT INTO oauth_clients (client_id, customer_id, created_at) VALUES (?, ?, ?)",
                (client_id, customer_id, now),
            )
            db.execute(
                "INSERT INTO oauth_secrets (client_id, secret_hash, created_at) VALUES (?, ?, ?)",
                (client_id, _hash(secret), now),
            )
        return {
            "customerId": customer_id,
            "clientId": client_id,
            "clientSecret": secret,
            "audience": self.audience,
        }

    def demo_customer(self, name: str = "Demo law firm") -> dict[str, str]:
        """Return credentials of the demo customer, creating it on first use.

        Secrets are stored hashed, so on reuse a new secret is added to the demo client;
        earlier secrets and unexpired tokens stay valid.

        Args:
            name: Name given to a newly created demo customer.

        Returns:
            ``{customerId, clientId, clientSecret, audience}``.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.demo_customer()["customerId"] == store.demo_customer()["customerId"]
        True
        """
        with self._read() as db:
            row = db.execute(
                "SELECT c.id, o.client_id FROM customers c JOIN oauth_clients o "
                "ON o.customer_id = c.id WHERE c.demo = 1 ORDER BY c.created_at LIMIT 1"
            ).fetchone()
        if row is None:
            return self.create_customer(name, demo=True)
        secret = secrets.token_urlsafe(32)
        with self._tx() as db:
            db.execute(
                "INSERT INTO oauth_secrets (client_id, secret_hash, created_at) VALUES (?, ?, ?)",
                (row["client_id"], _hash(secret), self.now_ms()),
            )
        return {
            "customerId": row["id"],
            "clientId": row["client_id"],
            "clientSecret": secret,
            "audience": self.audience,
        }

    def token(
        self, *, grant_type: str, client_id: str, client_secret: str, audience: str
    ) -> dict[str, Any]:
        """Exchange client credentials for an access token (client-credentials grant).

        Args:
            grant_type: Must be ``client_credentials``.
            client_id: The API client's id.
            client_secret: The API client's secret (compared in constant time).
            audience: Must equal the store's audience.

        Returns:
            ``{access_token, expires_in, token_type}``.

        Raises:
            UnsupportedGrantType: Any other grant type.
            InvalidClient: Unknown client or wrong secret.
            InvalidRequest: Unknown audience.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> c = store.create_customer()
        >>> store.token(grant_type="client_credentials", client_id=c["clientId"],
        ...     client_secret=c["clientSecret"], audience=c["audience"])["token_type"]
        'Bearer'
        """
        if grant_type != "client_credentials":
            raise UnsupportedGrantType("only the client_credentials grant is supported")
        offered = _hash(client_secret)
        with self._read() as db:
            client = db.execute(
                "SELECT customer_id FROM oauth_clients WHERE client_id = ?", (client_id,)
            ).fetchone()
            hashes = [
                r["secret_hash"]
                for r in db.execute(
                    "SELECT secret_hash FROM oauth_secrets WHERE client_id = ?", (client_id,)
                )
            ]
        matched = False
        for stored in hashes or [_DUMMY_HASH]:
            matched |= hmac.compare_digest(stored, offered)
        if client is None or not matched:
            raise InvalidClient("client authentication failed")
        if not hmac.compare_digest(audience.encode(), self.audience.encode()):
            raise InvalidRequest(f"unknown audience {audience!r}")
        token = secrets.token_urlsafe(32)
        with self._tx() as db:
            db.execute(
                "INSERT INTO tokens (token_hash, customer_id, client_id, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (_hash(token), client["customer_id"], client_id,
                 self.now_ms() + self.token_ttl * 1000),
            )
        return {"access_token": token, "expires_in": self.token_ttl, "token_type": "Bearer"}

    def authenticate(self, token: str | None, customer_id: str | None = None) -> str:
        """Return the customer of a bearer token, checking the path's customer.

        Args:
            token: The bearer token, or None when the header was missing.
            customer_id: The ``customerId`` of the request path, if any.

        Returns:
            The token's customer id.

        Raises:
            Unauthorized: Missing, unknown or expired token.
            Forbidden: The token belongs to another customer than ``customer_id``.

        >>> import tempfile, os
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).authenticate("nope")
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.Unauthorized: unknown or expired access token
        """
        if not token:
            raise Unauthorized("missing bearer token", error=None)
        digest = _hash(token)
        with self._read() as db:
            row = db.execute(
                "SELECT token_hash, customer_id, expires_at FROM tokens WHERE token_hash = ?",
                (digest,),
            ).fetchone()
        if (
            row is None
            or not hmac.compare_digest(row["token_hash"], digest)
            or row["expires_at"] <= self.now_ms()
        ):
            raise Unauthorized("unknown or expired access token")
        if customer_id is not None and customer_id != row["customer_id"]:
            raise Forbidden("the access token belongs to another customer", slug="wrong-customer")
        return str(row["customer_id"])

    # --- ingress ------------------------------------------------------------------------------

    def _upsert(
        self, db: sqlite3.Connection, table: str, customer_id: str, external_id: str,
        values: dict[str, Any],
    ) -> str:
        now = self.now_ms()
        row = db.execute(
            f"SELECT id FROM {table} WHERE customer_id = ? AND external_id = ?",
            (customer_id, external_id),
        ).fetchone()
        if row is None:
            record_id = new_id()
            cols = ["id", "customer_id", "external_id", *values, "created_at", "updated_at"]
            db.execute(
                f"INSERT INTO {table} ({', '.join(cols)}) "
                f"VALUES ({', '.join('?' * len(cols))})",
                (record_id, customer_id, external_id, *values.values(), now, now),
            )
            return record_id
        sets = ", ".join(f"{col} = ?" for col in values)
        db.execute(
            f"UPDATE {table} SET {sets}, updated_at = ? WHERE id = ?",
            (*values.values(), now, row["id"]),
        )
        return str(row["id"])

    def import_client(self, customer_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create or update (by ``externalId``) one client.

        Args:
            customer_id: The customer.
            body: A valid Client payload.

        Returns:
            The stored client.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_client(cid, {"externalId": "C1", "name": "Acme", "callSign": "A",
        ...     "description": ""})["name"]
        'Acme'
        """
        with self._tx() as db:
            record_id = self._upsert(
                db, "clients", customer_id, body["externalId"],
                {"name": body["name"], "call_sign": body["callSign"],
                 "description": body["description"]},
            )
            return self._client_record(db, record_id)

    def import_initiative(self, customer_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create or update (by ``externalId``) one initiative; its client must exist.

        Args:
            customer_id: The customer.
            body: A valid Initiative payload.

        Returns:
            The stored initiative.

        Raises:
            Unprocessable: ``clientExternalId`` names no client (``unknownIds`` lists it).

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_initiative(cid, {"externalId": "M1", "clientExternalId": "nope",
        ...     "billingType": "billable", "name": "", "description": "", "callSign": "",
        ...     "unitIncrements": 360, "status": "active"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.Unprocessable: unknown client externalId 'nope'
        """
        with self._tx() as db:
            client = db.execute(
                "SELECT id FROM clients WHERE customer_id = ? AND external_id = ?",
                (customer_id, body["clientExternalId"]),
            ).fetchone()
            if client is None:
                raise self._unknown("client", "clientExternalId", [body["clientExternalId"]])
            record_id = self._upsert(
                db, "initiatives", customer_id, body["externalId"],
                {"source": "pms", "billing_type": body["billingType"], "name": body["name"],
                 "description": body["description"], "call_sign": body["callSign"],
                 "client_id": client["id"], "unit_increments": float(body["unitIncrements"]),
                 "status": body["status"]},
            )
            return self._initiative_record(db, record_id)

    def import_code_type(self, customer_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create or update (by ``externalId``) one code type.

        Args:
            customer_id: The customer.
            body: A valid Code type payload.

        Returns:
            The stored code type.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_code_type(cid, {"externalId": "task-code", "name": "task-code",
        ...     "semanticType": "task", "customerDefaultable": True,
        ...     "userDefaultable": False})["semanticType"]
        'task'
        """
        with self._tx() as db:
            record_id = self._upsert(
                db, "code_types", customer_id, body["externalId"],
                {"name": body["name"], "semantic_type": body["semanticType"],
                 "customer_defaultable": int(body["customerDefaultable"]),
                 "user_defaultable": int(body["userDefaultable"])},
            )
            return self._code_type_record(db, record_id)

    def import_code(self, customer_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create or update (by ``externalId``) one code; its code type must exist.

        Args:
            customer_id: The customer.
            body: A valid Code payload.

        Returns:
            The stored code.

        Raises:
            Unprocessable: ``codeTypeExternalId`` names no code type.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.import_code(cid, {"externalId": "L110", "name": "L110", "description": "",
        ...     "codeTypeExternalId": "task-code"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.Unprocessable: unknown code type externalId 'task-code'
        """
        with self._tx() as db:
            code_type = db.execute(
                "SELECT id FROM code_types WHERE customer_id = ? AND external_id = ?",
                (customer_id, body["codeTypeExternalId"]),
            ).fetchone()
            if code_type is None:
                raise self._unknown(
                    "code type", "codeTypeExternalId", [body["codeTypeExternalId"]]
                )
            record_id = self._upsert(
                db, "codes", customer_id, body["externalId"],
                {"name": body["name"], "description": body["description"],
                 "code_type_id": code_type["id"]},
            )
            return self._code_record(db, record_id)

    def set_code_range(
        self, customer_id: str, initiative_external_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Replace the code range of one initiative (an empty list removes it).

        Args:
            customer_id: The customer.
            initiative_external_id: The initiative's ``externalId``.
            body: A valid Code range payload; duplicate ids are dropped.

        Returns:
            ``{initiativeExternalId, codeExternalIds, updatedAt}``.

        Raises:
            NotFound: No such initiative.
            Unprocessable: Some codes do not exist; ``unknownIds`` lists every one.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.set_code_range(cid, "M1", {"codeExternalIds": []})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.NotFound: no initiative with externalId 'M1'
        """
        wanted = _dedupe(body["codeExternalIds"])
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
    def _pms_initiative(
        db: sqlite3.Connection, customer_id: str, external_id: str
    ) -> sqlite3.Row | None:
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM initiatives WHERE customer_id = ? AND external_id = ? "
            "AND source = 'pms'",
            (customer_id, external_id),
        ).fetchone()
        return row

    @staticmethod
    def _code_ids(db: sqlite3.Connection, customer_id: str, external_ids: Sequence[str]
                  ) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(external_ids), 500):
            chunk = list(external_ids[start:start + 500])
            marks = ", ".join("?" * len(chunk))
            for row in db.execute(
                f"SELECT id, external_id FROM codes WHERE customer_id = ? "
                f"AND external_id IN ({marks})",
                (customer_id, *chunk),
            ):
                found[row["external_id"]] = row["id"]
        return found

    # --- records ------------------------------------------------------------------------------

    @staticmethod
    def _client_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute("SELECT * FROM clients WHERE id = ?", (record_id,)).fetchone()
        return {
            "_id": r["id"], "externalId": r["external_id"], "name": r["name"],
            "callSign": r["call_sign"], "description": r["description"],
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
            "_id": r["id"], "source": r["source"], "billingType": r["billing_type"],
            "externalId": r["external_id"], "name": r["name"], "description": r["description"],
            "callSign": r["call_sign"], "clientExternalId": r["client_external_id"],
            "unitIncrements": _number(r["unit_increments"]), "status": r["status"],
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _code_type_record(db: sqlite3.Connection, record_id: str) -> dict[str, Any]:
        r = db.execute("SELECT * FROM code_types WHERE id = ?", (record_id,)).fetchone()
        return {
            "_id": r["id"], "externalId": r["external_id"], "name": r["name"],
            "semanticType": r["semantic_type"],
            "customerDefaultable": bool(r["customer_defaultable"]),
            "userDefaultable": bool(r["user_defaultable"]),
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
            "_id": r["id"], "externalId": r["external_id"], "name": r["name"],
            "description": r["description"], "codeTypeExternalId": r["type_external_id"],
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

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
            "_id": r["id"], "userId": r["user_id"],
            "initiativeExternalId": r["initiative_external_id"], "workDate": r["work_date"],
            "summary": r["summary"], "incrementDurationInSeconds": r["duration"],
            "codes": codes, "state": r["state"],
            "releasedAt": format_timestamp(r["released_at"]) if r["released_at"] is not None
            else None,
            "externalId": r["external_id"],
            "errors": json.loads(r["errors"]) if r["errors"] else None,
            "createdAt": format_timestamp(r["created_at"]),
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    @staticmethod
    def _user_record(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "_id": row["id"], "customerId": row["customer_id"],
            "timekeeperExternalId": row["timekeeper_external_id"], "name": row["name"],
            "email": row["email"],
        }

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
                    r["id"] for r in db.execute(
                        f"SELECT id FROM {table} WHERE customer_id = ? "
                        "ORDER BY created_at, rowid",
                        (customer_id,),
                    )
                ]
                return [render(db, record_id) for record_id in ids]
            if kind == "code-ranges":
                return self._code_ranges(db, customer_id)
            if kind == "users":
                return [
                    self._user_record(r) for r in db.execute(
                        "SELECT * FROM users WHERE customer_id = ? ORDER BY created_at, rowid",
                        (customer_id,),
                    )
                ]
            if kind == "stars":
                return [
                    {"userId": r["user_id"], "timekeeperExternalId": r["tk"],
                     "initiativeId": r["initiative_id"], "initiativeExternalId": r["ext"],
                     "source": r["source"], "seq": r["seq"]}
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
                {"initiativeExternalId": r["ini"], "codeExternalIds": [],
                 "updatedAt": format_timestamp(r["updated_at"])},
            )
            item["codeExternalIds"].append(r["code"])
        return list(ranges.values())

    # --- egress -------------------------------------------------------------------------------

    def _codes_by_entry(
        self, db: sqlite3.Connection, customer_id: str, where: str, params: Sequence[Any]
    ) -> dict[str, list[tuple[dict[str, Any], str]]]:
        code_objs: dict[str, dict[str, Any]] = {}
        for r in db.execute(
            "SELECT co.id, co.external_id, co.name, co.description, ct.id AS t_id, "
            "ct.external_id AS t_ext, ct.name AS t_name, ct.semantic_type FROM codes co "
            "JOIN code_types ct ON ct.id = co.code_type_id WHERE co.customer_id = ?",
            (customer_id,),
        ):
            code_objs[r["id"]] = {
                "_id": r["id"], "externalId": r["external_id"], "name": r["name"],
                "description": r["description"],
                "type": {"_id": r["t_id"], "externalId": r["t_ext"], "name": r["t_name"],
                         "semanticType": r["semantic_type"]},
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

    _ENTRY_SELECT = (
        "SELECT e.id, e.created_at, e.updated_at, e.external_id, e.duration, e.summary, "
        "e.user_id, e.work_date, e.released_at, i.id AS i_id, i.external_id AS i_ext, "
        "i.name AS i_name, i.description AS i_desc, i.call_sign AS i_cs, "
        "i.billing_type AS i_bt, i.unit_increments, c.id AS c_id, c.external_id AS c_ext, "
        "c.name AS c_name, c.description AS c_desc, c.call_sign AS c_cs "
        "FROM entries e JOIN initiatives i ON i.id = e.initiative_id "
        "JOIN clients c ON c.id = i.client_id "
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
            BadRequest: The window is inverted.

        >>> import tempfile, os
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
            BadRequest: The window is inverted (raised by this call, not by the iterator).

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> t = datetime(2025, 1, 1, tzinfo=UTC)
        >>> list(store.iter_export_entries(store.create_customer()["customerId"], t, t))
        []
        """
        low, high = _to_ms(released_after), _to_ms(released_on_or_before)
        if released_after > released_on_or_before:
            raise BadRequest(
                "releasedAfter must not be later than releasedOnOrBefore", slug="invalid-window"
            )
        return self._export_chunks(customer_id, low, high, batch)

    def _export_chunks(
        self, customer_id: str, low: int, high: int, batch: int
    ) -> Iterator[list[dict[str, Any]]]:
        # Bounds are compared at millisecond precision against millisecond-precise times:
        # t > after  <=>  t_ms > floor(after_ms); t <= before  <=>  t_ms <= floor(before_ms).
        base = "e.customer_id = ? AND e.released_at > ? AND e.released_at <= ?"
        last: tuple[int, str] | None = None
        initiatives: dict[str, dict[str, Any]] = {}
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
            yield [self._export_entry(row, customer_id, codes, initiatives) for row in rows]
            if len(rows) < batch:
                return

    @staticmethod
    def _export_entry(
        row: tuple[Any, ...],
        customer_id: str,
        codes: dict[str, list[tuple[dict[str, Any], str]]],
        initiatives: dict[str, dict[str, Any]],
    ) -> dict[str, Any]:
        (entry_id, created, updated, external_id, duration, summary, user_id, work_date,
         _released, i_id, i_ext, i_name, _i_desc, _i_cs, _i_bt, unit, c_id, c_ext, c_name,
         c_desc, c_cs) = row
        initiative = initiatives.get(i_id)
        if initiative is None:
            initiative = initiatives[i_id] = {
                "client": {"_id": c_id, "externalId": c_ext, "name": c_name,
                           "description": c_desc, "callSign": c_cs},
                "externalId": i_ext,
                "name": i_name,
            }
        return {
            "_id": entry_id,
            "codes": [{"code": code, "assignedBy": by} for code, by in codes.get(entry_id, ())],
            "createdAt": format_timestamp(created),
            "customerId": customer_id,
            "externalId": external_id,
            "incrementDurationInSeconds": duration,
            "initiative": initiative,
            "summary": summary,
            "unitIncrementCount": _increment_count(duration, unit),
            "updatedAt": format_timestamp(updated),
            "userId": user_id,
            "workDate": work_date,
        }

    def release_pending(self, customer_id: str) -> list[dict[str, Any]]:
        """Entries still pending, in the spec's detailed form, ordered by release time.

        Args:
            customer_id: The customer.

        Returns:
            Entries in the detailed form (``initiativeProps`` tags hold ``pinned`` when the
            entry's user starred the initiative).

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_pending(store.create_customer()["customerId"])
        []
        """
        where = "e.customer_id = ? AND e.state = 'pending'"
        params = (customer_id,)
        with self._read() as db:
            rows = db.execute(
                self._ENTRY_SELECT + f"WHERE {where} ORDER BY e.released_at, e.id", params
            ).fetchall()
            codes = self._codes_by_entry(db, customer_id, where, params)
            pinned = {
                (r["user_id"], r["initiative_id"])
                for r in db.execute(
                    "SELECT p.user_id, p.initiative_id FROM pins p JOIN users u "
                    "ON u.id = p.user_id WHERE u.customer_id = ?",
                    (customer_id,),
                )
            }
        out = []
        for r in rows:
            client = {"_id": r["c_id"], "externalId": r["c_ext"], "name": r["c_name"],
                      "description": r["c_desc"], "callSign": r["c_cs"]}
            out.append({
                "_id": r["id"],
                "customerId": customer_id,
                "userId": r["user_id"],
                "workDate": r["work_date"],
                "summary": r["summary"],
                "unitIncrementCount": _increment_count(r["duration"], r["unit_increments"]),
                "incrementDurationInSeconds": r["duration"],
                "initiativeProps": {
                    "type": "pms",
                    "colorHex": _color(r["i_id"]),
                    "tags": ["pinned"] if (r["user_id"], r["i_id"]) in pinned else [],
                    "nickname": r["i_name"],
                    "initiative": {
                        "type": "pms", "_id": r["i_id"], "billingType": r["i_bt"],
                        "callSign": r["i_cs"], "unitIncrements": _number(r["unit_increments"]),
                        "externalId": r["i_ext"], "name": r["i_name"],
                        "description": r["i_desc"], "client": client,
                    },
                },
                "externalId": r["external_id"],
                "codes": [code for code, _ in codes.get(r["id"], [])],
            })
        return out

    def _acknowledge(
        self, customer_id: str, user_id: str, entry_id: str, state: str, value: Any
    ) -> dict[str, Any]:
        column = "external_id" if state == "succeeded" else "errors"
        stored_value = value if state == "succeeded" else json.dumps(value, ensure_ascii=False)
        with self._tx() as db:
            row = db.execute(
                "SELECT * FROM entries WHERE id = ? AND customer_id = ? AND user_id = ?",
                (entry_id, customer_id, user_id),
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"no entry {entry_id!r} for user {user_id!r}", slug="unknown-entry"
                )
            current = row["state"]
            if current == "editable":
                raise Conflict(
                    "the entry has not been released by its user", slug="entry-not-released",
                    state=current,
                )
            if current == "pending":
                db.execute(
                    f"UPDATE entries SET state = ?, {column} = ?, updated_at = ? "
                    "WHERE id = ?",
                    (state, stored_value, self.now_ms(), entry_id),
                )
            elif current != state:
                raise Conflict(
                    f"the entry was already acknowledged as {current}",
                    slug="conflicting-acknowledgement", state=current,
                )
            elif row[column] != stored_value:
                raise Conflict(
                    f"the entry was already acknowledged as {current} with other "
                    f"{'externalId' if state == 'succeeded' else 'errors'}",
                    slug="conflicting-acknowledgement", state=current,
                )
            r = db.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return {
            "_id": r["id"], "userId": r["user_id"], "state": r["state"],
            "externalId": r["external_id"],
            "errors": json.loads(r["errors"]) if r["errors"] else None,
            "updatedAt": format_timestamp(r["updated_at"]),
        }

    def release_succeeded(
        self, customer_id: str, user_id: str, entry_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Acknowledge a pending entry as written to the billing system.

        Repeating the same acknowledgement is a no-op.

        Args:
            customer_id: The customer.
            user_id: The entry's user.
            entry_id: The entry.
            body: ``{"externalId": str}``, stored on the entry.

        Returns:
            ``{_id, userId, state, externalId, errors, updatedAt}``.

        Raises:
            NotFound: No such entry for this user.
            Conflict: Not released yet, failed, or succeeded with another ``externalId``.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_succeeded("c", "u", "e", {"externalId": "X1"})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.NotFound: no entry 'e' for user 'u'
        """
        return self._acknowledge(customer_id, user_id, entry_id, "succeeded", body["externalId"])

    def release_failed(
        self, customer_id: str, user_id: str, entry_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Acknowledge a pending entry as failed to write; the errors are stored.

        Repeating the same acknowledgement (same errors) is a no-op.

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

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_failed("c", "u", "e", {"errors": ["x"]})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.NotFound: no entry 'e' for user 'u'
        """
        return self._acknowledge(customer_id, user_id, entry_id, "failed", list(body["errors"]))

    def get_user(self, customer_id: str, user_id: str) -> dict[str, Any]:
        """Return a user record ``{_id, customerId, timekeeperExternalId, name, email}``.

        Args:
            customer_id: The customer.
            user_id: The user.

        Returns:
            The user record.

        Raises:
            NotFound: No such user for this customer.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> u = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "Ann",
        ...     "email": "ann@example.com"})
        >>> store.get_user(cid, u["_id"])["timekeeperExternalId"]
        'TK1'
        """
        with self._read() as db:
            return self._user_record(self._require_user(db, customer_id, user_id))

    # --- starring -----------------------------------------------------------------------------

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

    def _star_or_unstar(
        self, customer_id: str, body: dict[str, Any], *, star: bool,
        item_fault: Callable[[], bool] | None,
    ) -> list[dict[str, Any]]:
        ids = _dedupe(body["initiativeExternalIds"])
        results: list[dict[str, Any]] = []
        with self._tx() as db:
            user_id = self._resolve_timekeeper(db, customer_id, body["timekeeperExternalId"])
            walls = {
                r[0] for r in db.execute(
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
                elif external_id in walls:
                    item["status"], error = 403, ERR_ACCESS
                elif initiative["status"] != "active":
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

    def star(
        self, customer_id: str, body: dict[str, Any], *,
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
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> _ = store.create_user(cid, {"timekeeperExternalId": "TK1", "name": "", "email": ""})
        >>> store.star(cid, {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M9"]})
        [{'initiativeExternalId': 'M9', 'status': 404, 'errorCode': 20080, 'errorMessage': 'initiative not found'}]
        """  # noqa: E501
        return self._star_or_unstar(customer_id, body, star=True, item_fault=item_fault)

    def unstar(
        self, customer_id: str, body: dict[str, Any], *,
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
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.unstar("c", {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M"]})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.NotFound: timekeeperExternalId 'TK1' resolves to no user
        """
        return self._star_or_unstar(customer_id, body, star=False, item_fault=item_fault)

    @staticmethod
    def _encode_cursor(user_id: str, seq: int) -> str:
        raw = f"v1:{user_id}:{seq}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_cursor(cursor: str) -> tuple[str, int]:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
            version, user_id, seq = text.split(":")
            if version != "v1" or not seq.isdigit() or len(seq) > 18:
                raise ValueError(text)
            return user_id, int(seq)
        except (ValueError, UnicodeError, binascii.Error) as exc:
            raise BadRequest("invalid cursor", slug="invalid-cursor") from exc

    def starred(
        self, customer_id: str, timekeeper_external_id: str, limit: int = 2500,
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
                r[0] for r in db.execute(
                    "SELECT initiative_external_id FROM walls WHERE user_id = ?", (user_id,)
                )
            }
        page = rows[:limit]
        visible = [
            r["external_id"] for r in page
            if r["source"] == "pms" and r["external_id"] not in walls
        ]
        next_cursor = self._encode_cursor(user_id, page[-1]["seq"]) if len(rows) > limit else None
        return {"initiativeExternalIds": visible, "nextCursor": next_cursor}

    # --- administration -----------------------------------------------------------------------

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
                (user_id, customer_id, body["timekeeperExternalId"], body["name"],
                 body["email"], self.now_ms()),
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
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> uid = store.create_user(cid, {"timekeeperExternalId": "T", "name": "",
        ...     "email": ""})["_id"]
        >>> store.set_walls(cid, uid, {"initiativeExternalIds": ["M1"]})["initiativeExternalIds"]
        ['M1']
        """
        walls = _dedupe(body["initiativeExternalIds"])
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
                codes: [{codeExternalId, assignedBy}]}``.

        Returns:
            The entry (administration view).

        Raises:
            NotFound: Unknown customer or user.
            Unprocessable: Unknown initiative or codes, or codes outside the initiative's
                code range.

        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> uid = store.create_user(cid, {"timekeeperExternalId": "T", "name": "",
        ...     "email": ""})["_id"]
        >>> store.create_entry(cid, uid, {"initiativeExternalId": "M1", "workDate": "2025-01-02",
        ...     "summary": "", "incrementDurationInSeconds": 60, "codes": []})
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.Unprocessable: unknown initiative externalId 'M1'
        """
        with self._tx() as db:
            self._require_customer(db, customer_id)
            self._require_user(db, customer_id, user_id)
            entry_id = self._insert_entry(db, customer_id, user_id, body, self.now_ms())
            return self._entry_record(db, entry_id)

    def _insert_entry(
        self, db: sqlite3.Connection, customer_id: str, user_id: str, body: dict[str, Any],
        created_at: int,
    ) -> str:
        initiative = self._pms_initiative(db, customer_id, body["initiativeExternalId"])
        if initiative is None:
            raise self._unknown("initiative", "initiativeExternalId",
                                [body["initiativeExternalId"]])
        codes = body.get("codes") or []
        wanted = [c["codeExternalId"] for c in codes]
        found = self._code_ids(db, customer_id, wanted)
        missing = _dedupe([c for c in wanted if c not in found])
        if missing:
            raise self._unknown("code", "codes", missing)
        allowed = {
            r[0] for r in db.execute(
                "SELECT code_id FROM code_ranges WHERE initiative_id = ?", (initiative["id"],)
            )
        }
        outside = _dedupe([c for c in wanted if allowed and found[c] not in allowed])
        if outside:
            raise Unprocessable(
                f"codes outside the initiative's code range: {', '.join(outside)}",
                slug="code-outside-range", unknownIds=outside,
            )
        entry_id = new_id()
        db.execute(
            "INSERT INTO entries (id, customer_id, user_id, initiative_id, work_date, summary, "
            "duration, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'editable', "
            "?, ?)",
            (entry_id, customer_id, user_id, initiative["id"], body["workDate"], body["summary"],
             body["incrementDurationInSeconds"], created_at, created_at),
        )
        db.executemany(
            "INSERT INTO entry_codes (entry_id, position, code_id, assigned_by) "
            "VALUES (?, ?, ?, ?)",
            [(entry_id, i, found[c["codeExternalId"]], c["assignedBy"])
             for i, c in enumerate(codes)],
        )
        return entry_id

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
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.release_entry("c", "u", "e")
        Traceback (most recent call last):
        ...
        toolkit.sandbox.exceptions.NotFound: no customer 'c'
        """
        at = (body or {}).get("at")
        moment = _to_ms(parse_datetime(at)) if at else self.now_ms()
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
                    slug="entry-not-releasable", state=row["state"],
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
                "created_at, updated_at) VALUES (?, ?, NULL, 'product', ?, 'active', ?, ?)",
                (initiative_id, customer_id, body["name"], now, now),
            )
            db.execute(
                "INSERT INTO pins (user_id, initiative_id) VALUES (?, ?)", (user_id, initiative_id)
            )
        return {"_id": initiative_id, "name": body["name"], "userId": user_id, "pinned": True}

    # --- seeding ------------------------------------------------------------------------------

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
        low, high = _to_ms(released_from), _to_ms(released_to)
        span = high - low
        prefix = secrets.token_hex(6)
        created = 0
        for start in range(0, n, batch):
            stop = min(n, start + batch)
            entry_rows = []
            code_rows = []
            for i in range(start, stop):
                entry_id = f"{prefix}{i:012x}"
                released = low + (span * (i + 1)) // n
                work_date = (_EPOCH + timedelta(milliseconds=released)).date().isoformat()
                entry_rows.append((
                    entry_id, customer_id, users[i % len(users)],
                    initiatives[i % len(initiatives)], work_date, f"Bench entry {i}",
                    360 * (1 + i % 20), "pending", released, released - 3_600_000, released,
                ))
                for k in range(codes_per_entry):
                    code_rows.append(
                        (entry_id, k, codes[(i + k) % len(codes)], "user" if k else "service")
                    )
            with self._tx() as db:
                db.executemany(
                    "INSERT INTO entries (id, customer_id, user_id, initiative_id, work_date, "
                    "summary, duration, state, released_at, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            users = [r[0] for r in db.execute(
                "SELECT id FROM users WHERE customer_id = ? ORDER BY rowid", (customer_id,))]
            initiatives = [r[0] for r in db.execute(
                "SELECT id FROM initiatives WHERE customer_id = ? AND source = 'pms' "
                "AND status = 'active' ORDER BY rowid", (customer_id,))]
            codes = [r[0] for r in db.execute(
                "SELECT id FROM codes WHERE customer_id = ? ORDER BY rowid", (customer_id,))]
        if not users:
            users = [self.create_user(customer_id, {
                "timekeeperExternalId": "BENCH", "name": "Bench User",
                "email": "bench@example.com"})["_id"]]
        if not initiatives:
            self.import_client(customer_id, {"externalId": "BENCH-C", "name": "Bench client",
                                             "callSign": "BENCH", "description": ""})
            initiatives = [self.import_initiative(customer_id, {
                "externalId": "BENCH-M", "name": "Bench matter", "description": "",
                "callSign": "BENCH-M", "clientExternalId": "BENCH-C", "billingType": "billable",
                "unitIncrements": 360, "status": "active"})["_id"]]
        if not codes:
            self.import_code_type(customer_id, {
                "externalId": "bench-code", "name": "bench-code", "semanticType": "task",
                "customerDefaultable": False, "userDefaultable": False})
            codes = [self.import_code(customer_id, {
                "externalId": f"B{k}", "name": f"B{k}", "description": "",
                "codeTypeExternalId": "bench-code"})["_id"] for k in range(3)]
        return users, initiatives, codes

    def seed_sample(
        self, directory: str | Path, customer_id: str, *, seed: int = 0, entries: int = 300
    ) -> dict[str, int]:
        """Load the sample firm from CSV files through the import rules, then make entries.

        Reads ``clients.csv``, ``initiatives.csv``, ``code_types.csv``, ``codes.csv``,
        ``code_ranges.csv`` (long form) and ``timekeepers.csv``, skipping missing files.
        Imports upsert, users are created for timekeepers not yet present, and when the
        customer has no entries yet, ``entries`` entries released over the last four weeks
        (relative to the clock) are created, deterministically for a given ``seed``, and
        each user stars three initiatives and gets one product-created initiative.

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

        steps: list[tuple[str, str, type[BaseModel], Callable[..., Any], Callable[..., Any]]] = [
            ("clients", "clients.csv", ClientIn, self.import_client, lambda r: r),
            ("initiatives", "initiatives.csv", InitiativeIn, self.import_initiative,
             lambda r: {**r, "unitIncrements": number(r.get("unitIncrements", ""))}),
            ("code-types", "code_types.csv", CodeTypeIn, self.import_code_type,
             lambda r: {**r, "semanticType": r.get("semanticType") or None,
                        "customerDefaultable": boolean(r.get("customerDefaultable", "")),
                        "userDefaultable": boolean(r.get("userDefaultable", ""))}),
            ("codes", "codes.csv", CodeIn, self.import_code, lambda r: r),
        ]
        for kind, filename, model, importer, convert in steps:
            for line, row in enumerate(rows(filename), start=2):
                try:
                    importer(customer_id, _validated(model, convert(row)))
                except Unprocessable as exc:
                    raise Unprocessable(f"{filename} line {line}: {exc.detail}",
                                        errors=exc.extra.get("errors", [])) from exc
                counts[kind] += 1
        ranges: dict[str, list[str]] = {}
        for row in rows("code_ranges.csv"):
            ranges.setdefault(row["initiativeExternalId"], []).append(row["codeExternalId"])
        for initiative, code_ids in ranges.items():
            try:
                self.set_code_range(
                    customer_id, initiative,
                    _validated(CodeRangeIn, {"codeExternalIds": code_ids}),
                )
            except (NotFound, Unprocessable) as exc:
                raise Unprocessable(f"code_ranges.csv: {exc.detail}") from exc
            counts["code-ranges"] += 1
        with self._read() as db:
            known = {r[0] for r in db.execute(
                "SELECT timekeeper_external_id FROM users WHERE customer_id = ?", (customer_id,))}
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
            users = [r[0] for r in db.execute(
                "SELECT id FROM users WHERE customer_id = ? ORDER BY rowid", (customer_id,))]
            initiatives = [(r[0], r[1]) for r in db.execute(
                "SELECT id, external_id FROM initiatives WHERE customer_id = ? "
                "AND source = 'pms' AND status = 'active' ORDER BY rowid", (customer_id,))]
            all_codes = [r[0] for r in db.execute(
                "SELECT external_id FROM codes WHERE customer_id = ? ORDER BY rowid",
                (customer_id,))]
            ranges: dict[str, list[str]] = {}
            for r in db.execute(
                "SELECT cr.initiative_id, co.external_id FROM code_ranges cr "
                "JOIN codes co ON co.id = cr.code_id WHERE co.customer_id = ? "
                "ORDER BY cr.initiative_id, cr.position", (customer_id,)
            ):
                ranges.setdefault(r[0], []).append(r[1])
        if not users or not initiatives:
            return 0
        now = self.now_ms()
        four_weeks = 28 * 24 * 3_600_000
        made = 0
        with self._tx() as db:
            for _ in range(n):
                user = rng.choice(users)
                initiative_id, initiative_ext = rng.choice(initiatives)
                pool = ranges.get(initiative_id, all_codes)
                count = rng.choices((0, 1, 2, 3), weights=(15, 25, 45, 15))[0]
                picked = rng.sample(pool, min(count, len(pool)))
                released = now - rng.randrange(1, four_weeks)
                created = released - rng.randrange(60_000, 3 * 24 * 3_600_000)
                work_date = (_EPOCH + timedelta(milliseconds=created)).date()
                duration = rng.choice((360 * rng.randint(1, 30), rng.randint(60, 14_400)))
                body = {
                    "initiativeExternalId": initiative_ext,
                    "workDate": date.isoformat(work_date),
                    "summary": rng.choice(_SUMMARIES),
                    "incrementDurationInSeconds": duration,
                    "codes": [
                        {"codeExternalId": c,
                         "assignedBy": "service" if rng.random() < 0.15 else "user"}
                        for c in picked
                    ],
                }
                entry_id = self._insert_entry(db, customer_id, user, body, created)
                db.execute(
                    "UPDATE entries SET state = 'pending', released_at = ?, updated_at = ? "
                    "WHERE id = ?",
                    (released, released, entry_id),
                )
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
                    "status, created_at, updated_at) VALUES (?, ?, NULL, 'product', ?, "
                    "'active', ?, ?)",
                    (product_id, customer_id, "Knowledge management (internal)", now, now),
                )
                db.execute(
                    "INSERT INTO pins (user_id, initiative_id) VALUES (?, ?)", (user, product_id)
                )
        return made
