"""The one missing-value convention of every frame the toolkit returns: pandas' nullable
dtypes (text :data:`TEXT`, ``Int*``, ``Float64``, ``boolean``), so every missing value is
``pd.NA``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The text dtype of every frame the toolkit returns: pandas' nullable string, Arrow-backed
#: (a missing value is ``pd.NA``, as in the ``Int*``, ``Float64`` and ``boolean`` columns).
TEXT = pd.StringDtype("pyarrow")


def nullable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame in the toolkit's one missing-value convention, pandas' nullable dtypes: text as
    :data:`TEXT` (not the NaN-based ``str``), floats as ``Float64``; every missing value is
    ``pd.NA`` (timestamps keep ``NaT``; lists stay Python lists). Arrow text is not copied.

    >>> out = nullable(pd.DataFrame({"a": ["x", None], "h": [1.5, None], "n": [1, 2]}))
    >>> out.dtypes.astype(str).tolist(), out.isna().sum().tolist()
    (['string', 'Float64', 'int64'], [1, 1, 0])
    """
    kinds: dict[Any, Any] = {}
    for col, dtype in frame.dtypes.items():
        if isinstance(dtype, pd.StringDtype) and dtype.na_value is not pd.NA:
            kinds[col] = TEXT
        elif dtype == np.float64:
            kinds[col] = pd.Float64Dtype()
        elif dtype == np.dtype(object) and _text(frame[col]):
            kinds[col] = TEXT
    return frame.astype(kinds) if kinds else frame


def _text(s: pd.Series) -> bool:
    """An ``object`` column holding only text (and missing values)."""
    return bool(pd.api.types.infer_dtype(s, skipna=True) == "string")
