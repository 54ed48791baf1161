"""The budgets of one connection, one per service, shared by every run over it."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable

from toolkit._bulk.budget import Budget


class Budgets:
    """The budgets of one connection, one per service (its base URL).

    Example:
        >>> budgets = Budgets()
        >>> budgets.get("http://svc") is budgets.get("http://svc")
        True
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._by_key: dict[str, Budget] = {}

    def get(self, key: str = "") -> Budget:
        """The budget of a service (``key``: its base URL), made on first use."""
        with self._lock:
            budget = self._by_key.get(key)
            if budget is None:
                budget = self._by_key[key] = Budget(clock=self._clock)
            return budget

    def all(self) -> list[Budget]:
        """Every budget made so far (what the pacing tests read)."""
        with self._lock:
            return list(self._by_key.values())


_REGISTRY: weakref.WeakKeyDictionary[object, Budgets] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def budgets_of(owner: object) -> Budgets:
    """The budgets shared by every run over one connection (made on first use).

    Args:
        owner: the connection (any object that can be weakly referenced).

    Returns:
        Its budgets.

    Example:
        >>> conn = Budgets()  # any object
        >>> budgets_of(conn) is budgets_of(conn), budgets_of(conn) is budgets_of(Budgets())
        (True, False)
    """
    with _REGISTRY_LOCK:
        return _REGISTRY.setdefault(owner, Budgets())
