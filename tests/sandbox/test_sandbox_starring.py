"""Starring: per-item results, idempotence, bounds, timekeeper resolution, the paged list."""

from __future__ import annotations

import base64

import pytest

from tests.conftest import Firm

PROPS = "/api/v1/public/customers/{cid}/initiative-props"
ITEM_KEYS = {"initiativeExternalId", "status"}
ERROR_KEYS = ITEM_KEYS | {"errorCode", "errorMessage"}


def star(firm: Firm, ids: list[str], tk: str = "TK1", op: str = "star"):
    return firm.api(
        "POST", f"{PROPS}/{op}", json={"timekeeperExternalId": tk, "initiativeExternalIds": ids}
    )


def starred(firm: Firm, tk: str = "TK1", **params: object):
    return firm.api("GET", f"{PROPS}/starred", params={"timekeeperExternalId": tk, **params})


def all_starred(firm: Firm, tk: str = "TK1", limit: int = 2500) -> list[str]:
    ids: list[str] = []
    cursor = None
    for _ in range(1000):
        params: dict[str, object] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        page = starred(firm, tk, **params).json()
        ids += page["initiativeExternalIds"]
        cursor = page["nextCursor"]
        if cursor is None:
            return ids
    raise AssertionError("the starred list never ended")


def _import_initiatives(firm: Firm, ids: list[str], status: str = "active") -> None:
    for external_id in ids:
        body = {
            "billingType": "billable",
            "externalId": external_id,
            "name": external_id,
            "description": "",
            "callSign": external_id,
            "clientExternalId": "C1",
            "unitIncrements": 360,
            "status": status,
        }
        assert (
            firm.api("POST", "/api/v1/customers/{cid}/initiatives/import", json=body).status_code
            == 201
        )


@pytest.mark.parametrize("op", ["star", "unstar"])
def test_per_item_results_in_first_seen_order_without_duplicates(firm: Firm, op: str) -> None:
    firm.admin.set_walls(firm.users["TK1"], ["M2"])
    response = star(firm, ["M9", "M1", "M2", "M1", "M3", "M9"], op=op)
    assert response.status_code == 207
    items = response.json()["response"]
    if op == "star":
        assert [(i["initiativeExternalId"], i["status"], i.get("errorCode")) for i in items] == [
            ("M9", 404, 20080),
            ("M1", 200, None),
            ("M2", 403, 20083),
            ("M3", 422, 20081),
        ]
        assert items[2]["errorMessage"] == "initiative access denied"
    else:  # none of them is starred: already in the target state wins over 403 and 422
        assert [(i["initiativeExternalId"], i["status"], i.get("errorCode")) for i in items] == [
            ("M9", 404, 20080),
            ("M1", 200, None),
            ("M2", 200, None),
            ("M3", 200, None),
        ]
    assert set(items[1]) == ITEM_KEYS  # no errorCode, no errorMessage on success
    assert all(set(i) == ERROR_KEYS for i in items if i["status"] != 200)
    assert all(
        isinstance(i["errorMessage"], str) and i["errorMessage"] for i in items if "errorCode" in i
    )


def test_star_then_list(firm: Firm) -> None:
    assert star(firm, ["M1", "M2"]).status_code == 207
    assert all_starred(firm) == ["M1", "M2"]


def test_star_is_idempotent(firm: Firm) -> None:
    first = star(firm, ["M1"]).json()
    again = star(firm, ["M1"]).json()
    assert first == again == {"response": [{"initiativeExternalId": "M1", "status": 200}]}
    assert all_starred(firm) == ["M1"]


def test_unstar_of_a_not_starred_initiative_is_200(firm: Firm) -> None:
    items = star(firm, ["M1"], op="unstar").json()["response"]
    assert items == [{"initiativeExternalId": "M1", "status": 200}]


def test_star_adds_only_and_unstar_removes_only_the_listed(firm: Firm) -> None:
    _import_initiatives(firm, ["M4", "M5"])
    star(firm, ["M1", "M2"])
    star(firm, ["M4"])
    assert all_starred(firm) == ["M1", "M2", "M4"]
    star(firm, ["M2", "M5"], op="unstar")
    assert all_starred(firm) == ["M1", "M4"]


def test_starring_is_per_user(firm: Firm) -> None:
    star(firm, ["M1"], tk="TK1")
    star(firm, ["M2"], tk="TK2")
    assert (all_starred(firm, "TK1"), all_starred(firm, "TK2")) == (["M1"], ["M2"])


def test_starring_a_walled_initiative_grants_nothing(firm: Firm) -> None:
    firm.admin.set_walls(firm.users["TK1"], ["M1"])
    assert star(firm, ["M1"]).json()["response"][0]["status"] == 403
    firm.admin.set_walls(firm.users["TK1"], [])
    assert all_starred(firm) == []


