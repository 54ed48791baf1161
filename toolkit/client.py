"""``Client``: the one handle that owns the session, the token and the customer.

Every endpoint path of the interface lives in :data:`ENDPOINTS`, keyed by a short name. The
capabilities (imports, exports, acknowledgements, starring) are methods of ``Client`` implemented
in their own modules, which call :meth:`Client.call` (one request, raising typed errors) or the
bulk runner (many requests, one result row each).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pandas as pd

from toolkit.auth import Secret, TokenProvider
from toolkit.errors import ApiError, ConfigError, TransportError, api_error_for
from toolkit.http import Reply, Transport

if TYPE_CHECKING:
    from toolkit.export import Export
    from toolkit.imports import OnboardReport

__all__ = ["ENDPOINTS", "Client", "read_env_file"]

log = logging.getLogger("toolkit.client")

#: name -> (method, service, path template). Services: ``auth``, ``time``, ``ingestion``.
ENDPOINTS: dict[str, tuple[str, str, str]] = {
    "token": ("POST", "auth", "/api/v1/oauth/token"),
    "import_clients": ("POST", "ingestion", "/api/v1/customers/{customerId}/clients/import"),
    "import_initiatives": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/initiatives/import",
    ),
    "import_code_types": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/code-types/import",
    ),
    "import_codes": ("POST", "ingestion", "/api/v1/customers/{customerId}/codes/import"),
    "import_code_ranges": (
        "POST",
        "ingestion",
        "/api/v1/customers/{customerId}/initiatives/{initiativeExternalId}/codes",
    ),
    "export": ("GET", "time", "/api/v2/customers/{customerId}/entries/export"),
    "release_pending": ("GET", "time", "/api/v1/customers/{customerId}/entries/release-pending"),
    "release_succeeded": (
        "POST",
        "time",
        "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-succeeded",
    ),
    "release_failed": (
        "POST",
        "time",
        "/api/v1/customers/{customerId}/users/{userId}/entries/{entryId}/release-failed",
    ),
    "user": ("GET", "time", "/api/v1/customers/{customerId}/users/{userId}"),
    "star": ("POST", "time", "/api/v1/public/customers/{customerId}/initiative-props/star"),
    "unstar": ("POST", "time", "/api/v1/public/customers/{customerId}/initiative-props/unstar"),
    "starred": ("GET", "time", "/api/v1/public/customers/{customerId}/initiative-props/starred"),
}

_ENV_KEYS = {
    "customer_id": "TOOLKIT_CUSTOMER_ID",
    "client_id": "TOOLKIT_CLIENT_ID",
    "client_secret": "TOOLKIT_CLIENT_SECRET",
    "auth_url": "TOOLKIT_AUTH_URL",
    "time_url": "TOOLKIT_TIME_URL",
    "ingestion_url": "TOOLKIT_INGESTION_URL",
    "audience": "TOOLKIT_AUDIENCE",
}


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read ``KEY=value`` lines of a ``.env`` file (comments, ``export`` and quotes allowed).

    Args:
        path: the file; a missing file gives an empty mapping.

    Returns:
        The variables it sets.

    Example:
        >>> read_env_file("/nonexistent/.env")
        {}
    """
    p = Path(path)
    if not p.is_file():
        return {}
    out: dict[str, str] = {}
    for raw in p.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def _importer(table: str, what: str) -> Callable[..., pd.DataFrame]:
    """A ``Client.import_<table>`` method: explicit keywords (they complete in Jupyter) and
    its own docstring, all five driven by :func:`toolkit.imports.import_table`."""

    def method(
        self: Client,
        df: pd.DataFrame,
        *,
        columns: Mapping[str, str] | None = None,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
    ) -> pd.DataFrame:
        from toolkit.imports import import_table

        return import_table(
            self,
            table,
            df,
            columns=columns,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
        )

    method.__name__ = f"import_{table}"
    method.__qualname__ = f"Client.import_{table}"
    method.__doc__ = f"""Validate and import {what}, one record per request.

        Args:
            df: the records, columns named as in the spec's field table.
            columns: renames applied first, e.g. ``{{"call_sign": "callSign"}}``.
            validate: check the frame first and raise before anything is sent.
            workers: worker threads (default: the client's).
            progress: show a progress bar.
            journal: path of a journal; records it holds with the same payload are skipped.
            dry_run: return the payloads instead of sending them.

        Returns:
            One row per input row, aligned to its index (see
            :func:`toolkit.imports.import_table`).

        Raises:
            ValidationError: the frame failed its schema (``.failure_cases``).

        Example:
            >>> result = client.import_{table}(frame, progress=False)  # doctest: +SKIP
            >>> result.ok.all()  # doctest: +SKIP
            True
        """
    return method


