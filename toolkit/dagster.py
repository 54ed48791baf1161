"""Many firms on Dagster (the ``dagster`` extra): one partition per firm, three assets each.

:func:`definitions` builds the assets, the job ``firms_daily`` (a run per firm, tagged with its
host) and its schedule; :func:`materialize_firms` runs the firms at once in one process. A firm
fails its own partition only (docs/scaling.md).
"""

# no ``from __future__ import annotations``: Dagster reads the ``context`` annotation itself
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import dagster as dg
import pandas as pd
from dagster import AssetExecutionContext
from dagster._core.instance import InstanceType
from dagster._core.launcher.sync_in_memory_run_launcher import SyncInMemoryRunLauncher
from dagster._core.run_coordinator import DefaultRunCoordinator
from dagster._core.storage.event_log import InMemoryEventLogStorage
from dagster._core.storage.noop_compute_log_manager import NoOpComputeLogManager
from dagster._core.storage.root import TemporaryLocalArtifactStorage
from dagster._core.storage.runs import InMemoryRunStorage

from toolkit._client import Client
from toolkit._egress import sync_status
from toolkit._ingress import OnboardReport
from toolkit.errors import AuthError, ConfigError, ValidationError
from toolkit.firms import Firm, Firms, load

__all__ = ["GROUP", "SERVICE_TAG", "assets", "definitions", "materialize_firms"]

GROUP = "timebill"  # the asset group of the three assets
SERVICE_TAG = "timebill/service"  # run tag naming the firm's host (per-host queue limits)
#: an unreachable service is tried again 3 times, 30 s, 60 s, 120 s later
RETRY = dg.RetryPolicy(max_retries=3, delay=30, backoff=dg.Backoff.EXPONENTIAL)

T = TypeVar("T")


def _guard(firm: Firm, name: str, step: Callable[[], T]) -> T:
    """Run the step ``name`` of the firm, recorded (:meth:`~toolkit.firms.Firm.recorded`: a
    failure shows in ``toolkit firms status``); what retrying cannot fix (credentials, settings,
    rows) fails without retry."""
    with firm.recorded(name):
        try:
            return step()
        except (AuthError, ValidationError, ConfigError) as exc:
            text, cases = str(exc), getattr(exc, "failure_cases", None)
            failures = None if cases is None else {"failures": _md(cases, list(cases.columns))}
            if isinstance(exc, AuthError):
                secret = "client_secret_file" if firm.client_secret_file else firm.client_secret_env
                text = f"the identity service refused the firm's credentials ({exc}); check "
                text += f"client_id and {secret}"
            raise dg.Failure(
                description=f"firm {firm.key!r}: {text}", metadata=failures, allow_retries=False
            ) from None


class _SharedRuns(InMemoryRunStorage):
    """The in-memory run storage, one transaction at a time, so that threads share it."""

    _lock = threading.RLock()

    @contextmanager
    def connect(self) -> Iterator[Any]:
        with self._lock, super().connect() as conn:
            yield conn


#: instances no call is using, wiped: making one costs ~0.25 s of CPU (Dagster stamps the
#: schema of its two in-memory databases), once a process rather than once a call
_IDLE: list[dg.DagsterInstance] = []
_IDLE_LOCK = threading.Lock()


@contextmanager
def _instance() -> Iterator[dg.DagsterInstance]:
    """``DagsterInstance.ephemeral()`` whose runs may run in threads at once, for one call:
    an idle one, else a new one; wiped and kept for the next call after."""
    with _IDLE_LOCK:
        instance = _IDLE.pop() if _IDLE else None
    if instance is None:
        instance = dg.DagsterInstance(
            InstanceType.EPHEMERAL,
            TemporaryLocalArtifactStorage(),  # type: ignore[no-untyped-call]
            _SharedRuns(),
            InMemoryEventLogStorage(),
            DefaultRunCoordinator(),
            NoOpComputeLogManager(),
            SyncInMemoryRunLauncher(),
        )
    try:
        yield instance
    finally:
        instance.wipe()  # the results hold their events: the instance's copy goes
        with _IDLE_LOCK:
            _IDLE.append(instance)


def _tasks() -> set[int]:
    """The ids of this process's threads (Linux), as the kernel knows them."""
    return {int(tid) for tid in os.listdir("/proc/self/task")}


