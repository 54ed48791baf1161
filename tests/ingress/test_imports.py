"""Imports and onboarding against the sandbox: validation first, one result row per input row,
journals, parents before children, injected faults, and a kill -9 in the middle of a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import client_env, kill_9_when, settle
from toolkit import Client, ValidationError, load_folder, validate
from toolkit._bulk.runner import Journal, not_sent
from toolkit._core.http import Reply
from toolkit._ingress.ranges import merge_parts

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"


def _clients(n: int, prefix: str = "C") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "externalId": [f"{prefix}-{i:05d}" for i in range(n)],
            "name": [f"Client {i} — Ünïcode" for i in range(n)],
            "callSign": [f"{i:05d}" for i in range(n)],
            "description": ["generated"] * n,
        }
    )


def _import_count(sandbox, route_part: str) -> int:
    routes = sandbox.admin.stats()["routes"]
    return sum(v["count"] for k, v in routes.items() if route_part in k)


def test_import_result_is_aligned_to_the_input_index(fresh_client: Client, sandbox) -> None:
    df = _clients(5).set_index(pd.Index([10, 20, 30, 40, 50]))
    res = fresh_client.import_clients(df, progress=False)
    assert list(res.index) == [10, 20, 30, 40, 50]
    assert res["externalId"].tolist() == df["externalId"].tolist()
    assert res["ok"].all() and set(res["httpStatus"]) == {201}
    assert set(res.columns) >= {"status", "ok", "httpStatus", "error", "attempts", "elapsed"}
    stored = sandbox.admin.records("clients", customer_id=fresh_client.customer_id)
    assert sorted(r["externalId"] for r in stored) == sorted(df["externalId"])


def test_invalid_frame_raises_before_any_request(fresh_client: Client, sandbox) -> None:
    df = _clients(3)
    df.loc[1, "name"] = ""
    df.loc[2, "externalId"] = df.loc[0, "externalId"]
    sandbox.admin.reset_stats()
    with pytest.raises(ValidationError) as info:
        fresh_client.import_clients(df, progress=False)
    cases = info.value.failure_cases
    assert {(r, c) for r, c in zip(cases["row"], cases["column"], strict=True)} >= {
        (1, "name"),
        (2, "externalId"),
    }
    assert sandbox.admin.stats()["total"] == 0


def test_columns_renames_on_the_way_in(fresh_client: Client) -> None:
    # (a header like call_sign now matches by itself: tests/ingress/test_headers.py)
    df = _clients(2).rename(columns={"callSign": "callSigns"})
    with pytest.raises(ValidationError) as info:
        fresh_client.import_clients(df, progress=False)
    assert "callSign" in " ".join(info.value.failure_cases["message"].astype(str))
    res = fresh_client.import_clients(df, columns={"callSigns": "callSign"}, progress=False)
    assert res["ok"].all()


def test_dry_run_returns_the_payloads_and_sends_nothing(fresh_client: Client, sandbox) -> None:
    sandbox.admin.reset_stats()
    out = fresh_client.import_initiatives(
        load_folder(SAMPLE)["initiatives"], dry_run=True, progress=False
    )
    assert sandbox.admin.stats()["total"] == 0
    first = out["payload"].iloc[0]
    assert set(first) == {
        "billingType",
        "externalId",
        "name",
        "description",
        "callSign",
        "clientExternalId",
        "unitIncrements",
        "status",
    }
    assert isinstance(first["unitIncrements"], int)
    assert out["url"].iloc[0].endswith("/initiatives/import")


def test_server_rejections_are_rows_not_exceptions(fresh_client: Client) -> None:
    frames = load_folder(SAMPLE)
    # no clients imported: every initiative's parent is unknown to the service
    res = fresh_client.import_initiatives(frames["initiatives"].head(3), progress=False)
    assert not res["ok"].any()
    assert set(res["httpStatus"]) <= {404, 409, 422}
    assert res["error"].str.contains("C-").all()


def test_code_ranges_send_one_request_per_initiative_with_a_row_per_input_row(
    fresh_client: Client, sandbox
) -> None:
    frames = load_folder(SAMPLE)
    for table in ("clients", "initiatives", "code_types", "codes"):
        assert getattr(fresh_client, f"import_{table}")(frames[table], progress=False)["ok"].all()
    ranges = frames["code_ranges"]
    sandbox.admin.reset_stats()
    res = fresh_client.import_code_ranges(ranges, progress=False)
    assert len(res) == len(ranges) and res["ok"].all()
    assert _import_count(sandbox, "/codes") == ranges["initiativeExternalId"].nunique()


def test_journal_skips_what_was_acknowledged_with_the_same_payload(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    journal = tmp_path / "j.jsonl"
    df = _clients(6)
    first = fresh_client.import_clients(df.head(4), journal=journal, progress=False)
    assert first["ok"].all()
    df.loc[3, "name"] = "Renamed"  # a changed payload is sent again
    sandbox.admin.reset_stats()
    second = fresh_client.import_clients(df, journal=journal, progress=False)
    assert second["status"].tolist() == ["journaled"] * 3 + ["sent"] * 3
    assert second["ok"].all()
    assert _import_count(sandbox, "clients/import") == 3
    assert len(Journal(journal)) == 7


def test_onboard_imports_everything_in_order(fresh_client: Client, sandbox) -> None:
    report = fresh_client.onboard(SAMPLE, progress=False)
    assert report.ok, report.failures
    frames = load_folder(SAMPLE)
    for table, kind in (
        ("clients", "clients"),
        ("initiatives", "initiatives"),
        ("code_types", "code-types"),
        ("codes", "codes"),
    ):
        stored = sandbox.admin.records(kind, customer_id=fresh_client.customer_id)
        assert len(stored) == len(frames[table]) == report.counts.loc[table, "sent"]
    assert report.counts["rows"].sum() == len(report.results)


def test_onboard_never_posts_a_child_of_a_failed_parent(fresh_client: Client, sandbox) -> None:
    frames = load_folder(SAMPLE)
    frames["clients"] = frames["clients"].astype({"name": object})
    frames["clients"].loc[0, "name"] = 12.5  # invalid parent: a number is not a name
    bad_client = frames["clients"].loc[0, "externalId"]
    with pytest.raises(ValidationError):
        fresh_client.onboard(frames, progress=False)
    report = fresh_client.onboard(frames, on_invalid="skip", progress=False)
    res = report.results
    children = res[
        (res["table"] == "initiatives")
        & res["row"].isin(
            frames["initiatives"].index[frames["initiatives"]["clientExternalId"] == bad_client]
        )
    ]
    assert len(children) > 0
    assert (children["status"] == "skipped").all()
    assert children["error"].str.contains(bad_client).all()
    stored = {
        r["externalId"]
        for r in sandbox.admin.records("initiatives", customer_id=fresh_client.customer_id)
    }
    assert not stored & set(children["externalId"])
    assert not report.ok and len(report.failures) >= len(children) + 1


def test_a_firm_with_only_warnings_onboards_with_every_row_stored_as_given(
    fresh_client: Client, sandbox, firm_with_warnings: dict[str, pd.DataFrame]
) -> None:
    report = fresh_client.onboard(firm_with_warnings, progress=False)
    assert report.ok, report.failures
    assert report.validation is not None and report.validation.ok
    assert len(report.validation.warnings) == 19
    assert (report.results["status"] == "sent").all()

    def stored(kind: str, *fields: str) -> list[tuple]:
        records = sandbox.admin.records(kind, customer_id=fresh_client.customer_id)
        return sorted(tuple(r[f] for f in fields) for r in records)

    assert stored("clients", "externalId", "name", "callSign", "description") == [
        (" C-1 ", "Acme", "", ""),
        ("C-2", "Beta", "", "Banking"),
    ]
    assert stored(
        "initiatives",
        "externalId",
        "description",
        "callSign",
        "clientExternalId",
        "unitIncrements",
    ) == [("M-1 ", "", "", " C-1 ", 360.5), ("M-2", "", "2-001", "C-2", 90.25)]
    assert stored("codes", "externalId", "description") == [(" L120", "Analysis"), ("L110", "")]
    ranges = sandbox.admin.records("code-ranges", customer_id=fresh_client.customer_id)
    assert [(r["initiativeExternalId"], r["codeExternalIds"]) for r in ranges] == [
        ("M-1 ", ["L110", " L120"])
    ]


def _matter(increments: object, description: str = "Suit") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "billingType": ["billable"],
            "externalId": ["M-1"],
            "name": ["A v B"],
            "description": [description],
            "callSign": ["1-1"],
            "clientExternalId": ["C-00000"],
            "unitIncrements": [increments],
            "status": ["active"],
        }
    )


def test_an_import_sent_with_a_warning_says_so_in_its_result(fresh_client: Client) -> None:
    fresh_client.import_clients(_clients(1), progress=False)
    res = fresh_client.import_initiatives(_matter(0.1, description=""), progress=False)
    assert res.loc[0, "status"] == "sent"
    warning = res.loc[0, "warning"]
    assert "unitIncrements 0.1 is not a whole number of seconds" in warning
    assert "0.1 h = 6 min = 360" in warning and "description is empty" in warning
    assert list(res.columns).index("warning") == list(res.columns).index("error") + 1
    clean = fresh_client.import_initiatives(_matter(360), progress=False)
    assert clean["warning"].isna().all()
    dry = fresh_client.import_initiatives(_matter(0.1), dry_run=True)
    assert "whole number of seconds" in dry.loc[0, "warning"]


def test_on_warning_raise_sends_nothing_while_a_warning_stands(
    fresh_client: Client, sandbox
) -> None:
    sandbox.admin.reset_stats()
    with pytest.raises(ValidationError) as info:
        fresh_client.import_initiatives(_matter(0.1), progress=False, on_warning="raise")
    assert info.value.failure_cases["check"].tolist() == ["fractional"]
    assert "on_warning='raise'" in str(info.value)
    assert sandbox.admin.stats()["total"] == 0


def test_onboard_results_carry_the_warnings_of_the_rows_they_sent(
    fresh_client: Client, sandbox, firm_with_warnings: dict[str, pd.DataFrame]
) -> None:
    sandbox.admin.reset_stats()
    with pytest.raises(ValidationError):
        fresh_client.onboard(firm_with_warnings, progress=False, on_warning="raise")
    assert sandbox.admin.stats()["total"] == 0
    report = fresh_client.onboard(firm_with_warnings, progress=False)
    assert report.ok
    warned = report.warned.set_index(["table", "row"])["warning"]
    assert "description is empty" in warned[("clients", 0)]
    assert "not a whole number of seconds" in warned[("initiatives", 1)]
    assert "'L110' is listed more than once" in warned[("code_ranges", 2)]
    assert report.counts["warned"].to_dict() == {
        "clients": 2,
        "initiatives": 2,
        "code_types": 0,
        "codes": 2,
        "code_ranges": 3,
    }
    assert "with a warning" in repr(report)


def test_broken_sample_is_reported_in_one_pass_with_rows_and_columns(fresh_client, sandbox):
    sandbox.admin.reset_stats()
    with pytest.raises(ValidationError) as info:
        fresh_client.onboard(REPO / "sample_data" / "broken", progress=False)
    cases = info.value.failure_cases
    assert cases["table"].nunique() >= 3
    assert cases["column"].notna().all()
    assert sandbox.admin.stats()["total"] == 0


def test_ten_thousand_records_with_injected_faults_all_land(
    fresh_client: Client, sandbox, no_faults
) -> None:
    # short backoff keeps the test quick; enough retries that 20% faults never exhaust them
    fresh_client.connection.transport.retries, fresh_client.connection.transport.backoff = 10, 0.01
    frames = load_folder(SAMPLE)
    clients = _clients(2000, prefix="F")
    initiatives = pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": [f"FM-{i:05d}" for i in range(8000)],
            "name": [f"Matter {i}" for i in range(8000)],
            "description": "generated",
            "callSign": [f"{i:05d}" for i in range(8000)],
            "clientExternalId": [f"F-{i % 2000:05d}" for i in range(8000)],
            "unitIncrements": 360,
            "status": "active",
        }
    )
    sandbox.admin.set_faults(rate=0.2, statuses=[500, 503, 429], retry_after_seconds=0, seed=11)
    report = fresh_client.onboard(
        {"clients": clients, "initiatives": initiatives, "code_types": frames["code_types"]},
        progress=False,
        workers=8,
    )
    sandbox.admin.clear_faults()
    assert report.ok, report.failures.head()
    assert report.results["attempts"].max() > 1  # faults really were injected and retried
    cid = fresh_client.customer_id
    assert len(sandbox.admin.records("clients", customer_id=cid)) == 2000
    assert len(sandbox.admin.records("initiatives", customer_id=cid)) == 8000
    assert report.counts.loc["initiatives", "sent"] == 8000


def test_kill_9_mid_onboarding_then_rerun_with_journal_sends_only_the_rest(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    folder = tmp_path / "firm"
    folder.mkdir()
    n = 3000
    _clients(n, prefix="K").to_csv(folder / "clients.csv", index=False)
    journal = tmp_path / "onboard.jsonl"
    env = {**os.environ, **client_env(fresh_client, sandbox)}
    cmd = [
        sys.executable,
        "-m",
        "toolkit",
        "--env-file",
        str(tmp_path / "none.env"),
        "-q",
        "onboard",
        str(folder),
        "--journal",
        str(journal),
        "--workers",
        "4",
    ]
    sandbox.admin.set_faults(latency_ms=3)  # slow enough to stop it halfway
    try:
        kill_9_when(
            cmd,
            env,
            lambda: journal.exists() and journal.read_text().count("\n") >= n // 3,
            poll=0.05,
        )
    finally:
        sandbox.admin.clear_faults()
    acknowledged = len(Journal(journal))
    assert 0 < acknowledged < n, "the kill did not land mid-run"
    # requests the killed process had in flight may still be answered: let them finish (bounded)
    # so that the counts below hold only the re-run's requests
    settle(sandbox)
    sandbox.admin.reset_stats()
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    sent_again = _import_count(sandbox, "clients/import")
    assert sent_again <= n - acknowledged
    stored = sandbox.admin.records("clients", customer_id=fresh_client.customer_id)
    assert len(stored) == n


def test_results_follow_rows_even_when_index_labels_repeat(fresh_client: Client) -> None:
    assert fresh_client.import_clients(_clients(1), progress=False)["ok"].all()
    initiatives = pd.DataFrame(
        {
            "billingType": "billable",
            "externalId": ["DUP-A", "DUP-B", "DUP-C"],
            "name": "n",
            "description": "d",
            "callSign": "c",
            "clientExternalId": ["NO-SUCH-CLIENT", "C-00000", "NO-SUCH-CLIENT"],
            "unitIncrements": 360,
            "status": "active",
        },
        index=[7, 7, 8],
    )
    res = fresh_client.import_initiatives(initiatives, progress=False)
    assert list(res.index) == [7, 7, 8]
    assert res["externalId"].tolist() == ["DUP-A", "DUP-B", "DUP-C"]
    assert res["ok"].tolist() == [False, True, False]
    assert res["httpStatus"].tolist()[1] == 201 and res["httpStatus"].tolist()[0] >= 400
    dry = fresh_client.import_clients(_clients(2).set_index(pd.Index([0, 0])), dry_run=True)
    assert [p["externalId"] for p in dry["payload"]] == ["C-00000", "C-00001"]


def test_a_journal_never_skips_calls_to_another_customer(sandbox, tmp_path) -> None:
    journal = tmp_path / "shared.jsonl"
    firms = []
    for name in ("First", "Second"):
        creds = sandbox.admin.create_customer(name)
        firms.append(
            Client(
                creds["customerId"],
                creds["clientId"],
                creds["clientSecret"],
                sandbox.url,
                sandbox.url,
                audience=creds["audience"],
            )
        )
    for firm in firms:
        res = firm.import_clients(_clients(3), journal=journal, progress=False)
        assert res["status"].tolist() == ["sent"] * 3
        assert len(sandbox.admin.records("clients", customer_id=firm.customer_id)) == 3


def test_wrong_credentials_cost_one_token_request_not_one_per_row(sandbox) -> None:
    bad = Client(
        sandbox.customer_id,
        sandbox.client_id,
        "not-the-secret",
        sandbox.url,
        sandbox.url,
        audience=sandbox.audience,
    )
    sandbox.admin.reset_stats()
    res = bad.import_clients(_clients(50), progress=False, workers=4)
    assert not res["ok"].any()
    assert res["error"].str.contains("token request refused").all()
    routes = sandbox.admin.stats()["routes"]
    assert sum(v["count"] for k, v in routes.items() if "oauth/token" in k) == 1
    assert _import_count(sandbox, "clients/import") == 0


def test_onboard_with_concatenated_frames_sends_every_valid_row(fresh_client, sandbox) -> None:
    frames = load_folder(SAMPLE)
    clients = pd.concat([frames["clients"].head(2), frames["clients"].iloc[2:4]])  # labels 0,1,0,1
    inits = frames["initiatives"]
    inits = inits[inits["clientExternalId"].isin(clients["externalId"])].head(4).copy()
    first, second = inits.head(2), inits.tail(2).copy()
    second.index = first.index  # repeated labels
    second.loc[second.index[0], "unitIncrements"] = -5  # one invalid row
    report = fresh_client.onboard(
        {"clients": clients, "initiatives": pd.concat([first, second])},
        on_invalid="skip",
        progress=False,
    )
    res = report.results.set_index(["table", "row"])
    assert res.loc[("initiatives", 2), "status"] == "skipped"
    assert (res.drop(index=("initiatives", 2))["status"] == "sent").all()
    stored = {
        r["externalId"]
        for r in sandbox.admin.records("initiatives", customer_id=fresh_client.customer_id)
    }
    assert stored == set(inits["externalId"]) - {second["externalId"].iloc[0]}


# -- the result row's error is the body's reason, whatever its shape ---------------------------


_UNKNOWN_CLIENT = "unknown client externalId 'C-NOPE'"


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("problem", _UNKNOWN_CLIENT),
        ("message", _UNKNOWN_CLIENT),
        ("text", f"HTTP 422: {_UNKNOWN_CLIENT}"),
        ("empty", "HTTP 422 Unprocessable Entity"),  # no body: the status and its phrase
        # {statusCode, message: ["<field>: <reason>", ...], error}, the reasons joined
        ("nestjs", f"clientExternalId: {_UNKNOWN_CLIENT}"),
    ],
)
def test_result_error_is_the_reason_of_each_error_body_style(
    fresh_client: Client, sandbox, style: str, expected: str
) -> None:
    sandbox.admin.set_profile(customer_id=fresh_client.customer_id, errorBody=style)
    initiative = pd.DataFrame(
        {
            "billingType": ["billable"],
            "externalId": ["M-1"],
            "name": ["A v B"],
            "description": [""],
            "callSign": ["1"],
            "clientExternalId": ["C-NOPE"],
            "unitIncrements": [360],
            "status": ["active"],
        }
    )
    res = fresh_client.import_initiatives(initiative, progress=False)
    assert res["httpStatus"].tolist() == [422]
    assert res["error"].tolist() == [expected]


#: an initiative whose enums are outside the service's (sent only with validation off)
_OFF_ENUM_INITIATIVE = pd.DataFrame(
    {
        "billingType": ["Billable"],
        "externalId": ["M-1"],
        "name": ["A v B"],
        "description": [""],
        "callSign": ["1"],
        "clientExternalId": ["C-1"],
        "unitIncrements": [360],
        "status": ["ACTIVE"],
    }
)


def test_a_problem_s_field_errors_follow_its_detail(fresh_client: Client) -> None:
    # values outside the enums reach the service only when validation is off
    res = fresh_client.import_initiatives(_OFF_ENUM_INITIATIVE, validate=False, progress=False)
    assert res["httpStatus"].tolist() == [422]
    assert res["error"].iloc[0] == (
        "invalid request: body.billingType, body.status (billingType: Input should be "
        "'billable' or 'non-billable'; status: Input should be 'active' or 'inactive')"
    )


def test_a_nestjs_body_s_list_of_reasons_is_the_row_s_error(fresh_client: Client, sandbox) -> None:
    sandbox.admin.set_profile(customer_id=fresh_client.customer_id, errorBody="nestjs")
    res = fresh_client.import_initiatives(_OFF_ENUM_INITIATIVE, validate=False, progress=False)
    assert res["httpStatus"].tolist() == [422]
    assert res["error"].iloc[0] == (
        "billingType: Input should be 'billable' or 'non-billable'; "
        "status: Input should be 'active' or 'inactive'"
    )


# -- code ranges: at most 2500 ids per request -------------------------------------------------


def _long_range(n: int, initiative: str = "M-1") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "initiativeExternalId": [initiative] * n,
            "codeExternalId": [f"L{i:05d}" for i in range(n)],
        }
    )


def _range_requests(sandbox) -> int:
    return _import_count(sandbox, "{initiativeExternalId}/codes")


def test_a_range_over_2500_codes_is_refused_before_sending_naming_the_bound(
    fresh_client: Client, sandbox
) -> None:
    ranges = pd.concat([_long_range(3000), _long_range(2, "M-2")], ignore_index=True)
    sandbox.admin.reset_stats()
    report = validate(code_ranges=ranges)
    errors = report.errors
    assert set(errors["row"]) == set(range(3000)) and set(errors["check"]) == {"range_size"}
    assert "holds 3000 codes; one request carries at most 2500" in errors["message"].iloc[0]
    assert report.bad_rows("code_ranges") == set(range(3000))
    with pytest.raises(ValidationError) as info:
        fresh_client.import_code_ranges(ranges, progress=False)
    assert "at most 2500" in str(info.value)
    # onboarding the valid rows: the long range's rows are skipped, naming the bound
    result = fresh_client.onboard({"code_ranges": ranges}, on_invalid="skip", progress=False)
    rows = result.results.set_index("row")
    assert (rows.loc[list(range(3000)), "status"] == "skipped").all()
    assert rows.loc[0, "error"].count("at most 2500") == 1
    assert (
        sandbox.admin.stats()["routes"]
        .get("POST /api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes", {})
        .get("count", 0)
        == 1
    )  # M-2 only (404: no such initiative)
    assert _range_requests(sandbox) == 1


def test_a_long_range_is_sent_in_parts_of_2500_when_the_service_adds(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    cid = fresh_client.customer_id
    sandbox.admin.set_profile(customer_id=cid, codeRangePost="add")
    ranges = _long_range(3000)
    codes = ranges["codeExternalId"].tolist()
    setup = {
        "clients": _clients(1).assign(externalId="C-1"),
        "initiatives": _OFF_ENUM_INITIATIVE.assign(billingType="billable", status="active"),
        "code_types": pd.DataFrame(
            {
                "externalId": ["T"],
                "name": ["T"],
                "semanticType": ["task"],
                "customerDefaultable": [True],
                "userDefaultable": [True],
            }
        ),
        "codes": pd.DataFrame(
            {"externalId": codes, "name": codes, "description": "", "codeTypeExternalId": "T"}
        ),
    }
    assert fresh_client.onboard(setup, progress=False, workers=8).ok
    sandbox.admin.reset_stats()
    res = fresh_client.import_code_ranges(ranges, code_range_post="add", progress=False)
    assert len(res) == 3000 and res["ok"].all()
    assert (res["attempts"] == 2).all() and (res["httpStatus"] == 201).all()  # both parts
    assert _range_requests(sandbox) == 2
    stored = sandbox.admin.records("code-ranges", customer_id=cid)
    assert [r["codeExternalIds"] for r in stored] == [codes]  # every id, in order
    # onboarding with a journal: the parts are planned and journaled like any record
    journal = tmp_path / "ranges.jsonl"
    first = fresh_client.onboard(
        {"code_ranges": ranges}, journal=journal, code_range_post="add", progress=False
    )
    assert first.ok and (first.results["status"] == "sent").all()
    again = fresh_client.plan({"code_ranges": ranges}, journal=journal, code_range_post="add")
    assert again.requests == 0 and set(again.rows["action"]) == {"unchanged"}
    assert _range_requests(sandbox) == 4


# -- the optional fields the service publishes: validated, sent when given, stored -------------


def test_published_optional_fields_round_trip_to_the_service(
    fresh_client: Client, sandbox, tmp_path
) -> None:
    firm = {
        "clients": pd.DataFrame(
            {
                "externalId": ["C-1", "C-2"],
                "name": "n",
                "callSign": "1",
                "description": "d",
                "type": ["parent", ""],
            }
        ),
        "initiatives": pd.DataFrame(
            {
                "billingType": ["billable"] * 2,
                "externalId": ["M-1", "M-2"],
                "name": "n",
                "description": "d",
                "callSign": "1",
                "clientExternalId": "C-1",
                "unitIncrements": 360,
                "status": "active",
                "locale": ["fr-CA", None],
                "allowFrom": ["2026-01-01", ""],
                "allowTo": ["2026-12-31", ""],
                "externalGroupIds": ["G1; G2", ""],
            }
        ),
        "code_types": pd.DataFrame(
            {
                "externalId": ["T"],
                "name": ["T"],
                "semanticType": ["task"],
                "customerDefaultable": [True],
                "userDefaultable": [True],
                "orderingSequence": ["010"],
            }
        ),
        "codes": pd.DataFrame(
            {
                "externalId": ["L1", "L2"],
                "name": "n",
                "description": "",
                "codeTypeExternalId": "T",
                "orderingSequence": ["a", ""],
                "group": ["lit", ""],
                "isDisabled": ["TRUE", ""],
                "userGroupExternalIds": ['["UG 1", "UG;2"]', ""],
            }
        ),
    }
    planned = fresh_client.onboard(firm, dry_run=True, progress=False).payloads
    assert planned["clients"]["payload"].tolist()[1] == {
        "externalId": "C-2",
        "name": "n",
        "callSign": "1",
        "description": "d",
    }  # none sent
    journal = tmp_path / "firm.jsonl"
    report = fresh_client.onboard(firm, journal=journal, progress=False)
    assert report.ok, report.failures
    cid = fresh_client.customer_id

    def held(kind: str) -> dict[str, dict]:
        return {r["externalId"]: r for r in sandbox.admin.records(kind, customer_id=cid)}

    assert held("clients")["C-1"]["type"] == "parent" and "type" not in held("clients")["C-2"]
    m1, m2 = held("initiatives")["M-1"], held("initiatives")["M-2"]
    assert (m1["locale"], m1["allowFrom"], m1["allowTo"], m1["externalGroupIds"]) == (
        "fr-CA",
        "2026-01-01",
        "2026-12-31",
        ["G1", "G2"],
    )
    assert not {"locale", "allowFrom", "allowTo", "externalGroupIds"} & set(m2)
    assert held("code-types")["T"]["orderingSequence"] == "010"
    l1, l2 = held("codes")["L1"], held("codes")["L2"]
    assert (l1["orderingSequence"], l1["group"], l1["isDisabled"], l1["userGroupExternalIds"]) == (
        "a",
        "lit",
        True,
        ["UG 1", "UG;2"],
    )
    assert not {"orderingSequence", "group", "isDisabled", "userGroupExternalIds"} & set(l2)
    # the plan compares them like any field: a change is an update of that field only
    changed = {**firm, "codes": firm["codes"].assign(group=["tax", ""])}
    plan = fresh_client.plan(changed, journal=journal)
    assert plan.requests == 1
    update = plan.rows[plan.rows["action"] == "update"].iloc[0]
    assert (update["externalId"], update["changed"]) == (
        "L1",
        {"group": {"old": "lit", "new": "tax"}},
    )


def test_the_merged_reply_of_a_range_in_parts_is_its_first_failure() -> None:
    merged = merge_parts(Reply(422, error="bad", attempts=1), not_sent())
    assert (merged.status, merged.error, merged.attempts) == (422, "bad", 1)


# -- one engine: an import is the onboarding of one table ----------------------------------------


def _journal_lines(path: Path) -> list[dict[str, object]]:
    """The journal's lines without what names the customer or the moment, by key (the workers
    answer in any order)."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    kept = [
        {k: v for k, v in line.items() if k not in ("id", "url", "customer", "at")}
        for line in lines
    ]
    return sorted(kept, key=lambda line: str(line["key"]))