class Client:
    """A connection to one customer of the interface.

    Args:
        customer_id: the customer's identifier (every customer-scoped path holds it).
        client_id: the application's ``clientId``.
        client_secret: the application's ``clientSecret`` (kept masked).
        auth_url: base address of the identity service.
        time_url: base address of the time service (also used for the customer-scoped v1 and
            v2 paths).
        ingestion_url: base address for the import paths; defaults to ``time_url``.
        audience: the operator-supplied audience of the token request.
        timeout: request timeout in seconds (connect, read) or one number.
        retries: retries of a request that is safe to repeat.
        backoff: base of the exponential backoff in seconds.
        workers: default number of worker threads of bulk operations.

    Example:
        >>> c = Client("cust", "app", "s3cr3t", "http://127.0.0.1:8765", "http://127.0.0.1:8765")
        >>> "s3cr3t" in repr(c)
        False
    """

    def __init__(
        self,
        customer_id: str,
        client_id: str,
        client_secret: str | Secret,
        auth_url: str,
        time_url: str,
        ingestion_url: str | None = None,
        audience: str | None = None,
        *,
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        backoff: float = 0.25,
        workers: int = 8,
    ) -> None:
        missing = [
            name
            for name, value in (
                ("customer_id", customer_id),
                ("client_id", client_id),
                ("client_secret", client_secret),
                ("auth_url", auth_url),
                ("time_url", time_url),
            )
            if not value
        ]
        if missing:
            raise ConfigError(f"missing setting(s): {', '.join(missing)}")
        self.customer_id = str(customer_id)
        self.client_id = str(client_id)
        self.urls = {
            "auth": auth_url.rstrip("/"),
            "time": time_url.rstrip("/"),
            "ingestion": (ingestion_url or time_url).rstrip("/"),
        }
        self.audience = audience or None
        self.workers = workers
        self.transport = Transport(timeout=timeout, retries=retries, backoff=backoff)
        self.auth = TokenProvider(
            self.url("token"),
            self.client_id,
            client_secret,
            self.audience,
            transport=self.transport,
        )

    @classmethod
    def from_env(
        cls,
        env_file: str | os.PathLike[str] | None = ".env",
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        workers: int = 8,
    ) -> Client:
        """Build a client from ``TOOLKIT_*`` variables and a ``.env`` file.

        The process environment wins over the file. The file written by ``toolkit sandbox``
        works as is.

        Args:
            env_file: path of a ``.env`` file, or ``None`` to read none.
            environ: variables to use instead of ``os.environ``.
            timeout: request timeout in seconds.
            retries: retries of a request that is safe to repeat.
            workers: default worker threads of bulk operations.

        Returns:
            A configured client.

        Raises:
            ConfigError: a required variable is missing.

        Example:
            >>> env = {"TOOLKIT_CUSTOMER_ID": "c", "TOOLKIT_CLIENT_ID": "i",
            ...        "TOOLKIT_CLIENT_SECRET": "s", "TOOLKIT_AUTH_URL": "http://127.0.0.1:1",
            ...        "TOOLKIT_TIME_URL": "http://127.0.0.1:1"}
            >>> Client.from_env(None, environ=env).customer_id
            'c'
        """
        values = read_env_file(env_file) if env_file is not None else {}
        values.update(environ if environ is not None else os.environ)
        missing = [
            var
            for key, var in _ENV_KEYS.items()
            if key not in ("ingestion_url", "audience") and not values.get(var)
        ]
        if missing:
            raise ConfigError(
                f"missing environment variable(s): {', '.join(missing)} "
                f"(set them, or write them to {env_file or '.env'}; `toolkit sandbox` writes one)"
            )
        kwargs = {key: values.get(var) or None for key, var in _ENV_KEYS.items()}
        return cls(**kwargs, timeout=timeout, retries=retries, workers=workers)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return (
            f"Client(customer_id={self.customer_id!r}, client_id={self.client_id!r}, "
            f"time_url={self.urls['time']!r})"
        )

    # -- addressing ------------------------------------------------------------------------

    def url(self, endpoint: str, **path: str) -> str:
        """Full URL of an endpoint, with path parameters filled in (and escaped).

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            **path: path parameters other than ``customerId``.

        Returns:
            The URL.

        Example:
            >>> c = Client("c1", "i", "s", "http://a", "http://t")
            >>> c.url("user", userId="u 1")
            'http://t/api/v1/customers/c1/users/u%201'
        """
        _, service, template = ENDPOINTS[endpoint]
        values = {"customerId": self.customer_id, **path}
        filled = template.format(**{k: quote(str(v), safe="") for k, v in values.items()})
        return self.urls[service] + filled

    # -- one request -----------------------------------------------------------------------

    def send(
        self,
        endpoint: str,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool = True,
        raw: bool = False,
    ) -> Reply:
        """Send one authenticated request and return its :class:`~toolkit.http.Reply`.

        Never raises for an HTTP error; a 401 drops the cached token and is retried once with a
        fresh one. Used by the bulk runner.

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            path: path parameters other than ``customerId``.
            params: query parameters.
            json: JSON body.
            retry: whether the request is safe to repeat.
            raw: keep a 2xx body as bytes (for parsers faster than building Python objects).

        Returns:
            The reply.

        Example:
            >>> c = Client("c", "i", "s", "http://127.0.0.1:9", "http://127.0.0.1:9", retries=0)
            >>> c.send("user", path={"userId": "u"}).error
            'no answer from the identity service'
        """
        method = ENDPOINTS[endpoint][0]
        url = self.url(endpoint, **(path or {}))
        attempts = 0
        elapsed = 0.0
        for _ in range(2):
            try:
                token = self.auth.token()
            except TransportError:
                return Reply(
                    None,
                    None,
                    "no answer from the identity service",
                    attempts + 1,
                    elapsed,
                    method,
                    url,
                )
            except ApiError as exc:
                return Reply(
                    exc.status,
                    exc.problem,
                    f"token request refused: {exc.detail}",
                    attempts + 1,
                    elapsed,
                    method,
                    url,
                )
            reply = self.transport.send(
                method,
                url,
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
                params=dict(params) if params else None,
                json=json,
                retry=retry,
                raw=raw,
            )
            attempts += reply.attempts
            elapsed += reply.elapsed
            if reply.status != 401:
                break
            self.auth.invalidate(token)
        reply.attempts = attempts
        reply.elapsed = elapsed
        return reply

    def call(
        self,
        endpoint: str,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool = True,
        raw: bool = False,
    ) -> Any:
        """Send one request and return its parsed JSON body, raising typed errors.

        Args:
            endpoint: a key of :data:`ENDPOINTS`.
            path: path parameters other than ``customerId``.
            params: query parameters.
            json: JSON body.
            retry: whether the request is safe to repeat.
            raw: return the body's bytes unparsed.

        Returns:
            The parsed JSON body (or ``None`` for an empty one), or bytes with ``raw``.

        Raises:
            ApiError: a subclass matching the status (``NotFoundError`` for 404...).
            TransportError: no answer came.

        Example:
            >>> c = Client("c", "i", "s", "http://127.0.0.1:9", "http://127.0.0.1:9", retries=0)
            >>> try:
            ...     c.call("user", path={"userId": "u"})
            ... except TransportError as exc:
            ...     print(type(exc).__name__)
            TransportError
        """
        reply = self.send(endpoint, path=path, params=params, json=json, retry=retry, raw=raw)
        if reply.status is None:
            raise TransportError(reply.error or "no answer", method=reply.method, url=reply.url)
        if not reply.ok:
            problem = reply.body if isinstance(reply.body, dict) else None
            raise api_error_for(reply.status, problem, reply.method, reply.url)
        return reply.body

    # -- capabilities (implemented in their own modules) -----------------------------------

    import_clients = _importer("clients", "clients")
    import_initiatives = _importer("initiatives", "initiatives (matters or projects)")
    import_code_types = _importer("code_types", "code types")
    import_codes = _importer("codes", "codes")
    import_code_ranges = _importer(
        "code_ranges", "code ranges (long form: initiativeExternalId, codeExternalId)"
    )

    def onboard(
        self,
        source: str | os.PathLike[str] | Mapping[str, pd.DataFrame],
        *,
        known: Mapping[str, Iterable[str]] | None = None,
        on_invalid: str = "raise",
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
    ) -> OnboardReport:
        """Validate and import a whole firm in the spec's order.

        See :func:`toolkit.imports.onboard`.

        Example:
            >>> client.onboard("sample_data", journal="onboard.jsonl").ok  # doctest: +SKIP
            True
        """
        from toolkit.imports import onboard

        return onboard(
            self,
            source,
            known=known,
            on_invalid=on_invalid,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
        )

    def export_entries(
        self,
        released_after: Any,
        released_on_or_before: Any,
        *,
        window: str | None = None,
        progress: bool = False,
    ) -> Export:
        """Released entries as flat frames; see :func:`toolkit.exports.export_entries`.

        Example:
            >>> client.export_entries("2026-11-01", "2026-11-21", window="1D")  # doctest: +SKIP
        """
        from toolkit.exports import export_entries

        return export_entries(
            self, released_after, released_on_or_before, window=window, progress=progress
        )

    def export_to_parquet(
        self,
        released_after: Any,
        released_on_or_before: Any,
        path: str | os.PathLike[str],
        *,
        window: str = "1D",
        partition_cols: Sequence[str] | None = None,
        overwrite: bool = False,
        progress: bool = False,
    ) -> dict[str, int]:
        """Stream an export into a Parquet dataset; see :func:`toolkit.exports.export_to_parquet`.

        Example:
            >>> client.export_to_parquet("2026-01-01", "2027-01-01", "out/x")  # doctest: +SKIP
        """
        from toolkit.exports import export_to_parquet

        return export_to_parquet(
            self,
            released_after,
            released_on_or_before,
            path,
            window=window,
            partition_cols=partition_cols,
            overwrite=overwrite,
            progress=progress,
        )

    def release_pending(self) -> Export:
        """Entries still pending, as frames; see :func:`toolkit.exports.release_pending`.

        Example:
            >>> client.release_pending().entries.shape  # doctest: +SKIP
        """
        from toolkit.exports import release_pending

        return release_pending(self)

    def acknowledge(
        self,
        frame: pd.DataFrame,
        *,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | None = None,
    ) -> pd.DataFrame:
        """Acknowledge entries from a frame; see :func:`toolkit.acknowledgements.acknowledge`.

        Example:
            >>> client.acknowledge(reconciliation.to_acknowledge()).ok.all()  # doctest: +SKIP
            True
        """
        from toolkit.acknowledgements import acknowledge

        return acknowledge(
            self, frame, validate=validate, workers=workers, progress=progress, journal=journal
        )

    def user(self, user_id: str) -> dict[str, Any]:
        """One user record.

        Args:
            user_id: the user's ``_id``.

        Returns:
            The record as the service returns it.

        Raises:
            NotFoundError: no such user.

        Example:
            >>> client.user(user_id)["_id"] == user_id  # doctest: +SKIP
            True
        """
        return self.call("user", path={"userId": user_id})

    def users(self, user_ids: Iterable[str], *, workers: int | None = None) -> pd.DataFrame:
        """Several user records as one frame (one row per distinct id; failures as rows).

        Args:
            user_ids: the ``_id`` values.
            workers: worker threads (default: the client's).

        Returns:
            A frame of the records, with an ``error`` column naming users that failed.

        Example:
            >>> client.users(["64b...", "64c..."])  # doctest: +SKIP
        """
        from toolkit.bulk import Call, run_bulk

        ids = list(dict.fromkeys(str(u) for u in user_ids))
        calls = [Call("user", {"userId": u}, key=u) for u in ids]
        replies = run_bulk(self, calls, workers=workers, progress=False, desc="users")
        rows = []
        for uid, reply in zip(ids, replies, strict=True):
            row = dict(reply.body) if reply.ok and isinstance(reply.body, dict) else {"_id": uid}
            row["error"] = None if reply.ok else reply.error
            rows.append(row)
        return pd.DataFrame(rows)

    def star(
        self,
        timekeeper_or_frame: str | pd.DataFrame,
        initiative_external_ids: Iterable[str] | None = None,
        *,
        workers: int | None = None,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Star initiatives for a timekeeper, or many from a frame.

        See :func:`toolkit.starring.star`.

        Example:
            >>> client.star("TK-001", ["M-1001-001"]).ok.all()  # doctest: +SKIP
            True
        """
        from toolkit.starring import star

        return star(
            self, timekeeper_or_frame, initiative_external_ids, workers=workers, progress=progress
        )

    def unstar(
        self,
        timekeeper_or_frame: str | pd.DataFrame,
        initiative_external_ids: Iterable[str] | None = None,
        *,
        workers: int | None = None,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Unstar initiatives; see :func:`toolkit.starring.unstar`.

        Example:
            >>> client.unstar("TK-001", ["M-1001-001"]).ok.all()  # doctest: +SKIP
            True
        """
        from toolkit.starring import unstar

        return unstar(
            self, timekeeper_or_frame, initiative_external_ids, workers=workers, progress=progress
        )

    def starred(self, timekeeper_external_id: str, *, limit: int = 2500) -> pd.DataFrame:
        """A timekeeper's whole starred list; see :func:`toolkit.starring.starred`."""
        from toolkit.starring import starred

        return starred(self, timekeeper_external_id, limit=limit)

    def starred_pages(
        self, timekeeper_external_id: str, *, limit: int = 2500
    ) -> Iterator[pd.DataFrame]:
        """The starred list a page at a time; see :func:`toolkit.starring.starred_pages`."""
        from toolkit.starring import starred_pages

        return starred_pages(self, timekeeper_external_id, limit=limit)

    def starred_many(self, timekeepers: Sequence[str], *, limit: int = 2500) -> pd.DataFrame:
        """Starred lists of many timekeepers; see :func:`toolkit.starring.starred_many`."""
        from toolkit.starring import starred_many

        return starred_many(self, timekeepers, limit=limit)
