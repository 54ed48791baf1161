"""How a cell becomes a value: one reader per column kind (:data:`COERCERS`), and :func:`parse`,
the models' parser, which puts an :class:`Unreadable` in place of a cell it cannot read.

>>> values, problems = COERCERS["list"](pd.Series(["G1; G2", '["a;b"]', "", None]), "ids")
>>> values.tolist(), bool(problems.isna().all())
([['G1', 'G2'], ['a;b'], None, None], True)
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from toolkit._core.frames import coerce_text, no_problems, plain

#: What separates the items of a list written in one CSV or Excel cell.
LIST_SEPARATOR: Final = ";"

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: a lone surrogate: the one character a ``str`` holds that UTF-8 cannot encode
_SURROGATE = re.compile("[\ud800-\udfff]")


def _coerce_free_text(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    values, problems = coerce_text(s, column)
    empty = (values.isna() & problems.isna()).to_numpy()
    return (values.where(~empty, "") if empty.any() else values), problems


def _numeric_text(v: Any) -> Any:
    """A value ``pandas.to_numeric`` can read: stripped text or a number; else unreadable text."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, int | float | np.integer | np.floating):
        return v
    return "not a number"


def _coerce_number(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    """Numbers: ints, floats and numeric text, finite; blank -> missing."""
    s = plain(s)
    problems = no_problems(s)
    expected = f"{column} must be a number of seconds (normally a whole number, such as 360)"
    if pd.api.types.is_integer_dtype(s.dtype):
        return s.astype("Float64"), problems
    obj = s.astype(object)  # floats too: each one read as given
    is_bool = obj.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(dtype=bool)
    stripped = obj.where(~is_bool).map(_numeric_text, na_action="ignore")
    blank = (stripped.isna() | (stripped.astype(object) == "")).to_numpy()
    arr = pd.to_numeric(stripped.where(~blank), errors="coerce").astype("float64").to_numpy()
    ok = ~blank & np.isfinite(arr)  # a boolean is blank here
    problems[is_bool] = f"{expected}, not a boolean"
    problems[~blank & ~ok] = expected
    return pd.Series(arr, index=s.index, dtype="Float64").where(ok), problems


_BOOL_WORDS = {"true": True, "false": False, "1": True, "0": False, "1.0": True, "0.0": False}


def _coerce_bool(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    """Booleans: real booleans, 1/0, and true/false in any case; blank -> missing."""
    s = plain(s)
    problems = no_problems(s)
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("boolean"), problems
    words = s.astype("str").str.strip().str.lower()
    blank = (words.isna() | (words == "")).to_numpy()
    mapped = words.map(_BOOL_WORDS)
    bad = ~blank & mapped.isna().to_numpy()
    problems[bad] = f"{column} must be true or false (or 1 or 0)"
    return mapped.astype("boolean"), problems  # a blank or another word: missing


def _list_value(v: Any) -> tuple[list[str] | None, str | None]:
    """One cell as a list of strings, or the reason it is not one."""
    if isinstance(v, list | tuple | np.ndarray):
        items = list(v)
    elif isinstance(v, str):
        text = v.strip()
        if not text:
            return None, None
        if text.startswith("["):
            try:
                items = json.loads(text)
            except ValueError:
                return None, "is not a JSON list"
            if not isinstance(items, list):
                return None, "is not a JSON list"
        else:
            items = text.split(LIST_SEPARATOR)
    elif v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return None, None
    else:
        return None, "must be text or a list"
    if not all(isinstance(item, str) for item in items):
        return None, "must hold text items only"
    return [item.strip() for item in items if item.strip()], None


def _coerce_list(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    """Arrays of strings: a list from a frame, or ``;``-separated or JSON list text."""
    expected = f"{column} must be a list of ids: items separated by ';', or a JSON list"
    pairs = [_list_value(v) for v in s.tolist()]
    problems = [None if why is None else f"{expected}; it {why}" for _, why in pairs]
    values = pd.Series([items for items, _ in pairs], index=s.index, dtype=object)
    return values, pd.Series(problems, index=s.index, dtype=object)


def _date_value(v: Any) -> tuple[str | None, bool]:
    """One cell as ``YYYY-MM-DD``, and whether it could be read."""
    if v is None or v is pd.NaT or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None, True
    if isinstance(v, pd.Timestamp | dt.datetime):
        moment = pd.Timestamp(v)
        return moment.strftime("%Y-%m-%d"), moment == moment.normalize()
    if isinstance(v, dt.date):
        return v.isoformat(), True
    if isinstance(v, str):
        text = v.strip()
        if not text:
            return None, True
        try:
            return text, bool(_DATE.fullmatch(text)) and bool(dt.date.fromisoformat(text))
        except ValueError:
            return text, False
    return None, False


def _coerce_date(s: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    """Dates: ``YYYY-MM-DD`` text, a date, or a midnight timestamp; blank -> missing."""
    problems = no_problems(s)
    pairs = [_date_value(v) for v in s.tolist()]
    values = pd.Series([v if ok else None for v, ok in pairs], index=s.index, dtype="str")
    bad = np.array([not ok for _, ok in pairs], dtype=bool)
    problems[bad] = f"{column} must be a date written YYYY-MM-DD (such as 2026-01-31)"
    return values, problems


#: column kind -> its coercion (kinds: :data:`toolkit._ingress.rules.KIND`)
COERCERS: dict[str, Callable[[pd.Series, str], tuple[pd.Series, pd.Series]]] = {
    "text": coerce_text,
    "free_text": _coerce_free_text,
    "number": _coerce_number,
    "bool": _coerce_bool,
    "list": _coerce_list,
    "date": _coerce_date,
}


@dataclass(frozen=True, eq=False)
class Unreadable:
    """A cell the parser could not read, in place of its value (a ``type`` or ``encoding`` failure).

    Attributes:
        raw: The value as given (unsendable text escaped).
        why: The message.
        check: ``type`` or ``encoding``.
    """

    raw: Any
    why: str
    check: str = "type"


def readable(values: pd.Series, check: str | None = None) -> np.ndarray:
    """True for each cell that is not :class:`Unreadable` (with ``check``: not one of that
    check, ``type`` or ``encoding``).

    >>> readable(pd.Series(["a", Unreadable("x", "bad")])).tolist()
    [True, False]
    >>> readable(pd.Series(["a", Unreadable("x", "bad")]), "encoding").tolist()
    [True, True]
    """
    if values.dtype != object:
        return np.ones(len(values), dtype=bool)
    marked = [isinstance(v, Unreadable) and check in (None, v.check) for v in values.tolist()]
    return ~np.array(marked, dtype=bool)


def _unsendable(column: str, value: str) -> Unreadable:
    at = next(_SURROGATE.finditer(value)).start()
    shown = value[at].encode("utf-8", "backslashreplace").decode("utf-8")
    why = (
        f"{column} cannot be sent as UTF-8 text: character {at + 1} is {shown}, a lone surrogate "
        "(half of a character cut in two, or bytes decoded with the wrong codec); fix the text"
    )
    return Unreadable(value.encode("utf-8", "backslashreplace").decode("utf-8"), why, "encoding")


def as_kinds(df: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Each column of ``kinds`` in the one dtype of its kind, whatever file it came from, in
    place: text and dates as ``str`` (a cell written as text kept as written, ``""`` too; an
    Excel number in a text column as its digits), whole numbers as ``Int64`` (``Float64`` with a
    fraction), booleans as ``boolean``. A column with a cell its kind cannot read, and a list
    column, stays as read, for :func:`toolkit._ingress.validation.validate` to report.

    >>> df = as_kinds(pd.DataFrame({"callSign": [1001, " A"], "unitIncrements": ["360", ""]}),
    ...               {"callSign": "free_text", "unitIncrements": "number"})
    >>> df.dtypes.astype(str).tolist(), df["callSign"].tolist(), df["unitIncrements"].tolist()
    (['str', 'Int64'], ['1001', ' A'], [360, <NA>])
    """
    for i, col in enumerate(df.columns):
        kind, raw = kinds.get(str(col), "list"), plain(df.iloc[:, i])
        if kind == "list" or (isinstance(raw.dtype, pd.StringDtype) and kind not in NUMERIC):
            continue
        values, problems = COERCERS[kind](raw, str(col))
        if problems.notna().any():
            continue
        if kind in NUMERIC:
            whole = kind == "number" and (values.dropna() % 1 == 0).all()
            df[col] = values.astype("Int64") if whole else values
        else:  # a cell of text as written (the coercion strips, and blanks it), else the value
            written = raw.map(lambda v: isinstance(v, str)).astype(bool)
            df[col] = values.where(~written, raw.where(written, "")).astype("str")
    return df


#: kinds read as numbers or booleans, not text
NUMERIC = ("number", "bool")


def parse(df: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Read each cell of the columns of ``kinds`` as its kind, else as :class:`Unreadable`.

    >>> parse(pd.DataFrame({"n": ["360", "abc"]}), {"n": "number"})["n"].tolist()[0]
    360.0
    """
    out = []
    for i, col in enumerate(df.columns):
        kind = kinds.get(str(col))
        if kind is None:
            out.append(df.iloc[:, i])
            continue
        raw = plain(df.iloc[:, i])
        bad: dict[int, Unreadable] = {}
        if raw.dtype == object or (
            isinstance(raw.dtype, pd.StringDtype) and raw.dtype.storage == "python"
        ):
            items = raw.tolist()
            if _SURROGATE.search("".join(v for v in items if isinstance(v, str))):
                bad = {
                    p: _unsendable(str(col), v)
                    for p, v in enumerate(items)
                    if isinstance(v, str) and _SURROGATE.search(v)
                }
                raw = raw.astype(object).copy()
                raw.iloc[list(bad)] = None
        values, problems = COERCERS[kind](raw, str(col))
        failed = problems.notna().to_numpy()
        if failed.any() or bad:
            items, cells = raw.tolist(), values.astype(object).tolist()
            for p in np.flatnonzero(failed).tolist():
                cells[p] = Unreadable(items[p], str(problems.iloc[p]))
            for p, marker in bad.items():
                cells[p] = marker
            values = pd.Series(cells, index=values.index, dtype=object)
        out.append(values.rename(col))
    if not out:
        return df.copy()
    return pd.concat(out, axis=1).set_axis(df.index)
