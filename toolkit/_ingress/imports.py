"""Imports: frame -> schema -> payloads -> bulk runner -> result frame; and onboarding."""

from __future__ import annotations

import html
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, closing
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd

from toolkit._bulk.journal import Journal
from toolkit._bulk.runner import (
    JOURNALED,
    STATUSES,
    Call,
    not_sent,
    pacer_for,
    result_frame,
    run_batches,
    run_bulk,
)
from toolkit._core.connection import Connection
from toolkit._core.dtypes import nullable
from toolkit._core.failures import nullable_rows, row_warnings
from toolkit._core.frames import FrameLike, as_pandas, unique_rows
from toolkit._core.http import Reply
from toolkit._core.memory import returning_pool
from toolkit._ingress.checks import format_failures
from toolkit._ingress.plan import (
    ACTION_DTYPE,
    ACTIONS,
    BATCH,
    IMPORTS,
    SENDING,
    TABLE_DTYPE,
    Plan,
    TableCalls,
    count_by_table,
    held_children,
    read_source,
)
from toolkit._ingress.plan import plan as make_plan
from toolkit._ingress.ranges import CodeRangePost, merge_parts, send_in_parts
from toolkit._ingress.text import plural, warn_lookalikes
from toolkit._ingress.validation import ImportSource, ValidationReport
from toolkit._ingress.writer import html_rows
from toolkit.errors import ConfigError, Interrupted, ValidationError

#: what an import does with rows that only have warnings: ``send`` them as given, or ``raise``
ON_WARNING: tuple[str, ...] = ("send", "raise")


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
    on_warning: str = "send",
    code_range_post: CodeRangePost = "replace",
) -> pd.DataFrame:
    """Validate a frame and import it one record per request; one result row per input row.

    The same run as :func:`onboard` of that one table alone: the same checks, plan, journal,
    runner and result columns. Nothing is sent when a row fails
    validation; a row with only warnings is sent as given.

    Args:
        conn: the connection.
        table: ``clients``, ``initiatives``, ``code_types``, ``codes`` or ``code_ranges``.
        df: the records (pandas, Polars or PyArrow), columns named as in the spec.
        columns: renames applied first, e.g. ``{"call_sign": "callSign"}``.
        validate: check the frame against its schema first (``False`` sends every row as
            given, for the service to judge).
        workers: worker threads (default: the connection's).
        progress: show a progress bar.
        journal: path of a journal; records it holds with the same payload are not sent again.
        dry_run: return the payloads instead of sending them.
        on_warning: ``"send"`` rows with warnings as given, or ``"raise"`` before sending.
        code_range_post: ``"replace"`` or ``"add"`` (see :mod:`toolkit._ingress.ranges`).

    Returns:
        Aligned to ``df.index``, the columns of :attr:`OnboardReport.results`: ``table``,
        ``row``, ``externalId`` (the record's key), ``action``, ``status``, ``ok``,
        ``httpStatus``, ``error``, ``warning``, ``attempts``, ``elapsed``; with ``dry_run``:
        the key, ``url``, ``payload`` and ``warning``.

    Example:
        >>> result = client.import_clients(clients, progress=False)
        >>> result["status"].unique().tolist()
        ['sent']
        >>> "payload" in client.import_clients(clients, dry_run=True)
        True
    """
    if table not in IMPORTS:
        raise ConfigError(f"unknown table {table!r}; expected one of {', '.join(IMPORTS)}")
    key = IMPORTS[table][1]
    df = as_pandas(df, "df")
    try:
        report = onboard(
            conn,
            {table: df.rename(columns=dict(columns)) if columns else df},
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
            on_warning=on_warning,
            code_range_post=code_range_post,
        )
    except Interrupted as exc:
        if isinstance(exc.result, pd.DataFrame):
            exc.result = exc.result.set_axis(df.index)
        raise
    result = report.results.set_axis(df.index)
    if not dry_run or report.plan is None:
        return result
    by_label: dict[Any, Call] = {}  # row label -> its call (a range's first part stands for it)
    for calls, rows in report.plan.calls[table].calls():
        for call, labels in zip(calls, rows, strict=True):
            for label in labels:
                by_label.setdefault(label, call)
    ordered = [by_label[label] for label in unique_rows(df).index]
    return nullable(
        pd.DataFrame(
            {
                key: [c.key for c in ordered],
                "url": [conn.url(c.endpoint, **(c.path or {})) for c in ordered],
                "payload": [c.json for c in ordered],
                "warning": result["warning"].array,
            },
            index=df.index,
        )
    )


