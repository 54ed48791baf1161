"""The bottom layer: settings, auth, HTTP, the connection, time windows, the file lock, failure
frames and input frames; it knows no operation. It imports nothing, so ``toolkit.errors`` can
use :mod:`~toolkit._core.failures` without a cycle: import from the modules.
"""

__all__: list[str] = []
