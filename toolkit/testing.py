"""Fake payloads of the time-billing interface, for notebooks, tests and benchmarks.

Every factory returns plain JSON-ready Python objects (``dict``/``list``/``str``/``int``)
shaped exactly like the interface spec's *export form* (``GET .../v2/.../entries/export``)
or *detailed form* (``GET .../v1/.../entries/release-pending``):

* identifiers (``_id``) are 24 lowercase hex digits;
* timestamps are ISO 8601 UTC with milliseconds and a ``Z`` (``"2026-11-02T14:03:11.123Z"``);
* ``workDate`` is ``YYYY-MM-DD``;
* summaries mix ASCII with accented letters, CJK and emoji so unicode handling is exercised.

The factories are deterministic: the same ``seed`` gives the same payload. Keywords shared by
the factories: ``seed`` (an integer, or a :class:`random.Random` to draw from), ``customer_id``,
``_id``/``user_id`` (random when omitted), ``summary`` (random unicode text by default, ``None``
for JSON null), ``increment_duration_in_seconds`` (``unitIncrementCount * 360`` by default),
``n_users``/``n_initiatives`` (the sizes of the pools drawn from).

>>> from toolkit.testing import fake_export_entries
>>> entries = fake_export_entries(2, codes_per_entry=3, seed=1)
>>> len(entries), len(entries[0]["codes"])
(2, 3)
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "CODE_TYPES",
    "fake_object_id",
    "fake_timestamp",
    "fake_client",
    "fake_initiative",
    "fake_code",
    "fake_export_entry",
    "fake_export_entries",
    "fake_pending_entry",
    "fake_pending_entries",
]


class _Generate:
    """Sentinel type: "make one up" (distinct from ``None``, which means JSON null)."""

    def __repr__(self) -> str:
        return "GENERATE"


GENERATE: Final = _Generate()

#: Code types used by the factories: ``(externalId, name, semanticType)``.
CODE_TYPES: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("task-code", "Task Code", "task"),
    ("activity-code", "Activity Code", "activity"),
    ("phase-code", "Phase Code", "phase"),
    ("location-code", "Location Code", "location"),
    ("action-code", "Action Code", "action"),
    ("billing-category", "Billing Category", None),
)

#: Words of the summaries and names: ASCII, accented letters, CJK, Cyrillic, Greek, emoji.
_WORDS: Final = tuple(
    "Review|draft|contract|call with|client|research|memo|filing"
    "|Überprüfung|Vertrag|café|réunion|señal|façade|naïve|Zürich"
    "|日本語|打ち合わせ|契約書|会議|Привет|встреча|δοκιμή|emoji ✅"
    "|📞|💼|—|“quoted”|O'Brien|tab\there|line\nbreak".split("|")
)
_NAMES: Final = tuple(
    "Acme|Globex|Initech|Umbrella|Stark|Wayne|Müller & Söhne|Société Générale"
    "|株式会社サンプル|Ωmega|Hooli|Vandelay|Pied Piper|Wonka|Tyrell".split("|")
)
_EPOCH: Final = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _rng(seed: int | random.Random) -> random.Random:
    """The generator of ``seed``."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def fake_object_id(seed: int | random.Random = 0) -> str:
    """Return a 24-hex-digit identifier, like the service's ``_id`` values.

    Args:
        seed: The seed (see the module).

    Returns:
        24 lowercase hexadecimal digits.

    >>> fake_object_id(0)
    'c2094cac629f6fbed82c07cd'
    """
    return f"{_rng(seed).getrandbits(96):024x}"


