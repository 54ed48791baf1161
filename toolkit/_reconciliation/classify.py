"""The join of the two sides and the class of every row: one of :data:`STATUSES`, the
``*_differs`` flags, the differences and the ``detail`` text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from toolkit._reconciliation.inputs import isin
from toolkit._reconciliation.messages import details

#: Status of a reconciled row, in the order of the ``status`` categorical.
STATUSES: tuple[str, ...] = tuple(
    "matched missing_in_billing only_in_billing duration_differs date_or_matter_differs "
    "code_differs".split()
)

#: Statuses of an exported entry that is acknowledged as failed.
FAILED_STATUSES = tuple(s for s in STATUSES if s not in ("matched", "only_in_billing"))

_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES), ordered=False)

#: Columns of :attr:`Reconciliation.rows`, in order.
ROW_COLUMNS: tuple[str, ...] = tuple(
    "key _id externalId billingId userId initiative.externalId initiative.client.externalId "
    "exported_seconds billed_seconds difference_seconds exported_date billed_date "
    "exported_matter billed_matter exported_codes billed_codes status duration_differs "
    "date_differs matter_differs codes_differs written differences detail".split()
)


def join(exp: pd.DataFrame, bil: pd.DataFrame) -> pd.DataFrame:
    """Entries left-joined with billing records on ``key``, then the records no entry has.

    >>> exp = pd.DataFrame({"entryId": ["e1", "e2"]}).assign(key=lambda f: f["entryId"])
    >>> join(exp, pd.DataFrame({"key": ["e2", "e3"]}))["_merge"].tolist()
    ['left_only', 'both', 'right_only']
    """
    right = bil[bil["key"].notna()]
    left = exp.merge(right, how="left", on="key", indicator=True, validate="many_to_one")
    only = bil[~isin(bil["key"], exp["key"])].assign(_merge="right_only")
    return pd.concat([left, only], ignore_index=True, sort=False)


def classify(
    rows: pd.DataFrame, tolerance: float, key: str, compared: Sequence[str]
) -> pd.DataFrame:
    """Give every joined row its status, flags, differences and detail (:data:`ROW_COLUMNS`).

    >>> rows = pd.DataFrame({"key": ["e1"], "entryId": ["e1"], "externalId": None,
    ...     "billingId": None, "userId": "u1", "initiative.externalId": "M-1",
    ...     "initiative.client.externalId": None, "exported_seconds": [60],
    ...     "billed_seconds": [60], "exported_date": pd.NaT, "billed_date": pd.NaT,
    ...     "billed_matter": None, "_merge": ["both"]})
    >>> classify(rows, 0, "_id", ("duration",))["status"].tolist()
    ['matched']
    """
    rows = rows.assign(**{c: rows.get(c) for c in ("exported_codes", "billed_codes")})
    both = (rows["_merge"] == "both").to_numpy()
    diff = rows["billed_seconds"] - rows["exported_seconds"]
    sides = {"duration": ("exported_seconds", "billed_seconds")}
    sides |= {"date": ("exported_date", "billed_date")}
    sides |= {"matter": ("initiative.externalId", "billed_matter")}
    sides |= {"codes": ("exported_codes", "billed_codes")}
    bad: dict[str, np.ndarray] = {}
    for name, (left, right) in sides.items():
        unequal = diff.abs() > tolerance if name == "duration" else rows[left] != rows[right]
        bad[name] = np.zeros(len(rows), bool)  # a value not compared never differs
        if name in compared:
            bad[name] = _differs(rows[left], rows[right], unequal)

    status = np.full(len(rows), "matched", dtype=object)
    status[bad["codes"]] = "code_differs"
    status[bad["date"] | bad["matter"]] = "date_or_matter_differs"
    status[bad["duration"]] = "duration_differs"
    status[(rows["_merge"] == "left_only").to_numpy()] = "missing_in_billing"
    status[(rows["_merge"] == "right_only").to_numpy()] = "only_in_billing"

    def flag(name: str) -> pd.Series:
        out = pd.Series(bad[name], dtype="boolean")
        out[~both if name in compared else slice(None)] = pd.NA
        return out

    bits = (8, 4, 2, 1)  # a bit per value compared, in the order of ``sides``
    code = np.where(both, sum(bad[n] * bit for n, bit in zip(sides, bits, strict=True)), 0)
    names = {c: [n for bit, n in zip(bits, sides, strict=True) if c & bit] for c in range(16)}
    differences = [list(names[c]) for c in code.tolist()]
    written = np.where(diff.fillna(0).to_numpy() < 0, "down", "up")

    text = ["key", "externalId", "billingId", "userId", "initiative.externalId", "_id"]
    text += ["initiative.client.externalId", "exported_matter", "billed_matter"]
    kinds: dict[str, Any] = dict.fromkeys([*text, "exported_codes", "billed_codes"], "str")
    kinds |= dict.fromkeys(["exported_seconds", "billed_seconds"], "Int64")
    kinds |= dict.fromkeys(["exported_date", "billed_date"], "datetime64[us]")
    # each column read from the joined one of its name, but "_id" (the exported entry's own
    # name for it) and the exported matter
    read = {"_id": "entryId", "exported_matter": "initiative.externalId"}
    out = pd.DataFrame({name: rows[read.get(name, name)].astype(k) for name, k in kinds.items()})
    out["difference_seconds"] = diff.astype("Int64")
    out["status"] = pd.Categorical(status, dtype=_STATUS_DTYPE)
    out = out.assign(**{f"{name}_differs": flag(name) for name in sides})
    out["written"] = pd.Series(written, dtype="str").where(bad["duration"] & both)
    out["differences"] = differences
    out["detail"] = details(out, key)
    return out[list(ROW_COLUMNS)]


def _differs(left: pd.Series, right: pd.Series, unequal: pd.Series) -> np.ndarray:
    """True where values differ; one side missing differs, both missing agree."""
    lna = left.isna().to_numpy()
    rna = right.isna().to_numpy()
    return np.where(lna | rna, lna != rna, unequal.fillna(False).to_numpy(dtype=bool))
