"""toolkit._ingress.payloads: checked frames -> JSON bodies exactly as the spec's field tables."""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import check
from toolkit._bulk.journal import payload_hash
from toolkit._ingress import payloads
from toolkit._ingress.payloads import (
    CodeRangePayload,
    to_code_range_payloads,
    to_payloads,
)
from toolkit._ingress.validation import load_folder, validate
from toolkit.schemas import TABLES

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
NATIVE = (str, int, bool, type(None))


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    report = validate(**load_folder(SAMPLE))
    assert report.ok
    return report.frames


@pytest.mark.parametrize("table", ["clients", "initiatives", "code_types", "codes"])
def test_one_payload_per_row_with_exactly_the_spec_fields_in_order(
    frames: dict[str, pd.DataFrame], table: str
) -> None:
    bodies = to_payloads(table, frames[table])
    assert len(bodies) == len(frames[table])
    spec = [c for c in TABLES[table].columns if c not in TABLES[table].optional]
    assert all(list(b) == spec for b in bodies)  # the sample data has no optional column


def test_optional_fields_are_sent_only_where_a_row_has_a_value() -> None:
    codes = pd.DataFrame(
        {
            "externalId": ["L1", "L2", "L3"],
            "name": ["a", "b", "c"],
            "description": "",
            "codeTypeExternalId": "T",
            "orderingSequence": [10, "", None],
            "group": ["lit", " ", None],
            "isDisabled": ["TRUE", "", "0"],
            "userGroupExternalIds": ["UG1; UG2", "", ["UG3"]],
        }
    )
    bodies = to_payloads("codes", check("codes", codes))
    assert bodies == [
        {
            "externalId": "L1",
            "name": "a",
            "description": "",
            "codeTypeExternalId": "T",
            "orderingSequence": "10",
            "group": "lit",
            "userGroupExternalIds": ["UG1", "UG2"],
            "isDisabled": True,
        },
        {"externalId": "L2", "name": "b", "description": "", "codeTypeExternalId": "T"},
        {
            "externalId": "L3",
            "name": "c",
            "description": "",
            "codeTypeExternalId": "T",
            "userGroupExternalIds": ["UG3"],
            "isDisabled": False,
        },
    ]
    initiatives = pd.DataFrame(
        {
            "billingType": ["billable"] * 2,
            "externalId": ["M1", "M2"],
            "name": "n",
            "description": "",
            "callSign": "",
            "clientExternalId": "C",
            "unitIncrements": 360,
            "status": "active",
            "locale": ["fr-CA", ""],
            "allowFrom": [pd.Timestamp("2026-01-01"), None],
            "allowTo": ["2026-12-31", ""],
            "externalGroupIds": ['["G;1", "G2"]', ""],
        }
    )
    first, second = to_payloads("initiatives", check("initiatives", initiatives))
    assert {k: first[k] for k in ("locale", "allowFrom", "allowTo", "externalGroupIds")} == {
        "locale": "fr-CA",
        "allowFrom": "2026-01-01",
        "allowTo": "2026-12-31",
        "externalGroupIds": ["G;1", "G2"],
    }
    assert not {"locale", "allowFrom", "allowTo", "externalGroupIds"} & set(second)
    assert to_payloads(
        "clients",
        check(
            "clients",
            pd.DataFrame(
                {
                    "externalId": ["C1", "C2"],
                    "name": "n",
                    "callSign": "",
                    "description": "",
                    "type": ["parent", None],
                }
            ),
        ),
    ) == [
        {"externalId": "C1", "name": "n", "callSign": "", "description": "", "type": "parent"},
        {"externalId": "C2", "name": "n", "callSign": "", "description": ""},
    ]


@pytest.mark.parametrize("table", ["clients", "initiatives", "code_types", "codes"])
def test_payload_values_are_native_python_and_strict_json(
    frames: dict[str, pd.DataFrame], table: str
) -> None:
    bodies = to_payloads(table, frames[table])
    for body in bodies:
        assert all(type(v) in NATIVE for v in body.values()), body
    assert json.loads(json.dumps(bodies, allow_nan=False)) == bodies


