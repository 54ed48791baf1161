"""LEDES invoices: :func:`read_ledes` reads LEDES 1998B and LEDES 98BI V2 files into a frame of
invoice lines, and :func:`ledes_sides` makes the two sides of a reconciliation from one.

The field lists are the LEDES Oversight Committee's (ledes.org): LEDES 1998B's 24 fields, and
LEDES 98BI V2's 52 (the 24, then 28 for the invoice's parties, currency and tax). A file is
the format's name (``LEDES1998B[]``), a header of the field names, then one record per line
item, ``|`` between fields and ``[]`` after each record; dates are ``YYYYMMDD``.

>>> len(FIELDS["LEDES1998B"]), len(FIELDS["LEDES98BI V2"])
(24, 52)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from toolkit._core.dtypes import TEXT, nullable
from toolkit._core.failures import failure_frame
from toolkit.errors import ConfigError, InputWarning, ValidationError

_B = (
    "INVOICE_DATE INVOICE_NUMBER CLIENT_ID LAW_FIRM_MATTER_ID INVOICE_TOTAL BILLING_START_DATE "
    "BILLING_END_DATE INVOICE_DESCRIPTION LINE_ITEM_NUMBER EXP/FEE/INV_ADJ_TYPE "
    "LINE_ITEM_NUMBER_OF_UNITS LINE_ITEM_ADJUSTMENT_AMOUNT LINE_ITEM_TOTAL LINE_ITEM_DATE "
    "LINE_ITEM_TASK_CODE LINE_ITEM_EXPENSE_CODE LINE_ITEM_ACTIVITY_CODE TIMEKEEPER_ID "
    "LINE_ITEM_DESCRIPTION LAW_FIRM_ID LINE_ITEM_UNIT_COST TIMEKEEPER_NAME "
    "TIMEKEEPER_CLASSIFICATION CLIENT_MATTER_ID"
).split()
_BI = (
    "PO_NUMBER CLIENT_TAX_ID MATTER_NAME INVOICE_TAX_TOTAL INVOICE_NET_TOTAL INVOICE_CURRENCY "
    "TIMEKEEPER_LAST_NAME TIMEKEEPER_FIRST_NAME ACCOUNT_TYPE LAW_FIRM_NAME LAW_FIRM_ADDRESS_1 "
    "LAW_FIRM_ADDRESS_2 LAW_FIRM_CITY LAW_FIRM_STATEorREGION LAW_FIRM_POSTCODE LAW_FIRM_COUNTRY "
    "CLIENT_NAME CLIENT_ADDRESS_1 CLIENT_ADDRESS_2 CLIENT_CITY CLIENT_STATEorREGION "
    "CLIENT_POSTCODE CLIENT_COUNTRY LINE_ITEM_TAX_RATE LINE_ITEM_TAX_TOTAL LINE_ITEM_TAX_TYPE "
    "INVOICE_REPORTED_TAX_TOTAL INVOICE_TAX_CURRENCY"
).split()
#: format name (the file's first line, without ``[]``) -> its fields, in order
FIELDS: dict[str, tuple[str, ...]] = {"LEDES1998B": (*_B,), "LEDES98BI V2": (*_B, *_BI)}
#: the fields read as dates (``YYYYMMDD``) and as numbers; every other field is text
DATES = ("INVOICE_DATE", "BILLING_START_DATE", "BILLING_END_DATE", "LINE_ITEM_DATE")
AMOUNTS = (
    "INVOICE_TOTAL LINE_ITEM_NUMBER_OF_UNITS LINE_ITEM_ADJUSTMENT_AMOUNT LINE_ITEM_TOTAL "
    "LINE_ITEM_UNIT_COST INVOICE_TAX_TOTAL INVOICE_NET_TOTAL LINE_ITEM_TAX_RATE "
    "LINE_ITEM_TAX_TOTAL INVOICE_REPORTED_TAX_TOTAL"
).split()
#: largest difference, in currency units, between a total and what its parts add up to that is
#: still equal: half a cent, so amounts written to the cent agree and a cent off warns
AMOUNT_TOLERANCE = 0.005
#: seconds in a LEDES fee line's unit (LINE_ITEM_NUMBER_OF_UNITS counts hours)
SECONDS_PER_UNIT = 3600
#: the LEDES fee line's type (``EXP/FEE/INV_ADJ_TYPE``); E is an expense, IF/IE adjustments
FEE = "F"

Source = str | os.PathLike[str] | bytes | IO[str] | IO[bytes]


def read_ledes(path_or_buffer: Source) -> pd.DataFrame:
    """Read a LEDES 1998B or LEDES 98BI V2 invoice file into a frame of its line items.

    Files are read as billing systems write them: CRLF or LF line ends, with or without the
    ``[]`` after each record, blank lines anywhere, a byte order mark, several invoices in one
    file (the invoice-level fields repeat on every line). Text that is not UTF-8 is read as
    Windows-1252.

    Args:
        path_or_buffer: a path, the file's bytes, or an open text or binary file.

    Returns:
        One row per line item: the format's fields as columns, in its order (dates as
        ``datetime64``, amounts as ``Float64``, the rest as text; an empty field is missing),
        then ``line``: the record's line in the file. ``attrs["format"]`` is the format.

    Raises:
        ValidationError: the file is not LEDES, a record has the wrong number of fields, a date
            is not ``YYYYMMDD`` or an amount not a number: the message names the file, the line
            and the field; ``failure_cases`` lists every bad value.

    Warns:
        InputWarning: an invoice's math does not add up (``INVOICE_TOTAL`` against the sum of
            its ``LINE_ITEM_TOTAL``; a ``LINE_ITEM_TOTAL`` against units times unit cost plus
            adjustment, plus tax in 98BI V2), naming the invoice and its lines.

    Example:
        >>> text = "LEDES1998B[]\\n" + "|".join(FIELDS["LEDES1998B"]) + "[]\\n" + (
        ...     "20240331|INV-1|C-1001|M-1001-001|250|20240301|20240331|March|1|F|1.0|0|250|"
        ...     "20240304|L110||A101|TK-101|Interview|12-3456789|250|Lane, Margaret|PARTNR|CM-9[]")
        >>> lines = read_ledes(text.encode())
        >>> lines.loc[0, ["INVOICE_NUMBER", "LINE_ITEM_TASK_CODE", "LINE_ITEM_DATE"]].tolist()
        ['INV-1', 'L110', Timestamp('2024-03-04 00:00:00')]
        >>> float(lines.loc[0, "LINE_ITEM_NUMBER_OF_UNITS"]), lines.attrs["format"]
        (1.0, 'LEDES1998B')
    """
    name, text = _text_of(path_or_buffer)
    numbered = [(n, s.strip()) for n, s in enumerate(text.splitlines(), start=1)]
    lines = [(n, s) for n, s in numbered if s]
    if len(lines) < 2:
        raise _error(name, 1, None, "is not a LEDES file: no format line and header")
    (first, given), (head_at, head) = lines[0], lines[1]
    fmt = " ".join(_unbracket(given).upper().split())
    fmt = {"LEDES98BIV2": "LEDES98BI V2", "LEDES1998BI V2": "LEDES98BI V2"}.get(fmt, fmt)
    if fmt not in FIELDS:
        known = " or ".join(f"{f}[]" for f in FIELDS)
        raise _error(
            name, first, None, f"is not a LEDES file: it starts {given[:40]!r}, not {known}"
        )
    fields = FIELDS[fmt]
    header, upper = _split(head), [f.upper() for f in fields]
    if [h.upper() for h in header] != upper:
        at = next((i for i, h in enumerate(header[: len(upper)]) if h.upper() != upper[i]), None)
        said = f"{len(header)} field names, {fmt} has {len(fields)}"
        said = said if at is None else f"field {at + 1} is {header[at]!r}, {fmt} has {fields[at]!r}"
        raise _error(name, head_at, None, f"is not {fmt}'s header: {said}")
    numbers = [n for n, _ in lines[2:]]
    rows = [_split(record, len(fields)) for _, record in lines[2:]]
    for n, values in zip(numbers, rows, strict=True):
        if len(values) != len(fields):
            raise _error(name, n, None, f"has {len(values)} fields, {fmt} has {len(fields)}")
    frame = pd.DataFrame(rows, columns=list(fields), dtype=TEXT).replace("", pd.NA)
    frame = _typed(frame.apply(lambda c: c.str.strip()), name, np.array(numbers, dtype="int64"))
    frame["line"] = pd.Series(numbers, dtype="Int64")
    _check_math(frame, name, fmt)
    frame.attrs["format"] = fmt
    return frame


def _text_of(source: Source) -> tuple[str, str]:
    """The source's name for messages and its text (a BOM dropped)."""
    if isinstance(source, bytes):
        name, data = "LEDES bytes", source
    elif isinstance(source, str | os.PathLike) and not (isinstance(source, str) and "\n" in source):
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"{path}: no such LEDES file")
        name, data = str(path), path.read_bytes()
    elif isinstance(source, str):
        name, data = "LEDES text", source.encode()
    else:
        name = str(getattr(source, "name", "LEDES buffer"))
        read = source.read()
        data = read.encode() if isinstance(read, str) else bytes(read)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    return name, text.lstrip("\ufeff")


