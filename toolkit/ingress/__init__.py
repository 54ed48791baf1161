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

from toolkit.ingress.imports import IMPORTS, OnboardReport, import_table, onboard
from toolkit.ingress.plan import Plan, failures, plan
from toolkit.ingress.ranges import CODE_RANGE_MAX, CODE_RANGE_POSTS
from toolkit.ingress.readers import check_out_path, read_table, table_for, with_lines, write_table
from toolkit.ingress.validation import ValidationReport, load_folder, validate

__all__ = [
    "CODE_RANGE_MAX",
    "CODE_RANGE_POSTS",
    "IMPORTS",
    "OnboardReport",
    "Plan",
    "ValidationReport",
    "check_out_path",
    "failures",
    "import_table",
    "load_folder",
    "onboard",
    "plan",
    "read_table",
    "table_for",
    "validate",
    "with_lines",
    "write_table",
]
