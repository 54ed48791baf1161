"""Benchmarks of the toolkit: ``python -m bench [--only NAME]``.

Every ``bench/bench_<name>.py`` module is a benchmark. It exposes ``run(args) -> dict``
(print its own table, return its figures) and may expose ``add_arguments(parser)`` to add
options, prefixed with its name (``--flatten-entries``). :mod:`bench.__main__` finds the
modules, runs them in name order and prints a summary.

>>> from bench import discover
>>> "flatten" in discover()
True
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["discover"]


def discover() -> dict[str, ModuleType]:
    """Import every ``bench/bench_*.py`` module that has a ``run`` function.

    Returns:
        ``{name: module}`` in name order, ``name`` being the file name without ``bench_``.

    >>> {"flatten", "sync", "pacing"} <= set(discover())
    True
    """
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if callable(getattr(module, "run", None)):
            found[info.name.removeprefix("bench_")] = module
    return found
