"""Every exception the toolkit raises, in one small tree.

::

    ToolkitError
     ├── ConfigError(ToolkitError, ValueError)        bad or missing settings / arguments
     ├── ValidationError(ToolkitError, ValueError)    a frame failed its schema (.failure_cases)
     │    ├── reconciliation.MissingColumnError       a reconcile input lacks a column
     │    └── reconciliation.DuplicateKeyError        a reconcile key repeats
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

from typing import Any

import pandas as pd

__all__ = [
    "ApiError",
    "AuthError",
    "ConcurrentWriteError",
    "ConfigError",
    "ConflictError",
    "FlattenError",
    "Interrupted",
    "JournalInUseError",
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


class TransportError(ToolkitError, ConnectionError):
    """The request got no HTTP answer (connection refused, reset, timed out).

    Attributes:
        method: HTTP method of the request.
        url: URL of the request (no credentials are ever in a URL).
        failure: ``unreachable``, ``invalid_url`` or ``lost`` (see :mod:`toolkit.http`).
    """

    def __init__(self, message: str, *, method: str = "", url: str = "", failure: str = "") -> None:
        super().__init__(message)
        self.method = method
        self.url = url
        self.failure = failure


class JournalInUseError(ToolkitError, RuntimeError):
    """Another run holds the journal's lock; the message names its process."""


class Interrupted(KeyboardInterrupt):
    """A bulk run was stopped (Ctrl+C, Jupyter's stop, SIGTERM) before it ended.

    No request leaves after the interrupt; requests in flight either finished or are reported
    ``unknown``; the journal is flushed.

    Attributes:
        result: the partial result frame: a row per input row, the rows never sent with status
            ``not_sent`` (``None`` while the runner builds it).
        replies: the runner's replies, one per call (for the operation building ``result``).

    Example:
        >>> exc = Interrupted("stopped")
        >>> isinstance(exc, KeyboardInterrupt), isinstance(exc, Exception)
        (True, False)
    """

    def __init__(self, message: str, *, result: Any = None, replies: Any = None) -> None:
        super().__init__(message)
        self.result = result
        self.replies = replies


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
            if isinstance(p.get(key), str) and p[key]:
                return p[key]
        return "no detail given"


class AuthError(ApiError):
    """401 or 403, or the token exchange was refused."""


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
