"""Starring throughput: ``client.star(frame)`` and ``client.starred(...)`` beside bare loops.

Issue 5 asks for requests per second and items per second of

(a) starring 10,000 (timekeeper, initiative) pairs for 50 timekeepers:
    ``client.star(frame, workers=8, progress=False)`` versus a bare ``requests`` loop sending
    the same calls (per timekeeper, chunks of at most 100 ids, 100 requests in all) on the
    same number of threads, one ``requests.Session`` per thread, the token fetched once, each
    207 body parsed and its items counted;
(b) reading a 10,000-item starred list: ``client.starred(tk, limit=2500)`` and
    ``limit=10`` versus a bare loop of ``GET ...starred`` following ``nextCursor``
    (sequential by nature: each page needs the previous cursor).

Setup is not timed: the customer, its 10,000 initiatives and 51 users are written straight
into the sandbox's store before the sandbox starts in its own process (so client and server
do not share a GIL). Before each starring run every pair is unstarred, so every run really
writes. Each figure is measured ``--starring-rounds`` times, alternating which side goes
first; the ratios are the median of the round-by-round ratios (each toolkit run against the
bare run next to it), and the best rates are shown too.

Run: ``python -m bench --only starring`` or ``python -m bench.bench_starring``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import requests

from bench.bench_imports import bare_token, client_for, memory_tmp, sandbox_process
from toolkit import Client
from toolkit.sandbox._store import Store

__all__ = ["CHUNK", "add_arguments", "run", "seed"]

#: Ids per star request (the interface's maximum).
CHUNK = 100
_LIST_TK = "BTK-LIST"
_TIMEOUT = (5.0, 60.0)


def seed(db: Path, *, timekeepers: int, initiatives: int) -> dict[str, str]:
    """Create a customer with one client, ``initiatives`` active initiatives and users.

    Users are ``BTK-000``... (``timekeepers`` of them) and ``BTK-LIST`` (for the list
    benchmark). Written through the store's own operations, before any server runs.

    Args:
        db: The sandbox's SQLite file (created).
        timekeepers: Number of timekeepers who star.
        initiatives: Number of initiatives (``BM-00000``...).

    Returns:
        The customer's credentials (``customerId``, ``clientId``, ``clientSecret``,
        ``audience``).

    >>> creds = seed(Path(tempfile.mkdtemp()) / "s.db", timekeepers=2, initiatives=3)
    >>> sorted(creds)
    ['audience', 'clientId', 'clientSecret', 'customerId']
    """
    store = Store(db)
    try:
        creds = store.create_customer("bench starring")
        cid = creds["customerId"]
        store.import_client(
            cid,
            {"externalId": "BC-1", "name": "Bench client", "callSign": "BC1", "description": ""},
        )
        for i in range(initiatives):
            store.import_initiative(
                cid,
                {
                    "externalId": f"BM-{i:05d}",
                    "name": f"Bench matter {i}",
                    "description": "",
                    "callSign": f"BM{i}",
                    "clientExternalId": "BC-1",
                    "billingType": "billable",
                    "unitIncrements": 360,
                    "status": "active",
                },
            )
        for tk in [f"BTK-{j:03d}" for j in range(timekeepers)] + [_LIST_TK]:
            store.create_user(cid, {"timekeeperExternalId": tk, "name": tk, "email": ""})
    finally:
        store.close()
    return creds


def _pairs(timekeepers: int, per_timekeeper: int) -> pd.DataFrame:
    """Each timekeeper gets its own ``per_timekeeper`` initiatives."""
    tks, ids = [], []
    for j in range(timekeepers):
        for k in range(per_timekeeper):
            tks.append(f"BTK-{j:03d}")
            ids.append(f"BM-{j * per_timekeeper + k:05d}")
    return pd.DataFrame({"timekeeperExternalId": tks, "initiativeExternalId": ids})


def _chunks(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Star request bodies: per timekeeper, at most :data:`CHUNK` ids each."""
    bodies = []
    for tk, group in frame.groupby("timekeeperExternalId", sort=False):
        ids = group["initiativeExternalId"].tolist()
        for i in range(0, len(ids), CHUNK):
            bodies.append({"timekeeperExternalId": tk, "initiativeExternalIds": ids[i : i + CHUNK]})
    return bodies


