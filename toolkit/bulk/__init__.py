"""The one bulk runner, over :mod:`toolkit.core`: many requests, paced, journaled, stoppable.

- :mod:`~toolkit.bulk.runner`: ``Call``, ``run_bulk``, the standard result frame
- :mod:`~toolkit.bulk.journal`: ``Journal``, what the service acknowledged
- :mod:`~toolkit.bulk.pacer`: ``Pacer``, one per run: the pace, backoff, an unreachable service
- :mod:`~toolkit.bulk.budget`: ``Budget``, one per service and connection: the limit, learned
- :mod:`~toolkit.bulk.budgets`: ``budgets_of``, a connection's budgets, one per service
- :mod:`~toolkit.bulk.hints`: ``limit_hints``, what the rate limit headers say
"""

__all__: list[str] = []
