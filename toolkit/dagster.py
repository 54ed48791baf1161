"""Many firms on Dagster: one partition per firm of a ``firms.toml``, three assets each.

Needs the ``dagster`` extra (``pip install 'timebill-toolkit[dagster]'``); ``import toolkit``
never imports it. In a Dagster project's ``definitions.py``::

    from toolkit.dagster import definitions
    defs = definitions("firms.toml")

::

    master_data      push the firm's source folder with its journal (skipped without source)
    time_entries     sync released time into the firm's Delta folder (from sync_since at first)
    reconciliation   the synced entries against the firm's billing extract (skipped without)
                     <- time_entries

Every partition builds the firm's own :class:`~toolkit.Client` (its own token and pacer). A
firm whose credentials are refused fails its own partition with the toolkit's message, and is
not retried; a service that cannot be reached raises and the assets' ``RetryPolicy`` tries
again. Each materialization records what a person reads in the UI (rows sent, unchanged and
failed; watermark and its age; the Delta version; matched and differing) and never a secret.

Fairness: the assets' ops share a Dagster ``pool`` named after the service host (when every
firm's time service is one host; ``timebill`` otherwise), and every run carries the tag
``timebill/service=<host>`` so the run queue can cap runs per host
(``tag_concurrency_limits`` with ``applyLimitPerUniqueValue``). A daily schedule runs the job
``firms_daily`` for every firm.

Many firms on one machine: :func:`materialize_firms` runs one Dagster run per firm (the
in-process executor), the runs at once in threads of one process. The work of a firm is
mostly waiting on the service, and a process per run (the run launcher's way) pays the import
of Dagster, pandas and pyarrow again for each firm; docs/scaling.md has the figures.
"""

# no ``from __future__ import annotations``: Dagster reads the ``context`` annotation itself
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict, TypeVar

import dagster as dg
import pandas as pd
from dagster import AssetExecutionContext

from toolkit.client import Client
from toolkit.egress import sync_status
from toolkit.errors import AuthError, ConfigError, ValidationError
from toolkit.firms import Firm, Firms, load

__all__ = ["GROUP", "SERVICE_TAG", "assets", "definitions", "materialize_firms", "pool_for"]

#: Dagster asset group of the three assets.
GROUP = "timebill"
#: Run tag naming the firm's service host (for the run queue's per-host limits).
SERVICE_TAG = "timebill/service"
#: Default retry policy: an unreachable service is tried again 3 times, 30 s, 60 s, 120 s later.
RETRY = dg.RetryPolicy(max_retries=3, delay=30, backoff=dg.Backoff.EXPONENTIAL)

T = TypeVar("T")


class _AssetOptions(TypedDict):
    """The options the three assets share (typed, so ``@dg.asset(**options)`` is checked)."""

    partitions_def: dg.PartitionsDefinition[str]
    group_name: str
    retry_policy: dg.RetryPolicy | None
    pool: str


def pool_for(firms: Mapping[str, Firm]) -> str:
    """The concurrency pool of the assets' ops: the service host the firms share.

    A pool is a property of an op, so all partitions of an asset share one; firms on several
    hosts share ``timebill`` (and the run tag :data:`SERVICE_TAG` tells the hosts apart).

    Args:
        firms: The firms.

    Returns:
        ``timebill/<host>``, or ``timebill`` when the firms are on several hosts.

    Example:
        >>> from pathlib import Path
        >>> f = Firm("a", "c", "i", "http://x", "https://time.example", Path("j"), Path("s"))
        >>> pool_for({"a": f})
        'timebill/time.example'
    """
    hosts = {firm.service_host for firm in firms.values()}
    return f"timebill/{hosts.pop()}" if len(hosts) == 1 else "timebill"


class _Clients:
    """One client per firm in this process (its token and pacer kept across the assets)."""

    def __init__(self, firms: Firms) -> None:
        self.firms = firms
        self._clients: dict[str, Client] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Client:
        with self._lock:
            if key not in self._clients:
                self._clients[key] = self.firms[key].client()
            return self._clients[key]


def _guard(firm: Firm, step: Callable[[], T]) -> T:
    """Run a step; turn what retrying cannot fix into a Dagster failure without retries.

    Refused credentials, a bad setting or invalid rows fail the partition with the toolkit's
    message; an unreachable service (``TransportError``) propagates, so ``RetryPolicy`` applies.
    """
    try:
        return step()
    except AuthError as exc:
        raise dg.Failure(
            description=(
                f"firm {firm.key!r}: the identity service refused the firm's credentials "
                f"({exc}); check client_id and "
                f"{'client_secret_file' if firm.client_secret_file else firm.client_secret_env}"
            ),
            allow_retries=False,
        ) from None
    except ValidationError as exc:
        cases = getattr(exc, "failure_cases", None)
        table = cases.head(20).to_markdown(index=False) if cases is not None else ""
        raise dg.Failure(
            description=f"firm {firm.key!r}: {exc}",
            metadata={"failures": dg.MetadataValue.md(table)} if table else None,
            allow_retries=False,
        ) from None
    except ConfigError as exc:
        raise dg.Failure(description=f"firm {firm.key!r}: {exc}", allow_retries=False) from None


