"""Import throughput: the toolkit's validated, journaled import versus a bare ``requests`` loop.

Issue 3 asks that ``client.import_clients(df, workers=8, journal=...)`` reach at least 80% of
the rate of a bare loop of ``requests.post`` over pre-built payloads on the same number of
threads, and at least twice the rate of a single-threaded bare loop. One run measures, on the
same generated clients and the same sandbox:

(i)   bare loop, 8 threads: a ``ThreadPoolExecutor``, one ``requests.Session`` per thread,
      payloads built beforehand, the bearer token fetched once beforehand;
(ii)  toolkit, 8 workers: ``client.import_clients(df, workers=8, journal=tmp,
      progress=False)``; validation, payload building and the journal are inside the timing
      (the token is fetched beforehand, as for the bare loop);
(iii) bare loop, one thread, one session;
(iv)  toolkit, ``workers=1``.

Every measurement imports into a fresh customer, so every request really inserts, and the
sandbox's record count is checked afterwards (outside the timing). The sandbox's database is
in RAM (``/dev/shm``) when possible, see :func:`memory_tmp`. Each of the four runs once per
round (``--repeat`` rounds; odd rounds run toolkit before bare), each toolkit run is compared
with the bare run beside it, and the headline ratios are the medians of those round-by-round
ratios (best-of-rounds ratios are printed too); only ratios matter, the machine is shared.
The CPU per record of the client and of the sandbox process is printed as well: the ratio it
predicts holds when the cores are the limit, and does not move with background load.

The headline runs the sandbox in a separate process (``python -m toolkit.sandbox``), so client
and server do not share a GIL, as in production; ``--imports-server thread`` (or ``both``) also
runs it in a thread of the bench's own process. ``--imports-latency-ms`` makes the sandbox
delay every request, standing in for a network: on loopback a single-threaded loop already
keeps one of two cores busy, so 8 threads cannot reach 2x there (see bench/README.md).

Run: ``python -m bench --only imports`` or ``python -m bench.bench_imports [--imports-n 5000]``.
This module also holds :func:`sandbox_process`, used by the other sandbox benchmarks.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import requests

from toolkit import Client
from toolkit.sandbox import running
from toolkit.sandbox._admin import Admin
from toolkit.sandbox._cli import READY_MARKER

__all__ = [
    "RATIO_TARGET",
    "SPEEDUP_TARGET",
    "Server",
    "Timing",
    "add_arguments",
    "bare_token",
    "client_for",
    "make_clients",
    "memory_tmp",
    "process_cpu",
    "run",
    "sandbox_process",
    "sandbox_thread",
]

#: toolkit (8 workers) / bare loop (8 threads): at least this.
RATIO_TARGET = 0.8
#: toolkit (8 workers) / bare single-threaded loop: at least this.
SPEEDUP_TARGET = 2.0

_TIMEOUT = (5.0, 60.0)


# --- sandboxes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A running sandbox as the benchmarks see it.

    Attributes:
        url: Base address of every service.
        admin: Client of the administration routes (creates customers).
        mode: ``process`` (its own Python process) or ``thread`` (in the bench's process).
        pid: Process id of the sandbox process, ``None`` in thread mode.
    """

    url: str
    admin: Admin
    mode: str
    pid: int | None = None


