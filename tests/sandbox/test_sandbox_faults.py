"""Fault injection and request counting (on a sandbox of their own)."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.conftest import TIMEOUT, fetch_token
from toolkit.sandbox import Admin, AdminError, Faults, Sandbox, running
from toolkit.sandbox._app import create_app
from toolkit.sandbox._faults import FaultSettings, StatusFaults, TokenFaults, fault_status
from toolkit.sandbox._store import Store


@pytest.fixture(scope="module")
def fsb() -> Iterator[Sandbox]:
    with running() as sb:
        yield sb


@pytest.fixture
def clean(fsb: Sandbox) -> Iterator[Sandbox]:
    fsb.admin.clear_faults()
    fsb.admin.reset_stats()
    yield fsb
    fsb.admin.clear_faults()


@pytest.fixture
def headers(fsb: Sandbox) -> dict[str, str]:
    return {
        "Authorization": "Bearer "
        + fetch_token(fsb.url, fsb.client_id, fsb.client_secret, fsb.audience)
    }


def _pending(sb: Sandbox, headers: dict[str, str]) -> requests.Response:
    return requests.get(
        f"{sb.url}/api/v1/customers/{sb.customer_id}/entries/release-pending",
        headers=headers,
        timeout=TIMEOUT,
    )


def _import(sb: Sandbox, headers: dict[str, str], external_id: str) -> requests.Response:
    return requests.post(
        f"{sb.url}/api/v1/customers/{sb.customer_id}/clients/import",
        json={"externalId": external_id, "name": "", "callSign": "", "description": ""},
        headers=headers,
        timeout=TIMEOUT,
    )


def test_faults_are_off_by_default(clean: Sandbox, headers: dict[str, str]) -> None:
    settings = clean.admin.faults()
    assert (settings["rate"], settings["itemErrorRate"], settings["latencyMs"]) == (0, 0, 0)
    assert all(_pending(clean, headers).status_code == 200 for _ in range(20))


@pytest.mark.parametrize("status", [429, 503])
def test_injected_429_and_503_carry_retry_after(
    clean: Sandbox, headers: dict[str, str], status: int
) -> None:
    clean.admin.set_faults(rate=1.0, statuses=[status], retry_after_seconds=7)
    response = _pending(clean, headers)
    assert response.status_code == status
    assert response.headers["Retry-After"] == "7"
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == status


def test_injected_500_has_no_retry_after(clean: Sandbox, headers: dict[str, str]) -> None:
    clean.admin.set_faults(rate=1.0, statuses=[500])
    response = _pending(clean, headers)
    assert response.status_code == 500
    assert "Retry-After" not in response.headers


def test_faults_answer_before_any_work_is_done(clean: Sandbox, headers: dict[str, str]) -> None:
    clean.admin.set_faults(rate=1.0, statuses=[503])
    assert _import(clean, headers, "NEVER").status_code == 503
    assert all(c["externalId"] != "NEVER" for c in clean.admin.records("clients"))


def test_faults_spare_administration_and_openapi(clean: Sandbox) -> None:
    clean.admin.set_faults(rate=1.0, statuses=[500])
    assert requests.get(f"{clean.url}/openapi.json", timeout=TIMEOUT).status_code == 200
    assert clean.admin.records("clients") is not None


def test_rate_is_a_fraction_and_the_seed_repeats_the_sequence(
    clean: Sandbox, headers: dict[str, str]
) -> None:
    def run() -> list[int]:
        clean.admin.set_faults(rate=0.3, statuses=[429, 500, 503], seed=42)
        return [_pending(clean, headers).status_code for _ in range(60)]

    first, second = run(), run()
    assert first == second
    faulted = [s for s in first if s != 200]
    assert 5 <= len(faulted) <= 35
    counters = clean.admin.faults()["counters"]
    assert counters["requests"] == 60
    assert sum(counters["injected"].values()) == len(faulted)


def test_latency_delays_interface_requests(clean: Sandbox, headers: dict[str, str]) -> None:
    clean.admin.set_faults(latency_ms=150)
    start = time.perf_counter()
    assert _pending(clean, headers).status_code == 200
    assert time.perf_counter() - start >= 0.15


def test_item_errors_answer_500_per_item_without_applying_it(
    clean: Sandbox, headers: dict[str, str]
) -> None:
    sb = clean
    sb.admin.create_user("TKF", "F", "f@example.com")
    _import(sb, headers, "CF")
    requests.post(
        f"{sb.url}/api/v1/customers/{sb.customer_id}/initiatives/import",
        json={
            "billingType": "billable",
            "externalId": "MF",
            "name": "",
            "callSign": "",
            "description": "",
            "clientExternalId": "CF",
            "unitIncrements": 360,
            "status": "active",
        },
        headers=headers,
        timeout=TIMEOUT,
    )
    sb.admin.set_faults(item_error_rate=1.0)
    response = requests.post(
        f"{sb.url}/api/v1/public/customers/{sb.customer_id}/initiative-props/star",
        json={"timekeeperExternalId": "TKF", "initiativeExternalIds": ["MF", "M404"]},
        headers=headers,
        timeout=TIMEOUT,
    )
    assert response.status_code == 207
    assert response.json()["response"] == [
        {"initiativeExternalId": "MF", "status": 500},
        {"initiativeExternalId": "M404", "status": 500},
    ]
    assert sb.admin.records("stars") == []
    assert sb.admin.faults()["counters"]["itemErrors"] == 2


def test_clear_faults_restores_normal_service(clean: Sandbox, headers: dict[str, str]) -> None:
    clean.admin.set_faults(rate=1.0)
    clean.admin.clear_faults()
    assert _pending(clean, headers).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"rate": 1.5},
        {"rate": -0.1},
        {"statuses": [404]},
        {"statuses": []},
        {"rate": "0.5"},
        {"latencyMs": -1},
        {"itemErrorRate": 2},
        {"retryAfterSeconds": "1"},
        {"unknown": 1},
    ],
)
def test_bad_fault_settings_are_422(clean: Sandbox, body: dict) -> None:
    response = requests.put(f"{clean.url}/sandbox/v1/faults", json=body, timeout=TIMEOUT)
    assert response.status_code == 422


def test_stats_count_interface_requests_per_route_template_and_method(
    clean: Sandbox, headers: dict[str, str]
) -> None:
    clean.admin.reset_stats()
    for i in range(3):
        _import(clean, headers, f"S{i}")
    _pending(clean, headers)
    clean.admin.set_faults(rate=1.0, statuses=[503])
    _pending(clean, headers)
    clean.admin.records("clients")  # administration is not counted
    stats = clean.admin.stats()
    assert stats["total"] == 5
    assert stats["routes"] == {
        "POST /api/v1/customers/{customerId}/clients/import": {"count": 3, "statuses": {"201": 3}},
        "GET /api/v1/customers/{customerId}/entries/release-pending": {
            "count": 2,
            "statuses": {"200": 1, "503": 1},
        },
    }
    assert clean.admin.reset_stats() == {"total": 0, "routes": {}}


def test_stats_count_the_token_endpoint_and_401s(clean: Sandbox) -> None:
    clean.admin.reset_stats()
    requests.get(
        f"{clean.url}/api/v1/customers/{clean.customer_id}/entries/release-pending", timeout=TIMEOUT
    )
    fetch_token(clean.url, clean.client_id, clean.client_secret, clean.audience)
    routes = clean.admin.stats()["routes"]
    assert routes["POST /api/v1/oauth/token"]["statuses"] == {"200": 1}
    assert routes["GET /api/v1/customers/{customerId}/entries/release-pending"]["statuses"] == {
        "401": 1
    }


def test_admin_helper_raises_admin_error_on_bad_settings(clean: Sandbox) -> None:
    with pytest.raises(AdminError) as err:
        clean.admin.set_faults(rate=3)
    assert err.value.status == 422


# -- one mechanism: every kind of fault is declared and drawn in toolkit.sandbox._faults ----------


def test_global_and_token_faults_draw_the_same_answers_from_the_same_seed() -> None:
    setting = {"rate": 0.3, "statuses": [429, 500, 503]}
    faults = Faults()
    faults.configure(**setting, seed=42)
    draws = random.Random(42)
    assert [faults.decide() for _ in range(200)] == [
        fault_status(setting, draws) for _ in range(200)
    ]
    assert issubclass(TokenFaults, StatusFaults) and issubclass(FaultSettings, StatusFaults)


def test_configure_takes_the_declared_settings_by_json_or_snake_case_name() -> None:
    assert Faults().configure(latencyMs=5, item_error_rate=0.5)["latencyMs"] == 5
    assert list(Faults().snapshot()) == [*FaultSettings.model_fields, "counters"]
    with pytest.raises(ValueError, match="dropRate"):
        Faults().configure(dropRate=0.5)


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m[1].lower(), name)


def test_the_route_the_admin_client_and_the_docs_derive_from_the_declared_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    declared = list(FaultSettings.model_fields)
    admin, sent = Admin("http://127.0.0.1:9"), []
    monkeypatch.setattr(admin, "_call", lambda method, path, body=None: sent.append(body) or {})
    admin.set_faults(**{_snake(name): [429] if name == "statuses" else 0 for name in declared})
    assert list(sent[0]) == declared
    with pytest.raises(TypeError, match="unexpected keyword argument 'drop_rate'"):
        admin.set_faults(drop_rate=0.5)
    store = Store(tmp_path / "s.db")
    try:
        schemas = create_app(store).openapi()["components"]["schemas"]
    finally:
        store.close()
    assert list(schemas["FaultsIn"]["properties"]) == declared
    text = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text(encoding="utf-8")
    table = text.split("## Faults and request counts", 1)[1].split("| Field |", 1)[1]
    assert re.findall(r"^\| `(\w+)` \|", table.split("\n\n", 1)[0], flags=re.M) == declared
