"""The two sides of a reconciliation, checked and normalised: the arguments, the key and
value columns, and each side as one frame of typed columns.

The exported entries and the billing extract arrive in the user's shapes (their column names,
durations in hours, dates as text); :func:`exported_frame` and :func:`billing_frame` turn each
into one frame (``key``, ids as text, whole seconds, dates at midnight, matters as text) that
:mod:`toolkit.reconciliation.classify` joins. Reading one column (and refusing an ambiguous
text date such as ``03/04/2026``) is :mod:`toolkit.reconciliation.values`.

>>> check_options("entryId", "hours", 0, None)
'_id'
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.core.windows import TimeLike, iso, to_utc, warn_bare_date
from toolkit.errors import (
    ConfigError,
    DuplicateKeyError,
    InputWarning,
    MissingColumnError,
)
from toolkit.reconciliation.messages import advise, table_name
from toolkit.reconciliation.values import as_date, as_seconds, as_str, empty_column

__all__ = [
    "COMPARISONS",
    "billing_columns",
    "billing_frame",
    "check_options",
    "check_unique",
    "detect_key",
    "exported_frame",
    "isin",
    "released_in",
    "require_exported",
]

#: Columns holding an exported entry's release time, in order of preference: ``releasedAt``
#: when the entries carry it, else ``updatedAt`` (the spec sets it when the entry is released).
RELEASE_COLUMNS: tuple[str, ...] = ("releasedAt", "updatedAt")

#: The value comparisons :func:`~toolkit.reconciliation.reconcile` can make, in order.
COMPARISONS: tuple[str, ...] = ("duration", "date", "matter")

_EXPORTED_REQUIRED = ("_id", "userId")
#: comparison -> (reconcile() argument, default billing column, exported column)
_VALUE_COLUMNS = {
    "duration": ("duration", "duration", "incrementDurationInSeconds"),
    "date": ("date", "workDate", "workDate"),
    "matter": ("matter", "matter", "initiative.externalId"),
}
#: words in a billing column's name that suggest a value, beyond look-alikes of its default
#: column (lower case); for durations, the unit the word says
_HINT_WORDS: dict[str, tuple[str, ...]] = {
    "duration": ("hour", "hrs", "minute", "mins", "second", "secs", "time", "qty", "quantity"),
    "date": ("date", "day"),
    "matter": ("matter", "initiative", "case", "project"),
}
_WORD_UNITS = {
    "hour": "hours",
    "hrs": "hours",
    "minute": "minutes",
    "mins": "minutes",
    "second": "seconds",
    "secs": "seconds",
}
_BILLING_KEY_CANDIDATES = ("entryId", "_id", "externalId")
_BILLING_ID_CANDIDATES = ("billingId", "recordId")
_UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600}
_KEY_ALIASES = {"_id": "_id", "entryId": "_id", "externalId": "externalId"}


# --- checking the arguments and the columns ----------------------------------------------------


def check_options(
    key: str,
    duration_unit: str,
    tolerance_seconds: float,
    dayfirst: bool | None,
    decimal: str = ".",
) -> str:
    """Check ``reconcile``'s plain arguments and name the key it joins on.

    Args:
        key: ``"auto"``, ``"_id"``, ``"entryId"`` or ``"externalId"``.
        duration_unit: ``"seconds"``, ``"minutes"`` or ``"hours"``.
        tolerance_seconds: a non-negative finite number.
        dayfirst: ``True``, ``False`` or ``None``.
        decimal: ``"."`` or ``","``.

    Returns:
        ``"auto"``, ``"_id"`` or ``"externalId"`` (``"entryId"`` is an alias of ``"_id"``).

    Raises:
        ConfigError: any of them is not one of its allowed values.

    Example:
        >>> check_options("externalId", "minutes", 30, True)
        'externalId'
        >>> check_options("auto", "days", 0, None)
        Traceback (most recent call last):
        ...
        toolkit.errors.ConfigError: duration_unit must be one of ['hours', 'minutes', 'seconds'], got 'days'
    """  # noqa: E501 - a doctest's output is one line
    key_choice = _check_key(key)
    if decimal not in (".", ","):
        raise ConfigError(f"decimal must be '.' or ',', got {decimal!r}")
    if duration_unit not in _UNIT_SECONDS:
        raise ConfigError(
            f"duration_unit must be one of {sorted(_UNIT_SECONDS)}, got {duration_unit!r}"
        )
    if (
        isinstance(tolerance_seconds, bool)
        or not isinstance(tolerance_seconds, int | float | np.number)
        or not np.isfinite(tolerance_seconds)
        or tolerance_seconds < 0
    ):
        raise ConfigError(
            f"tolerance_seconds must be a non-negative number, got {tolerance_seconds!r}"
        )

    if dayfirst is not None and not isinstance(dayfirst, bool | np.bool_):
        raise ConfigError(f"dayfirst must be True, False or None, got {dayfirst!r}")
    return key_choice


def billing_columns(
    billing: pd.DataFrame,
    key: str,
    *,
    billing_key: str | None = None,
    billing_id: str | None = None,
    duration: str | None = None,
    date: str | None = None,
    matter: str | None = None,
    duration_unit: str = "seconds",
) -> tuple[str, str | None, dict[str, str | None]]:
    """The billing columns a reconciliation reads: the key, the record id, the values compared.

    A value column left out is its default (``duration``, ``workDate``, ``matter``) when the
    frame has it, else not compared; when a similar column exists, an
    :class:`~toolkit.errors.InputWarning` says how to compare it.

    Args:
        billing: the billing extract.
        key: the checked key, from :func:`check_options`.
        billing_key: the key column given, or ``None`` for the first of ``entryId``, ``_id``,
            ``externalId`` present (``externalId`` first when ``key`` is ``"externalId"``).
        billing_id: the record id column given, or ``None`` for ``billingId``/``recordId``.
        duration: the duration column given, or ``None``.
        date: the date column given, or ``None``.
        matter: the matter column given, or ``None``.
        duration_unit: the unit given; a hint for a column named in another unit says it.

    Returns:
        ``(billing key column, billing id column or None, comparison -> column or None)``,
        the comparisons in the order of :data:`COMPARISONS`.

    Raises:
        MissingColumnError: a column given is absent, or no key column is present.

    Example:
        >>> billing_columns(pd.DataFrame({"entryId": ["e1"], "duration": [60]}), "auto")
        ('entryId', None, {'duration': 'duration', 'date': None, 'matter': None})
    """
    bkey = _billing_key_column(billing, billing_key, key)
    bid = _billing_id_column(billing, billing_id)
    given = {"duration": duration, "date": date, "matter": matter}
    columns: dict[str, str | None] = {}
    for name in COMPARISONS:  # a loop, not a comprehension: the warning names the caller
        columns[name] = _value_column(
            billing, name, given[name], exclude=(bkey, bid), duration_unit=duration_unit
        )
    _require("billing", billing, [bkey, *(c for c in columns.values() if c is not None)])
    return bkey, bid, columns


def require_exported(exported: pd.DataFrame, compared: Sequence[str], key: str) -> None:
    """Check that the export has the columns the reconciliation reads.

    Args:
        exported: the exported entries.
        compared: the comparisons made (a subset of :data:`COMPARISONS`).
        key: the checked key; ``"externalId"`` needs that column too.

    Raises:
        MissingColumnError: a needed column is absent.

    Example:
        >>> require_exported(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}), (), "_id")
        >>> require_exported(pd.DataFrame({"_id": ["e1"], "userId": ["u1"]}), ("date",), "_id")
        Traceback (most recent call last):
        ...
        toolkit.errors.MissingColumnError: exported frame has no column 'workDate'; it has ['_id', 'userId']
    """  # noqa: E501 - a doctest's output is one line
    _require(
        "exported",
        exported,
        [*_EXPORTED_REQUIRED, *(_VALUE_COLUMNS[name][2] for name in compared)],
    )
    if key == "externalId":
        _require("exported", exported, ["externalId"])


def check_unique(table: str, column: str, keys: pd.Series) -> None:
    """Refuse a key that occurs more than once on one side (missing keys may repeat).

    Args:
        table: ``"exported"`` or ``"billing"``, for the message.
        column: the key column's name, for the message.
        keys: the key values.

    Raises:
        DuplicateKeyError: a key occurs twice; the error lists every such key.

    Example:
        >>> check_unique("billing", "entryId", pd.Series(["e1", None, None]))
        >>> check_unique("billing", "entryId", pd.Series(["e1", "e1"]))
        Traceback (most recent call last):
        ...
        toolkit.errors.DuplicateKeyError: billing frame has 1 duplicated key(s) in column 'entryId': 'e1'. Reconcile pairs one entry with one billing record: aggregate or drop the repeated records first (for example frame.drop_duplicates('entryId') or frame.groupby('entryId').agg(...)).
    """  # noqa: E501 - a doctest's output is one line
    present = keys.notna()
    dup = keys.duplicated(keep=False) & present
    if dup.any():
        rows = keys[dup]
        raise DuplicateKeyError(table, column, rows.drop_duplicates().tolist(), rows)


def _closest(name: str, names: Sequence[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


def _check_key(key: str) -> str:
    if key == "auto":
        return key
    if key not in _KEY_ALIASES:
        raise ConfigError(f"key must be 'auto', '_id', 'entryId' or 'externalId', got {key!r}")
    return _KEY_ALIASES[key]


def _require(table: str, frame: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = list(dict.fromkeys(c for c in columns if c not in frame.columns))
    if missing:
        raise MissingColumnError(table, missing, frame.columns)


def _billing_key_column(billing: pd.DataFrame, billing_key: str | None, key: str) -> str:
    if billing_key is not None:
        _require("billing", billing, [billing_key])
        return billing_key
    order = list(_BILLING_KEY_CANDIDATES)
    if key == "externalId":
        order = ["externalId", "entryId", "_id"]
    for name in order:
        if name in billing.columns:
            return name
    raise MissingColumnError("billing", [order[0]], billing.columns)


def _value_column(
    billing: pd.DataFrame,
    name: str,
    given: str | None,
    exclude: Iterable[str | None],
    duration_unit: str = "seconds",
) -> str | None:
    """The billing column compared for ``name``: the one given, else the default if present.

    A default that is absent means "not compared"; when a similar column exists (``Duration``,
    ``durationHours``, ``Hours``), an :class:`InputWarning` says how to compare it (with the
    unit a column named ``Hours`` or ``Minutes`` is in).
    """
    if given is not None:
        return given
    argument, default, _ = _VALUE_COLUMNS[name]
    if default in billing.columns:
        return default
    names = [str(c) for c in billing.columns if c not in set(exclude)]
    near = _closest(default, names)
    if near is None:
        near = next((c for c in names if any(w in c.lower() for w in _HINT_WORDS[name])), None)
    if near is not None:
        what = {"duration": "durations", "date": "dates", "matter": "matters"}[name]
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


def _billing_id_column(billing: pd.DataFrame, billing_id: str | None) -> str | None:
    if billing_id is not None:
        _require("billing", billing, [billing_id])
        return billing_id
    return next((c for c in _BILLING_ID_CANDIDATES if c in billing.columns), None)


def released_in(
    exported: pd.DataFrame, after: TimeLike | None, on_or_before: TimeLike | None
) -> tuple[pd.DataFrame, str | None]:
    """The exported entries released in ``(after, on_or_before]``, and the window in words.

    The release time is the first of :data:`RELEASE_COLUMNS` the entries have (datetimes, or
    ISO 8601 text; naive means UTC). An entry with no release time is outside every window.

    Args:
        exported: the exported entries.
        after: exclusive lower bound, or ``None`` for none.
        on_or_before: inclusive upper bound, or ``None`` for none.

    Returns:
        The entries in the window (all of them, and ``None``, without bounds) and the text
        ``"entries released in (A, B] by updatedAt: 12 of 213"``.

    Raises:
        ConfigError: a bound is not a date-time or is ambiguous, ``after`` is not before
            ``on_or_before``, or the entries have no release time column.

    Example:
        >>> exported = pd.DataFrame({"_id": ["e1", "e2"], "userId": ["u1", "u1"],
        ...     "updatedAt": ["2026-11-02T10:00:00Z", "2026-11-09T10:00:00Z"]})
        >>> kept, text = released_in(exported, "2026-11-01", "2026-11-08")
        >>> kept["_id"].tolist(), text
        (['e1'], 'entries released in (2026-11-01T00:00:00Z, 2026-11-08T00:00:00Z] by updatedAt: 1 of 2')
    """  # noqa: E501 - a doctest's output is one line
    if after is None and on_or_before is None:
        return exported, None
    low = to_utc(after, "after") if after is not None else None
    high = to_utc(on_or_before, "on_or_before") if on_or_before is not None else None
    if on_or_before is not None:  # points at reconcile()'s caller
        warn_bare_date(on_or_before, stacklevel=4)
    if low is not None and high is not None and low >= high:
        raise ConfigError(
            f"after ({iso(low, fraction='needed')}) must be before on_or_before "
            f"({iso(high, fraction='needed')}): the window (after, on_or_before] is empty"
        )
    column = next((c for c in RELEASE_COLUMNS if c in exported.columns), None)
    if column is None:
        raise ConfigError(
            "after / on_or_before compare the entries released in that window, but the "
            f"exported entries have no release time ({' or '.join(RELEASE_COLUMNS)} column)"
        )
    values = exported[column]
    if pd.api.types.is_object_dtype(values.dtype) or pd.api.types.is_string_dtype(values.dtype):
        released = pd.to_datetime(values, utc=True, format="ISO8601", errors="coerce")
    else:
        released = pd.to_datetime(values, utc=True, errors="coerce")
    keep = released.notna()
    if low is not None:
        keep &= released > low
    if high is not None:
        keep &= released <= high
    kept = exported.loc[keep.to_numpy()]
    shown = (
        f"({iso(low, fraction='needed') if low is not None else '...'}, "
        f"{iso(high, fraction='needed') if high is not None else '...'}]"
    )
    return kept, f"entries released in {shown} by {column}: {len(kept)} of {len(exported)}"


# --- normalising the two sides -----------------------------------------------------------------


def exported_frame(exported: pd.DataFrame, dayfirst: bool | None) -> pd.DataFrame:
    """The exported entries as the join reads them, one row per entry, indexed by position.

    Args:
        exported: the exported entries (checked by :func:`require_exported`).
        dayfirst: how text dates that are not ISO 8601 are read (see ``reconcile``).

    Returns:
        A frame of ``entryId`` (the entry's ``_id``), ``externalId``, ``userId``,
        ``initiative.externalId``, ``initiative.client.externalId`` (text, missing when the
        column is absent), ``exported_seconds`` (``Int64``) and ``exported_date`` (midnight).

    Raises:
        ValidationError: a duration or a date cannot be read, or a text date is ambiguous.

    Example:
        >>> exp = exported_frame(pd.DataFrame({"_id": [1001.0], "userId": ["u1"],
        ...     "workDate": ["2024-03-01T09:30:00"]}), None)
        >>> exp.loc[0, ["entryId", "exported_date"]].tolist()
        ['1001', Timestamp('2024-03-01 00:00:00')]
    """
    n = len(exported)

    def col(name: str) -> pd.Series:
        if name in exported.columns:
            return as_str(exported[name]).reset_index(drop=True)
        return empty_column(n, "str")

    seconds = (
        as_seconds(
            exported["incrementDurationInSeconds"], "exported", "incrementDurationInSeconds", 1
        ).reset_index(drop=True)
        if "incrementDurationInSeconds" in exported.columns
        else empty_column(n, "Int64")
    )
    dates = (
        as_date(exported["workDate"], "exported", "workDate", dayfirst).reset_index(drop=True)
        if "workDate" in exported.columns
        else empty_column(n, "datetime64[us]")
    )
    return pd.DataFrame(
        {
            "entryId": col("_id"),
            "externalId": col("externalId"),
            "userId": col("userId"),
            "initiative.externalId": col("initiative.externalId"),
            "initiative.client.externalId": col("initiative.client.externalId"),
            "exported_seconds": seconds,
            "exported_date": dates,
        }
    )


def billing_frame(
    billing: pd.DataFrame,
    key: str,
    billing_id: str | None,
    columns: dict[str, str | None],
    duration_unit: str,
    dayfirst: bool | None,
    decimal: str = ".",
) -> pd.DataFrame:
    """The billing extract as the join reads it, one row per record, indexed by position.

    Args:
        billing: the billing extract.
        key: its key column.
        billing_id: its record id column, or ``None``.
        columns: comparison -> its column or ``None``, from :func:`billing_columns`.
        duration_unit: ``"seconds"``, ``"minutes"`` or ``"hours"``; a timedelta column is
            read as is. Durations are rounded to whole seconds.
        dayfirst: how text dates that are not ISO 8601 are read (see ``reconcile``).
        decimal: the decimal mark of text durations, ``"."`` or ``","``.

    Returns:
        A frame of ``key``, ``billingId``, ``billed_seconds`` (``Int64``), ``billed_date``
        (midnight) and ``billed_matter``, missing where a column is not compared.

    Raises:
        ValidationError: a duration or a date cannot be read, or a text date is ambiguous.

    Example:
        >>> bil = billing_frame(pd.DataFrame({"entryId": ["e1"], "hours": ["1.5"]}), "entryId",
        ...     None, {"duration": "hours", "date": None, "matter": None}, "hours", None)
        >>> bil["billed_seconds"].tolist()
        [5400]
    """
    n = len(billing)
    unit = _UNIT_SECONDS[duration_unit]
    duration, date, matter = columns["duration"], columns["date"], columns["matter"]
    ids = as_str(billing[billing_id]) if billing_id is not None else empty_column(n, "str")
    values = {
        "key": as_str(billing[key]),
        "billingId": ids,
        "billed_seconds": as_seconds(billing[duration], "billing", duration, unit, decimal)
        if duration is not None
        else empty_column(n, "Int64"),
        "billed_date": as_date(billing[date], "billing", date, dayfirst)
        if date is not None
        else empty_column(n, "datetime64[us]"),
        "billed_matter": as_str(billing[matter]) if matter is not None else empty_column(n, "str"),
    }
    # position, not the caller's index, pairs the columns up
    return pd.DataFrame({name: v.reset_index(drop=True) for name, v in values.items()})


def isin(values: pd.Series, pool: pd.Series) -> np.ndarray:
    """``values.isin(pool)`` for string columns, missing values never found.

    Arrow's hash lookup: ``Series.isin`` on Arrow-backed strings is an order of magnitude slower.

    Args:
        values: the strings looked up.
        pool: the strings looked in.

    Returns:
        A boolean array, one per value.

    Example:
        >>> isin(pd.Series(["e1", None, "e3"]), pd.Series(["e1", None])).tolist()
        [True, False, False]
    """
    found = pc.is_in(pa.array(values, type=pa.string()), value_set=pa.array(pool.dropna()))
    return found.to_numpy(zero_copy_only=False) & values.notna().to_numpy()


def detect_key(exp: pd.DataFrame, bil: pd.DataFrame, billing_key: str) -> str:
    """The entry column the billing keys hit most, for ``key="auto"``.

    Args:
        exp: from :func:`exported_frame`.
        bil: from :func:`billing_frame`.
        billing_key: the billing key column's name; on a tie ``"externalId"`` if it is named
            so, else ``"_id"``.

    Returns:
        ``"_id"`` or ``"externalId"``.

    Example:
        >>> exp = exported_frame(pd.DataFrame({"_id": ["e1"], "externalId": ["B-1"],
        ...     "userId": ["u1"]}), None)
        >>> bil = billing_frame(pd.DataFrame({"ref": ["B-1"]}), "ref", None,
        ...     {"duration": None, "date": None, "matter": None}, "seconds", None)
        >>> detect_key(exp, bil, "ref")
        'externalId'
    """
    keys = bil["key"]
    by_id = int(isin(keys, exp["entryId"]).sum())
    by_ext = int(isin(keys, exp["externalId"]).sum())
    if by_id != by_ext:
        return "_id" if by_id > by_ext else "externalId"
    return "externalId" if billing_key == "externalId" else "_id"
