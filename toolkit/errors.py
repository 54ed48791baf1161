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

    UserWarning
     └── InputWarning                                 an input read, but not quite as given

    KeyboardInterrupt
     └── Interrupted                                  a bulk run was stopped (.result)

:class:`Interrupted` is deliberately not a :class:`ToolkitError` (not an ``Exception``): an
``except Exception`` must not swallow Ctrl+C.

An :class:`ApiError` carries the HTTP ``status``, the parsed ``problem`` body (RFC 9457 or
RFC 6749 error JSON when the service sent one), and the ``method`` and ``url`` of the request.
It never carries the token or the client secret: request headers and the token request body are
not kept.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import pandas as pd

from toolkit.core.failures import FAILURE_COLUMNS
from toolkit.core.http import Failure, Reply

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
    """One or more frames failed validation.

    Attributes:
        failure_cases: one row per failure, with columns ``table``, ``row``, ``externalId``,
            ``column``, ``check``, ``value`` and ``message``.

    Example:
        >>> import pandas as pd
        >>> err = ValidationError("1 failure", pd.DataFrame({"table": ["clients"]}))
        >>> len(err.failure_cases)
        1
    """

    def __init__(self, message: str, failure_cases: pd.DataFrame) -> None:
        super().__init__(message)
        self.failure_cases = failure_cases


def _closest(name: str, names: Sequence[str]) -> str | None:
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


class MissingColumnError(ValidationError):
    """A frame passed to :func:`reconcile` lacks a column it needs.

    Attributes:
        table: ``"exported"`` or ``"billing"``.
        missing: the missing column names.
        suggestions: for each missing name, the closest existing column (or ``None``).
        failure_cases: one row per missing column (see :class:`toolkit.errors.ValidationError`).

    Example:
        >>> err = MissingColumnError("billing", ["duration"], ["durationHours", "matter"])
        >>> err.suggestions
        {'duration': 'durationHours'}
        >>> isinstance(err, ValueError)
        True
    """

    def __init__(self, table: str, missing: Sequence[str], available: Iterable[object]) -> None:
        names = [str(c) for c in available]
        self.table = table
        self.missing = list(missing)
        self.suggestions = {m: _closest(m, names) for m in self.missing}
        parts = []
        for name, near in self.suggestions.items():
            hint = f" (closest: {near!r})" if near is not None else ""
            parts.append(f"{name!r}{hint}")
        message = f"{table} frame has no column {', '.join(parts)}; it has {names[:20]!r}"
        cases = pd.DataFrame(
            {
                "table": table,
                "row": None,
                "externalId": None,
                "column": self.missing,
                "check": "column_present",
                "value": [self.suggestions[m] for m in self.missing],
                "message": [f"missing column {m!r}" for m in self.missing],
            },
            columns=list(FAILURE_COLUMNS),
        )
        super().__init__(message, cases)


class DuplicateKeyError(ValidationError):
    """A join key occurs more than once in one of the frames.

    Reconciliation is one entry to one billing record; aggregate split billing records (or drop
    repeated ones) before reconciling.

    Attributes:
        table: ``"exported"`` or ``"billing"``.
        column: the key column.
        keys: every duplicated key value, in first-seen order.
        failure_cases: one row per record that shares a key.

    Example:
        >>> err = DuplicateKeyError("billing", "entryId", ["e1"], pd.Series([0, 1]))
        >>> err.keys
        ['e1']
    """

    def __init__(self, table: str, column: str, keys: Sequence[object], rows: pd.Series) -> None:
        self.table = table
        self.column = column
        self.keys = list(keys)
        shown = ", ".join(repr(k) for k in self.keys[:10])
        more = f" and {len(self.keys) - 10} more" if len(self.keys) > 10 else ""
        message = (
            f"{table} frame has {len(self.keys)} duplicated key(s) in column {column!r}: "
            f"{shown}{more}. Reconcile pairs one entry with one billing record: aggregate or "
            f"drop the repeated records first (for example "
            f"frame.drop_duplicates({column!r}) or frame.groupby({column!r}).agg(...))."
        )
        values = rows.tolist()
        cases = pd.DataFrame(
            {
                "table": table,
                "row": rows.index.tolist(),
                "externalId": values,
                "column": column,
                "check": "unique",
                "value": values,
                "message": [f"duplicated key {v!r}" for v in values],
            },
            columns=list(FAILURE_COLUMNS),
        )
        super().__init__(message, cases)


class InputWarning(UserWarning):
    """An input was read, but not quite as given or as it looks (an encoding guessed, a file
    passed over, two ids that look alike).

    Example:
        >>> issubclass(InputWarning, UserWarning)
        True
    """


