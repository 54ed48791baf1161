"""The one bulk runner, over :mod:`toolkit._core`: many requests, paced, journaled, stoppable.

- :mod:`~toolkit._bulk.runner`: ``Call``, ``run_bulk``, the standard result frame
- :mod:`~toolkit._bulk.journal`: ``Journal``, what the service acknowledged
- :mod:`~toolkit._bulk.pacer`: ``Pacer``, one per run: the pace, backoff, an unreachable service
- :mod:`~toolkit._bulk.budget`: ``Budget``, one per service and connection: the limit, learned
- :mod:`~toolkit._bulk.budgets`: ``budgets_of``, a connection's budgets, one per service
- :mod:`~toolkit._bulk.hints`: ``limit_hints``, what the rate limit headers say
"""

__all__: list[str] = []
