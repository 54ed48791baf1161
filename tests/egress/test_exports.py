"""Exports, release-pending and acknowledgements through the Client, against the sandbox."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pytest

from toolkit import Client, ValidationError, reconcile
from toolkit._egress.schemas import ExportCodesSchema, ExportEntriesSchema
from toolkit._egress.users import timekeeper_id

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
T0 = datetime(2026, 10, 1, tzinfo=UTC)


@pytest.fixture
def released(fresh_client: Client, sandbox):  # noqa: ANN201
    """A fresh firm with 12 entries released one per hour from T0 + 1h, by two users."""
    assert fresh_client.onboard(SAMPLE, progress=False).ok
    cid = fresh_client.customer_id
    users = [sandbox.admin.create_user(f"TK-{i}", f"User {i}", customer_id=cid) for i in (1, 2)]
    entries = []
    for i in range(12):
        user = users[i % 2]
        codes = [] if i == 0 else ["L110", "A101", "L120"][: 1 + i % 3]
        entry = sandbox.admin.create_entry(
            user["_id"],
            "M-1001-002",
            work_date=f"2026-09-{10 + i:02d}",
            increment_duration_in_seconds=600 + 60 * i,
            summary=f"Work № {i} — résumé ✓",
            codes=codes,
            customer_id=cid,
        )
        sandbox.admin.release_entry(
            user["_id"], entry["_id"], at=T0 + timedelta(hours=i + 1), customer_id=cid
        )
        entries.append({**entry, "userId": user["_id"]})
    return {"client": fresh_client, "entries": entries, "users": users}


def test_export_window_is_after_exclusive_and_on_or_before_inclusive(released) -> None:
    client = released["client"]
    ex = client.export_entries(T0 + timedelta(hours=1), T0 + timedelta(hours=4))
    assert len(ex.entries) == 3  # hours 2, 3, 4
    whole = client.export_entries(T0, T0 + timedelta(hours=12))
    assert len(whole.entries) == 12
    assert client.export_entries(T0 + timedelta(hours=12), T0 + timedelta(days=1)).entries.empty


def test_windowed_export_equals_one_shot_without_duplicates(released) -> None:
    client = released["client"]
    one = client.export_entries(T0, T0 + timedelta(hours=12))
    windowed = client.export_entries(
        T0.isoformat(), pd.Timestamp(T0) + pd.Timedelta("12h"), window="90min"
    )
    assert sorted(windowed.entries["_id"]) == sorted(one.entries["_id"])
    assert windowed.entries["_id"].is_unique
    assert (
        len(windowed.codes) == len(one.codes) == sum(len(e["codes"]) for e in released["entries"])
    )


def test_exported_tables_are_typed_and_keep_zero_and_many_codes(released) -> None:
    ex = released["client"].export_entries(T0, T0 + timedelta(days=1))
    ExportEntriesSchema.validate(ex.entries)
    ExportCodesSchema.validate(ex.codes)
    e = ex.entries.set_index("_id")
    assert str(e["updatedAt"].dtype).startswith("datetime64") and e["updatedAt"].dt.tz is not None
    assert e["initiative.client.externalId"].eq("C-1001").all()
    no_codes = [x["_id"] for x in released["entries"] if not x["codes"]]
    assert no_codes[0] in e.index and no_codes[0] not in set(ex.codes["entryId"])
    assert e["summary"].str.contains("résumé ✓").all()
    wide = ex.codes_wide()
    assert {"task-code", "activity-code"} <= set(wide.columns)


def test_unparseable_or_inverted_bounds_raise_before_sending(released) -> None:
    from toolkit.errors import ConfigError

    with pytest.raises((ConfigError, ValueError)):
        released["client"].export_entries("not a date", T0)
    with pytest.raises((ConfigError, ValueError)):
        released["client"].export_entries(T0 + timedelta(days=1), T0)


def test_export_to_parquet_streams_windows_into_a_dataset(released, tmp_path) -> None:
    client = released["client"]
    totals = client.export_to_parquet(T0, T0 + timedelta(hours=12), tmp_path / "ds", window="4h")
    assert totals["entries"] == 12 and totals["windows"] == 3
    table = ds.dataset(tmp_path / "ds" / "entries", format="parquet", partitioning="hive")
    assert table.count_rows() == 12


def test_export_to_parquet_counts_each_window_once_however_many_it_holds(
    fresh_client, tmp_path, monkeypatch
) -> None:  # noqa: ANN001
    """Windows of a few entries each are held until ROWS_PER_GROUP gather: the entries held
    are counted as each window comes, never summed again over every window held."""
    import json

    from toolkit._egress import fetch
    from toolkit._egress.export import Export
    from toolkit.testing import fake_export_entries

    windows = 400
    parts = [Export.from_json(json.dumps([e])) for e in fake_export_entries(windows, seed=3)]
    monkeypatch.setattr(fetch, "iter_export", lambda *args, **kwargs: iter(parts))
    sized, size = [0], Export.__len__

    def counted(self: Export) -> int:
        sized[0] += 1
        return size(self)

    monkeypatch.setattr(Export, "__len__", counted)
    totals = fresh_client.export_to_parquet(T0, T0 + timedelta(days=1), tmp_path / "ds")
    assert (totals["entries"], totals["windows"]) == (windows, windows)
    assert sized[0] <= 4 * windows, sized[0]  # summed anew each window: windows**2 / 2, 80,000


def test_acknowledge_every_outcome(released, sandbox) -> None:
    client = released["client"]
    e = released["entries"]
    acks = pd.DataFrame(
        {
            "userId": [
                e[1]["userId"],
                e[2]["userId"],
                e[3]["userId"],
                e[3]["userId"],
                e[4]["userId"],
            ],
            "entryId": [e[1]["_id"], e[2]["_id"], "0" * 24, e[4]["_id"], e[5]["_id"]],
            "outcome": ["succeeded", "failed", "succeeded", "succeeded", "failed"],
            "externalId": ["INV-1", None, "INV-X", "INV-4", None],
            "errors": [None, "rate missing; client closed", None, None, ["matter closed"]],
        },
        index=list("abcde"),
    )
    res = client.acknowledge(acks, progress=False)
    assert list(res.index) == list("abcde")
    # c: unknown entry; d and e: the entry belongs to another user than the one given -> 404
    assert res["httpStatus"].tolist() == [200, 200, 404, 404, 404]
    assert res["ok"].tolist() == [True, True, False, False, False]
    # same acknowledgement again: safe no-op; a conflicting one: 409, reported not retried
    again = client.acknowledge(acks.loc[["a", "b"]], progress=False)
    assert again["ok"].all()
    conflict = acks.loc[["a"]].assign(externalId="INV-OTHER")
    res2 = client.acknowledge(conflict, progress=False)
    # issue 25: the batch's CONFLICT item goes once more on the per-entry route, whose answer
    # names the entry's state: two requests carried it, neither a retry
    assert res2.loc["a", "httpStatus"] == 409 and res2.loc["a", "attempts"] == 2
    assert res2.loc["a", "error"]
    flipped = acks.loc[["b"]].assign(outcome="succeeded", externalId="INV-2")
    assert client.acknowledge(flipped, progress=False).loc["b", "httpStatus"] == 409
    pending = client.release_pending()
    assert e[1]["_id"] not in set(pending.entries["_id"])
    assert e[2]["_id"] not in set(pending.entries["_id"])
    assert e[6]["_id"] in set(pending.entries["_id"])


def test_acknowledgement_error_containing_a_semicolon_is_stored_as_one_message(
    released, sandbox
) -> None:
    client = released["client"]
    entry = released["entries"][2]
    acks = pd.DataFrame(
        {
            "userId": [entry["userId"]],
            "entryId": [entry["_id"]],
            "outcome": ["failed"],
            "errors": ["rate missing; client closed"],
        }
    )
    assert client.acknowledge(acks, progress=False)["ok"].all()
    stored = {e["_id"]: e for e in sandbox.admin.records("entries", customer_id=client.customer_id)}
    assert stored[entry["_id"]]["errors"] == ["rate missing; client closed"]


def test_acknowledge_validates_before_sending(released, sandbox) -> None:
    bad = pd.DataFrame(
        {
            "userId": ["u", ""],
            "entryId": ["e1", "e2"],
            "outcome": ["succeeded", "Failed"],
            "externalId": [None, None],
        }
    )
    sandbox.admin.reset_stats()
    with pytest.raises(ValidationError) as info:
        released["client"].acknowledge(bad, progress=False)
    assert len(info.value.failure_cases) >= 2  # the empty userId and the outcome
    assert sandbox.admin.stats()["total"] == 0


def test_release_pending_is_the_detailed_form(released) -> None:
    pending = released["client"].release_pending()
    assert len(pending.entries) == 12
    cols = set(pending.entries.columns)
    assert {
        "initiativeProps.colorHex",
        "initiativeProps.tags",
        "initiativeProps.initiative.client.externalId",
    } <= cols
    assert "assignedBy" not in set(pending.codes.columns)


def test_reconcile_then_acknowledge_round_trip(released) -> None:
    client = released["client"]
    ex = client.export_entries(T0, T0 + timedelta(days=1))
    billing = pd.DataFrame(
        {
            "entryId": ex.entries["_id"],
            "duration": ex.entries["incrementDurationInSeconds"],
            "workDate": ex.entries["workDate"],
            "matter": ex.entries["initiative.externalId"],
            "billingId": [f"B-{i}" for i in range(len(ex.entries))],
        }
    )
    billing.loc[billing.index[0], "duration"] += 360
    billing = billing.drop(index=billing.index[1])
    rec = reconcile(ex.entries, billing)
    assert rec.summary["matched"] == 10 and rec.summary["duration_differs"] == 1
    assert rec.summary["missing_in_billing"] == 1
    res = client.acknowledge(rec.to_acknowledge(), progress=False)
    assert res["ok"].all() and len(res) == 12
    assert client.release_pending().entries.empty


def test_users_frame_reports_unknown_ids_as_rows(released) -> None:
    client = released["client"]
    ids = [u["_id"] for u in released["users"]] + ["0" * 24]
    frame = client.users(ids)
    assert frame["_id"].tolist() == ids
    assert frame["error"].isna().tolist() == [True, True, False]
    assert frame.loc[0, "timekeeperExternalId"] == "TK-1"  # from the billing identity
    assert timekeeper_id(client.user(ids[0])) == "TK-1"


def test_timekeeper_id_prefers_the_field_and_is_none_without_one() -> None:
    assert timekeeper_id({"timekeeperExternalId": "TK-2"}) == "TK-2"
    assert timekeeper_id({}) is None


def test_acknowledge_nothing_is_an_empty_result(released, sandbox) -> None:
    sandbox.admin.reset_stats()
    res = released["client"].acknowledge(
        pd.DataFrame(columns=["userId", "entryId", "outcome"]), progress=False
    )
    assert res.empty and "ok" in res.columns
    assert sandbox.admin.stats()["total"] == 0


def test_acknowledgement_failures_name_the_column_that_is_wrong(released) -> None:
    bad = pd.DataFrame(
        {"userId": ["u", "u"], "entryId": ["e1", "e2"], "outcome": ["succeeded", "failed"]},
        index=[4, 4],
    )
    with pytest.raises(ValidationError) as info:
        released["client"].acknowledge(bad, progress=False)
    cases = info.value.failure_cases
    # a succeeded row without externalId is no failure (issue 25: optional, as published)
    assert sorted(zip(cases["row"], cases["column"], cases["externalId"], strict=True)) == [
        (1, "errors", "e2"),
    ]


# -- progress on by default for the long operations --------------------------------------------


def test_long_operations_show_progress_by_default() -> None:
    import inspect

    from toolkit._egress import fetch
    from toolkit._egress import sync as syncing

    for func in (fetch.export_entries, fetch.iter_export, fetch.export_to_parquet, syncing.sync):
        assert inspect.signature(func).parameters["progress"].default is True, func.__name__


def test_an_empty_export_body_is_an_error_naming_the_window_not_zero_entries(
    fresh_client, tmp_path, monkeypatch
) -> None:  # noqa: ANN001
    # the published documents declare no body for the v2 export: an empty one is not "none"
    from toolkit.errors import FlattenError

    monkeypatch.setattr(fresh_client.connection, "call", lambda *args, **kwargs: b"")
    with pytest.raises(FlattenError, match=r"window 2026-11-01T00:00:00.000Z .* empty body"):
        fresh_client.export_entries("2026-11-01", "2026-11-02")
    with pytest.raises(FlattenError, match="empty body"):
        fresh_client.sync(tmp_path / "time", after="2026-11-01", on_or_before="2026-11-02")
    from toolkit._egress import sync_status

    assert sync_status(tmp_path / "time")["watermark"] is None  # the sync did not move past it


def test_an_empty_release_pending_body_is_an_error_not_nothing_pending(
    fresh_client, monkeypatch
) -> None:  # noqa: ANN001
    # issue 39: the documents publish an array for release-pending; no body is not "none pending"
    from toolkit.errors import FlattenError

    monkeypatch.setattr(fresh_client.connection, "call", lambda *args, **kwargs: b"")
    with pytest.raises(FlattenError, match="release-pending came back with an empty body"):
        fresh_client.release_pending()
