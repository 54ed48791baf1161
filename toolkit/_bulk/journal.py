"""The journal: an append-only, locked record of what the service holds.

Each line is one answer: accepted (2xx, with URL, key, payload and time), failed, or lost
(``unknown``). Read in order, they give one :class:`Entry` per record (URL and key), for crash
resume (:meth:`Ledger.acknowledged`) and change detection (:func:`toolkit._ingress.plan.plan`).
Older lines ``{"id", "endpoint", "key", "status"}`` still skip a call whose digest matches.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Literal, Protocol

from toolkit._core.lock import FileLock, LockHeld
from toolkit.errors import ConfigError, JournalInUseError

#: How a call that was not accepted ended: answered with an error, or its answer was lost.
Outcome = Literal["failed", "unknown"]


class Recorded(Protocol):
    """What the journal writes of a call."""

    @property
    def endpoint(self) -> str: ...

    @property
    def key(self) -> Any: ...

    @property
    def json(self) -> Any: ...


@dataclass(frozen=True)
class Entry:
    """What the journal knows of one record: the service's state as far as answers tell.

    Attributes:
        endpoint: the call's endpoint; ``url``: the full URL the record was sent to.
        key: the record's key (its ``externalId``; ``initiativeExternalId`` for code ranges).
        customer: the customer, when the line named it.
        payload: the last payload accepted (``None``: never); ``accepted_id``: its digest;
            ``accepted_at``: when (ISO 8601, UTC).
        failure: ``failed`` or ``unknown`` when the last answer was not an acceptance.
        error: the last failure's message; ``failed_status``, ``failed_at``: its status, time.
        failing_since: the first failure since the last acceptance; ``failures``: how many.

    Example:
        >>> e = Entry("import_clients", "https://svc/x", "C1", payload={"name": "A"})
        >>> e.failing, e.active
        (False, False)
    """

    endpoint: str
    url: str
    key: str
    customer: str | None = None
    payload: Any = None
    accepted_id: str | None = None
    accepted_at: str | None = None
    failure: Outcome | None = None
    error: str | None = None
    failed_status: int | None = None
    failed_at: str | None = None
    failing_since: str | None = None
    failures: int = 0

    @property
    def failing(self) -> bool:
        """True when the last answer for this record was a failure (or lost)."""
        return self.failure is not None

    @property
    def active(self) -> bool:
        """True for an accepted payload whose ``status`` is ``active`` (an initiative)."""
        return isinstance(self.payload, dict) and self.payload.get("status") == "active"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Ledger:
    """The state a journal's lines add up to: the acknowledged digests, one :class:`Entry` a record.

    Example:
        >>> ledger = Ledger()
        >>> ledger.apply({"id": "d1", "url": "u", "key": "C1", "payload": {"name": "A"}})
        >>> ledger.get("u", "C1").payload, ledger.acknowledged("d1", "u", "C1")
        ({'name': 'A'}, True)
    """

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.entries: dict[tuple[str, str], Entry] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def get(self, url: str, key: str) -> Entry | None:
        """The entry of a record, or ``None`` when no line with a URL names it."""
        return self.entries.get((url, key))

    def acknowledged(self, journal_id: str, url: str, key: str) -> bool:
        """Whether a call needs no sending: its record's last answer accepted this very call.

        Args:
            journal_id: the call's digest (``Call.journal_id(url)``).
            url: the call's full URL.
            key: the call's key.

        Returns:
            True when the service holds this payload, as far as the journal knows.
        """
        entry = self.entries.get((url, key))
        if entry is None:  # no line of the new form: the old lines' digests decide
            return journal_id in self.ids
        return not entry.failing and entry.accepted_id == journal_id

    def apply(self, line: dict[str, Any]) -> None:
        """Add one journal line to the state (lines are applied in file order).

        Args:
            line: the decoded line (``KeyError`` or ``TypeError``: not a journal line).
        """
        outcome, url, at = line.get("outcome", "accepted"), line.get("url"), line.get("at")
        if outcome == "accepted":
            self.ids.add(str(line["id"]))
        elif outcome not in ("failed", "unknown") or url is None:
            raise KeyError("outcome")
        if url is None:
            return  # an old line: its digest only
        record = (str(url), str(line.get("key")))
        named = (str(line.get("endpoint", "")), *record, line.get("customer"))
        if outcome == "accepted":
            self.entries[record] = Entry(*named, line.get("payload"), str(line["id"]), at)
            return
        previous = self.entries.get(record) or Entry(*named)
        self.entries[record] = replace(
            previous,
            failure=outcome,
            error=line.get("error"),
            failed_status=line.get("status"),
            failed_at=at,
            failing_since=previous.failing_since if previous.failing else at,
            failures=previous.failures + 1,
        )


def _read(data: bytes, ledger: Ledger) -> int:
    """Apply every whole line of ``data``; return where the whole lines end."""
    end = data.rfind(b"\n") + 1  # (0 when no line is whole)
    for raw in data[:end].splitlines():
        try:
            ledger.apply(json.loads(raw))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # bytes that are not a journal line (not UTF-8, not JSON)
    return end


def read_ledger(path: str | os.PathLike[str]) -> Ledger:
    """Read a journal's state without locking or changing it (a plan reads; a run writes).

    A torn last line is left out; a missing file is an empty ledger.

    Args:
        path: the journal file.

    Returns:
        The :class:`Ledger`.

    Example:
        >>> import tempfile, os
        >>> len(read_ledger(os.path.join(tempfile.mkdtemp(), "none.jsonl")))
        0
    """
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"the journal {p} is a folder; give the path of a file")
    ledger = Ledger()
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return ledger
    except OSError as exc:
        raise ConfigError(f"cannot read the journal {p}: {exc.strerror}") from None
    _read(data, ledger)
    return ledger


class Journal:
    """An append-only record of the answers of the service, and the state they add up to.

    Each line is flushed as soon as its call is answered (it survives ``kill -9``); a torn last
    line is cut off when the journal is opened again. An advisory lock on ``<path>.lock`` keeps
    a second run out (:class:`~toolkit.errors.JournalInUseError`).

    Args:
        path: a JSON-lines file; created if missing.

    Example:
        >>> import tempfile, os
        >>> from toolkit._bulk.runner import Call
        >>> j, c = Journal(os.path.join(tempfile.mkdtemp(), "j")), Call("import_clients", key="C1")
        >>> j.record(c.journal_id("u"), c, 201, url="u")
        >>> j.record_failure(c, "u", outcome="failed", status=422, error="bad")
        >>> j.acknowledged(c.journal_id("u"), "u", "C1"), j.ledger.get("u", "C1").failures
        (False, 1)
        >>> j.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"the journal {self.path} is a folder; give the path of a file")
        self._lock = threading.Lock()
        self.ledger = Ledger()
        self._holder = FileLock(self.path.parent / (self.path.name + ".lock"))
        try:
            self._holder.acquire()
            try:
                self._fh: BinaryIO = self.path.open("a+b")
                self._fh.seek(0)
                data = self._fh.read()
                end = _read(data, self.ledger)
                if end < len(data):  # a line torn by a kill: drop it (its call is sent again)
                    self._fh.truncate(end)
                    self._fh.flush()
            except OSError:
                self._holder.release()
                raise
        except LockHeld as held:
            raise JournalInUseError(
                f"the journal {self.path} is in use by {held.holder}; wait for that run to end "
                "(or stop it) before starting another on the same journal"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot write the journal {self.path}: {exc.strerror}") from None

    def __contains__(self, journal_id: object) -> bool:
        return journal_id in self.ledger.ids

    def __len__(self) -> int:
        return len(self.ledger)

    def acknowledged(self, journal_id: str, url: str, key: str) -> bool:
        """Whether a call needs no sending (see :meth:`Ledger.acknowledged`)."""
        return self.ledger.acknowledged(journal_id, url, key)

    def _write(self, line: dict[str, Any]) -> None:
        data = json.dumps(line, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        with self._lock:
            if self._fh.closed:  # an answer that came after an interrupt closed the journal
                return
            self._fh.write(data)
            self._fh.flush()
            self.ledger.apply(line)

    def record(
        self,
        journal_id: str,
        call: Recorded,
        status: int,
        *,
        url: str | None = None,
        customer: str | None = None,
    ) -> None:
        """Append one accepted call under its ``Call.journal_id``.

        Args:
            journal_id: the call's digest.
            call: the call.
            status: the HTTP status of the answer.
            url: the call's full URL (without it, only the digest is kept, not the state).
            customer: the customer, for :func:`toolkit._ingress.plan.failures`.
        """
        line = {"id": journal_id, "endpoint": call.endpoint, "key": call.key, "status": status}
        if url is not None:
            line.update(url=url, customer=customer, payload=call.json, at=_now())
        self._write(line)

    def record_failure(
        self,
        call: Recorded,
        url: str,
        *,
        outcome: Outcome,
        status: int | None,
        error: str | None,
        customer: str | None = None,
    ) -> None:
        """Append one call that was answered with an error, or whose answer was lost.

        Args:
            call: the call.
            url: its full URL.
            outcome: ``failed`` (answered with an error) or ``unknown`` (answer lost).
            status: the HTTP status, if there was one.
            error: the message.
            customer: the customer.
        """
        line = {"outcome": outcome, "endpoint": call.endpoint, "key": call.key, "url": url}
        self._write(line | {"customer": customer, "status": status, "error": error, "at": _now()})

    def close(self) -> None:
        """Flush and close the file and release the lock (closing twice is harmless)."""
        with self._lock:
            if self._fh.closed:
                return
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._holder.release()


def payload_hash(payload: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of a payload: sorted keys, no spaces, UTF-8.

    Args:
        payload: a JSON-serialisable value (NaN or infinity: ``ValueError``).

    Returns:
        64 hexadecimal characters.

    Example:
        >>> payload_hash({"b": 1, "a": "x"}) == payload_hash({"a": "x", "b": 1})
        True
    """
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
