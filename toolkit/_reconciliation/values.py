"""One column of either side read as the reconciliation compares it: identifiers as text,
dates at midnight, durations in whole seconds; what cannot be read raises
:class:`~toolkit.errors.ValidationError` with a failure row per value."""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.api.typing import NaTType

from toolkit._core.failures import failure_frame
from toolkit._core.windows import ambiguous_date_message
from toolkit._reconciliation.messages import advise
from toolkit.errors import ValidationError


def as_str(values: pd.Series) -> pd.Series:
    """Identifiers as strings; integral floats (a spreadsheet's ``1234.0``) as ``"1234"``.

    >>> as_str(pd.Series([1234.0, 99.0])).tolist()
    ['1234', '99']
    """
    if pd.api.types.is_float_dtype(values.dtype):
        finite = values.dropna()
        if len(finite) and bool((finite == np.floor(finite)).all()):
            values = values.astype("Int64")
    elif pd.api.types.is_bool_dtype(values.dtype):
        values = values.astype("object")
    return values.astype("str")


def as_date(values: pd.Series, table: str, column: str, dayfirst: bool | None = None) -> pd.Series:
    """Dates as ``datetime64[us]`` at midnight; non-ISO text as ``dayfirst`` says.

    >>> as_date(pd.Series(["2026-04-03T17:00", "13/04/2026"]), "billing", "workDate").tolist()
    [Timestamp('2026-04-03 00:00:00'), Timestamp('2026-04-13 00:00:00')]
    """
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_localize(None)
    if pd.api.types.is_datetime64_dtype(values.dtype):
        days: pd.Series = values.dt.normalize().astype("datetime64[us]")
        return days
    items = values.tolist()
    is_text = np.fromiter((isinstance(v, str) for v in items), dtype=bool, count=len(items))
    # positions, not labels: the caller's index may repeat
    parsed = np.full(len(items), np.datetime64("NaT"), dtype="datetime64[us]")
    other = ~is_text & values.notna().to_numpy()
    chosen = values.iloc[np.flatnonzero(other)].reset_index(drop=True)
    parsed[other] = _naive(chosen, format="mixed").to_numpy()
    missing = ~is_text & ~other
    at = np.flatnonzero(is_text)  # the texts: each distinct one read once
    text = pd.Series(values.iloc[at].astype("str").str.strip().to_numpy(), dtype="str")
    blank = (text == "").to_numpy()
    missing[at[blank]] = True
    codes, uniques = pd.factorize(text[~blank])
    rows = values.iloc[at[~blank]].astype("object")
    dates = _text_dates(pd.Series(uniques, dtype="str"), table, column, dayfirst, rows)
    parsed[at[~blank]] = dates.to_numpy()[codes]
    bad = np.isnat(parsed) & ~missing
    if bad.any():
        _raise_values(table, column, values[bad], "not a date")
    return pd.Series(parsed, index=values.index, dtype="datetime64[us]").dt.normalize()


_Format = Literal["ISO8601", "mixed"]


def _naive(values: pd.Series, *, format: _Format, dayfirst: bool = False) -> pd.Series:
    """``pd.to_datetime`` as naive wall-clock times, NaT where unreadable."""
    try:
        parsed = pd.to_datetime(values, errors="coerce", format=format, dayfirst=dayfirst)
    except (TypeError, ValueError, OverflowError):
        parsed = pd.Series(
            [_naive_one(v, format=format, dayfirst=dayfirst) for v in values.tolist()],
            index=values.index,
        )
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = parsed.dt.tz_localize(None)
    return parsed.astype("datetime64[us]")


def _naive_one(value: Any, *, format: _Format, dayfirst: bool) -> pd.Timestamp | NaTType:
    for given in (value, str(value)):  # the value, else its text
        with suppress(TypeError, ValueError, OverflowError):
            stamp = pd.to_datetime(given, errors="coerce", format=format, dayfirst=dayfirst)
            if isinstance(stamp, NaTType) or pd.isna(stamp):  # NaT is NaTType's one instance
                return pd.NaT
            return stamp.tz_localize(None) if stamp.tzinfo is not None else stamp
    return pd.NaT


