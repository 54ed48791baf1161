"""Headers as people write them: case, spaces, ``_`` and ``-`` ignored, billing-export aliases,
ambiguity reported with both candidates, ``columns=`` on every entry point."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import check_frame
from toolkit._ingress.imports import onboard
from toolkit._ingress.models import TABLES
from toolkit._ingress.names import COLUMN_ALIASES, header_hint, header_key
from toolkit._ingress.validation import load_folder, validate

VALID: dict[str, dict[str, object]] = {
    "clients": {"externalId": "C-1", "name": "Acme", "callSign": "1", "description": "Widgets"},
    "initiatives": {
        "billingType": "billable",
        "externalId": "M-1",
        "name": "A v B",
        "description": "Suit",
        "callSign": "1-1",
        "clientExternalId": "C-1",
        "unitIncrements": "360",
        "status": "active",
    },
    "code_types": {
        "externalId": "task-code",
        "name": "task-code",
        "semanticType": "task",
        "customerDefaultable": "true",
        "userDefaultable": "false",
    },
    "codes": {
        "externalId": "L110",
        "name": "L110",
        "description": "Fact Investigation",
        "codeTypeExternalId": "task-code",
    },
    "code_ranges": {"initiativeExternalId": "M-1", "codeExternalId": "L110"},
}


def one_row(table: str, renames: dict[str, str] | None = None) -> pd.DataFrame:
    return pd.DataFrame([VALID[table]]).rename(columns=renames or {})


def problems(table: str, df: pd.DataFrame) -> list[tuple[object, str, str]]:
    fc = check_frame(table, df).failures
    return list(zip(fc["column"], fc["check"], fc["message"], strict=True))


def test_a_clients_file_headed_as_people_write_it_validates_with_no_error(tmp_path: Path) -> None:
    (tmp_path / "clients.csv").write_text(
        "ExternalID;Name;Call Sign;Description\n"
        "C-1001;Northwind Logistics, Inc.;1001;Freight forwarding\n"
        "007;Acme;0042;Widgets\n",
        encoding="utf-8",
    )
    report = validate(**load_folder(tmp_path))
    assert report.ok and report.failures.empty, report.failures
    clients = report.frames["clients"]
    assert list(clients.columns) == ["externalId", "name", "callSign", "description"]
    assert clients["externalId"].tolist() == ["C-1001", "007"]  # ids stay text
    assert clients["callSign"].tolist() == ["1001", "0042"]


@pytest.mark.parametrize(
    ("table", "given", "field"),
    [
        ("clients", "call_sign", "callSign"),
        ("clients", "CALLSIGN", "callSign"),
        ("clients", "Call Sign", "callSign"),
        ("clients", "external_id", "externalId"),
        ("clients", "ExternalID", "externalId"),
        ("clients", "external-id", "externalId"),
        ("initiatives", "client_external_id", "clientExternalId"),
        ("initiatives", "unit_increments", "unitIncrements"),
        ("initiatives", "billing_type", "billingType"),
        ("initiatives", "Billing Type", "billingType"),
        ("initiatives", "Status", "status"),
        ("code_types", "semantic_type", "semanticType"),
        ("code_types", "user_defaultable", "userDefaultable"),
        ("code_ranges", "initiative_external_id", "initiativeExternalId"),
    ],
)
def test_a_header_differing_only_in_case_spaces_underscores_or_dashes_matches(
    table: str, given: str, field: str
) -> None:
    result = check_frame(table, one_row(table, {field: given}))
    assert result.failures.empty, result.failures.to_string()
    assert field in result.frame.columns
    assert result.headers[field] == (given,)
    assert result.renames == {given: field}


@pytest.mark.parametrize(
    ("table", "given", "field"),
    [
        ("code_ranges", "Matter ID", "initiativeExternalId"),
        ("code_ranges", "matterExternalId", "initiativeExternalId"),
        ("code_ranges", "Matter", "initiativeExternalId"),
        ("code_ranges", "Project", "initiativeExternalId"),
        ("code_ranges", "project_id", "initiativeExternalId"),
        ("code_ranges", "Code", "codeExternalId"),
        ("clients", "Client Code", "callSign"),
        ("clients", "Client Name", "name"),
        ("initiatives", "Matter ID", "externalId"),
        ("initiatives", "matterExternalId", "externalId"),
        ("initiatives", "Client", "clientExternalId"),
        ("initiatives", "Unit Increment", "unitIncrements"),
        ("initiatives", "unitIncrement", "unitIncrements"),
        ("initiatives", "Matter Code", "callSign"),
        ("codes", "Code Type", "codeTypeExternalId"),
        ("codes", "codeTypeId", "codeTypeExternalId"),
    ],
)
def test_a_billing_export_alias_matches_its_field(table: str, given: str, field: str) -> None:
    result = check_frame(table, one_row(table, {field: given}))
    assert result.failures.empty, result.failures.to_string()
    assert result.renames == {given: field}


def test_aliases_sit_beside_the_file_name_aliases_and_name_real_fields() -> None:
    assert set(COLUMN_ALIASES) == set(TABLES)
    for table, fields in COLUMN_ALIASES.items():
        assert set(fields) <= set(TABLES[table].columns), table
        for field, aliases in fields.items():
            # an alias never shadows another field's own name
            others = {header_key(c) for c in TABLES[table].columns if c != field}
            assert not {header_key(a) for a in aliases} & others, (table, field)


def test_a_header_fitting_two_fields_is_an_error_naming_both() -> None:
    df = (
        one_row("initiatives")
        .drop(columns="callSign")
        .rename(columns={"externalId": "Matter Number"})
    )
    found = problems("initiatives", df)
    ambiguous = [m for col, chk, m in found if col == "Matter Number"]
    assert len(ambiguous) == 1
    assert "'externalId'" in ambiguous[0] and "'callSign'" in ambiguous[0]
    assert "columns=" in ambiguous[0]
    assert {chk for _, chk, _ in found} == {"column_unexpected", "column_missing"}


def test_two_headers_for_one_field_are_an_error_naming_both() -> None:
    df = one_row("clients", {"externalId": "ExternalID"}).assign(external_id="C-2")
    found = problems("clients", df)
    assert len(found) == 1, found
    column, check, message = found[0]
    assert (column, check) == ("externalId", "column_duplicate")
    assert "'ExternalID'" in message and "'external_id'" in message
    assert check_frame("clients", df).headers["externalId"] == ("ExternalID", "external_id")


def test_the_header_named_exactly_as_the_spec_wins() -> None:
    df = one_row("clients").assign(**{"Call Sign": "2"})
    found = problems("clients", df)
    assert [(c, k) for c, k, _ in found] == [("Call Sign", "column_unexpected")]
    assert "'callSign' is present" in found[0][2]


def test_columns_settles_an_ambiguous_header() -> None:
    df = (
        one_row("initiatives")
        .drop(columns="callSign")
        .rename(columns={"externalId": "Matter Number"})
    )
    df["Matter Code"] = "1-1"
    report = validate(
        initiatives=df, columns={"Matter Number": "externalId"}, known={"clients": ["C-1"]}
    )
    assert report.ok, report.failures
    assert report.frames["initiatives"]["externalId"].tolist() == ["M-1"]


def test_an_unmatched_header_still_names_its_closest_field() -> None:
    found = problems("clients", one_row("clients", {"callSign": "callSigns"}))
    assert {(c, k) for c, k, _ in found} == {
        ("callSign", "column_missing"),
        ("callSigns", "column_unexpected"),
    }


def test_onboard_takes_columns_and_builds_payloads_under_the_spec_names(fresh_client) -> None:  # noqa: ANN001
    clients = one_row("clients", {"externalId": "Client ID", "callSign": "Billing Code"})
    ranges = one_row("code_ranges", {"initiativeExternalId": "Matter ID"})
    report = onboard(
        fresh_client.connection,
        {"clients": clients, "code_ranges": ranges},
        columns={"clients": {"Billing Code": "callSign"}},
        known={"initiatives": ["M-1"], "codes": ["L110"]},
        dry_run=True,
        progress=False,
    )
    assert report.validation is not None and report.validation.ok, report.validation
    sent = report.payloads["clients"]["payload"].tolist()
    assert sent == [
        {"externalId": "C-1", "name": "Acme", "callSign": "1", "description": "Widgets"}
    ]
    assert report.payloads["code_ranges"]["key"].tolist() == ["M-1"]
    assert report.results["externalId"].tolist() == ["C-1", "M-1"]


def test_a_client_code_column_in_a_matters_sheet_is_hinted_to_client_external_id() -> None:
    df = one_row("initiatives", {"clientExternalId": "Client Code"})
    found = problems("initiatives", df)
    missing = [m for col, chk, m in found if chk == "column_missing"]
    assert missing == [
        "missing column 'clientExternalId'; the frame has 'Client Code': rename it with "
        "columns={'Client Code': 'clientExternalId'}"
    ]
    unexpected = [m for col, chk, m in found if col == "Client Code"]
    assert "did you mean 'clientExternalId'?" in unexpected[0]


def test_a_rename_hint_into_unit_increments_says_it_counts_seconds() -> None:
    df = one_row("initiatives", {"unitIncrements": "Time Increment (hrs)"})
    messages = [m for _, _, m in problems("initiatives", df)]
    assert messages and all(
        "unitIncrements is in SECONDS: 0.1 h = 6 min = 360" in m for m in messages
    )
    fractional = one_row("initiatives").assign(unitIncrements="0.1")
    [(_, chk, message)] = problems("initiatives", fractional)
    assert chk == "fractional" and "in SECONDS" in message


@pytest.mark.parametrize(
    ("column", "value", "suggested"),
    [
        ("status", "Open", "active"),
        ("status", "Closed", "inactive"),
        ("billingType", "Pro Bono", "non-billable"),
        ("billingType", "Billable", "billable"),
    ],
)
def test_a_firms_word_for_an_allowed_value_gets_a_suggestion(
    column: str, value: str, suggested: str
) -> None:
    df = one_row("initiatives").assign(**{column: value})
    [(col, chk, message)] = problems("initiatives", df)
    assert (col, chk) == (column, "allowed_values")
    assert message.endswith(f"got {value!r}; did you mean {suggested!r}?")


def test_a_header_hint_is_only_said_for_the_table_and_field_it_belongs_to() -> None:
    assert header_hint("initiatives", "clientExternalId", ["Client Code"]) == "Client Code"
    assert header_hint("clients", "callSign", ["Client Code"]) is None