@dataclass
class OnboardReport:
    """What an onboarding did, table by table.

    Attributes:
        counts: one row per table: ``rows``, a count per status, and ``warned``.
        results: every input row's result, with ``table`` and the plan's ``action``; in a dry
            run built from the plan when first asked for.
        validation: the validation report of the whole source.
        plan: the plan the run sent.
    """

    counts: pd.DataFrame
    validation: ValidationReport | None = None
    dry_run: bool = False
    plan: Plan | None = None

    @cached_property
    def results(self) -> pd.DataFrame:
        """Every input row's result (a run sets it; a dry run's follows from the plan)."""
        if self.plan is None or self.validation is None:
            raise AttributeError("results: neither sent nor planned")
        dry = _skipped("dry run")
        results = []
        for table, todo in self.plan.calls.items():
            part = self.plan.part(table)
            if part is not None:  # every planned call's row: "dry run", the others as a run's
                per_row = [dry if ACTIONS[a] in SENDING else None for a in part.action]
                extra = [(call.key, dry) for call in todo.extra]
                results += _table_results(table, part, per_row, {}, extra)
        return _combined(results, self.validation)

    @cached_property
    def payloads(self) -> dict[str, pd.DataFrame]:
        """A dry run's requests per table: ``key`` and ``payload`` (built when asked)."""
        if not self.dry_run or self.plan is None:
            return {}
        out: dict[str, pd.DataFrame] = {}
        for table, todo in self.plan.calls.items():
            calls = [c for batch, _ in todo.batches() for c in batch]
            out[table] = pd.DataFrame(
                {"key": [c.key for c in calls], "payload": [c.json for c in calls]}
            )
        return out

    @property
    def ok(self) -> bool:
        """True when every row was imported (sent or already journaled)."""
        c = self.counts
        return bool((c["sent"] + c["journaled"] == c["rows"]).all())

    @property
    def failures(self) -> pd.DataFrame:
        """The rows that failed or were skipped."""
        return self.results[~self.results["ok"]]

    @property
    def warned(self) -> pd.DataFrame:
        """The rows with a validation warning (``warning``), whatever their status."""
        return self.results[self.results["warning"].notna()]

    def _state(self) -> str:
        """The outcome in a few words: ``ok`` or ``NOT ok``, and how many rows have a warning."""
        n = int(self.counts["warned"].sum())
        return ("ok" if self.ok else "NOT ok") + (
            f", {plural(n, 'row')} with a warning" if n else ""
        )

    def __repr__(self) -> str:
        head = "OnboardReport(dry run)" if self.dry_run else "OnboardReport"
        return f"{head}: {self._state()}\n{self.counts.to_string()}"

    def _repr_html_(self) -> str:
        """Jupyter's view: the outcome, counts per table, and the first failed rows."""
        head = "OnboardReport (dry run, nothing sent)" if self.dry_run else "OnboardReport"
        if self.dry_run:
            valid = self.validation is None or self.validation.ok
            state = "validation ok" if valid else "validation NOT ok"
        else:
            failed = f"NOT ok: {len(self.failures)} row(s) failed or skipped"
            state = self._state() if self.ok else failed
        parts = [f"<p><b>{head}</b>: {html.escape(state)}</p>", self.counts.to_html()]
        shown = self.failures
        if self.dry_run:
            shown = shown[shown["error"] != "dry run"]
        parts += html_rows(shown[["table", "row", "externalId", "status", "error"]], 20, "failures")
        if len(self.warned):
            cols = ["table", "row", "externalId", "status", "warning"]
            parts.append(f"<p>{len(self.warned)} row(s) with a warning:</p>")
            parts.append(self.warned[cols].head(20).to_html(index=False))
        return "\n".join(parts)


