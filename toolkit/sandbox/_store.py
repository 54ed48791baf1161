"""State and rules of the sandbox: one :class:`Store` over one SQLite file.

:class:`Store` is the sandbox's ``models.py`` in moto's sense: methods are named like the
interface's operations, take and return plain JSON-ready dicts, know nothing about HTTP and
raise the errors of :mod:`toolkit.sandbox._exceptions`. Field-level rules (types, enums,
required fields) are checked before a body reaches the store, by the models of
:mod:`toolkit.sandbox._bodies`; the store checks references and states.

It is composed of one mixin per part of the interface, each in its own module of
:mod:`toolkit.sandbox._models`, all over one core:

- :mod:`~toolkit.sandbox._models.core`: the connection, its lock, transactions, the schema.
- :mod:`~toolkit.sandbox._models.profiles`: each customer's profile over the default one.
- :mod:`~toolkit.sandbox._models.auth`: customers, API clients, OAuth tokens.
- :mod:`~toolkit.sandbox._models.ingress`: clients, initiatives, code types, codes, code ranges.
- :mod:`~toolkit.sandbox._models.egress`: export, release-pending, acknowledgements, users.
- :mod:`~toolkit.sandbox._models.starring`: star, unstar, starred pages.
- :mod:`~toolkit.sandbox._models.administration`: the ``/sandbox/v1`` state and seeding.

Durability: WAL journal, ``synchronous=FULL``, and every write runs in its own
``BEGIN IMMEDIATE ... COMMIT`` before the method returns, so an answered write survives
``kill -9``.
"""

from __future__ import annotations

from ._models import (
    DEFAULT_AUDIENCE,
    DEFAULT_TOKEN_TTL,
    RECORD_KINDS,
    AdministrationStore,
    AuthStore,
    Clock,
    EgressStore,
    IngressStore,
    StarringStore,
    format_timestamp,
    new_id,
)

__all__ = [
    "DEFAULT_AUDIENCE",
    "DEFAULT_TOKEN_TTL",
    "RECORD_KINDS",
    "Clock",
    "Store",
    "format_timestamp",
    "new_id",
]


# AdministrationStore builds on IngressStore, so it comes first in the bases.
class Store(AdministrationStore, AuthStore, IngressStore, EgressStore, StarringStore):
    """The sandbox's state over one SQLite file.

    Args:
        path: SQLite file; created with its schema when missing, reused as is otherwise.
        token_ttl: Lifetime in seconds of the access tokens issued from now on (the default
            profile's ``tokenLifetimeSeconds``, unless ``profile`` sets it).
        audience: The audience the token endpoint requires.
        clock: Source of "now" (an aware datetime); tests pass a fake to expire tokens.
        profile: Switches of the default profile (see :mod:`toolkit.sandbox._profiles`), which
            every customer starts from.

    >>> import tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> creds = store.create_customer("Firm")
    >>> store.import_client(creds["customerId"], {"externalId": "C1", "name": "Acme",
    ...     "callSign": "ACME", "description": ""})["externalId"]
    'C1'
    >>> store.close()
    """
