"""Egress: released time out (fetch -> flatten -> export -> files / sync), acknowledgements back.

Not re-exported (``__all__`` is empty: the public face is ``toolkit``'s); the names below are
kept for the command line, toolkit.firms and toolkit.dagster, which import them from here.
"""

from toolkit._core.windows import RENAMED as RENAMED
from toolkit._core.windows import Window as Window
from toolkit._egress.export import Export as Export
from toolkit._egress.export import claim_target as claim_target
from toolkit._egress.sync import DEFAULT_LAG as DEFAULT_LAG
from toolkit._egress.sync import compact as compact
from toolkit._egress.sync import read_sync as read_sync
from toolkit._egress.sync import sync_options as sync_options
from toolkit._egress.sync import sync_status as sync_status
from toolkit._egress.sync_report import SyncReport as SyncReport

__all__: list[str] = []
