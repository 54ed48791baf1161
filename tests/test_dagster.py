"""Three firms on Dagster against one sandbox: one plain, one rate-limited, one wrong secret.

Every asset of every firm is materialized in-process (``dagster.materialize``), partition by
partition; then again, and the second pass must send no import and write no entry row.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

dg = pytest.importorskip("dagster")

import toolkit.dagster  # noqa: E402
from toolkit import Client, read_sync  # noqa: E402
from toolkit.dagster import SERVICE_TAG, assets, definitions, materialize_firms  # noqa: E402
from toolkit.firms import load, status  # noqa: E402
from toolkit.sandbox import running  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
ENTRIES = 6
FIRMS = ("harbor-lane", "slow-brook", "wrong-key")


def _source(folder: Path) -> Path:
    """A small firm from sample_data: three clients, their matters, a few codes and ranges."""
    folder.mkdir()
    read = {
        n: pd.read_csv(SAMPLE / f"{n}.csv", dtype=str, keep_default_na=False)
        for n in ("clients", "initiatives", "code_types", "codes", "code_ranges")
    }
    clients = read["clients"].head(3)
    initiatives = read["initiatives"][
        read["initiatives"]["clientExternalId"].isin(clients["externalId"])
    ]
    codes = read["codes"].head(6)
    ranges = read["code_ranges"][
        read["code_ranges"]["initiativeExternalId"].isin(initiatives["externalId"])
        & read["code_ranges"]["codeExternalId"].isin(codes["externalId"])
    ]
    for name, frame in [
        ("clients", clients),
        ("initiatives", initiatives),
        ("code_types", read["code_types"]),
        ("codes", codes),
        ("code_ranges", ranges),
    ]:
        frame.to_csv(folder / f"{name}.csv", index=False)
    return folder


def _entries(sb, customer_id: str) -> list[dict]:
    """Six released entries of a new user, the last one two days ago."""
    user = sb.admin.create_user("TK-101", "Margaret Lane", "m@example.com", customer_id=customer_id)
    now = datetime.now(UTC)
    made = []
    for i in range(ENTRIES):
        entry = sb.admin.create_entry(
            user["_id"],
            "M-1001-001",
            work_date=(now - timedelta(days=3 + i)).date(),
            increment_duration_in_seconds=360 * (i + 1),
            summary=f"work {i}",
            customer_id=customer_id,
        )
        sb.admin.release_entry(
            user["_id"], entry["_id"], at=now - timedelta(days=2, hours=i), customer_id=customer_id
        )
        made.append(entry)
    return made


def _billing(entries: list[dict], path: Path) -> None:
    """The billing extract: every entry, the first one billed ten minutes longer."""
    rows = [
        {
            "entryId": e["_id"],
            "workDate": e["workDate"],
            "matter": e["initiativeExternalId"],
            "duration": e["incrementDurationInSeconds"] + (600 if i == 0 else 0),
        }
        for i, e in enumerate(entries)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A sandbox, three customers with master data and entries, and their firms.toml."""
    root = tmp_path_factory.mktemp("firms")
    source = _source(root / "source")
    with running() as sb:
        secrets, lines = {}, []
        for key in FIRMS:
            creds = sb.admin.create_customer(key)
            # the initiatives the entries need; master_data pushes the whole folder again
            made = _setup(sb, creds, source)
            _billing(made, root / "billing" / f"{key}.csv")
            var = key.upper().replace("-", "_") + "_SECRET"
            secrets[key] = creds["clientSecret"]
            lines.append(f"{var}={'not-the-secret' if key == 'wrong-key' else secrets[key]}")
            (root / "firms.toml").open("a").write(
                f'[firms.{key}]\ncustomer_id = "{creds["customerId"]}"\n'
                f'client_id = "{creds["clientId"]}"\nclient_secret_env = "{var}"\n'
                f'auth_url = "{sb.url}"\ntime_url = "{sb.url}"\naudience = "{creds["audience"]}"\n'
                f'source = "source"\njournal = "state/{key}.jsonl"\nsync = "lake/{key}"\n'
                f'after = "10D"\nbilling = "billing/{key}.csv"\n'
                + ("max_rate = 8\n\n" if key == "slow-brook" else "\n")
            )
            if key == "slow-brook":
                sb.admin.set_profile(
                    customer_id=creds["customerId"],
                    rateLimit={"kind": "token-bucket", "perSecond": 10, "burst": 2},
                )
        (root / ".env").write_text("\n".join(lines) + "\n")
        yield sb, root, secrets


def _setup(sb, creds, source: Path) -> list[dict]:
    client = Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sb.url,
        sb.url,
        audience=creds["audience"],
    )
    frames = {
        name: pd.read_csv(source / f"{name}.csv", dtype=str) for name in ("clients", "initiatives")
    }
    assert client.onboard(frames, progress=False).ok
    return _entries(sb, creds["customerId"])


def _materialize_all(root: Path, instance) -> dict:
    built = assets(load(root / "firms.toml"), retry_policy=None)
    return {
        key: dg.materialize(built, partition_key=key, instance=instance, raise_on_error=False)
        for key in FIRMS
    }


