"""Egress: released time out, and its acknowledgement back.

- :mod:`~toolkit.egress.fetch`: the v2 export and release-pending requests, window by window
- :mod:`~toolkit.egress.flatten`: nested JSON to flat Arrow and pandas tables
- :mod:`~toolkit.egress.schemas`, :mod:`~toolkit.egress.ack_schema`: output and input schemas
- :mod:`~toolkit.egress.export`: the ``Export`` result
- :mod:`~toolkit.egress.files`: its files (Parquet, CSV, Excel) and ``claim_target``
- :mod:`~toolkit.egress.sync`: incremental sync into Delta tables
- :mod:`~toolkit.egress.acknowledgements`: ``acknowledge`` from a frame
- :mod:`~toolkit.egress.ack_batch`: its succeeded rows through the published batch route
- :mod:`~toolkit.egress.users`: user records

The package names the public functions; ``sync`` and ``users`` are its modules (their
functions of the same names: ``toolkit.egress.sync.sync``, ``toolkit.egress.users.users``).
"""

from toolkit.core.windows import release_window
from toolkit.egress.acknowledgements import acknowledge
from toolkit.egress.export import Export
from toolkit.egress.fetch import export_entries, export_to_parquet, iter_export, release_pending
from toolkit.egress.files import claim_target
from toolkit.egress.sync import (
    DEFAULT_LAG,
    SyncReport,
    compact,
    read_sync,
    sync_status,
    widen_counts,
)

__all__ = [
    "DEFAULT_LAG",
    "Export",
    "SyncReport",
    "acknowledge",
    "claim_target",
    "compact",
    "export_entries",
    "export_to_parquet",
    "iter_export",
    "read_sync",
    "release_pending",
    "release_window",
    "sync_status",
    "widen_counts",
]