def _unbracket(record: str) -> str:
    return record[:-2].rstrip() if record.endswith("[]") else record


def _split(record: str, count: int = 0) -> list[str]:
    """A record's fields; an empty one after them all (``...|x|[]``: ``count + 1``) dropped."""
    values = _unbracket(record).split("|")
    return values[:-1] if len(values) == count + 1 and values[-1] == "" else values


def _typed(frame: pd.DataFrame, name: str, at: np.ndarray) -> pd.DataFrame:
    """Dates and amounts typed; every unreadable one a failure, the first in the message."""
    bad = []
    for column in (c for c in frame.columns if c in DATES or c in AMOUNTS):
        text = frame[column]
        read: pd.Series
        if column in DATES:
            read = pd.to_datetime(text, format="%Y%m%d", errors="coerce").astype("datetime64[us]")
            what = "is not a date written YYYYMMDD"
        else:
            read = pd.to_numeric(text.astype("object"), errors="coerce").astype("Float64")
            what = "is not a number"
        wrong = (read.isna() & text.notna()).to_numpy()
        bad += [(int(n), column, v, what) for n, v in zip(at[wrong], text[wrong], strict=True)]
        frame[column] = read
    if bad:
        bad.sort()
        n, column, value, what = bad[0]
        more = f" ({len(bad) - 1} more bad value(s) in failure_cases)" if len(bad) > 1 else ""
        rows, columns, values, whats = (list(part) for part in zip(*bad, strict=True))
        cases = failure_frame(
            table=name, row=rows, column=columns, check="type", value=values, message=whats
        )
        raise ValidationError(f"{name} line {n}, field {column}: {value!r} {what}{more}", cases)
    return frame