@contextmanager
def sandbox_process(db: Path, *, start_timeout: float = 60.0) -> Iterator[Server]:
    """Run ``python -m toolkit.sandbox`` on a free port in a child process.

    Readiness is the line the sandbox prints once it accepts requests
    (:data:`toolkit.sandbox._cli.READY_MARKER`), read from its output by a thread: no sleep
    loop, and a bounded wait. The child is stopped (SIGTERM, then SIGKILL) on exit.

    Args:
        db: SQLite file of the sandbox (may already hold seeded data).
        start_timeout: Seconds to wait for the ready line.

    Yields:
        The running server.

    Raises:
        RuntimeError: The sandbox exited or did not get ready in time (with its stderr tail).

    >>> with sandbox_process(Path(tempfile.mkdtemp()) / "s.db") as srv:  # doctest: +SKIP
    ...     srv.admin.create_customer("Bench firm")["customerId"]
    """
    log = db.with_suffix(".stderr.log")
    cmd = [
        sys.executable,
        "-m",
        "toolkit.sandbox",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        str(db),
        "--env-file",
        str(db.with_suffix(".env")),
        "--log-level",
        "warning",
    ]
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    ready = threading.Event()
    found: list[str] = []

    def drain() -> None:  # read the ready line, then keep the pipe from filling up
        assert proc.stdout is not None
        for line in proc.stdout:
            if not found and line.startswith(READY_MARKER):
                found.append(line[len(READY_MARKER) :].split()[0])
                ready.set()
        ready.set()  # the child exited

    threading.Thread(target=drain, name="sandbox-stdout", daemon=True).start()
    admin: Admin | None = None
    try:
        if not ready.wait(start_timeout) or not found:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(
                f"sandbox process did not get ready within {start_timeout} s "
                f"(exit code {proc.poll()}):\n{tail}"
            )
        admin = Admin(found[0], timeout=60.0)
        yield Server(found[0], admin, "process", proc.pid)
    finally:
        if admin is not None:
            admin.close()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)


@contextmanager
def sandbox_thread(db: Path) -> Iterator[Server]:
    """Run the sandbox in a thread of this process (:func:`toolkit.sandbox.running`).

    Args:
        db: SQLite file of the sandbox.

    Yields:
        The running server (client and server share this process's GIL).

    >>> with sandbox_thread(Path(tempfile.mkdtemp()) / "s.db") as srv:  # doctest: +SKIP
    ...     srv.mode
    'thread'
    """
    with running(db=db) as sb:
        yield Server(sb.url, sb.admin, "thread")


def memory_tmp() -> str | None:
    """``/dev/shm`` when it is a writable folder (RAM), else ``None`` (the system default).

    The sandbox commits every write with ``synchronous=FULL``; on a shared disk other
    tenants' traffic makes those fsyncs noisy. In RAM the server is CPU-bound, which is also
    the stricter test of the client's own overhead.

    >>> memory_tmp() in ("/dev/shm", None)
    True
    """
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def client_for(url: str, creds: dict[str, str]) -> Client:
    """A toolkit client for a customer created by ``admin.create_customer``.

    Args:
        url: The sandbox's base address.
        creds: ``customerId``, ``clientId``, ``clientSecret``, ``audience``.

    Returns:
        The client (no token fetched yet).
    """
    return Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        url,
        url,
        audience=creds["audience"],
    )


def bare_token(url: str, creds: dict[str, str]) -> str:
    """Fetch a bearer token with one plain ``requests.post`` (for the bare loops).

    Args:
        url: The sandbox's base address.
        creds: ``clientId``, ``clientSecret``, ``audience``.

    Returns:
        The access token.
    """
    body = {
        "grant_type": "client_credentials",
        "client_id": creds["clientId"],
        "client_secret": creds["clientSecret"],
        "audience": creds["audience"],
    }
    resp = requests.post(f"{url}/api/v1/oauth/token", json=body, timeout=_TIMEOUT)
    resp.raise_for_status()
    return str(resp.json()["access_token"])


# --- data and the four measurements ------------------------------------------------------------

_NAMES = (
    "Northwind Logistics, Inc.",
    "Müller & Søn GmbH",
    "Société Générale d'Études",
    "東京海上 株式会社",
    "Keystone Freight Lines",
    "O'Brien & Partners LLP",
)


def make_clients(n: int) -> pd.DataFrame:
    """``n`` distinct, valid client records (the shape of ``sample_data/clients.csv``).

    Args:
        n: Number of records.

    Returns:
        Columns ``externalId``, ``name``, ``callSign``, ``description``.

    >>> make_clients(2)["externalId"].tolist()
    ['BC-000000', 'BC-000001']
    """
    return pd.DataFrame(
        {
            "externalId": [f"BC-{i:06d}" for i in range(n)],
            "name": [f"{_NAMES[i % len(_NAMES)]} #{i}" for i in range(n)],
            "callSign": [str(100_000 + i) for i in range(n)],
            "description": [
                f'Bench client {i}; referred to as "BC{i}" in correspondence.' for i in range(n)
            ],
        }
    )


