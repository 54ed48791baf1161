"""The parts of the sandbox's store, one module per part of the interface, over one core.

Each part is a mixin over :class:`~.core.StoreCore` (the SQLite connection, its lock and
transactions); :class:`toolkit.sandbox._store.Store` composes them. Like moto's ``models.py``:
state and rules, methods named like the operations, no HTTP.

- :mod:`.core`: connection, lock, transactions, schema, shared helpers.
- :mod:`.profiles`: each customer's profile (switches for what the spec leaves open), over the
  default profile; auth, ingress and egress build on it.
- :mod:`.auth`: customers, API clients, OAuth tokens.
- :mod:`.ingress`: clients, initiatives, code types, codes, code ranges.
- :mod:`.egress`: export, release-pending, release-succeeded/failed, users.
- :mod:`.starring`: star, unstar, starred pages.
- :mod:`.administration`: users, walls, entries, records listing and seeding (``/sandbox/v1``).
"""

from __future__ import annotations

from .administration import RECORD_KINDS, AdministrationStore
from .auth import AuthStore
from .core import DEFAULT_AUDIENCE, DEFAULT_TOKEN_TTL, Clock, StoreCore, format_timestamp, new_id
from .egress import EgressStore
from .ingress import IngressStore
from .profiles import ProfileStore
from .starring import StarringStore

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_TOKEN_TTL",
    "RECORD_KINDS",
    "AdministrationStore",
    "AuthStore",
    "Clock",
    "EgressStore",
    "IngressStore",
    "ProfileStore",
    "StarringStore",
    "StoreCore",
    "format_timestamp",
    "new_id",
]
