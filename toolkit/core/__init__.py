"""The bottom layer: what every operation stands on, knowing no operation.

- :mod:`~toolkit.core.settings`: ``Settings`` (customer, credentials, base addresses, ``.env``)
- :mod:`~toolkit.core.auth`: client-credentials tokens, ``Secret``
- :mod:`~toolkit.core.http`: the HTTP transport and ``Reply``
- :mod:`~toolkit.core.connection`: ``Connection``, the endpoint table, one request
- :mod:`~toolkit.core.windows`: time bounds, windows, the one ISO 8601 formatter
- :mod:`~toolkit.core.lock`: the one advisory file lock
- :mod:`~toolkit.core.failures`: the failure frame every check reports in
- :mod:`~toolkit.core.frames`: frames as the toolkit takes them in

Import from the modules; this package imports nothing, so ``toolkit.errors`` can use
:mod:`~toolkit.core.failures` without a cycle.
"""

__all__: list[str] = []
