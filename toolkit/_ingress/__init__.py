"""Ingress: master data in. Files and frames are read (:mod:`~toolkit._ingress.readers`), checked
against the spec's field tables (:mod:`~toolkit._ingress.models`, :mod:`~toolkit._ingress.checks`,
:mod:`~toolkit._ingress.validation`), turned into payloads, planned against the journal
(:mod:`~toolkit._ingress.plan`) and imported (:mod:`~toolkit._ingress.imports`).
"""

# not re-exported (``__all__`` is empty: the public face is ``toolkit``'s), kept for the command
# line and toolkit.firms, which import these from the package
from toolkit._ingress.chunking import with_lines as with_lines
from toolkit._ingress.imports import OnboardReport as OnboardReport
from toolkit._ingress.names import match_headers as match_headers
from toolkit._ingress.plan import ACTIONS as ACTIONS
from toolkit._ingress.plan import IMPORTS as IMPORTS
from toolkit._ingress.plan import Plan as Plan
from toolkit._ingress.readers import read_table as read_table
from toolkit._ingress.validation import folder_sources as folder_sources
from toolkit._ingress.validation import validate as validate
from toolkit._ingress.writer import check_out_path as check_out_path
from toolkit._ingress.writer import write_table as write_table

__all__: list[str] = []
