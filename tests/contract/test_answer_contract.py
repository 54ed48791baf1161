"""The answer contract: answers generated from the published schemas, read by the toolkit.

For release-pending, the v2 export, the token, the batch acknowledgement and the user record,
schemathesis' JSON Schema generator (the one its ``st run`` draws bodies with: hypothesis-jsonschema
0.23.1 does not run with the locked hypothesis 6.170) generates answers from the schema the
documents publish for them
(``published.json``, made by ``derive.py`` from the public copy of the documents; the v2 export has
none, so ``export_form.json`` is interface.md's export form with published.md's differences). Each
answer goes through the toolkit's reader for it, not over HTTP: it either parses with every value
of an interface field kept, or is refused with a message naming the entry and the field.

The schemas are taken as generators take them (Prism's mock, schemathesis): fields the documents
do not close are open, so generated objects carry fields no document names; ``nullable`` is
JSON Schema's ``null``. ``python -m tests.contract.test_answer_contract`` (or pytest ``-s``)
prints how many answers each operation got, how many parsed and the refusals grouped by message.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.generation.jsonschema.builder import build

from tests.contract.published import json_schema, operation
from toolkit._bulk.runner import Call
from toolkit._core.auth import TokenProvider
from toolkit._core.http import Reply
from toolkit._egress.ack_batch import _Batches, item_status
from toolkit._egress.export import Export
from toolkit._egress.users import BILLING_IDENTITY, timekeeper_id
from toolkit.errors import FlattenError, InputWarning

#: answers generated per operation: enough to meet each optional, nullable and odd form many
#: times, few enough that the file runs in well under a minute on a shared 2-core machine
EXAMPLES = {"release-pending": 60, "v2 export": 60, "token": 40, "batch": 40, "user": 30}
#: ``CONTRACT_EXAMPLES_SCALE=10`` draws ten times as many (for a report, not for ``make test``)
SCALE = int(os.environ.get("CONTRACT_EXAMPLES_SCALE", "1"))

_SETTINGS = settings(
    deadline=None,
    database=None,
    derandomize=True,  # the same answers each run: the summary's figures are reproducible
    phases=[Phase.generate],  # a failing answer is shown as drawn: shrinking these takes minutes
    suppress_health_check=list(HealthCheck),
)
_OFFSETS = st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))])
_FORMATS = {
    "objectid": st.from_regex(r"\A[0-9a-f]{24}\Z"),
    "iso-date-time": st.datetimes(timezones=_OFFSETS).map(lambda t: t.isoformat()),
    "iso-date": st.dates().map(lambda d: d.isoformat()),
    "color-hex": st.from_regex(r"\A[0-9a-fA-F]{6}\Z"),
}


def _generatable(schema: Any) -> Any:
    """A schema as hypothesis-jsonschema takes it: ``format`` kept on strings only (the documents
    put ``int64`` and ``double`` on numbers, which JSON Schema ignores)."""
    if isinstance(schema, list):
        return [_generatable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _generatable(v) for k, v in schema.items()}
    if "format" in out and out.get("type") != "string":
        del out["format"]
    return out


def _answers(schema: Any) -> st.SearchStrategy[Any]:
    """Answers an OpenAPI 3.0 schema allows, as JSON Schema draft 7 reads it."""
    return build(_generatable(json_schema(schema)), draft=7, formats=_FORMATS)


def _published(service: str, method: str, path: str, status: str) -> st.SearchStrategy[Any]:
    op = operation(service, method, path)
    assert op is not None, path
    return _answers(op["responses"][status])


_EXPORT_FORM = json.loads(Path(__file__).with_name("export_form.json").read_text("utf-8"))
STRATEGIES = {
    "release-pending": _published(
        "time", "GET", "/api/v1/customers/c/entries/release-pending", "200"
    ),
    "v2 export": _answers(_EXPORT_FORM["schema"]),
    "token": _published("identity", "POST", "/api/v1/oauth/token", "200"),
    "batch": _published(
        "time", "POST", "/api/v1/customers/c/entries/release-succeeded/batch", "207"
    ),
    "user": _published("identity", "GET", "/api/v1/customers/c/users/u", "200"),
}


@dataclass
class Tally:
    """What one operation's answers came to."""

    generated: int = 0
    parsed: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    warned: Counter[str] = field(default_factory=Counter)


TALLY = {name: Tally() for name in STRATEGIES}


def _shape(message: str) -> str:
    """A message with its entries and values left out, to group refusals and warnings by kind."""
    message = re.sub(r"entry '(?:[^'\\]|\\.)*'", "entry '…'", message)
    message = re.sub(r"entry \d+ \(0-based", "entry N (0-based", message)
    message = re.sub(r" \(and \d+ more entries\)", "", message)
    message = re.sub(
        r"(holds [\w.]+|expires_in|: \S+) .*?(?= \(and|, not| is not)", r"\1 …", message
    )
    return re.sub(r"for \d+ s", "for N s", message)


