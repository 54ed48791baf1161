"""The core the parts of the sandbox's store stand on: one SQLite file, one connection, one lock.

:class:`StoreCore` opens the file (creating the schema when missing), serializes every use of
the connection on one lock and runs each write in its own transaction (:meth:`StoreCore._tx`)
and each read in its own snapshot (:meth:`StoreCore._read`). The parts of the interface are
mixins over it (:mod:`.profiles`, :mod:`.auth`, :mod:`.ingress`, :mod:`.egress`,
:mod:`.starring`, :mod:`.administration`), composed into :class:`toolkit.sandbox._store.Store`.
It also holds the few lookups and helpers that more than one part uses.

Durability: WAL journal, ``synchronous=FULL``, and every write runs in its own
``BEGIN IMMEDIATE ... COMMIT`` before the method returns, so an answered write survives
``kill -9``.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .._exceptions import NotFound

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_TOKEN_TTL",
    "EPOCH",
    "PRODUCT_UNIT_INCREMENTS",
    "Clock",
    "StoreCore",
    "dedupe",
    "format_timestamp",
    "new_id",
    "number",
    "object_id",
    "to_ms",
]

DEFAULT_AUDIENCE = "https://time-api.sandbox.timebill.invalid"
"""Audience the token endpoint expects unless another is configured."""
DEFAULT_TOKEN_TTL = 86400
"""Access token lifetime in seconds, as in the spec's example response."""

Clock = Callable[[], datetime]
"""A zero-argument callable returning the current time as an aware datetime."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""The origin of the millisecond timestamps the store keeps."""
PRODUCT_UNIT_INCREMENTS = 360.0
"""``unitIncrements`` (seconds) of an initiative made in the product: a tenth of an hour, the
usual billing increment (the published entry form requires one; the product's is not shown)."""
_MS = timedelta(milliseconds=1)

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
    external_id TEXT, errors TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    unit_count REAL);