def test_initiative_of_another_customer_is_404(firm: Firm, tenant_factory) -> None:
    other = tenant_factory()
    other.api(
        "POST",
        "/api/v1/customers/{cid}/clients/import",
        json={"externalId": "CX", "name": "", "callSign": "", "description": ""},
    )
    other.api(
        "POST",
        "/api/v1/customers/{cid}/initiatives/import",
        json={
            "billingType": "billable",
            "externalId": "MX",
            "name": "",
            "callSign": "",
            "description": "",
            "clientExternalId": "CX",
            "unitIncrements": 6,
            "status": "active",
        },
    )
    assert star(firm, ["MX"]).json()["response"][0]["status"] == 404


def test_product_created_initiatives_are_not_addressable_nor_listed(firm: Firm) -> None:
    product = firm.admin.create_product_initiative(firm.users["TK1"], "Internal admin")
    assert star(firm, [product["_id"], "Internal admin"]).json()["response"][0]["status"] == 404
    star(firm, ["M1"])
    assert all_starred(firm) == ["M1"]
    kinds = [s["source"] for s in firm.admin.records("stars")]
    assert kinds == ["product", "pms"]  # the raw pinned props hold it


@pytest.mark.parametrize("op", ["star", "unstar"])
@pytest.mark.parametrize(
    "body",
    [
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": []},
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": [f"M{i}" for i in range(101)]},
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1"] * 101},
        {"timekeeperExternalId": "TK1"},
        {"initiativeExternalIds": ["M1"]},
        {"timekeeperExternalId": "", "initiativeExternalIds": ["M1"]},
        {"timekeeperExternalId": 101, "initiativeExternalIds": ["M1"]},
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": "M1"},
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": [1]},
        {"timekeeperExternalId": "TK1", "initiativeExternalIds": ["M1"], "x": 1},
    ],
    ids=[
        "no-ids",
        "101-ids",
        "101-duplicates",
        "no-id-list",
        "no-timekeeper",
        "empty-timekeeper",
        "timekeeper-number",
        "ids-string",
        "id-number",
        "extra-field",
    ],
)
def test_request_outside_the_bounds_is_400(firm: Firm, op: str, body: dict) -> None:
    response = firm.api("POST", f"{PROPS}/{op}", json=body)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"


def test_one_hundred_ids_are_accepted(firm: Firm) -> None:
    ids = [f"M{i}" for i in range(100)]
    items = star(firm, ids).json()["response"]
    assert [i["initiativeExternalId"] for i in items] == ids


@pytest.mark.parametrize("op", ["star", "unstar", "starred"])
def test_unknown_timekeeper_is_404_and_ambiguous_is_409(firm: Firm, op: str) -> None:
    firm.admin.create_user("TKX", "Twin A", "a@example.com")
    firm.admin.create_user("TKX", "Twin B", "b@example.com")

    def call(tk: str):
        if op == "starred":
            return starred(firm, tk)
        return star(firm, ["M1"], tk=tk, op=op)

    unknown, ambiguous = call("TK404"), call("TKX")
    assert (unknown.status_code, ambiguous.status_code) == (404, 409)
    for response in (unknown, ambiguous):
        assert response.headers["content-type"] == "application/problem+json"
        assert "response" not in response.json()


# --- the starred list -------------------------------------------------------------------------