@dataclass(frozen=True)
class Timing:
    """One timed import.

    Attributes:
        seconds: Wall time.
        cpu: CPU seconds of the bench's process (all its threads) over the same span: the
            client's own work when the sandbox runs in another process.
        server_cpu: CPU seconds of the sandbox process over the import (``None`` in thread
            mode, or where ``/proc`` is missing).
    """

    seconds: float
    cpu: float
    server_cpu: float | None = None


def process_cpu(pid: int | None) -> float | None:
    """CPU seconds (user + system) used so far by process ``pid``, read from ``/proc``.

    Args:
        pid: A process id, or ``None``.

    Returns:
        The seconds, or ``None`` without a pid or without ``/proc`` (not Linux).

    >>> process_cpu(os.getpid()) is None or process_cpu(os.getpid()) >= 0
    True
    """
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is field 3
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _timed(out: list[Timing]) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    out.append(Timing(time.perf_counter() - wall, time.process_time() - cpu))


def _bare(
    url: str, creds: dict[str, str], payloads: list[dict[str, Any]], threads: int
) -> tuple[Timing, Counter[int]]:
    """Time a bare ``requests.post`` loop over pre-built ``payloads``; return the statuses."""
    token = bare_token(url, creds)
    endpoint = f"{url}/api/v1/customers/{creds['customerId']}/clients/import"
    headers = {"Authorization": f"Bearer {token}"}
    local = threading.local()

    def post(payload: dict[str, Any]) -> int:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        return session.post(endpoint, json=payload, headers=headers, timeout=_TIMEOUT).status_code

    timing: list[Timing] = []
    with _timed(timing):
        if threads == 1:
            statuses = [post(p) for p in payloads]
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                statuses = list(pool.map(post, payloads))
    return timing[0], Counter(statuses)


def _toolkit(
    url: str, creds: dict[str, str], frame: pd.DataFrame, workers: int
) -> tuple[Timing, Counter[int]]:
    """Time ``client.import_clients`` (validated, journaled); return the statuses."""
    client = client_for(url, creds)
    client.connection.auth.token()  # fetched once beforehand, as for the bare loop
    timing: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        with _timed(timing):
            result = client.import_clients(
                frame, workers=workers, journal=Path(tmp) / "journal.jsonl", progress=False
            )
    return timing[0], Counter(int(s) for s in result["httpStatus"].fillna(0))


#: measurement -> (label, parallel?). Parallel ones use ``workers`` threads, the others one.
_KINDS: dict[str, tuple[str, bool]] = {
    "bare_8": ("bare requests loop", True),
    "toolkit_8": ("toolkit import_clients", True),
    "bare_1": ("bare requests loop", False),
    "toolkit_1": ("toolkit import_clients", False),
}


def _warm_up(server: Server, frame: pd.DataFrame) -> None:
    """Import the toolkit's lazy modules (pandera, schemas...) and open connections both
    ways, so that no measurement pays a one-time cost."""
    creds = server.admin.create_customer("bench imports warm-up")
    client_for(server.url, creds).import_clients(frame.head(20), workers=2, progress=False)
    _bare(server.url, creds, frame.head(20).to_dict("records"), 2)


def _measure(server: Server, frame: pd.DataFrame, kind: str, threads: int) -> Timing:
    """One import into a fresh customer; checks that every record was stored."""
    creds = server.admin.create_customer(f"bench imports {kind}")
    payloads = frame.to_dict("records")  # pre-built, outside the timing
    before = process_cpu(server.pid)
    if kind.startswith("bare"):
        timing, statuses = _bare(server.url, creds, payloads, threads)
    else:
        timing, statuses = _toolkit(server.url, creds, frame, threads)
    after = process_cpu(server.pid)
    if before is not None and after is not None:
        timing = replace(timing, server_cpu=after - before)
    stored = len(server.admin.records("clients", customer_id=creds["customerId"]))
    if statuses != Counter({201: len(frame)}) or stored != len(frame):
        raise RuntimeError(
            f"{kind}: statuses {dict(statuses)}, {stored} of {len(frame)} clients stored"
        )
    return timing


