"""Checked frames -> JSON-ready request bodies, exactly as the spec's field tables.

Every value is a native ``str``, ``int``, ``float``, ``bool``, list of ``str`` or ``None``; an
optional field is sent only when the row has a value. Code ranges are grouped per initiative.

>>> import pandas as pd
>>> df = pd.DataFrame({"externalId": ["C-1"], "name": ["Acme"], "callSign": ["1"],
...                    "description": ["Widgets"]})
>>> to_payloads("clients", df)
[{'externalId': 'C-1', 'name': 'Acme', 'callSign': '1', 'description': 'Widgets'}]
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from toolkit._ingress.models import TABLES


class CodeRangePayload(NamedTuple):
    """One code range request: path id, body, and the input rows it stands for.

    Attributes:
        initiative_external_id: The ``{initiativeExternalId}`` of the path.
        payload: ``{"codeExternalIds": [...]}`` in the rows' order.
        rows: Input index labels of the rows grouped into this payload.
    """

    initiative_external_id: str
    payload: dict[str, list[str]]
    rows: list[Any]


def _native_column(s: pd.Series, kind: str, nullable: bool, column: str) -> list[Any]:
    missing = s.isna().to_numpy()
    if missing.any() and not nullable:
        raise ValueError(f"{column} has missing values; check the frame first (toolkit.validate)")
    try:
        if kind == "number":
            values: list[Any] = [_number(v) for v in s.astype("Float64").fillna(0).tolist()]
        elif kind == "bool":
            values = [bool(v) for v in s.astype("boolean").fillna(False).tolist()]
        elif kind == "list":
            values = [_strings(v) for v in s.astype(object).where(~missing).tolist()]
        else:
            seen: dict[str, str] = {}  # one object per distinct value (ids, statuses repeat)
            values = [
                "" if m else seen.setdefault(str(v), str(v))
                for v, m in zip(s.tolist(), missing.tolist(), strict=True)
            ]
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{column} does not hold {kind} values ({exc}); check the frame first "
            "(toolkit.validate)"
        ) from None
    if nullable and missing.any():
        values = [None if m else v for v, m in zip(values, missing.tolist(), strict=True)]
    return values


def _strings(value: Any) -> list[str] | None:
    """A list cell as a list of ``str`` (``None`` where missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, list | tuple | np.ndarray):
        raise TypeError(f"{value!r} is not a list")
    return [str(item) for item in value]


def _number(value: float) -> int | float:
    """A JSON number: an ``int`` when whole (``360``), else the ``float`` as given."""
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    return int(value) if value.is_integer() and abs(value) < 2**53 else float(value)


def to_payloads(
    table: str, df: pd.DataFrame, null_semantic_type: str = "null"
) -> list[dict[str, Any]]:
    """Build one request body per row of a checked frame, in row order.

    Args:
        table: ``clients``, ``initiatives``, ``code_types`` or ``codes``.
        df: A frame of ``ValidationReport.frames`` (:func:`toolkit.validate`);
            extra columns are ignored.
        null_semantic_type: ``"omit"`` sends a code type body without its null
            ``semanticType`` (:class:`~toolkit._core.settings.Settings`,
            ``null_semantic_type``: the published import body has the field optional and not
            nullable): the field is then optional, sent only when the row has a value;
            ``"null"`` (the default) sends the null, as interface.md says.

    Returns:
        One dict per row with the spec's fields in field-table order and native types.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"externalId": ["expense-code"], "name": ["expense-code"],
    ...                    "semanticType": [None], "customerDefaultable": [True],
    ...                    "userDefaultable": [False]})
    >>> to_payloads("code_types", df)
    [{'externalId': 'expense-code', 'name': 'expense-code', 'semanticType': None, \
'customerDefaultable': True, 'userDefaultable': False}]
    >>> to_payloads("code_types", df, null_semantic_type="omit")
    [{'externalId': 'expense-code', 'name': 'expense-code', 'customerDefaultable': True, \
'userDefaultable': False}]
    """
    if table == "code_ranges":
        raise ValueError("code ranges are grouped per initiative: use to_code_range_payloads(df)")
    spec = TABLES[table]
    missing = [c for c in spec.columns if c not in df.columns and c not in spec.optional]
    if missing:
        raise ValueError(f"{table}: missing column(s) {missing}; check the frame first")
    present = [c for c in spec.columns if c in df.columns]
    columns = {c: _native_column(df[c], spec.kinds[c], c in spec.nullable, c) for c in present}
    omit = null_semantic_type == "omit" and table == "code_types"
    optional = spec.optional | {"semanticType"} if omit else spec.optional
    return [
        {k: v for k, v in zip(columns, row, strict=True) if v is not None or k not in optional}
        for row in zip(*columns.values(), strict=True)
    ]


def to_code_range_payloads(df: pd.DataFrame) -> list[CodeRangePayload]:
    """Group code range rows (long form) into one request per initiative, in first-seen order.

    Returns:
        One :class:`CodeRangePayload` per initiative (a repeated code kept once).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"initiativeExternalId": ["M-2", "M-1", "M-2"],
    ...                    "codeExternalId": ["L110", "L120", "L130"]}, index=[10, 11, 12])
    >>> for initiative, payload, rows in to_code_range_payloads(df):
    ...     print(initiative, payload, rows)
    M-2 {'codeExternalIds': ['L110', 'L130']} [10, 12]
    M-1 {'codeExternalIds': ['L120']} [11]
    """
    for col in ("initiativeExternalId", "codeExternalId"):
        if col not in df.columns:
            raise ValueError(f"code_ranges: missing column {col!r}; check the frame first")
    initiatives = _native_column(df["initiativeExternalId"], "text", False, "initiativeExternalId")
    codes = _native_column(df["codeExternalId"], "text", False, "codeExternalId")
    groups: dict[str, tuple[dict[str, None], list[Any]]] = {}
    for initiative, code, label in zip(initiatives, codes, df.index.tolist(), strict=True):
        seen, rows = groups.setdefault(initiative, ({}, []))
        seen[code] = None
        rows.append(label)
    return [
        CodeRangePayload(initiative, {"codeExternalIds": list(seen)}, rows)
        for initiative, (seen, rows) in groups.items()
    ]
