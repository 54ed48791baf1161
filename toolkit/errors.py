"""Every exception the toolkit raises, in one small tree.

::

    ToolkitError
     ├── ConfigError(ToolkitError, ValueError)        bad or missing settings / arguments
     ├── ValidationError(ToolkitError, ValueError)    a frame failed its schema (.failure_cases)
     │    ├── MissingColumnError                      a reconcile input lacks a column
     │    └── DuplicateKeyError                       a reconcile key repeats
     ├── FlattenError(ToolkitError, ValueError)       JSON not in the export / detailed form
     ├── PaginationError(ToolkitError, RuntimeError)  a cursor repeated or pages never ended
     ├── JournalInUseError(ToolkitError, RuntimeError) another run holds the journal's lock
     ├── TransportError(ToolkitError, ConnectionError) no HTTP answer (connection, timeout)
     ├── ConcurrentWriteError(ToolkitError, RuntimeError) a concurrent commit won (two syncs)
     └── ApiError(ToolkitError)                       the service answered with an error status
          ├── AuthError                               401 / 403, or the token exchange failed
          ├── NotFoundError(ApiError, LookupError)    404
          ├── ConflictError                           409
          ├── RateLimitError                          429
          └── ServerError                             5xx
    InputWarning(UserWarning)                         an input read, but not quite as given
    Interrupted(KeyboardInterrupt)                    a bulk run was stopped (.result)

:class:`Interrupted` is not an ``Exception``: an ``except Exception`` must not swallow Ctrl+C.
No error carries the token or the client secret.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

import pandas as pd

from toolkit._core.failures import failure_frame
from toolkit._core.http import Failure, Reply

__all__ = [
    "CREDENTIAL_ERRORS",
    "ApiError",
    "AuthError",
    "ConcurrentWriteError",
    "ConfigError",
    "ConflictError",
    "DuplicateKeyError",
    "FlattenError",
    "InputWarning",
    "Interrupted",
    "JournalInUseError",
    "MissingColumnError",
    "NotFoundError",
    "PaginationError",
    "RateLimitError",
    "ServerError",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "api_error_for",
    "closest",
]


class ToolkitError(Exception):
    """Base class of every exception raised by the toolkit."""


class ConfigError(ToolkitError, ValueError):
    """A setting or argument is missing or malformed (credentials, URLs, dates)."""


class FlattenError(ToolkitError, ValueError):
    """The JSON does not have the shape of the export or detailed form (names the field)."""


class PaginationError(ToolkitError, RuntimeError):
    """Paging did not end: a cursor repeated or the page bound was passed."""


class ConcurrentWriteError(ToolkitError, RuntimeError):
    """Another writer committed to the same Delta table meanwhile (e.g. two syncs at once)."""


class ValidationError(ToolkitError, ValueError):
    """One or more frames failed validation; ``failure_cases`` is the failure frame
    (:mod:`toolkit._core.failures`), one row per failure."""

    def __init__(self, message: str, failure_cases: pd.DataFrame) -> None:
        super().__init__(message)
        self.failure_cases = failure_cases


def _norm(name: object) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def closest(name: object, candidates: Collection[str], cutoff: float = 0.5) -> str | None:
    """The candidate closest to ``name``: equal ignoring case and separators, else difflib's.

    Example:
        >>> closest("entryId", ["entry_id", "hours"]), closest("zzz", ["hours"])
        ('entry_id', None)
    """
    by_norm = {_norm(c): c for c in candidates}  # an equal one is difflib's closest (ratio 1)
    match = difflib.get_close_matches(_norm(name), list(by_norm), n=1, cutoff=cutoff)
    return by_norm[match[0]] if match else None


class MissingColumnError(ValidationError):
    """A frame passed to :func:`reconcile` lacks a column: its ``table``, the ``missing``
    columns and ``suggestions`` (the closest column of each, or None).

    Example:
        >>> err = MissingColumnError("billing", ["duration"], ["durationHours", "matter"])
        >>> err.suggestions, isinstance(err, ValueError)
        ({'duration': 'durationHours'}, True)
    """

    def __init__(self, table: str, missing: Sequence[str], available: Iterable[object]) -> None:
        names = [str(c) for c in available]
        self.table, self.missing = table, list(missing)
        self.suggestions = {m: closest(m, names) for m in self.missing}
        said = [f"missing column {m!r}" for m in self.missing]
        near = [self.suggestions[m] for m in self.missing]
        cases = failure_frame(
            table=table, column=self.missing, check="column_present", value=near, message=said
        )
        parts = ", ".join(
            f"{m!r}" + (f" (closest: {c!r})" if c else "") for m, c in self.suggestions.items()
        )
        super().__init__(f"{table} frame has no column {parts}; it has {names[:20]!r}", cases)


class DuplicateKeyError(ValidationError):
    """A join key occurs more than once in one of the frames: its ``table``, ``column`` and
    every duplicated key value (``keys``, in first-seen order).

    Example:
        >>> DuplicateKeyError("billing", "entryId", ["e1"], pd.Series(["e1", "e1"])).keys
        ['e1']
    """

    def __init__(self, table: str, column: str, keys: Sequence[object], rows: pd.Series) -> None:
        self.table, self.column, self.keys = table, column, list(keys)
        shown = ", ".join(repr(k) for k in self.keys[:10])
        more = f" and {len(self.keys) - 10} more" if len(self.keys) > 10 else ""
        message = (
            f"{table} frame has {len(self.keys)} duplicated key(s) in column {column!r}: "
            f"{shown}{more}. Reconcile pairs one entry with one billing record: aggregate or "
            f"drop the repeated records first (for example "
            f"frame.drop_duplicates({column!r}) or frame.groupby({column!r}).agg(...))."
        )
        v, said, at = rows.tolist(), [f"duplicated key {v!r}" for v in rows], list(rows.index)
        cases = failure_frame(
            table=table, row=at, externalId=v, column=column, check="unique", value=v, message=said
        )
        super().__init__(message, cases)


class InputWarning(UserWarning):
    """An input was read, but not quite as given (an encoding guessed, a file passed over)."""


class TransportError(ToolkitError, ConnectionError):
    """The request got no HTTP answer (connection refused, reset, timed out): its ``method``,
    ``url`` and ``failure`` (``unreachable``, ``invalid_url``, ``lost`` or ``""``)."""

    def __init__(
        self, message: str, *, method: str = "", url: str = "", failure: Failure | Literal[""] = ""
    ) -> None:
        super().__init__(message)
        self.method, self.url, self.failure = method, url, failure


class JournalInUseError(ToolkitError, RuntimeError):
    """Another run holds the journal's lock; the message names its process."""