def _error(name: str, line: int, field: str | None, what: str) -> ValidationError:
    cases = failure_frame(table=name, row=line, column=field, check="format", message=what)
    return ValidationError(f"{name} line {line} {what}", cases)


#: the fields a LINE_ITEM_TOTAL is made of: units x unit cost + adjustment + tax (98BI V2)
_PARTS = (
    "LINE_ITEM_NUMBER_OF_UNITS LINE_ITEM_UNIT_COST LINE_ITEM_ADJUSTMENT_AMOUNT LINE_ITEM_TAX_TOTAL"
).split()


def _check_math(frame: pd.DataFrame, name: str, fmt: str) -> None:
    """Warn, per invoice, of totals its lines do not add up to."""
    parts = [frame.get(c, pd.Series(0.0, index=frame.index)).fillna(0) for c in _PARTS]
    expected = parts[0] * parts[1] + parts[2] + parts[3]
    line_total = frame["LINE_ITEM_TOTAL"].astype("float64")
    off_line = ((line_total - expected).abs() > AMOUNT_TOLERANCE).to_numpy(dtype=bool)
    tax = " + tax" if fmt != "LEDES1998B" else ""
    for invoice, lines in frame.groupby("INVOICE_NUMBER", sort=False, dropna=False):
        said = []
        total = float(lines["INVOICE_TOTAL"].astype("float64").iloc[0])
        summed = float(lines["LINE_ITEM_TOTAL"].astype("float64").sum())
        if not np.isnan(total) and abs(total - summed) > AMOUNT_TOLERANCE:
            said.append(
                f"INVOICE_TOTAL {total:,.2f} but its LINE_ITEM_TOTALs add up to {summed:,.2f}"
            )
        for i in lines.index[off_line[lines.index]]:
            said.append(
                f"line {frame.at[i, 'line']!s} (item {frame.at[i, 'LINE_ITEM_NUMBER']!s}): "
                f"LINE_ITEM_TOTAL {float(line_total[i]):,.2f} but units x unit cost + "
                f"adjustment{tax} is {float(expected[i]):,.2f}"
            )
        if said:
            warnings.warn(
                f"{name}: invoice {invoice!s} does not add up: " + "; ".join(said),
                InputWarning,
                stacklevel=3,
            )


