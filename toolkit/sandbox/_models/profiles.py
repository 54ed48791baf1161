"""Profiles: per-customer switches for what the spec leaves open (:mod:`toolkit.sandbox._profiles`).

Each customer's profile is the sandbox's default profile overlaid with the switches set for
the customer. The switches set are kept in the ``profiles`` table (one JSON object per
customer), so they survive a restart; the default profile (``Store(profile=...)``, the CLI's
``--profile``) is configuration, given at each start. Setting switches merges them into the
customer's: the switches not given keep their value.

The parts whose rules a profile changes (auth, ingress, egress) build on :class:`ProfileStore`
and read :meth:`ProfileStore.profile`, which is cached: the middleware reads it on every
interface request.
"""

from __future__ import annotations

import copy
import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .._bodies import empty_values, unknown_fields
from .._exceptions import Unprocessable
from .._profiles import ProfileError, merge_profile, validate_profile
from .core import DEFAULT_AUDIENCE, DEFAULT_TOKEN_TTL, Clock, StoreCore

__all__ = ["ProfileStore", "refuse_body"]

_CACHE_LIMIT = 10_000
"""Cached profiles kept at most (ids that name no customer are cached too)."""


def _checked(switches: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return validate_profile(switches)
    except ProfileError as exc:
        raise Unprocessable(str(exc), slug="invalid-profile", errors=exc.errors) from None


def refuse_body(body: BaseModel, *, empty: bool = True, unknown: bool = True) -> None:
    """Refuse what a body holds that the sandbox refuses by default though the published
    documents allow it: empty values (``emptyValues``) and unknown fields (``unknownFields``).

    Args:
        body: A validated request body.
        empty: Refuse an empty identifier or list (:func:`~toolkit.sandbox._bodies.empty_values`).
        unknown: Refuse a field the body does not declare
            (:func:`~toolkit.sandbox._bodies.unknown_fields`).

    Raises:
        Unprocessable: Naming every such value or field.

    >>> from toolkit.sandbox._bodies import CodeRangeIn
    >>> refuse_body(CodeRangeIn(codeExternalIds=["L1", ""], codeExternalID=["L2"]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    toolkit.sandbox._exceptions.Unprocessable: invalid request: body.codeExternalIds.1, ...
    """
    errors = [(path, "may not be empty") for path in empty_values(body) if empty]
    errors += [(path, "Extra inputs are not permitted") for path in unknown_fields(body) if unknown]
    if errors:
        raise Unprocessable(
            "invalid request: " + ", ".join(f"body.{path}" for path, _ in errors),
            slug="validation-failed",
            errors=[{"in": "body", "field": path, "detail": detail} for path, detail in errors],
        )


class ProfileStore(StoreCore):
    """The profile of each customer, over the sandbox's default profile.

    Args:
        path: SQLite file; created with its schema when missing, reused as is otherwise.
        token_ttl: ``tokenLifetimeSeconds`` of the default profile (unless ``profile`` sets it).
        audience: The audience the token endpoint requires.
        clock: Source of "now" (an aware datetime).
        profile: Switches of the default profile, which every customer starts from.

    Raises:
        Unprocessable: ``profile`` holds an unknown switch or a bad value.

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"), profile={"ackRepeat": "409"})
    >>> cid = store.create_customer()["customerId"]
    >>> store.set_profile(cid, {"reimport": "conflict"})["ackRepeat"]
    '409'
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        token_ttl: int = DEFAULT_TOKEN_TTL,
        audience: str = DEFAULT_AUDIENCE,
        clock: Clock | None = None,
        profile: Mapping[str, Any] | None = None,
    ) -> None:
        self._default_switches = _checked(profile or {})
        super().__init__(path, token_ttl=token_ttl, audience=audience, clock=clock)
        self._profiles: dict[str | None, dict[str, Any]] = {}
        self._profiles_lock = threading.Lock()

    def check_body(self, customer_id: str, body: BaseModel) -> None:
        """Refuse a body's empty identifiers and lists and its unknown fields, as the
        customer's profile says (``emptyValues``, ``unknownFields``; :func:`refuse_body`).

        Args:
            customer_id: The customer.
            body: A validated request body.

        Raises:
            Unprocessable: An empty value under ``emptyValues: refuse``, or an unknown field
                under ``unknownFields: refuse`` (the defaults).

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> from toolkit.sandbox._bodies import AckFailedIn
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> taken = store.set_profile(cid, {"emptyValues": "accept", "unknownFields": "ignore"})
        >>> store.check_body(cid, AckFailedIn(errors=[], note="x"))  # accepted: no error
        """
        profile = self.profile(customer_id)
        refuse_body(
            body,
            empty=profile["emptyValues"] == "refuse",
            unknown=profile["unknownFields"] == "refuse",
        )

    def profile(self, customer_id: str | None) -> dict[str, Any]:
        """Return the whole profile in force for a customer (cached; treat it as read-only).

        An id that names no customer, or None, gets the default profile. Never raises.

        Args:
            customer_id: The customer, or None.

        Returns:
            Every switch.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).profile(None)["reimport"]
        'upsert'
        """
        cached = self._profiles.get(customer_id)
        if cached is not None:
            return cached
        with self._profiles_lock:
            # a writer invalidates under this lock after its commit: what is read here and
            # cached is never older than the last invalidation
            switches = self._stored_switches(customer_id) if customer_id else {}
            built = merge_profile(
                {"tokenLifetimeSeconds": self.token_ttl}, self._default_switches, switches
            )
            if len(self._profiles) >= _CACHE_LIMIT:
                self._profiles.clear()
            self._profiles[customer_id] = built
        return built

    def get_profile(self, customer_id: str) -> dict[str, Any]:
        """Return a customer's whole profile, every switch filled in.

        Args:
            customer_id: The customer.

        Returns:
            A copy of every switch.

        Raises:
            NotFound: Unknown customer.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.get_profile(store.create_customer()["customerId"])["tokenLifetimeSeconds"]
        86400
        """
        with self._read() as db:
            self._require_customer(db, customer_id)
        return copy.deepcopy(self.profile(customer_id))

    def set_profile(self, customer_id: str, switches: Mapping[str, Any]) -> dict[str, Any]:
        """Set some switches of a customer's profile; the others keep their value.

        A nested switch (``tokenFaults``, ``rateLimit``, ``latency``) is replaced whole.

        Args:
            customer_id: The customer.
            switches: Switches by their JSON names (see :class:`toolkit.sandbox._profiles.Profile`).

        Returns:
            The whole profile now in force.

        Raises:
            NotFound: Unknown customer.
            Unprocessable: An unknown switch or a bad value (``errors`` lists each); nothing
                is changed.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> store.set_profile(cid, {"errorBody": "text"})["errorBody"]
        'text'
        >>> store.set_profile(cid, {"errorBody": "xml"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.Unprocessable: invalid profile: errorBody: Input should be ...
        """
        changes = _checked(switches)
        with self._tx() as db:
            self._require_customer(db, customer_id)
            row = db.execute(
                "SELECT switches FROM profiles WHERE customer_id = ?", (customer_id,)
            ).fetchone()
            stored = {**(json.loads(row["switches"]) if row else {}), **changes}
            db.execute(
                "INSERT INTO profiles (customer_id, switches, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (customer_id) DO UPDATE SET switches = excluded.switches, "
                "updated_at = excluded.updated_at",
                (customer_id, json.dumps(stored), self.now_ms()),
            )
        self._forget(customer_id)
        return copy.deepcopy(self.profile(customer_id))

    def reset_profile(self, customer_id: str) -> dict[str, Any]:
        """Forget every switch set for a customer: the default profile applies again.

        Args:
            customer_id: The customer.

        Returns:
            The whole profile now in force.

        Raises:
            NotFound: Unknown customer.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> cid = store.create_customer()["customerId"]
        >>> _ = store.set_profile(cid, {"reimport": "conflict"})
        >>> store.reset_profile(cid)["reimport"]
        'upsert'
        """
        with self._tx() as db:
            self._require_customer(db, customer_id)
            db.execute("DELETE FROM profiles WHERE customer_id = ?", (customer_id,))
        self._forget(customer_id)
        return copy.deepcopy(self.profile(customer_id))

    def default_profile(self) -> dict[str, Any]:
        """Return the default profile: what a customer without switches of its own gets.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).default_profile()["errorBody"]
        'problem'
        """
        return copy.deepcopy(self.profile(None))

    def set_default_profile(self, switches: Mapping[str, Any]) -> dict[str, Any]:
        """Set some switches of the default profile (kept in memory, not in the file).

        Every customer sees the change, except in the switches set for it.

        Args:
            switches: Switches by their JSON names.

        Returns:
            The whole default profile now.

        Raises:
            Unprocessable: An unknown switch or a bad value.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.set_default_profile({"importAnswer": "204"})["importAnswer"]
        '204'
        """
        changes = _checked(switches)
        with self._profiles_lock:
            self._default_switches = {**self._default_switches, **changes}
            self._profiles.clear()
        return self.default_profile()

    def _forget(self, customer_id: str) -> None:
        with self._profiles_lock:
            self._profiles.pop(customer_id, None)

    def _stored_switches(self, customer_id: str) -> dict[str, Any]:
        with self._read() as db:
            row = db.execute(
                "SELECT switches FROM profiles WHERE customer_id = ?", (customer_id,)
            ).fetchone()
        return dict(json.loads(row["switches"])) if row else {}