def _read(name: str, answer: Any, read: Any) -> Any:
    """Run a reader, counting the answer as parsed or refused (with the message's shape)."""
    tally = TALLY[name]
    tally.generated += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = read(answer)
        except FlattenError as exc:
            tally.refused[_shape(str(exc))] += 1
            return exc
    for w in caught:
        if issubclass(w.category, InputWarning):
            tally.warned[_shape(str(w.message))] += 1
    tally.parsed += 1
    return result


# -- release-pending and the v2 export: Export.from_json -----------------------------------------

#: interface.md's fields of each form (dotted); the codes' as the codes frame names them
INTERFACE = {
    "pending": (
        "_id customerId userId workDate summary unitIncrementCount incrementDurationInSeconds"
        " externalId initiativeProps.type initiativeProps.colorHex initiativeProps.tags"
        " initiativeProps.nickname initiativeProps.initiative.type initiativeProps.initiative._id"
        " initiativeProps.initiative.billingType initiativeProps.initiative.callSign"
        " initiativeProps.initiative.unitIncrements initiativeProps.initiative.externalId"
        " initiativeProps.initiative.name initiativeProps.initiative.description"
        " initiativeProps.initiative.client._id initiativeProps.initiative.client.externalId"
        " initiativeProps.initiative.client.name initiativeProps.initiative.client.description"
        " initiativeProps.initiative.client.callSign"
    ).split(),
    "export": (
        "_id customerId userId externalId workDate summary unitIncrementCount"
        " incrementDurationInSeconds createdAt updatedAt initiative.externalId initiative.name"
        " initiative.client._id initiative.client.externalId initiative.client.name"
        " initiative.client.description initiative.client.callSign"
    ).split(),
}
CODE_FIELDS = "_id externalId name description type._id type.externalId type.name type.semanticType"
#: a refusal names the entry (its _id, or its place) and the field
REFUSAL = re.compile(
    r"^(entry '[^']*': (\S+ .+ is not .+|its _id comes more than once.*)"
    r"|entry \d+ \(0-based, in the answer\) has no _id)$"
)


def _at(record: Any, path: str) -> tuple[bool, Any]:
    for key in path.split("."):
        if not isinstance(record, dict) or key not in record:
            return False, None
        record = record[key]
    return True, record


def _same(field: str, kept: Any, given: Any) -> bool:
    if given is None:
        return kept is None or bool(pd.isna(kept)) if not isinstance(kept, list) else False
    if field == "workDate":
        return bool(kept == pd.Timestamp(given[:10]))
    if field in ("createdAt", "updatedAt"):
        return bool(kept == pd.Timestamp(given).tz_convert("UTC"))
    if isinstance(given, list):
        return list(kept) == given
    if isinstance(given, int | float) and not isinstance(given, bool):
        return bool(float(kept) == float(given))
    return bool(kept == given)


def _check_kept(kind: str, records: list[dict[str, Any]], export: Export) -> None:
    """Every interface value of every generated entry and code is in the frames as given."""
    entries = export.entries.set_index("_id", drop=False)
    codes = export.codes.set_index(["entryId", "position"])
    for rec in records:
        row = entries.loc[rec["_id"]]
        for path in INTERFACE[kind]:
            present, given = _at(rec, path)
            if present:
                assert _same(path, row[path], given), (rec["_id"], path, row[path], given)
        for position, code in enumerate(rec.get("codes") or []):
            if kind == "export":
                present, code = _at(code, "code")
                if not present:
                    continue
            for path in CODE_FIELDS.split():
                present, given = _at(code, path)
                if present and code is not None:
                    kept = codes.loc[(rec["_id"], position), f"code.{path}"]
                    assert _same(path, kept, given), (rec["_id"], position, path, kept, given)


def _entries(kind: str, name: str, answer: list[dict[str, Any]]) -> None:
    body = json.dumps(answer).encode()  # the standard library's JSON: any size of integer
    got = _read(name, body, lambda raw: Export.from_json(raw, kind=kind))  # type: ignore[arg-type]
    if isinstance(got, FlattenError):
        assert REFUSAL.match(str(got)), str(got)
    else:
        _check_kept(kind, answer, got)


@settings(_SETTINGS, max_examples=SCALE * EXAMPLES["release-pending"])
@given(STRATEGIES["release-pending"])
def test_every_release_pending_answer_parses_or_is_refused_naming_entry_and_field(
    answer: list[dict[str, Any]],
) -> None:
    _entries("pending", "release-pending", answer)


@settings(_SETTINGS, max_examples=SCALE * EXAMPLES["v2 export"])
@given(STRATEGIES["v2 export"])
def test_every_v2_export_answer_parses_or_is_refused_naming_entry_and_field(
    answer: list[dict[str, Any]],
) -> None:
    _entries("export", "v2 export", answer)


# -- the token: TokenProvider over a transport that gives the generated answer ------------------


