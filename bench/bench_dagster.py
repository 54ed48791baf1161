"""Many firms on Dagster: one after another, or all at once in one process.

Issue 28 asks: 8 firms at 50 ms latency (the sandbox profile ``latency``), every asset of
every firm, one Dagster run per firm, (a) one firm after another in one process
(``dagster.materialize``, the in-process executor) and (b) the same runs all at once in
threads of one process (``toolkit.dagster.materialize_firms``), in the same bench run,
alternated ``--repeat`` times (each way's best wall counts, as every timing of ``python -m
bench``); it prints the ratio (a) / (b), the CPU time of each, and what a new process pays to import
``toolkit.dagster`` (what a run launcher's process per run pays per firm).

The sandbox runs in its own process. Each firm is a customer with the whole sample_data
folder to push (about 170 imports), ``--dagster-entries`` released entries to sync and a
billing extract with planted differences to reconcile. Each way has its own journals and
Delta folders, so both start from nothing.

Run: ``python -m bench --only dagster`` or ``python -m bench.bench_dagster`` (smaller:
``--dagster-firms 4``). Figures in docs/scaling.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from bench.bench_imports import client_for, memory_tmp, sandbox_process

__all__ = ["add_arguments", "run"]

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).dagster_firms
    8
    """
    parser.add_argument("--dagster-firms", type=int, default=8, help="firms (default 8)")
    parser.add_argument(
        "--dagster-latency-ms",
        type=int,
        default=50,
        help="sandbox latency per request, ms (default 50)",
    )
    parser.add_argument(
        "--dagster-entries", type=int, default=40, help="released entries per firm (default 40)"
    )


def _seed(srv: Any, n: int, latency: int, entries: int) -> list[tuple[str, dict]]:
    from toolkit._demo import planted_billing_extract  # noqa: PLC0415

    firms = []
    frames = {t: pd.read_csv(SAMPLE / f"{t}.csv", dtype=str) for t in ("clients", "initiatives")}
    matter = "M-1001-001"
    now = datetime.now(UTC)
    for i in range(n):
        creds = srv.admin.create_customer(f"Bench firm {i}")
        cid = creds["customerId"]
        assert client_for(srv.url, creds).onboard(frames, progress=False).ok
        user = srv.admin.create_user("TK-101", "Ann", "ann@example.com", customer_id=cid)
        rows = []
        for j in range(entries):
            e = srv.admin.create_entry(
                user["_id"],
                matter,
                work_date=(now - timedelta(days=2)).date(),
                increment_duration_in_seconds=360 * (1 + j % 10),
                customer_id=cid,
            )
            srv.admin.release_entry(
                user["_id"], e["_id"], at=now - timedelta(hours=2 + j), customer_id=cid
            )
            rows.append(
                {
                    "_id": e["_id"],
                    "workDate": e["workDate"],
                    "initiative.externalId": matter,
                    "incrementDurationInSeconds": e["incrementDurationInSeconds"],
                }
            )
        srv.admin.set_profile(customer_id=cid, latency={"p50Ms": latency})
        firms.append(
            (f"firm-{i}", {**creds, "billing": planted_billing_extract(pd.DataFrame(rows), seed=i)})
        )
    return firms


def _firms_file(folder: Path, url: str, firms: list[tuple[str, dict]]) -> Path:
    folder.mkdir(parents=True)
    toml, env = [], []
    for key, creds in firms:
        var = key.upper().replace("-", "_") + "_SECRET"
        env.append(f"{var}={creds['clientSecret']}")
        creds["billing"].to_csv(folder / f"{key}-billing.csv", index=False)
        toml.append(
            f'[firms.{key}]\ncustomer_id = "{creds["customerId"]}"\n'
            f'client_id = "{creds["clientId"]}"\nclient_secret_env = "{var}"\n'
            f'auth_url = "{url}"\ntime_url = "{url}"\naudience = "{creds["audience"]}"\n'
            f'source = "{SAMPLE}"\njournal = "state/{key}.jsonl"\nsync = "lake/{key}"\n'
            f'sync_since = "5D"\nbilling = "{key}-billing.csv"\n'
            "[firms." + key + '.reconcile]\nduration = "hours"\nduration_unit = "hours"\n'
            "tolerance_seconds = 18\n"
        )
    (folder / ".env").write_text("\n".join(env) + "\n")
    path = folder / "firms.toml"
    path.write_text("\n".join(toml))
    return path


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _server_cpu(pid: int | None) -> float:
    """CPU seconds the sandbox process has used (Linux ``/proc``; 0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _import_cost() -> tuple[float, float]:
    """A fresh Python importing ``toolkit.dagster`` (Dagster, pandas, pyarrow): (wall, CPU)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import toolkit.dagster"],
        check=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return time.perf_counter() - start, cpu


def _dagster_cost(runs: int = 4) -> tuple[float, float]:
    """Dagster's own CPU for a run of three no-op partitioned assets on an instance already
    made (as :func:`materialize_firms` runs every firm on one), and for making an ephemeral
    instance (once a process in :func:`materialize_firms`; ``dagster.materialize`` makes one per
    run): (run, instance)."""
    import dagster as dg  # noqa: PLC0415

    keys = dg.StaticPartitionsDefinition([str(i) for i in range(runs)])

    @dg.asset(partitions_def=keys)
    def a() -> None: ...

    @dg.asset(partitions_def=keys, deps=[a])
    def b() -> None: ...

    @dg.asset(partitions_def=keys, deps=[b])
    def c() -> None: ...

    job = dg.Definitions(assets=[a, b, c], jobs=[dg.define_asset_job("j")]).resolve_job_def("j")
    with dg.DagsterInstance.ephemeral() as instance:
        job.execute_in_process(partition_key="0", instance=instance)  # warm
        start = _cpu()
        for key in range(runs):
            job.execute_in_process(partition_key=str(key), instance=instance)
        run = (_cpu() - start) / runs
    start = _cpu()
    for _ in range(runs):
        dg.DagsterInstance.ephemeral().dispose()
    return run, (_cpu() - start) / runs


