"""Egress: released time out (fetch -> flatten -> export -> files / sync), acknowledgements back.

Not re-exported (``__all__`` is empty: the public face is ``toolkit``'s); the names below are
kept for the command line, toolkit.firms and toolkit.dagster, which import them from here.
"""

from toolkit.core.windows import RENAMED as RENAMED
from toolkit.core.windows import Window as Window
from toolkit.egress.export import Export as Export
from toolkit.egress.files import claim_target as claim_target
from toolkit.egress.sync import DEFAULT_LAG as DEFAULT_LAG
from toolkit.egress.sync import SyncReport as SyncReport
from toolkit.egress.sync import compact as compact
from toolkit.egress.sync import read_sync as read_sync
from toolkit.egress.sync import sync_options as sync_options
from toolkit.egress.sync import sync_status as sync_status

__all__: list[str] = []
