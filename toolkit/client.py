"""``Client``: the facade analysts call, one method per capability.

The top of the library's layers. A client builds a :class:`~toolkit.core.connection.Connection`
(settings, transport, token, URLs, one request) and hands it to the operation modules:
:mod:`toolkit.ingress.imports`, :mod:`toolkit.egress.fetch`, :mod:`toolkit.egress.acknowledgements`,
:mod:`toolkit.starring.operations`, :mod:`toolkit.egress.users`. Each method is the analyst's
entry point and
carries the whole docstring, so ``client.star?`` in Jupyter is enough. The operations are plain
functions of a connection and work without a client.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from toolkit.bulk.journal import Journal
from toolkit.core.auth import Secret, TokenProvider
from toolkit.core.connection import ENDPOINTS, Connection
from toolkit.core.http import Reply, Transport
from toolkit.core.settings import ENV_KEYS, Settings, read_env_file
from toolkit.egress import acknowledgements, sync, users
from toolkit.egress import fetch as exports
from toolkit.egress.export import Export
from toolkit.egress.sync import DEFAULT_LAG, ROWS_PER_GROUP, SyncReport
from toolkit.errors import ConfigError
from toolkit.ingress import imports
from toolkit.ingress.imports import OnboardReport
from toolkit.starring import operations as starring

# besides the facade, the lower names the command line needs (``toolkit.cli`` reads no module
# inside core/ or bulk/): the endpoint table, the setting -> variable table, the journal
__all__ = ["ENDPOINTS", "ENV_KEYS", "Client", "Journal", "read_env_file"]


def _importer(table: str, what: str) -> Callable[..., pd.DataFrame]:
    """A ``Client.import_<table>`` method: explicit keywords (they complete in Jupyter) and
    its own docstring, all five driven by :func:`toolkit.ingress.imports.import_table`."""

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
        return imports.import_table(
            self.connection,
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

        Validation runs first and nothing is sent when a row fails; imports are upserts, so a
        re-run with the same frame changes nothing.

        Args:
            df: the records, columns named as in the spec's field table.
            columns: renames applied first, e.g. ``{{"call_sign": "callSign"}}``.
            validate: check the frame first and raise before anything is sent.
            workers: worker threads (default: the client's).
            progress: show a progress bar.
            journal: path of a journal; records it holds with the same payload are skipped.
            dry_run: return the payloads instead of sending them.

        Returns:
            One row per input row, aligned to its index: the key, ``status`` (``sent``,
            ``journaled``, ``failed``, ``unknown`` (sent, answer lost), ``not_sent``),
            ``ok``, ``httpStatus``, ``error``, ``attempts``, ``elapsed``. With ``dry_run``,
            the key, ``url`` and ``payload``.

        Raises:
            ValidationError: the frame failed its schema (``.failure_cases``).
            Interrupted: Ctrl+C or Jupyter's stop (no request leaves after it); ``.result``
                is this frame so far, the rows never sent ``not_sent``.

        Example:
            >>> result = client.import_{table}(frame, progress=False)  # doctest: +SKIP
            >>> result.ok.all()  # doctest: +SKIP
            True
        """
    return method