def _text_dates(
    texts: pd.Series, table: str, column: str, dayfirst: bool | None, rows: pd.Series
) -> pd.Series:
    """Distinct date texts parsed (NaT when unreadable); ambiguous ones refused."""
    parsed = _naive(texts, format="ISO8601")
    rest = parsed.isna().to_numpy()
    other = texts[rest]
    if dayfirst is not None:
        parsed[rest] = _naive(other, format="mixed", dayfirst=dayfirst)
        return parsed
    month_first = _naive(other, format="mixed", dayfirst=False)
    day_first = _naive(other, format="mixed", dayfirst=True)
    ambiguous = (month_first.notna() & day_first.notna() & (month_first != day_first)).to_numpy()
    if ambiguous.any():
        first = ambiguous.nonzero()[0][0]
        example, read_d, read_m = other.iloc[first], day_first.iloc[first], month_first.iloc[first]
        hit = rows.astype("str").str.strip().isin(other[ambiguous])
        remedy = (
            f"{int(hit.sum())} date(s) read differently either way; pass dayfirst=True "
            "or dayfirst=False (toolkit reconcile --dayfirst or --no-dayfirst), or write "
            "the dates as ISO 8601 (YYYY-MM-DD)"
        )
        where = f"{table} column {column!r}"
        said = ambiguous_date_message(where, str(example), read_d, read_m, remedy)
        _raise_values(table, column, rows[hit], "ambiguous dates", said)
    parsed[rest] = month_first.fillna(day_first).to_numpy()
    return parsed


def as_seconds(
    values: pd.Series, table: str, column: str, unit: int, decimal: str = "."
) -> pd.Series:
    """Durations (numbers or text in ``unit`` seconds, or timedeltas) as whole seconds.

    >>> as_seconds(pd.Series(["1,5", " ", 2.0]), "billing", "hours", 3600, decimal=",").tolist()
    [5400, <NA>, 7200]
    """
    if pd.api.types.is_timedelta64_dtype(values.dtype):
        seconds = values.dt.total_seconds()
    else:
        read = values
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            blank = values.map(lambda v: isinstance(v, str) and not v.strip(), na_action="ignore")
            read = values = values.mask(blank.fillna(False).astype(bool))  # a blank is missing
            if decimal == ",":
                read = values.map(
                    lambda v: v if not isinstance(v, str) or "." in v else v.replace(",", "."),
                    na_action="ignore",
                )
        seconds = pd.to_numeric(read, errors="coerce").astype("float64") * unit
        bad = seconds.isna() & values.notna()
        if bad.any():
            comma = values[bad].astype("str").str.fullmatch(r"\s*[+-]?\d*,\d+\s*")
            hint = f" (decimal commas? {advise(('decimal', ','))})"
            hint = hint if decimal != "," and bool(comma.any()) else ""
            _raise_values(table, column, values[bad], "not a number", hint=hint)
    whole = np.round(seconds.to_numpy(dtype="float64"))
    return pd.Series(whole, index=values.index).astype("Int64")


def _raise_values(
    table: str, column: str, bad: pd.Series, what: str, message: str = "", hint: str = ""
) -> None:
    """Raise a :class:`ValidationError` with a failure row per bad value."""
    shown = ", ".join(repr(v) for v in bad.head(5).tolist())
    check = "number" if what == "not a number" else "date"
    at, values = list(bad.index), bad.tolist()
    cases = failure_frame(
        table=table, row=at, column=column, check=check, value=values, message=what
    )
    said = f"{table} column {column!r}: {len(bad)} value(s) {what}, for example {shown}"
    raise ValidationError(message or said + hint, cases)
