"""Flattening the export form and the release-pending detailed form into typed tables."""

from __future__ import annotations

import gc
import re
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pandera.errors
import pytest

from toolkit._egress import flatten as flatten_module
from toolkit._egress.export import Export
from toolkit._egress.flatten import FlattenError
from toolkit._egress.schemas import (
    ExportCodesSchema,
    ExportEntriesSchema,
    PendingCodesSchema,
    PendingEntriesSchema,
)
from toolkit.errors import InputWarning, ToolkitError
from toolkit.testing import (
    fake_export_entries,
    fake_export_entry,
    fake_pending_entries,
    fake_pending_entry,
)

SAMPLES = Path(__file__).parent / "sample_payloads"

EXPORT_ENTRY_COLUMNS = [
    "_id",
    "customerId",
    "userId",
    "externalId",
    "workDate",
    "summary",
    "unitIncrementCount",
    "incrementDurationInSeconds",
    "createdAt",
    "updatedAt",
    "initiative.externalId",
    "initiative.name",
    "initiative.client._id",
    "initiative.client.externalId",
    "initiative.client.name",
    "initiative.client.description",
    "initiative.client.callSign",
]
CODE_COLUMNS = [
    "entryId",
    "position",
    "code._id",
    "code.externalId",
    "code.name",
    "code.description",
    "code.type._id",
    "code.type.externalId",
    "code.type.name",
    "code.type.semanticType",
]
PENDING_CODE_COLUMNS = [*CODE_COLUMNS, "code.type.orderingSequence"]  # published
PENDING_ENTRY_COLUMNS = [
    *EXPORT_ENTRY_COLUMNS[:8],
    "initiativeProps.type",
    "initiativeProps.colorHex",
    "initiativeProps.tags",
    "initiativeProps.nickname",
    "initiativeProps.initiative.type",
    "initiativeProps.initiative._id",
    "initiativeProps.initiative.billingType",
    "initiativeProps.initiative.callSign",
    "initiativeProps.initiative.unitIncrements",
    "initiativeProps.initiative.externalId",
    "initiativeProps.initiative.name",
    "initiativeProps.initiative.description",
    "initiativeProps.initiative.client._id",
    "initiativeProps.initiative.client.externalId",
    "initiativeProps.initiative.client.name",
    "initiativeProps.initiative.client.description",
    "initiativeProps.initiative.client.callSign",
    # the published extras (issue 25)
    "initiativeProps.initiative.client.type",
    "initiativeProps.initiative.client.parentClientId",
    "initiativeProps.initiative.status",
    "initiativeProps.initiative.locale",
    "notes",
    "releaseCount",
    "lastSyncedAt",
    "firstReleaseAttemptedAt",
    "isShared",
    "sharedFrom",
]