class _Bare:
    """Bare ``requests`` calls of one customer: a token fetched once, a session per thread."""

    def __init__(self, url: str, creds: dict[str, str]) -> None:
        base = f"{url}/api/v1/public/customers/{creds['customerId']}/initiative-props"
        self.star_url, self.unstar_url, self.starred_url = (
            f"{base}/star",
            f"{base}/unstar",
            f"{base}/starred",
        )
        self.headers = {"Authorization": f"Bearer {bare_token(url, creds)}"}
        self._local = threading.local()

    def session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def post_all(self, url: str, bodies: list[dict[str, Any]], threads: int) -> int:
        """POST every body on ``threads`` threads; return the number of items answered 200."""

        def post(body: dict[str, Any]) -> int:
            resp = self.session().post(url, json=body, headers=self.headers, timeout=_TIMEOUT)
            items = resp.json()["response"] if resp.status_code == 207 else []
            return sum(1 for item in items if item["status"] == 200)

        with ThreadPoolExecutor(max_workers=threads) as pool:
            return sum(pool.map(post, bodies))

    def starred(self, tk: str, limit: int) -> tuple[list[str], int]:
        """Follow ``nextCursor`` to the end; return the ids and the number of requests."""
        ids: list[str] = []
        params: dict[str, Any] = {"timekeeperExternalId": tk, "limit": limit}
        pages = 0
        while True:
            resp = self.session().get(
                self.starred_url, params=params, headers=self.headers, timeout=_TIMEOUT
            )
            resp.raise_for_status()
            body = resp.json()
            pages += 1
            ids.extend(body["initiativeExternalIds"])
            if body["nextCursor"] is None:
                return ids, pages
            params["cursor"] = body["nextCursor"]


