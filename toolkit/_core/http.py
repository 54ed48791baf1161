"""The HTTP layer: pooled sessions per thread, timeouts, retries of what is safe to repeat;
every answer a :class:`Reply` (nothing raises)."""

from __future__ import annotations

import email.utils
import logging
import os
import random
import re
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.client import responses
from typing import Any, Final, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

import orjson
import requests
from requests import exceptions as req
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_environ_proxies
from urllib3 import exceptions as url3
from urllib3.util.retry import Retry

log = logging.getLogger("toolkit._core.http")

RETRY_STATUSES = (429, 500, 502, 503, 504)

#: longest reason kept from an error body (a body may list thousands of field errors)
_MAX_REASON = 2000

#: What :attr:`Reply.failure` may say: never left; a bad URL; answer lost; never sent by the bulk
#: runner; a conflict on a retry showing that a lost first attempt had been applied.
Failure = Literal["unreachable", "invalid_url", "lost", "not_sent", "landed"]
UNREACHABLE: Final = "unreachable"
INVALID_URL: Final = "invalid_url"
LOST: Final = "lost"
NOT_SENT: Final = "not_sent"
LANDED: Final = "landed"


@dataclass
class Reply:
    """What one request came back with, after its retries (``status`` ``None``: no answer,
    ``failure`` says why; ``lost``: an earlier attempt's answer was lost, set by the bulk runner).
    """

    status: int | None
    body: Any = None
    error: str | None = None
    attempts: int = 1
    elapsed: float = 0.0
    method: str = ""
    url: str = ""
    failure: Failure | None = None
    retry_after: float | None = None
    lost: bool = False
    headers: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        """True for a 2xx status, or a conflict that proves an earlier attempt landed."""
        return self.failure == LANDED or (self.status is not None and 200 <= self.status < 300)


#: a path that is already percent-encoded (RFC 3986 ``pchar``s and ``/``)
_ENCODED_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")


def _request(session: requests.Session, method: str, url: str, **kwargs: Any) -> requests.Response:
    """``session.request``, sending an already percent-encoded path as given (``%2E`` kept)."""
    timeout = kwargs.pop("timeout", None)
    proxies = kwargs.pop("proxies", None) or {}
    prep = session.prepare_request(requests.Request(method, url, **kwargs))
    # a prepared request of a str URL has a str URL (``requests`` types it ``str | None``)
    prepared_url = str(prep.url)
    ours, theirs = urlsplit(url).path, urlsplit(prepared_url)
    if (
        ours != theirs.path
        and _ENCODED_PATH.fullmatch(ours)
        and unquote(ours) == unquote(theirs.path)
    ):
        prep.url = prepared_url = urlunsplit(theirs._replace(path=ours))
    settings = session.merge_environment_settings(prepared_url, proxies, None, None, None)
    return session.send(prep, timeout=timeout, allow_redirects=True, **settings)


def _failure(exc: BaseException) -> tuple[Literal["invalid_url", "unreachable", "lost"], str]:
    """What a ``requests`` exception means for the request (never sent, bad URL, or lost), and a
    short reason without the URL (the caller names the host and the setting).

    >>> _failure(req.MissingSchema("no scheme")), _failure(req.ReadTimeout("read timed out"))[0]
    (('invalid_url', 'malformed URL'), 'lost')
    """
    if isinstance(exc, req.InvalidURL | req.MissingSchema | req.InvalidSchema | req.URLRequired):
        return INVALID_URL, "malformed URL"
    failure: Literal["unreachable", "lost"] = LOST
    if isinstance(exc, req.SSLError | req.ConnectTimeout | req.ProxyError):
        failure = UNREACHABLE
    elif isinstance(exc, req.ConnectionError) and not isinstance(exc, req.ReadTimeout):
        reason = exc.args[0] if exc.args else None
        reason = getattr(reason, "reason", reason)
        never_left = url3.NewConnectionError | url3.ConnectTimeoutError | url3.SSLError
        if isinstance(reason, never_left | url3.ProxyError):
            failure = UNREACHABLE  # refused, name not resolved, TLS, proxy
    text = str(exc.args[0] if exc.args else exc)
    unresolved = ("Name or service not known", "NameResolutionError", "nodename nor servname")
    if any(needle in text for needle in (*unresolved, "Temporary failure in name resolution")):
        return failure, "name not resolved"
    if "Connection refused" in text:
        return failure, "connection refused"
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return failure, "TLS certificate not trusted"
    if isinstance(exc, req.SSLError):
        return failure, "TLS failure"
    if isinstance(exc, req.ConnectTimeout):
        return failure, "connect timeout"
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if isinstance(exc, req.ReadTimeout) or isinstance(reason, url3.ReadTimeoutError):
        return failure, "read timeout: the request was sent, its answer did not come"
    if failure == LOST:
        return failure, f"connection lost after sending ({type(exc).__name__})"
    return failure, type(exc).__name__