def _meta(result, asset: str) -> dict:
    [mat] = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in mat.metadata.items()}


def _failure(result) -> str:
    found = []
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            data = event.step_failure_data
            found.append(
                data.user_failure_data.description
                if data.user_failure_data
                else data.error.message
                if data.error
                else ""
            )
    return "\n".join(found)


def _import_requests(sb) -> int:
    routes = sb.admin.stats()["routes"]
    return sum(r["count"] for name, r in routes.items() if name.endswith("/import"))


def test_three_firms_materialize_on_their_own_and_a_second_pass_changes_nothing(world):
    sb, root, secrets = world
    instance = dg.DagsterInstance.ephemeral()
    first = _materialize_all(root, instance)

    # the good firms: journal, Delta tables, reconciliation
    for key in ("harbor-lane", "slow-brook"):
        assert first[key].success, _failure(first[key])
        pushed = _meta(first[key], "master_data")
        assert pushed["failed"] == 0 and pushed["sent"] == pushed["rows"] > 0
        assert pushed["warned"] >= 0  # rows sent with a validation warning, counted
        journal = (root / "state" / f"{key}.jsonl").read_text().splitlines()
        assert len(journal) > 0 and all(json.loads(line)["status"] < 300 for line in journal)
        synced = _meta(first[key], "time_entries")
        assert synced["inserted"] == ENTRIES and synced["entries"] == ENTRIES
        assert synced["watermark"] != "none" and synced["delta_version"] >= 1
        assert len(read_sync(root / "lake" / key).entries) == ENTRIES
        rec = _meta(first[key], "reconciliation")
        assert (rec["matched"], rec["differing"]) == (ENTRIES - 1, 1)
        assert rec["missing_in_billing"] == rec["only_in_billing"] == 0

    # the wrong secret fails its own partition with the credentials message, nothing else
    bad = first["wrong-key"]
    assert not bad.success
    message = _failure(bad)
    assert "wrong-key" in message and "refused the firm's credentials" in message
    assert "WRONG_KEY_SECRET" in message
    assert not (root / "lake" / "wrong-key").exists()
    assert not (root / "state" / "wrong-key.jsonl").exists()

    # a second pass: no import request, no entry row written
    sb.admin.reset_stats()
    again = _materialize_all(root, instance)
    assert _import_requests(sb) == 0
    for key in ("harbor-lane", "slow-brook"):
        assert again[key].success, _failure(again[key])
        pushed = _meta(again[key], "master_data")
        assert (pushed["sent"], pushed["unchanged"]) == (0, pushed["rows"])
        synced = _meta(again[key], "time_entries")
        assert synced["inserted"] == synced["updated"] == 0
        assert synced["entries"] == ENTRIES
        assert len(read_sync(root / "lake" / key).entries) == ENTRIES
    assert not again["wrong-key"].success

    # `toolkit firms status` shows the failing firm as failing: its count and last error
    shown = status(load(root / "firms.toml")).set_index("firm")
    assert shown.loc["wrong-key", "state"] == "failing"
    assert shown.loc["wrong-key", "failed_runs"] == 2  # push and sync failed twice in a row
    assert (
        ": Failure: firm 'wrong-key': the identity service refused"
        in shown.loc["wrong-key", "last_error"]
    )
    assert shown.loc["harbor-lane", ["state", "failed_runs"]].tolist() == ["ok", 0]

    # no secret in any event, log line or metadata of any run
    logs = "\n".join(
        str(record)
        for result in [*first.values(), *again.values()]
        for record in instance.all_logs(result.run_id)
    )
    assert "harbor-lane" in logs
    for secret in secrets.values():
        assert secret not in logs


def test_the_firms_at_once_give_what_one_after_another_gives_and_fail_alone(world):
    # the same firms, their own journals and Delta folders, two runs at once (a thread runs
    # two firms, one after the other): each a run of firms_daily, tagged as the schedule tags it
    sb, root, _secrets = world
    text = (root / "firms.toml").read_text()
    (root / "at-once.toml").write_text(
        text.replace('"state/', '"state-at-once/').replace('"lake/', '"lake-at-once/')
    )
    firms = load(root / "at-once.toml")
    results = materialize_firms(firms, concurrency=2, retry_policy=None)
    assert list(results) == list(FIRMS)
    host = sb.url.split("//")[1]
    assert {r.dagster_run.job_name for r in results.values()} == {"firms_daily"}
    assert {r.dagster_run.tags[SERVICE_TAG] for r in results.values()} == {host}

    for key in ("harbor-lane", "slow-brook"):
        assert results[key].success, _failure(results[key])
        assert results[key].dagster_run.tags["dagster/partition"] == key
        pushed = _meta(results[key], "master_data")
        assert pushed["failed"] == 0 and pushed["sent"] == pushed["rows"] > 0
        synced = _meta(results[key], "time_entries")
        assert synced["inserted"] == synced["entries"] == ENTRIES
        rec = _meta(results[key], "reconciliation")
        assert (rec["matched"], rec["differing"]) == (ENTRIES - 1, 1)
        ids = sorted(read_sync(root / "lake-at-once" / key).entries["_id"])
        assert len(ids) == ENTRIES
        if (root / "lake" / key).exists():  # the sequential pass of the test above
            assert ids == sorted(read_sync(root / "lake" / key).entries["_id"])

    # the wrong secret fails its own run only, with the credentials message
    bad = results["wrong-key"]
    assert not bad.success
    assert "wrong-key" in _failure(bad) and "refused the firm's credentials" in _failure(bad)
    assert not (root / "lake-at-once" / "wrong-key").exists()


