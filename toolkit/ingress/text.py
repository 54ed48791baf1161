"""Text checks of the import tables: text that cannot be sent, over-long cells, look-alike ids.

:func:`toolkit.ingress.checks.check_frame` runs them beside its other steps; each finding is a
row of the failure frame, naming the row and the column::

    unsendable_text(raw, columns)   before coercion   encoding (error), length (warning)
    lookalikes(frame, columns)      after coercion    lookalike (warning)

- ``encoding`` (error): a string that cannot be encoded as UTF-8, so cannot be sent as JSON
  text, such as a lone surrogate (``"\\ud800"``: half of an emoji cut in two, or bytes decoded
  with ``surrogateescape``). Only a pandas frame can hold one (Arrow and Polars strings are
  UTF-8). The value is shown with the surrogate escaped (``'C-1\\\\ud800'``), and the row is
  not sent.
- ``length`` (warning): a cell longer than :data:`MAX_CELL` characters. The spec gives no
  maximum for any import field, so it is sent as given; a cell that long is usually an
  unbalanced double quote in a CSV file that joined many lines into one, and the message says
  so when the cell holds line breaks.
- ``lookalike`` (warning): two ids of one column that are equal after Unicode NFKC
  normalisation, case folding and removal of zero-width characters (:data:`ZERO_WIDTH`), but
  differ as written (``C-1`` and ``c-1``, ``C-1`` and ``C-1\\u200b``). The spec allows both and
  the service stores them as two records, so the later row is named beside the first. An
  import says so with an :class:`~toolkit.errors.InputWarning` (:func:`warn_lookalikes`).

>>> import pandas as pd

from toolkit.errors import InputWarning
>>> raw, found = unsendable_text(pd.DataFrame({"name": ["ok", "bad\\ud800"]}, dtype=object),
...                              ["name"])
>>> found[0][:3], raw["name"].tolist()
((1, 'name', 'encoding'), ['ok', 'bad\\\\ud800'])
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd

from toolkit.errors import InputWarning

__all__ = ["MAX_CELL", "ZERO_WIDTH", "fold", "lookalikes", "unsendable_text", "warn_lookalikes"]

MAX_CELL = 131_072
"""Characters in a cell beyond which it is a ``length`` warning (Python's default CSV field
limit, where an unbalanced double quote used to stop the reader)."""

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
"""Characters :func:`fold` removes: zero-width space, non-joiner, joiner, word joiner and the
zero-width no-break space (byte order mark)."""

_DROP_ZERO_WIDTH = {ord(c): None for c in ZERO_WIDTH}

Finding = tuple[int, str, str, str]
"""(position, column, check, message): a row of the failure frame before it is placed."""


def fold(text: str) -> str:
    """The form under which two ids look alike: NFKC, case-folded, without zero-width
    characters.

    Args:
        text: An id.

    Returns:
        Its folded form.

    >>> fold("C-1") == fold("c\\u20141".replace("\\u2014", "-")) == fold("\\ufeffＣ-1\\u200b")
    True
    """
    plain = unicodedata.normalize("NFKC", text.translate(_DROP_ZERO_WIDTH))
    return unicodedata.normalize("NFKC", plain.casefold())


def _text_column(values: pd.Series) -> bool:
    """Whether the column may hold a string UTF-8 cannot encode (an Arrow string cannot)."""
    dtype = values.dtype
    if isinstance(dtype, pd.StringDtype):
        return dtype.storage == "python"
    return pd.api.types.is_object_dtype(dtype)


def _encodable(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _unsendable_message(column: str, value: str) -> str:
    at = next(i for i, c in enumerate(value) if not _encodable(c))
    return (
        f"{column} cannot be sent as UTF-8 text: character {at + 1} is {_escaped(value[at])}, "
        "a lone surrogate (half of a character cut in two, or bytes decoded with the wrong "
        "codec); fix the text"
    )


def _long_message(column: str, value: str) -> str:
    message = (
        f"{column} is {len(value):,} characters long, more than {MAX_CELL:,}; it is sent as given"
    )
    breaks = value.count("\n")
    if breaks:
        message += (
            f". It holds {breaks:,} line break{'s' if breaks != 1 else ''}: in a CSV file, "
            "an unbalanced double quote joins the lines that follow it into one cell"
        )
    return message


def unsendable_text(
    raw: pd.DataFrame, columns: Sequence[str]
) -> tuple[pd.DataFrame, list[Finding]]:
    """Find text that cannot be sent (an ``encoding`` error) and over-long cells (a
    ``length`` warning) in the given columns of a frame as loaded.

    Args:
        raw: The rows as loaded, indexed by position.
        columns: The columns to look at.

    Returns:
        ``(raw, findings)``: the frame with each unsendable string escaped
        (``backslashreplace``), so the later steps can read it (the row is bad anyway), and
        one finding per cell.

    >>> raw, found = unsendable_text(pd.DataFrame({"name": ["x" * (MAX_CELL + 1)]}), ["name"])
    >>> [f[:3] for f in found]
    [(0, 'name', 'length')]
    """
    found: list[Finding] = []
    for col in columns:
        values = raw[col]
        items = values.tolist()
        strings = [v for v in items if isinstance(v, str)]
        if _text_column(values) and not _encodable("".join(strings)):
            bad = {p: v for p, v in enumerate(items) if isinstance(v, str) and not _encodable(v)}
            found += [(p, col, "encoding", _unsendable_message(col, v)) for p, v in bad.items()]
            fixed = values.astype(object).copy()
            fixed.iloc[list(bad)] = [_escaped(v) for v in bad.values()]
            raw = raw.assign(**{col: fixed})
        if max((len(s) for s in strings), default=0) > MAX_CELL:
            found += [
                (p, col, "length", _long_message(col, v))
                for p, v in enumerate(raw[col].tolist())
                if isinstance(v, str) and len(v) > MAX_CELL
            ]
    return raw, found


def _differences(value: str, other: str) -> str:
    ways = []
    if any(c in ZERO_WIDTH for c in value + other):
        ways.append("a zero-width character")
    a, b = (unicodedata.normalize("NFKC", v.translate(_DROP_ZERO_WIDTH)) for v in (value, other))
    if a != value.translate(_DROP_ZERO_WIDTH) or b != other.translate(_DROP_ZERO_WIDTH):
        ways.append("Unicode normalisation")
    if a != b:
        ways.append("case")
    return " and ".join(ways) or "Unicode normalisation"


def lookalikes(frame: pd.DataFrame, columns: Sequence[str], where: Sequence[str]) -> list[Finding]:
    """Find ids equal under :func:`fold` but written differently: a ``lookalike`` warning on
    each row whose id differs from the first one written, naming both rows and both values.

    Args:
        frame: The coerced rows, indexed by position.
        columns: The id columns (the key and the reference columns); repeats are passed over.
        where: How a message names the row at each position (``"row 3"``, ``"line 5"``).

    Returns:
        One finding per look-alike cell.

    >>> df = pd.DataFrame({"externalId": ["C-1", "C-2", "c-1"]})
    >>> lookalikes(df, ["externalId"], ["row 0", "row 1", "row 2"])[0][3]
    "externalId 'c-1' looks like 'C-1' (row 0): they differ only by case; the service \
stores them as separate records"
    """
    found: list[Finding] = []
    for col in dict.fromkeys(columns):
        if col not in frame.columns:
            continue
        values = frame[col].tolist()
        strings = pd.Series([v for v in values if isinstance(v, str)], dtype=object)
        written = pd.Series(pd.unique(strings), dtype=object)
        keys = written.str.lower()  # ASCII: folding is lower-casing
        other = ~written.str.isascii().astype(bool)
        keys[other] = written[other].map(fold)
        if keys.nunique() == len(written):
            continue
        folded = dict(zip(written, keys, strict=True))
        first: dict[str, tuple[int, str]] = {}
        for p, v in enumerate(values):
            if not isinstance(v, str):
                continue
            at, seen = first.setdefault(folded[v], (p, v))
            if seen != v:
                found.append(
                    (
                        p,
                        col,
                        "lookalike",
                        f"{col} {v!r} looks like {seen!r} ({where[at]}): they differ only by "
                        f"{_differences(v, seen)}; the service stores them as separate records",
                    )
                )
    return found


def warn_lookalikes(failures: pd.DataFrame, limit: int = 5) -> None:
    """Say, with an :class:`~toolkit.errors.InputWarning`, which ids of a failure frame look
    alike (its ``lookalike`` rows); nothing when there are none.

    An import sends such rows as given, so the warning is the word said before two records are
    stored where one may have been meant.

    Args:
        failures: A failure frame.
        limit: How many to list.

    >>> import warnings
    >>> from toolkit.core.failures import failure_frame
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_lookalikes(failure_frame(table="clients", row=[2], column=["externalId"],
    ...                                   check=["lookalike"], severity=["warning"],
    ...                                   message=["externalId 'c-1' looks like 'C-1'"]))
    >>> print(caught[0].message)
    clients: 1 id looks like another (sent as given): row 2: externalId 'c-1' looks like 'C-1'
    """
    found = failures[failures["check"] == "lookalike"]
    if found.empty:
        return
    n = len(found)
    shown = "; ".join(
        f"row {r.row}: {r.message}" for r in found.head(limit).itertuples(index=False)
    )
    more = f"; ... and {n - limit} more" if n > limit else ""
    tables = ", ".join(dict.fromkeys(str(t) for t in found["table"]))
    verb = "id looks" if n == 1 else "ids look"
    warnings.warn(
        f"{tables}: {n} {verb} like another (sent as given): {shown}{more}",
        InputWarning,
        stacklevel=4,  # the caller of import_*
    )
