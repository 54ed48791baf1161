"""Move pandas DataFrames through the time-billing connector interface.

Imports are validated against pandera schemas of the spec's field tables before anything is
posted; exports become flat, typed tables; starred lists become frames; exports are reconciled
against billing records. ``toolkit.sandbox`` runs the whole interface locally.

>>> import toolkit
>>> env_file = sb.write_env(tmp / ".env")  # what ``toolkit sandbox`` writes
>>> with toolkit.Client.from_env(env_file) as client:
...     report = client.onboard("sample_data", progress=False)
>>> report.ok
True

Names are loaded on first use, so ``import toolkit.sandbox`` stays light.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Client": "toolkit.client",
    "Connection": "toolkit.core.connection",
    "Settings": "toolkit.core.settings",
    "Export": "toolkit.egress.export",
    "OnboardReport": "toolkit.ingress.imports",
    "Reconciliation": "toolkit.reconciliation.result",
    "ValidationReport": "toolkit.ingress.validation",
    "acknowledge": "toolkit.egress.acknowledgements",
    "connect": "toolkit.notebook",
    "errors": "toolkit.errors",
    "flatten_export": "toolkit.egress.flatten",
    "flatten_pending": "toolkit.egress.flatten",
    "load_folder": "toolkit.ingress.validation",
    "reconcile": "toolkit.reconciliation.api",
    "read_sync": "toolkit.egress.sync",
    "SyncReport": "toolkit.egress.sync",
    "schemas": "toolkit.schemas",
    "validate": "toolkit.ingress.validation",
    "ApiError": "toolkit.errors",
    "AuthError": "toolkit.errors",
    "ConcurrentWriteError": "toolkit.errors",
    "ConfigError": "toolkit.errors",
    "ConflictError": "toolkit.errors",
    "FlattenError": "toolkit.errors",
    "Interrupted": "toolkit.errors",
    "JournalInUseError": "toolkit.errors",
    "NotFoundError": "toolkit.errors",
    "PaginationError": "toolkit.errors",
    "RateLimitError": "toolkit.errors",
    "ServerError": "toolkit.errors",
    "ToolkitError": "toolkit.errors",
    "TransportError": "toolkit.errors",
    "ValidationError": "toolkit.errors",
}

__all__ = [
    "ApiError",
    "AuthError",
    "Client",
    "ConcurrentWriteError",
    "ConfigError",
    "Connection",
    "ConflictError",
    "Export",
    "FlattenError",
    "Interrupted",
    "JournalInUseError",
    "NotFoundError",
    "OnboardReport",
    "PaginationError",
    "RateLimitError",
    "Reconciliation",
    "ServerError",
    "Settings",
    "SyncReport",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "ValidationReport",
    "__version__",
    "acknowledge",
    "connect",
    "errors",
    "flatten_export",
    "flatten_pending",
    "load_folder",
    "read_sync",
    "reconcile",
    "schemas",
    "validate",
]

if _TYPE_CHECKING:
    from toolkit import errors, schemas
    from toolkit.client import Client
    from toolkit.core.connection import Connection
    from toolkit.core.settings import Settings
    from toolkit.egress.acknowledgements import acknowledge
    from toolkit.egress.export import Export
    from toolkit.egress.flatten import flatten_export, flatten_pending
    from toolkit.egress.sync import SyncReport, read_sync
    from toolkit.errors import (
        ApiError,
        AuthError,
        ConcurrentWriteError,
        ConfigError,
        ConflictError,
        FlattenError,
        Interrupted,
        JournalInUseError,
        NotFoundError,
        PaginationError,
        RateLimitError,
        ServerError,
        ToolkitError,
        TransportError,
        ValidationError,
    )
    from toolkit.ingress.imports import OnboardReport
    from toolkit.ingress.validation import ValidationReport, load_folder, validate
    from toolkit.notebook import connect
    from toolkit.reconciliation.api import reconcile
    from toolkit.reconciliation.result import Reconciliation


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    mod = _import_module(module)
    value = mod if module.rsplit(".", 1)[-1] == name else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
