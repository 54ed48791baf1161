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
"""

# not re-exported (``__all__`` is empty: the public face is ``toolkit``'s), kept for the command
# line, toolkit.firms and toolkit.dagster, which import these from the package
from toolkit.core.windows import release_window as release_window
from toolkit.egress.export import Export as Export
from toolkit.egress.files import claim_target as claim_target
from toolkit.egress.sync import DEFAULT_LAG as DEFAULT_LAG
from toolkit.egress.sync import SyncReport as SyncReport
from toolkit.egress.sync import compact as compact
from toolkit.egress.sync import read_sync as read_sync
from toolkit.egress.sync import sync_status as sync_status

__all__: list[str] = []