def test_initiative_payload_types(frames: dict[str, pd.DataFrame]) -> None:
    body = to_payloads("initiatives", frames["initiatives"])[0]
    assert body == {
        "billingType": "billable",
        "externalId": "M-1001-001",
        "name": "Northwind v. Keystone Freight Lines",
        "description": "Breach of contract action, N.D. Ill., No. 1:23-cv-04417.",
        "callSign": "1001-001",
        "clientExternalId": "C-1001",
        "unitIncrements": 360,
        "status": "active",
    }
    assert type(body["unitIncrements"]) is int


def test_code_type_payload_has_real_booleans_and_null_semantic_type(
    frames: dict[str, pd.DataFrame],
) -> None:
    bodies = {b["externalId"]: b for b in to_payloads("code_types", frames["code_types"])}
    assert bodies["task-code"]["semanticType"] == "task"
    assert bodies["expense-code"]["semanticType"] is None
    assert bodies["expense-code"]["customerDefaultable"] is False
    assert bodies["task-code"]["userDefaultable"] is True


def test_unicode_survives_into_payloads(frames: dict[str, pd.DataFrame]) -> None:
    names = {b["name"] for b in to_payloads("clients", frames["clients"])}
    assert "Müller & Søn GmbH" in names


def test_payloads_follow_row_order_and_ignore_extra_columns() -> None:
    df = pd.DataFrame(
        {
            "note": ["x", "y"],
            "externalId": ["C-2", "C-1"],
            "name": ["B", "A"],
            "callSign": ["2", "1"],
            "description": ["b", "a"],
        },
        index=[7, 3],
    )
    assert [b["externalId"] for b in to_payloads("clients", df)] == ["C-2", "C-1"]
    assert "note" not in to_payloads("clients", df)[0]


def test_numpy_and_nullable_dtypes_become_native_types() -> None:
    df = pd.DataFrame(
        {
            "externalId": np.array(["t"], dtype=object),
            "name": pd.array(["t"], dtype="string"),
            "semanticType": [np.nan],
            "customerDefaultable": pd.array([True], dtype="boolean"),
            "userDefaultable": np.array([np.bool_(False)]),
        }
    )
    body = to_payloads("code_types", df)[0]
    assert body == {
        "externalId": "t",
        "name": "t",
        "semanticType": None,
        "customerDefaultable": True,
        "userDefaultable": False,
    }
    assert all(type(v) in NATIVE for v in body.values())


def test_whole_float_unit_increments_become_int() -> None:
    df = check("initiatives", _initiative()).astype({"unitIncrements": "float64"})
    assert type(to_payloads("initiatives", df)[0]["unitIncrements"]) is int


def test_unchecked_frame_with_a_missing_required_value_is_refused() -> None:
    df = check("initiatives", _initiative()).astype({"name": object})
    df.loc[df.index[0], "name"] = None
    with pytest.raises(ValueError, match="check the frame first"):
        to_payloads("initiatives", df)


def test_fractional_unit_increments_are_sent_as_a_float() -> None:
    df = check("initiatives", _initiative()).astype({"unitIncrements": "float64"})
    df["unitIncrements"] = 360.5
    body = to_payloads("initiatives", df)[0]
    assert type(body["unitIncrements"]) is float and body["unitIncrements"] == 360.5


def test_unchecked_frame_with_an_infinite_number_is_refused() -> None:
    df = check("initiatives", _initiative()).astype({"unitIncrements": "float64"})
    df["unitIncrements"] = math.inf
    with pytest.raises(ValueError, match="check the frame first"):
        to_payloads("initiatives", df)


def test_missing_column_is_refused() -> None:
    with pytest.raises(ValueError, match="missing column"):
        to_payloads("clients", pd.DataFrame({"externalId": ["C-1"]}))


def test_code_ranges_point_to_the_grouping_function() -> None:
    with pytest.raises(ValueError, match="to_code_range_payloads"):
        to_payloads("code_ranges", pd.DataFrame())