@contextmanager
def _one_core(runs: int) -> Iterator[Callable[[], None] | None]:
    """The initializer of the firms' threads: several runs at once keep to one core (Linux).

    Only one thread runs Python at a time (the GIL), and the runs hand it over at every request
    and every read or write: across two cores each hand-over wakes a thread on the other core,
    which mostly finds the GIL taken again, so that 8 firms at once used up to twice the CPU of
    the same firms one after another (docs/scaling.md). On one core a thread keeps the GIL
    until it waits. The threads the runs start inherit the core; those still alive after (the
    Delta and Arrow pools, made by the first run that needs them) get the caller's cores back.
    ``None`` (nothing to do): one run at a time, one core, or no ``sched_setaffinity``.
    """
    get = getattr(os, "sched_getaffinity", None)
    cores = sorted(get(0)) if get is not None else []
    if runs < 2 or len(cores) < 2:
        yield None
        return
    core = {cores[os.getpid() % len(cores)]}  # several such processes spread over the cores
    before = _tasks()

    def pin() -> None:
        with suppress(OSError):  # the core was taken from the process: the thread stays put
            os.sched_setaffinity(0, core)

    try:
        yield pin
    finally:
        for tid in _tasks() - before:
            with suppress(OSError):  # a thread that ended meanwhile
                if os.sched_getaffinity(tid) == core:
                    os.sched_setaffinity(tid, cores)


def _md(frame: pd.DataFrame, columns: list[str]) -> dg.MetadataValue:
    return dg.MetadataValue.md(frame[columns].head(20).to_markdown(index=False))


def _push_metadata(firm: Firm, report: OnboardReport) -> dict[str, Any]:
    """The metadata of a firm's push (with its rows' validation warnings, if any); a row not
    imported raises :class:`dagster.Failure`."""
    counts = report.counts.sum() if len(report.counts) else pd.Series(dtype="int64")
    named = {"rows": "rows", "sent": "sent", "unchanged": "journaled"}  # the report's counts
    metadata: dict[str, Any] = {key: int(counts.get(name, 0)) for key, name in named.items()}
    # warned: rows sent as given with a validation warning
    metadata |= {"failed": len(report.failures), "warned": len(report.warned)}
    metadata |= {"source": str(firm.source), "journal": str(firm.journal)}
    metadata["counts"] = dg.MetadataValue.md(report.counts.to_markdown())
    if not report.ok:
        metadata["failures"] = _md(report.failures, ["table", "externalId", "status", "error"])
        raise dg.Failure(
            description=f"firm {firm.key!r}: {len(report.failures)} row(s) not imported; "
            "the others are journaled and will not be sent again",
            metadata=metadata,
            allow_retries=False,
        )
    if len(report.warned):
        metadata["warnings"] = _md(report.warned, ["table", "externalId", "status", "warning"])
    return metadata