def test_an_unreachable_service_is_retried_by_the_retry_policy(tmp_path, monkeypatch):
    monkeypatch.setenv("NOWHERE_SECRET", "s3cr3t")
    built = assets(load(_nowhere(tmp_path)), retry_policy=dg.RetryPolicy(max_retries=2))
    result = dg.materialize([built[1]], partition_key="nowhere", raise_on_error=False)
    kinds = [e.event_type_value for e in result.all_events]
    assert kinds.count("STEP_UP_FOR_RETRY") == 2
    assert not result.success
    told = "\n".join(str(e.event_specific_data) for e in result.all_events)
    assert "token request failed: no answer (connection refused)" in told


def _nowhere(folder: Path) -> Path:
    """A firms file of one firm whose service cannot be reached (port 9 refuses)."""
    (folder / "firms.toml").write_text(
        '[firms.nowhere]\ncustomer_id = "c"\nclient_id = "i"\nclient_secret_env = '
        '"NOWHERE_SECRET"\nauth_url = "http://127.0.0.1:9"\ntime_url = "http://127.0.0.1:9"\n'
        'audience = "a"\n'
        'journal = "j.jsonl"\nsync = "lake"\n'
    )
    return folder / "firms.toml"


def test_each_call_runs_on_an_instance_made_once_and_wiped_after(tmp_path, monkeypatch):
    # making Dagster's in-memory instance costs ~0.25 s of CPU: a process makes it once
    monkeypatch.setenv("NOWHERE_SECRET", "s3cr3t")
    firms = load(_nowhere(tmp_path))
    first = materialize_firms(firms, retry_policy=None)["nowhere"]
    idle = list(toolkit.dagster._IDLE)
    assert idle and all(instance.get_runs() == [] for instance in idle)  # wiped
    second = materialize_firms(firms, retry_policy=None)["nowhere"]
    assert all(a is b for a, b in zip(toolkit.dagster._IDLE, idle, strict=True))
    assert not first.success and not second.success and first.run_id != second.run_id
    told = "\n".join(str(e.event_specific_data) for e in first.all_events)
    assert "token request failed: no answer (connection refused)" in told  # kept in the result


@pytest.mark.skipif(
    len(getattr(os, "sched_getaffinity", lambda _pid: ())(0)) < 2, reason="needs 2 cores, Linux"
)
def test_runs_at_once_keep_to_one_core_and_give_the_cores_back():
    # the GIL runs one thread at a time: across cores its hand-overs cost CPU (docs/scaling.md)
    cores, seen, release = os.sched_getaffinity(0), {}, threading.Event()

    def run() -> threading.Thread:
        pool = threading.Thread(target=release.wait, daemon=True)  # a pool a run starts
        pool.start()
        seen["run"], seen["pool"] = os.sched_getaffinity(0), os.sched_getaffinity(pool.native_id)
        return pool

    with toolkit.dagster._one_core(2) as pin, ThreadPoolExecutor(2, initializer=pin) as runs:
        left = runs.submit(run).result()
    assert len(seen["run"]) == 1 and seen["pool"] == seen["run"]
    assert os.sched_getaffinity(left.native_id) == cores  # alive after the call: given back
    assert os.sched_getaffinity(0) == cores  # the caller's thread was never moved
    release.set()
    with toolkit.dagster._one_core(1) as pin:  # one run at a time: nothing to do
        assert pin is None


def test_definitions_hold_the_assets_the_daily_job_and_its_schedule(world):
    _sb, root, _secrets = world
    defs = definitions(root / "firms.toml")
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert keys == {"master_data", "time_entries", "reconciliation"}
    job = defs.resolve_job_def("firms_daily")
    assert job.executor_def.name == "in_process"  # no process per step of a firm
    assert job.partitions_def.get_partition_keys() == list(FIRMS)
    host = world[0].url.split("//")[1]
    assert job.get_tags_for_partition_key("slow-brook", None)[SERVICE_TAG] == host
    schedule = defs.resolve_schedule_def("firms_daily_schedule")
    at = datetime(2026, 3, 2, 6, tzinfo=UTC)
    context = dg.build_schedule_context(
        scheduled_execution_time=at, repository_def=defs.get_repository_def()
    )
    requests = schedule.evaluate_tick(context).run_requests
    assert [r.partition_key for r in requests] == list(FIRMS)
    assert {r.tags[SERVICE_TAG] for r in requests} == {host}