def _retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: a number of seconds, or an HTTP date.

    >>> _retry_after("2"), _retry_after("soon"), _retry_after("Thu, 01 Jan 1970 00:00:03 GMT", 1.0)
    (2.0, None, 2.0)
    """
    if not value:
        return None
    with suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    now = time.time() if now is None else now
    return None if when.tzinfo is None else max(0.0, when.timestamp() - now)  # a date is GMT


#: rate limit headers kept on a reply: draft-ietf-httpapi-ratelimit-headers, ``X-RateLimit-*``
_LIMIT_HEADERS = "ratelimit ratelimit-policy x-ratelimit-limit x-ratelimit-remaining".split()
_LIMIT_HEADERS += ["x-ratelimit-reset"]


def _limit_headers(headers: CaseInsensitiveDict[str]) -> dict[str, str] | None:
    """The rate limit headers of an answer (names in lower case), or ``None``."""
    return {name: str(headers[name]) for name in _LIMIT_HEADERS if name in headers} or None


#: keys of a JSON error body whose value is its reason, most specific first (NestJS puts the
#: status phrase in ``error``), and keys of an ``errors`` item naming its field
_REASON_KEYS = ("detail", "error_description", "message", "msg", "title", "error")
_FIELD_KEYS = ("field", "pointer", "property", "path", "loc")


def _reasons(value: Any) -> list[str]:
    """The reasons a JSON value holds: a string, a list of them, or objects holding them."""
    if isinstance(value, str):
        text = " ".join(value.split())
        return [text] if text else []
    if isinstance(value, list):
        return [reason for item in value for reason in _reasons(item)]
    if isinstance(value, dict):
        reason = next((r for key in _REASON_KEYS for r in _reasons(value.get(key))), None)
        if reason is None:
            return []
        where = next((value[k] for k in _FIELD_KEYS if value.get(k) not in (None, "", [])), None)
        if isinstance(where, list):
            where = ".".join(str(part) for part in where)
        if where is not None and str(where) not in reason:
            return [f"{where}: {reason}"]
        return [reason]
    return []


def error_text(body: Any, status: int | None, text: bytes = b"") -> str | None:
    """The reason of an error answer, whatever its body's shape (RFC 9457 problem, OAuth error,
    NestJS body, JSON string or list, plain text), else the status; ``None`` for a 2xx.

    >>> error_text({"statusCode": 400, "error": "Bad Request", "message": ["a", "b"]}, 400)
    'a; b'
    """
    if status is not None and 200 <= status < 300:
        return None
    if isinstance(body, dict):
        # the first key that says something: all it says
        reasons = next((found for key in _REASON_KEYS if (found := _reasons(body.get(key)))), [])
        items = body.get("errors")
        extra: list[str] = []
        for item in items if isinstance(items, list) else [items]:
            # an item the headline already says (often without its field) adds nothing
            bare = _reasons(
                {key: item.get(key) for key in _REASON_KEYS} if isinstance(item, dict) else item
            )
            if not (reasons and bare and all(b in "; ".join(reasons) for b in bare)):
                extra += _reasons(item)
        if reasons and extra:
            reasons = [f"{'; '.join(reasons)} ({'; '.join(extra)})"]
        reasons = reasons or extra
    else:
        reasons = _reasons(body)
    if reasons:
        return "; ".join(dict.fromkeys(reasons))[:_MAX_REASON]
    if status is None:
        return "no answer"
    plain = text.decode("utf-8", "replace").strip().splitlines() if text and body is None else []
    first = " ".join(plain[0].split())[:200] if plain else ""
    if first:
        return f"HTTP {status}: {first}"
    phrase = responses.get(status)  # the standard phrase of a status, if it has one
    return f"HTTP {status} {phrase}" if phrase else f"HTTP {status}"


def problem_of(reply: Reply) -> dict[str, Any] | None:
    """The error body of an answer as a problem (``{"detail": <text>}`` for plain text), or None.

    >>> problem_of(Reply(409, None, "HTTP 409: externalId 'C1' exists"))
    {'detail': "externalId 'C1' exists"}
    """
    if isinstance(reply.body, dict):
        return reply.body
    prefix = f"HTTP {reply.status}: "
    if reply.error and reply.error.startswith(prefix):
        return {"detail": reply.error.removeprefix(prefix)}
    return None


def _clear_locals(exc: BaseException) -> None:
    """Drop the locals of the finished frames of ``exc`` (and its causes) below the caller."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__traceback__ is not None:
            traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


