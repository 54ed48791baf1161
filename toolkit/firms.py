"""Many firms from one ``firms.toml`` (docs/scaling.md): each its customer, credentials, pace,
journal and tables; the secret is given by reference (``client_secret_env`` or
``client_secret_file``), never in the file.

:func:`load` reads and checks it; :mod:`toolkit.dagster` runs each firm's steps (:meth:`Firm.push`,
:meth:`Firm.sync_tables`, :meth:`Firm.reconcile`); :func:`status` is ``toolkit firms status``.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from toolkit._client import Client, read_env_file
from toolkit._core.dtypes import TEXT, nullable
from toolkit._core.windows import Window, outside, to_utc
from toolkit._egress import Export, SyncReport, read_sync, sync_status
from toolkit._ingress import OnboardReport, read_table
from toolkit._reconciliation import Reconciliation, reconcile
from toolkit.errors import ConfigError, closest

__all__ = ["DEFAULT_SINCE", "STATUS_COLUMNS", "STEPS", "Firm", "Firms", "load", "status"]

#: How far back a firm's first sync starts when ``after`` is not given.
DEFAULT_SINCE = "30D"

#: the steps a run of a firm takes (:meth:`Firm.recorded` keeps each one's failures)
STEPS: tuple[str, ...] = ("push", "sync", "reconcile")

#: the keys a firm's table must have (in this order in the message naming the missing ones)
_REQUIRED = ("customer_id", "client_id", "auth_url", "time_url", "audience", "journal", "sync")
#: every key of a firm's table -> the type(s) accepted
_KEYS: dict[str, tuple[type, ...]] = dict.fromkeys(
    (*_REQUIRED, "client_secret_env", "client_secret_file", "ingestion_url", "source", "billing"),
    (str,),
) | dict.fromkeys(("after", "sync_since"), (str, date, datetime))
_KEYS |= {"max_rate": (int, float), "workers": (int,), "reconcile": (dict,)}
#: keywords of :func:`toolkit.reconcile` a firm's ``reconcile`` table may set
_RECONCILE_KEYS: dict[str, tuple[type, ...]] = dict.fromkeys(
    ("key", "billing_key", "billing_id", "duration", "date", "matter", "duration_unit"), (str,)
) | {"tolerance_seconds": (int, float), "dayfirst": (bool,)}
_RECONCILE_KEYS |= dict.fromkeys(("after", "on_or_before"), (str, date, datetime))
_DURATION = re.compile(r"\d+(\.\d+)?\s*[A-Za-z]+(\s*\d+(\.\d+)?\s*[A-Za-z]+)*")
#: the keys that are paths, read against the file's folder
_PATHS = ("journal", "sync", "client_secret_file", "source", "billing")
#: the keys :func:`_firm` reads into a field of another name or form (the others: the same)
_READ = ("after", "sync_since", "max_rate", "reconcile")
_FIRM_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", float: "a number"}
_TYPE_NAMES |= {dict: "a table", bool: "true or false", date: "a date", datetime: "a date-time"}


@dataclass(frozen=True)
class Firm:
    """One firm of a ``firms.toml``: where its data lives and how to reach its customer.

    The fields are the file's keys (``key``: the table's name and Dagster partition;
    ``reconcile_options``: its ``reconcile`` table; ``after``: where the first sync starts, a UTC
    timestamp or a duration back from each sync such as ``"30D"``; ``sync_since``, its name
    before, is read one release with a warning). Dates are read as
    :class:`~toolkit._core.windows.Window` reads them, once, when the file is loaded. The secret is
    held by reference only (``env_file``: a ``.env`` read when the environment lacks the
    variable).

    Example:
        >>> firm.key, firm.client_secret_env
        ('sample', 'SAMPLE_SECRET')
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
    after: str | pd.Timestamp = DEFAULT_SINCE
    max_rate: float | None = None
    workers: int = 8
    reconcile_options: Mapping[str, Any] = field(default_factory=dict)
    env_file: Path | None = field(default=None, repr=False)

    @property
    def sync_since(self) -> str | pd.Timestamp:
        """Deprecated: :attr:`after` (the same value), kept one release."""
        message = "Firm.sync_since is deprecated and goes in the next release; use Firm.after"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return self.after

    @property
    def service_host(self) -> str:
        """The host of the time service: firms on one host share its Dagster concurrency pool.

        >>> firm.service_host.startswith("127.0.0.1:")
        True
        """
        return urlsplit(self.time_url).netloc

    @contextmanager
    def recorded(self, step: str) -> Iterator[None]:
        """Run a step of the firm, keeping whether it failed for ``toolkit firms status``.

        A step that raises counts one more failure in a row; one that ends resets the count.

        Args:
            step: one of :data:`STEPS`.

        Example:
            >>> with firm.recorded("sync"):
            ...     pass
            >>> row = status({firm.key: firm}).iloc[0]; row["state"], int(row["failed_runs"])
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
        where = f"firm {self.key!r}: client_secret_file {str(self.client_secret_file)!r}"
        if self.client_secret_file is not None:
            try:
                value: str | None = self.client_secret_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"{where} cannot be read ({exc.strerror})") from None
            if not value:
                raise ConfigError(f"{where} is empty")
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

        Example:
            >>> c = firm.client(); c.customer_id == firm.customer_id
            True
        """
        urls = (self.auth_url, self.time_url, self.ingestion_url)
        given = (self.customer_id, self.client_id, self._secret(), *urls, self.audience)
        return Client(*given, workers=self.workers, max_rate=self.max_rate)

    def push(self, client: Client | None = None, *, progress: bool = False) -> OnboardReport:
        """Push the firm's master data folder with its journal; keep the outcome for :func:`status`.

        Args:
            client: The firm's client (default: a new one).
            progress: Show progress bars.

        Returns:
            The onboarding report.

        Example:
            >>> report = firm.push()
            >>> report.ok, int(firm.push().counts["sent"].sum())  # the second sends nothing
            (True, 0)
        """
        if self.source is None:
            raise ConfigError(f"firm {self.key!r}: no source: nothing to push")
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        client = client or self.client()
        report = client.onboard(self.source, journal=self.journal, progress=progress)
        counts = {k: int(v) for k, v in report.counts.sum().items()} if len(report.counts) else {}
        failing = report.failures[["table", "externalId", "status", "error"]].to_dict("records")
        record = {"at": pd.Timestamp.now(tz="UTC").isoformat(), "counts": counts}
        _write_json(_record(self, "last-push"), record | {"failing": failing})
        return report

    def sync_tables(self, client: Client | None = None) -> SyncReport:
        """Sync the firm's released time into its Delta folder (first from ``after``).

        Args:
            client: The firm's client (default: a new one).

        Returns:
            The sync report.

        Example:
            >>> firm.sync_tables().watermark is not None
            True
        """
        first = _sync_state(self.sync).get("watermark") is None
        return (client or self.client()).sync(
            self.sync, after=_after(self.after, "after") if first else None
        )

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
        return reconcile(export.entries, read_table(self.billing), **dict(self.reconcile_options))


