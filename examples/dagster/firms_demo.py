"""``make firms-demo``: three firms as three sandbox customers, then ``dagster dev``.

Starts a sandbox (``out/firms-demo/sandbox.db``), makes three customers with different
profiles (plain; a tight rate limit; a slow network), gives each the sample reference data's
matters and a few weeks of released entries, writes a billing extract with planted
differences per firm, ``firms.toml`` and ``.env`` (the three secrets, mode 0600), then runs
``dagster dev`` on 127.0.0.1 with this folder's ``definitions.py`` until Ctrl+C.

    python examples/dagster/firms_demo.py [--out out/firms-demo] [--port 3000] [--no-dev]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from toolkit import Client
from toolkit._demo import planted_billing_extract
from toolkit.sandbox import running

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "sample_data"

#: firm key -> (display name, sandbox profile switches, max_rate of the firm or None)
FIRMS: dict[str, tuple[str, dict, float | None]] = {
    "harbor-lane": ("Harbor Lane LLP", {}, None),
    "north-quay": (
        "North Quay & Partners",
        {
            "rateLimit": {"kind": "token-bucket", "perSecond": 15, "burst": 5},
            "rateLimitHeaders": "ietf",
        },
        12.0,
    ),
    "stone-mill": ("Stone Mill Legal", {"latency": {"p50Ms": 60, "p99Ms": 300}}, None),
}
ENTRIES = 60
DAYS = 20

DAGSTER_YAML = """\
concurrency:
  # the run queue: at most 4 runs at once, at most 2 per service host (run tag timebill/service)
  runs:
    max_concurrent_runs: 4
    tag_concurrency_limits:
      - key: "timebill/service"
        value:
          applyLimitPerUniqueValue: true
        limit: 2
  # pools: the firms' asset ops share one pool per service host (timebill/<host>)
  pools:
    default_limit: 3
telemetry:
  enabled: false
