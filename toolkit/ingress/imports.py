"""Imports: frame -> schema -> payloads -> bulk runner -> result frame; and whole-firm onboarding.

The five import operations differ only in their endpoint and schema, so one table
(:data:`IMPORTS`) drives one function, :func:`import_table`.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit.bulk.runner import STATUSES, Call, Journal, not_sent, pacer_for, result_frame, run_bulk
from toolkit.core.connection import Connection, Endpoint
from toolkit.core.failures import nullable_rows
from toolkit.core.frames import FrameLike, as_frames, as_pandas, unique_rows
from toolkit.core.http import Reply
from toolkit.errors import ConfigError, Interrupted, ValidationError
from toolkit.ingress.checks import check
from toolkit.ingress.payloads import to_code_range_payloads, to_payloads
from toolkit.ingress.validation import ValidationReport, load_folder
from toolkit.ingress.validation import validate as validate_frames

__all__ = ["IMPORTS", "OnboardReport", "import_table", "onboard"]

#: table -> (endpoint, key column). In the spec's suggested import order.
IMPORTS: dict[str, tuple[Endpoint, str]] = {
    "clients": ("import_clients", "externalId"),
    "initiatives": ("import_initiatives", "externalId"),
    "code_types": ("import_code_types", "externalId"),
    "codes": ("import_codes", "externalId"),
    "code_ranges": ("import_code_ranges", "initiativeExternalId"),
}

#: child table -> [(column, parent table)] for "never post a record whose parent failed".
PARENTS: dict[str, list[tuple[str, str]]] = {
    "initiatives": [("clientExternalId", "clients")],
    "codes": [("codeTypeExternalId", "code_types")],
    "code_ranges": [("initiativeExternalId", "initiatives"), ("codeExternalId", "codes")],
}


#: statuses of a row whose record is known not to be stored by this run: its children are
#: skipped (``unknown`` and ``conflict`` rows may be or are stored: their children are sent)
NOT_STORED = ("failed", "skipped", "not_sent")


def _table(table: str) -> tuple[Endpoint, str]:
    if table not in IMPORTS:
        raise ConfigError(f"unknown table {table!r}; expected one of {', '.join(IMPORTS)}")
    return IMPORTS[table]


def _plan(table: str, df: pd.DataFrame) -> tuple[list[Call], list[list[Any]]]:
    """Calls for a checked frame, and the input row labels each call stands for."""
    endpoint, key = _table(table)
    if table == "code_ranges":
        calls, rows = [], []
        for initiative_id, payload, labels in to_code_range_payloads(df):
            calls.append(
                Call(endpoint, {"initiativeExternalId": initiative_id}, payload, key=initiative_id)
            )
            rows.append(list(labels))
        return calls, rows
    payloads = to_payloads(table, df)
    # a 409 on an import: the service holds this externalId and keeps its version
    calls = [Call(endpoint, None, p, key=str(p.get(key)), conflict=True) for p in payloads]
    return calls, [[label] for label in df.index]


def _spread(index: pd.Index, rows: list[list[Any]], items: list[Any]) -> list[Any]:
    """One item (call or reply) per input row: a code range call stands for all its rows."""
    by_label: dict[Any, Any] = {}
    for labels, item in zip(rows, items, strict=True):
        for label in labels:
            by_label[label] = item
    return [by_label[label] for label in index]


def import_table(
    conn: Connection,
    table: str,
    df: FrameLike,
    *,
    columns: Mapping[str, str] | None = None,
    validate: bool = True,
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
    dry_run: bool = False,
) -> pd.DataFrame:
    """Validate a frame and import it one record per request; one result row per input row.

    Validation runs first and nothing is sent when a row fails; imports are upserts, so a
    re-run with the same frame changes nothing.

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        table: ``clients``, ``initiatives``, ``code_types``, ``codes`` or ``code_ranges``
            (long form: ``initiativeExternalId``, ``codeExternalId``; one request per
            initiative).
        df: the records (a pandas, Polars or PyArrow frame), columns named as in the spec's
            field table.
        columns: renames applied first, e.g. ``{"call_sign": "callSign"}``.
        validate: check the frame against its schema first (raise before anything is sent).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.
        journal: path of a journal; records it holds with the same payload are not sent again.
        dry_run: return the payloads instead of sending them.

    Returns:
        Aligned to ``df.index``: ``externalId`` (``initiativeExternalId`` for code ranges),
        ``status`` (``sent``, ``journaled``, ``conflict`` (a 409: the service keeps its
        version), ``failed``, ``unknown`` (sent, answer lost), ``not_sent``), ``ok``,
        ``httpStatus``, ``error``, ``attempts``, ``elapsed``; with ``dry_run`` the columns are
        the key, ``url`` and ``payload``.

    Raises:
        ValidationError: the frame failed its schema (``.failure_cases`` lists every failure).
        ConfigError: ``df`` is not a frame, or ``table`` is unknown.
        Interrupted: Ctrl+C or Jupyter's stop (no request leaves after it); ``.result`` is the
            frame so far (rows never sent are ``not_sent``).

    Example:
        >>> result = client.import_clients(clients, progress=False)
        >>> result["status"].unique().tolist()
        ['sent']
        >>> "payload" in client.import_clients(clients, dry_run=True)
        True
    """
    _, key = _table(table)
    df = as_pandas(df, "df")
    if columns:
        df = df.rename(columns=dict(columns))
    original = df.index
    df = unique_rows(df)
    checked = check(table, df) if validate else df
    try:
        calls, rows = _plan(table, checked)
    except (ValueError, TypeError, KeyError) as exc:  # only reachable with validate=False
        raise ConfigError(f"cannot build {table} payloads without validation: {exc}") from None
    if dry_run:
        ordered = _spread(checked.index, rows, calls)
        return pd.DataFrame(
            {
                key: [c.key for c in ordered],
                "url": [conn.url(c.endpoint, **(c.path or {})) for c in ordered],
                "payload": [c.json for c in ordered],
            },
            index=original,
        )
    keys = checked[key].astype("string").tolist() if key in checked else [None] * len(checked)
    try:
        replies = run_bulk(
            conn, calls, workers=workers, progress=progress, journal=journal, desc=table
        )
    except Interrupted as exc:
        per_row = _spread(checked.index, rows, exc.replies)
        exc.result = result_frame(original, keys, per_row, key_name=key, conflict=True)
        raise
    per_row = _spread(checked.index, rows, replies)
    return result_frame(original, keys, per_row, key_name=key, conflict=True)


@dataclass
class OnboardReport:
    """What an onboarding did, table by table.

    Attributes:
        counts: one row per table: ``rows``, ``sent``, ``journaled``, ``failed``, ``unknown``,
            ``not_sent``, ``skipped``, ``conflict``.
        results: every input row's result, with a ``table`` column first.
        validation: the validation report of the whole source.
    """

    counts: pd.DataFrame
    results: pd.DataFrame
    validation: ValidationReport | None = None
    dry_run: bool = False
    payloads: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every row was imported (sent or already journaled)."""
        return bool(self.results["ok"].all()) if len(self.results) else True

    @property
    def failures(self) -> pd.DataFrame:
        """The rows that failed or were skipped."""
        return self.results[~self.results["ok"]]

    def __repr__(self) -> str:
        head = "OnboardReport(dry run)" if self.dry_run else "OnboardReport"
        return f"{head}: {'ok' if self.ok else 'NOT ok'}\n{self.counts.to_string()}"

    def _repr_html_(self) -> str:
        """Jupyter's view: the outcome, counts per table, and the first failed rows."""
        head = "OnboardReport (dry run, nothing sent)" if self.dry_run else "OnboardReport"
        if self.dry_run:
            valid = self.validation is None or self.validation.ok
            state = "validation ok" if valid else "validation NOT ok"
        else:
            state = "ok" if self.ok else f"NOT ok: {len(self.failures)} row(s) failed or skipped"
        parts = [f"<p><b>{head}</b>: {html.escape(state)}</p>", self.counts.to_html()]
        shown = self.failures
        if self.dry_run:
            shown = shown[shown["error"] != "dry run"]
        if len(shown):
            cols = [c for c in ("table", "row", "externalId", "status", "error") if c in shown]
            parts.append(shown[cols].head(20).to_html(index=False))
            if len(shown) > 20:
                parts.append(f"<p>... {len(shown) - 20} more in <code>.failures</code></p>")
        return "\n".join(parts)