def assets(
    firms: Firms, *, retry_policy: dg.RetryPolicy | None = RETRY
) -> list[dg.AssetsDefinition]:
    """The three assets, partitioned by firm key.

    Args:
        firms: The firms (:func:`toolkit.firms.load`).
        retry_policy: Retries of a step that raised (an unreachable service); ``None``: none.

    Returns:
        ``[master_data, time_entries, reconciliation]``.

    Example:
        >>> [a.key.to_user_string() for a in assets(load(firms_file))]
        ['master_data', 'time_entries', 'reconciliation']
    """
    hosts = {firm.service_host for firm in firms.values()}  # a pool is the same for every firm
    asset = functools.partial(
        dg.asset,
        partitions_def=dg.StaticPartitionsDefinition(list(firms)),
        group_name=GROUP,
        retry_policy=retry_policy,
        pool=f"timebill/{hosts.pop()}" if len(hosts) == 1 else "timebill",
    )

    @functools.cache  # a firm's steps run one after another: no two threads make its client
    def _client(key: str) -> Client:  # one per firm in this process: its token and pacer
        return firms[key].client()

    def client(firm: Firm) -> Client:
        """The firm's client, its credentials tried first: a refusal fails before any work."""
        made = _client(firm.key)
        made.connection.auth.secret_token(retry=False)
        return made

    @asset(description="The firm's master data pushed with its journal.")
    def master_data(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        if firm.source is None:
            return dg.MaterializeResult(metadata={"skipped": "no source configured"})
        # a failure shows in `toolkit firms status`
        metadata = _guard(firm, "push", lambda: _push_metadata(firm, firm.push(client(firm))))
        context.log.info(
            f"firm {firm.key}: {metadata['sent']} sent, "
            f"{metadata['unchanged']} unchanged, {metadata['warned']} warned"
        )
        return dg.MaterializeResult(metadata=metadata)

    @asset(description="The firm's released time in its Delta folder.")
    def time_entries(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        report = _guard(firm, "sync", lambda: firm.sync_tables(client(firm)))
        state = sync_status(firm.sync)
        mark = state["watermark"]
        now = pd.Timestamp.now(tz="UTC")
        iso, age = ("none", "none") if mark is None else (mark.isoformat(), (now - mark).floor("s"))
        context.log.info(str(report))
        kept = ("inserted", "updated", "unchanged", "windows")
        metadata: dict[str, Any] = {k: getattr(report, k) for k in kept} | {"path": str(firm.sync)}
        metadata |= {"watermark": iso, "watermark_age": str(age), "entries": state["entries"]}
        metadata |= {"delta_version": state["entries_version"]}
        return dg.MaterializeResult(metadata=metadata)

    @asset(
        description="The synced entries reconciled with the billing extract.", deps=[time_entries]
    )
    def reconciliation(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        if firm.billing is None:
            return dg.MaterializeResult(metadata={"skipped": "no billing configured"})
        rec = _guard(firm, "reconcile", firm.reconcile)
        assert rec is not None
        summary = rec.summary  # counted once: a property that counts the rows again
        kept = ["matched", "missing_in_billing", "only_in_billing"]
        n = {k: int(summary.get(k, 0)) for k in kept}
        differing = int(summary.drop(kept).sum())  # every status of a difference
        metadata: dict[str, Any] = n | {"differing": differing, "billing": str(firm.billing)}
        rows = rec.rows[rec.rows["status"] != "matched"]
        if len(rows):
            metadata["not_matched"] = _md(rows, ["_id", "status", "detail"])
        context.log.info(f"firm {firm.key}: {metadata['matched']} matched, {differing} differ")
        return dg.MaterializeResult(metadata=metadata)

    return [master_data, time_entries, reconciliation]


def _daily(firms: Firms) -> Any:
    """The job ``firms_daily``: every asset of a firm, its run tagged with the firm's host."""
    partitions = dg.StaticPartitionsDefinition(list(firms))
    return dg.define_asset_job(
        "firms_daily",
        selection=dg.AssetSelection.groups(GROUP),
        partitions_def=partitions,
        config=dg.PartitionedConfig(
            partitions,
            run_config_for_partition_key_fn=lambda _key: {},
            tags_for_partition_key_fn=lambda key: {SERVICE_TAG: firms[key].service_host},
        ),
        description=f"Every step of every firm of {firms.path.name}.",
        executor_def=dg.in_process_executor,  # a firm's 3 steps: no process per step
    )


def definitions(
    firms_file: str | os.PathLike[str],
    *,
    cron: str = "0 6 * * *",
    timezone: str = "UTC",
    retry_policy: dg.RetryPolicy | None = RETRY,
) -> dg.Definitions:
    """A Dagster project of the firms of a ``firms.toml``: assets, daily job and schedule.

    Args:
        firms_file: The firms file (:func:`toolkit.firms.load` checks it: ``ConfigError``).
        cron: When the daily schedule runs every firm.
        timezone: Time zone of ``cron``.
        retry_policy: Retries of a step that raised (an unreachable service).

    Returns:
        The assets, the job ``firms_daily`` and the schedule ``firms_daily_schedule``.

    Example:
        >>> defs = definitions(firms_file)
        >>> sorted(key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys())
        ['master_data', 'reconciliation', 'time_entries']
    """
    firms = load(firms_file)
    built = assets(firms, retry_policy=retry_policy)
    job = _daily(firms)

    @dg.schedule(
        job=job, cron_schedule=cron, execution_timezone=timezone, name="firms_daily_schedule"
    )
    def daily(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        day = context.scheduled_execution_time.strftime("%Y-%m-%d")
        return [dg.RunRequest(run_key=f"{key}-{day}", partition_key=key) for key in firms]

    return dg.Definitions(assets=built, jobs=[job], schedules=[daily])


def materialize_firms(
    firms: Firms,
    keys: Sequence[str] | None = None,
    *,
    concurrency: int = 8,
    retry_policy: dg.RetryPolicy | None = RETRY,
) -> dict[str, dg.ExecuteInProcessResult]:
    """Run ``firms_daily`` for each firm in this process, ``concurrency`` runs at once.

    Each firm is its own run, so a failing firm fails only its own; the runs share one
    ephemeral Dagster instance and wait on the service side by side in threads, on one core
    (Linux; the GIL runs one of them at a time, and across cores its hand-overs cost CPU).

    Args:
        firms: The firms (:func:`toolkit.firms.load`).
        keys: The firms to run (default: all, in the file's order).
        concurrency: Runs at once.
        retry_policy: Retries of a step that raised (an unreachable service); ``None``: none.

    Returns:
        The result of each firm's run by firm key, in the order of ``keys``.

    Example:
        >>> materialize_firms(load(firms_file), keys=[])
        {}
    """
    chosen = list(firms) if keys is None else list(keys)
    if not chosen:
        return {}
    built = assets(firms, retry_policy=retry_policy)
    job = dg.Definitions(assets=built, jobs=[_daily(firms)]).resolve_job_def("firms_daily")
    runs = max(1, min(concurrency, len(chosen)))
    with (
        _instance() as instance,
        _one_core(runs) as pin,
        ThreadPoolExecutor(runs, thread_name_prefix="firm", initializer=pin) as pool,
    ):

        def run(key: str) -> dg.ExecuteInProcessResult:
            return job.execute_in_process(
                partition_key=key, instance=instance, raise_on_error=False
            )

        return dict(zip(chosen, pool.map(run, chosen), strict=True))
