"""Reconcile exported time entries with a billing extract, entry by entry: :func:`reconcile`
(``api.py``) checks the inputs (``inputs.py``, ``values.py``), joins and classes every row
(``classify.py``, ``messages.py``) and returns a :class:`Reconciliation` (``result.py``);
``ledes.py`` reads LEDES invoices and pairs their fee lines with the entries.

>>> COMPARISONS
('duration', 'date', 'matter')
"""

# not re-exported (``__all__`` is empty): for the command line, toolkit.firms and the demo
from toolkit._reconciliation.api import reconcile as reconcile
from toolkit._reconciliation.classify import FAILED_STATUSES as FAILED_STATUSES
from toolkit._reconciliation.inputs import COMPARISONS as COMPARISONS
from toolkit._reconciliation.ledes import read_ledes as read_ledes
from toolkit._reconciliation.ledes import sniff as sniff
from toolkit._reconciliation.messages import spoken_as_cli as spoken_as_cli
from toolkit._reconciliation.result import Reconciliation as Reconciliation
from toolkit._reconciliation.result import acknowledgements_from_rows as acknowledgements_from_rows
from toolkit._reconciliation.result import is_reconciliation as is_reconciliation

__all__: list[str] = []