def _bench_server(
    server: Server, frame: pd.DataFrame, workers: int, rounds: int, latency_ms: int = 0
) -> dict[str, list[Timing]]:
    """Time each import once per round, printing each one.

    Even rounds run bare before toolkit, odd rounds toolkit before bare, and each toolkit run
    sits next to the bare run it is compared with, so both see the same background load.
    """
    _warm_up(server, frame)
    if latency_ms:
        server.admin.set_faults(latency_ms=latency_ms)
    timings: dict[str, list[Timing]] = {kind: [] for kind in _KINDS}
    n = len(frame)
    for r in range(rounds):
        order = list(_KINDS) if r % 2 == 0 else ["toolkit_8", "bare_8", "toolkit_1", "bare_1"]
        for kind in order:
            label, parallel = _KINDS[kind]
            threads = workers if parallel else 1
            t = _measure(server, frame, kind, threads)
            timings[kind].append(t)
            print(
                f"  round {r + 1}  {label:<24} {threads:>2} thread(s) {t.seconds:7.2f} s"
                f"  {n / t.seconds:7.0f} records/s  {t.cpu / n * 1e6:6.0f} us CPU/record",
                flush=True,
            )
    return timings


def _verdict(value: float, target: float) -> str:
    return f"(target >= {target:g}: {'PASS' if value >= target else 'FAIL'})"


def _paired(timings: dict[str, list[Timing]], num: str, den: str) -> list[float]:
    """Rate ratio ``num / den`` round by round (same-round runs, same background load)."""
    return [d.seconds / u.seconds for u, d in zip(timings[num], timings[den], strict=True)]


def _median_us(timings: list[Timing], n: int, server: bool = False) -> float | None:
    values = [t.server_cpu if server else t.cpu for t in timings]
    if any(v is None for v in values):
        return None
    return statistics.median(v for v in values if v is not None) / n * 1e6


