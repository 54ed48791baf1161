"""The sandbox's HTTP routes: one FastAPI router module per part of the interface.

Like moto's ``responses.py`` beside ``models.py``: each module here is thin (read the
parameters through FastAPI and pydantic, call one store method, return its dict) and bears the
name of its part in :mod:`toolkit.sandbox._models`, so one word means one part on both sides:

- :mod:`.core`: what the routers share (the ``seg`` path convertor, problem response tables,
  the OAuth 2.0 scheme, JSON encoding).
- :mod:`.auth`: the token exchange (identity service) and the bearer check of the others.
- :mod:`.ingress`: the five imports.
- :mod:`.egress`: the export, release-pending, the acknowledgements, the user record.
- :mod:`.starring`: star, unstar, starred pages.
- :mod:`.administration`: the ``/sandbox/v1`` routes (not the interface).
- :mod:`.profiles`: the ``/sandbox/v1`` routes of the customers' profiles.

:func:`toolkit.sandbox._app.create_app` includes them in this order.
"""

from __future__ import annotations

from . import administration, auth, egress, ingress, profiles, starring
from .core import TOKEN_PATH

__all__ = [
    "TOKEN_PATH",
    "administration",
    "auth",
    "egress",
    "ingress",
    "profiles",
    "starring",
]
