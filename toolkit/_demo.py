"""``toolkit demo``: the whole flow, headless, against a sandbox it starts itself.

One summary line per step (:data:`_STEPS`); the secret is never printed. ``out/export`` and the
chart are replaced when the new ones are written (a run stopped before keeps them); an earlier
``out/sandbox.db`` is moved aside, never replaced. While a sandbox serves ``out/sandbox.db``,
the demo refuses and touches nothing.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sqlite3
import time
from collections.abc import Callable, Hashable
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from toolkit._client import Client
from toolkit._core.settings import Settings
from toolkit._egress.export import Export
from toolkit._ingress.validation import Tables, load_folder, validate
from toolkit._reconciliation import reconcile
from toolkit.errors import ToolkitError
from toolkit.notebook import SAMPLE_DATA

if TYPE_CHECKING:
    from toolkit.sandbox import Admin

DEMO_ENTRIES = 200  # entries recorded and released over DEMO_DAYS
DEMO_SEED = 2024  # seed of the generated entries and the planted differences: runs alike
DEMO_DAYS = 21
ACKNOWLEDGED_SHARE = 0.35  # the earliest released entries acknowledged in step 7
INTERNAL_CLIENT = "C-1020"  # the firm's own matters: acknowledged as failed in step 7
LEFT_PENDING = 12  # entries released at the end and left pending (step 11)


class _StepFailed(Exception):
    """A step ran but its result is not what the demo expects."""


@dataclass
class _Run:
    client: Client
    admin: Admin
    sample: Path
    out: Path
    workers: int
    frames: Tables[pd.DataFrame] = field(default_factory=lambda: Tables[pd.DataFrame]())
    users: dict[str, str] = field(default_factory=dict)
    released: int = 0
    export: Export = field(init=False)  # the export step sets it
    acknowledged: set[str] = field(default_factory=set)
    pending: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def note(self, frame: pd.DataFrame | pd.Series) -> None:
        self.notes.append("\n".join("      " + line for line in frame.to_string().splitlines()))


def _validate(run: _Run) -> str:
    run.frames = load_folder(run.sample)
    report = validate(**run.frames)
    if not report.ok:
        run.note(report.failures[["table", "row", "column", "check", "message"]])
        raise _StepFailed(f"{len(report.failures)} validation failure(s) in {run.sample}")
    return f"ok: {sum(report.rows.values())} rows in {len(report.rows)} tables"


def _onboard(run: _Run) -> str:
    report = run.client.onboard(run.frames, workers=run.workers, progress=False)
    run.note(report.counts)
    if not report.ok:
        run.note(report.failures[["table", "externalId", "status", "error"]].head(20))
        raise _StepFailed(f"{len(report.failures)} row(s) not imported")
    sent = report.counts["sent"]
    counts = ", ".join(f"{int(n)} {str(table).replace('_', ' ')}" for table, n in sent.items())
    return f"{counts} sent"


def _users(run: _Run) -> str:
    timekeepers = pd.read_csv(run.sample / "timekeepers.csv", dtype=str, keep_default_na=False)
    columns = timekeepers[["timekeeperExternalId", "name", "email"]]
    for external_id, name, email in columns.itertuples(index=False, name=None):
        run.users[external_id] = run.admin.create_user(external_id, name, email)["_id"]
    return f"{len(run.users)} timekeepers created as users: {', '.join(run.users)}"


_SUMMARIES = (
    "Review and revise draft agreement|Telephone conference with client|Research case law on "
    "limitation periods|Prepare for deposition|Draft motion to compel|Correspondence with "
    "opposing counsel|Analyse discovery production|Internal strategy meeting"
).split("|")


def _record(run: _Run, *, n: int, days: int, seed: int) -> list[int]:
    """Record and release ``n`` entries over ``days`` days (same for a seed); their durations."""
    rng = random.Random(seed)
    now = datetime.now(UTC)
    initiatives, codes = run.frames["initiatives"], run.frames["codes"]
    active = sorted(initiatives.loc[initiatives["status"] == "active", "externalId"])
    task = sorted(codes.loc[codes["codeTypeExternalId"] == "task-code", "externalId"])
    activity = sorted(codes.loc[codes["codeTypeExternalId"] == "activity-code", "externalId"])
    ranges: dict[Hashable, list[str]] = {}
    if "code_ranges" in run.frames:  # each matter's codes, in the file's order
        pairs = run.frames["code_ranges"].groupby("initiativeExternalId")["codeExternalId"]
        ranges = pairs.agg(list).to_dict()
    durations = []
    for _ in range(n):
        matter = rng.choice(active)
        count = rng.choice((0, 1, 1, 2))
        allowed = ranges.get(matter)
        if allowed:
            picked = rng.sample(allowed, min(count, len(allowed)))
        else:
            picked = [rng.choice(task), rng.choice(activity)][:count]
        released = now - timedelta(seconds=rng.randrange(120, days * 86_400))
        user = run.users[rng.choice(list(run.users))]
        seconds = 360 * rng.randint(1, 40)
        work_date = (released - timedelta(hours=rng.randrange(0, 48))).date()
        entry = run.admin.create_entry(
            user,
            matter,
            work_date=work_date,
            increment_duration_in_seconds=seconds,
            summary=rng.choice(_SUMMARIES),
            codes=picked,
        )
        run.admin.release_entry(user, entry["_id"], at=released)
        durations.append(seconds)
    return durations


def _entries(run: _Run) -> str:
    seconds = _record(run, n=DEMO_ENTRIES, days=DEMO_DAYS, seed=DEMO_SEED)
    run.released = len(seconds)
    hours = sum(seconds) / 3600
    return f"{len(seconds)} entries recorded and released over {DEMO_DAYS} days, {hours:,.1f} hours"


def _export(run: _Run) -> str:
    until = pd.Timestamp.now(tz="UTC")
    after = (until - pd.Timedelta(days=DEMO_DAYS + 1)).normalize()
    target = run.out / "export"
    totals = run.client.export_to_parquet(after, until, target, window="1D", overwrite=True)
    run.export = Export.read_parquet(target)
    if totals["entries"] != run.released or len(run.export) != run.released:
        raise _StepFailed(
            f"exported {totals['entries']} entries (read back {len(run.export)}), "
            f"released {run.released}"
        )
    run.pending = set(run.export.entries["_id"])
    return (
        f"{totals['entries']} entries and {totals['codes']} codes in {totals['windows']} "
        f"daily windows -> {target}"
    )


def _chart(run: _Run) -> str:
    if importlib.util.find_spec("matplotlib") is None:  # the notebooks extra is optional
        (run.out / "hours_by_client.png").unlink(missing_ok=True)  # an earlier run's: stale
        return (
            "skipped: no matplotlib (pip install 'timebill-toolkit[notebooks]' draws "
            "out/hours_by_client.png)"
        )
    path = hours_by_client_chart(run.export.entries, run.out / "hours_by_client.png")
    clients = run.export.entries["initiative.client.externalId"].nunique()
    return f"hours of {clients} clients -> {path}"


def _acknowledge(run: _Run) -> str:
    entries = run.export.entries.sort_values(["updatedAt", "_id"])
    first = entries.head(round(len(entries) * ACKNOWLEDGED_SHARE))
    internal = (first["initiative.client.externalId"] == INTERNAL_CLIENT).to_numpy()
    ids = {"userId": first["userId"].to_numpy(), "entryId": first["_id"].to_numpy()}
    outcome = np.where(internal, "failed", "succeeded")
    ext = [None if bad else f"WIP-{n:05d}" for n, bad in enumerate(internal, start=1)]
    errors = [["internal matter: there is no client to bill"] if bad else None for bad in internal]
    acks = pd.DataFrame({**ids, "outcome": outcome, "externalId": ext, "errors": errors})
    run.acknowledged = set(acks["entryId"])
    return f"{len(acks)} acknowledged: {_send_acks(run, acks)}"


def _send_acks(run: _Run, acks: pd.DataFrame) -> str:
    """Acknowledge ``acks``, every row accepted; how many succeeded and failed."""
    result = run.client.acknowledge(acks, workers=run.workers, progress=False)
    if not result["ok"].all():
        run.note(result.loc[~result["ok"], ["entryId", "outcome", "httpStatus", "error"]])
        raise _StepFailed(f"{int((~result['ok']).sum())} acknowledgement(s) refused")
    counts = acks["outcome"].value_counts()
    return f"{int(counts.get('succeeded', 0))} succeeded, {int(counts.get('failed', 0))} failed"


def _pending(run: _Run) -> str:
    ids = set(run.client.release_pending().entries["_id"])
    expected = run.pending - run.acknowledged
    if ids != expected:
        raise _StepFailed(f"{len(ids)} entries pending, expected {len(expected)}")
    run.pending = ids
    return f"{len(ids)} entries still pending (of {run.released}); the acknowledged ones left"


def _star(run: _Run) -> str:
    entries = run.export.entries
    names = {uid: tk for tk, uid in run.users.items()}
    keys = ["timekeeperExternalId", "initiativeExternalId"]
    pairs = [entries["userId"].map(names), entries["initiative.externalId"]]
    worked = entries["incrementDurationInSeconds"].groupby(pairs).sum()
    # the three matters each timekeeper works on most, then an inactive and an unknown one
    order = worked.reset_index(name="seconds").set_axis([*keys, "seconds"], axis=1)
    rank = [keys[0], "seconds", keys[1]]
    top = order.sort_values(rank, ascending=[True, False, True]).groupby(keys[0]).head(3)
    odd = pd.DataFrame({keys[0]: next(iter(run.users)), keys[1]: ["M-1001-004", "M-9999-999"]})
    plan = pd.concat([top[keys], odd], ignore_index=True)
    result = run.client.star(plan, workers=run.workers, progress=False)
    expected_bad = result["initiativeExternalId"].isin(odd["initiativeExternalId"])
    if not result.loc[~expected_bad, "ok"].all():
        run.note(result[~result["ok"]])
        raise _StepFailed("some matters the timekeepers work on could not be starred")
    by = ["status", "httpStatus", "errorCode"]
    run.note(result.groupby(by, dropna=False, observed=True).size().rename("rows"))
    lists = run.client.starred_many(list(run.users), limit=2)
    if lists["error"].notna().any():
        raise _StepFailed("a starred list could not be read")
    per = lists.groupby("timekeeperExternalId")["initiativeExternalId"].count()
    return (
        f"{int(result['ok'].sum())} of {len(result)} stars applied; starred lists read "
        f"2 props a page: {', '.join(f'{tk} {n}' for tk, n in per.items())}"
    )


def _reconcile(run: _Run) -> str:
    entries = run.export.entries
    billing = planted_billing_extract(entries, seed=DEMO_SEED)
    rec = reconcile(entries, billing, duration="hours", duration_unit="hours", tolerance_seconds=18)
    run.note(rec.summary)
    acks = rec.to_acknowledge()
    acks = acks[acks["entryId"].isin(run.pending)]
    sent = _send_acks(run, acks)
    return (
        f"{int(rec.summary['matched'])} matched, {int(rec.summary.drop('matched').sum())} "
        f"differ; the {len(acks)} still pending acknowledged ({sent}); "
        f"{len(run.client.release_pending())} pending now"
    )


def _leave(run: _Run) -> str:
    """A new batch released just now and left pending, for `make sandbox` and the README."""
    released = len(_record(run, n=LEFT_PENDING, days=1, seed=DEMO_SEED + 1))
    left = len(run.client.release_pending())
    return (
        f"{released} new entries released and left pending ({left} pending now), for "
        "`make sandbox` and the README's acknowledge examples"
    )


#: the steps in order, each named by its function
_STEPS: list[tuple[str, Callable[[_Run], str]]] = [
    (step.__name__[1:], step)
    for step in (_validate, _onboard, _users, _entries, _export, _chart, _acknowledge)
    + (_pending, _star, _reconcile, _leave)
]


def planted_billing_extract(entries: pd.DataFrame, *, seed: int = 7) -> pd.DataFrame:
    """A billing system's extract of exported entries, with known differences planted.

    One record per entry (``entryId``, ``billingId``, ``workDate``, ``matter``, ``hours``), then,
    reproducibly for a seed: 3% left out, 4% written up by half an hour, 2% a day late, 1% on
    another matter, and two records typed straight into billing (``manual-...``).

    Args:
        entries: Exported entries (``updatedAt``, when present, orders them).
        seed: Seed of the random choices.

    Returns:
        The extract, one row per billing record.

    Example:
        >>> entries = pd.DataFrame({"_id": [f"e{i}" for i in range(100)],
        ...     "workDate": pd.Timestamp("2026-03-02"), "initiative.externalId": "M-1",
        ...     "incrementDurationInSeconds": 3600})
        >>> billing = planted_billing_extract(entries)
        >>> len(billing), int(billing["entryId"].str.startswith("manual-").sum())
        (99, 2)
    """
    order = ["updatedAt", "_id"] if "updatedAt" in entries else ["_id"]
    ordered = entries.sort_values(order).reset_index(drop=True)
    n = len(ordered)
    billing = pd.DataFrame(
        {
            "entryId": ordered["_id"].astype(str),
            "billingId": [f"WIP-{i:05d}" for i in range(1, n + 1)],
            "workDate": pd.to_datetime(ordered["workDate"]).dt.strftime("%Y-%m-%d"),
            "matter": ordered["initiative.externalId"].astype(str),
            "hours": (ordered["incrementDurationInSeconds"].astype(float) / 3600).round(2),
        }
    )
    pick = np.random.default_rng(seed).permutation(n)
    sizes = [max(1, round(n * share)) for share in (0.03, 0.04, 0.02, 0.01)]
    left_out, written_up, late, moved, _ = np.split(pick, np.cumsum(sizes))
    billing.loc[written_up, "hours"] += 0.5
    shifted = pd.to_datetime(billing.loc[late, "workDate"]) + pd.Timedelta(days=1)
    billing.loc[late, "workDate"] = shifted.dt.strftime("%Y-%m-%d")
    billing.loc[moved, "matter"] = billing.loc[moved, "matter"] + "-X"
    billing = billing.drop(index=left_out.tolist())  # labels are positions (a RangeIndex)
    last = billing["workDate"].max() if len(billing) else "2026-01-01"
    typed_in = pd.DataFrame(
        [
            ["manual-0001", "WIP-90001", last, "M-1001-001", 1.5],
            ["manual-0002", "WIP-90002", last, "M-1009-001", 0.75],
        ],
        columns=billing.columns,
    )
    planted: pd.DataFrame = pd.concat([billing, typed_in], ignore_index=True)
    return planted


def hours_by_client_chart(entries: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a bar chart of hours by client as a PNG (matplotlib Agg canvas, no pyplot state).

    Its title names the number of entries.

    Args:
        entries: Exported entries (``initiative.client.name``, ``incrementDurationInSeconds``).
        path: The PNG file to write (its folder is created).

    Returns:
        The path written.

    Example:
        >>> entries = pd.DataFrame({"initiative.client.name": ["Acme", "Globex", "Acme"],
        ...                         "incrementDurationInSeconds": [3600, 1800, 900]})
        >>> hours_by_client_chart(entries, tmp / "h.png").read_bytes()[:4]
        b'\\x89PNG'
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    seconds = entries["incrementDurationInSeconds"].astype(float)
    hours = (seconds / 3600).groupby(entries["initiative.client.name"]).sum().sort_values()
    fig = Figure(figsize=(8, max(2.5, 0.3 * len(hours) + 1)))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    bars = ax.barh(hours.index.astype(str), hours.to_numpy(), color="tab:blue")
    ax.bar_label(bars, labels=[f" {value:,.1f}" for value in hours.tolist()], fontsize=8)
    ax.set_xlabel("hours")
    ax.set_title(f"Released hours by client ({len(entries)} entries)")
    ax.margins(x=0.12)
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    return target


def _find_sample() -> Path:
    # ./sample_data (the folder the demo runs in), else the packaged one
    candidates = [Path.cwd() / "sample_data", SAMPLE_DATA]
    for folder in candidates:
        if (folder / "clients.csv").is_file() and (folder / "timekeepers.csv").is_file():
            return folder
    raise FileNotFoundError(f"no sample data (clients.csv, timekeepers.csv) in {candidates}")


def _in_use(db: Path) -> bool:
    """Whether a running sandbox holds ``db`` open (SQLite cannot leave WAL mode then)."""
    if not db.exists():
        return False
    with closing(sqlite3.connect(db, timeout=0, isolation_level=None)) as con:
        try:
            con.execute("PRAGMA journal_mode=DELETE").fetchone()
        except sqlite3.OperationalError as exc:
            return "locked" in str(exc) or "busy" in str(exc)
        except sqlite3.DatabaseError:  # not a SQLite file: no sandbox serves it
            return False
    return False


def _clear(out: Path) -> None:
    """Move an earlier run's database aside, saying so (its export and chart are replaced when
    the new ones are written, not before: a run stopped earlier leaves them as they were)."""
    db = out / "sandbox.db"
    if db.exists():
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(db.stat().st_mtime))
        kept = out / f"sandbox.{stamp}.db"
        n = 1
        while kept.exists():
            n += 1
            kept = out / f"sandbox.{stamp}-{n}.db"
        for suffix in ("", "-wal", "-shm", "-journal"):
            if Path(f"{db}{suffix}").exists():
                Path(f"{db}{suffix}").replace(f"{kept}{suffix}")
        print(
            f"{db} existed: moved to {kept} (its records stay there); the demo starts a "
            "new sandbox database",
            flush=True,
        )


def run_demo(out: str | os.PathLike[str] = "out", workers: int = 8) -> int:
    """Run the whole flow headless against a fresh sandbox, printing a summary per step.

    The sample firm is the folder ``./sample_data``, else the package's; the demo records and
    releases :data:`DEMO_ENTRIES` entries, generated (and its differences planted) with the
    seed :data:`DEMO_SEED`.

    Args:
        out: Output folder (what is written and moved aside: :mod:`toolkit._demo`).
        workers: Worker threads of the bulk calls.

    Returns:
        0 every step succeeded, 1 one failed (the run stops there), 2 a running sandbox serves
        ``out/sandbox.db`` (nothing is touched).

    Example:
        >>> run_demo("out")  # doctest: +SKIP
        0
    """
    from toolkit.sandbox import Admin, running  # optional extra: fastapi, uvicorn

    started = time.perf_counter()
    out_dir = Path(out)
    try:
        sample_dir = _find_sample()
    except FileNotFoundError as exc:
        print(f"demo: {exc}")
        return 1
    db = out_dir / "sandbox.db"
    if _in_use(db):
        try:  # the sandbox holding it: the URL the .env here names, if any
            named = f"the .env here names {Settings.from_env('.env').urls['time']}; "
        except ToolkitError:
            named = ""
        serving = f"a running sandbox ({named}make sandbox, or toolkit sandbox --db {db})"
        print(
            f"demo: {db} is open in another process, {serving}; the demo makes a new "
            f"database there, so it stops and changes nothing. Stop that sandbox (Ctrl+C "
            f"where it runs) and run the demo again, or give the demo another folder: "
            f"toolkit demo --out OTHER"
        )
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    _clear(out_dir)
    with running(db=db) as sb, closing(Admin(sb.url, customer_id=sb.customer_id)) as admin:
        # the sandbox's own demo customer, so `toolkit sandbox --db out/sandbox.db` serves it again
        client = Client.from_env(None, environ=sb.env(), workers=workers)
        print(f"sandbox at {sb.url}, customer {client.customer_id}", flush=True)
        run = _Run(client, admin, sample_dir, out_dir, workers)
        for number, (name, step) in enumerate(_STEPS, start=1):
            head = f"[{number:>2}/{len(_STEPS)}] {name:<12}"
            try:
                summary = step(run)
            except Exception as exc:  # any failure is reported as the step's
                summary = f"FAILED: {type(exc).__name__}: {exc}"
            print(f"{head} {summary}", *run.notes, sep="\n", flush=True)
            run.notes.clear()
            if summary.startswith("FAILED: "):
                return 1
    chart = out_dir / "hours_by_client.png"
    wrote = f"{out_dir / 'export'} (Parquet dataset)" + (f", {chart}" if chart.is_file() else "")
    print(
        f"done in {time.perf_counter() - started:.1f} s: {wrote}\n"
        f"The sandbox's data stays in {out_dir / 'sandbox.db'}. To serve it again and get its "
        f"credentials (with curl commands for a token and a star request): make sandbox in "
        f"the repository, or toolkit sandbox --db {out_dir / 'sandbox.db'}"
    )
    return 0
