"""Ingress: master data in. Files and frames are read (:mod:`~toolkit.ingress.readers`), checked
against the spec's field tables (:mod:`~toolkit.ingress.models`, :mod:`~toolkit.ingress.checks`,
:mod:`~toolkit.ingress.validation`), turned into payloads, planned against the journal
(:mod:`~toolkit.ingress.plan`) and imported (:mod:`~toolkit.ingress.imports`).
"""

# not re-exported (``__all__`` is empty: the public face is ``toolkit``'s), kept for the command
# line and toolkit.firms, which import these from the package
from toolkit.ingress.chunking import with_lines as with_lines
from toolkit.ingress.imports import IMPORTS as IMPORTS
from toolkit.ingress.imports import OnboardReport as OnboardReport
from toolkit.ingress.plan import ACTIONS as ACTIONS
from toolkit.ingress.plan import Plan as Plan
from toolkit.ingress.ranges import CODE_RANGE_POSTS as CODE_RANGE_POSTS
from toolkit.ingress.readers import read_table as read_table
from toolkit.ingress.validation import ValidationReport as ValidationReport
from toolkit.ingress.validation import folder_sources as folder_sources
from toolkit.ingress.validation import load_folder as load_folder
from toolkit.ingress.validation import validate as validate
from toolkit.ingress.writer import check_out_path as check_out_path
from toolkit.ingress.writer import write_table as write_table

__all__: list[str] = []