def test_list_pages_by_pin_order_and_ends_with_a_null_cursor(firm: Firm) -> None:
    ids = [f"P{i:02d}" for i in range(7)]
    _import_initiatives(firm, ids)
    star(firm, ids[3:] + ids[:3])
    pages = []
    cursor = None
    while True:
        params: dict[str, object] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = starred(firm, **params).json()
        pages.append(page["initiativeExternalIds"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert pages == [ids[3:6], [ids[6], *ids[:2]], ids[2:3]]


def test_exact_multiple_of_limit_ends_without_an_empty_page(firm: Firm) -> None:
    star(firm, ["M1", "M2"])
    first = starred(firm, limit=2).json()
    assert first == {"initiativeExternalIds": ["M1", "M2"], "nextCursor": None}


def test_filtering_after_the_page_gives_short_and_empty_pages_with_a_cursor(
    firm: Firm,
) -> None:
    _import_initiatives(firm, ["A1", "A2", "A3", "A4"])
    user = firm.users["TK1"]
    star(firm, ["A1", "A2", "A3", "A4"])
    firm.admin.create_product_initiative(user, "Internal")  # pinned 5th
    star(firm, ["M1"])  # 6th
    firm.admin.set_walls(user, ["A2", "A3", "A4"])
    page1 = starred(firm, limit=2).json()
    assert page1["initiativeExternalIds"] == ["A1"] and page1["nextCursor"]
    page2 = starred(firm, limit=2, cursor=page1["nextCursor"]).json()
    assert page2["initiativeExternalIds"] == [] and page2["nextCursor"]
    page3 = starred(firm, limit=2, cursor=page2["nextCursor"]).json()
    assert page3 == {"initiativeExternalIds": ["M1"], "nextCursor": None}


def test_lost_access_is_not_listed_but_an_inactive_initiative_still_is(firm: Firm) -> None:
    star(firm, ["M1", "M2"])
    firm.admin.set_walls(firm.users["TK1"], ["M2"])
    assert all_starred(firm) == ["M1"]
    _import_initiatives(firm, ["M1"], status="inactive")  # the spec filters access only
    assert all_starred(firm) == ["M1"]
    firm.admin.set_walls(firm.users["TK1"], [])
    assert all_starred(firm) == ["M1", "M2"]


def test_default_limit_is_2500(firm: Firm) -> None:
    ids = [f"M{i}" for i in range(1, 3)]
    star(firm, ids)
    assert starred(firm).json() == {"initiativeExternalIds": ids, "nextCursor": None}
    assert starred(firm, limit=2500).status_code == 200
    assert starred(firm, limit=1).status_code == 200


@pytest.mark.parametrize("limit", [0, -1, 2501, "ten", "1.5", ""])
def test_limit_outside_1_to_2500_is_400(firm: Firm, limit: object) -> None:
    response = starred(firm, limit=limit)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"


def test_missing_timekeeper_is_400(firm: Firm) -> None:
    assert firm.api("GET", f"{PROPS}/starred").status_code == 400


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        "bm90IGEgY3Vyc29y",
        base64.urlsafe_b64encode(b"v1:x:1").decode(),
        base64.urlsafe_b64encode(b"v1:abc:-1").decode(),
        "%%%",
        "a",
    ],
    ids=["not-base64", "not-ours", "other-user", "negative", "symbols", "short"],
)
def test_invalid_cursor_is_400(firm: Firm, cursor: str) -> None:
    star(firm, ["M1", "M2"])
    response = starred(firm, limit=1, cursor=cursor)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"


def test_cursor_of_another_users_list_is_400(firm: Firm) -> None:
    star(firm, ["M1", "M2"], tk="TK1")
    star(firm, ["M1", "M2"], tk="TK2")
    cursor = starred(firm, "TK1", limit=1).json()["nextCursor"]
    assert starred(firm, "TK2", limit=1, cursor=cursor).status_code == 400


def test_empty_cursor_is_the_first_page(firm: Firm) -> None:
    star(firm, ["M1"])
    assert starred(firm, cursor="").json()["initiativeExternalIds"] == ["M1"]


def test_cursor_survives_unstarring_of_the_last_seen_item(firm: Firm) -> None:
    star(firm, ["M1", "M2"])
    cursor = starred(firm, limit=1).json()["nextCursor"]
    star(firm, ["M1"], op="unstar")
    assert starred(firm, limit=1, cursor=cursor).json() == {
        "initiativeExternalIds": ["M2"],
        "nextCursor": None,
    }


def test_a_starred_initiative_that_became_inactive_can_be_unstarred(firm: Firm) -> None:
    assert star(firm, ["M1", "M2"]).status_code == 207
    _import_initiatives(firm, ["M1"], status="inactive")
    assert all_starred(firm) == ["M1", "M2"]  # still listed: the spec filters access only
    again = star(firm, ["M1"]).json()["response"]
    assert again == [{"initiativeExternalId": "M1", "status": 200}]  # already starred
    gone = star(firm, ["M1"], op="unstar").json()["response"]
    assert gone == [{"initiativeExternalId": "M1", "status": 200}]
    assert all_starred(firm) == ["M2"]
    # starring it anew is refused: it is inactive
    assert star(firm, ["M1"]).json()["response"][0]["status"] == 422


def test_already_in_the_target_state_wins_over_a_wall(firm: Firm) -> None:
    assert star(firm, ["M2"]).status_code == 207
    firm.admin.set_walls(firm.users["TK1"], ["M2"])
    assert star(firm, ["M2"]).json()["response"] == [{"initiativeExternalId": "M2", "status": 200}]
    walled = star(firm, ["M2"], op="unstar").json()["response"][0]
    assert (walled["status"], walled["errorCode"]) == (403, 20083)


def test_an_edited_cursor_is_400(firm: Firm) -> None:
    assert star(firm, ["M1", "M2"]).status_code == 207
    cursor = starred(firm, limit=1).json()["nextCursor"]
    text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    version, user, seq, mac = text.split(":")
    edited = base64.urlsafe_b64encode(f"{version}:{user}:0:{mac}".encode()).decode()
    assert starred(firm, limit=1, cursor=cursor).status_code == 200
    response = starred(firm, limit=1, cursor=edited)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
