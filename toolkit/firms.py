"""Many firms from one ``firms.toml``: each its customer, credentials, pace, journal and tables.

One table per firm; the secret is given by reference (an environment variable or a file),
never in the file itself; relative paths are read against the file's folder::

    [firms.harbor-lane]
    customer_id = "3f1c..."
    client_id = "app-harbor"
    client_secret_env = "HARBOR_LANE_SECRET"     # or client_secret_file = "secrets/harbor"
    auth_url = "https://auth.example"
    time_url = "https://time.example"
    audience = "https://time.example"            # the token request's audience (required)
    # ingestion_url: optional, as for Client
    source = "extracts/harbor-lane"              # master data folder (optional)
    journal = "state/harbor-lane.jsonl"
    sync = "lake/harbor-lane"                    # Delta folder
    sync_since = "30D"                           # first sync: a date, or a duration back
    billing = "billing/harbor-lane.xlsx"         # billing extract (optional)
    # max_rate, workers: optional, as for Client
    [firms.harbor-lane.reconcile]                # options of toolkit.reconcile (optional)
    duration = "hours"
    duration_unit = "hours"

:func:`load` reads and checks the file (every error names the firm and the key);
:meth:`Firm.client` builds the firm's own :class:`~toolkit.Client` (its own session, token and
pacer); :meth:`Firm.push`, :meth:`Firm.sync` and :meth:`Firm.reconcile` are the three steps
:mod:`toolkit.dagster` runs per firm; :func:`status` is ``toolkit firms status``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from toolkit.client import Client, read_env_file
from toolkit.egress import Export, SyncReport, read_sync, sync_status
from toolkit.errors import ConfigError
from toolkit.ingress import OnboardReport, read_table
from toolkit.reconciliation import Reconciliation, reconcile

__all__ = [
    "DEFAULT_SINCE",
    "STATUS_COLUMNS",
    "STEPS",
    "Firm",
    "Firms",
    "load",
    "push_master_data",
    "status",
]

#: How far back a firm's first sync starts when ``sync_since`` is not given.
DEFAULT_SINCE = "30D"

#: the steps a run of a firm takes (:meth:`Firm.recorded` keeps each one's failures)
STEPS: tuple[str, ...] = ("push", "sync", "reconcile")

#: key -> (type(s) accepted, required)
_KEYS: dict[str, tuple[tuple[type, ...], bool]] = {
    "customer_id": ((str,), True),
    "client_id": ((str,), True),
    "client_secret_env": ((str,), False),
    "client_secret_file": ((str,), False),
    "auth_url": ((str,), True),
    "time_url": ((str,), True),
    "ingestion_url": ((str,), False),
    "audience": ((str,), True),
    "source": ((str,), False),
    "journal": ((str,), True),
    "sync": ((str,), True),
    "sync_since": ((str, date, datetime), False),
    "billing": ((str,), False),
    "max_rate": ((int, float), False),
    "workers": ((int,), False),
    "reconcile": ((dict,), False),
}
#: keywords of :func:`toolkit.reconcile` a firm's ``reconcile`` table may set
_RECONCILE_KEYS: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "billing_key": (str,),
    "billing_id": (str,),
    "duration": (str,),
    "date": (str,),
    "matter": (str,),
    "duration_unit": (str,),
    "tolerance_seconds": (int, float),
    "dayfirst": (bool,),
}
_DURATION = re.compile(r"\d+(\.\d+)?\s*[A-Za-z]+(\s*\d+(\.\d+)?\s*[A-Za-z]+)*")
_FIRM_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    dict: "a table",
    bool: "true or false",
    date: "a date",
    datetime: "a date-time",
}


@dataclass(frozen=True)
class Firm:
    """One firm of a ``firms.toml``: where its data lives and how to reach its customer.

    The secret is held by reference only (``client_secret_env`` or ``client_secret_file``),
    so no repr, log line or pickled firm carries it; :meth:`client` reads it.

    Attributes:
        key: The firm's key (``[firms.KEY]``), also its Dagster partition.
        customer_id: The firm's ``customerId``.
        client_id: The application's ``clientId``.
        auth_url: Base address of the identity service.
        time_url: Base address of the time service.
        journal: The firm's journal of acknowledged imports.
        sync: The firm's Delta folder (``toolkit.read_sync`` reads it).
        client_secret_env: Environment variable holding the secret.
        client_secret_file: File holding the secret (one line).
        ingestion_url: Base address of the imports (default ``time_url``).
        audience: Audience of the token request (required in ``firms.toml``; a firm built
            without one cannot make a client).
        source: Master data folder (no push without it).
        billing: Billing extract to reconcile the synced entries with.
        sync_since: Start of the first sync: a timestamp, or a duration back from now.
        max_rate: Requests per second the firm's runs never exceed.
        workers: Worker threads of the firm's bulk runs.
        reconcile_options: Keywords of :func:`toolkit.reconcile`.
        env_file: A ``.env`` file read for the secret's variable when the environment lacks it.

    Example:
        >>> f = Firm("acme", "c-1", "app", "http://127.0.0.1:1", "http://127.0.0.1:1",
        ...          Path("j.jsonl"), Path("lake"), client_secret_env="ACME_SECRET")
        >>> f.key, f.client_secret_env
        ('acme', 'ACME_SECRET')
    """

    key: str
    customer_id: str
    client_id: str
    auth_url: str
    time_url: str
    journal: Path
    sync: Path
    client_secret_env: str | None = None
    client_secret_file: Path | None = None
    ingestion_url: str | None = None
    audience: str | None = None
    source: Path | None = None
    billing: Path | None = None
    sync_since: str | pd.Timestamp = DEFAULT_SINCE
    max_rate: float | None = None
    workers: int = 8
    reconcile_options: Mapping[str, Any] = field(default_factory=dict)
    env_file: Path | None = field(default=None, repr=False)

    @property
    def service_host(self) -> str:
        """The host of the time service: firms on one host share its Dagster concurrency pool.

        >>> Firm("a", "c", "i", "http://x", "https://time.example:8443/v", Path("j"),
        ...      Path("s")).service_host
        'time.example:8443'
        """
        return urlsplit(self.time_url).netloc

    @property
    def push_record(self) -> Path:
        """The file beside the journal holding what the last push did (``toolkit firms status``).

        >>> Firm("a", "c", "i", "http://x", "http://x", Path("state/a.jsonl"),
        ...      Path("s")).push_record.as_posix()
        'state/a.last-push.json'
        """
        return self.journal.with_name(self.journal.stem + ".last-push.json")

    @property
    def run_record(self) -> Path:
        """The file beside the journal holding each step's failures in a row and last error.

        >>> Firm("a", "c", "i", "http://x", "http://x", Path("state/a.jsonl"),
        ...      Path("s")).run_record.as_posix()
        'state/a.runs.json'
        """
        return self.journal.with_name(self.journal.stem + ".runs.json")

    @contextmanager
    def recorded(self, step: str) -> Iterator[None]:
        """Run a step of the firm, keeping in :attr:`run_record` whether it failed, so that
        ``toolkit firms status`` shows a failing firm as failing, with its count and error.

        A step that raises counts one more failure in a row (the error is kept, the exception
        goes on); one that ends counts none again. :mod:`toolkit.dagster`'s assets run their
        steps in it.

        Args:
            step: one of :data:`STEPS`.

        Example:
            >>> with firm.recorded("sync"):
            ...     pass
            >>> row = status({firm.key: firm}).iloc[0]
            >>> row["state"], int(row["failed_runs"])
            ('ok', 0)
        """
        if step not in STEPS:
            raise ConfigError(f"step must be one of {', '.join(STEPS)}, got {step!r}")
        try:
            yield
        except Exception as exc:
            text = getattr(exc, "description", None) or str(exc) or "no message"
            _write_run(self, step, f"{type(exc).__name__}: {text}")
            raise
        _write_run(self, step, None)

    def _secret(self) -> str:
        if self.client_secret_file is not None:
            try:
                value: str | None = self.client_secret_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(
                    f"firm {self.key!r}: client_secret_file {str(self.client_secret_file)!r} "
                    f"cannot be read ({exc.strerror})"
                ) from None
            if not value:
                raise ConfigError(
                    f"firm {self.key!r}: client_secret_file {str(self.client_secret_file)!r} "
                    "is empty"
                )
            return value
        name = self.client_secret_env or ""
        value = os.environ.get(name)
        if not value and self.env_file is not None:
            value = read_env_file(self.env_file).get(name)
        if not value:
            where = f" or in {self.env_file}" if self.env_file is not None else ""
            raise ConfigError(
                f"firm {self.key!r}: client_secret_env: the variable {name} is not set in the "
                f"environment{where}"
            )
        return value

    def client(self) -> Client:
        """Build the firm's own client: its session, token and pacer, shared with no firm.

        Returns:
            A :class:`~toolkit.Client` of the firm's customer.

        Raises:
            ConfigError: the secret's variable is unset, or its file unreadable or empty, or
                the firm has no audience.

        Example:
            >>> os.environ["DOC_SECRET"] = "s3cr3t"
            >>> f = Firm("acme", "c-1", "app", "http://127.0.0.1:1", "http://127.0.0.1:1",
            ...          Path("j.jsonl"), Path("lake"), client_secret_env="DOC_SECRET",
            ...          audience="https://time.example")
            >>> c = f.client(); c.customer_id, "s3cr3t" in repr(c)
            ('c-1', False)
        """
        return Client(
            self.customer_id,
            self.client_id,
            self._secret(),
            self.auth_url,
            self.time_url,
            self.ingestion_url,
            self.audience,
            workers=self.workers,
            max_rate=self.max_rate,
        )

    def since(self, now: pd.Timestamp | None = None) -> pd.Timestamp:
        """The start of the firm's first sync (``sync_since``), as a UTC timestamp.

        Args:
            now: The present (default: now), for a ``sync_since`` that is a duration.

        Returns:
            ``now - sync_since`` for a duration such as ``"30D"``, else the timestamp given.

        Example:
            >>> f = Firm("a", "c", "i", "http://x", "http://x", Path("j"), Path("s"))
            >>> str(f.since(pd.Timestamp("2026-03-31", tz="UTC")))
            '2026-03-01 00:00:00+00:00'
        """
        return _since(self.sync_since, now)

    def push(self, client: Client | None = None, *, progress: bool = False) -> OnboardReport:
        """Push the firm's master data folder with the firm's journal, and keep its record.

        What was acknowledged before (same payload) is not sent again. The outcome (when,
        the counts, the rows still failing) is written to :attr:`push_record`.

        Args:
            client: The firm's client (default: a new one).
            progress: Show progress bars.

        Returns:
            The onboarding report.

        Raises:
            ConfigError: the firm has no ``source``.
            ValidationError: a row of the source is invalid (nothing is sent).

        Example:
            >>> report = firm.push()
            >>> report.ok, int(firm.push().counts["sent"].sum())  # the second sends nothing
            (True, 0)
        """
        if self.source is None:
            raise ConfigError(f"firm {self.key!r}: no source: nothing to push")
        report = push_master_data(client or self.client(), self, progress=progress)
        _write_push_record(self, report)
        return report

    def sync_tables(self, client: Client | None = None) -> SyncReport:
        """Sync the firm's released time into its Delta folder, from ``sync_since`` the first time.

        Later syncs start from the folder's watermark, so a repeated sync writes nothing new.

        Args:
            client: The firm's client (default: a new one).

        Returns:
            The sync report.

        Example:
            >>> firm.sync_tables().watermark is not None
            True
        """
        client = client or self.client()
        since = None if _watermark(self.sync) is not None else self.since()
        return client.sync(self.sync, since=since)

    def reconcile(self, export: Export | None = None) -> Reconciliation | None:
        """Reconcile the synced entries with the firm's billing extract.

        Args:
            export: The synced tables (default: ``toolkit.read_sync(firm.sync)``).

        Returns:
            The reconciliation, or ``None`` when the firm has no ``billing``.

        Example:
            >>> firm.reconcile() is None  # this firm has no billing extract
            True
        """
        if self.billing is None:
            return None
        export = export if export is not None else read_sync(self.sync)
        billing = read_table(self.billing)
        return reconcile(export.entries, billing, **dict(self.reconcile_options))


class Firms(Mapping[str, Firm]):
    """The firms of one ``firms.toml``, by key, in the file's order.

    Attributes:
        path: The file read.

    Example:
        >>> firms = Firms(Path("firms.toml"), {})
        >>> len(firms), list(firms)
        (0, [])
    """

    def __init__(self, path: Path, firms: Mapping[str, Firm]) -> None:
        self.path = path
        self._firms = dict(firms)

    def __getitem__(self, key: str) -> Firm:
        try:
            return self._firms[key]
        except KeyError:
            raise KeyError(f"no firm {key!r} in {self.path}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._firms)

    def __len__(self) -> int:
        return len(self._firms)

    def __repr__(self) -> str:
        return f"Firms({str(self.path)!r}, {list(self._firms)})"


# --------------------------------------------------------------------------- reading the file


def _where(firm: str, key: str | None = None) -> str:
    return f"firm {firm!r}" + (f", key {key!r}" if key else "")


def _typed(firm: str, key: str, value: Any, types: tuple[type, ...]) -> Any:
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise ConfigError(f"{_where(firm, key)}: must be {wanted}, not {value!r}")
    if isinstance(value, str) and not value.strip():
        raise ConfigError(f"{_where(firm, key)}: is empty")
    return value


def _unknown(firm: str, key: str, known: Mapping[str, Any], what: str) -> ConfigError:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(
        f"{_where(firm, key)}: unknown {what}{hint}; known: {', '.join(sorted(known))}"
    )


def _url(firm: str, key: str, value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{_where(firm, key)}: {value!r} is not an http(s) address such as https://host.example"
        )
    return value


def _since(value: Any, now: pd.Timestamp | None = None) -> pd.Timestamp:
    if isinstance(value, str) and _DURATION.fullmatch(value.strip()):
        back = pd.Timedelta(value)
        if back <= pd.Timedelta(0):
            raise ValueError(f"{value!r} is not a positive duration")
        base = now if now is not None else pd.Timestamp.now(tz="UTC")
        return (base - back).tz_convert("UTC")
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _firm(name: str, table: Any, folder: Path, env_file: Path | None) -> Firm:
    if not _FIRM_KEY.fullmatch(name):
        raise ConfigError(
            f"firm {name!r}: a firm's key holds letters, digits, '-', '_' and '.' only "
            "(it names the firm's Dagster partition)"
        )
    if not isinstance(table, dict):
        raise ConfigError(f"firm {name!r}: must be a table ([firms.{name}]), not {table!r}")
    for key in table:
        if key not in _KEYS:
            raise _unknown(name, key, _KEYS, "key")
    values = {key: _typed(name, key, table[key], _KEYS[key][0]) for key in table}
    missing = [key for key, (_, required) in _KEYS.items() if required and key not in values]
    if missing:
        raise ConfigError(
            f"{_where(name, missing[0])}: is missing (required: {', '.join(missing)})"
        )
    secrets = [key for key in ("client_secret_env", "client_secret_file") if key in values]
    if len(secrets) != 1:
        raise ConfigError(
            f"{_where(name, 'client_secret_env')}: give the secret by reference, as exactly one "
            "of client_secret_env (an environment variable) or client_secret_file"
            + (" (both are given)" if len(secrets) == 2 else "")
        )
    for key in ("auth_url", "time_url", "ingestion_url"):
        if key in values:
            _url(name, key, values[key])
    since = values.get("sync_since", DEFAULT_SINCE)
    try:
        _since(since)
    except (ValueError, TypeError, OverflowError):
        raise ConfigError(
            f"{_where(name, 'sync_since')}: {since!r} is neither a date (2026-01-31, "
            "2026-01-31T08:00:00Z) nor a duration back from now (30D, 12h)"
        ) from None
    if not isinstance(since, str):
        since = _since(since)
    rate = values.get("max_rate")
    if rate is not None and not rate > 0:
        raise ConfigError(f"{_where(name, 'max_rate')}: must be a positive number, not {rate!r}")
    workers = values.get("workers", 8)
    if workers < 1:
        raise ConfigError(f"{_where(name, 'workers')}: must be 1 or more, not {workers!r}")
    options = values.get("reconcile", {})
    for key, value in options.items():
        if key not in _RECONCILE_KEYS:
            raise _unknown(
                name, f"reconcile.{key}", {f"reconcile.{k}": 0 for k in _RECONCILE_KEYS}, "key"
            )
        _typed(name, f"reconcile.{key}", value, _RECONCILE_KEYS[key])

    def path(key: str) -> Path | None:
        return folder / values[key] if key in values else None

    return Firm(
        key=name,
        customer_id=values["customer_id"],
        client_id=values["client_id"],
        auth_url=values["auth_url"],
        time_url=values["time_url"],
        journal=folder / values["journal"],
        sync=folder / values["sync"],
        client_secret_env=values.get("client_secret_env"),
        client_secret_file=path("client_secret_file"),
        ingestion_url=values.get("ingestion_url"),
        audience=values["audience"],
        source=path("source"),
        billing=path("billing"),
        sync_since=since,
        max_rate=float(rate) if rate is not None else None,
        workers=workers,
        reconcile_options=dict(options),
        env_file=env_file,
    )


def load(path: str | os.PathLike[str]) -> Firms:
    """Read and check a ``firms.toml``.

    Relative paths are read against the file's folder. A ``.env`` beside the file is read
    for a secret's variable the environment lacks. Two firms may not share a journal or a
    Delta folder (one writer per folder).

    Args:
        path: The file.

    Returns:
        The firms, by key, in the file's order.

    Raises:
        ConfigError: the file cannot be read or is not TOML, or a firm is wrong: the message
            names the firm and the key.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "firms.toml").write_text('''
        ... [firms.acme]
        ... customer_id = "c-1"
        ... client_id = "app"
        ... client_secret_env = "ACME_SECRET"
        ... auth_url = "https://auth.example"
        ... time_url = "https://time.example"
        ... audience = "https://time.example"
        ... journal = "state/acme.jsonl"
        ... sync = "lake/acme"
        ... ''')
        >>> firms = load(folder / "firms.toml")
        >>> firms["acme"].sync == folder / "lake" / "acme"
        True
        >>> _ = (folder / "bad.toml").write_text('[firms.acme]\\ncustomer_id = 7\\n')
        >>> load(folder / "bad.toml")
        Traceback (most recent call last):
        toolkit.errors.ConfigError: firm 'acme', key 'customer_id': must be a string, not 7
    """
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: is not valid TOML ({exc})") from None
    extra = sorted(set(data) - {"firms"})
    if extra:
        raise ConfigError(f"{file}: unknown table {extra[0]!r}; firms are [firms.KEY] tables")
    tables = data.get("firms")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{file}: no firm; give one [firms.KEY] table per firm")
    folder = file.resolve().parent
    env = folder / ".env"
    firms = {
        name: _firm(name, table, folder, env if env.is_file() else None)
        for name, table in tables.items()
    }
    for key in ("journal", "sync"):
        seen: dict[Path, str] = {}
        for firm in firms.values():
            where = getattr(firm, key).resolve()
            if where in seen:
                raise ConfigError(
                    f"{_where(firm.key, key)}: the same {key} as firm {seen[where]!r} "
                    f"({getattr(firm, key)}); each firm needs its own (one writer per folder)"
                )
            seen[where] = firm.key
    return Firms(file, firms)


# --------------------------------------------------------------------------- the steps


def push_master_data(client: Client, firm: Firm, *, progress: bool = False) -> OnboardReport:
    """Send the firm's master data: the one place that chooses how.

    Today ``client.onboard(source, journal=...)``: validate everything, send what the journal
    has not acknowledged with the same payload. A plan-then-push API replaces this body alone.

    Args:
        client: The firm's client.
        firm: The firm (its ``source`` and ``journal``).
        progress: Show progress bars.

    Returns:
        The onboarding report (sent, journaled, failed... per table).

    Example:
        >>> push_master_data(firm.client(), firm).ok
        True
    """
    assert firm.source is not None
    firm.journal.parent.mkdir(parents=True, exist_ok=True)
    return client.onboard(firm.source, journal=firm.journal, progress=progress)


def _write_push_record(firm: Firm, report: OnboardReport) -> None:
    counts = {k: int(v) for k, v in report.counts.sum().items()} if len(report.counts) else {}
    failing = report.failures
    record = {
        "at": pd.Timestamp.now(tz="UTC").isoformat(),
        "counts": counts,
        "failing": [
            {"table": t, "externalId": k, "status": s, "error": e}
            for t, k, s, e in zip(
                failing["table"],
                failing["externalId"],
                failing["status"],
                failing["error"],
                strict=True,
            )
        ],
    }
    tmp = firm.push_record.with_name(firm.push_record.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str), encoding="utf-8")
    tmp.replace(firm.push_record)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _write_run(firm: Firm, step: str, error: str | None) -> None:
    """Count a failure of ``step`` in a row (``error``), or none again (``None``)."""
    record = _read_json(firm.run_record)
    now = pd.Timestamp.now(tz="UTC").isoformat()
    found = record.get(step)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    if error is None:
        entry.update({"failed_runs": 0, "last_ok_at": now})
    else:
        entry.update(
            {
                "failed_runs": int(entry.get("failed_runs", 0)) + 1,
                "last_error": error,
                "last_error_at": now,
            }
        )
    record[step] = entry
    firm.run_record.parent.mkdir(parents=True, exist_ok=True)
    tmp = firm.run_record.with_name(firm.run_record.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
    tmp.replace(firm.run_record)


def _run_state(firm: Firm) -> dict[str, Any]:
    """``failed_runs`` (the most failures in a row of a step still failing: the runs that
    failed), the latest ``last_error`` (of a step still failing, named) and its time."""
    record = _read_json(firm.run_record)
    failing = [
        (str(e.get("last_error_at")), step, e)
        for step, e in record.items()
        if isinstance(e, dict) and int(e.get("failed_runs", 0)) > 0
    ]
    if not failing:
        return {"failed_runs": 0 if record else pd.NA, "last_error": None, "last_error_at": None}
    at, step, entry = max(failing)
    return {
        "failed_runs": max(int(e.get("failed_runs", 0)) for _, _, e in failing),
        "last_error": f"{step}: {entry.get('last_error')}",
        "last_error_at": pd.Timestamp(at),
    }


def _watermark(folder: Path) -> pd.Timestamp | None:
    try:
        mark: pd.Timestamp | None = sync_status(folder)["watermark"]
        return mark
    except ConfigError:
        return None


# --------------------------------------------------------------------------- status

#: the columns of :func:`status`
STATUS_COLUMNS = [
    "firm",
    "customer_id",
    "state",
    "last_push",
    "sent",
    "unchanged",
    "failing",
    "failed_runs",
    "last_error",
    "last_error_at",
    "watermark",
    "watermark_age",
    "delta_version",
    "entries",
]


def _push_state(firm: Firm) -> dict[str, Any]:
    try:
        record = json.loads(firm.push_record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"last_push": None, "sent": pd.NA, "unchanged": pd.NA, "failing": pd.NA}
    counts = record.get("counts", {})
    return {
        "last_push": pd.Timestamp(record.get("at")),
        "sent": counts.get("sent", 0),
        "unchanged": counts.get("journaled", 0),
        "failing": len(record.get("failing", [])),
    }


def status(firms: Mapping[str, Firm], *, now: pd.Timestamp | None = None) -> pd.DataFrame:
    """One row per firm: its last push, its Delta folder's watermark and version.

    Reads only local files (the push records and the Delta folders): no secret, no request.

    Args:
        firms: The firms (:func:`load`).
        now: The present, for ``watermark_age`` (default: now).

    Returns:
        Columns ``firm``, ``customer_id``, ``state`` (``failing``: a step's last run failed
        or rows are still failing; ``ok``; ``never run``), ``last_push`` (UTC), ``sent``,
        ``unchanged`` (journaled) and ``failing`` (rows still failing) of the last push,
        ``failed_runs`` (the runs in a row that failed: the most failures in a row of a step
        still failing, as :meth:`Firm.recorded` keeps them), ``last_error`` (``step: error``) and
        ``last_error_at`` (UTC), ``watermark`` (UTC), ``watermark_age``, ``delta_version``
        and ``entries`` of the entries table; a firm never pushed or synced has them
        missing.

    Example:
        >>> f = Firm("a", "c", "i", "http://x", "http://x", Path("/nonexistent/j"),
        ...          Path("/nonexistent/s"))
        >>> row = status({"a": f}).iloc[0]
        >>> row["firm"], bool(row[["sent", "watermark", "delta_version"]].isna().all())
        ('a', True)
    """
    now = now if now is not None else pd.Timestamp.now(tz="UTC")
    rows = []
    for firm in firms.values():
        row: dict[str, Any] = {"firm": firm.key, "customer_id": firm.customer_id}
        row.update(_push_state(firm))
        row.update(_run_state(firm))
        failing = (row["failed_runs"] is not pd.NA and row["failed_runs"] > 0) or (
            row["failing"] is not pd.NA and row["failing"] > 0
        )
        ran = row["last_push"] is not None or row["failed_runs"] is not pd.NA
        row["state"] = "failing" if failing else "ok" if ran else "never run"
        try:
            state = sync_status(firm.sync)
        except ConfigError:
            state = {}
        mark = state.get("watermark")
        row["watermark"] = mark
        row["watermark_age"] = (now - mark).floor("s") if mark is not None else None
        row["delta_version"] = state.get("entries_version", pd.NA)
        row["entries"] = state.get("entries", pd.NA)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=STATUS_COLUMNS)
    for col in ("sent", "unchanged", "failing", "failed_runs", "delta_version", "entries"):
        frame[col] = frame[col].astype("Int64")
    frame["last_error"] = frame["last_error"].astype("str")
    frame["last_error_at"] = pd.to_datetime(frame["last_error_at"], utc=True)
    frame["last_push"] = pd.to_datetime(frame["last_push"], utc=True)
    frame["watermark"] = pd.to_datetime(frame["watermark"], utc=True)
    frame["watermark_age"] = pd.to_timedelta(frame["watermark_age"].astype(object))
    return frame