def is_ledes(frame: pd.DataFrame) -> bool:
    """Whether a billing frame is LEDES invoice lines (as :func:`read_ledes` reads them).

    >>> is_ledes(pd.DataFrame(columns=list(FIELDS["LEDES1998B"]))), is_ledes(pd.DataFrame())
    (True, False)
    """
    return {"EXP/FEE/INV_ADJ_TYPE", "TIMEKEEPER_ID", "LINE_ITEM_DATE"} <= set(frame.columns)


def _mapped(values: pd.Series, mapping: Mapping[Any, Any] | pd.Series) -> pd.Series:
    looked_up = values.map(mapping) if len(values) else values
    return pd.Series(looked_up, index=values.index, dtype=TEXT)


def timekeeper_map(timekeepers: object) -> pd.Series:
    """``userId`` -> timekeeper id, from ``client.users(...)`` or a mapping.

    >>> timekeeper_map(pd.DataFrame({"_id": ["u1"], "timekeeperExternalId": ["TK-1"]}))["u1"]
    'TK-1'
    """
    if isinstance(timekeepers, pd.DataFrame):
        user = next((c for c in ("userId", "_id") if c in timekeepers.columns), None)
        if user is None or "timekeeperExternalId" not in timekeepers.columns:
            raise ConfigError(
                "timekeepers must be client.users(...)'s frame (_id, timekeeperExternalId) or "
                f"a mapping of userId to timekeeper id; it has {list(timekeepers.columns)[:10]}"
            )
        keys = timekeepers[user].astype(TEXT)
        return pd.Series(timekeepers["timekeeperExternalId"].astype(TEXT).to_numpy(), index=keys)
    if isinstance(timekeepers, Mapping | pd.Series):
        return pd.Series(dict(timekeepers), dtype=TEXT)
    raise ConfigError(
        "a LEDES invoice names timekeepers: pass timekeepers=client.users(entries['userId']) "
        "(each user's billing-system identity) or a mapping of userId to timekeeper id"
    )


def entry_codes(codes: pd.DataFrame | None, ids: pd.Series) -> pd.Series:
    """Each entry's task and activity codes as ``"task/activity"`` (``-`` where none).

    >>> codes = pd.DataFrame({"entryId": ["e1", "e1"], "code.externalId": ["L110", "A101"],
    ...     "code.type.semanticType": ["task", "activity"]})
    >>> entry_codes(codes, pd.Series(["e1", "e2"])).tolist()
    ['L110/A101', '-/-']
    """
    parts = []
    for kind in ("task", "activity"):
        by_id: dict[Any, Any] = {}
        if codes is not None:  # each entry's first code of the kind
            mine = codes[codes["code.type.semanticType"] == kind].drop_duplicates("entryId")
            by_id = dict(zip(mine["entryId"], mine["code.externalId"], strict=True))
        parts.append(ids.map(by_id).fillna("-").astype("str"))
    return (parts[0] + "/" + parts[1]).astype(TEXT)


def _keys(frame: pd.DataFrame, by: str) -> pd.Series:
    """``"TK date matter"``, then ``" #n"`` for the n-th of a same key (longest first)."""
    base = frame["tk"] + " " + frame["day"].dt.strftime("%Y-%m-%d") + " " + frame["matter"]
    order = frame.assign(base=base).sort_values(["base", by], ascending=[True, False])
    nth = order.groupby("base", dropna=True).cumcount().reindex(frame.index)
    keys: pd.Series = (base + np.where(nth > 0, " #" + (nth + 1).astype("str"), "")).astype(TEXT)
    return keys


