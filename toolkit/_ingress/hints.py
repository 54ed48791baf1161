"""Hints for headers and values a billing export uses where the spec uses other words.

Unlike :data:`toolkit._ingress.names.COLUMN_ALIASES`, a hint is only said in a failure's
message (``did you mean ...``): these words can mean more than one thing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from types import MappingProxyType

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
