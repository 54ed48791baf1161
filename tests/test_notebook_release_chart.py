"""Notebook 02's "Entries by acknowledgement state" chart shows the states the service has:
entries acknowledged before the notebook ran (by ``make demo``) are not drawn as pending."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from tests.conftest import T0, release_entries
from toolkit import Client

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "02_export_and_release.ipynb"


def _chart_cell() -> str:
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    [source] = [
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "Entries by acknowledgement state" in "".join(c["source"])
    ]
    return source


def _acks(entries: pd.DataFrame, outcome: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "userId": entries["userId"],
            "entryId": entries["_id"],
            "outcome": outcome,
            "externalId": "WIP-1" if outcome == "succeeded" else None,
            "errors": None if outcome == "succeeded" else [["no"]] * len(entries),
        }
    )


def test_the_chart_draws_entries_acknowledged_earlier_as_not_pending(
    fresh_client: Client,
    sandbox,  # noqa: ANN001
) -> None:
    assert fresh_client.onboard(
        Path(__file__).resolve().parent.parent / "sample_data", progress=False
    ).ok
    release_entries(sandbox, fresh_client, 8, every=timedelta(hours=3))
    entries = fresh_client.export_entries(T0, T0 + timedelta(days=2), progress=False).entries
    entries = entries.sort_values("updatedAt").reset_index(drop=True)
    earlier = fresh_client.acknowledge(_acks(entries.head(3), "succeeded"), progress=False)
    assert earlier["ok"].all()  # what `make demo` did before the notebook ran
    acks = pd.concat(
        [_acks(entries.iloc[3:5], "succeeded"), _acks(entries.iloc[5:6], "failed")],
        ignore_index=True,
    )
    acked = fresh_client.acknowledge(acks, progress=False)
    pending = fresh_client.release_pending()
    assert len(pending) == 2
    names = {uid: f"User {n}" for n, uid in enumerate(entries["userId"].unique())}
    space = {
        "pd": pd,
        "np": np,
        "plt": plt,
        "entries": entries,
        "pending": pending,
        "acks": acks,
        "acked": acked,
        "sb": None,
        "name_of": pd.Series(names),
    }
    exec(compile(_chart_cell(), str(NOTEBOOK), "exec"), space)  # noqa: S102 - the notebook's cell
    plt.close("all")
    totals = space["table"].sum()
    assert totals.to_dict() == {
        "succeeded": 2,
        "failed": 1,
        "pending": 2,
        "acknowledged earlier": 3,
    }
