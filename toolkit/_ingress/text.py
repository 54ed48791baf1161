"""Look-alike ids: two ids of one column equal after NFKC, case folding and removal of zero-width
characters, but written differently (``C-1`` and ``c-1``). The service stores two records, so
the later row is a ``lookalike`` warning naming the first.

>>> import pandas as pd
>>> lookalikes(pd.DataFrame({"id": ["C-1", "c-1"]}), ["id"], "row {}".format)[0][:3]
(1, 'id', 'lookalike')
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Callable, Sequence

import pandas as pd
import pyarrow.compute as pc

from toolkit._core.frames import neighbours, text_arrow
from toolkit.errors import InputWarning

MAX_CELL = 131_072
"""Characters in a cell beyond which it is a ``length`` warning."""

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
"""Zero-width characters :func:`fold` removes."""

_DROP_ZERO_WIDTH = {ord(c): None for c in ZERO_WIDTH}

Finding = tuple[int, str, str, str]
"""(position, column, check, message): a row of the failure frame before it is placed."""


def plural(n: int, word: str) -> str:
    """``n`` and the word, plural unless ``n`` is 1.

    >>> plural(1, "row"), plural(2, "warning")
    ('1 row', '2 warnings')
    """
    return f"{n} {word}{'s' if n != 1 else ''}"


def fold(text: str) -> str:
    """The form under which two ids look alike: NFKC, case-folded, without zero-width characters.

    >>> fold("C-1") == fold("c\\u20141".replace("\\u2014", "-")) == fold("\\ufeffＣ-1\\u200b")
    True
    """
    plain = unicodedata.normalize("NFKC", text.translate(_DROP_ZERO_WIDTH))
    return unicodedata.normalize("NFKC", plain.casefold())


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


def lookalikes(
    frame: pd.DataFrame, columns: Sequence[str], where: Callable[[int], str]
) -> list[Finding]:
    """Find ids equal under :func:`fold` but written differently from the first one written.

    Args:
        frame: The coerced rows, indexed by position.
        columns: The id columns (the key and the reference columns); repeats are passed over.
        where: How a message names the row at a position (``"row 3"``, ``"line 5"``).

    Returns:
        One finding per look-alike cell.

    >>> df = pd.DataFrame({"externalId": ["C-1", "C-2", "c-1"]})
    >>> lookalikes(df, ["externalId"], "row {}".format)[0][3]
    "externalId 'c-1' looks like 'C-1' (row 0): they differ only by case; the service \
stores them as separate records"
    """
    found: list[Finding] = []
    for col in dict.fromkeys(columns):
        if col not in frame.columns or _ascii_apart(frame[col]):
            continue
        column = frame[col]
        if isinstance(column.dtype, pd.StringDtype):  # by column: no Python object per row
            written = pd.Series(column.dropna().unique(), dtype=column.dtype)
        else:
            texts = [v for v in column.tolist() if isinstance(v, str)]
            written = pd.Series(pd.unique(pd.Series(texts, dtype=object)), dtype=object)
        keys = written.str.lower()  # ASCII: folding is lower-casing
        other = ~written.str.isascii().astype(bool)
        if other.any():
            keys = keys.astype(object)
            keys[other] = written[other].map(fold)
        if keys.nunique() == len(written):
            continue
        folded = dict(zip(written, keys, strict=True))
        first: dict[str, tuple[int, str]] = {}
        for p, v in enumerate(column.tolist()):
            if not isinstance(v, str):
                continue
            at, seen = first.setdefault(folded[v], (p, v))
            if seen != v:
                differ = f"they differ only by {_differences(v, seen)}"
                text = f"{col} {v!r} looks like {seen!r} ({where(at)}): {differ}; the service "
                found.append((p, col, "lookalike", text + "stores them as separate records"))
    return found


def _ascii_apart(column: pd.Series) -> bool:
    """True when a text column is ASCII and no two different ids in it lower-case alike (then it
    holds no look-alike). Found by sorting, a few bytes a row; a hash table of every id (Arrow's
    ``unique``) takes over 100 bytes a row while it is built.

    >>> _ascii_apart(pd.Series(["C-1", "C-2", None, "C-1"], dtype="str"))
    True
    >>> _ascii_apart(pd.Series(["C-1", "c-1"], dtype="str"))
    False
    """
    text = text_arrow(column)
    if text is None:
        return False
    values = pc.drop_null(text)
    if len(values) < 2:
        return True
    if not pc.all(pc.string_is_ascii(values)).as_py():
        return False
    lower = pc.ascii_lower(values)
    order = pc.sort_indices(lower)
    lower, values = lower.take(order), values.take(order)
    del order
    alike, differ = pc.equal(*neighbours(lower)), pc.not_equal(*neighbours(values))
    return not pc.any(pc.and_(alike, differ)).as_py()


def warn_lookalikes(failures: pd.DataFrame, limit: int = 5) -> None:
    """Say, with an :class:`~toolkit.errors.InputWarning`, which ids of a failure frame look alike.

    >>> import warnings
    >>> from toolkit._core.failures import failure_frame
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
