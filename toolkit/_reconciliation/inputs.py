"""The two sides of a reconciliation, checked and read: the arguments, the key and value
columns, and each side as one frame of typed columns, ready for the join."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit._core.windows import Window
from toolkit._reconciliation.messages import advise, table_name
from toolkit._reconciliation.values import as_date, as_seconds, as_str
from toolkit.errors import ConfigError, DuplicateKeyError, InputWarning, MissingColumnError, closest

#: Columns holding an exported entry's release time, in order of preference.
RELEASE_COLUMNS: tuple[str, ...] = ("releasedAt", "updatedAt")

#: The value comparisons :func:`~toolkit._reconciliation.reconcile` can make, in order.
COMPARISONS: tuple[str, ...] = ("duration", "date", "matter")

_EXPORTED_REQUIRED = ("_id", "userId")
#: comparison -> (reconcile() argument, default billing column, exported column)
_VALUE_COLUMNS = {
    "duration": ("duration", "duration", "incrementDurationInSeconds"),
    "date": ("date", "workDate", "workDate"),
    "matter": ("matter", "matter", "initiative.externalId"),
}
#: words in a billing column's name that suggest a value (lower case), and the unit each says
_HINT_WORDS: dict[str, tuple[str, ...]] = {
    "duration": ("hour", "hrs", "minute", "mins", "second", "secs", "time", "qty", "quantity"),
    "date": ("date", "day"),
    "matter": ("matter", "initiative", "case", "project"),
}
_WORD_UNITS = {"hour": "hours", "hrs": "hours", "minute": "minutes", "mins": "minutes"}
_WORD_UNITS |= {"second": "seconds", "secs": "seconds"}
_UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600}
_KEY_ALIASES = {"_id": "_id", "entryId": "_id", "externalId": "externalId"}


def check_options(
    key: str,
    duration_unit: str,
    tolerance_seconds: float,
    dayfirst: bool | None,
    decimal: str = ".",
) -> str:
    """Check ``reconcile``'s plain arguments; the key it joins on (``entryId`` is ``_id``).

    >>> check_options("auto", "days", 0, None)
    Traceback (most recent call last):
    ...
    toolkit.errors.ConfigError: duration_unit must be one of ['hours', 'minutes', 'seconds'], got 'days'
    """  # noqa: E501 - a doctest's output is one line
    if key != "auto" and key not in _KEY_ALIASES:
        raise ConfigError(f"key must be 'auto', '_id', 'entryId' or 'externalId', got {key!r}")
    if decimal not in (".", ","):
        raise ConfigError(f"decimal must be '.' or ',', got {decimal!r}")
    if duration_unit not in _UNIT_SECONDS:
        raise ConfigError(
            f"duration_unit must be one of {sorted(_UNIT_SECONDS)}, got {duration_unit!r}"
        )
    t = tolerance_seconds
    if isinstance(t, bool) or not isinstance(t, int | float | np.number) or not 0 <= t < np.inf:
        raise ConfigError(f"tolerance_seconds must be a non-negative number, got {t!r}")
    if dayfirst is not None and not isinstance(dayfirst, bool | np.bool_):
        raise ConfigError(f"dayfirst must be True, False or None, got {dayfirst!r}")
    return _KEY_ALIASES.get(key, key)


def billing_columns(
    billing: pd.DataFrame,
    key: str,
    billing_key: str | None = None,
    billing_id: str | None = None,
    given: Mapping[str, str | None] | None = None,
    duration_unit: str = "seconds",
) -> tuple[str, str | None, dict[str, str | None]]:
    """The billing key column, record id column and each comparison's column (``None``: not),
    ``given`` naming the columns the caller chose (by comparison).

    >>> billing_columns(pd.DataFrame({"entryId": ["e1"], "duration": [60]}), "auto")
    ('entryId', None, {'duration': 'duration', 'date': None, 'matter': None})
    """
    order = ("externalId", "entryId", "_id") if key == "externalId" else ("entryId", "_id")
    found = next((c for c in (*order, "externalId") if c in billing.columns), None)
    bkey = billing_key if billing_key is not None else found
    if bkey is None:
        raise MissingColumnError("billing", [order[0]], billing.columns)
    _require("billing", billing, [bkey])
    found_id = next((c for c in ("billingId", "recordId") if c in billing.columns), None)
    bid = billing_id if billing_id is not None else found_id
    _require("billing", billing, [bid] if bid is not None else [])
    columns: dict[str, str | None] = {}
    for name in COMPARISONS:  # a loop, not a comprehension: the warning names the caller
        chosen = (given or {}).get(name)
        columns[name] = _value_column(billing, name, chosen, (bkey, bid), duration_unit)
    _require("billing", billing, [bkey, *(c for c in columns.values() if c is not None)])
    return bkey, bid, columns


def require_exported(exported: pd.DataFrame, compared: Sequence[str], key: str) -> None:
    """Refuse an export without the columns the reconciliation reads.

    >>> require_exported(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}), ("date",), "_id")
    Traceback (most recent call last):
    ...
    toolkit.errors.MissingColumnError: exported frame has no column 'workDate'; it has ['_id', 'userId']
    """  # noqa: E501 - a doctest's output is one line
    _require(
        "exported", exported, [*_EXPORTED_REQUIRED, *(_VALUE_COLUMNS[name][2] for name in compared)]
    )
    if key == "externalId":
        _require("exported", exported, ["externalId"])


def check_unique(table: str, column: str, keys: pd.Series) -> None:
    """Refuse a key that occurs more than once on one side (missing keys may repeat).

    >>> check_unique("billing", "entryId", pd.Series(["e1", None, None]))
    """
    dup = keys.duplicated(keep=False) & keys.notna()
    if dup.any():
        rows = keys[dup]
        raise DuplicateKeyError(table, column, rows.drop_duplicates().tolist(), rows)


def _require(table: str, frame: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = list(dict.fromkeys(c for c in columns if c not in frame.columns))
    if missing:
        raise MissingColumnError(table, missing, frame.columns)


def _value_column(
    billing: pd.DataFrame,
    name: str,
    given: str | None,
    exclude: Iterable[str | None],
    duration_unit: str = "seconds",
) -> str | None:
    """The billing column compared for ``name``, else ``None`` (warning of a similar one)."""
    if given is not None:
        return given
    argument, default, _ = _VALUE_COLUMNS[name]
    if default in billing.columns:
        return default
    names = [str(c) for c in billing.columns if c not in set(exclude)]
    hinted = (c for c in names if any(w in c.lower() for w in _HINT_WORDS[name]))
    near = closest(default, names) or next(hinted, None)
    if near is not None:
        what = f"{name}s"  # durations, dates, matters
        pairs = [(argument, near)]
        unit = next((u for w, u in _WORD_UNITS.items() if w in near.lower()), None)
        if name == "duration" and unit is not None and unit != duration_unit:
            pairs.append(("duration_unit", unit))
        warnings.warn(  # points at reconcile()'s caller: _value_column, billing_columns, reconcile
            f"{table_name('billing')} has no {default!r} column, so {what} are not compared; "
            f"did you mean its column {near!r}? To compare them with it, {advise(*pairs)}",
            InputWarning,
            stacklevel=4,
        )
    return None


def released_in(exported: pd.DataFrame, span: Window) -> tuple[pd.DataFrame, str | None]:
    """The entries released in the window, and the window in words (``None``: no window).

    >>> exported = pd.DataFrame({"_id": ["e1", "e2"], "userId": ["u1", "u1"],
    ...     "updatedAt": ["2026-11-02T10:00:00Z", "2026-11-09T10:00:00Z"]})
    >>> released_in(exported, Window.of("2026-11-01", "2026-11-08"))[0]["_id"].tolist()
    ['e1']
    """
    low, high = span.after, span.on_or_before
    if low is None and high is None:
        return exported, None
    column = next((c for c in RELEASE_COLUMNS if c in exported.columns), None)
    if column is None:
        raise ConfigError(
            "after / on_or_before compare the entries released in that window, but the "
            f"exported entries have no release time ({' or '.join(RELEASE_COLUMNS)} column)"
        )
    values = exported[column]
    text = pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)
    released = pd.to_datetime(values, utc=True, format="ISO8601" if text else None, errors="coerce")
    keep = released.notna()  # a missing or unreadable time is in no window
    keep &= (released > low) if low is not None else True
    keep &= (released <= high) if high is not None else True
    kept = exported.loc[keep.to_numpy()]
    return kept, f"entries {span} by {column}: {len(kept)} of {len(exported)}"


def exported_frame(exported: pd.DataFrame, dayfirst: bool | None) -> pd.DataFrame:
    """The exported entries as the join reads them (``entryId`` is the ``_id``), by position.

    >>> exported_frame(pd.DataFrame({"_id": [1001.0], "userId": ["u1"]}), None)["entryId"][0]
    '1001'
    """
    ids = {"entryId": "_id", "externalId": "externalId", "userId": "userId"}
    ids |= {c: c for c in ("initiative.externalId", "initiative.client.externalId")}
    out = {name: _read(exported, column, as_str) for name, column in ids.items()}
    duration = "incrementDurationInSeconds"
    out["exported_seconds"] = _read(exported, duration, as_seconds, "exported", duration, 1)
    out["exported_date"] = _read(exported, "workDate", as_date, "exported", "workDate", dayfirst)
    return pd.DataFrame(out)


def _read(
    frame: pd.DataFrame, column: str | None, how: Callable[..., pd.Series], *args: Any
) -> pd.Series:
    """``how(frame[column], *args)`` indexed by position, or missing values (of the dtype
    ``how`` gives) where there is no column: ``how`` then reads a column of ``None``, which
    each reader gives as missing values of its dtype (``str``, ``Int64``, ``datetime64[us]``).

    >>> _read(pd.DataFrame(index=[7, 8]), "workDate", as_date, "billing", "workDate").tolist()
    [NaT, NaT]
    """
    if column is None or column not in frame.columns:
        return how(pd.Series([None] * len(frame), dtype=object), *args)
    return how(frame[column], *args).reset_index(drop=True)


def billing_frame(
    billing: pd.DataFrame,
    key: str,
    billing_id: str | None,
    columns: dict[str, str | None],
    duration_unit: str,
    dayfirst: bool | None,
    decimal: str = ".",
) -> pd.DataFrame:
    """The billing extract as the join reads it: ``key``, ``billingId``, ``billed_*``.

    >>> bil = billing_frame(pd.DataFrame({"entryId": ["e1"], "hours": ["1.5"]}), "entryId",
    ...     None, {"duration": "hours", "date": None, "matter": None}, "hours", None)
    >>> bil["billed_seconds"].tolist()
    [5400]
    """
    unit = _UNIT_SECONDS[duration_unit]
    duration, date, matter = columns["duration"], columns["date"], columns["matter"]
    return pd.DataFrame(
        {
            "key": _read(billing, key, as_str),
            "billingId": _read(billing, billing_id, as_str),
            "billed_seconds": _read(
                billing, duration, as_seconds, "billing", duration, unit, decimal
            ),
            "billed_date": _read(billing, date, as_date, "billing", date, dayfirst),
            "billed_matter": _read(billing, matter, as_str),
        }
    )


def isin(values: pd.Series, pool: pd.Series) -> np.ndarray:
    """``values.isin(pool)`` for strings by Arrow's hash lookup; missing values never found.

    >>> isin(pd.Series(["e1", None, "e3"]), pd.Series(["e1", None])).tolist()
    [True, False, False]
    """
    found = pc.is_in(pa.array(values, type=pa.string()), value_set=pa.array(pool.dropna()))
    return found.to_numpy(zero_copy_only=False) & values.notna().to_numpy()


def detect_key(exp: pd.DataFrame, bil: pd.DataFrame, billing_key: str) -> str:
    """The entry column (``_id`` or ``externalId``) the billing keys hit most (``key="auto"``).

    >>> exp = pd.DataFrame({"entryId": ["e1"], "externalId": ["B-1"]})
    >>> detect_key(exp, pd.DataFrame({"key": ["B-1"]}), "ref")
    'externalId'
    """
    keys = bil["key"]
    by_id = int(isin(keys, exp["entryId"]).sum())
    by_ext = int(isin(keys, exp["externalId"]).sum())
    if by_id != by_ext:
        return "_id" if by_id > by_ext else "externalId"
    return "externalId" if billing_key == "externalId" else "_id"
