"""The Dagster code location of the firms demo: every firm of ``$FIRMS_FILE``.

``dagster dev -f examples/dagster/definitions.py`` (``make firms-demo`` sets ``FIRMS_FILE``
to the ``firms.toml`` it wrote; default: ``firms.toml`` in the working folder).
"""

import os

from toolkit.dagster import definitions

defs = definitions(os.environ.get("FIRMS_FILE", "firms.toml"))
