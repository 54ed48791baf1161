"""Many firms on Dagster: one after another in-process, or concurrent runs, multiprocess.

Issue 21 asks: 8 firms at 50 ms latency (the sandbox profile ``latency``), every asset of
every firm materialized (a) one firm after another in one process (``dagster.materialize``,
the in-process executor) and (b) as Dagster runs them on a daemon: one run process per firm,
all at once, each with the multiprocess executor (a process per step), in the same bench run;
it prints the ratio (a) / (b).

The sandbox runs in its own process. Each firm is a customer with the whole sample_data
folder to push (about 170 imports), ``--dagster-entries`` released entries to sync and a
billing extract with planted differences to reconcile. Each mode has its own journals and
Delta folders, so both start from nothing.

Run: ``python -m bench --only dagster`` or ``python -m bench.bench_dagster``.
Measured on the 2-core development machine, shared with other test runs (load average 12 to
27): in-process 32.9 s, concurrent multiprocess runs 1,060.7 s, ratio 0.03 (8/8 ok each);
docs/scaling.md says what that means.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from bench.bench_imports import client_for, memory_tmp, sandbox_process

__all__ = ["add_arguments", "firms_job", "run"]

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
_FIRMS_ENV = "BENCH_DAGSTER_FIRMS"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).dagster_firms
    8
    """
    parser.add_argument("--dagster-firms", type=int, default=8, help="firms (default 8)")
    parser.add_argument("--dagster-latency-ms", type=int, default=50,
                        help="sandbox latency per request, ms (default 50)")
    parser.add_argument("--dagster-entries", type=int, default=40,
                        help="released entries per firm (default 40)")


def firms_job() -> Any:
    """The ``firms_daily`` job of ``$BENCH_DAGSTER_FIRMS`` (for ``reconstructable``)."""
    from toolkit.dagster import definitions  # noqa: PLC0415  (the optional extra)

    return definitions(os.environ[_FIRMS_ENV], retry_policy=None).resolve_job_def(
        "firms_daily")


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
                user["_id"], matter, work_date=(now - timedelta(days=2)).date(),
                increment_duration_in_seconds=360 * (1 + j % 10), customer_id=cid,
            )
            srv.admin.release_entry(user["_id"], e["_id"], at=now - timedelta(hours=2 + j),
                                    customer_id=cid)
            rows.append({"_id": e["_id"], "workDate": e["workDate"],
                         "initiative.externalId": matter,
                         "incrementDurationInSeconds": e["incrementDurationInSeconds"]})
        srv.admin.set_profile(customer_id=cid, latency={"p50Ms": latency})
        firms.append((f"firm-{i}", {**creds, "billing": planted_billing_extract(
            pd.DataFrame(rows), seed=i)}))
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
            '[firms.' + key + '.reconcile]\nduration = "hours"\nduration_unit = "hours"\n'
            "tolerance_seconds = 18\n"
        )
    (folder / ".env").write_text("\n".join(env) + "\n")
    path = folder / "firms.toml"
    path.write_text("\n".join(toml))
    return path


def _in_process(path: Path) -> tuple[float, int]:
    import dagster as dg  # noqa: PLC0415

    from toolkit.dagster import assets  # noqa: PLC0415
    from toolkit.firms import load  # noqa: PLC0415

    firms = load(path)
    built = assets(firms, retry_policy=None)
    start = time.perf_counter()
    ok = sum(dg.materialize(built, partition_key=key, raise_on_error=False).success
             for key in firms)
    return time.perf_counter() - start, ok


def _one_run(path: str, key: str, home: str) -> int:
    """The run of one firm, as the run launcher's process runs it: multiprocess executor."""
    import dagster as dg  # noqa: PLC0415

    os.environ[_FIRMS_ENV] = path
    with dg.DagsterInstance.from_config(home) as instance:
        result = dg.execute_job(dg.reconstructable(firms_job), instance=instance,
                                tags={"dagster/partition": key}, raise_on_error=False)
        return 0 if result.success else 1


def _multiprocess(path: Path, home: Path) -> tuple[float, int]:
    import dagster as dg  # noqa: PLC0415

    from toolkit.firms import load  # noqa: PLC0415

    keys = list(load(path))
    home.mkdir(parents=True, exist_ok=True)
    # the instance's SQLite storage is created once here: eight runs creating it at once race
    # on its schema migration (as a daemon's instance exists before its runs)
    with dg.DagsterInstance.from_config(str(home)):
        pass
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.bench_dagster", "--run", str(path), key, str(home)],
            cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL,
            stderr=(home / f"{key}.log").open("wb"),
        )
        for key in keys
    ]
    ok = sum(p.wait() == 0 for p in procs)
    elapsed = time.perf_counter() - start
    if ok < len(keys):  # say why, from the first failed run's log
        for key, p in zip(keys, procs, strict=True):
            if p.returncode != 0:
                tail = (home / f"{key}.log").read_text(errors="replace").splitlines()[-15:]
                print(f"run of {key} failed:", *tail, sep="\n  ")
                break
    return elapsed, ok


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed the firms, time both modes once each, print the table and the ratio.

    Args:
        args: ``dagster_firms``, ``dagster_latency_ms``, ``dagster_entries``.

    Returns:
        ``{"firms", "latency_ms", "in_process_s", "multiprocess_s", "ratio", "ok_in_process",
        "ok_multiprocess"}``.
    """
    n, latency = args.dagster_firms, args.dagster_latency_ms
    with tempfile.TemporaryDirectory(dir=memory_tmp()) as tmp:
        root = Path(tmp)
        with sandbox_process(root / "sandbox.db") as srv:
            firms = _seed(srv, n, latency, args.dagster_entries)
            serial = _firms_file(root / "serial", srv.url, firms)
            parallel = _firms_file(root / "parallel", srv.url, firms)
            t_serial, ok_serial = _in_process(serial)
            t_multi, ok_multi = _multiprocess(parallel, root / "dagster_home")
    ratio = t_serial / t_multi
    print(f"{n} firms at {latency} ms latency, every asset of every firm:")
    print(f"  in-process, one after another : {t_serial:7.1f} s  ({ok_serial}/{n} runs ok)")
    print(f"  {n} concurrent runs, multiprocess: {t_multi:7.1f} s  ({ok_multi}/{n} runs ok)")
    print(f"  ratio in-process / multiprocess: {ratio:.2f}")
    return {"firms": n, "latency_ms": latency, "in_process_s": round(t_serial, 2),
            "multiprocess_s": round(t_multi, 2), "ratio": round(ratio, 2),
            "ok_in_process": ok_serial, "ok_multiprocess": ok_multi}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        raise SystemExit(_one_run(*sys.argv[2:5]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    run(parser.parse_args())