def _client(clients: _Clients, firm: Firm) -> Client:
    """The firm's client, its credentials tried first: a refusal fails before any work."""
    client = clients.get(firm.key)
    client.auth.secret_token(retry=False)
    return client


def _iso(stamp: pd.Timestamp | None) -> str:
    return "none" if stamp is None else stamp.isoformat()


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
        >>> from toolkit.firms import Firms
        >>> from pathlib import Path
        >>> [a.key.to_user_string() for a in assets(Firms(Path("firms.toml"), {}))]
        ['master_data', 'time_entries', 'reconciliation']
    """
    partitions = dg.StaticPartitionsDefinition(list(firms))
    clients = _Clients(firms)
    pool = pool_for(firms) if len(firms) else "timebill"
    common: _AssetOptions = {
        "partitions_def": partitions,
        "group_name": GROUP,
        "retry_policy": retry_policy,
        "pool": pool,
    }

    @dg.asset(description="The firm's master data pushed with its journal.", **common)
    def master_data(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        if firm.source is None:
            return dg.MaterializeResult(metadata={"skipped": "no source configured"})
        with firm.recorded("push"):  # a failure shows in `toolkit firms status`
            return _push(context, firm)

    def _push(context: AssetExecutionContext, firm: Firm) -> dg.MaterializeResult[Any]:
        def push() -> Any:
            return firm.push(_client(clients, firm))

        report = _guard(firm, push)
        counts = report.counts.sum() if len(report.counts) else pd.Series(dtype="int64")
        metadata: dict[str, Any] = {
            "rows": int(counts.get("rows", 0)),
            "sent": int(counts.get("sent", 0)),
            "unchanged": int(counts.get("journaled", 0)),
            "failed": len(report.failures),
            "warned": len(report.warned),  # rows sent as given with a validation warning
            "source": str(firm.source),
            "journal": str(firm.journal),
            "counts": dg.MetadataValue.md(report.counts.to_markdown()),
        }
        if not report.ok:
            shown = report.failures[["table", "externalId", "status", "error"]].head(20)
            metadata["failures"] = dg.MetadataValue.md(shown.to_markdown(index=False))
            raise dg.Failure(
                description=(
                    f"firm {firm.key!r}: {len(report.failures)} row(s) not imported; the "
                    "others are journaled and will not be sent again"
                ),
                metadata=metadata,
                allow_retries=False,
            )
        if len(report.warned):
            shown = report.warned[["table", "externalId", "status", "warning"]].head(20)
            metadata["warnings"] = dg.MetadataValue.md(shown.to_markdown(index=False))
        context.log.info(
            f"firm {firm.key}: {metadata['sent']} sent, "
            f"{metadata['unchanged']} unchanged, {metadata['warned']} warned"
        )
        return dg.MaterializeResult(metadata=metadata)

    @dg.asset(description="The firm's released time in its Delta folder.", **common)
    def time_entries(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        with firm.recorded("sync"):
            report = _guard(firm, lambda: firm.sync_tables(_client(clients, firm)))
        state = sync_status(firm.sync)
        mark = state["watermark"]
        age = (pd.Timestamp.now(tz="UTC") - mark).floor("s") if mark is not None else None
        context.log.info(str(report))
        return dg.MaterializeResult(
            metadata={
                "inserted": report.inserted,
                "updated": report.updated,
                "unchanged": report.unchanged,
                "windows": report.windows,
                "watermark": _iso(mark),
                "watermark_age": str(age) if age is not None else "none",
                "delta_version": state["entries_version"],
                "entries": state["entries"],
                "path": str(firm.sync),
            }
        )

    @dg.asset(
        description="The synced entries reconciled with the firm's billing extract.",
        deps=[time_entries],
        **common,
    )
    def reconciliation(context: AssetExecutionContext) -> dg.MaterializeResult[Any]:
        firm = firms[context.partition_key]
        if firm.billing is None:
            return dg.MaterializeResult(metadata={"skipped": "no billing configured"})
        with firm.recorded("reconcile"):
            rec = _guard(firm, firm.reconcile)
        assert rec is not None
        summary = rec.summary
        differing = int(
            summary.get("duration_differs", 0) + summary.get("date_or_matter_differs", 0)
        )
        metadata: dict[str, Any] = {
            "matched": int(summary.get("matched", 0)),
            "differing": differing,
            "missing_in_billing": int(summary.get("missing_in_billing", 0)),
            "only_in_billing": int(summary.get("only_in_billing", 0)),
            "billing": str(firm.billing),
        }
        rows = rec.rows[rec.rows["status"] != "matched"]
        if len(rows):
            shown = rows[["_id", "status", "detail"]].head(20)
            metadata["not_matched"] = dg.MetadataValue.md(shown.to_markdown(index=False))
        context.log.info(f"firm {firm.key}: {metadata['matched']} matched, {differing} differ")
        return dg.MaterializeResult(metadata=metadata)

    return [master_data, time_entries, reconciliation]


def definitions(
    firms_file: str | os.PathLike[str],
    *,
    cron: str = "0 6 * * *",
    timezone: str = "UTC",
    retry_policy: dg.RetryPolicy | None = RETRY,
) -> dg.Definitions:
    """A Dagster project of the firms of a ``firms.toml``: assets, daily job and schedule.

    Args:
        firms_file: The firms file (:func:`toolkit.firms.load` checks it).
        cron: When the daily schedule runs every firm.
        timezone: Time zone of ``cron``.
        retry_policy: Retries of a step that raised (an unreachable service).

    Returns:
        ``Definitions`` with the assets ``master_data``, ``time_entries`` and
        ``reconciliation`` (partitioned by firm key), the job ``firms_daily`` (its runs tagged
        with the firm's service host, its steps in the run's process) and the schedule
        ``firms_daily_schedule``.

    Raises:
        ConfigError: the firms file is wrong (the message names the firm and the key).

    Example:
        >>> defs = definitions(firms_file)
        >>> sorted(key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys())
        ['master_data', 'reconciliation', 'time_entries']
    """
    firms = load(firms_file)
    built = assets(firms, retry_policy=retry_policy)
    partitions = built[0].partitions_def
    assert isinstance(partitions, dg.StaticPartitionsDefinition)

    def tags(key: str) -> dict[str, str]:
        return {SERVICE_TAG: firms[key].service_host}

    job = dg.define_asset_job(
        "firms_daily",
        selection=dg.AssetSelection.groups(GROUP),
        partitions_def=partitions,
        config=dg.PartitionedConfig(
            partitions,
            run_config_for_partition_key_fn=lambda _key: {},
            tags_for_partition_key_fn=tags,
        ),
        description=f"Every step of every firm of {firms.path.name}.",
        executor_def=dg.in_process_executor,  # a firm's 3 steps: no process per step
    )

    @dg.schedule(
        job=job, cron_schedule=cron, execution_timezone=timezone, name="firms_daily_schedule"
    )
    def daily(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        day = context.scheduled_execution_time.strftime("%Y-%m-%d")
        return [
            dg.RunRequest(run_key=f"{key}-{day}", partition_key=key, tags=tags(key))
            for key in firms
        ]

    return dg.Definitions(assets=built, jobs=[job], schedules=[daily])


def materialize_firms(
    firms: Firms,
    keys: Sequence[str] | None = None,
    *,
    concurrency: int = 8,
    retry_policy: dg.RetryPolicy | None = RETRY,
) -> dict[str, dg.ExecuteInProcessResult]:
    """Every asset of each firm, one Dagster run per firm, ``concurrency`` runs at once.

    Each firm is its own run (``dagster.materialize`` of its partition: the in-process
    executor, its own ephemeral instance), so a failing firm fails only its own run, as with
    one firm after another; the runs share this process's imports and wait on the service
    side by side in threads.

    Args:
        firms: The firms (:func:`toolkit.firms.load`).
        keys: The firms to run (default: all, in the file's order).
        concurrency: Runs at once.
        retry_policy: Retries of a step that raised (an unreachable service); ``None``: none.

    Returns:
        The result of each firm's run by firm key, in the order of ``keys``.

    Example:
        >>> from toolkit.firms import Firms
        >>> from pathlib import Path
        >>> materialize_firms(Firms(Path("firms.toml"), {}))
        {}
    """
    chosen = list(firms) if keys is None else list(keys)
    built = assets(firms, retry_policy=retry_policy)

    def run(key: str) -> dg.ExecuteInProcessResult:
        return dg.materialize(built, partition_key=key, raise_on_error=False)

    with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="firm") as pool:
        return dict(zip(chosen, pool.map(run, chosen), strict=True))