class Interrupted(KeyboardInterrupt):
    """A bulk run was stopped (Ctrl+C, SIGTERM): ``result`` (a row per input row, unsent ones
    ``not_sent``), ``replies``, onboarding's ``report`` so far and an inner step's ``partial``.

    Example:
        >>> exc = Interrupted("stopped")
        >>> isinstance(exc, KeyboardInterrupt), isinstance(exc, Exception), exc.partial
        (True, False, {})
    """

    result: pd.DataFrame | None
    replies: list[Reply]
    report: Any  # an OnboardReport (toolkit._ingress sits above this layer)
    partial: dict[Any, Any]

    def __init__(
        self, message: str, *, result: pd.DataFrame | None = None, replies: Sequence[Reply] = ()
    ) -> None:
        super().__init__(message)
        self.result, self.replies, self.report, self.partial = result, list(replies), None, {}


class ApiError(ToolkitError):
    """The service answered with an error: its ``status``, ``problem`` (the parsed error body
    or ``None``), ``method`` and ``url``.

    Example:
        >>> str(ApiError(401, {"error": "invalid_client", "error_description": "x"}, "POST", "/"))
        'POST / -> 401 invalid_client: x'
    """

    def __init__(
        self, status: int, problem: dict[str, Any] | None, method: str = "", url: str = ""
    ) -> None:
        self.status, self.problem, self.method, self.url = status, problem, method, url
        code = (problem or {}).get("error")
        code = f" {code}" if isinstance(code, str) and code and code != self.detail else ""
        super().__init__(f"{method} {url} -> {status}{code}: {self.detail}")

    @property
    def detail(self) -> str:
        """The most specific human-readable text of the error body."""
        p = self.problem or {}
        keys = ("detail", "error_description", "title", "error", "message")
        return next((p[k] for k in keys if isinstance(p.get(k), str) and p[k]), "no detail given")


#: The OAuth 2.0 error codes (RFC 6749 section 5.2) that say the credentials are wrong.
CREDENTIAL_ERRORS = ("invalid_client", "unauthorized_client")


class AuthError(ApiError):
    """401 or 403, or the token exchange was refused."""

    @property
    def refuses_credentials(self) -> bool:
        """Whether the answer says the client id or secret is wrong: an OAuth error of
        :data:`CREDENTIAL_ERRORS`, or a 400 or 401 naming no OAuth error at all.

        Example:
            >>> [AuthError(*a).refuses_credentials for a in [(401, None), (400, {"error": "x"})]]
            [True, False]
        """
        code = (self.problem or {}).get("error")
        if isinstance(code, str) and code:
            return code in CREDENTIAL_ERRORS
        return self.status in (400, 401)


class NotFoundError(ApiError, LookupError):
    """404: the addressed resource does not exist."""


class ConflictError(ApiError):
    """409: the request conflicts with the resource's state."""


class RateLimitError(ApiError):
    """429: too many requests."""


class ServerError(ApiError):
    """5xx: the service failed."""


def api_error_for(
    status: int, problem: dict[str, Any] | None, method: str = "", url: str = ""
) -> ApiError:
    """Build the most specific :class:`ApiError` subclass for a status code.

    Returns:
        An instance of the matching subclass.

    Example:
        >>> type(api_error_for(409, None)).__name__
        'ConflictError'
    """
    kinds: dict[int, type[ApiError]] = {401: AuthError, 403: AuthError, 404: NotFoundError}
    kinds.update({409: ConflictError, 429: RateLimitError})
    kind = kinds.get(status, ServerError if status >= 500 else ApiError)
    return kind(status, problem, method, url)