def fake_timestamp(value: dt.datetime) -> str:
    """Format a datetime as the interface does: ISO 8601 UTC, milliseconds, ``Z``.

    Args:
        value: A datetime; naive means UTC.

    Returns:
        The timestamp text.

    >>> import datetime as dt
    >>> fake_timestamp(dt.datetime(2026, 11, 2, 14, 3, 11, 123456))
    '2026-11-02T14:03:11.123Z'
    """
    utc = value.astimezone(dt.UTC) if value.tzinfo is not None else value
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def fake_client(*, seed: int | random.Random = 0, index: int | None = None) -> dict[str, Any]:
    """Return a client as nested in an exported entry (``_id``, ``externalId``, ...).

    Args:
        seed: The seed (see the module).
        index: Number used in ``externalId``/``callSign``; random if omitted.

    Returns:
        ``{"_id", "externalId", "name", "description", "callSign"}``.

    >>> sorted(fake_client(index=3))
    ['_id', 'callSign', 'description', 'externalId', 'name']
    """
    rng = _rng(seed)
    i = rng.randrange(10_000) if index is None else index
    name = f"{rng.choice(_NAMES)} {i}"
    return {
        "_id": fake_object_id(rng),
        "externalId": f"CL-{i:04d}",
        "name": name,
        "description": f"Client {name}",
        "callSign": f"C{i:04d}",
    }


def fake_initiative(
    *,
    seed: int | random.Random = 0,
    index: int | None = None,
    client: Mapping[str, Any] | None | _Generate = GENERATE,
) -> dict[str, Any]:
    """Return an initiative as nested in an exported entry (``externalId``, ``name``, ``client``).

    Args:
        seed: The seed (see the module).
        index: Number used in ``externalId``; random if omitted.
        client: The nested client; generated by default, ``None`` for JSON null.

    Returns:
        ``{"externalId", "name", "client"}``.

    >>> init = fake_initiative(index=12)
    >>> init["externalId"], sorted(init["client"])[:2]
    ('MAT-00012', ['_id', 'callSign'])
    """
    rng = _rng(seed)
    i = rng.randrange(100_000) if index is None else index
    if isinstance(client, _Generate):
        client = fake_client(seed=rng)
    return {
        "externalId": f"MAT-{i:05d}",
        "name": f"Matter {i} — {rng.choice(_WORDS)}",
        "client": None if client is None else dict(client),
    }


def fake_code(
    *,
    seed: int | random.Random = 0,
    type_index: int = 0,
    index: int | None = None,
) -> dict[str, Any]:
    """Return a flat code object (detailed form; the export form wraps it in ``{"code": ...}``).

    Args:
        seed: The seed (see the module).
        type_index: Which of :data:`CODE_TYPES` the code belongs to (taken modulo its length).
        index: Number used in the code's ``externalId``; random if omitted.

    Returns:
        ``{"_id", "externalId", "name", "description", "type": {"_id", "externalId", "name",
        "semanticType"}}``.

    >>> code = fake_code(type_index=1, index=5)
    >>> code["externalId"], code["type"]["externalId"], code["type"]["semanticType"]
    ('activity-code-005', 'activity-code', 'activity')
    """
    rng = _rng(seed)
    type_ext, type_name, semantic = CODE_TYPES[type_index % len(CODE_TYPES)]
    i = rng.randrange(1000) if index is None else index
    return {
        "_id": fake_object_id(rng),
        "externalId": f"{type_ext}-{i:03d}",
        "name": f"{type_ext[0].upper()}{i:03d}",
        "description": f"{type_name} {i}: {rng.choice(_WORDS)}",
        "type": {
            "_id": f"{(type_index % len(CODE_TYPES)) + 1:024x}",
            "externalId": type_ext,
            "name": type_name,
            "semanticType": semantic,
        },
    }