def _report(mode: str, n: int, workers: int, timings: dict[str, list[Timing]]) -> dict[str, Any]:
    """Print the table of one sandbox mode; return its figures, keys prefixed with the mode.

    Headline ratios are the median of the round-by-round ratios; best-of-rounds ratios are
    shown beside them, and so is the ratio the CPU cost per record predicts (noise-free,
    right when client and server together saturate the cores).
    """
    rates = {kind: n / min(t.seconds for t in ts) for kind, ts in timings.items()}
    cpu = {kind: _median_us(ts, n) or 0.0 for kind, ts in timings.items()}
    server_cpu = {kind: _median_us(ts, n, server=True) for kind, ts in timings.items()}
    ratio_rounds = _paired(timings, "toolkit_8", "bare_8")
    speedup_rounds = _paired(timings, "toolkit_8", "bare_1")
    single_rounds = _paired(timings, "toolkit_1", "bare_1")
    ratio = statistics.median(ratio_rounds)
    speedup = statistics.median(speedup_rounds)
    single = statistics.median(single_rounds)
    own = "client" if mode == "process" else "client+server"
    print(f"\n  sandbox in a {mode}: {len(ratio_rounds)} round(s), {n:,} clients each")
    print(f"  {'':<36} {'best records/s':>14} {own + ' CPU us/rec':>24} {'server CPU us/rec':>18}")
    for kind, (label, parallel) in _KINDS.items():
        name = f"{label}, {workers if parallel else 1} thread(s)"
        srv = server_cpu[kind]
        print(
            f"  {name:<36} {rates[kind]:14.0f} {cpu[kind]:24.0f} "
            f"{'-' if srv is None else f'{srv:.0f}':>18}"
        )

    def line(text: str, value: float, rounds: list[float], best: float, verdict: str) -> None:
        print(
            f"  {text:<20} = {value:5.2f}  {verdict}"
            f"\n  {'':<20}   by round: {', '.join(f'{r:.2f}' for r in rounds)};"
            f" best-of-rounds: {best:.2f}"
        )

    line(
        f"toolkit {workers} / bare {workers}",
        ratio,
        ratio_rounds,
        rates["toolkit_8"] / rates["bare_8"],
        _verdict(ratio, RATIO_TARGET),
    )
    line(
        f"toolkit {workers} / bare 1",
        speedup,
        speedup_rounds,
        rates["toolkit_8"] / rates["bare_1"],
        _verdict(speedup, SPEEDUP_TARGET),
    )
    line(
        "toolkit 1 / bare 1",
        single,
        single_rounds,
        rates["toolkit_1"] / rates["bare_1"],
        "(one thread: the toolkit's own overhead)",
    )
    total = {k: cpu[k] + (server_cpu[k] or 0.0) for k in cpu}
    cpu_ratio = total["bare_8"] / total["toolkit_8"]
    print(
        f"  CPU per record ({own}{'' if mode == 'thread' else ' + server'}), bare {workers}"
        f" / toolkit {workers} = {cpu_ratio:.2f}  (the rate ratio when the cores are the limit)"
    )
    out: dict[str, Any] = {
        f"{mode}_{kind}_records_per_s": round(rate, 1) for kind, rate in rates.items()
    }
    out.update({f"{mode}_{kind}_cpu_us_per_record": round(v, 1) for kind, v in cpu.items()})
    out.update(
        {
            f"{mode}_{kind}_server_cpu_us_per_record": round(v, 1)
            for kind, v in server_cpu.items()
            if v is not None
        }
    )
    out[f"{mode}_ratio_toolkit_vs_bare"] = round(ratio, 3)
    out[f"{mode}_ratio_toolkit_vs_bare_by_round"] = [round(r, 3) for r in ratio_rounds]
    out[f"{mode}_ratio_from_cpu_per_record"] = round(cpu_ratio, 3)
    out[f"{mode}_speedup_toolkit_vs_bare_single"] = round(speedup, 3)
    out[f"{mode}_speedup_by_round"] = [round(r, 3) for r in speedup_rounds]
    out[f"{mode}_ratio_single_toolkit_vs_bare"] = round(single, 3)
    out[f"{mode}_ratio_pass"] = ratio >= RATIO_TARGET
    out[f"{mode}_speedup_pass"] = speedup >= SPEEDUP_TARGET
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    Args:
        parser: The ``python -m bench`` parser.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).imports_n
    5000
    """
    group = parser.add_argument_group("imports")
    group.add_argument("--imports-n", type=int, default=5000, help="client records per import")
    group.add_argument(
        "--imports-workers",
        type=int,
        default=8,
        help="threads of the bare loop and workers of the toolkit (default 8)",
    )
    group.add_argument(
        "--imports-server",
        choices=["process", "thread", "both"],
        default="process",
        help="run the sandbox in its own process (headline), in a thread, or both",
    )
    group.add_argument(
        "--imports-rounds",
        type=int,
        default=None,
        help="rounds of the four measurements (default: --repeat)",
    )
    group.add_argument(
        "--imports-latency-ms",
        type=int,
        default=0,
        help="delay the sandbox adds to every request, standing in for network"
        " latency (default 0: loopback only)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure the four import rates against one sandbox (or two), print the tables.

    Args:
        args: ``imports_n``, ``imports_workers``, ``imports_server``, ``imports_rounds``,
            ``imports_latency_ms``, ``repeat``.

    Returns:
        Rates (records/s) and ratios per sandbox mode (``process_...``, ``thread_...``), and
        whether each target is met.
    """
    n, workers, latency = args.imports_n, args.imports_workers, args.imports_latency_ms
    rounds = args.imports_rounds or getattr(args, "repeat", 3)
    modes = ["process", "thread"] if args.imports_server == "both" else [args.imports_server]
    frame = make_clients(n)
    print(
        f"bench imports: {n:,} clients per measurement, {workers} threads, {rounds} round(s),"
        f" fresh customer each; sandbox in: {', '.join(modes)};"
        f" added latency {latency} ms",
        flush=True,
    )
    figures: dict[str, Any] = {
        "n": n,
        "workers": workers,
        "rounds": rounds,
        "latency_ms": latency,
        "cpus": os.cpu_count() or 0,
    }
    with tempfile.TemporaryDirectory(prefix="bench-imports-", dir=memory_tmp()) as tmp:
        for mode in modes:
            db = Path(tmp) / f"{mode}.db"
            starter = sandbox_process if mode == "process" else sandbox_thread
            print(f"\n  sandbox in a {mode}", flush=True)
            with starter(db) as server:
                timings = _bench_server(server, frame, workers, rounds, latency)
            figures.update(_report(mode, n, workers, timings))
    return figures


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_imports",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds are best of N")
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
