"""The journal: an append-only, locked record of the calls the service acknowledged.

A re-run skips a call whose journal line (endpoint, URL, key and payload hashed together)
is already there: it was answered 2xx with the same content.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol

from toolkit.core.lock import FileLock, LockHeld
from toolkit.errors import ConfigError, JournalInUseError

__all__ = ["Journal", "Recorded", "payload_hash"]


class Recorded(Protocol):
    """What the journal writes of a call: its endpoint and key."""

    @property
    def endpoint(self) -> str: ...

    @property
    def key(self) -> Any: ...


class Journal:
    """An append-only record of calls the service acknowledged (2xx).

    Args:
        path: a JSON-lines file; created if missing. Lines survive ``kill -9`` because each is
            written and flushed as soon as its call is acknowledged; a torn last line is cut
            off when the journal is opened again, and bytes that are not a journal line are
            skipped.

    Raises:
        ConfigError: the path is a folder or cannot be written.
        JournalInUseError: another run holds the journal (an advisory lock on
            ``<path>.lock``, which names the process).

    Example:
        >>> import tempfile, os
        >>> j = Journal(os.path.join(tempfile.mkdtemp(), "j.jsonl"))
        >>> from toolkit.bulk.runner import Call
        >>> c = Call("import_clients", json={"externalId": "C1"}, key="C1")
        >>> line = c.journal_id("https://svc/api/v1/customers/c1/clients/import")
        >>> j.record(line, c, 201); line in j
        True
        >>> j.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"the journal {self.path} is a folder; give the path of a file")
        self._lock = threading.Lock()
        self._done: set[str] = set()
        self._holder = FileLock(self.path.parent / (self.path.name + ".lock"))
        try:
            self._holder.acquire()
        except LockHeld as held:
            raise JournalInUseError(
                f"the journal {self.path} is in use by {held.holder}; wait for that run to end "
                "(or stop it) before starting another on the same journal"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot write the journal {self.path}: {exc.strerror}") from None
        try:
            self._fh = self._load()
        except OSError as exc:
            self._release()
            raise ConfigError(f"cannot write the journal {self.path}: {exc.strerror}") from None

    def _load(self) -> Any:
        """Read the acknowledged ids; cut a torn last line; open for appending."""
        fh = self.path.open("a+b")
        fh.seek(0)
        data = fh.read()
        end = len(data)
        if data and not data.endswith(b"\n"):
            # the last line was torn by a kill: drop it (that call is simply sent again)
            end = data.rfind(b"\n") + 1
            fh.truncate(end)
            fh.flush()
        for raw in data[:end].splitlines():
            try:
                self._done.add(str(json.loads(raw)["id"]))
            except (ValueError, KeyError, TypeError):
                continue  # bytes that are not a journal line (not UTF-8, not JSON)
        return fh

    def _release(self) -> None:
        self._holder.release()

    def __contains__(self, journal_id: object) -> bool:
        return journal_id in self._done

    def __len__(self) -> int:
        return len(self._done)

    def record(self, journal_id: str, call: Recorded, status: int) -> None:
        """Append one acknowledged call under its :meth:`Call.journal_id`."""
        line = json.dumps(
            {"id": journal_id, "endpoint": call.endpoint, "key": call.key, "status": status}
        )
        with self._lock:
            if self._fh.closed:  # an answer that came after an interrupt closed the journal
                return
            self._fh.write(line.encode("utf-8") + b"\n")
            self._fh.flush()
            self._done.add(journal_id)

    def close(self) -> None:
        """Flush and close the file and release the lock (closing twice is harmless)."""
        with self._lock:
            if self._fh.closed:
                return
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._release()


def payload_hash(payload: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of a payload: sorted keys, no spaces, UTF-8.

    Equal payloads hash equal whatever their key order; used by journals to tell whether a
    record was already sent with the same content.

    Args:
        payload: A JSON-serialisable value (a dict from :func:`to_payloads`).

    Returns:
        64 hexadecimal characters.

    Raises:
        ValueError: The payload holds NaN or infinity.
        TypeError: The payload holds a value JSON cannot represent.

    >>> payload_hash({"b": 1, "a": "x"}) == payload_hash({"a": "x", "b": 1})
    True
    >>> len(payload_hash({"a": 1}))
    64
    """
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
