"""Many firms on Dagster: one after another, or all at once in one process.

Issue 28 asks: 8 firms at 50 ms latency (the sandbox profile ``latency``), every asset of
every firm, one Dagster run per firm, (a) one firm after another in one process
(``dagster.materialize``, the in-process executor) and (b) the same runs all at once in
threads of one process (``toolkit.dagster.materialize_firms``), in the same bench run; it
prints the ratio (a) / (b), the CPU time of each, and what a new process pays to import
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
    from toolkit.demo import planted_billing_extract  # noqa: PLC0415

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


def _import_seconds() -> float:
    """Wall time of a fresh Python importing ``toolkit.dagster`` (Dagster, pandas, pyarrow)."""
    code = (
        "import time; t = time.perf_counter(); import toolkit.dagster; "
        "print(time.perf_counter() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    return float(done.stdout.strip().splitlines()[-1])


def _sequential(path: Path) -> tuple[float, float, int]:
    """One firm after another, each its own ``materialize`` run: (wall s, CPU s, runs ok)."""
    import dagster as dg  # noqa: PLC0415

    from toolkit.dagster import assets  # noqa: PLC0415
    from toolkit.firms import load  # noqa: PLC0415

    firms = load(path)
    built = assets(firms, retry_policy=None)
    start, cpu = time.perf_counter(), _cpu()
    ok = sum(
        dg.materialize(built, partition_key=key, raise_on_error=False).success for key in firms
    )
    return time.perf_counter() - start, _cpu() - cpu, ok


def _concurrent(path: Path, n: int) -> tuple[float, float, int]:
    """The same runs at once in one process (``materialize_firms``): (wall, CPU, runs ok)."""
    from toolkit.dagster import materialize_firms  # noqa: PLC0415
    from toolkit.firms import load  # noqa: PLC0415

    firms = load(path)
    start, cpu = time.perf_counter(), _cpu()
    results = materialize_firms(firms, concurrency=n, retry_policy=None)
    return time.perf_counter() - start, _cpu() - cpu, sum(r.success for r in results.values())


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed the firms, time both ways once each, print the table, the ratio and the costs.

    Args:
        args: ``dagster_firms``, ``dagster_latency_ms``, ``dagster_entries``.

    Returns:
        ``{"firms", "latency_ms", "import_s", "sequential_s", "sequential_cpu_s",
        "concurrent_s", "concurrent_cpu_s", "ratio", "ok_sequential", "ok_concurrent"}``.
    """
    n, latency = args.dagster_firms, args.dagster_latency_ms
    imported = _import_seconds()
    with tempfile.TemporaryDirectory(dir=memory_tmp()) as tmp:
        root = Path(tmp)
        with sandbox_process(root / "sandbox.db") as srv:
            firms = _seed(srv, n, latency, args.dagster_entries)
            serial = _firms_file(root / "serial", srv.url, firms)
            parallel = _firms_file(root / "parallel", srv.url, firms)
            # the first run of a process imports what Dagster loads lazily: warm it for both
            t_serial, c_serial, ok_serial = _sequential(serial)
            t_conc, c_conc, ok_conc = _concurrent(parallel, n)
    ratio = t_serial / t_conc
    print(f"{n} firms at {latency} ms latency, every asset of every firm, one run per firm:")
    print(
        f"  one after another, one process: {t_serial:6.1f} s  CPU {c_serial:5.1f} s  "
        f"({ok_serial}/{n} runs ok)"
    )
    print(
        f"  {n} at once, threads of one process: {t_conc:6.1f} s  CPU {c_conc:5.1f} s  "
        f"({ok_conc}/{n} runs ok)"
    )
    print(f"  ratio one after another / at once: {ratio:.2f}")
    print(
        f"  where the time goes: importing toolkit.dagster in a new process {imported:.1f} s "
        f"(a run process each: {n * imported:.1f} s of CPU for {n} firms); the work of a "
        f"firm {t_serial / n:.1f} s, of it CPU {c_serial / n:.2f} s (the rest is waiting "
        "on the service)"
    )
    return {
        "firms": n,
        "latency_ms": latency,
        "import_s": round(imported, 2),
        "sequential_s": round(t_serial, 2),
        "sequential_cpu_s": round(c_serial, 2),
        "concurrent_s": round(t_conc, 2),
        "concurrent_cpu_s": round(c_conc, 2),
        "ratio": round(ratio, 2),
        "ok_sequential": ok_serial,
        "ok_concurrent": ok_conc,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    run(parser.parse_args())