#: statuses of a row whose record is known not to be stored by this run: its children are skipped
NOT_STORED = ("failed", "skipped", "not_sent")


def _skipped(reason: str) -> Reply:
    """The reply of a row that was not sent: no status, no attempt, ``reason`` its error."""
    return Reply(None, None, reason, 0, 0.0)


@returning_pool()
def onboard(
    conn: Connection,
    source: ImportSource,
    *,
    known: Mapping[str, Iterable[str]] | None = None,
    on_invalid: str = "raise",
    workers: int | None = None,
    progress: bool = True,
    journal: str | os.PathLike[str] | Journal | None = None,
    dry_run: bool = False,
    mirror: bool = False,
    max_deactivate: int | None = None,
    columns: Mapping[str, str] | Mapping[str, Mapping[str, str]] | None = None,
    on_warning: str = "send",
    code_range_post: CodeRangePost = "replace",
    validate: bool = True,
) -> OnboardReport:
    """Validate a whole firm, plan it against the journal and send the plan, parents first.

    Only the plan's ``send``, ``update``, ``retry`` and ``deactivate`` rows cost a request. A
    record whose parent is known not to be stored (:data:`NOT_STORED`) is ``skipped``.

    Args:
        conn: the connection.
        source: a folder of import tables (.csv, .parquet, .xlsx) or ``{table: frame}``.
        known: ids already in the service, per table, for the reference checks.
        on_invalid: ``"raise"`` before anything is sent, or ``"skip"`` the invalid rows.
        workers: worker threads (default: the connection's).
        progress: show progress bars.
        journal: path of a journal shared by all tables, for resumable runs.
        dry_run: validate and plan, send nothing.
        mirror: deactivate the initiatives the journal holds as active and the source lacks.
        max_deactivate: the most initiatives a mirror run may deactivate.
        columns: renames applied first, one mapping for every table or one per table.
        on_warning: ``"send"`` rows with warnings as given, or ``"raise"`` before sending.
        code_range_post: ``"replace"`` or ``"add"``, as for :func:`import_table`.
        validate: ``False`` sends the rows that fail validation too, as given (frames only).

    Returns:
        An :class:`OnboardReport`.

    Example:
        >>> report = client.onboard("sample_data", journal=tmp / "onboard.jsonl", progress=False)
        >>> report.ok
        True
        >>> report.counts["sent"].to_dict()
        {'clients': 20, 'initiatives': 62, 'code_types': 3, 'codes': 36, 'code_ranges': 41}
    """
    if on_invalid not in ("raise", "skip"):
        raise ConfigError("on_invalid must be 'raise' or 'skip'")
    if on_warning not in ON_WARNING:
        raise ConfigError(f"on_warning must be one of {', '.join(map(repr, ON_WARNING))}")
    sources = read_source(source)  # a folder's files read a chunk at a time, never held
    with ExitStack() as opened:  # a journal opened here is closed here; the caller's left open
        jr = journal if isinstance(journal, Journal) else None
        if journal and not isinstance(journal, Journal) and not dry_run:
            jr = opened.enter_context(closing(Journal(journal)))
        the_plan = make_plan(
            conn,
            sources,
            journal=jr if jr is not None else journal,
            mirror=mirror,
            columns=columns,
            known=known,
            max_deactivate=max_deactivate,
            code_range_post=code_range_post,
            validate=validate,
        )
        report = the_plan.validation
        if not report.ok and on_invalid == "raise" and validate:
            raise ValidationError(
                f"{format_failures(report.failures)}\nnothing was sent "
                "(see .failure_cases, or pass on_invalid='skip')",
                report.failures,
            )
        if on_warning == "raise" and len(report.warnings):
            raise ValidationError(
                f"on_warning='raise' and {format_failures(report.warnings)}\nnothing was sent "
                "(fix them, or pass on_warning='send' to send them as given)",
                report.warnings,
            )
        warn_lookalikes(report.failures)
        if dry_run:  # every result follows from the plan: built when asked for
            tables, status = _planned(the_plan)
            return OnboardReport(_counts(tables, status, report), report, True, the_plan)
        the_plan.check()
        results, interrupted = _send(conn, the_plan, jr, workers=workers, progress=progress)
    combined = _combined(results, report)
    counts = _counts(combined["table"], combined["status"], report)
    onboard_report = OnboardReport(counts, report, False, the_plan)
    onboard_report.results = combined
    if interrupted is not None:
        interrupted.result = onboard_report.results
        interrupted.report = onboard_report
        raise interrupted
    return onboard_report