CREATE INDEX IF NOT EXISTS entries_released ON entries (customer_id, released_at);
CREATE INDEX IF NOT EXISTS entries_state ON entries (customer_id, state);
CREATE TABLE IF NOT EXISTS sandbox_keys (
    name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS profiles (
    customer_id TEXT PRIMARY KEY, switches TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS import_extras (
    record_id TEXT PRIMARY KEY, fields TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entry_codes (
    entry_id TEXT NOT NULL, position INTEGER NOT NULL, code_id TEXT NOT NULL,
    assigned_by TEXT NOT NULL, PRIMARY KEY (entry_id, position));
"""


def object_id(seconds: int, unique: str, counter: int) -> str:
    """Return a MongoDB ObjectId in hex: the service's ``"format": "objectid"``.

    Args:
        seconds: Seconds since the epoch of the creation; the ids sort by it.
        unique: Ten hex digits (five bytes) of the process or call making the ids.
        counter: The id's count; its low three bytes are kept.

    Returns:
        24 lowercase hex digits: 4 bytes of ``seconds`` (big-endian), ``unique``, 3 of ``counter``.

    >>> object_id(1735689600, "0a1b2c3d4e", 2**24 + 5)
    '677485800a1b2c3d4e000005'
    """
    return f"{seconds & 0xFFFFFFFF:08x}{unique}{counter & 0xFFFFFF:06x}"


class _Ids:
    """The per-process part of :func:`new_id`: a random value and a counter, new after a fork."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.unique = secrets.token_hex(5)
        self.counter = secrets.randbelow(1 << 24)


_IDS = _Ids()
os.register_at_fork(after_in_child=_IDS.reset)


def new_id() -> str:
    """Return a new identifier, an ObjectId like the service's: ids sort by creation second.

    The current UTC second, five random bytes per process (as MongoDB's drivers) and a counter
    incremented per id (wrapping at 2**24), under a lock.

    >>> a, b = new_id(), new_id()
    >>> len(a), all(c in "0123456789abcdef" for c in a), a != b, a[8:18] == b[8:18]
    (24, True, True, True)
    """
    with _IDS.lock:
        _IDS.counter = (_IDS.counter + 1) & 0xFFFFFF
        counter = _IDS.counter
    return object_id(int(time.time()), _IDS.unique, counter)


def to_ms(moment: datetime) -> int:
    """Return a time as whole milliseconds since the epoch.

    Args:
        moment: The time; a naive one is taken as UTC.

    Returns:
        Milliseconds since 1970-01-01T00:00:00Z, rounded down.

    >>> to_ms(datetime(2025, 1, 1, tzinfo=UTC))
    1735689600000
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // _MS


def format_timestamp(ms: int) -> str:
    """Format milliseconds since the epoch as ISO 8601 UTC with milliseconds and ``Z``.

    Args:
        ms: Milliseconds since 1970-01-01T00:00:00Z.

    Returns:
        For example ``2025-03-01T09:30:00.123Z``.

    >>> format_timestamp(1_740_821_400_123)
    '2025-03-01T09:30:00.123Z'
    """
    m = EPOCH + timedelta(milliseconds=ms)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:"
        f"{m.second:02d}.{m.microsecond // 1000:03d}Z"
    )


def number(value: float | None) -> int | float | None:
    """Return a stored REAL as a JSON number: whole values as ``int``.

    Args:
        value: The stored value, or None.

    Returns:
        An ``int`` when the value is whole, else the ``float``; None stays None.

    >>> number(360.0), number(0.5), number(None)
    (360, 0.5, None)
    """
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def dedupe(values: Sequence[str]) -> list[str]:
    """Drop repeated values, keeping the first-seen order.

    Args:
        values: The values.

    Returns:
        Each distinct value once.

    >>> dedupe(["M2", "M1", "M2"])
    ['M2', 'M1']
    """
    return list(dict.fromkeys(values))


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only (it holds every secret's hash)."""
    if str(path) == ":memory:":
        return
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    os.chmod(path, 0o600)


def _make_private(path: Path) -> None:
    """Make the database and its ``-wal``/``-shm`` files readable by their owner only.

    SQLite gives the two side files the database's mode; this also mends files an older
    sandbox left readable by all.
    """
    if str(path) == ":memory:":
        return
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            os.chmod(name, 0o600)
        except FileNotFoundError:
            pass


class StoreCore:
    """The connection, its lock and transactions, under every part of the store.

    Args:
        path: SQLite file; created with its schema when missing, reused as is otherwise.
        token_ttl: Lifetime in seconds of the access tokens issued from now on.
        audience: The audience the token endpoint requires.
        clock: Source of "now" (an aware datetime); tests pass a fake to expire tokens.

    >>> import tempfile, os
    >>> core = StoreCore(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> core.path.name
    's.db'
    >>> core.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
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
        _create_private(self.path)
        self._db = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30
        )
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        _make_private(self.path)
        self._db.executescript(_SCHEMA)
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(entries)")}
        if "unit_count" not in columns:  # a file an earlier version made: counts were derived
            self._db.execute("ALTER TABLE entries ADD COLUMN unit_count REAL")
        # a key of this database's own (kept across restarts): it signs the starred cursors
        self._db.execute(
            "INSERT OR IGNORE INTO sandbox_keys (name, value) VALUES ('cursor', ?)",
            (secrets.token_hex(32),),
        )
        self._cursor_key = bytes.fromhex(
            self._db.execute("SELECT value FROM sandbox_keys WHERE name = 'cursor'").fetchone()[0]
        )

    def close(self) -> None:
        """Close the connection (idempotent).

        >>> import tempfile, os
        >>> StoreCore(os.path.join(tempfile.mkdtemp(), "s.db")).close()
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
        >>> StoreCore(os.path.join(tempfile.mkdtemp(), "s.db"), clock=fixed).now_ms()
        1735689600000
        """
        return to_ms(self._clock())

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
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM users WHERE id = ? AND customer_id = ?", (user_id, customer_id)
        ).fetchone()
        if row is None:
            raise NotFound(f"no user {user_id!r} for this customer", slug="unknown-user")
        return row

    @staticmethod
    def _user_record(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "_id": row["id"],
            "customerId": row["customer_id"],
            "timekeeperExternalId": row["timekeeper_external_id"],
            "name": row["name"],
            "email": row["email"],
        }

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
