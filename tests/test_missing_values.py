"""Issue 37: one missing-value convention in every frame the toolkit returns.

Every column of a returned frame has one of pandas' nullable dtypes (``string``, ``Int*``,
``Float64``, ``boolean``), a ``category``, a UTC ``datetime64`` (missing: ``NaT``), or a
``bool``/``int64`` that cannot be missing: never ``object``, the NaN-based ``str`` or
``float64``, so every missing value is ``pd.NA`` (``<NA>``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit import firms, load_folder, validate

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def _offenders(frame: pd.DataFrame) -> dict[str, str]:
    """Columns whose dtype is not of the convention, with their dtype."""
    out = {}
    for col in frame.columns:
        dtype = frame[col].dtype
        ok = (
            isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype))
            and getattr(dtype, "na_value", pd.NA) is pd.NA
            or pd.api.types.is_extension_array_dtype(dtype)
            and not isinstance(dtype, pd.StringDtype)
            or isinstance(dtype, pd.DatetimeTZDtype)
            or str(dtype).startswith(("datetime64", "timedelta64"))
            or str(dtype) in ("bool", "int64")
            or pd.api.types.is_object_dtype(dtype)
            and _lists_or_values(frame[col])
        )
        if not ok:
            out[str(col)] = str(dtype)
    return out


def _lists_or_values(s: pd.Series) -> bool:
    """An ``object`` column of lists (``None`` where a row has none), or of cells as read
    (any type) with ``pd.NA`` for a missing one, never ``NaN``."""
    values = s.tolist()
    if all(v is None or isinstance(v, list | dict) for v in values):
        return True
    return not any(v is None or isinstance(v, float) and v != v for v in values)


@pytest.fixture(scope="module")
def frames(client: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """Every kind of frame the public calls return, by a name saying where it came from."""
    out: dict[str, pd.DataFrame] = {}
    folder = load_folder(SAMPLE)
    out |= {f"load_folder[{k}]": v for k, v in folder.items()}
    report = validate(**load_folder(SAMPLE / "broken"))
    out |= {"validate.failures": report.failures, "validate.summary": report.summary()}
    plan = client.plan(SAMPLE)
    out |= {"plan.rows": plan.rows, "plan.counts": plan.counts, "plan.to_frame": plan.to_frame()}
    out["import_clients"] = client.import_clients(folder["clients"].head(2), progress=False)
    onboard = client.onboard(SAMPLE, progress=False)
    out |= {"onboard.results": onboard.results, "onboard.failures": onboard.failures}
    export = client.export_entries("2000-01-01", "2100-01-01", progress=False)
    out |= {"export.entries": export.entries, "export.codes": export.codes}
    out["export.codes_wide"] = export.codes_wide()
    pending = client.release_pending()
    out |= {"pending.entries": pending.entries, "pending.codes": pending.codes}
    out["users"] = client.users(export.entries["userId"].unique()[:3])
    tk = pd.read_csv(SAMPLE / "timekeepers.csv")["timekeeperExternalId"].iloc[0]
    out["star"] = client.star(tk, list(folder["initiatives"]["externalId"].head(2)), progress=False)
    out["starred"] = client.starred(tk)
    out["starred_many"] = client.starred_many([tk])
    rec = toolkit.reconcile(
        export.entries, export.entries.head(3).rename(columns={"_id": "entryId"})
    )
    out |= {"reconcile.rows": pd.DataFrame(rec.rows), "reconcile.by_user": rec.by_user()}
    out["reconcile.to_acknowledge"] = rec.to_acknowledge()
    out["reconcile.by_initiative"] = rec.by_initiative()
    invoice = toolkit.read_ledes(SAMPLE.parent / "tests/reconciliation/ledes/public_98bi_v2.txt")
    out["read_ledes"] = invoice
    ledes = toolkit.reconcile(export.entries, invoice, timekeepers={}, codes=export.codes)
    out["reconcile(ledes).rows"] = pd.DataFrame(ledes.rows)
    out |= {f"codesets.{t}": f for t, f in toolkit.codesets.load("utbms-litigation").items()}
    acks = rec.to_acknowledge().head(2)
    out["acknowledge"] = client.acknowledge(acks, progress=False)
    out["starred_pages"] = next(iter(client.starred_pages(tk)))
    tmp = tmp_path_factory.mktemp("frames")
    for name, path in (("to_parquet", tmp / "p"), ("to_csv", tmp / "c")):
        again = type(export).read_parquet if name == "to_parquet" else type(export).read_csv
        getattr(export, name)(path)
        back = again(path)
        out |= {f"{name}.entries": back.entries, f"{name}.codes": back.codes}
    client.sync(tmp / "lake", after="2000-01-01", window="30D", progress=False)  # 330 windows
    synced = toolkit.read_sync(tmp / "lake")
    out |= {"read_sync.entries": synced.entries, "read_sync.codes": synced.codes}
    for table, frame in folder.items():
        frame.to_excel(tmp / f"{table}.xlsx", index=False)
    out |= {f"load_folder[{t}.xlsx]": load_folder(tmp / f"{t}.xlsx")[t] for t in folder}
    toml = tmp / "firms.toml"
    toml.write_text(
        '[firms.a]\ncustomer_id = "c"\nclient_id = "i"\nclient_secret_env = "S"\n'
        'auth_url = "https://a.example"\ntime_url = "https://t.example"\n'
        'audience = "https://t.example"\njournal = "j.jsonl"\nsync = "lake"\n',
        encoding="utf-8",
    )
    out["firms.status"] = firms.status(firms.load(toml))
    dry = client.import_clients(folder["clients"].head(2), dry_run=True, progress=False)
    out["import_clients(dry_run)"] = dry
    return out


def test_every_frame_the_toolkit_returns_has_one_missing_value_convention(frames) -> None:
    assert len(frames) > 40
    offenders = {name: _offenders(frame) for name, frame in frames.items()}
    assert {name: cols for name, cols in offenders.items() if cols} == {}


def test_a_missing_text_a_missing_number_and_a_missing_hour_print_alike(frames) -> None:
    status = frames["firms.status"]  # a firm never run: no error, no count
    assert status["last_error"].iloc[0] is pd.NA and status["sent"].iloc[0] is pd.NA
    failures = frames["validate.failures"]
    assert failures["externalId"].isna().any() and failures["row"].isna().any()
    assert {type(v) for v in failures["externalId"] if pd.isna(v)} == {type(pd.NA)}
    by_user = frames["reconcile.by_user"]
    assert str(by_user["hours_billed"].dtype) == "Float64"


def test_the_check_refuses_nan_based_text_floats_and_mixed_object_columns() -> None:
    frame = pd.DataFrame(
        {
            "t": pd.Series(["a", None], dtype="str"),
            "f": [1.0, None],
            "o": pd.Series(["a", None], dtype=object).where(pd.Series([True, False])),
            "ok": pd.Series(["a", None], dtype="string"),
            "lists": [["a"], None],
        }
    )
    assert _offenders(frame) == {"t": "str", "f": "float64", "o": "object"}