def ledes_sides(
    exp: pd.DataFrame,
    exported: pd.DataFrame,
    lines: pd.DataFrame,
    timekeepers: object,
    matters: str | Mapping[str, str],
    codes: pd.DataFrame | None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The exported side keyed (and coded) as LEDES fee lines are, and those lines as the
    billing side: ``key`` is timekeeper, date and matter (``#2``... for repeats, paired
    longest with longest), ``billingId`` is ``INVOICE_NUMBER/LINE_ITEM_NUMBER``.

    Args:
        exp: the exported entries as the join reads them (``exported_frame``).
        exported: the exported entries as given (for the matter's column).
        lines: LEDES invoice lines (:func:`read_ledes`); only the fee lines are compared.
        timekeepers: ``client.users(...)``'s frame, or a mapping of ``userId`` to timekeeper.
        matters: ``"externalId"`` or ``"callSign"`` (the initiative's, ``initiative.callSign``),
            or a mapping of the initiative's ``externalId`` to the invoice's matter id.
        codes: the export's codes frame (``export.codes``), or ``None``: codes not compared.

    Returns:
        ``(exp, bil)`` with ``key``, and ``exported_codes`` / ``billed_codes`` text.
    """
    tk = _mapped(exp["userId"], timekeeper_map(timekeepers))
    if isinstance(matters, str) and matters not in ("externalId", "callSign"):
        raise ConfigError(f"matters must be 'externalId', 'callSign' or a mapping, got {matters!r}")
    if isinstance(matters, str):
        column = f"initiative.{matters}"
        if column not in exported.columns:
            raise ConfigError(
                f"matters={matters!r} reads the exported column {column!r}, which the export "
                "has not: pass matters as a mapping of initiative externalId to the invoice's "
                "matter id (e.g. dict(zip(initiatives.externalId, initiatives.callSign)))"
            )
        matter = exported[column].astype(TEXT).reset_index(drop=True)
    else:
        matter = _mapped(exp["initiative.externalId"], matters)
    exp = exp.assign(tk=tk, day=exp["exported_date"], matter=matter)
    exp["key"] = _keys(exp, "exported_seconds")
    exp["exported_codes"] = entry_codes(codes, exp["entryId"])
    fees = lines[lines["EXP/FEE/INV_ADJ_TYPE"].str.upper() == FEE].reset_index(drop=True)
    task, activity = (fees[f"LINE_ITEM_{k}_CODE"].fillna("-") for k in ("TASK", "ACTIVITY"))
    seconds = (fees["LINE_ITEM_NUMBER_OF_UNITS"] * SECONDS_PER_UNIT).round().astype("Int64")
    day = fees["LINE_ITEM_DATE"].astype("datetime64[us]")
    billed = fees["LAW_FIRM_MATTER_ID"].astype(TEXT)
    bil = pd.DataFrame({"tk": fees["TIMEKEEPER_ID"].astype(TEXT), "day": day, "matter": billed})
    bil["billingId"] = (fees["INVOICE_NUMBER"] + "/" + fees["LINE_ITEM_NUMBER"]).astype(TEXT)
    bil["billed_seconds"], bil["billed_date"], bil["billed_matter"] = seconds, day, billed
    bil["billed_codes"] = (task + "/" + activity).astype(TEXT)
    bil["key"] = _keys(bil, "billed_seconds")
    bil["unknown_timekeeper"] = (~bil["tk"].isin(tk.dropna())).to_numpy(dtype=bool)
    return exp, nullable(bil)


def sniff(path: str | os.PathLike[str]) -> bool:
    """Whether a file starts like a LEDES file (its first text is ``LEDES``).

    >>> sniff("sample_data/clients.csv")
    False
    """
    try:
        with open(path, "rb") as f:
            head = f.read(64).decode("utf-8-sig", errors="replace").lstrip("\ufeff \r\n\t")
    except OSError:
        return False
    return head.upper().startswith("LEDES")