def _send(
    conn: Connection,
    the_plan: Plan,
    jr: Journal | None,
    *,
    workers: int | None,
    progress: bool,
) -> tuple[list[pd.DataFrame], Interrupted | None]:
    """Send the plan's calls table by table, a batch at a time; result rows a batch at a time."""
    pacer = pacer_for(conn)  # one run: one pace, one stop, one verdict on reachability
    results: list[pd.DataFrame] = []
    failed: dict[str, dict[str, str]] = {t: {} for t in IMPORTS}  # this run's failures
    interrupted: Interrupted | None = None
    bulk = partial(run_bulk, conn, workers=workers, progress=progress, journal=jr, pacer=pacer)
    bulk_batches = partial(
        run_batches, conn, workers=workers, progress=progress, journal=jr, pacer=pacer
    )
    for table, todo in the_plan.calls.items():
        source = the_plan.part(table)  # the source's rows, in order
        if source is None:
            raise AssertionError(f"{table}: not planned")
        sent = _Sent(todo, source.source)
        while True:
            try:  # Ctrl+C outside the sending (between two batches or tables): the rest not sent
                stopped = interrupted is not None or pacer.fatal is not None
                if sent.held is None:
                    sent.held = (
                        {} if stopped else held_children(table, sent.raw, failed, ranges=False)
                    )
                if stopped:  # interrupted, or the service could not be reached: nothing is sent
                    fatal = pacer.fatal if interrupted is None else None
                    for calls in sent.batches():
                        sent.kept((not_sent(fatal) for _ in calls) if fatal else ())
                else:
                    runs = (
                        (send_in_parts(partial(bulk, desc=table), c) for c in sent.batches())
                        if table == "code_ranges"  # a range's part k waits for its earlier parts
                        else bulk_batches(sent.batches(), desc=table, total=todo.requests)
                    )
                    try:
                        for replies in runs:
                            sent.kept(replies)
                    except KeyboardInterrupt as exc:  # (also while a batch's replies were kept)
                        if not isinstance(exc, Interrupted):
                            runs.throw(Interrupted("interrupted between two batches of requests"))
                        raise
                parts = _table_results(table, source, sent.per_row, sent.held or {}, sent.extra)
                break
            except Interrupted as exc:  # in the sending: the replies of every batch read
                interrupted = exc
                sent.kept(exc.replies, len(sent.made))
            except KeyboardInterrupt:
                if interrupted is not None:  # a second Ctrl+C: stop at once
                    raise
                interrupted = Interrupted("interrupted between two batches of requests")
        for res in parts:  # joined once, in the report
            results.append(res)
            # only a parent known not to be stored holds its children back: an unknown one
            # may be stored, a conflict one is (the service's version)
            bad = res[res["status"].isin(NOT_STORED) & res["externalId"].notna()]
            for k, status, err in zip(bad["externalId"], bad["status"], bad["error"], strict=True):
                failed[table].setdefault(str(k), f"{status}: {err}")
    return results, interrupted