class Firms(dict[str, Firm]):
    """The firms of one ``firms.toml`` (``path``), by key, in the file's order.

    Example:
        >>> Firms(Path("firms.toml"), {})
        Firms('firms.toml', [])
    """

    def __init__(self, path: Path, firms: Mapping[str, Firm]) -> None:
        super().__init__(firms)
        self.path = path

    def __missing__(self, key: str) -> Firm:
        raise KeyError(f"no firm {key!r} in {self.path}")

    def __repr__(self) -> str:
        return f"Firms({str(self.path)!r}, {list(self)})"


def _where(firm: str, key: str | None = None) -> str:
    return f"firm {firm!r}" + (f", key {key!r}" if key else "")


def _typed(firm: str, key: str, value: Any, types: tuple[type, ...]) -> Any:
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        wanted = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise ConfigError(f"{_where(firm, key)}: must be {wanted}, not {value!r}")
    if isinstance(value, str) and not value.strip():
        raise ConfigError(f"{_where(firm, key)}: is empty")
    return value


def _unknown(firm: str, key: str, known: Mapping[str, Any]) -> ConfigError:
    close = closest(key, list(known))
    hint = f" (did you mean {close!r}?)" if close else ""
    return ConfigError(f"{_where(firm, key)}: unknown key{hint}; known: {', '.join(sorted(known))}")