def test_import_clients_and_onboard_of_clients_run_the_same_code(
    sandbox, tmp_path, monkeypatch
) -> None:
    from toolkit._ingress import imports

    runs: list[list[str]] = []
    original = imports._send

    def spy(conn, the_plan, jr, **kwargs):  # noqa: ANN001, ANN003, ANN202
        runs.append(list(the_plan.calls))
        return original(conn, the_plan, jr, **kwargs)

    monkeypatch.setattr(imports, "_send", spy)
    frame = _clients(4)
    frame.loc[3, "callSign"] = ""  # a warning: sent as given, reported the same way
    customers = [sandbox.admin.create_customer(f"Same code {i}") for i in range(2)]
    firms = [
        Client(
            c["customerId"],
            c["clientId"],
            c["clientSecret"],
            sandbox.url,
            sandbox.url,
            audience=c["audience"],
            retries=3,
        )
        for c in customers
    ]
    imported = firms[0].import_clients(frame, journal=tmp_path / "a.jsonl", progress=False)
    onboarded = (
        firms[1].onboard({"clients": frame}, journal=tmp_path / "b.jsonl", progress=False).results
    )
    assert runs == [["clients"], ["clients"]]
    assert list(imported.columns) == list(onboarded.columns)
    assert imported.dtypes.to_dict() == onboarded.dtypes.to_dict()
    assert _journal_lines(tmp_path / "a.jsonl") == _journal_lines(tmp_path / "b.jsonl")
    same = ["table", "row", "externalId", "action", "status", "ok", "httpStatus", "error"]
    pd.testing.assert_frame_equal(imported[same], onboarded[same])
    assert imported["warning"].notna().tolist() == [False, False, False, True]