class _Sent:
    """One table's sending: its batches of calls as read, and each source row's reply."""

    def __init__(self, todo: TableCalls, raw: pd.DataFrame) -> None:
        self.todo, self.raw = todo, raw  # every row's label, key and reference columns
        self.per_row: list[Reply | None] = [None] * len(raw)  # by position in raw
        self.extra: list[tuple[str, Reply]] = []  # deactivations: no source row
        self.held: dict[Any, str] | None = None  # a row's label -> why it is held back
        self.made: deque[tuple[list[Call], list[list[Any]]]] = deque()  # read, not answered
        self.merged = 0  # the batches whose replies are in per_row

    def batches(self) -> Iterator[list[Call]]:
        """The calls to send, a batch at a time, from the first not read; a held row holds its
        call back."""
        for n, (calls, labels) in enumerate(self.todo.batches()):
            if n < self.merged + len(self.made):  # read before an interrupt
                continue
            held = self.held
            assert held is not None  # _send sets it before it reads the first batch
            keep = [i for i, lbs in enumerate(labels) if not any(lb in held for lb in lbs)]
            for i in set(range(len(labels))) - set(keep):  # (another row of a code range)
                for label in labels[i]:
                    held.setdefault(label, "another row of this code range failed")
            self.made.append(([calls[i] for i in keep], [labels[i] for i in keep]))
            yield self.made[-1][0]

    def kept(self, replies: Iterable[Reply], batches: int = 1) -> None:
        """The replies of the first ``batches`` batches read and not yet answered, in order,
        kept in their rows' places (``not_sent`` where none is given).

        Each reply of a batch is kept in its row's place (a range's parts merged), a
        deactivation's (no row) in :attr:`extra`."""
        answers = iter(replies)
        for _ in range(min(batches, len(self.made))):
            calls, labels = self.made[0]
            got = [next(answers, None) or not_sent() for _ in calls]
            flat = pd.Index([lb for lbs in labels for lb in lbs])
            found = iter(self.raw.index.get_indexer(flat).tolist())
            for call, lbs, reply in zip(calls, labels, got, strict=True):
                if not lbs:
                    self.extra.append((call.key, reply))
                for _ in lbs:  # the replies of a range's parts merged
                    p = next(found)
                    seen = self.per_row[p]
                    self.per_row[p] = reply if seen is None else merge_parts(seen, reply)
            self.made.popleft()
            self.merged += 1


def _table_results(
    table: str,
    source: Any,
    per_row: list[Reply | None],
    held: Mapping[Any, str],
    extra: list[tuple[str, Reply]],
) -> list[pd.DataFrame]:
    """A table's result rows, a batch at a time (few Python objects): each source row's reply,
    else why it was not sent; then the deactivations, which have no source row.

    A run's replies and a dry run's (the one ``dry run`` reply of each call the plan would send)
    become result rows here alike: a dry run's results have a run's columns and dtypes.
    """
    raw, action = source.source, source.action
    unchanged = ACTIONS.index("unchanged")
    journaled = Reply(None, None, JOURNALED, 0, 0.0, "", "")  # one for every such row
    whole = pd.api.types.is_integer_dtype(raw.index.dtype)
    parts: list[pd.DataFrame] = []
    for a in range(0, len(raw), BATCH):  # result rows a batch at a time: few Python objects
        answers: list[Reply] = []
        for p, label in enumerate(raw.index[a : a + BATCH].tolist(), start=a):
            got = per_row[p]
            if got is not None:
                answers.append(got)
            elif label in held:
                answers.append(_skipped(held[label]))
            elif action[p] == unchanged:
                answers.append(journaled)
            else:
                answers.append(_skipped(f"{ACTIONS[action[p]]}: {source.reason(p)}"))
        rows_ = raw.index[a : a + BATCH].astype("Int64" if whole else object)
        keys_ = source.keys.array[a : a + BATCH]  # the plan's text, not a copy
        actions = pd.Categorical.from_codes(action[a : a + BATCH], dtype=ACTION_DTYPE)
        parts.append(_results(table, rows_, keys_, answers, actions))
    if extra or not parts:  # deactivations: no source row
        nothing = pd.array([None] * len(extra), dtype="Int64" if whole else object)
        keys_, replies = [k for k, _ in extra], [r for _, r in extra]
        deactivate = pd.Categorical(["deactivate"] * len(extra), dtype=ACTION_DTYPE)
        parts.append(_results(table, nothing, keys_, replies, deactivate))
    return parts