def _after(value: Any, where: str, now: pd.Timestamp | None = None) -> pd.Timestamp:
    """``after`` as a UTC timestamp: a duration back from ``now``, or the time given (a bare
    day: its start, as :class:`~toolkit._core.windows.Window` reads it)."""
    if isinstance(value, str) and _DURATION.fullmatch(value.strip()):
        back = pd.Timedelta(value)
        if back <= pd.Timedelta(0):
            raise ValueError(f"{value!r} is not a positive duration")
        return ((now if now is not None else pd.Timestamp.now(tz="UTC")) - back).tz_convert("UTC")
    pd.Timestamp(value)  # unreadable: ValueError, said as neither a date nor a duration
    return to_utc(value, where)


def _since(name: str, values: Mapping[str, Any]) -> str | pd.Timestamp:
    """A firm's ``after`` (or ``sync_since``, kept one release): a duration as given, else as a
    timestamp (read once here either way, so that a bad one is refused as the file loads)."""
    key = "sync_since" if "sync_since" in values else "after"
    if key == "sync_since":  # kept one release (RENAMED)
        if "after" in values:
            raise ConfigError(f"{_where(name, key)}: is after kept one release: give after only")
        message = f"{_where(name, key)}: is deprecated and goes in the next release; use after"
        warnings.warn(message, DeprecationWarning, stacklevel=outside())
    since = values.get(key, DEFAULT_SINCE)
    try:
        stamp = _after(since, _where(name, key))  # a duration counts back from each sync
    except ConfigError:
        raise  # an ambiguous date: the one message
    except (ValueError, TypeError, OverflowError):
        raise ConfigError(
            f"{_where(name, key)}: {since!r} is neither a date (2026-01-31, "
            "2026-01-31T08:00:00Z) nor a duration back from now (30D, 12h)"
        ) from None
    return since if isinstance(since, str) and _DURATION.fullmatch(since.strip()) else stamp


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
            raise _unknown(name, key, _KEYS)
    values = {key: _typed(name, key, table[key], _KEYS[key]) for key in table}
    missing = [key for key in _REQUIRED if key not in values]
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
        parts = urlsplit(values.get(key, "https://x"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"{_where(name, key)}: {values[key]!r} is not an http(s) address such as "
                "https://host.example"
            )
    after = _since(name, values)
    rate = values.get("max_rate")
    if rate is not None and not rate > 0:
        raise ConfigError(f"{_where(name, 'max_rate')}: must be a positive number, not {rate!r}")
    workers = values.get("workers", 8)
    if workers < 1:
        raise ConfigError(f"{_where(name, 'workers')}: must be 1 or more, not {workers!r}")
    options = values.get("reconcile", {})
    for key, value in options.items():
        if key not in _RECONCILE_KEYS:
            raise _unknown(name, f"reconcile.{key}", {f"reconcile.{k}": 0 for k in _RECONCILE_KEYS})
        _typed(name, f"reconcile.{key}", value, _RECONCILE_KEYS[key])
    names = (_where(name, "reconcile.after"), _where(name, "reconcile.on_or_before"))
    span = Window.of(options.get("after"), options.get("on_or_before"), names)
    options |= {k: v for k, v in vars(span).items() if v is not None}
    # the other keys are the fields of the same name; a path is read against the file's folder
    fields = {k: folder / v if k in _PATHS else v for k, v in values.items() if k not in _READ}
    return Firm(
        key=name,
        after=after,
        max_rate=float(rate) if rate is not None else None,
        reconcile_options=dict(options),
        env_file=env_file,
        **fields,
    )


def load(path: str | os.PathLike[str]) -> Firms:
    """Read and check a ``firms.toml``.

    Relative paths are read against the file's folder; a ``.env`` beside it is read for a
    secret's variable the environment lacks. No two firms share a journal or Delta folder.

    Args:
        path: The file.

    Returns:
        The firms, by key, in the file's order.

    Example:
        >>> _ = (tmp / "bad.toml").write_text('[firms.acme]\\ncustomer_id = 7\\n')
        >>> load(tmp / "bad.toml")
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
    env = folder / ".env" if (folder / ".env").is_file() else None
    firms = {name: _firm(name, table, folder, env) for name, table in tables.items()}
    for key in ("journal", "sync"):
        seen: dict[Path, str] = {}
        for firm in firms.values():
            if (other := seen.setdefault(getattr(firm, key).resolve(), firm.key)) != firm.key:
                raise ConfigError(
                    f"{_where(firm.key, key)}: the same {key} as firm {other!r} "
                    f"({getattr(firm, key)}); each firm needs its own (one writer per folder)"
                )
    return Firms(file, firms)


def _record(firm: Firm, name: str) -> Path:
    """A file beside the journal: ``last-push`` or ``runs`` (each step's failures in a row)."""
    return firm.journal.with_name(f"{firm.journal.stem}.{name}.json")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _write_json(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)


def _write_run(firm: Firm, step: str, error: str | None) -> None:
    """Count a failure of ``step`` in a row (``error``), or none again (``None``)."""
    record = _read_json(_record(firm, "runs"))
    now = pd.Timestamp.now(tz="UTC").isoformat()
    found = record.get(step)
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    if error is None:
        entry |= {"failed_runs": 0, "last_ok_at": now}
    else:
        entry |= {"failed_runs": int(entry.get("failed_runs", 0)) + 1, "last_error": error}
        entry["last_error_at"] = now
    _write_json(_record(firm, "runs"), {**record, step: entry})


def _sync_state(folder: Path) -> dict[str, Any]:
    try:
        return sync_status(folder)
    except ConfigError:
        return {}


#: the columns of :func:`status`
STATUS_COLUMNS = (
    "firm customer_id state last_push sent unchanged failing failed_runs last_error "
    "last_error_at watermark watermark_age delta_version entries"
).split()


def _row(firm: Firm, now: pd.Timestamp) -> dict[str, Any]:
    push = _read_json(_record(firm, "last-push"))
    counts = push.get("counts", {})
    runs = _read_json(_record(firm, "runs"))
    failing = sorted(
        (str(e.get("last_error_at")), step, e)
        for step, e in runs.items()
        if isinstance(e, dict) and int(e.get("failed_runs", 0)) > 0
    )
    failed_runs = max((int(e["failed_runs"]) for *_, e in failing), default=0 if runs else pd.NA)
    rows_failing = len(push.get("failing", [])) if push else pd.NA
    state = _sync_state(firm.sync)
    mark = state.get("watermark")
    ran = "ok" if push or runs else "never run"
    return {
        "firm": firm.key,
        "customer_id": firm.customer_id,
        "state": "failing" if failing or (push and rows_failing) else ran,
        "last_push": push.get("at") if push else None,
        "sent": counts.get("sent", 0) if push else pd.NA,
        "unchanged": counts.get("journaled", 0) if push else pd.NA,
        "failing": rows_failing,
        "failed_runs": failed_runs,
        "last_error": f"{failing[-1][1]}: {failing[-1][2].get('last_error')}" if failing else None,
        "last_error_at": failing[-1][0] if failing else None,
        "watermark": mark,
        "watermark_age": (now - mark).floor("s") if mark is not None else None,
        "delta_version": state.get("entries_version", pd.NA),
        "entries": state.get("entries", pd.NA),
    }


def status(firms: Mapping[str, Firm], *, now: pd.Timestamp | None = None) -> pd.DataFrame:
    """One row per firm: its last push, its runs' failures, its Delta folder's watermark.

    Reads only local files: no secret, no request.

    Args:
        firms: The firms (:func:`load`).
        now: The present, for ``watermark_age`` (default: now).

    Returns:
        :data:`STATUS_COLUMNS`; ``state`` is ``failing``, ``ok`` or ``never run``.

    Example:
        >>> status({firm.key: firm}).columns.tolist() == STATUS_COLUMNS
        True
    """
    now = now if now is not None else pd.Timestamp.now(tz="UTC")
    frame = pd.DataFrame([_row(f, now) for f in firms.values()], columns=STATUS_COLUMNS)
    ints = ("sent", "unchanged", "failing", "failed_runs", "delta_version", "entries")
    frame = frame.astype(dict.fromkeys(ints, "Int64") | {"last_error": TEXT})
    for col in ("last_push", "last_error_at", "watermark"):
        frame[col] = pd.to_datetime(frame[col], utc=True)
    frame["watermark_age"] = pd.to_timedelta(frame["watermark_age"].astype(object))
    return nullable(frame)
