"""The one bulk runner, over :mod:`toolkit.core`: many requests, paced, journaled, stoppable.

- :mod:`~toolkit.bulk.runner`: ``Call``, ``run_bulk``, the standard result frame
- :mod:`~toolkit.bulk.journal`: ``Journal``, what the service acknowledged
- :mod:`~toolkit.bulk.pacer`: ``Pacer``, one per run: the rate, backoff, an unreachable service
"""