class Client:
    """A connection to one customer of the interface, with one method per capability.

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
        max_rate: requests per second a bulk operation never exceeds, for users who know their
            quota; without it each run finds the service's pace on its own (it backs off
            together on 429 and 503 and probes upward again).

    Raises:
        ConfigError: a required setting is empty, or a URL is not an http(s) URL with a host.

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
        max_rate: float | None = None,
    ) -> None:
        if max_rate is not None and not max_rate > 0:
            raise ConfigError("max_rate must be a positive number of requests per second")
        settings = Settings(
            customer_id,
            client_id,
            client_secret,  # type: ignore[arg-type]
            auth_url,
            time_url,
            ingestion_url,
            audience,
        )
        self.connection = Connection(
            settings,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            workers=workers,
            max_rate=max_rate,
        )

    @classmethod
    def from_connection(cls, connection: Connection) -> Client:
        """Wrap an existing connection in the facade (no new session or token).

        Args:
            connection: the connection to use.

        Returns:
            A client over that connection.

        Example:
            >>> from toolkit.core.settings import Settings
            >>> conn = Connection(Settings("c", "i", "s", "http://127.0.0.1:1", "http://t"))
            >>> Client.from_connection(conn).connection is conn
            True
        """
        client = cls.__new__(cls)
        client.connection = connection
        return client

    @classmethod
    def from_env(
        cls,
        env_file: str | os.PathLike[str] | None = ".env",
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float | tuple[float, float] = (5.0, 120.0),
        retries: int = 5,
        workers: int = 8,
        max_rate: float | None = None,
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
            max_rate: requests per second a bulk operation never exceeds.

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
        settings = Settings.from_env(env_file, environ=environ)
        return cls.from_connection(
            Connection(
                settings, timeout=timeout, retries=retries, workers=workers, max_rate=max_rate
            )
        )

    def __repr__(self) -> str:
        return (
            f"Client(customer_id={self.customer_id!r}, "
            f"client_id={self.connection.settings.client_id!r}, "
            f"time_url={self.urls['time']!r})"
        )

    # -- the connection underneath ---------------------------------------------------------

    @property
    def customer_id(self) -> str:
        """The customer every path is scoped to."""
        return self.connection.customer_id

    @property
    def client_id(self) -> str:
        """The application's ``clientId``."""
        return self.connection.settings.client_id

    @property
    def urls(self) -> dict[str, str]:
        """Base address of each service (``auth``, ``time``, ``ingestion``)."""
        return self.connection.urls

    @property
    def workers(self) -> int:
        """Default worker threads of bulk operations."""
        return self.connection.workers

    @property
    def transport(self) -> Transport:
        """The HTTP layer (pooled sessions, timeouts, retries)."""
        return self.connection.transport

    @property
    def auth(self) -> TokenProvider:
        """The token provider (lazy, cached, refreshed)."""
        return self.connection.auth

    def url(self, endpoint: str, **path: str) -> str:
        """Full URL of an endpoint, with path parameters filled in and percent-encoded.

        Args:
            endpoint: a key of :data:`~toolkit.core.connection.ENDPOINTS`.
            **path: path parameters other than ``customerId``.

        Returns:
            The URL.

        Example:
            >>> c = Client("c1", "i", "s", "http://a", "http://t")
            >>> c.url("user", userId="u 1")
            'http://t/api/v1/customers/c1/users/u%201'
        """
        return self.connection.url(endpoint, **path)

    def send(self, endpoint: str, **kwargs: Any) -> Reply:
        """Send one authenticated request; never raises for an HTTP status.

        Args:
            endpoint: a key of :data:`~toolkit.core.connection.ENDPOINTS`.
            **kwargs: ``path``, ``params``, ``json``, ``retry``, ``raw`` as in
                :meth:`toolkit.core.connection.Connection.send`.

        Returns:
            The :class:`~toolkit.core.http.Reply`.

        Example:
            >>> c = Client("c", "i", "s", "http://127.0.0.1:9", "http://127.0.0.1:9", retries=0)
            >>> c.send("user", path={"userId": "u"}).error  # doctest: +ELLIPSIS
            'cannot reach the identity service at 127.0.0.1:9 (connection refused); ...'
        """
        return self.connection.send(endpoint, **kwargs)

    def call(self, endpoint: str, **kwargs: Any) -> Any:
        """Send one request and return its parsed JSON body, raising typed errors.

        Args:
            endpoint: a key of :data:`~toolkit.core.connection.ENDPOINTS`.
            **kwargs: ``path``, ``params``, ``json``, ``retry``, ``raw`` as in
                :meth:`toolkit.core.connection.Connection.call`.

        Returns:
            The parsed JSON body (or bytes with ``raw=True``).

        Raises:
            ApiError: a subclass matching the status (``NotFoundError`` for 404...).
            TransportError: no answer came.

        Example:
            >>> from toolkit.errors import TransportError
            >>> c = Client("c", "i", "s", "http://127.0.0.1:9", "http://127.0.0.1:9", retries=0)
            >>> try:
            ...     c.call("user", path={"userId": "u"})
            ... except TransportError as exc:
            ...     print(type(exc).__name__)
            TransportError
        """
        return self.connection.call(endpoint, **kwargs)

    # -- ingress -----------------------------------------------------------------------------

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
        """Validate a whole firm and import it in the spec's order.

        Clients, initiatives, code types, codes, then code ranges. A record whose parent failed
        (or was itself skipped or invalid) is never posted: it is reported as ``skipped`` with
        the reason. With a journal, a re-run sends only what was not acknowledged before.

        Args:
            source: a folder holding ``clients``, ``initiatives``, ``code_types``, ``codes``,
                ``code_ranges`` as .csv, .parquet or .xlsx, or a mapping of those names to
                frames.
            known: ids already in the service, per table, for the reference checks.
            on_invalid: ``"raise"`` (default) raises before anything is sent; ``"skip"``
                imports the valid rows and reports the invalid ones as skipped.
            workers: worker threads (default: the client's).
            progress: show progress bars.
            journal: path of a journal shared by all tables, for resumable runs.
            dry_run: validate and build the payloads, send nothing.

        Returns:
            An :class:`~toolkit.ingress.imports.OnboardReport` (``.ok``, ``.counts``, ``.results``,
            ``.failures``).

        Raises:
            ValidationError: a row failed validation and ``on_invalid="raise"``.
            ConfigError: ``source`` is neither a folder nor a mapping of known tables, or the
                journal path is a folder or cannot be written.
            JournalInUseError: another run holds the journal.
            Interrupted: Ctrl+C or Jupyter's stop; ``.result`` holds every row's result so
                far (rows never sent are ``not_sent``) and ``.report`` the report.

        Example:
            >>> report = client.onboard("sample_data", journal="onboard.jsonl")  # doctest: +SKIP
            >>> report.ok  # doctest: +SKIP
            True
        """
        return imports.onboard(
            self.connection,
            source,
            known=known,
            on_invalid=on_invalid,
            workers=workers,
            progress=progress,
            journal=journal,
            dry_run=dry_run,
        )

    # -- egress ------------------------------------------------------------------------------

    def export_entries(
        self,
        released_after: Any,
        released_on_or_before: Any,
        *,
        window: str | None = None,
        progress: bool = False,
    ) -> Export:
        """Export the entries released in ``(released_after, released_on_or_before]``.

        Args:
            released_after: exclusive lower bound (datetime, Timestamp or ISO text; naive is
                UTC).
            released_on_or_before: inclusive upper bound.
            window: request consecutive sub-windows of this pandas offset (e.g. ``"1D"``) and
                concatenate them without duplicates.
            progress: show a progress bar over the windows.

        Returns:
            An :class:`~toolkit.egress.export.Export` with ``.entries``, ``.codes``,
            ``.codes_wide()``, ``.to_parquet()``, ``.to_csv()``.

        Raises:
            ConfigError: the bounds are unparseable or inverted.
            ApiError: the service refused the request.

        Example:
            >>> ex = client.export_entries("2026-11-01", "2026-11-21", window="1D") # doctest: +SKIP
            >>> ex.entries[["_id", "initiative.client.externalId"]].head()  # doctest: +SKIP
        """
        return exports.export_entries(
            self.connection,
            released_after,
            released_on_or_before,
            window=window,
            progress=progress,
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
        """Stream an export window by window into a Parquet dataset (``entries/``, ``codes/``).

        Only one window is in memory at a time.

        Args:
            released_after: exclusive lower bound.
            released_on_or_before: inclusive upper bound.
            path: the dataset folder.
            window: sub-window size (a pandas offset).
            partition_cols: hive partition columns of the entries.
            overwrite: replace an existing dataset at ``path``; without it an existing one is
                an error.
            progress: show a progress bar.

        Returns:
            ``{"entries": n, "codes": m, "windows": k}``.

        Raises:
            ConfigError: ``path`` already holds a dataset and ``overwrite`` is false.

        Example:
            >>> client.export_to_parquet("2026-01-01", "2027-01-01", "out/x")  # doctest: +SKIP
            {'entries': 812345, 'codes': 2437035, 'windows': 365}
        """
        return exports.export_to_parquet(
            self.connection,
            released_after,
            released_on_or_before,
            path,
            window=window,
            partition_cols=partition_cols,
            overwrite=overwrite,
            progress=progress,
        )

    def sync(
        self,
        path: str | os.PathLike[str],
        *,
        since: Any = None,
        until: Any = None,
        window: str = "1D",
        lag: Any = DEFAULT_LAG,
        batch_rows: int = ROWS_PER_GROUP,
        progress: bool = False,
    ) -> SyncReport:
        """Incrementally sync released time into two Delta Lake tables at ``path``.

        ``path/entries`` holds one row per entry ``_id`` (partitioned by ``workMonth``),
        ``path/codes`` one row per entry and code. Windows are fetched, merged on ``_id``
        (a newer ``updatedAt`` replaces the row, a new id is inserted, an older or equal one
        changes nothing; an entry's codes are replaced with it) and committed, up to
        ``batch_rows`` entries a commit, so memory stays flat whatever the range. The
        watermark (``toolkit.releasedOnOrBefore`` in the entries table's commit metadata)
        moves only once both tables hold a window, so a killed sync resumes to the same end
        state and a repeated one adds nothing.

        Args:
            path: The sync folder (created if new).
            since: Exclusive start (``releasedAfter``): needed by the first sync of a path;
                later ones start from the watermark. An earlier ``since`` re-syncs that range.
            until: Inclusive end (``releasedOnOrBefore``); default now minus ``lag``.
            window: Window size, a pandas offset (``"1D"``, ``"6h"``, ``"7D"``).
            lag: Duration ``until`` stays behind now by default (``"10min"``), for entries
                that become visible in the export late.
            batch_rows: Entries of consecutive windows written in one commit (default
                100,000); ``1`` commits every window on its own.
            progress: Show a progress bar over the windows.

        Returns:
            A :class:`~toolkit.egress.sync.SyncReport` (windows, inserted, updated, unchanged,
            codes_written, watermark).

        Raises:
            ConfigError: Bad bounds, window or lag; a first sync without ``since``; a
                ``since`` after the watermark; a path holding something else or tables of
                another schema. Nothing is written.
            ConcurrentWriteError: Another sync wrote to the same tables meanwhile.
            ApiError: The service refused a request.

        Example:
            >>> client.sync("out/time", since="2026-11-01")  # doctest: +SKIP
            >>> print(client.sync("out/time"))  # doctest: +SKIP
            sync out/time: (2026-11-21T08:50:00Z, ...] in 1 window(s): 12 inserted, ...
            >>> toolkit.read_sync("out/time").entries.shape  # doctest: +SKIP
        """
        return sync.sync(
            self.connection,
            path,
            since=since,
            until=until,
            window=window,
            lag=lag,
            batch_rows=batch_rows,
            progress=progress,
        )

    def compact(self, path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
        """Compact the small files of a sync folder's two tables (delta-rs ``optimize``).

        Run it every few weeks of daily syncs, or before heavy reading. The data does not
        change; the replaced files stay for time travel until a ``vacuum`` removes them.

        Args:
            path: The sync folder.

        Returns:
            The optimize metrics of each table (``{"entries": {...}, "codes": {...}}``).

        Raises:
            ConfigError: ``path`` is not a sync folder.
            ConcurrentWriteError: A sync wrote to the tables meanwhile.

        Example:
            >>> client.compact("out/time")["entries"]["numFilesRemoved"]  # doctest: +SKIP
            120
        """
        return sync.compact(path)

    def release_pending(self) -> Export:
        """Entries still pending release, in the detailed form, as frames.

        Returns:
            An :class:`~toolkit.egress.export.Export` of kind ``pending`` (``initiativeProps.*``
            columns, ``tags`` as a list, codes without ``assignedBy``).

        Raises:
            ApiError: the service refused the request.

        Example:
            >>> client.release_pending().entries.shape  # doctest: +SKIP
            (12, 31)
        """
        return exports.release_pending(self.connection)

    def acknowledge(
        self,
        frame: pd.DataFrame,
        *,
        validate: bool = True,
        workers: int | None = None,
        progress: bool = True,
        journal: str | os.PathLike[str] | None = None,
    ) -> pd.DataFrame:
        """Post release-succeeded or release-failed for every row of a frame.

        Args:
            frame: ``userId``, ``entryId`` (or ``_id``), ``outcome`` (``succeeded`` or
                ``failed``), ``externalId`` (succeeded rows), ``errors`` (failed rows).
            validate: check the frame first and raise before anything is sent.
            workers: worker threads (default: the client's).
            progress: show a progress bar.
            journal: path of a journal for resumable runs.

        Returns:
            One row per input row: ``userId``, ``entryId``, ``outcome``, ``status``, ``ok``,
            ``httpStatus``, ``error``, ``attempts``, ``elapsed``.

        Raises:
            ValidationError: the frame failed its checks (``.failure_cases``).
            Interrupted: Ctrl+C, Jupyter's stop or SIGTERM: sending stopped at once;
                ``.result`` holds a row per input (unsent rows ``not_sent``).

        Example:
            >>> client.acknowledge(reconciliation.to_acknowledge()).ok.all()  # doctest: +SKIP
            True
        """
        return acknowledgements.acknowledge(
            self.connection,
            frame,
            validate=validate,
            workers=workers,
            progress=progress,
            journal=journal,
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
        return users.user(self.connection, user_id)

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
        return users.users(self.connection, user_ids, workers=workers)

    # -- starring ----------------------------------------------------------------------------

    def star(
        self,
        timekeeper_or_frame: str | pd.DataFrame,
        initiative_external_ids: Iterable[str] | None = None,
        *,
        workers: int | None = None,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Star initiatives for one timekeeper, or for many from a frame.

        Duplicates are removed in first-seen order and the rest are sent in requests of at
        most 100. A whole-request failure (unknown or ambiguous timekeeper, 500) becomes a row
        for every id of that request.

        Args:
            timekeeper_or_frame: a ``timekeeperExternalId``, or a frame with columns
                ``timekeeperExternalId`` and ``initiativeExternalId``.
            initiative_external_ids: the initiatives (with a timekeeper id).
            workers: worker threads (default: the client's).
            progress: show a progress bar.

        Returns:
            ``timekeeperExternalId``, ``initiativeExternalId``, ``status``, ``errorCode``,
            ``errorMessage``, ``ok``, ``attempts``: one row per distinct id (for a frame, one
            row per input row).

        Raises:
            ConfigError: the arguments or the frame's columns are wrong.
            Interrupted: Ctrl+C, Jupyter's stop or SIGTERM: sending stopped at once;
                ``.result`` holds a row per input (unsent rows ``not_sent``).

        Example:
            >>> client.star("TK-001", ["M-1001-001"]).ok.all()  # doctest: +SKIP
            True
        """
        return starring.star(
            self.connection,
            timekeeper_or_frame,
            initiative_external_ids,
            workers=workers,
            progress=progress,
        )

    def unstar(
        self,
        timekeeper_or_frame: str | pd.DataFrame,
        initiative_external_ids: Iterable[str] | None = None,
        *,
        workers: int | None = None,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Unstar initiatives for one timekeeper, or for many from a frame.

        Args:
            timekeeper_or_frame: a ``timekeeperExternalId``, or a frame with columns
                ``timekeeperExternalId`` and ``initiativeExternalId``.
            initiative_external_ids: the initiatives (with a timekeeper id).
            workers: worker threads (default: the client's).
            progress: show a progress bar.

        Returns:
            The same columns as :meth:`star`.

        Raises:
            ConfigError: the arguments or the frame's columns are wrong.
            Interrupted: Ctrl+C, Jupyter's stop or SIGTERM: sending stopped at once;
                ``.result`` holds a row per input (unsent rows ``not_sent``).

        Example:
            >>> client.unstar("TK-001", ["M-1001-001"]).ok.all()  # doctest: +SKIP
            True
        """
        return starring.unstar(
            self.connection,
            timekeeper_or_frame,
            initiative_external_ids,
            workers=workers,
            progress=progress,
        )

    def starred(self, timekeeper_external_id: str, *, limit: int = 2500) -> pd.DataFrame:
        """A timekeeper's whole starred list as one frame, following every cursor.

        Args:
            timekeeper_external_id: the user's timekeeper id.
            limit: raw props fetched per page, 1 to 2500.

        Returns:
            ``initiativeExternalId``, ``page``.

        Raises:
            NotFoundError: the timekeeper cannot be resolved.
            ConflictError: the timekeeper id resolves to several users.
            PaginationError: a cursor repeated.

        Example:
            >>> client.starred("TK-001").initiativeExternalId.tolist()  # doctest: +SKIP
            ['M-1001-001']
        """
        return starring.starred(self.connection, timekeeper_external_id, limit=limit)

    def starred_pages(
        self, timekeeper_external_id: str, *, limit: int = 2500
    ) -> Iterator[pd.DataFrame]:
        """The starred list a page at a time (pages may be short or empty while more remain).

        Args:
            timekeeper_external_id: the user's timekeeper id.
            limit: raw props fetched per page, 1 to 2500.

        Yields:
            A frame per page: ``initiativeExternalId``, ``page`` (0-based).

        Raises:
            NotFoundError: the timekeeper cannot be resolved.
            PaginationError: a cursor repeated.

        Example:
            >>> for page in client.starred_pages("TK-001", limit=10):  # doctest: +SKIP
            ...     print(len(page))
        """
        return starring.starred_pages(self.connection, timekeeper_external_id, limit=limit)

    def starred_many(self, timekeepers: Sequence[str], *, limit: int = 2500) -> pd.DataFrame:
        """Starred lists of many timekeepers in one frame; a failed timekeeper is one row.

        Args:
            timekeepers: the timekeeper ids.
            limit: raw props fetched per page, 1 to 2500.

        Returns:
            ``timekeeperExternalId``, ``initiativeExternalId``, ``page``, ``httpStatus``,
            ``error``.

        Example:
            >>> client.starred_many(["TK-001", "TK-002"])  # doctest: +SKIP
        """
        return starring.starred_many(self.connection, timekeepers, limit=limit)