class TransportError(ToolkitError, ConnectionError):
    """The request got no HTTP answer (connection refused, reset, timed out).

    Attributes:
        method: HTTP method of the request.
        url: URL of the request (no credentials are ever in a URL).
        failure: ``unreachable``, ``invalid_url`` or ``lost`` (see :mod:`toolkit.core.http`),
            or ``""`` when not known.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str = "",
        url: str = "",
        failure: Failure | Literal[""] = "",
    ) -> None:
        super().__init__(message)
        self.method = method
        self.url = url
        self.failure = failure


class JournalInUseError(ToolkitError, RuntimeError):
    """Another run holds the journal's lock; the message names its process."""


class Interrupted(KeyboardInterrupt):
    """A bulk run was stopped (Ctrl+C, Jupyter's stop, SIGTERM) before it ended.

    No request leaves after the interrupt; requests in flight either finished or are reported
    ``unknown``; the journal is flushed. The bulk runner raises it with ``replies``; each
    operation catches it on its way up, fills in what it knows and raises it again.

    Attributes:
        result: the partial result frame: a row per input row, the rows never sent with status
            ``not_sent`` (``None`` while the runner builds it).
        replies: the runner's replies, one per call (for the operation building ``result``).
        report: onboarding's report so far (an ``OnboardReport``), or ``None`` for the other
            operations.
        partial: what an inner step had collected when it was stopped, for the step that
            called it (starring: its rows per pair so far); empty when there is none.

    Example:
        >>> exc = Interrupted("stopped")
        >>> isinstance(exc, KeyboardInterrupt), isinstance(exc, Exception)
        (True, False)
        >>> exc.result is None, exc.replies, exc.report is None, exc.partial
        (True, [], True, {})
    """

    result: pd.DataFrame | None
    replies: list[Reply]
    #: Any: the report's class (in ``toolkit.ingress``) sits above this module's layer
    report: Any
    partial: dict[Any, Any]

    def __init__(
        self,
        message: str,
        *,
        result: pd.DataFrame | None = None,
        replies: Sequence[Reply] = (),
    ) -> None:
        super().__init__(message)
        self.result = result
        self.replies = list(replies)
        self.report = None
        self.partial = {}


class ApiError(ToolkitError):
    """The service answered with an error status.

    Attributes:
        status: the HTTP status code.
        problem: the parsed error body (a dict) or ``None``.
        method: HTTP method of the request.
        url: URL of the request.

    Example:
        >>> err = ApiError(404, {"title": "Not Found", "detail": "no such entry"}, "GET", "/x")
        >>> str(err)
        'GET /x -> 404: no such entry'
        >>> problem = {"error": "invalid_client", "error_description": "bad secret"}
        >>> str(ApiError(401, problem, "POST", "/token"))
        'POST /token -> 401 invalid_client: bad secret'
    """

    def __init__(
        self, status: int, problem: dict[str, Any] | None, method: str = "", url: str = ""
    ) -> None:
        self.status = status
        self.problem = problem
        self.method = method
        self.url = url
        code = (problem or {}).get("error")
        code = f" {code}" if isinstance(code, str) and code and code != self.detail else ""
        super().__init__(f"{method} {url} -> {status}{code}: {self.detail}")

    @property
    def detail(self) -> str:
        """The most specific human-readable text of the error body."""
        p = self.problem or {}
        for key in ("detail", "error_description", "title", "error", "message"):
            text = p.get(key)
            if isinstance(text, str) and text:
                return text
        return "no detail given"


#: The OAuth 2.0 error codes (RFC 6749 section 5.2) that say the credentials are wrong.
CREDENTIAL_ERRORS = ("invalid_client", "unauthorized_client")


class AuthError(ApiError):
    """401 or 403, or the token exchange was refused."""

    @property
    def refuses_credentials(self) -> bool:
        """Whether the answer says the application's client id or secret is wrong.

        Only the OAuth 2.0 errors ``invalid_client`` and ``unauthorized_client`` say so, or a
        400 or 401 naming no OAuth error at all; ``invalid_request`` (a wrong audience, a
        malformed request) does not, nor does any 429 or 5xx (not an ``AuthError``).

        Example:
            >>> AuthError(401, {"error": "invalid_client"}).refuses_credentials
            True
            >>> AuthError(400, {"error": "invalid_request"}).refuses_credentials
            False
            >>> AuthError(401, None).refuses_credentials
            True
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

    Args:
        status: HTTP status code.
        problem: parsed error body, if any.
        method: HTTP method.
        url: request URL.

    Returns:
        An instance of the matching subclass.

    Example:
        >>> type(api_error_for(409, None)).__name__
        'ConflictError'
    """
    if status in (401, 403):
        cls: type[ApiError] = AuthError
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = ConflictError
    elif status == 429:
        cls = RateLimitError
    elif status >= 500:
        cls = ServerError
    else:
        cls = ApiError
    return cls(status, problem, method, url)