"""


def _entries(sb, customer_id: str, seed: int) -> pd.DataFrame:
    """Released entries over the last weeks, for two timekeepers."""
    rng = random.Random(seed)
    initiatives = pd.read_csv(SAMPLE / "initiatives.csv", dtype=str)
    matters = sorted(initiatives.loc[initiatives["status"] == "active", "externalId"])[:8]
    users = [
        sb.admin.create_user(tk, name, f"{tk.lower()}@example.com", customer_id=customer_id)
        for tk, name in (("TK-101", "Margaret Lane"), ("TK-102", "Samuel Harbor"))
    ]
    now = datetime.now(UTC)
    rows = []
    for _ in range(ENTRIES):
        user = rng.choice(users)
        released = now - timedelta(seconds=rng.randrange(3600, DAYS * 86_400))
        entry = sb.admin.create_entry(
            user["_id"],
            rng.choice(matters),
            work_date=(released - timedelta(hours=6)).date(),
            increment_duration_in_seconds=360 * rng.randint(1, 20),
            summary="work",
            customer_id=customer_id,
        )
        sb.admin.release_entry(user["_id"], entry["_id"], at=released, customer_id=customer_id)
        rows.append(
            {
                "_id": entry["_id"],
                "workDate": entry["workDate"],
                "initiative.externalId": entry["initiativeExternalId"],
                "incrementDurationInSeconds": entry["incrementDurationInSeconds"],
            }
        )
    return pd.DataFrame(rows)


def seed(sb, out: Path) -> None:
    """Make the three customers, their data and billing extracts, firms.toml and .env."""
    toml, env = [], []
    for n, (key, (name, profile, max_rate)) in enumerate(FIRMS.items()):
        creds = sb.admin.create_customer(name)
        cid = creds["customerId"]
        # the matters the entries need; the firm's master_data asset pushes the whole folder
        setup = Client(
            cid,
            creds["clientId"],
            creds["clientSecret"],
            sb.url,
            sb.url,
            audience=creds["audience"],
        )
        frames = {
            t: pd.read_csv(SAMPLE / f"{t}.csv", dtype=str) for t in ("clients", "initiatives")
        }
        setup.onboard(frames, progress=False)
        entries = _entries(sb, cid, seed=n)
        (out / "billing").mkdir(parents=True, exist_ok=True)
        planted_billing_extract(entries, seed=n).to_csv(out / "billing" / f"{key}.csv", index=False)
        if profile:
            sb.admin.set_profile(customer_id=cid, **profile)
        var = key.upper().replace("-", "_") + "_SECRET"
        env.append(f"{var}={creds['clientSecret']}")
        toml.append(
            f"[firms.{key}]  # {name}: profile {profile or 'default'}\n"
            f'customer_id = "{cid}"\nclient_id = "{creds["clientId"]}"\n'
            f'client_secret_env = "{var}"\nauth_url = "{sb.url}"\ntime_url = "{sb.url}"\n'
            f'audience = "{creds["audience"]}"\nsource = "{SAMPLE}"\n'
            f'journal = "state/{key}.jsonl"\nsync = "lake/{key}"\nafter = "{DAYS + 2}D"\n'
            f'billing = "billing/{key}.csv"\n'
            + (f"max_rate = {max_rate}\n" if max_rate else "")
            + f'[firms.{key}.reconcile]\nduration = "hours"\nduration_unit = "hours"\n'
            "tolerance_seconds = 18\n"
        )
        print(
            f"  {key}: customer {cid}, {len(entries)} entries released, "
            f"profile {profile or 'default'}"
        )
    (out / "firms.toml").write_text("\n".join(toml), encoding="utf-8")
    env_path = out / ".env"
    env_path.touch(mode=0o600)
    env_path.write_text("\n".join(env) + "\n", encoding="utf-8")
    os.chmod(env_path, 0o600)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run_until_stopped(
    command: list[str], env: dict[str, str], cwd: Path, grace: float = 20.0
) -> int:
    """Run ``command`` (``dagster dev``) in a process group of its own until it ends or this
    process is stopped (Ctrl+C, SIGTERM as ``make`` forwards it, SIGHUP); then stop the whole
    group (``dagster dev`` and the webserver, daemon and code servers it started): SIGTERM,
    and SIGKILL for what is left after ``grace`` seconds. Nothing stays on the port."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    proc = subprocess.Popen(command, env=env, cwd=cwd, start_new_session=True)
    try:  # a signal as soon as the group runs (even while saying so) still stops it
        print(f"{Path(command[0]).name} runs as process group {proc.pid}", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        print("stopping dagster dev and its processes", flush=True)
        _stop_group(proc, grace)
        return 130


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the group, ``grace`` seconds for its leader to end, then SIGKILL to what
    is left of the group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return  # the group is gone
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


def main(argv: list[str] | None = None) -> int:
    """Seed the firms and run ``dagster dev`` (or stop after seeding with ``--no-dev``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="out/firms-demo", help="folder for everything it writes")
    p.add_argument("--port", type=int, default=3000, help="port of the Dagster UI")
    p.add_argument("--no-dev", action="store_true", help="seed, then wait without dagster dev")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    (out / "dagster_home").mkdir(parents=True)
    (out / "dagster_home" / "dagster.yaml").write_text(DAGSTER_YAML, encoding="utf-8")
    with running(db=out / "sandbox.db") as sb:
        print(f"sandbox at {sb.url}; seeding three firms")
        seed(sb, out)
        print(f"wrote {out / 'firms.toml'} and {out / '.env'}")
        environ = {
            **os.environ,
            "DAGSTER_HOME": str(out / "dagster_home"),
            "FIRMS_FILE": str(out / "firms.toml"),
        }
        if args.no_dev:
            input("sandbox running; press Enter to stop\n")
            return 0
        command = [
            sys.executable,
            "-m",
            "dagster",
            "dev",
            "-f",
            str(HERE / "definitions.py"),
            "-h",
            "127.0.0.1",
            "-p",
            str(args.port),
        ]
        print(
            f"starting dagster dev on http://127.0.0.1:{args.port} (Ctrl+C or SIGTERM stops both)"
        )
        return run_until_stopped(command, environ, out)


if __name__ == "__main__":
    raise SystemExit(main())
