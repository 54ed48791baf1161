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

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

__version__ = "0.1.0"

#: module -> the public names it defines: the one list of the package's public names
_MODULES: dict[str, str] = {
    "toolkit._client": "Client",
    "toolkit.notebook": "connect",
    "toolkit._core.settings": "Settings",
    "toolkit._core.connection": "Connection",
    "toolkit._ingress.validation": "validate load_folder ValidationReport",
    "toolkit._ingress.plan": "Plan",
    "toolkit._ingress.imports": "OnboardReport",
    "toolkit._ingress.codesets": "codesets",
    "toolkit._egress.export": "Export",
    "toolkit._egress.sync": "read_sync",
    "toolkit._egress.sync_report": "SyncReport",
    "toolkit._reconciliation.api": "reconcile",
    "toolkit._reconciliation.ledes": "read_ledes",
    "toolkit._reconciliation.result": "Reconciliation",
    "toolkit.schemas": "schemas",
    "toolkit.errors": "errors ToolkitError ConfigError ValidationError ApiError AuthError "
    "NotFoundError ConflictError RateLimitError ServerError TransportError PaginationError "
    "FlattenError Interrupted ConcurrentWriteError JournalInUseError",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [*_EXPORTS, "__version__"]

if _TYPE_CHECKING:
    from toolkit import errors as errors
    from toolkit import schemas as schemas
    from toolkit._client import Client as Client
    from toolkit._core.connection import Connection as Connection
    from toolkit._core.settings import Settings as Settings
    from toolkit._egress.export import Export as Export
    from toolkit._egress.sync import read_sync as read_sync
    from toolkit._egress.sync_report import SyncReport as SyncReport
    from toolkit._ingress import codesets as codesets
    from toolkit._ingress.imports import OnboardReport as OnboardReport
    from toolkit._ingress.plan import Plan as Plan
    from toolkit._ingress.validation import ValidationReport as ValidationReport
    from toolkit._ingress.validation import load_folder as load_folder
    from toolkit._ingress.validation import validate as validate
    from toolkit._reconciliation.api import reconcile as reconcile
    from toolkit._reconciliation.ledes import read_ledes as read_ledes
    from toolkit._reconciliation.result import Reconciliation as Reconciliation
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
    from toolkit.notebook import connect as connect


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
