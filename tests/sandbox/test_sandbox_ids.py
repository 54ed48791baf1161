"""Ids are ObjectIds like the service's (``"format": "objectid"``): they sort by creation time."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolkit.sandbox import Store
from toolkit.sandbox._models import core
from toolkit.sandbox._models.core import new_id

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def test_ids_made_a_second_apart_sort_in_creation_order(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    for second in range(20):
        now = T0.timestamp() + second + 0.999
        monkeypatch.setattr(core, "time", SimpleNamespace(time=lambda now=now: now))
        made.append(new_id())
    assert sorted(made) == made
    assert [int(i[:8], 16) for i in made] == [int(T0.timestamp()) + s for s in range(20)]


def test_ids_in_one_second_are_unique_and_the_counter_wraps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(core, "time", SimpleNamespace(time=T0.timestamp))
    monkeypatch.setattr(core._IDS, "counter", 0xFFFFFF - 5000)  # restored after the test
    made: list[str] = []

    def make() -> None:
        made.extend(new_id() for _ in range(2500))

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(made) == len(set(made)) == 10_000
    assert {i[:8] for i in made} == {f"{int(T0.timestamp()):08x}"}
    assert len({i[8:18] for i in made}) == 1  # the process's random value
    assert "000000" in {i[18:] for i in made}  # the counter wrapped


def test_bulk_seeded_ids_carry_the_time_recorded_days_before_the_release(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        customer = store.create_customer()["customerId"]
        t1 = T0 + timedelta(days=1)
        assert store.seed_entries_bulk(customer, 1000, released_from=T0, released_to=t1) == 1000
        entries = store.export_entries(customer, T0, t1)
    finally:
        store.close()
    assert len({e["_id"] for e in entries}) == 1000
    lags = []
    for i, e in enumerate(entries):  # in release order
        created = datetime.fromisoformat(e["createdAt"])
        released = T0 + (t1 - T0) * (i + 1) / 1000
        assert datetime.fromisoformat(e["updatedAt"]) == released
        assert int(e["_id"][:8], 16) == int(created.timestamp())
        assert e["workDate"] == created.date().isoformat()
        lags.append(released - created)
    assert min(lags) >= timedelta(0) and max(lags) <= timedelta(days=14)
    assert max(lags) - min(lags) > timedelta(days=13)  # spread, not one fixed lag
    ids = [e["_id"] for e in entries]
    assert sorted(ids) != ids  # recorded out of release order, as real timesheets are
