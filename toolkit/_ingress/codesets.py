"""The public UTBMS code sets as import tables: ``toolkit.codesets``.

Law firms that bill with LEDES code their time with the Uniform Task-Based Management System
(UTBMS): task codes grouped in phases (the Litigation set: L100 to L500), one set of activity
codes (A101 to A111) and one of expense codes (E101 to E124). :func:`load` gives a set as the
``code_types`` and ``codes`` frames ``validate``, ``plan`` and ``onboard`` take; :func:`code_ranges`
gives a set's codes as the code ranges of the matters named.

The sets (package data, ``toolkit/_data/utbms/``; a task's phase is its code's ``group``):

- ``utbms-litigation``: the ABA Section of Litigation's Litigation Code Set, with its activities
  and expenses, as the ABA publishes it (americanbar.org, Uniform Task-Based Management System,
  Litigation Code Set).
- ``utbms-bankruptcy``: the Bankruptcy Code Set (B100 to B400), with the activities and expenses.
- ``utbms-counseling``: the Counseling Code Set (C100 to C400, one level), with the activities
  and expenses.

The Bankruptcy and Counseling sets are as CaseFox's list of the ABA's UTBMS codes publishes them
(secure.casefox.com/web/UTBMSCodes.html). The code types are ``task-code`` (``semanticType``
task), ``activity-code`` (activity) and ``expense-code`` (none), as the sample firm has them.

>>> tables = load("utbms-litigation")
>>> len(tables["codes"]), tables["codes"]["group"].dropna().unique()[0]
(64, 'L100 Case Assessment, Development and Administration')
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from toolkit._core.dtypes import TEXT, nullable
from toolkit._ingress.cells import as_kinds
from toolkit._ingress.models import TABLES
from toolkit._ingress.readers import read_table
from toolkit.errors import ConfigError

__all__ = ["SETS", "load", "code_ranges"]

#: set name -> the files of ``toolkit/_data/utbms/`` its codes are in
SETS: dict[str, tuple[str, ...]] = {
    f"utbms-{name}": (name, "activities", "expenses")
    for name in ("litigation", "bankruptcy", "counseling")
}

#: the package data folder of the sets' CSV files
FOLDER = Path(__file__).resolve().parents[1] / "_data" / "utbms"


def _read(table: str, name: str) -> pd.DataFrame:
    return nullable(as_kinds(read_table(FOLDER / f"{name}.csv"), TABLES[table].kinds))


def load(*names: str) -> dict[str, pd.DataFrame]:
    """Code sets as import tables: their code types and codes, each code once.

    Args:
        names: set names (:data:`SETS`), e.g. ``"utbms-litigation"``.

    Returns:
        ``{"code_types": frame, "codes": frame}`` in the columns of the imports, to pass to
        ``toolkit.validate(**tables)``, ``client.plan(tables)`` or ``client.onboard(tables)``.

    Example:
        >>> tables = load("utbms-litigation", "utbms-counseling")
        >>> tables["code_types"]["externalId"].tolist()
        ['task-code', 'activity-code', 'expense-code']
        >>> toolkit.validate(**tables).ok
        True
    """
    unknown = [n for n in names if n not in SETS]
    if unknown or not names:
        raise ConfigError(f"code sets are {', '.join(SETS)}; got {', '.join(unknown) or 'none'}")
    parts = dict.fromkeys(part for name in names for part in SETS[name])
    codes = pd.concat([_read("codes", part) for part in parts], ignore_index=True)
    return {"code_types": _read("code_types", "code_types"), "codes": codes}


def code_ranges(
    name: str, initiatives: Iterable[str] | pd.DataFrame, *, types: Iterable[str] = ("task-code",)
) -> pd.DataFrame:
    """A set's codes as the code range of each initiative: the ``code_ranges`` import table.

    Args:
        name: the set (:data:`SETS`).
        initiatives: their ``externalId`` values, or a table of them (an initiatives table's
            ``externalId`` column, or ``initiativeExternalId``).
        types: the code types whose codes the ranges hold (default the set's task codes).

    Returns:
        ``initiativeExternalId`` and ``codeExternalId``, one row per initiative and code.

    Example:
        >>> ranges = toolkit.codesets.code_ranges("utbms-litigation", ["M-1001-001", "M-1002-001"])
        >>> len(ranges), ranges["codeExternalId"].iloc[0]
        (58, 'L110')
    """
    if isinstance(initiatives, pd.DataFrame):
        column = next((c for c in ("externalId", "initiativeExternalId") if c in initiatives), None)
        if column is None:
            raise ConfigError("initiatives needs an externalId or initiativeExternalId column")
        initiatives = initiatives[column]
    ids = list(dict.fromkeys(str(i) for i in initiatives))
    codes = load(name)["codes"]
    chosen = codes.loc[codes["codeTypeExternalId"].isin(list(types)), "externalId"].tolist()
    pairs = [(i, code) for i in ids for code in chosen]
    return pd.DataFrame(pairs, columns=["initiativeExternalId", "codeExternalId"], dtype=TEXT)
