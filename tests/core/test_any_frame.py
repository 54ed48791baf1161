"""Any frame in: Polars frames and PyArrow tables work wherever a pandas frame does, and give
the same results; anything else is a ConfigError naming the argument."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import toolkit
from toolkit import Client, ConfigError, load_folder

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
BROKEN = SAMPLE / "broken"


def _new_client(sandbox) -> Client:  # noqa: ANN001
    creds = sandbox.admin.create_customer("Any frame firm")
    return Client(
        creds["customerId"],
        creds["clientId"],
        creds["clientSecret"],
        sandbox.url,
        sandbox.url,
        audience=creds["audience"],
        retries=3,
    )


def _sent(result: pd.DataFrame) -> pd.DataFrame:
    """A result frame without its timings."""
    return result.drop(columns=["elapsed"])


# -- validation ---------------------------------------------------------------------------------


def test_validate_a_polars_frame_gives_the_same_failures_as_pandas() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clients = load_folder(BROKEN)["clients"]
    clients.attrs.clear()  # the same data as a plain frame: Polars knows no file lines
    from_pandas = toolkit.validate(clients=clients)
    from_polars = toolkit.validate(clients=pl.from_pandas(clients))
    assert not from_pandas.ok
    pd.testing.assert_frame_equal(from_polars.failures, from_pandas.failures)
    pd.testing.assert_frame_equal(from_polars.frames["clients"], from_pandas.frames["clients"])


def test_validate_a_whole_broken_firm_from_polars_and_pyarrow() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frames = load_folder(BROKEN)
    for frame in frames.values():
        frame.attrs.clear()  # the same data as plain frames: Polars knows no file lines
    expected = toolkit.validate(**frames).failures
    polars = {t: pl.from_pandas(f) for t, f in frames.items()}
    arrow = {t: pa.Table.from_pandas(f, preserve_index=False) for t, f in frames.items()}
    pd.testing.assert_frame_equal(toolkit.validate(**polars).failures, expected)
    pd.testing.assert_frame_equal(toolkit.validate(**arrow).failures, expected)


def test_known_ids_may_be_a_polars_series_but_not_a_table() -> None:
    initiatives = pl.DataFrame(
        {
            "billingType": ["billable"],
            "externalId": ["M-1"],
            "name": ["A v B"],
            "description": ["Suit"],
            "callSign": ["1-1"],
            "clientExternalId": ["C-9"],
            "unitIncrements": [360],
            "status": ["active"],
        }
    )
    assert toolkit.validate(initiatives=initiatives, known={"clients": pl.Series(["C-9"])}).ok
    with pytest.raises(ConfigError, match="not a DataFrame"):
        toolkit.validate(initiatives=initiatives, known={"clients": pl.DataFrame({"a": ["C-9"]})})


# -- imports ------------------------------------------------------------------------------------


def test_a_dry_run_from_polars_builds_the_same_payloads_as_from_pandas(client: Client) -> None:
    initiatives = pd.DataFrame(
        {
            "billingType": ["billable", "non-billable"],
            "externalId": ["M-1", "M-2"],
            "name": ["Acme v. Roe", "Advice"],
            "description": ["Suit", None],
            "callSign": [1001, None],
            "clientExternalId": ["C-1", "C-1"],
            "unitIncrements": [360, 900],
            "status": ["active", "inactive"],
        }
    )
    from_pandas = client.import_initiatives(initiatives, dry_run=True)
    from_polars = client.import_initiatives(pl.from_pandas(initiatives), dry_run=True)
    pd.testing.assert_frame_equal(from_polars, from_pandas)
    assert from_polars["payload"].iloc[1]["externalId"] == "M-2"


def test_a_dry_run_of_code_ranges_from_polars_builds_the_same_payloads(client: Client) -> None:
    ranges = pl.DataFrame(
        {"initiativeExternalId": ["M-1", "M-1", "M-2"], "codeExternalId": ["L110", "L120", "L110"]}
    )
    from_polars = client.import_code_ranges(ranges, dry_run=True)
    from_pandas = client.import_code_ranges(ranges.to_pandas(), dry_run=True)
    pd.testing.assert_frame_equal(from_polars, from_pandas)


def test_pyarrow_and_polars_frames_import_like_pandas(sandbox) -> None:  # noqa: ANN001
    """The same CSV files read by pandas, Polars and PyArrow (each with its own types) import
    into three fresh customers with the same results."""
    files = {t: SAMPLE / f"{t}.csv" for t in ("clients", "initiatives")}
    readers = {
        "pandas": pd.read_csv,
        "polars": pl.read_csv,
        "pyarrow": lambda path: pacsv.read_csv(path),
    }
    results: dict[str, list[pd.DataFrame]] = {}
    for name, read in readers.items():
        client = _new_client(sandbox)
        results[name] = [
            _sent(client.import_clients(read(files["clients"]), progress=False)),
            _sent(client.import_initiatives(read(files["initiatives"]), progress=False)),
        ]
    for table in results["pandas"]:
        assert table["ok"].all() and len(table) > 0
    # pandas' read_csv alone reads the description "N/A" as missing: its warning says so
    warned = results["pandas"][1]["warning"].dropna()
    assert warned.to_dict() == {11: "description is missing; it is sent as ''"}
    for name in ("polars", "pyarrow"):
        assert results[name][1]["warning"].isna().all()
        for got, expected in zip(results[name], results["pandas"], strict=True):
            pd.testing.assert_frame_equal(
                got.drop(columns="warning"), expected.drop(columns="warning")
            )


def test_onboard_takes_a_mapping_of_polars_frames(sandbox) -> None:  # noqa: ANN001
    frames = load_folder(SAMPLE)
    client = _new_client(sandbox)
    report = client.onboard({t: pl.from_pandas(f) for t, f in frames.items()}, progress=False)
    assert report.ok
    assert report.counts["rows"].to_dict() == {t: len(f) for t, f in frames.items()}


# -- acknowledgements and starring --------------------------------------------------------------


@pytest.fixture(scope="module")
def onboarded(sandbox):  # noqa: ANN001, ANN201
    """A fresh customer with the sample firm and one timekeeper, TK-A."""
    client = _new_client(sandbox)
    assert client.onboard(SAMPLE, progress=False).ok
    user = sandbox.admin.create_user("TK-A", "Ann", "ann@x.example", customer_id=client.customer_id)
    return {"client": client, "user": user}


def _released(sandbox, client: Client, user: dict, n: int) -> list[str]:  # noqa: ANN001
    """Ids of ``n`` new entries of ``user``, released."""
    cid = client.customer_id
    entries = []
    for i in range(n):
        entry = sandbox.admin.create_entry(
            user["_id"],
            "M-1001-002",
            work_date="2026-09-10",
            increment_duration_in_seconds=600,
            summary=f"w{i}",
            customer_id=cid,
        )
        sandbox.admin.release_entry(
            user["_id"], entry["_id"], at="2026-10-01T10:00:00Z", customer_id=cid
        )
        entries.append(entry["_id"])
    return entries


def test_acknowledge_a_polars_frame(onboarded, sandbox) -> None:  # noqa: ANN001
    client, user = onboarded["client"], onboarded["user"]
    entries = _released(sandbox, client, user, 2)
    acks = pl.DataFrame(
        {
            "userId": [user["_id"]] * 2,
            "entryId": entries,
            "outcome": ["succeeded", "failed"],
            "externalId": ["INV-1", None],
            "errors": [None, "matter closed"],
        }
    )
    res = client.acknowledge(acks, progress=False)
    assert res["entryId"].tolist() == entries
    assert res["ok"].tolist() == [True, True]
    assert list(res.index) == [0, 1]
    # the same acknowledgements from pandas: the same outcome (a repeat is a no-op)
    again = client.acknowledge(acks.to_pandas(), progress=False)
    assert again["ok"].tolist() == [True, True]
    pending = set(client.release_pending().entries["_id"])
    assert not pending & set(entries)


def test_acknowledge_a_polars_frame_with_lists_of_errors(onboarded, sandbox) -> None:  # noqa: ANN001
    client, user = onboarded["client"], onboarded["user"]
    entries = _released(sandbox, client, user, 1)
    acks = pl.DataFrame(
        {
            "userId": [user["_id"]],
            "entryId": entries,
            "outcome": ["failed"],
            "errors": [["matter closed", "rate missing"]],
        }
    )
    assert client.acknowledge(acks, progress=False)["ok"].all()


def test_star_from_polars_and_unstar_from_pyarrow(onboarded) -> None:  # noqa: ANN001
    client = onboarded["client"]
    inits = load_folder(SAMPLE)["initiatives"]
    active = inits[inits["status"] == "active"]["externalId"].tolist()[:3]
    pairs = pl.DataFrame({"timekeeperExternalId": ["TK-A"] * 3, "initiativeExternalId": active})
    res = client.star(pairs, progress=False)
    assert res["initiativeExternalId"].tolist() == active and res["ok"].all()
    assert sorted(client.starred("TK-A")["initiativeExternalId"]) == sorted(active)
    res = client.unstar(pairs.to_arrow().slice(0, 1), progress=False)
    assert res["ok"].all()
    assert sorted(client.starred("TK-A")["initiativeExternalId"]) == sorted(active[1:])
    with pytest.raises(ConfigError, match="not both"):
        client.star(pairs, active)


# -- not a table --------------------------------------------------------------------------------


def test_a_list_is_a_config_error_naming_the_argument(client: Client) -> None:
    rows = [{"externalId": "C-1", "name": "Acme", "callSign": "1", "description": "x"}]
    with pytest.raises(ConfigError, match="clients must be a table .* not list"):
        toolkit.validate(clients=rows)
    with pytest.raises(ConfigError, match="df must be a table .* not list"):
        client.import_clients(rows, dry_run=True)
    with pytest.raises(ConfigError, match="frame must be a table .* not list"):
        client.acknowledge(rows, progress=False)
    with pytest.raises(ConfigError, match="clients must be a table .* not list"):
        client.onboard({"clients": rows}, dry_run=True, progress=False)