def _time(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Seconds of ``fn(*args, **kwargs)``, and its result."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def _row(label: str, requests_: int, items: int, seconds: list[float]) -> None:
    best = min(seconds)
    print(f"  {label:<44} {requests_ / best:10,.0f} {items / best:12,.0f} {best:9.3f}", flush=True)


def _ratio_line(text: str, toolkit: list[float], bare: list[float]) -> float:
    rounds = [b / t for t, b in zip(toolkit, bare, strict=True)]
    ratio = statistics.median(rounds)
    print(
        f"  {text:<44} {ratio:5.2f}   by round: {', '.join(f'{r:.2f}' for r in rounds)};"
        f" best-of-rounds: {min(bare) / min(toolkit):.2f}"
    )
    return ratio


def _bench_star(
    client: Client, bare: _Bare, frame: pd.DataFrame, workers: int, rounds: int
) -> dict[str, Any]:
    bodies = _chunks(frame)
    n_req, n_items = len(bodies), len(frame)
    times: dict[str, list[float]] = {"toolkit": [], "bare": []}
    for r in range(rounds):
        for side in ("bare", "toolkit") if r % 2 == 0 else ("toolkit", "bare"):
            bare.post_all(bare.unstar_url, bodies, workers)  # start empty: every item writes
            if side == "toolkit":
                seconds, result = _time(client.star, frame, workers=workers, progress=False)
                ok = int(result["ok"].sum())
            else:
                seconds, ok = _time(bare.post_all, bare.star_url, bodies, workers)
            if ok != n_items:
                raise RuntimeError(f"star ({side}): {ok} of {n_items} items answered 200")
            times[side].append(seconds)
    print(
        f"\n  (a) star {n_items:,} pairs, {frame['timekeeperExternalId'].nunique()} "
        f"timekeepers, {n_req} requests, {workers} threads, {rounds} rounds"
    )
    print(f"  {'':<44} {'requests/s':>10} {'items/s':>12} {'best s':>9}")
    _row(f"bare requests loop, {workers} threads", n_req, n_items, times["bare"])
    _row(f"client.star(frame, workers={workers})", n_req, n_items, times["toolkit"])
    ratio = _ratio_line("toolkit / bare (rate)", times["toolkit"], times["bare"])
    return {
        "star_pairs": n_items,
        "star_requests": n_req,
        "star_bare_requests_per_s": round(n_req / min(times["bare"]), 1),
        "star_bare_items_per_s": round(n_items / min(times["bare"]), 1),
        "star_toolkit_requests_per_s": round(n_req / min(times["toolkit"]), 1),
        "star_toolkit_items_per_s": round(n_items / min(times["toolkit"]), 1),
        "star_ratio_toolkit_vs_bare": round(ratio, 3),
    }


def _bench_list(
    client: Client, bare: _Bare, size: int, limits: list[int], rounds: int
) -> dict[str, Any]:
    bodies = _chunks(
        pd.DataFrame(
            {
                "timekeeperExternalId": [_LIST_TK] * size,
                "initiativeExternalId": [f"BM-{i:05d}" for i in range(size)],
            }
        )
    )
    if bare.post_all(bare.star_url, bodies, 8) != size:
        raise RuntimeError(f"could not star {size} initiatives for {_LIST_TK}")
    out: dict[str, Any] = {"list_items": size}
    for limit in limits:
        times: dict[str, list[float]] = {"toolkit": [], "bare": []}
        pages = 0
        for r in range(rounds):
            for side in ("bare", "toolkit") if r % 2 == 0 else ("toolkit", "bare"):
                if side == "toolkit":
                    seconds, frame = _time(client.starred, _LIST_TK, limit=limit)
                    got = len(frame)
                else:
                    seconds, (ids, pages) = _time(bare.starred, _LIST_TK, limit)
                    got = len(ids)
                if got != size:
                    raise RuntimeError(f"starred ({side}, limit {limit}): {got} of {size} ids")
                times[side].append(seconds)
        print(f"\n  (b) starred list of {size:,}, limit={limit}: {pages} requests, {rounds} rounds")
        print(f"  {'':<44} {'requests/s':>10} {'items/s':>12} {'best s':>9}")
        _row("bare requests loop following nextCursor", pages, size, times["bare"])
        _row(f"client.starred(tk, limit={limit})", pages, size, times["toolkit"])
        ratio = _ratio_line("toolkit / bare (rate)", times["toolkit"], times["bare"])
        out.update(
            {
                f"list_limit{limit}_requests": pages,
                f"list_limit{limit}_bare_requests_per_s": round(pages / min(times["bare"]), 1),
                f"list_limit{limit}_bare_items_per_s": round(size / min(times["bare"]), 1),
                f"list_limit{limit}_toolkit_requests_per_s": round(
                    pages / min(times["toolkit"]), 1
                ),
                f"list_limit{limit}_toolkit_items_per_s": round(size / min(times["toolkit"]), 1),
                f"list_limit{limit}_ratio_toolkit_vs_bare": round(ratio, 3),
            }
        )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of this benchmark.

    Args:
        parser: The ``python -m bench`` parser.

    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args([]).starring_pairs
    10000
    """
    group = parser.add_argument_group("starring")
    group.add_argument(
        "--starring-pairs",
        type=int,
        default=10_000,
        help="(timekeeper, initiative) pairs to star (default 10,000)",
    )
    group.add_argument(
        "--starring-timekeepers",
        type=int,
        default=50,
        help="timekeepers the pairs are spread over (default 50)",
    )
    group.add_argument(
        "--starring-list",
        type=int,
        default=10_000,
        help="size of the starred list read back (default 10,000)",
    )
    group.add_argument(
        "--starring-workers",
        type=int,
        default=8,
        help="threads of the bare loop and workers of the toolkit (default 8)",
    )
    group.add_argument(
        "--starring-rounds",
        type=int,
        default=None,
        help="rounds of each measurement (default: --repeat, at least 5)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, start the sandbox in its own process, time starring and listing, print tables.

    Args:
        args: ``starring_pairs``, ``starring_timekeepers``, ``starring_list``,
            ``starring_workers``, ``starring_rounds``, ``repeat``.

    Returns:
        Requests/s, items/s and toolkit/bare ratios of each measurement.
    """
    tks, workers = args.starring_timekeepers, args.starring_workers
    per_tk = -(-args.starring_pairs // tks)
    frame = _pairs(tks, per_tk).head(args.starring_pairs)
    size = args.starring_list
    rounds = args.starring_rounds or max(5, getattr(args, "repeat", 3))
    print(
        f"bench starring: {len(frame):,} pairs for {tks} timekeepers, list of {size:,};"
        f" sandbox in its own process",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-starring-", dir=memory_tmp()) as tmp:
        db = Path(tmp) / "starring.db"
        t0 = time.perf_counter()
        creds = seed(db, timekeepers=tks, initiatives=max(tks * per_tk, size))
        print(
            f"  seeded {max(tks * per_tk, size):,} initiatives and {tks + 1} users"
            f" in {time.perf_counter() - t0:.1f} s (not timed)",
            flush=True,
        )
        with sandbox_process(db) as server:
            client = client_for(server.url, creds)
            client.connection.auth.token()
            bare = _Bare(server.url, creds)
            # warm-up: lazy imports and connections of both sides
            client.star(frame.head(CHUNK), workers=2, progress=False)
            bare.post_all(bare.star_url, _chunks(frame.head(CHUNK)), 2)
            figures = _bench_star(client, bare, frame, workers, rounds)
            figures.update(_bench_list(client, bare, size, [2500, 10], rounds))
    figures.update({"workers": workers, "rounds": rounds})
    return figures


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_starring",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each measurement")
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
