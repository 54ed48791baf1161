"""The names people give their tables and columns, matched to the spec's: a file or a sheet
to its import table (:data:`ALIASES`), a header to its field (:data:`COLUMN_ALIASES`).

Hints for headers and values a billing export uses where the spec uses other words.

Unlike :data:`toolkit._ingress.names.COLUMN_ALIASES`, a hint is only said in a failure's
message (``did you mean ...``): these words can mean more than one thing (:data:`HEADER_HINTS`,
:data:`UNIT_NOTES`, :data:`VALUE_HINTS`; they were the ``hints`` module).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, TypeVar

from toolkit.errors import ConfigError

_T = TypeVar("_T")

#: File extensions read as tables.
TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".parquet")

#: Import table -> the file names (without extension, compared case-insensitively, with ``-``,
#: spaces and dots read as ``_``) that hold it in a folder.
ALIASES: dict[str, tuple[str, ...]] = {
    "clients": ("clients", "client"),
    "initiatives": ("initiatives", "initiative", "matters", "matter", "projects", "project"),
    "code_types": ("code_types", "code_type", "codetypes", "codetype"),
    "codes": ("codes", "code"),
    "code_ranges": ("code_ranges", "code_range", "coderanges", "ranges", "range"),
}

#: File names (normalised as for :data:`ALIASES`) that are known but not import tables: they
#: are passed over without a warning (``timekeepers`` seeds the sandbox's users).
IGNORED: tuple[str, ...] = ("timekeepers", "readme")

#: Import table -> spec field -> other headers a billing export uses for it (see
#: :func:`match_headers`).
COLUMN_ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "clients": {
        "externalId": ("id", "client id", "client number"),
        "name": ("client name",),
        "callSign": ("client code", "client number"),
        "description": ("client description",),
    },
    "initiatives": {
        "externalId": (
            "id",
            "matter id",
            "matter external id",
            "matter number",
            "project id",
            "project external id",
            "initiative id",
        ),
        "name": ("matter name", "project name", "initiative name"),
        "description": ("matter description", "project description"),
        "callSign": ("matter code", "matter number", "project code", "project number"),
        "clientExternalId": ("client", "client id"),
        "unitIncrements": ("unit increment", "increment", "increments", "billing increment"),
        "status": ("matter status", "project status"),
    },
    "code_types": {
        "externalId": ("id", "code type", "code type id"),
        "name": ("code type name",),
    },
    "codes": {
        "externalId": ("id", "code", "code id"),
        "name": ("code name",),
        "description": ("code description",),
        "codeTypeExternalId": ("code type", "code type id", "type"),
    },
    "code_ranges": {
        "initiativeExternalId": (
            "initiative",
            "initiative id",
            "matter",
            "matter id",
            "matter external id",
            "project",
            "project id",
            "project external id",
        ),
        "codeExternalId": ("code", "code id"),
    },
}

BY_NAME = {alias: table for table, names in ALIASES.items() for alias in names}


def norm(stem: str) -> str:
    return re.sub(r"[-\s.]+", "_", stem.strip().casefold())


def header_key(name: object) -> str:
    """A column name as compared with the spec's: case, spaces, ``_`` and ``-`` ignored.

    Example:
        >>> header_key("External ID"), header_key("external_id"), header_key("externalId")
        ('externalid', 'externalid', 'externalid')
    """
    return re.sub(r"[\s_\-]+", "", str(name)).casefold()


class HeaderMatch(NamedTuple):
    """What :func:`match_headers` made of a table's headers.

    Attributes:
        names: The headers under the spec's names (unmatched or ambiguous ones as they are).
        fitting_two: Each header that fits several fields -> those fields.
        shared: Each field that several headers stand for -> their positions.
    """

    names: list[str]
    fitting_two: dict[str, tuple[str, ...]]
    shared: dict[str, list[int]]


def match_headers(table: str, fields: Sequence[str], names: Sequence[str]) -> HeaderMatch:
    """Match headers as people write them to the spec's field names.

    By exact name, then :func:`header_key`, then :data:`COLUMN_ALIASES`; ambiguities are returned.

    Example:
        >>> m = match_headers("initiatives", ["externalId", "callSign", "status"],
        ...                   ["Matter Number", "Status", "STATUS"])
        >>> m.fitting_two, m.shared
        ({'Matter Number': ('externalId', 'callSign')}, {'status': [1, 2]})
    """
    fields = list(fields)
    keys: dict[str, list[tuple[int, str]]] = {}
    for f in fields:
        keys.setdefault(header_key(f), []).append((1, f))
    for f, aliases in COLUMN_ALIASES.get(table, {}).items():
        for alias in aliases:
            keys.setdefault(header_key(alias), []).append((2, f))
    exact = set(names) & set(fields)
    claims: dict[str, list[int]] = {}
    fitting_two: dict[str, tuple[str, ...]] = {}
    for i, name in enumerate(names):
        candidates = [(r, f) for r, f in keys.get(header_key(name), []) if f in fields]
        if name in exact or not candidates:
            continue
        best = min(rank for rank, _ in candidates)
        found = sorted({f for rank, f in candidates if rank == best}, key=fields.index)
        if len(found) > 1:
            fitting_two[name] = tuple(found)
        elif found[0] not in exact:  # a header named exactly as the spec wins
            claims.setdefault(found[0], []).append(i)
    out = list(names)
    for f, positions in claims.items():
        if len(positions) == 1:
            out[positions[0]] = f
    shared = {f: positions for f, positions in claims.items() if len(positions) > 1}
    return HeaderMatch(out, fitting_two, shared)


def one_each(found: Mapping[str, list[_T]], twice: Callable[[str, str], str]) -> dict[str, _T]:
    """The one file or sheet of each table found, in import order; a table found in more than
    one is refused, ``twice(table, names)`` saying so (``names``: the files' or sheets' names).

    Example:
        >>> one_each({"codes": ["Codes"], "clients": ["Clients"]}, "{} twice: {}".format)
        {'clients': 'Clients', 'codes': 'Codes'}
    """
    for table in ALIASES:
        if len(found.get(table, [])) > 1:
            names = ", ".join(getattr(n, "name", str(n)) for n in found[table])
            raise ConfigError(twice(table, names))
    return {table: found[table][0] for table in ALIASES if found.get(table)}


def table_for(name: str | os.PathLike[str]) -> str | None:
    """The import table a file name stands for (case-insensitive, :data:`ALIASES`), or ``None``.

    Example:
        >>> table_for("Matters.csv"), table_for("code-types.xlsx"), table_for("notes.csv")
        ('initiatives', 'code_types', None)
    """
    p = Path(name)
    if p.suffix.casefold() not in TABLE_SUFFIXES:
        return None
    return BY_NAME.get(norm(p.stem))


HEADER_HINTS: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "initiatives": {
            "clientExternalId": ("client code", "client number", "client ref", "client key"),
            "unitIncrements": ("time increment", "time increment hrs", "time increment mins"),
        },
    }
)
"""Import table -> spec field -> headers likely meant for it, hinted when the field is missing."""

UNIT_NOTES: Mapping[str, str] = MappingProxyType(
    {"unitIncrements": "unitIncrements is in SECONDS: 0.1 h = 6 min = 360"}
)
"""Field -> what it counts in, said beside every hint to rename a column into it."""

VALUE_HINTS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "status": {"open": "active", "closed": "inactive", "archived": "inactive"},
        "billingType": {
            "probono": "non-billable",
            "nonbillable": "non-billable",
            "notbillable": "non-billable",
            "unbillable": "non-billable",
            "nocharge": "non-billable",
        },
    }
)
"""Column -> a firm's word -> the allowed value it likely means."""


