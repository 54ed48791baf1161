"""Issue 37: one result frame. Every call that sends rows (imports, ``onboard``, ``acknowledge``,
``star``, ``unstar``) returns the same core columns with the same meaning and dtype, and no frame
the toolkit returns mixes ``None`` and ``NaN`` in an ``object`` column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from toolkit import Client, load_folder, validate

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"
CORE = ["status", "ok", "httpStatus", "error", "attempts"]


@pytest.fixture(scope="module")
def results(sandbox: Any) -> dict[str, pd.DataFrame]:
    """A fresh customer's result frame of every sending call."""
    creds = sandbox.admin.create_customer("Result columns firm")
    client = Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sandbox.url,
        sandbox.url,
        audience=creds["audience"],
        retries=1,
    )
    cid = client.customer_id
    frames = load_folder(SAMPLE)
    out = {"import_clients": client.import_clients(frames["clients"].head(2), progress=False)}
    out["onboard"] = client.onboard(SAMPLE, progress=False).results
    user = sandbox.admin.create_user("TK-A", "Ann", "ann@x.example", customer_id=cid)
    entry = sandbox.admin.create_entry(
        user["_id"],
        "M-1001-002",
        work_date="2026-09-10",
        increment_duration_in_seconds=600,
        summary="w",
        customer_id=cid,
    )
    sandbox.admin.release_entry(
        user["_id"], entry["_id"], at="2026-10-01T10:00:00Z", customer_id=cid
    )
    acks = pd.DataFrame(
        {
            "userId": [user["_id"]] * 2,
            "entryId": [entry["_id"], "0" * 24],
            "outcome": ["succeeded"] * 2,
            "externalId": ["INV-1"] * 2,
        }
    )
    out["acknowledge"] = client.acknowledge(acks, progress=False)
    out["star"] = client.star("TK-A", ["M-1001-001", "M-NOPE"], progress=False)
    out["unstar"] = client.unstar("TK-A", ["M-1001-001"], progress=False)
    return out


def test_every_sending_call_has_the_same_core_columns_and_dtypes(results) -> None:
    dtypes = {name: res[CORE].dtypes.astype(str).to_dict() for name, res in results.items()}
    assert all(d == dtypes["import_clients"] for d in dtypes.values()), dtypes
    assert dtypes["star"] == {
        "status": "category",
        "ok": "bool",
        "httpStatus": "Int16",
        "error": "string",
        "attempts": "Int16",
    }
    categories = {name: list(res["status"].cat.categories) for name, res in results.items()}
    assert all(c == categories["onboard"] for c in categories.values())


def test_star_and_unstar_status_is_the_outcome_and_httpstatus_the_item_s(results) -> None:
    star, unstar = results["star"], results["unstar"]
    assert star["status"].tolist() == ["sent", "failed"]
    assert star["httpStatus"].tolist() == [200, 404]
    assert star["errorCode"].tolist()[1] == 20080 and pd.isna(star["errorCode"].iloc[0])
    assert pd.isna(star["error"].iloc[0]) and "not found" in star["error"].iloc[1]
    assert star["attempts"].tolist() == [1, 1] and star["ok"].tolist() == [True, False]
    assert "errorMessage" not in star
    assert unstar["status"].tolist() == ["sent"] and unstar["httpStatus"].tolist() == [200]


def _mixed(frame: pd.DataFrame) -> dict[str, set[str]]:
    """Object columns holding ``None`` or a float NaN as a missing value."""
    out = {}
    for col in frame.columns:
        if frame[col].dtype == object:
            kinds = {
                type(v).__name__
                for v in frame[col]
                if v is None or (isinstance(v, float) and np.isnan(v))
            }
            if kinds:
                out[str(col)] = kinds
    return out


def test_no_result_or_failure_frame_holds_none_or_nan_in_an_object_column(results) -> None:
    failures = validate(**load_folder(SAMPLE / "broken")).failures
    assert failures["externalId"].isna().any() and failures["value"].isna().any()
    assert _mixed(failures) == {}
    assert str(failures["externalId"].dtype) == "string"
    for name, res in results.items():
        assert _mixed(res) == {}, name
