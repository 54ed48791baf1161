"""A small client of the sandbox's administration routes (``/sandbox/v1``).

These routes stand in for what users do inside the product (create users, time entries,
release them, wall initiatives off) and for test controls (faults, profiles, request counts,
stored records). They are not part of the interface.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import requests
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ._faults import FaultSettings
from ._profiles import Profile

__all__ = ["KEEP", "Admin", "AdminError", "Keep"]


class Keep(enum.Enum):
    """The type of :data:`KEEP`: a profile switch left as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP
"""A switch given to :meth:`Admin.set_profile` as ``KEEP`` is left as it is (as one not given)."""


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


def _by_json_name(
    call: str,
    model: type[BaseModel],
    given: Mapping[str, Any],
    *,
    spell: Callable[[str], str] = str,
) -> dict[str, Any]:
    """The keyword arguments ``given`` as a JSON body of ``model``'s members, named by
    ``spell(keyword)``; an unknown one is a ``TypeError``, as for any unknown keyword, and
    a :data:`KEEP` value is left out."""
    for name in given:
        if spell(name) not in model.model_fields:
            raise TypeError(f"{call}() got an unexpected keyword argument {name!r}")
    return {
        spell(name): dict(value) if isinstance(value, Mapping) else value
        for name, value in given.items()
        if value is not KEEP
    }


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
    toolkit.sandbox._admin.AdminError: GET /sandbox/v1/stats -> None: ConnectionError
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

    def set_faults(self, **settings: Any) -> dict[str, Any]:
        """Set fault injection on the interface routes (replaces all settings).

        Args:
            **settings: The settings of :class:`toolkit.sandbox._faults.FaultSettings` in snake
                case (their one declaration gives each one's bounds, default and meaning;
                docs/sandbox.md, "Faults", has the table): ``rate``, the fraction of requests
                answered with one of ``statuses`` (429, 500, 503) before any work, with
                ``retry_after_seconds`` as the ``Retry-After`` of 429 and 503;
                ``latency_ms``, a delay added to every interface request;
                ``item_error_rate``, the fraction of star/unstar items answered 500 (not
                applied); ``seed``, for repeatable runs. Those left out take their defaults
                (off).

        Returns:
            The settings and counters.

        Raises:
            TypeError: An unknown setting (nothing is sent).
            AdminError: A bad value (422).

        >>> sb.admin.set_faults(rate=0.2, statuses=[503], seed=7)["rate"]
        0.2
        >>> sb.admin.clear_faults()["rate"]
        0.0
        """
        body = _by_json_name("set_faults", FaultSettings, settings, spell=to_camel)
        return dict(self._call("PUT", "/faults", body))

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

    def set_profile(self, *, customer_id: str | None = None, **switches: Any) -> dict[str, Any]:
        """Set some switches of a customer's profile; the switches not given keep their value.

        The keywords are the switches' JSON names, so a preset applies as
        ``admin.set_profile(**PROFILES["strict"])``. Their one declaration,
        :class:`toolkit.sandbox._profiles.Profile`, gives each switch's settings, default,
        published value and meaning (``toolkit sandbox --help`` lists them;
        docs/sandbox.md, "Switches", describes each at length). A switch given as
        :data:`KEEP` is left as it is.

        Args:
            customer_id: Customer, default the admin's.
            **switches: Switches by their JSON names, for example ``reimport="conflict"``,
                ``latency={"p50Ms": 20}`` or ``rateLimit=None``; a nested switch
                (``tokenFaults``, ``rateLimit``, ``latency``) is replaced whole.

        Returns:
            The whole profile now in force.

        Raises:
            TypeError: An unknown switch (nothing is sent).
            AdminError: Unknown customer (404) or a bad value (422; nothing is changed).

        >>> other = sb.admin.create_customer("Strict firm")["customerId"]
        >>> sb.admin.set_profile(customer_id=other, reimport="conflict")["reimport"]
        'conflict'
        """
        body = _by_json_name("set_profile", Profile, switches)
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
