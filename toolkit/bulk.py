"""The one bulk runner: many requests on a pool of workers, with progress and a journal.

Imports, acknowledgements, user look-ups and starring all go through :func:`run_bulk`. Each
:class:`Call` gets exactly one :class:`~toolkit.http.Reply` back, in input order; nothing is
dropped. A :class:`Journal` (JSON lines, one per acknowledged call, flushed as it is written)
lets a re-run skip the calls that were already answered 2xx with the same payload.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from toolkit.connection import Connection
from toolkit.http import Reply
from toolkit.payloads import payload_hash

__all__ = ["JOURNALED", "Call", "Journal", "result_frame", "run_bulk"]

#: ``Reply.error`` of a call skipped because the journal holds it.
JOURNALED = "already acknowledged (journal)"


@dataclass(frozen=True)
class Call:
    """One request of a bulk operation.

    Attributes:
        endpoint: a key of :data:`toolkit.connection.ENDPOINTS`.
        path: path parameters other than ``customerId``.
        json: the JSON body.
        key: what identifies the call in the journal and the progress (an ``externalId``...).
        params: query parameters.
        retry: whether the call is safe to repeat.
    """

    endpoint: str
    path: dict[str, str] | None = None
    json: Any = None
    key: str = ""
    params: dict[str, Any] | None = None
    retry: bool = True

    def journal_id(self, url: str) -> str:
        """The journal line key: the full URL (service, customer, path), key and payload."""
        return payload_hash([self.endpoint, url, self.key, self.json])


class Journal:
    """An append-only record of calls the service acknowledged (2xx).

    Args:
        path: a JSON-lines file; created if missing. Lines survive ``kill -9`` because each is
            written and flushed as soon as its call is acknowledged.

    Example:
        >>> import tempfile, os
        >>> j = Journal(os.path.join(tempfile.mkdtemp(), "j.jsonl"))
        >>> c = Call("import_clients", json={"externalId": "C1"}, key="C1")
        >>> line = c.journal_id("https://svc/api/v1/customers/c1/clients/import")
        >>> j.record(line, c, 201); line in j
        True
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._done: set[str] = set()
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    self._done.add(json.loads(line)["id"])
                except (ValueError, KeyError, TypeError):
                    continue  # a line torn by a kill: that call is simply sent again
        self._lock = threading.Lock()
        self._fh = self.path.open("a", encoding="utf-8")

    def __contains__(self, journal_id: object) -> bool:
        return journal_id in self._done

    def __len__(self) -> int:
        return len(self._done)

    def record(self, journal_id: str, call: Call, status: int) -> None:
        """Append one acknowledged call under its :meth:`Call.journal_id`."""
        line = json.dumps(
            {"id": journal_id, "endpoint": call.endpoint, "key": call.key, "status": status}
        )
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()
            self._done.add(journal_id)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._fh.close()


def run_bulk(
    conn: Connection,
    calls: Sequence[Call],
    *,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
    desc: str = "requests",
) -> list[Reply]:
    """Send every call on a pool of worker threads and return one reply per call, in order.

    Args:
        conn: the connection (a :class:`~toolkit.connection.Connection`).
        calls: the requests to send.
        workers: worker threads (default: ``conn.workers``).
        progress: show a tqdm progress bar (Jupyter or terminal).
        journal: a path or :class:`Journal`; calls it holds are not sent and get a reply with
            ``status=None`` and ``error=JOURNALED``; answered 2xx calls are added to it.
        desc: label of the progress bar.

    Returns:
        Replies aligned with ``calls``.

    Example:
        >>> calls = [Call("user", {"userId": u}, key=u) for u in ids]  # doctest: +SKIP
        >>> replies = run_bulk(client, calls)  # doctest: +SKIP
        >>> [r.status for r in replies]  # doctest: +SKIP
        [200, 404]
    """
    own_journal = journal is not None and not isinstance(journal, Journal)
    jr: Journal | None = Journal(journal) if own_journal else journal  # type: ignore[assignment]
    replies: list[Reply | None] = [None] * len(calls)
    todo: list[int] = []
    # journal lines name the full URL: another customer or service never matches them
    ids = (
        [c.journal_id(conn.url(c.endpoint, **(c.path or {}))) for c in calls]
        if jr is not None
        else []
    )
    for i in range(len(calls)):
        if jr is not None and ids[i] in jr:
            replies[i] = Reply(None, None, JOURNALED, 0, 0.0, "", "")
        else:
            todo.append(i)

    def one(i: int) -> tuple[int, Reply]:
        call = calls[i]
        try:
            reply = conn.send(
                call.endpoint, path=call.path, params=call.params, json=call.json, retry=call.retry
            )
        except Exception as exc:  # a bug must not lose the other rows
            reply = Reply(None, None, f"internal error: {type(exc).__name__}: {exc}", 1)
        if jr is not None and reply.ok:
            jr.record(ids[i], call, reply.status or 0)
        return i, reply

    bar = tqdm(total=len(calls), desc=desc, disable=not progress, unit="req", leave=True)
    bar.update(len(calls) - len(todo))
    n_workers = max(1, min(workers or conn.workers, len(todo) or 1))
    try:
        if n_workers == 1:
            for i in todo:
                _, replies[i] = one(i)
                bar.update(1)
        else:
            with ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="toolkit") as pool:
                futures = [pool.submit(one, i) for i in todo]
                for fut in as_completed(futures):
                    i, reply = fut.result()
                    replies[i] = reply
                    bar.update(1)
    finally:
        bar.close()
        if own_journal and jr is not None:
            jr.close()
    return replies  # type: ignore[return-value]


def result_frame(
    index: pd.Index | Sequence[Any],
    keys: Sequence[Any],
    replies: Sequence[Reply],
    *,
    key_name: str = "externalId",
) -> pd.DataFrame:
    """The standard result frame of a bulk operation: one row per input row.

    Columns: ``<key_name>``, ``status`` (``sent``, ``journaled``, ``failed``, ``skipped``),
    ``ok``, ``httpStatus``, ``error``, ``attempts``, ``elapsed``.

    Args:
        index: the input frame's index (the result is aligned to it).
        keys: the identifying value of each row.
        replies: one reply per row.
        key_name: name of the key column.

    Returns:
        The result frame.

    Example:
        >>> r = result_frame([0], ["C1"], [Reply(201)])
        >>> r.loc[0, "status"], bool(r.loc[0, "ok"])
        ('sent', True)
    """
    status = []
    for r in replies:
        if r.error == JOURNALED:
            status.append("journaled")
        elif r.ok:
            status.append("sent")
        elif r.status is None and r.attempts == 0:
            status.append("skipped")
        else:
            status.append("failed")
    frame = pd.DataFrame(
        {
            key_name: pd.array(list(keys), dtype="string"),
            "status": pd.Categorical(status, categories=["sent", "journaled", "failed", "skipped"]),
            "ok": [s in ("sent", "journaled") for s in status],
            "httpStatus": pd.array([r.status for r in replies], dtype="Int64"),
            "error": pd.array(
                [None if r.error == JOURNALED else r.error for r in replies], dtype="string"
            ),
            "attempts": pd.array([r.attempts for r in replies], dtype="Int64"),
            "elapsed": [round(r.elapsed, 6) for r in replies],
        },
        index=pd.Index(index) if not isinstance(index, pd.Index) else index,
    )
    return frame