# --- code ranges ------------------------------------------------------------------------------


def test_code_ranges_group_per_initiative_in_first_seen_order_with_row_labels() -> None:
    df = pd.DataFrame(
        {
            "initiativeExternalId": ["M-2", "M-1", "M-2", "M-1", "M-3"],
            "codeExternalId": ["L110", "L120", "A101", "L130", "E101"],
        },
        index=["a", "b", "c", "d", "e"],
    )
    result = to_code_range_payloads(df)
    assert result == [
        ("M-2", {"codeExternalIds": ["L110", "A101"]}, ["a", "c"]),
        ("M-1", {"codeExternalIds": ["L120", "L130"]}, ["b", "d"]),
        ("M-3", {"codeExternalIds": ["E101"]}, ["e"]),
    ]
    assert isinstance(result[0], CodeRangePayload)
    assert result[0].initiative_external_id == "M-2"
    assert result[0].rows == ["a", "c"]


def test_code_range_rows_cover_every_input_row(frames: dict[str, pd.DataFrame]) -> None:
    df = frames["code_ranges"]
    result = to_code_range_payloads(df)
    labels = [label for item in result for label in item.rows]
    assert sorted(labels) == sorted(df.index)
    assert sum(len(item.payload["codeExternalIds"]) for item in result) == len(df)
    for item in result:
        assert all(type(c) is str for c in item.payload["codeExternalIds"])
        assert type(item.initiative_external_id) is str


def test_code_range_repeated_code_is_sent_once_but_both_rows_are_kept() -> None:
    df = pd.DataFrame({"initiativeExternalId": ["M-1", "M-1"], "codeExternalId": ["L1", "L1"]})
    assert to_code_range_payloads(df) == [("M-1", {"codeExternalIds": ["L1"]}, [0, 1])]


def test_code_range_with_a_missing_value_is_refused() -> None:
    df = pd.DataFrame({"initiativeExternalId": ["M-1", None], "codeExternalId": ["L1", "L2"]})
    with pytest.raises(ValueError, match="check the frame first"):
        to_code_range_payloads(df)


def test_empty_code_range_frame_gives_no_payloads() -> None:
    df = pd.DataFrame({"initiativeExternalId": [], "codeExternalId": []}, dtype=object)
    assert to_code_range_payloads(df) == []


# --- hashes -----------------------------------------------------------------------------------


def test_payload_hash_is_sha256_of_canonical_json() -> None:
    body = {"name": "Müller", "externalId": "C-1"}
    canonical = '{"externalId":"C-1","name":"Müller"}'
    assert payload_hash(body) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_payload_hash_ignores_key_order_but_not_content() -> None:
    a = {"externalId": "C-1", "name": "A", "nested": {"y": 1, "x": [1, 2]}}
    b = {"nested": {"x": [1, 2], "y": 1}, "name": "A", "externalId": "C-1"}
    assert payload_hash(a) == payload_hash(b)
    assert payload_hash(a) != payload_hash({**a, "name": "B"})
    assert payload_hash({"codeExternalIds": ["L1", "L2"]}) != payload_hash(
        {"codeExternalIds": ["L2", "L1"]}
    )


def test_payload_hash_distinguishes_types() -> None:
    assert payload_hash({"v": 1}) != payload_hash({"v": "1"})
    assert payload_hash({"v": True}) != payload_hash({"v": 1})
    assert payload_hash({"v": None}) != payload_hash({"v": "null"})


def test_payload_hash_refuses_nan() -> None:
    with pytest.raises(ValueError):
        payload_hash({"v": math.nan})


def test_public_names_are_exported_and_documented_with_an_example() -> None:
    for name, obj in vars(payloads).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != payloads.__name__:
            continue
        if inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), name


def _initiative() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "billingType": ["billable"],
            "externalId": ["M-1"],
            "name": ["n"],
            "description": ["d"],
            "callSign": ["c"],
            "clientExternalId": ["C-1"],
            "unitIncrements": ["360"],
            "status": ["active"],
        }
    )