def _results(
    table: str, rows: Any, keys: list[Any], replies: list[Reply], actions: pd.Categorical[Any]
) -> pd.DataFrame:
    """Result rows of one table: ``table``, ``row``, the key, ``action`` and the reply's columns."""
    res = result_frame(pd.RangeIndex(len(keys)), keys, replies, conflict=True)  # externalId
    res.insert(0, "table", pd.Series(table, index=res.index, dtype=TABLE_DTYPE))  # a byte a row
    res.insert(1, "row", rows)
    res.insert(3, "action", pd.Series(actions, index=res.index, dtype=ACTION_DTYPE))
    return res


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts as one frame, a column at a time: each column leaves the parts once joined."""
    columns: dict[str, pd.Series] = {}
    for c in [str(c) for c in parts[0].columns]:
        columns[c] = pd.concat([p.pop(c) for p in parts], ignore_index=True)
    parts.clear()
    return pd.DataFrame(columns, copy=False)


def _combined(results: list[pd.DataFrame], report: ValidationReport) -> pd.DataFrame:
    """A run's result parts as one frame, with each row's ``warning``."""
    combined = nullable_rows(  # row: Int64, like every failure and result frame
        _joined(results) if results else result_frame([], [], []).assign(table=[], row=[])
    )
    warning = row_warnings(report.failures, combined["row"], combined["table"]).array
    combined.insert(list(combined.columns).index("error") + 1, "warning", warning)
    return combined


def _counts(tables: pd.Series, status: pd.Series, report: ValidationReport) -> pd.DataFrame:
    """Result rows per table: ``rows``, a count per status, ``warned`` (rows with a warning:
    every source row has a result row, so the rows the warnings name, each once)."""
    counts = count_by_table(tables, status, STATUSES)
    counts.insert(0, "rows", counts.sum(axis=1))
    warned = report.warnings.dropna(subset=["row"]).drop_duplicates(["table", "row"])["table"]
    counts["warned"] = [int((warned == str(t)).sum()) for t in counts.index]
    return counts


def _planned(plan: Plan) -> tuple[pd.Series, pd.Series]:
    """A dry run's result rows (the plan's source rows and deactivations): ``table`` and
    ``status`` (``journaled`` where unchanged, else ``skipped``: nothing is sent)."""
    rows = plan.actions()  # not the plan's rows: a byte or two a row
    # a table's first part: its source rows; of the journal's records after, the deactivations
    source = [np.full(len(part), part is plan.part(part.table)) for part in plan.parts]
    keep = np.concatenate([np.zeros(0, dtype=bool), *source])
    keep |= (rows["action"] == "deactivate").to_numpy()
    rows = rows if keep.all() else rows[keep]
    unchanged = (rows["action"] == "unchanged").to_numpy()
    codes = np.where(unchanged, STATUSES.index("journaled"), STATUSES.index("skipped"))
    status = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(STATUSES))
    return rows["table"], pd.Series(status, index=rows.index)
