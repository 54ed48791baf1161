"""Ingress: master data in. Files and frames are read, checked against the spec's field tables,
turned into payloads and imported.

- :mod:`~toolkit.ingress.readers`: table files (CSV sniffed, .xlsx, Parquet), folder aliases
- :mod:`~toolkit.ingress.rules`, :mod:`~toolkit.ingress.models`: the pandera models of the five
  import tables (the spec's field tables) and the table registry
- :mod:`~toolkit.ingress.cells`: how a cell becomes a value, per column kind
- :mod:`~toolkit.ingress.checks`: the check engine (coercion, failure frames, ``check_frame``)
- :mod:`~toolkit.ingress.validation`: ``validate`` across tables, ``load_folder``
- :mod:`~toolkit.ingress.payloads`: frames to request JSON
- :mod:`~toolkit.ingress.ranges`: code ranges and the bound of 2500 ids per request
- :mod:`~toolkit.ingress.plan`: ``plan`` (what a run will do, record by record, against the
  journal), ``failures`` (what is still failing)
- :mod:`~toolkit.ingress.imports`: ``import_table``, ``onboard`` (sends the plan)
"""

# not re-exported (``__all__`` is empty: the public face is ``toolkit``'s), kept for the command
# line and toolkit.firms, which import these from the package
from toolkit.ingress.imports import IMPORTS as IMPORTS
from toolkit.ingress.imports import OnboardReport as OnboardReport
from toolkit.ingress.plan import Plan as Plan
from toolkit.ingress.ranges import CODE_RANGE_POSTS as CODE_RANGE_POSTS
from toolkit.ingress.readers import check_out_path as check_out_path
from toolkit.ingress.readers import read_table as read_table
from toolkit.ingress.readers import with_lines as with_lines
from toolkit.ingress.readers import write_table as write_table
from toolkit.ingress.validation import ValidationReport as ValidationReport
from toolkit.ingress.validation import load_folder as load_folder
from toolkit.ingress.validation import validate as validate

__all__: list[str] = []