def _copy(obj: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A copy of a nested object, none of its parts shared."""
    return None if obj is None else copy.deepcopy(dict(obj))


def _scalars(
    rng: random.Random,
    _id: str | None,
    customer_id: str,
    user_id: str | None,
    summary: str | None | _Generate = GENERATE,
    seconds: int | None | _Generate = GENERATE,
    updated_at: dt.datetime | None = None,
) -> tuple[dict[str, Any], dt.datetime, dt.datetime]:
    """The fields both forms share, and the entry's creation and last update."""
    if updated_at is None:
        updated_at = _EPOCH + dt.timedelta(milliseconds=rng.randrange(365 * 86_400_000))
    created = updated_at - dt.timedelta(milliseconds=rng.randrange(1, 30 * 86_400_000))
    units = rng.randint(1, 40)
    seconds = units * 360 if isinstance(seconds, _Generate) else seconds
    return (
        {
            "_id": _id or fake_object_id(rng),
            "customerId": customer_id,
            "userId": user_id or f"user-{rng.randrange(1000):04d}",
            "workDate": created.date().isoformat(),
            "summary": (
                " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 7)))
                if isinstance(summary, _Generate)
                else summary
            ),
            "unitIncrementCount": units,
            "incrementDurationInSeconds": seconds,
        },
        created,
        updated_at,
    )


def _codes(
    rng: random.Random, codes: int | Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """``codes`` flat codes made up, copies of the given ones, or ``None``."""
    if codes is None:
        return None
    if isinstance(codes, int):
        return [fake_code(seed=rng, type_index=k) for k in range(codes)]
    return [copy.deepcopy(dict(c)) for c in codes]


def fake_export_entry(
    *,
    seed: int | random.Random = 0,
    _id: str | None = None,
    customer_id: str = "customer-demo",
    user_id: str | None = None,
    external_id: str | None = None,
    summary: str | None | _Generate = GENERATE,
    codes: int | Sequence[Mapping[str, Any]] | None = 3,
    assigned_by: str = "user",
    initiative: Mapping[str, Any] | None | _Generate = GENERATE,
    updated_at: dt.datetime | None = None,
    increment_duration_in_seconds: int | None | _Generate = GENERATE,
) -> dict[str, Any]:
    """Return one time entry in the spec's *export form* (v2 export).

    Args:
        external_id: The billing system's id; ``None`` (not yet acknowledged) by default.
        codes: How many codes to make (one per code type in turn), flat codes to wrap, or
            ``None`` for null.
        assigned_by: ``assignedBy`` of every wrapped code (``user`` or ``service``).
        initiative: The nested initiative; generated by default, ``None`` for JSON null.
        updated_at: When the entry was marked pending (random in 2026 if omitted); ``createdAt``
            and ``workDate`` precede it.

    Returns:
        A JSON-ready dict with every field of the export form.

    >>> e = fake_export_entry(seed=3, codes=2)
    >>> sorted(e)  # doctest: +NORMALIZE_WHITESPACE
    ['_id', 'codes', 'createdAt', 'customerId', 'externalId', 'incrementDurationInSeconds',
     'initiative', 'summary', 'unitIncrementCount', 'updatedAt', 'userId', 'workDate']
    >>> [c["assignedBy"] for c in e["codes"]], sorted(e["codes"][0]["code"]["type"])
    (['user', 'user'], ['_id', 'externalId', 'name', 'semanticType'])
    """
    rng = _rng(seed)
    entry, created, updated = _scalars(
        rng, _id, customer_id, user_id, summary, increment_duration_in_seconds, updated_at
    )
    flat = _codes(rng, codes)
    if isinstance(initiative, _Generate):
        initiative = fake_initiative(seed=rng)
    wrapped = None if flat is None else [{"code": c, "assignedBy": assigned_by} for c in flat]
    entry.update(
        {
            "codes": wrapped,
            "createdAt": fake_timestamp(created),
            "externalId": external_id,
            "initiative": _copy(initiative),
            "updatedAt": fake_timestamp(updated),
        }
    )
    return entry


def _pools(
    rng: random.Random, n_initiatives: int, codes_per_type: int
) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """A firm's initiatives (with clients) and codes per code type, to draw entries from."""
    clients = [fake_client(seed=rng, index=i) for i in range(max(1, n_initiatives // 5))]
    initiatives = [
        fake_initiative(seed=rng, index=i, client=clients[i % len(clients)])
        for i in range(n_initiatives)
    ]
    codes = [
        [fake_code(seed=rng, type_index=t, index=i) for i in range(codes_per_type)]
        for t in range(len(CODE_TYPES))
    ]
    return initiatives, codes


def fake_export_entries(
    n: int,
    codes_per_entry: int = 3,
    seed: int = 0,
    *,
    customer_id: str = "customer-demo",
    n_users: int = 50,
    n_initiatives: int = 100,
    start: dt.datetime | str = "2026-01-01T00:00:00Z",
    end: dt.datetime | str = "2027-01-01T00:00:00Z",
    acknowledged_every: int = 4,
) -> list[dict[str, Any]]:
    """Return ``n`` time entries in the export form, sorted by ``updatedAt``.

    Initiatives, clients and codes are drawn from shared pools (as in a real firm), but
    every entry gets its own copies of the nested objects.

    Args:
        n: Number of entries.
        codes_per_entry: Codes on every entry; code ``k`` has code type ``k`` (modulo the
            number of :data:`CODE_TYPES`).
        start: ``updatedAt`` values fall in ``(start, end]``; naive means UTC.
        end: See ``start``.
        acknowledged_every: Every n-th entry carries an ``externalId`` (``TB-000000``); ``0``
            for none.

    Returns:
        A list of JSON-ready dicts.

    >>> entries = fake_export_entries(3, codes_per_entry=1, seed=2)
    >>> [len(e["codes"]) for e in entries]
    [1, 1, 1]
    """
    rng = random.Random(seed)
    initiatives, codes = _pools(rng, n_initiatives, 20)
    users = [f"user-{u:04d}" for u in range(n_users)]
    out = []
    lo, hi = (dt.datetime.fromisoformat(t) if isinstance(t, str) else t for t in (start, end))
    lo, hi = (t if t.tzinfo else t.replace(tzinfo=dt.UTC) for t in (lo, hi))
    span_ms = int((hi - lo).total_seconds() * 1000)
    if span_ms <= 0:
        raise ValueError(f"start {lo.isoformat()} must be before end {hi.isoformat()}")
    # (lo, hi]: never exactly lo, so the entries fall inside a "released after lo" query.
    spread = sorted(lo + dt.timedelta(milliseconds=rng.randint(1, span_ms)) for _ in range(n))
    for i, updated in enumerate(spread):
        entry, created, _ = _scalars(rng, None, customer_id, rng.choice(users), updated_at=updated)
        assigned = "service" if i % 7 == 0 else "user"
        entry["codes"] = [
            {"code": _copy(rng.choice(codes[k % len(CODE_TYPES)])), "assignedBy": assigned}
            for k in range(codes_per_entry)
        ]
        entry["createdAt"] = fake_timestamp(created)
        entry["externalId"] = (
            f"TB-{i:06d}" if acknowledged_every and i % acknowledged_every == 0 else None
        )
        entry["initiative"] = _copy(rng.choice(initiatives))
        entry["updatedAt"] = fake_timestamp(updated)
        out.append(entry)
    return out


def _initiative_props(
    rng: random.Random,
    initiative: Mapping[str, Any] | None,
    tags: Sequence[str] | None | _Generate,
) -> dict[str, Any]:
    """The ``initiativeProps`` of a detailed entry, expanding an export-form initiative."""
    nested = None
    if initiative is not None:
        nested = {
            "type": "pms",
            "_id": fake_object_id(rng),
            "billingType": rng.choice(("billable", "billable", "non-billable")),
            "callSign": initiative.get("externalId", "").replace("MAT-", "M"),
            "unitIncrements": 360,
            "externalId": initiative.get("externalId"),
            "name": initiative.get("name"),
            "description": f"Description of {initiative.get('name')}",
            "client": None if initiative.get("client") is None else dict(initiative["client"]),
        }
    if isinstance(tags, _Generate):
        tags = ["pinned"] if rng.random() < 0.3 else []
    return {
        "type": "pms",
        "colorHex": f"{rng.getrandbits(24):06x}",
        "tags": None if tags is None else list(tags),
        "nickname": f"{rng.choice(_NAMES)} ✨" if rng.random() < 0.5 else "",
        "initiative": nested,
    }


def fake_pending_entry(
    *,
    seed: int | random.Random = 0,
    _id: str | None = None,
    customer_id: str = "customer-demo",
    user_id: str | None = None,
    external_id: str | None = None,
    summary: str | None | _Generate = GENERATE,
    codes: int | Sequence[Mapping[str, Any]] | None = 3,
    initiative: Mapping[str, Any] | None | _Generate = GENERATE,
    tags: Sequence[str] | None | _Generate = GENERATE,
    initiative_props: Mapping[str, Any] | None | _Generate = GENERATE,
    increment_duration_in_seconds: int | None | _Generate = GENERATE,
) -> dict[str, Any]:
    """Return one time entry in the spec's *detailed form* (release-pending list).

    Args:
        external_id: ``externalId``; ``None`` (JSON null) by default.
        codes: How many flat codes to make, flat codes to copy, or ``None`` for null.
        initiative: Export-form initiative to expand into ``initiativeProps.initiative``;
            generated by default, ``None`` for null.
        tags: ``initiativeProps.tags``; ``["pinned"]`` or ``[]`` at random by default.
        initiative_props: Replace the whole ``initiativeProps`` object (``None`` for null).

    Returns:
        A JSON-ready dict with every field of the detailed form.

    >>> p = fake_pending_entry(seed=1, tags=["pinned"])
    >>> p["initiativeProps"]["tags"], "assignedBy" in p["codes"][0]
    (['pinned'], False)
    """
    rng = _rng(seed)
    entry, _, _ = _scalars(
        rng, _id, customer_id, user_id, summary, increment_duration_in_seconds, None
    )
    if isinstance(initiative, _Generate):
        initiative = fake_initiative(seed=rng)
    if isinstance(initiative_props, _Generate):
        props: dict[str, Any] | None = _initiative_props(rng, initiative, tags)
    else:
        props = None if initiative_props is None else dict(initiative_props)
    entry["initiativeProps"] = props
    entry["externalId"] = external_id
    entry["codes"] = _codes(rng, codes)
    return entry


def fake_pending_entries(
    n: int,
    codes_per_entry: int = 3,
    seed: int = 0,
    *,
    customer_id: str = "customer-demo",
    n_users: int = 50,
    n_initiatives: int = 100,
) -> list[dict[str, Any]]:
    """Return ``n`` time entries in the detailed (release-pending) form.

    Args:
        n: Number of entries.
        codes_per_entry: Flat codes on every entry; code ``k`` has code type ``k``.

    Returns:
        A list of JSON-ready dicts.

    >>> pending = fake_pending_entries(2, codes_per_entry=2, seed=5)
    >>> [len(p["codes"]) for p in pending], sorted(pending[0]["initiativeProps"])
    ([2, 2], ['colorHex', 'initiative', 'nickname', 'tags', 'type'])
    """
    rng = random.Random(seed)
    initiatives, codes = _pools(rng, n_initiatives, 20)
    users = [f"user-{u:04d}" for u in range(n_users)]
    out = []
    for _ in range(n):
        entry, _, _ = _scalars(rng, None, customer_id, rng.choice(users))
        entry["initiativeProps"] = _initiative_props(rng, rng.choice(initiatives), GENERATE)
        entry["externalId"] = None
        entry["codes"] = [
            _copy(rng.choice(codes[k % len(CODE_TYPES)])) for k in range(codes_per_entry)
        ]
        out.append(entry)
    return out