def _token(answer: dict[str, Any]) -> tuple[str, float]:
    reply = Reply(200, dict(answer), method="POST", url="https://identity.invalid/token")
    transport = SimpleNamespace(retries=0, send=lambda *args, **kwargs: reply)
    provider = TokenProvider(
        "https://identity.invalid/token",
        "id",
        "secret",
        "aud",
        transport=transport,
        clock=lambda: 0.0,
    )
    return provider.token(), provider._refresh_at


@settings(_SETTINGS, max_examples=SCALE * EXAMPLES["token"])
@given(STRATEGIES["token"])
def test_every_token_answer_gives_its_token_and_a_positive_lifetime(answer: dict[str, Any]) -> None:
    token, refresh_at = _read("token", answer, _token)
    assert token == answer["access_token"]
    expires = answer["expires_in"]
    assert refresh_at > 0  # a token is never asked for before every request
    if expires > 0:
        assert refresh_at <= expires


# -- the batch acknowledgement: _Batches.read over the generated 207 ------------------------------


#: an entry the batch answers never hold (not an objectid: the generator cannot draw it)
MISSING = "no-such-entry"


def _batch(answer: dict[str, Any]) -> tuple[list[Reply | None], list[int]]:
    ids = [*dict.fromkeys(item["entryId"] for item in answer["response"]), MISSING]
    conn = SimpleNamespace(
        ack_batch=None,
        transport=SimpleNamespace(retries=0),
        url=lambda endpoint, **path: f"https://time.invalid/{path['entryId']}",
    )
    calls = [Call("release_succeeded", {"userId": "u", "entryId": i}, {}, key=i) for i in ids]
    run = _Batches(conn, calls, None)  # type: ignore[arg-type]
    group = list(range(len(calls)))
    again = run.read(group, Reply(207, answer, attempts=1, method="POST", url="https://t/batch"))
    return run.replies, again


@settings(_SETTINGS, max_examples=SCALE * EXAMPLES["batch"])
@given(STRATEGIES["batch"])
def test_every_batch_answer_gives_each_entry_its_item_s_status(answer: dict[str, Any]) -> None:
    replies, again = _read("batch", answer, _batch)
    first: dict[str, Any] = {}
    for item in answer["response"]:
        first.setdefault(item["entryId"], item)  # the reader takes an entry's first item
    for i, item in enumerate([*first.values(), None]):
        reply = replies[i]
        if item is None:
            assert reply is not None and reply.lost  # no result: it may have landed
            continue
        status = item_status(item["status"])
        assert status is not None, item["status"]  # every published status name is a number
        if 200 <= status < 300:
            assert reply is not None and reply.ok
        elif status in (409, 422) or (status in (429, 500, 502, 503, 504) and i in again):
            assert reply is None  # left to the per-entry route, or sent again
        else:
            assert reply is not None and reply.status == status and not reply.ok
            said = item.get("errorMessage") or item.get("errorCode") or item["status"]
            assert str(said) in (reply.error or "")


# -- the user record: timekeeper_id and the users frame ------------------------------------------


def _user(record: dict[str, Any]) -> tuple[str | None, pd.DataFrame]:
    row = {**record, "timekeeperExternalId": timekeeper_id(record)}
    return row["timekeeperExternalId"], pd.json_normalize([row])


@settings(_SETTINGS, max_examples=SCALE * EXAMPLES["user"])
@given(STRATEGIES["user"])
def test_every_user_record_gives_its_billing_identity_and_a_row(record: dict[str, Any]) -> None:
    tk, frame = _read("user", record, _user)
    billing = [i["value"] for i in record.get("identities") or [] if i["type"] == BILLING_IDENTITY]
    assert tk == (billing[0] if billing else None)
    assert len(frame) == 1
    for key, value in record.items():
        if not isinstance(value, dict):
            assert frame.at[0, key] == value or (value == [] and list(frame.at[0, key]) == [])


def summary() -> str:
    """The tally as text: per operation, answers, parsed, refused; refusals and warnings grouped."""
    lines = []
    for name, t in TALLY.items():
        lines.append(
            f"{name}: {t.generated} answers, {t.parsed} parsed, {t.generated - t.parsed} refused"
        )
        lines += [f"    refused {n} x: {m}" for m, n in t.refused.most_common()]
        lines += [f"    warned  {n} x: {m}" for m, n in t.warned.most_common()]
    return "\n".join(lines)


def test_zz_summary_of_the_answer_contract() -> None:
    """Prints the summary (``-s``); every operation got answers, and most of them parsed."""
    print("\n" + summary())
    ran = [t for t in TALLY.values() if t.generated]
    if len(ran) < len(TALLY):
        pytest.skip("run the whole file for the summary")
    for t in ran:
        assert t.parsed > 0


if __name__ == "__main__":
    pytest.main([__file__, "-q", "-s", "-p", "no:cacheprovider"])