def _way(path: Path, concurrency: int, server: int | None) -> dict[str, float]:
    """Every asset of every firm of ``path`` with ``materialize_firms``: wall, CPU, runs ok."""
    from toolkit.dagster import materialize_firms  # noqa: PLC0415
    from toolkit.firms import load  # noqa: PLC0415

    firms = load(path)
    load_before = os.getloadavg()[0]
    start, cpu, srv = time.perf_counter(), _cpu(), _server_cpu(server)
    results = materialize_firms(firms, concurrency=concurrency, retry_policy=None)
    return {
        "wall": time.perf_counter() - start,
        "cpu": _cpu() - cpu,
        "server_cpu": _server_cpu(server) - srv,
        "ok": sum(r.success for r in results.values()),
        "load": max(load_before, os.getloadavg()[0]),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed the firms, time both ways in one run, print them and where the time goes.

    Args:
        args: ``dagster_firms``, ``dagster_latency_ms``, ``dagster_entries``.

    Returns:
        ``{"firms", "latency_ms", "sequential_s", "concurrent_s", "ratio", ...}`` with the
        CPU of each way, the sandbox's CPU, the load average and the costs of the breakdown.
    """
    n, latency = args.dagster_firms, args.dagster_latency_ms
    import_wall, import_cpu = _import_cost()
    run_cpu, instance_cpu = _dagster_cost()
    with tempfile.TemporaryDirectory(dir=memory_tmp()) as tmp:
        root = Path(tmp)
        with sandbox_process(root / "sandbox.db") as srv:
            firms = _seed(srv, n + 1, latency, args.dagster_entries)
            # a firm of its own first: the lazy imports of a process's first run, for neither way
            warm = _way(_firms_file(root / "warm", srv.url, firms[:1]), 1, srv.pid)
            ones, manys = [], []
            for k in range(max(1, getattr(args, "repeat", 1))):  # the ways alternate
                ones.append(_way(_firms_file(root / f"serial{k}", srv.url, firms[1:]), 1, srv.pid))
                manys.append(
                    _way(_firms_file(root / f"parallel{k}", srv.url, firms[1:]), n, srv.pid)
                )
    one = min(ones, key=lambda way: way["wall"])
    many = min(manys, key=lambda way: way["wall"])
    ratio = one["wall"] / many["wall"]
    firm_cpu = one["cpu"] / n
    print(f"{n} firms at {latency} ms latency, every asset of every firm, a run per firm:")
    for name, way in (("one after another", one), (f"{n} at once, threads", many)):
        print(
            f"  {name:<22} {way['wall']:6.1f} s  CPU {way['cpu']:5.1f} s  sandbox CPU "
            f"{way['server_cpu']:4.1f} s  ({way['ok']:.0f}/{n} runs ok, load {way['load']:.1f})"
        )
    walls = [", ".join(f"{way['wall']:.1f}" for way in ways) for ways in (ones, manys)]
    print(
        f"  ratio one after another / at once: {ratio:.2f} (best of {len(ones)} each, "
        f"alternated; walls {walls[0]} and {walls[1]} s)"
    )
    print("  where the time goes:")
    print(
        f"    process start + import toolkit.dagster: {import_wall:.1f} s ({import_cpu:.1f} s "
        f"CPU), paid per run by a process per run: {n * import_cpu:.1f} s CPU for {n} firms"
    )
    print(
        f"    a process's first run: {warm['cpu']:.1f} s CPU ({warm['cpu'] - firm_cpu:.1f} s "
        "more than the next: what Dagster, pandera and deltalake import lazily); not timed"
    )
    print(
        f"    a firm, one after another: {one['wall'] / n:.2f} s, CPU {firm_cpu:.2f} s "
        f"(Dagster's run {run_cpu:.2f} s, the toolkit's work {firm_cpu - run_cpu:.2f} s; an "
        f"ephemeral instance {instance_cpu:.2f} s, made once a process by materialize_firms); "
        f"waiting on the service {(one['wall'] - one['cpu']) / n:.2f} s"
    )
    print(
        f"    at once: the process's CPU {many['cpu']:.1f} s in {many['wall']:.1f} s "
        f"({many['cpu'] / many['wall']:.0%} of one core: the GIL's bound), the sandbox "
        f"{many['server_cpu']:.1f} s on the other core"
    )
    return {
        "firms": n,
        "latency_ms": latency,
        "import_s": round(import_wall, 2),
        "import_cpu_s": round(import_cpu, 2),
        "dagster_run_cpu_s": round(run_cpu, 3),
        "dagster_instance_cpu_s": round(instance_cpu, 3),
        "first_run_cpu_s": round(warm["cpu"], 2),
        **{f"sequential_{k}": round(v, 2) for k, v in one.items()},
        **{f"concurrent_{k}": round(v, 2) for k, v in many.items()},
        "ratio": round(ratio, 2),
        "sequential_walls_s": [round(w["wall"], 2) for w in ones],
        "concurrent_walls_s": [round(w["wall"], 2) for w in manys],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    run(parser.parse_args())