def _read_source(source: Any) -> dict[str, pd.DataFrame]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_dir():
            raise ConfigError(f"{path} is not a folder")
        return load_folder(path)
    if isinstance(source, Mapping):
        unknown = set(source) - set(IMPORTS)
        if unknown:
            raise ConfigError(f"unknown table(s) {sorted(unknown)}; expected {list(IMPORTS)}")
        frames = as_frames({k: v for k, v in source.items() if v is not None})
        return {k: unique_rows(v) for k, v in frames.items()}
    raise ConfigError(
        "source must be a folder or a mapping of table name -> frame "
        f"(pandas, Polars or PyArrow), not {type(source).__name__}"
    )


def _skipped(reason: str) -> Reply:
    return Reply(None, None, reason, 0, 0.0)


def onboard(
    conn: Connection,
    source: str | os.PathLike[str] | Mapping[str, FrameLike],
    *,
    known: Mapping[str, Iterable[str]] | None = None,
    on_invalid: str = "raise",
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    columns: Mapping[str, str] | Mapping[str, Mapping[str, str]] | None = None,
) -> OnboardReport:
    """Validate a whole firm and import it in the spec's order.

    Clients, initiatives, code types, codes, then code ranges. A record whose parent is
    known not to be stored (``failed``, ``skipped`` or invalid, ``not_sent``) is never posted:
    it is reported as ``skipped`` with the reason. A parent whose answer was lost
    (``unknown``) or that the service already held (``conflict``, a 409 on a repeated import)
    does not hold its children back. With a journal, a re-run sends only what was not
    acknowledged before; a ``conflict`` row is not journaled: a re-run sends it once more and
    reports it ``conflict`` again (one request, never retried).

    Args:
        conn: the connection (a :class:`~toolkit.core.connection.Connection`).
        source: a folder holding ``clients``, ``initiatives``, ``code_types``, ``codes``,
            ``code_ranges`` as .csv, .parquet or .xlsx, or a mapping of those names to frames
            (pandas, Polars or PyArrow).
        known: ids already in the service, per table, for the reference checks.
        on_invalid: ``"raise"`` (default) raises :class:`ValidationError` before anything is
            sent; ``"skip"`` imports the valid rows and reports the invalid ones as skipped.
        workers: worker threads (default: the connection's).
        progress: show progress bars.
        journal: path of a journal shared by all tables, for resumable runs.
        dry_run: validate and build the payloads, send nothing.
        columns: renames applied first, one mapping for every table or one per table, as
            for :func:`~toolkit.ingress.validation.validate` (headers that differ from the
            spec's only in case, spaces, ``_`` or ``-``, or are known aliases, match anyway).

    Returns:
        An :class:`OnboardReport` (``.ok``, ``.counts``, ``.results``, ``.failures``).

    Raises:
        ValidationError: a row failed validation and ``on_invalid="raise"``.
        ConfigError: ``source`` is neither a folder nor a mapping of known tables to frames, or
            the journal path is a folder or cannot be written.
        JournalInUseError: another run holds the journal.
        Interrupted: Ctrl+C or Jupyter's stop; ``.result`` holds every row's result so far
            (rows never sent are ``not_sent``) and ``.report`` the :class:`OnboardReport`.

    Example:
        >>> report = client.onboard("sample_data", journal=tmp / "onboard.jsonl", progress=False)
        >>> report.ok
        True
        >>> report.counts["sent"].to_dict()
        {'clients': 20, 'initiatives': 62, 'code_types': 3, 'codes': 36, 'code_ranges': 41}
    """
    if on_invalid not in ("raise", "skip"):
        raise ConfigError("on_invalid must be 'raise' or 'skip'")
    frames = _read_source(source)
    report = validate_frames(
        clients=frames.get("clients"),
        initiatives=frames.get("initiatives"),
        code_types=frames.get("code_types"),
        codes=frames.get("codes"),
        code_ranges=frames.get("code_ranges"),
        known=known,
        columns=columns,
    )
    # the rows under the spec's names, as the checks matched their headers
    frames = {
        t: df.rename(columns=report.results[t].renames) if t in report.results else df
        for t, df in frames.items()
    }
    if not report.ok and on_invalid == "raise":
        raise ValidationError(
            f"{len(report.failures)} validation failure(s); nothing was sent "
            "(see .failure_cases, or pass on_invalid='skip')",
            report.failures,
        )
    fails = report.failures
    jr = Journal(journal) if journal and not dry_run else None
    pacer = pacer_for(conn)  # one run: one pace, one stop, one verdict on reachability
    results: list[pd.DataFrame] = []
    payloads: dict[str, pd.DataFrame] = {}
    bad_ids: dict[str, dict[str, str]] = {t: {} for t in IMPORTS}
    interrupted: Interrupted | None = None
    try:
        for table, (_endpoint, key) in IMPORTS.items():
            if table not in frames:
                continue
            raw = frames[table]
            reasons: dict[Any, str] = {}
            stopped = interrupted is not None or pacer.fatal is not None
            if table in report.results:
                tfails = fails[(fails["table"] == table) & (fails["severity"] == "error")]
                whole = tfails[tfails["row"].isna()]["message"].tolist()
                for label in report.bad_rows(table):
                    msgs = tfails[tfails["row"] == label]["message"].tolist() or whole
                    reasons[label] = "invalid: " + "; ".join(str(m) for m in msgs[:3])
            # rows whose parent failed or was skipped
            for col, parent in PARENTS.get(table, []) if not stopped else []:
                if col in raw and bad_ids[parent]:
                    hits = raw[col].astype("string").map(bad_ids[parent])
                    for label, why in hits.dropna().items():
                        reasons.setdefault(label, f"parent {parent} {raw.at[label, col]!r} {why}")
            if table == "code_ranges" and reasons:
                # a range is sent whole per initiative: a bad row holds back its initiative
                bad_inits = set(raw.loc[list(reasons), "initiativeExternalId"].astype(str))
                for label, init in raw["initiativeExternalId"].astype(str).items():
                    if init in bad_inits:
                        reasons.setdefault(label, "another row of this code range failed")
            # the validation pass already holds this table's valid rows, typed
            valid = report.frames.get(table)
            if valid is None:
                valid = check(table, raw.drop(index=list(reasons)))
            checked = valid.drop(index=list(reasons), errors="ignore")
            calls, rows = _plan(table, checked) if len(checked) else ([], [])
            if dry_run:
                payloads[table] = pd.DataFrame(
                    {"key": [c.key for c in calls], "payload": [c.json for c in calls]}
                )
                replies: list[Reply] = [Reply(None, None, "dry run", 0) for _ in calls]
            elif stopped:  # interrupted, or the service could not be reached
                fatal = pacer.fatal if interrupted is None and pacer.fatal else None
                replies = [not_sent(fatal) if fatal else not_sent() for _ in calls]
            else:
                try:
                    replies = run_bulk(
                        conn,
                        calls,
                        workers=workers,
                        progress=progress,
                        journal=jr,
                        desc=table,
                        pacer=pacer,
                    )
                except Interrupted as exc:
                    interrupted = exc
                    replies = exc.replies
            sent = _spread(checked.index, rows, replies) if len(checked) else []
            by_label = dict(zip(checked.index, sent, strict=True))
            per_row = [by_label.get(label) or _skipped(reasons[label]) for label in raw.index]
            keys = raw[key].astype("string").tolist() if key in raw else [None] * len(raw)
            res = result_frame(raw.index, keys, per_row, key_name="externalId", conflict=True)
            if dry_run:
                res.loc[res["error"] == "dry run", "status"] = "skipped"
            res.insert(0, "table", table)
            res.insert(1, "row", raw.index)
            results.append(res.reset_index(drop=True))
            for k, status, err in zip(keys, res["status"], res["error"], strict=True):
                # only a parent known not to be stored holds its children back: an unknown
                # one may be stored, a conflict one is (the service's version)
                if status in NOT_STORED and k is not None and not dry_run:
                    bad_ids[table].setdefault(str(k), f"{status}: {err}")
    finally:
        if jr is not None:
            jr.close()
    onboard_report = _report(results, report, dry_run, payloads)
    if interrupted is not None:
        interrupted.result = onboard_report.results
        interrupted.report = onboard_report
        raise interrupted
    return onboard_report


def _report(
    results: list[pd.DataFrame],
    report: ValidationReport,
    dry_run: bool,
    payloads: dict[str, pd.DataFrame],
) -> OnboardReport:
    combined = nullable_rows(  # row: Int64, like every failure and result frame
        pd.concat(results, ignore_index=True)
        if results
        else result_frame([], [], []).assign(table=[], row=[])
    )
    counts = (
        combined.groupby("table", observed=True, sort=False)["status"]
        .value_counts()
        .unstack(fill_value=0)
        .reindex(columns=STATUSES, fill_value=0)
    )
    counts.insert(0, "rows", counts.sum(axis=1))
    counts.columns.name = None
    return OnboardReport(counts, combined, report, dry_run, payloads)
