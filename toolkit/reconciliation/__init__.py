"""Reconcile exported time entries with a billing system's extract, entry by entry.

The billing side reads released entries (the v2 export), writes them into its own records and
then acknowledges each entry as released successfully or failed. Before acknowledging, an analyst
compares what was exported with what the billing system holds: :func:`reconcile` joins the two
frames on the entry's id (``_id``) or its ``externalId`` and classes every entry and every billing
record as one of :data:`~toolkit.reconciliation.classify.STATUSES`.

Data flow, one module per step::

    exported entries frame ─┐  inputs.py: check the arguments and columns; values.py: read ids,
                            │  dates and durations; each side as one typed frame
    billing extract frame ──┘
            └─ classify.py: join on the key, class every row (messages.py: the detail text)
                 └─ result.py: Reconciliation.rows ─┬─> .summary / .by_user() / ...
                                                    └─> .to_acknowledge() -> client.acknowledge()

:func:`reconcile` (``api.py``) runs them, after making both frames pandas once
(:func:`toolkit.core.frames.as_pandas`: a Polars frame or a PyArrow table works too).

Only the value columns present on both sides are compared: a billing extract of the entry id
and the duration alone reconciles durations (``Reconciliation.compared`` says which). Text dates
are read as ISO 8601, or day first / month first when ``dayfirst`` says so; a text date that
reads differently either way (``03/04/2026``) is refused, never guessed.

Errors (all ``ValueError`` subclasses from :mod:`toolkit.errors`, never a raw pandas traceback)::

    ConfigError                 a bad argument (key, unit, tolerance, include)
    ValidationError             a value that cannot be read as a date or a number, or an
                                ambiguous date without ``dayfirst`` (.failure_cases)
     ├── MissingColumnError     a column is absent; names the closest existing column
     └── DuplicateKeyError      a key occurs more than once on one side; lists the keys

>>> COMPARISONS
('duration', 'date', 'matter')
"""

# not re-exported (``__all__`` is empty: the public face is ``toolkit``'s), kept for the command
# line, toolkit.firms and the demo, which import these from the package
from toolkit.reconciliation.api import reconcile as reconcile
from toolkit.reconciliation.classify import FAILED_STATUSES as FAILED_STATUSES
from toolkit.reconciliation.inputs import COMPARISONS as COMPARISONS
from toolkit.reconciliation.messages import spoken_as_cli as spoken_as_cli
from toolkit.reconciliation.result import Reconciliation as Reconciliation
from toolkit.reconciliation.result import acknowledgements_from_rows as acknowledgements_from_rows
from toolkit.reconciliation.result import is_reconciliation as is_reconciliation

__all__: list[str] = []
