"""Move pandas DataFrames through the time-billing connector interface.

The public face is the names below (:data:`_EXPORTS`) and the modules ``toolkit.errors``,
``schemas``, ``notebook``, ``testing``, ``sandbox``, ``firms`` and ``dagster``; names load on
first use, so ``import toolkit.sandbox`` stays light.

>>> import toolkit
>>> env_file = sb.write_env(tmp / ".env")  # what ``toolkit sandbox`` writes
>>> with toolkit.Client.from_env(env_file) as client:
...     report = client.onboard("sample_data", progress=False)
>>> report.ok
True
"""

from __future__ import annotations

import warnings as _warnings
from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

__version__ = "0.1.0"

#: module -> the public names it defines: the one list of the package's public names
_MODULES: dict[str, str] = {
    "toolkit.client": "Client",
    "toolkit.notebook": "connect",
    "toolkit.core.settings": "Settings",
    "toolkit.core.connection": "Connection",
    "toolkit.ingress.validation": "validate load_folder ValidationReport",
    "toolkit.ingress.plan": "Plan",
    "toolkit.ingress.imports": "OnboardReport",
    "toolkit.egress.export": "Export",
    "toolkit.egress.sync": "SyncReport read_sync",
    "toolkit.reconciliation.api": "reconcile",
    "toolkit.reconciliation.result": "Reconciliation",
    "toolkit.schemas": "schemas",
    "toolkit.errors": "errors ToolkitError ConfigError ValidationError ApiError AuthError "
    "NotFoundError ConflictError RateLimitError ServerError TransportError PaginationError "
    "FlattenError Interrupted ConcurrentWriteError JournalInUseError",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

#: names kept one release: name -> (module, the one way that replaces it); using one warns
_DEPRECATED: dict[str, tuple[str, str]] = {
    "acknowledge": ("toolkit.egress.acknowledgements", "client.acknowledge(acks)"),
    "flatten_export": ("toolkit.egress.flatten", "toolkit.Export.from_records(records)"),
    "flatten_pending": (
        "toolkit.egress.flatten",
        'toolkit.Export.from_records(records, kind="pending")',
    ),
}

__all__ = [*_EXPORTS, "__version__"]

if _TYPE_CHECKING:
    from toolkit import errors as errors
    from toolkit import schemas as schemas
    from toolkit.client import Client as Client
    from toolkit.core.connection import Connection as Connection
    from toolkit.core.settings import Settings as Settings
    from toolkit.egress.acknowledgements import acknowledge as acknowledge
    from toolkit.egress.export import Export as Export
    from toolkit.egress.flatten import flatten_export as flatten_export
    from toolkit.egress.flatten import flatten_pending as flatten_pending
    from toolkit.egress.sync import SyncReport as SyncReport
    from toolkit.egress.sync import read_sync as read_sync
    from toolkit.errors import ApiError as ApiError
    from toolkit.errors import AuthError as AuthError
    from toolkit.errors import ConcurrentWriteError as ConcurrentWriteError
    from toolkit.errors import ConfigError as ConfigError
    from toolkit.errors import ConflictError as ConflictError
    from toolkit.errors import FlattenError as FlattenError
    from toolkit.errors import Interrupted as Interrupted
    from toolkit.errors import JournalInUseError as JournalInUseError
    from toolkit.errors import NotFoundError as NotFoundError
    from toolkit.errors import PaginationError as PaginationError
    from toolkit.errors import RateLimitError as RateLimitError
    from toolkit.errors import ServerError as ServerError
    from toolkit.errors import ToolkitError as ToolkitError
    from toolkit.errors import TransportError as TransportError
    from toolkit.errors import ValidationError as ValidationError
    from toolkit.ingress.imports import OnboardReport as OnboardReport
    from toolkit.ingress.plan import Plan as Plan
    from toolkit.ingress.validation import ValidationReport as ValidationReport
    from toolkit.ingress.validation import load_folder as load_folder
    from toolkit.ingress.validation import validate as validate
    from toolkit.notebook import connect as connect
    from toolkit.reconciliation.api import reconcile as reconcile
    from toolkit.reconciliation.result import Reconciliation as Reconciliation


def __getattr__(name: str) -> object:
    if name in _DEPRECATED:
        source, way = _DEPRECATED[name]
        message = f"toolkit.{name} is deprecated and goes in the next release; use {way}"
        _warnings.warn(message, DeprecationWarning, stacklevel=2)
        return getattr(_import_module(source), name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    mod = _import_module(module)
    value = mod if module.rsplit(".", 1)[-1] == name else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
