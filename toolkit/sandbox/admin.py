"""A small client of the sandbox's administration routes (``/sandbox/v1``).

These routes stand in for what users do inside the product (create users, time entries,
release them, wall initiatives off) and for test controls (faults, profiles, request counts,
stored records). They are not part of the interface.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Literal

import requests

__all__ = ["KEEP", "Admin", "AdminError", "Keep"]


class Keep(enum.Enum):
    """The type of :data:`KEEP`: a profile switch left as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP
"""Default of every switch of :meth:`Admin.set_profile`: leave it as it is."""


class AdminError(RuntimeError):
    """An administration call failed (non-2xx answer, or no answer at all).

    Attributes:
        status: HTTP status, or None when the sandbox could not be reached.
        body: The decoded problem body (or text), when there was one.

    >>> str(AdminError("POST /sandbox/v1/customers", 422, {"detail": "bad"}))
    'POST /sandbox/v1/customers -> 422: bad'
    """

    def __init__(self, call: str, status: int | None, body: Any) -> None:
        detail = body.get("detail", body) if isinstance(body, dict) else body
        super().__init__(f"{call} -> {status}: {detail}")
        self.status = status
        self.body = body


def _iso(value: datetime | date | str) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)


class Admin:
    """Call the administration routes of a running sandbox.

    Customer-scoped methods act on ``customer_id`` (the demo customer when created by
    :func:`toolkit.sandbox.running`) unless given another one.

    Args:
        url: The sandbox base address, for example ``http://127.0.0.1:8765``.
        customer_id: Default customer of customer-scoped calls.
        timeout: Seconds per request.

    >>> admin = Admin("http://127.0.0.1:9", customer_id="c1", timeout=0.5)
    >>> admin.stats()
    Traceback (most recent call last):
    ...
    toolkit.sandbox.admin.AdminError: GET /sandbox/v1/stats -> None: ConnectionError
    """

    def __init__(self, url: str, *, customer_id: str | None = None, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.customer_id = customer_id
        self.timeout = timeout
        self._session = requests.Session()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Admin(url={self.url!r}, customer_id={self.customer_id!r})"

    def close(self) -> None:
        """Close the HTTP session.

        >>> Admin("http://127.0.0.1:9").close()
        """
        self._session.close()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        call = f"{method} /sandbox/v1{path}"
        try:
            with self._lock:
                response = self._session.request(
                    method, f"{self.url}/sandbox/v1{path}", json=body, timeout=self.timeout
                )
        except requests.RequestException as exc:
            raise AdminError(call, None, type(exc).__name__) from None
        try:
            payload = response.json()
        except ValueError:
            payload = response.text
        if not response.ok:
            raise AdminError(call, response.status_code, payload)
        return payload

    def _customer(self, customer_id: str | None) -> str:
        chosen = customer_id or self.customer_id
        if not chosen:
            raise ValueError("no customer_id given and no default customer")
        return chosen

    def create_customer(self, name: str | None = None) -> dict[str, str]:
        """Create a customer with an API client.

        Args:
            name: Display name.

        Returns:
            ``{customerId, clientId, clientSecret, audience}``.

        >>> creds = sb.admin.create_customer("Other firm")
        >>> sorted(creds)
        ['audience', 'clientId', 'clientSecret', 'customerId']
        """
        return dict(self._call("POST", "/customers", {"name": name}))

    def create_user(
        self,
        timekeeper_external_id: str,
        name: str = "",
        email: str = "",
        *,
        customer_id: str | None = None,
    ) -> dict[str, Any]:
        """Create a user (repeating a timekeeper id makes it ambiguous).

        Args:
            timekeeper_external_id: The user's timekeeper id in the billing system.
            name: Display name.
            email: Email address.
            customer_id: Customer, default the admin's.

        Returns:
            The user record ``{_id, customerId, timekeeperExternalId, name, email}``.

        >>> user = sb.admin.create_user("TK-900", "Ann Lee", "ann@example.com")
        >>> user["timekeeperExternalId"], user["name"]
        ('TK-900', 'Ann Lee')
        """
        return dict(
            self._call(
                "POST",
                f"/customers/{self._customer(customer_id)}/users",
                {"timekeeperExternalId": timekeeper_external_id, "name": name, "email": email},
            )
        )

    def set_walls(
        self,
        user_id: str,
        initiative_external_ids: Sequence[str],
        *,
        customer_id: str | None = None,
    ) -> dict[str, Any]:
        """Replace the initiatives the user has no access to.

        Args:
            user_id: The user.
            initiative_external_ids: Initiatives walled off (everything else is accessible).
            customer_id: Customer, default the admin's.

        Returns:
            ``{userId, initiativeExternalIds}``.

        >>> user = sb.admin.create_user("TK-901")
        >>> sb.admin.set_walls(user["_id"], ["M-1001-001"])["initiativeExternalIds"]
        ['M-1001-001']
        """
        return dict(
            self._call(
                "PUT",
                f"/customers/{self._customer(customer_id)}/users/{user_id}/walls",
                {"initiativeExternalIds": list(initiative_external_ids)},
            )
        )

    def create_entry(
        self,
        user_id: str,
        initiative_external_id: str,
        *,
        work_date: date | str,
        increment_duration_in_seconds: float,
        summary: str = "",
        codes: Sequence[str | tuple[str, str] | Mapping[str, str]] = (),
        customer_id: str | None = None,
        unit_increment_count: float | None = None,
    ) -> dict[str, Any]:
        """Create a time entry in the editable state.

        Args:
            user_id: The entry's user.
            initiative_external_id: The initiative worked on.
            work_date: Date worked.
            increment_duration_in_seconds: Time worked (a fraction is kept).
            summary: Description of the work.
            codes: Codes: an externalId (assigned by ``user``), a ``(externalId, assignedBy)``
                pair, or a ``{codeExternalId, assignedBy}`` mapping.
            customer_id: Customer, default the admin's.
            unit_increment_count: The entry's count, stored as given (2.5 too); default the
                duration over the initiative's ``unitIncrements``, rounded up.

        Returns:
            The entry (administration view, ``state`` ``editable``).

        >>> user = sb.admin.create_user("TK-902")
        >>> entry = sb.admin.create_entry(user["_id"], "M-1001-001", work_date="2025-03-03",
        ...     increment_duration_in_seconds=1800, codes=["L110"])
        >>> entry["state"]
        'editable'
        """
        items = []
        for code in codes:
            if isinstance(code, str):
                items.append({"codeExternalId": code, "assignedBy": "user"})
            elif isinstance(code, tuple):
                items.append({"codeExternalId": code[0], "assignedBy": code[1]})
            else:
                items.append(dict(code))
        return dict(
            self._call(
                "POST",
                f"/customers/{self._customer(customer_id)}/users/{user_id}/entries",
                {
                    "initiativeExternalId": initiative_external_id,
                    "workDate": _iso(work_date),
                    "summary": summary,
                    "incrementDurationInSeconds": increment_duration_in_seconds,
                    "codes": items,
                    **(
                        {}
                        if unit_increment_count is None
                        else {"unitIncrementCount": unit_increment_count}
                    ),
                },
            )
        )

    def release_entry(
        self,
        user_id: str,
        entry_id: str,
        *,
        at: datetime | str | None = None,
        customer_id: str | None = None,
    ) -> dict[str, Any]:
        """The user releases an entry (editable or failed becomes pending).

        Args:
            user_id: The entry's user.
            entry_id: The entry.
            at: Release time (naive = UTC); default now.
            customer_id: Customer, default the admin's.

        Returns:
            The entry (administration view, ``state`` ``pending``).

        >>> user = sb.admin.create_user("TK-903")
        >>> entry = sb.admin.create_entry(user["_id"], "M-1001-001", work_date="2025-03-03",
        ...     increment_duration_in_seconds=1800)
        >>> sb.admin.release_entry(user["_id"], entry["_id"], at="2025-03-04T00:00:00Z")["state"]
        'pending'
        """
        return dict(
            self._call(
                "POST",
                f"/customers/{self._customer(customer_id)}/users/{user_id}/entries/{entry_id}/release",
                {"at": _iso(at) if at is not None else None},
            )
        )

    def create_product_initiative(
        self, user_id: str, name: str, *, customer_id: str | None = None
    ) -> dict[str, Any]:
        """Create an initiative inside the product, pinned for the user.

        Args:
            user_id: The user.
            name: The initiative's name.
            customer_id: Customer, default the admin's.

        Returns:
            ``{_id, name, userId, pinned}``.

        >>> user = sb.admin.create_user("TK-904")
        >>> sb.admin.create_product_initiative(user["_id"], "Internal")["name"]
        'Internal'
        """
        return dict(
            self._call(
                "POST",
                f"/customers/{self._customer(customer_id)}/users/{user_id}/product-initiatives",
                {"name": name},
            )
        )

    def set_faults(
        self,
        *,
        rate: float = 0.0,
        statuses: Sequence[int] = (503,),
        retry_after_seconds: int = 1,
        latency_ms: int = 0,
        item_error_rate: float = 0.0,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """Set fault injection on the interface routes (replaces all settings).

        Args:
            rate: Fraction of requests answered with one of ``statuses`` before any work.
            statuses: Drawn from 429, 500, 503 (429 and 503 carry ``Retry-After``).
            retry_after_seconds: The ``Retry-After`` value.
            latency_ms: Delay added to every interface request.
            item_error_rate: Fraction of star/unstar items answered 500 (not applied).
            seed: Seed of the random source, for repeatable runs.

        Returns:
            The settings and counters.

        >>> sb.admin.set_faults(rate=0.2, statuses=[503], seed=7)["rate"]
        0.2
        >>> sb.admin.clear_faults()["rate"]
        0.0
        """
        return dict(
            self._call(
                "PUT",
                "/faults",
                {
                    "rate": rate,
                    "statuses": list(statuses),
                    "retryAfterSeconds": retry_after_seconds,
                    "latencyMs": latency_ms,
                    "itemErrorRate": item_error_rate,
                    "seed": seed,
                },
            )
        )

    def clear_faults(self) -> dict[str, Any]:
        """Switch fault injection off.

        >>> sb.admin.clear_faults()["rate"]
        0.0
        """
        return self.set_faults()

    def faults(self) -> dict[str, Any]:
        """Return fault settings and counters.

        >>> sorted(sb.admin.faults()["counters"])
        ['injected', 'itemErrors', 'requests']
        """
        return dict(self._call("GET", "/faults"))

    def set_rate_limit(
        self, per_second: float | None, *, burst: int | None = None
    ) -> dict[str, Any]:
        """Set the rate limit of the interface routes: a token bucket per customer.

        It sets the default profile's ``rateLimit``: customers whose own profile sets one
        keep theirs (see :meth:`set_profile`).

        Args:
            per_second: requests a second each customer may make; ``None`` turns it off.
            burst: requests that may come at once (default: one second's worth).

        Returns:
            The settings and counters (``allowed``, ``limited``).

        >>> sb.admin.set_rate_limit(40, burst=10)["perSecond"]
        40.0
        >>> sb.admin.set_rate_limit(None)["perSecond"] is None
        True
        """
        return dict(self._call("PUT", "/rate-limit", {"perSecond": per_second, "burst": burst}))

    def rate_limit(self) -> dict[str, Any]:
        """Return the rate limit settings and counters.

        >>> sb.admin.rate_limit()["perSecond"] is None
        True
        """
        return dict(self._call("GET", "/rate-limit"))

    def set_profile(
        self,
        *,
        customer_id: str | None = None,
        tokenLifetimeSeconds: int | Keep = KEEP,
        tokenFaults: Mapping[str, Any] | Keep = KEEP,
        rateLimit: Mapping[str, Any] | None | Keep = KEEP,
        retryAfter: Literal["seconds", "http-date", "absent"] | Keep = KEEP,
        rateLimitHeaders: Literal["none", "ietf", "x-ratelimit"] | Keep = KEEP,
        importAnswer: (
            Literal["201-empty", "201-record", "200-record", "204", "202"] | Keep
        ) = KEEP,
        reimport: Literal["upsert", "conflict"] | Keep = KEEP,
        errorBody: Literal["problem", "message", "text", "empty", "nestjs"] | Keep = KEEP,
        ackRepeat: Literal["200", "409", "422"] | Keep = KEEP,
        exportMaxEntries: int | None | Keep = KEEP,
        exportRefusal: Literal[400, 413, 422] | Keep = KEEP,
        exportMaxWindowDays: float | None | Keep = KEEP,
        latency: Mapping[str, Any] | Keep = KEEP,
        ackAnswer: Literal["200-empty", "200-record"] | Keep = KEEP,
        userRecord: Literal["published", "legacy"] | Keep = KEEP,
        expiresIn: Literal["integer", "double"] | Keep = KEEP,
        counts: Literal["integer", "double"] | Keep = KEEP,
        codeAssigner: Literal["service", "laurel"] | Keep = KEEP,
        digests: Literal["spec", "published"] | Keep = KEEP,
        batchAck: bool | Keep = KEEP,
        codeRangePost: Literal["replace", "add"] | Keep = KEEP,
        codeRangeMax: int | Keep = KEEP,
    ) -> dict[str, Any]:
        """Set some switches of a customer's profile; the switches not given keep their value.

        The keywords are the switches' JSON names, so a preset applies as
        ``admin.set_profile(**PROFILES["strict"])``. docs/sandbox.md describes each switch.

        Args:
            customer_id: Customer, default the admin's.
            tokenLifetimeSeconds: Lifetime of new tokens (``expires_in``).
            tokenFaults: ``{"rate", "statuses", "retryAfterSeconds"}`` of the token route.
            rateLimit: None, or ``{"kind": "token-bucket", "perSecond", "burst"}``,
                ``{"kind": "fixed-window", "limit", "windowSeconds"}`` or
                ``{"kind": "concurrency", "maxInFlight", "status"}``.
            retryAfter: How 429 and 503 answers carry ``Retry-After``.
            rateLimitHeaders: Rate limit headers on every answer when a limit is set.
            importAnswer: Status and body of the five imports.
            reimport: An import of an existing ``externalId``: update it, or 409.
            errorBody: Body of error answers on the interface routes.
            ackRepeat: Status of acknowledging an entry already in the requested state.
            exportMaxEntries: Most entries an export window may hold (None: no limit).
            exportRefusal: Status refusing a window over ``exportMaxEntries``.
            exportMaxWindowDays: Longest export window in days (None: no limit).
            latency: ``{"p50Ms", "p99Ms", "stallRate", "stallMs"}``.
            ackAnswer: Answer of the acknowledgements: no body, or the entry's state.
            userRecord: Shape of the user record: the identity service's, or the legacy one.
            expiresIn: ``expires_in`` of the token answer: an integer or a double.
            counts: Counts in entries as JSON integers (spec) or doubles (published).
            codeAssigner: ``assignedBy`` of the service's codes: ``service`` or ``laurel``.
            digests: Digests of release-pending as the spec shows them or as published.
            batchAck: Serve the batch release-succeeded route (false: 404).
            codeRangePost: A code range request replaces the range, or adds to it.
            codeRangeMax: Most ids one code range request may carry.

        Returns:
            The whole profile now in force.

        Raises:
            AdminError: Unknown customer (404) or a bad value (422; nothing is changed).

        >>> other = sb.admin.create_customer("Strict firm")["customerId"]
        >>> sb.admin.set_profile(customer_id=other, reimport="conflict")["reimport"]
        'conflict'
        """
        given = {
            "tokenLifetimeSeconds": tokenLifetimeSeconds,
            "tokenFaults": tokenFaults,
            "rateLimit": rateLimit,
            "retryAfter": retryAfter,
            "rateLimitHeaders": rateLimitHeaders,
            "importAnswer": importAnswer,
            "reimport": reimport,
            "errorBody": errorBody,
            "ackRepeat": ackRepeat,
            "exportMaxEntries": exportMaxEntries,
            "exportRefusal": exportRefusal,
            "exportMaxWindowDays": exportMaxWindowDays,
            "latency": latency,
            "ackAnswer": ackAnswer,
            "userRecord": userRecord,
            "expiresIn": expiresIn,
            "counts": counts,
            "codeAssigner": codeAssigner,
            "digests": digests,
            "batchAck": batchAck,
            "codeRangePost": codeRangePost,
            "codeRangeMax": codeRangeMax,
        }
        body = {
            name: dict(value) if isinstance(value, Mapping) else value
            for name, value in given.items()
            if value is not KEEP
        }
        return dict(self._call("PUT", f"/customers/{self._customer(customer_id)}/profile", body))

    def get_profile(self, *, customer_id: str | None = None) -> dict[str, Any]:
        """Return a customer's whole profile, every switch filled in.

        Args:
            customer_id: Customer, default the admin's.

        Returns:
            The profile.

        >>> sb.admin.get_profile()["importAnswer"]
        '201-empty'
        """
        return dict(self._call("GET", f"/customers/{self._customer(customer_id)}/profile"))

    def reset_profile(self, *, customer_id: str | None = None) -> dict[str, Any]:
        """Forget every switch set for a customer: the default profile applies again.

        Args:
            customer_id: Customer, default the admin's.

        Returns:
            The whole profile now in force.

        >>> sb.admin.reset_profile()["reimport"]
        'upsert'
        """
        return dict(self._call("DELETE", f"/customers/{self._customer(customer_id)}/profile"))

    def default_profile(self) -> dict[str, Any]:
        """Return the default profile every customer starts from (the CLI's ``--profile``).

        >>> sb.admin.default_profile()["errorBody"]
        'problem'
        """
        return dict(self._call("GET", "/profile"))

    def stats(self) -> dict[str, Any]:
        """Return interface request counts per ``"METHOD /route/template"``.

        >>> sorted(sb.admin.stats())
        ['routes', 'total']
        """
        return dict(self._call("GET", "/stats"))

    def reset_stats(self) -> dict[str, Any]:
        """Reset the request counts.

        >>> sb.admin.reset_stats()
        {'total': 0, 'routes': {}}
        """
        return dict(self._call("POST", "/stats/reset"))

    def records(self, kind: str, *, customer_id: str | None = None) -> list[dict[str, Any]]:
        """Return every stored record of one kind.

        Args:
            kind: ``clients``, ``initiatives``, ``code-types``, ``codes``, ``code-ranges``,
                ``entries``, ``users`` or ``stars``.
            customer_id: Customer, default the admin's.

        Returns:
            The records, oldest first.

        >>> [c["externalId"] for c in sb.admin.records("clients")][:2]
        ['C-1001', 'C-1002']
        """
        return list(self._call("GET", f"/customers/{self._customer(customer_id)}/records/{kind}"))