def parse_and_flatten_export(raw: bytes | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ex = Export.from_json(raw)
    return ex.entries, ex.codes


def parse_and_flatten_pending(raw: bytes | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ex = Export.from_json(raw, kind="pending")
    return ex.entries, ex.codes


def flatten_export(records: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    ex = Export.from_records(records)
    return ex.entries, ex.codes


def flatten_pending(records: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    ex = Export.from_records(records, kind="pending")
    return ex.entries, ex.codes


def codes_wide(entries: pd.DataFrame, codes: pd.DataFrame) -> pd.DataFrame:
    return Export(entries, codes).codes_wide()


def _dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {c: str(t) for c, t in frame.dtypes.items()}


@pytest.fixture(scope="module")
def export_raw() -> bytes:
    return (SAMPLES / "export_entries.json").read_bytes()


@pytest.fixture(scope="module")
def pending_raw() -> bytes:
    return (SAMPLES / "pending_entries.json").read_bytes()


@pytest.fixture(scope="module")
def sample_export(export_raw: bytes) -> tuple[pd.DataFrame, pd.DataFrame]:
    return flatten_export(orjson.loads(export_raw))


@pytest.fixture(scope="module")
def sample_pending(pending_raw: bytes) -> tuple[pd.DataFrame, pd.DataFrame]:
    return flatten_pending(orjson.loads(pending_raw))


# ----------------------------------------------------------------------------- export form


def test_entries_have_one_row_per_entry_with_every_scalar_and_dotted_nested_columns(
    sample_export,
):
    entries, _ = sample_export
    # the sample's last entry holds futureField, a field the spec does not list: kept, last
    assert list(entries.columns) == [*EXPORT_ENTRY_COLUMNS, "futureField.ignored"]
    assert entries["_id"].tolist() == [
        "6543a1f0c9e77b0012ab34cd",
        "6543a1f0c9e77b0012ab34ce",
        "6543a1f0c9e77b0012ab34cf",
        "6543a1f0c9e77b0012ab34d0",
    ]
    first = entries.iloc[0]
    assert first["initiative.client.externalId"] == "CL-001"
    assert first["initiative.client.callSign"] == "MUEL"
    assert first["initiative.name"] == "Vertragsprüfung — Lieferkette"


def test_entries_are_typed(sample_export):
    entries, _ = sample_export
    types = _dtypes(entries)
    assert types["workDate"] == "datetime64[us]"
    assert types["createdAt"] == types["updatedAt"] == "datetime64[us, UTC]"
    assert types["unitIncrementCount"] == types["incrementDurationInSeconds"] == "Float64"
    for col in EXPORT_ENTRY_COLUMNS:
        if col not in {
            "workDate",
            "createdAt",
            "updatedAt",
            "unitIncrementCount",
            "incrementDurationInSeconds",
        }:
            assert types[col] == "string", col
    assert entries["workDate"].iloc[0] == pd.Timestamp("2026-11-02")
    assert entries["updatedAt"].iloc[0] == pd.Timestamp("2026-11-02T14:03:11.123Z")


def test_timestamps_with_offsets_or_without_zone_become_utc(sample_export):
    entries, _ = sample_export
    # "2026-11-05T08:00:00+01:00" is 07:00 UTC
    assert entries["updatedAt"].iloc[3] == pd.Timestamp("2026-11-05T07:00:00Z")
    naive, _ = flatten_export([{"_id": "a", "createdAt": "2026-11-02T10:00:00"}])
    assert naive["createdAt"].iloc[0] == pd.Timestamp("2026-11-02T10:00:00Z")


def test_codes_have_one_row_per_entry_and_code_with_position(sample_export):
    _, codes = sample_export
    assert list(codes.columns) == [*CODE_COLUMNS, "assignedBy"]
    assert codes["entryId"].tolist() == ["6543a1f0c9e77b0012ab34cd"] * 3
    assert codes["position"].tolist() == [0, 1, 2]
    assert codes["position"].dtype == "int64"
    assert codes["code.externalId"].tolist() == ["L110", "A103", "L120"]
    assert codes["code.type.externalId"].tolist() == ["task-code", "activity-code", "task-code"]
    assert codes["assignedBy"].tolist() == ["user", "service", "user"]


@pytest.mark.parametrize("codes_value", [[], None, "absent"])
def test_entry_with_zero_codes_keeps_its_entry_row(codes_value):
    entry = fake_export_entry(_id="e0", codes=0)
    if codes_value == "absent":
        del entry["codes"]
    else:
        entry["codes"] = codes_value
    entries, codes = flatten_export([entry, fake_export_entry(_id="e1", codes=2)])
    assert entries["_id"].tolist() == ["e0", "e1"]
    assert codes["entryId"].tolist() == ["e1", "e1"]


def test_entry_with_many_codes_keeps_list_order():
    entry = fake_export_entry(_id="many", codes=40, seed=9)
    _, codes = flatten_export([entry])
    assert codes["position"].tolist() == list(range(40))
    assert codes["code._id"].tolist() == [c["code"]["_id"] for c in entry["codes"]]


@pytest.mark.parametrize("name", ["position", "entryId"])
def test_a_code_field_outside_the_interface_named_as_a_codes_column_is_dropped_with_a_warning(
    name: str,
) -> None:
    # issue 39 finding 1: a code holding a field named as a column the codes table makes (its
    # place in the list, its entry's _id) cost the whole answer a KeyError naming no entry
    entry = fake_export_entry(_id="clash", codes=2, seed=4)
    entry["codes"][1][name] = 9
    with pytest.warns(InputWarning, match=rf"entry 'clash' holds codes\.{name} 9, .*dropped"):
        _, codes = flatten_export([entry])
    assert codes["position"].tolist() == [0, 1]
    assert codes["entryId"].tolist() == ["clash", "clash"]


def test_a_field_whose_name_holds_a_dot_beside_the_same_nested_path_is_dropped_with_a_warning():
    # a key "initiative.name" beside the spec's initiative.name flattened to one column name
    # twice, and the whole answer was lost to a KeyError naming no entry
    entry = fake_export_entry(_id="dots", codes=1, seed=4)
    entry["initiative.name"] = "a dotted key"
    with pytest.warns(InputWarning, match=r"entry 'dots' holds initiative\.name 'a dotted key'"):
        entries, _ = flatten_export([entry])
    assert entries["initiative.name"].tolist() == [entry["initiative"]["name"]]


def test_positions_restart_for_each_entry():
    _, codes = flatten_export(fake_export_entries(50, codes_per_entry=4, seed=3))
    per_entry = codes.groupby("entryId", sort=False)["position"].apply(list)
    assert len(per_entry) == 50
    assert all(p == [0, 1, 2, 3] for p in per_entry)


@pytest.mark.parametrize(
    "initiative",
    [None, "absent", {"externalId": "M-1", "name": "n", "client": None}, {"externalId": "M-1"}],
)
def test_missing_initiative_or_client_gives_null_columns(initiative):
    entry = fake_export_entry(_id="e")
    if initiative == "absent":
        del entry["initiative"]
    else:
        entry["initiative"] = initiative
    entries, _ = flatten_export([entry])
    client_cols = [c for c in entries.columns if c.startswith("initiative.client.")]
    assert entries[client_cols].isna().all(axis=None)
    expected = None if not isinstance(initiative, dict) else initiative.get("externalId")
    got = entries["initiative.externalId"].iloc[0]
    assert (pd.isna(got) and expected is None) or got == expected
    ExportEntriesSchema.validate(entries)


def test_entry_with_only_an_id_flattens_to_nulls():
    entries, codes = flatten_export([{"_id": "only"}])
    assert entries.drop(columns="_id").isna().all(axis=None)
    assert codes.empty
    ExportEntriesSchema.validate(entries)


def test_a_null_code_element_keeps_its_position():
    entry = fake_export_entry(_id="e", codes=2)
    entry["codes"].insert(0, None)
    _, codes = flatten_export([entry])
    assert codes["position"].tolist() == [0, 1, 2]
    assert codes["code._id"].isna().tolist() == [True, False, False]


def test_unicode_summaries_survive_raw_and_escaped(sample_export):
    entries, _ = sample_export
    assert entries["summary"].iloc[0] == (
        "Überprüfung des Vertrags; call with client \u2014 \U0001f4de follow-up"
    )
    assert entries["summary"].iloc[1] == "打ち合わせ 会議 ✅"
    assert entries["summary"].iloc[2] == ""  # empty text stays empty, not missing
    assert entries["summary"].iloc[3] == 'Réunion "stratégie"\nligne 2'


def test_unknown_fields_are_kept_as_dotted_columns(sample_export):
    # issue 20 item 17: unknown fields were dropped; now kept (dotted path) and noted
    entries, _ = sample_export
    assert entries["futureField.ignored"].tolist() == [pd.NA, pd.NA, pd.NA, True]
    assert entries.attrs["unknownFields"] == {"futureField": "6543a1f0c9e77b0012ab34d0"}


def test_empty_input_gives_empty_tables_with_every_column_and_dtype(sample_export):
    entries, codes = flatten_export([])
    full_entries, full_codes = sample_export
    assert entries.empty and codes.empty
    # the sample's unknown field is a column of its own: not one of the spec's
    assert _dtypes(entries) == _dtypes(full_entries.drop(columns="futureField.ignored"))
    assert _dtypes(codes) == _dtypes(full_codes)


def test_arrow_tables_match_the_pandas_ones(sample_export, export_raw):
    entries, codes = Export.from_records(orjson.loads(export_raw)).to_arrow()
    assert entries.column_names == [*EXPORT_ENTRY_COLUMNS, "futureField.ignored"]
    assert entries.num_rows == len(sample_export[0]) and codes.num_rows == len(sample_export[1])


def test_generated_entries_validate_at_scale():
    entries, codes = flatten_export(fake_export_entries(2_000, codes_per_entry=3, seed=11))
    ExportEntriesSchema.validate(entries, lazy=True)
    ExportCodesSchema.validate(codes, lazy=True)
    assert len(codes) == 6_000


# ----------------------------------------------------------------------------- detailed form


def test_pending_entries_have_initiative_props_columns_and_a_tags_list(sample_pending):
    entries, _ = sample_pending
    assert list(entries.columns) == PENDING_ENTRY_COLUMNS
    assert entries["initiativeProps.tags"].tolist()[:2] == [["pinned"], []]
    assert pd.isna(entries["initiativeProps.tags"].iloc[2])
    assert str(entries["initiativeProps.tags"].dtype) == "list<item: string>[pyarrow]"
    assert str(entries["initiativeProps.initiative.unitIncrements"].dtype) == "Float64"
    assert entries["initiativeProps.initiative.client.externalId"].tolist()[0] == "CL-001"
    assert entries["initiativeProps.initiative.client.externalId"].iloc[1:].isna().all()
    assert entries["initiativeProps.nickname"].tolist()[:2] == ["Supply chain ✨", ""]


def test_pending_codes_are_named_like_export_codes_without_assigned_by(sample_pending):
    entries, codes = sample_pending
    assert list(codes.columns) == PENDING_CODE_COLUMNS
    assert codes["code.externalId"].tolist() == ["L110", "ZRH"]
    assert codes["position"].tolist() == [0, 1]
    assert pd.isna(codes["code.type.semanticType"].iloc[1])
    assert len(entries) == 3  # the entries without codes keep their rows


def test_pending_generated_entries_validate():
    entries, codes = flatten_pending(fake_pending_entries(500, codes_per_entry=2, seed=2))
    PendingEntriesSchema.validate(entries, lazy=True)
    PendingCodesSchema.validate(codes, lazy=True)


def test_pending_entry_with_null_initiative_props_validates():
    entries, codes = flatten_pending([fake_pending_entry(initiative_props=None, codes=None)])
    assert entries.filter(like="initiativeProps.").isna().all(axis=None)
    assert codes.empty
    PendingEntriesSchema.validate(entries)


# ----------------------------------------------------------------------------- raw bytes


@pytest.mark.parametrize("pretty", [True, False])
def test_parse_and_flatten_equals_flatten_of_parsed(export_raw, pending_raw, pretty):
    for raw, parse, flatten in (
        (export_raw, parse_and_flatten_export, flatten_export),
        (pending_raw, parse_and_flatten_pending, flatten_pending),
    ):
        records = orjson.loads(raw)
        body = raw if pretty else orjson.dumps(records)
        got_entries, got_codes = parse(body)
        want_entries, want_codes = flatten(records)
        pd.testing.assert_frame_equal(got_entries, want_entries)
        pd.testing.assert_frame_equal(got_codes, want_codes)


def test_parse_reads_bodies_straight_into_arrow(export_raw):
    generated = orjson.dumps(fake_export_entries(300, seed=4))
    assert flatten_module._read(export_raw, "export").num_rows == 4
    assert flatten_module._read(generated, "export").num_rows == 300
    entries, codes = parse_and_flatten_export(generated)
    pd.testing.assert_frame_equal(entries, flatten_export(orjson.loads(generated))[0])
    assert len(codes) == 900


def test_parse_accepts_text_and_whole_floats():
    entries, _ = parse_and_flatten_export('[{"_id": "a", "unitIncrementCount": 3.0}]')
    assert entries["unitIncrementCount"].tolist() == [3]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{}", "expected a JSON array"),
        (b"[null]", "entry 0 is null"),
        (b'[{"_id": "a"}, 5]', "entry 1 is a number"),
        (b'[{"_id": "a", "unitIncrementCount": "x"}]', "unitIncrementCount"),
        (b'[{"_id": "a", "initiative": "M-1"}]', "initiative"),
        (b'[{"_id": "a", "workDate": "yesterday"}]', "workDate"),
        (b'[{"_id": "a", "createdAt": "not a time"}]', "createdAt"),
        (b"[{", "not valid JSON"),
    ],
)
def test_malformed_bodies_raise_a_flatten_error_naming_the_problem(body, message):
    with pytest.raises(FlattenError, match=re.escape(message)) as info:
        parse_and_flatten_export(body)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ToolkitError)


def test_flatten_refuses_a_dict_instead_of_a_list():
    with pytest.raises(FlattenError, match="list of export entries"):
        flatten_export({"_id": "a"})  # type: ignore[arg-type]


def test_flatten_accepts_any_iterable_of_records():
    entries, _ = flatten_export(iter(fake_export_entries(3)))
    assert len(entries) == 3


def test_parse_leaves_the_collector_enabled(export_raw):
    parse_and_flatten_export(export_raw)
    parse_and_flatten_export(b'[{"_id": "a", "unitIncrementCount": 3.0}]')  # orjson path
    assert gc.isenabled()


# ----------------------------------------------------------------------------- codes_wide


def test_codes_wide_has_one_row_per_entry_and_one_column_per_code_type(sample_export):
    entries, codes = sample_export
    wide = codes_wide(entries, codes)
    assert wide.index.tolist() == entries["_id"].tolist()
    assert wide.index.name == "_id"
    assert wide.columns.tolist() == ["task-code", "activity-code"]
    # two task codes on the first entry: the first by position wins
    assert wide.iloc[0].tolist() == ["L110", "A103"]
    assert wide.iloc[1:].isna().all(axis=None)
    assert {str(t) for t in wide.dtypes} == {"string"}


def test_codes_wide_without_any_codes_has_rows_and_no_columns():
    entries, codes = flatten_export([fake_export_entry(_id="a", codes=0)])
    wide = codes_wide(entries, codes)
    assert wide.index.tolist() == ["a"] and wide.shape == (1, 0)


def test_codes_wide_orders_code_types_by_position():
    entries, codes = flatten_export(fake_export_entries(20, codes_per_entry=5, seed=1))
    wide = codes_wide(entries, codes)
    assert wide.columns.tolist() == [
        "task-code",
        "activity-code",
        "phase-code",
        "location-code",
        "action-code",
    ]
    assert wide.notna().all(axis=None)


# ----------------------------------------------------------------------------- schemas


def test_schemas_declare_the_documented_column_order():
    assert list(ExportEntriesSchema.to_schema().columns) == EXPORT_ENTRY_COLUMNS
    assert list(ExportCodesSchema.to_schema().columns) == [*CODE_COLUMNS, "assignedBy"]
    assert list(PendingEntriesSchema.to_schema().columns) == PENDING_ENTRY_COLUMNS
    assert list(PendingCodesSchema.to_schema().columns) == PENDING_CODE_COLUMNS


def test_schemas_validate_the_sample_payloads(sample_export, sample_pending):
    ExportEntriesSchema.validate(sample_export[0], lazy=True)
    ExportCodesSchema.validate(sample_export[1], lazy=True)
    PendingEntriesSchema.validate(sample_pending[0], lazy=True)
    PendingCodesSchema.validate(sample_pending[1], lazy=True)


@pytest.mark.parametrize(
    ("mutate", "column"),
    [
        (lambda e, c: (e.assign(createdAt=e["createdAt"].dt.tz_localize(None)), c), "createdAt"),
        (lambda e, c: (e.assign(unitIncrementCount=-e["unitIncrementCount"]), c), None),
        (lambda e, c: (pd.concat([e, e.iloc[:1]]), c), "_id"),
        (lambda e, c: (e, c.assign(**{"code.type.semanticType": "mood"})), None),
        (lambda e, c: (e, c.drop(columns="position")), None),
    ],
)
def test_schemas_reject_frames_that_break_the_contract(mutate, column):
    entries, codes = flatten_export(fake_export_entries(5, seed=5))
    entries, codes = mutate(entries, codes)
    with pytest.raises(pandera.errors.SchemaErrors) as info:
        ExportEntriesSchema.validate(entries, lazy=True)
        ExportCodesSchema.validate(codes, lazy=True)
    if column is not None:
        assert column in set(info.value.failure_cases["column"].dropna())


# ----------------------------------------------------------------------------- fakes


def test_fake_entries_have_the_spec_shapes():
    hexid = re.compile(r"^[0-9a-f]{24}$")
    stamp = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    for entry in fake_export_entries(50, seed=8):
        assert hexid.match(entry["_id"])
        assert stamp.match(entry["createdAt"]) and stamp.match(entry["updatedAt"])
        assert entry["createdAt"] < entry["updatedAt"]
        assert re.match(r"^\d{4}-\d\d-\d\d$", entry["workDate"])
        assert {c["assignedBy"] for c in entry["codes"]} <= {"user", "service"}
        assert hexid.match(entry["initiative"]["client"]["_id"])
    pending = fake_pending_entry(seed=1)
    assert set(pending["initiativeProps"]) == {"type", "colorHex", "tags", "nickname", "initiative"}
    assert "assignedBy" not in pending["codes"][0]


def test_fakes_are_deterministic_and_do_not_share_nested_objects():
    a, b = fake_export_entries(20, seed=3), fake_export_entries(20, seed=3)
    assert a == b
    assert fake_export_entries(20, seed=4) != a
    few = fake_export_entries(20, seed=3, n_initiatives=2)
    first = few[0]["initiative"]["externalId"]
    same = [e for e in few if e["initiative"]["externalId"] == first]
    assert len(same) > 1
    few[0]["initiative"]["client"]["name"] = "changed"
    assert all(e["initiative"]["client"]["name"] != "changed" for e in same[1:])


def test_fake_export_entries_fall_inside_the_requested_range():
    entries = fake_export_entries(100, start="2026-03-01", end="2026-03-02", seed=1)
    stamps = [e["updatedAt"] for e in entries]
    assert stamps == sorted(stamps)
    assert all("2026-03-01T00:00:00.000Z" < s <= "2026-03-02T00:00:00.000Z" for s in stamps)


# -- export answers are checked ----------------------------------------------------------------


def _answer(*entries: dict[str, Any]) -> bytes:
    import orjson

    return orjson.dumps(list(entries))


def _entry(**changes: Any) -> dict[str, Any]:
    from toolkit.testing import fake_export_entry

    return {**fake_export_entry(), **changes}


@pytest.mark.parametrize("flatten", ["raw", "records"])
def test_an_entry_without_id_is_refused_and_named(flatten: str) -> None:
    from toolkit.errors import FlattenError

    entry = _entry()
    del entry["_id"]
    with pytest.raises(FlattenError, match=r"entry 1 .*has no _id"):
        if flatten == "raw":
            parse_and_flatten_export(_answer(_entry(_id="e0"), entry))
        else:
            flatten_export([_entry(_id="e0"), entry])


def test_a_duplicated_id_is_refused_and_named() -> None:
    from toolkit.errors import FlattenError

    with pytest.raises(FlattenError, match="entry 'e1': its _id comes more than once"):
        parse_and_flatten_export(_answer(_entry(_id="e1"), _entry(_id="e1")))


@pytest.mark.parametrize("flatten", ["raw", "records"])
def test_a_fractional_duration_is_kept_not_truncated(flatten: str) -> None:
    # issue 25: the published service sends counts as doubles; a fraction is kept as it is

    odd = _entry(_id="e9", incrementDurationInSeconds=360.5)
    entries, _ = (
        parse_and_flatten_export(_answer(odd)) if flatten == "raw" else flatten_export([odd])
    )
    assert entries["incrementDurationInSeconds"].tolist() == [360.5]
    entries, _ = parse_and_flatten_export(_answer(_entry(incrementDurationInSeconds=360.0)))
    assert entries["incrementDurationInSeconds"].tolist() == [360]


def test_a_bad_timestamp_names_the_field_and_entry_not_pandas_hint() -> None:
    from toolkit.errors import FlattenError

    with pytest.raises(FlattenError) as info:
        parse_and_flatten_export(_answer(_entry(_id="e5", createdAt="yesterday at noon")))
    text = str(info.value)
    assert "entry 'e5'" in text and "createdAt" in text and "'yesterday at noon'" in text
    assert "format" not in text and "dayfirst" not in text


def test_a_malformed_export_answer_names_the_window(monkeypatch) -> None:
    from toolkit._egress import fetch
    from toolkit.errors import FlattenError

    class Conn:
        def call(self, *args: object, **kwargs: object) -> bytes:
            return _answer(_entry(_id="e1"), _entry(_id="e1"))

    start, end = pd.Timestamp("2026-11-01", tz="UTC"), pd.Timestamp("2026-11-02", tz="UTC")
    with pytest.raises(FlattenError, match=r"'e1'.*window 2026-11-01"):
        fetch.fetch_window(Conn(), start, end)  # type: ignore[arg-type]


# -- one parse path: Arrow from the bytes ---------------------------------------------------------


def test_a_large_body_read_in_pieces_equals_it_read_whole(monkeypatch) -> None:
    # entries cut at their boundaries are read on every core; a boundary-like text inside a
    # string or a nested list of objects starting with _id must not cut an entry in two
    records = fake_export_entries(60, codes_per_entry=2, seed=6)
    records[7]["summary"] = 'a },{"_id": "x" inside a text'
    records[9]["futureList"] = [{"_id": "n1"}, {"_id": "n2"}]
    raw = orjson.dumps(records)
    whole = flatten_module.parse_answer(raw, "export")
    monkeypatch.setattr(flatten_module, "_PIECE", 100)
    monkeypatch.setattr(flatten_module.os, "cpu_count", lambda: 4)
    assert len(flatten_module._pieces(raw, 4) or []) == 4
    cut = flatten_module.parse_answer(raw, "export")
    for got, want in zip(cut, whole, strict=True):
        assert got.equals(want)
    assert cut[0]["summary"][7].as_py() == 'a },{"_id": "x" inside a text'


def test_pieces_holding_other_unknown_fields_are_joined_without_reading_the_body_whole(
    monkeypatch,
) -> None:
    # a field the spec lacks, in some pieces only or a whole number in one and a fraction in
    # another, is typed as one read of the whole body would type it, from the pieces alone
    records = fake_export_entries(60, codes_per_entry=2, seed=7)
    for i, record in enumerate(records):
        record["score"] = i if i < 30 else i + 0.5
    records[40]["initiative"]["futureFlag"] = True
    records[45]["codes"][1]["futureNote"] = "n"
    raw = orjson.dumps(records)
    whole = flatten_module.parse_answer(raw, "export")
    read = flatten_module.pa_json.read_json
    sizes: list[int] = []

    def counted(source: Any, **options: Any) -> Any:
        sizes.append(source.size())
        return read(source, **options)

    monkeypatch.setattr(flatten_module, "_PIECE", 100)
    monkeypatch.setattr(flatten_module.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(flatten_module.pa_json, "read_json", counted)
    cut = flatten_module.parse_answer(raw, "export")
    for got, want in zip(cut, whole, strict=True):
        assert got.equals(want) and got.schema.metadata == want.schema.metadata
    assert cut[0].schema.field("score").type == "double"
    assert len(sizes) > 1 and max(sizes) < len(raw), "the body was read whole"


def test_export_files_are_written_from_arrow_without_a_pandas_frame(monkeypatch, tmp_path) -> None:
    ex = Export.from_json(orjson.dumps(fake_export_entries(5, codes_per_entry=2, seed=2)))

    def refuse(table: Any) -> pd.DataFrame:
        assert table.num_rows == 0, "a pandas frame of the rows was made"
        return flatten_module._pandas_frame(table)

    monkeypatch.setattr(flatten_module, "_pandas_frame", flatten_module.to_frame, raising=False)
    monkeypatch.setattr("toolkit._egress.export.to_frame", refuse)
    ex.to_parquet(tmp_path / "ds")
    ex.to_csv(tmp_path / "csv")
    assert len(Export.read_parquet(tmp_path / "ds")) == 5


# -- issue 39 finding 1: a field outside the interface never costs the answer ---------------------


def _pending(**changes: Any) -> dict[str, Any]:
    return {**fake_pending_entry(codes=1), "_id": "p1", **changes}


def _read_pending_warning(*records: dict[str, Any]) -> tuple[Export, list[str]]:
    import warnings

    from toolkit.errors import InputWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pending = Export.from_json(orjson.dumps(list(records)), kind="pending")
    return pending, [str(w.message) for w in caught if issubclass(w.category, InputWarning)]


def test_a_fractional_release_count_is_read_as_null_with_a_warning_naming_entry_and_field() -> None:
    # issue 39: 5 of 9 generated answers lost the whole pending list over releaseCount
    odd = _pending(releaseCount=4065657969944930.5)
    pending, warned = _read_pending_warning(odd, _pending(_id="p2", releaseCount=3.0))
    assert pending.entries["releaseCount"].tolist() == [pd.NA, 3]
    assert pending.entries["summary"].tolist() == [odd["summary"], odd["summary"]]
    assert warned == [
        "the pending answer's entry 'p1' holds releaseCount 4065657969944930.5, not a whole"
        " number; releaseCount is a field outside the interface: read as null"
    ]


def test_an_ordering_sequence_sent_as_a_number_is_kept_as_text_with_a_warning() -> None:
    odd = _pending()
    odd["codes"][0]["type"]["orderingSequence"] = 7
    pending, warned = _read_pending_warning(odd)
    assert pending.codes["code.type.orderingSequence"].tolist() == ["7"]
    assert pending.codes["code.externalId"].tolist() == [odd["codes"][0]["externalId"]]
    assert len(warned) == 1 and "entry 'p1'" in warned[0]
    assert "codes.type.orderingSequence 7" in warned[0] and "kept as JSON text" in warned[0]


@pytest.mark.parametrize(
    ("field", "value", "read"),
    [
        ("lastSyncedAt", "yesterday", pd.NaT),
        ("firstReleaseAttemptedAt", "2026-13-45T00:00:00Z", pd.NaT),
        ("isShared", "yes", pd.NA),
        ("notes", {"a": 1}, '{"a":1}'),
    ],
)
def test_an_odd_value_of_a_field_outside_the_interface_never_costs_the_answer(
    field: str, value: Any, read: Any
) -> None:
    pending, warned = _read_pending_warning(_pending(**{field: value}), _pending(_id="p2"))
    assert len(pending) == 2
    got = pending.entries[field][0]
    assert got == read if isinstance(read, str) else got is read
    assert len(warned) == 1 and f"entry 'p1' holds {field} {value!r}" in warned[0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"unitIncrementCount": "three"}, "entry 'p1': unitIncrementCount 'three' is not a number"),
        ({"externalId": 17}, "entry 'p1': externalId 17 is not text"),
        ({"workDate": "20.06.2026"}, "entry 'p1': workDate '20.06.2026' is not a YYYY-MM-DD date"),
        ({"codes": [{"_id": "c", "name": 5}]}, "entry 'p1': codes.name 5 is not text"),
        ({"initiativeProps": {"tags": "pinned"}}, "entry 'p1': initiativeProps.tags 'pinned'"),
    ],
)
def test_a_wrong_type_in_an_interface_field_is_refused_naming_entry_field_and_value(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(FlattenError, match=re.escape(message)):
        Export.from_json(orjson.dumps([_pending(_id="p0"), _pending(**change)]), kind="pending")