def _key(text: object) -> str:
    return re.sub(r"[^0-9a-z]", "", str(text).lower())


def header_hint(table: str, field: str, headers: Collection[object]) -> str | None:
    """The header of ``headers`` that :data:`HEADER_HINTS` says is likely meant for ``field``.

    >>> header_hint("initiatives", "clientExternalId", ["Client Code"])
    'Client Code'
    """
    wanted = {_key(h) for h in HEADER_HINTS.get(table, {}).get(field, ())}
    return next((str(h) for h in headers if _key(h) in wanted), None)


def unit_note(field: str) -> str:
    """``"; <what field counts in>"`` for a field of :data:`UNIT_NOTES`, else ``""``.

    >>> unit_note("unitIncrements")
    '; unitIncrements is in SECONDS: 0.1 h = 6 min = 360'
    >>> unit_note("name")
    ''
    """
    note = UNIT_NOTES.get(field)
    return f"; {note}" if note else ""


def value_hint(column: str, value: str) -> str | None:
    """The allowed value of ``column`` that a firm's word likely means (:data:`VALUE_HINTS`).

    >>> value_hint("status", "Closed"), value_hint("billingType", "Pro Bono")
    ('inactive', 'non-billable')
    >>> value_hint("status", "Pending") is None
    True
    """
    return VALUE_HINTS.get(column, {}).get(_key(value))