@dataclass(eq=False, kw_only=True)
class Transport:
    """Pooled sessions with timeouts and retries: a request takes an idle session (a new one if
    none is idle) and gives it back, so the workers of one bulk run after another reuse the
    connections (one session per thread would open new ones for every run's new threads).

    >>> Transport(timeout=5, retries=2).retries
    2
    """

    timeout: float | tuple[float, float] = (5.0, 60.0)
    retries: int = 5
    backoff: float = 0.25
    backoff_max: float = 10.0
    jitter: float = 0.25
    pool_size: int = 4

    def __post_init__(self) -> None:
        self._sessions: list[requests.Session] = []  # every one made, for close()
        self._idle: dict[bool, list[requests.Session]] = {True: [], False: []}
        self._sessions_lock = threading.Lock()
        self._proxies: dict[str, dict[str, str]] = {}
        self._verify: str | bool = (
            os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        )

    def proxies(self, url: str) -> dict[str, str]:
        """Proxy settings for a URL from the environment, once per host (the sessions ignore the
        environment: a ``.netrc`` entry would replace the bearer header)."""
        key = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        if key not in self._proxies:
            self._proxies[key] = get_environ_proxies(key)
        return self._proxies[key]

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (1-based): capped backoff plus jitter.

        >>> 0.5 <= Transport(backoff=0.5, jitter=0).delay(1) <= 0.5
        True
        """
        jitter = random.uniform(0, self.jitter)
        return min(self.backoff_max, self.backoff * 2.0 ** (attempt - 1)) + jitter

    @contextmanager
    def session(self, retry: bool = True) -> Iterator[requests.Session]:
        """An idle session for one request (one with retries or one without), given back after.

        >>> t = Transport()
        >>> with t.session() as first:
        ...     pass
        >>> with t.session() as again, t.session() as other:
        ...     again is first, other is first
        (True, False)
        """
        with self._sessions_lock:
            sess = self._idle[retry].pop() if self._idle[retry] else None
        if sess is None:
            sess = self._new_session(retry)
            with self._sessions_lock:
                self._sessions.append(sess)
        try:
            yield sess
        finally:
            with self._sessions_lock:
                if any(made is sess for made in self._sessions):  # not closed meanwhile
                    self._idle[retry].append(sess)

    def _new_session(self, retry: bool) -> requests.Session:
        sess = requests.Session()
        sess.trust_env = False  # proxies and CA bundle are read once, in __init__/proxies()
        sess.verify = self._verify
        retries = Retry(  # allowed_methods=None: the caller decides what is safe to repeat
            total=self.retries if retry else 0,
            other=0,
            allowed_methods=None,
            status_forcelist=RETRY_STATUSES,
            backoff_factor=self.backoff,
            backoff_max=self.backoff_max,
            backoff_jitter=self.jitter,
            raise_on_status=False,
            raise_on_redirect=False,
        )
        adapter = HTTPAdapter(self.pool_size, self.pool_size, max_retries=retries)
        sess.mount("http://", adapter)
        sess.mount("https://", adapter)
        return sess

    def close(self) -> None:
        """Close every session; a later request opens a new one.

        >>> Transport().close()
        """
        with self._sessions_lock:
            sessions, self._sessions = self._sessions, []
            self._idle = {True: [], False: []}
        for sess in sessions:
            sess.close()

    def send(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        json: Any = None,
        auth: requests.auth.AuthBase | None = None,
        retry: bool = True,
        raw: bool = False,
    ) -> Reply:
        """Send one request (with its retries) and return a :class:`Reply`; never raises. The
        reply keeps the answer's ``Retry-After`` in seconds and its rate limit headers (names in
        lower case), or ``None``.

        >>> Transport(timeout=0.5, retries=0).send("GET", "http://127.0.0.1:9/").status is None
        True
        """
        start = time.perf_counter()
        data = None if json is None else orjson.dumps(json)
        hdrs = dict(headers or {}) | ({"Content-Type": "application/json"} if data else {})
        request: dict[str, Any] = {"headers": hdrs, "params": params, "data": data, "auth": auth}
        request |= {"timeout": self.timeout, "proxies": self.proxies(url)}
        try:
            with self.session(retry) as sess:
                resp = _request(sess, method, url, **request)
        except requests.RequestException as exc:
            elapsed = time.perf_counter() - start
            failure, reason = _failure(exc)
            attempts = 1 + (self.retries if retry and failure != INVALID_URL else 0)
            host = urlsplit(url).netloc or url
            log.warning(
                "could not reach %s (%s): %s %s, %d attempt(s)", host, reason, method, url, attempts
            )
            why = f"no answer ({reason})"
            return Reply(None, None, why, attempts, elapsed, method, url, failure)
        except BaseException as exc:
            # anything else (an interrupt, a bug) goes up; the frames of requests and urllib3
            # below hold the prepared headers and body as locals: clear them first
            _clear_locals(exc)
            raise
        elapsed = time.perf_counter() - start
        attempts = 1 + len(getattr(getattr(resp.raw, "retries", None), "history", ()) or ())
        body: Any = resp.content if raw and 200 <= resp.status_code < 300 else None
        if body is None and resp.content:
            with suppress(orjson.JSONDecodeError):  # not JSON: no body, the error says the text
                body = orjson.loads(resp.content)
        log.debug(
            "%s %s -> %s (%d attempts, %.3fs)", method, url, resp.status_code, attempts, elapsed
        )
        error = error_text(body, resp.status_code, resp.content)
        after = _retry_after(resp.headers.get("Retry-After"))
        reply = Reply(resp.status_code, body, error, attempts, elapsed, method, url)
        reply.retry_after, reply.headers = after, _limit_headers(resp.headers)
        return reply
