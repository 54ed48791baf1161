"""Authentication: customers, their API clients and secrets, and OAuth access tokens.

The token endpoint's client-credentials grant (:meth:`AuthStore.token`), the bearer check of
every interface route (:meth:`AuthStore.authenticate`) and the product console's action of
creating a customer with one API client. Secrets and tokens are stored as SHA-256 hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from .._exceptions import (
    Forbidden,
    InvalidClient,
    InvalidRequest,
    Unauthorized,
    UnsupportedGrantType,
)
from .core import new_id
from .profiles import ProfileStore

__all__ = ["AuthStore"]

_DUMMY_HASH = hashlib.sha256(b"dummy").hexdigest()


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class AuthStore(ProfileStore):
    """Customers, API clients, secrets and access tokens (the identity service).

    >>> import tempfile, os
    >>> from toolkit.sandbox._store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> customer = store.create_customer("Firm")
    >>> token = store.token(grant_type="client_credentials", client_id=customer["clientId"],
    ...     client_secret=customer["clientSecret"], audience=customer["audience"])
    >>> store.authenticate(token["access_token"]) == customer["customerId"]
    True
    """

    def create_customer(self, name: str | None = None, *, demo: bool = False) -> dict[str, str]:
        """Create a customer with one API client (the product's console action).

        Args:
            name: Display name; a default is made up when missing.
            demo: Mark it as the sandbox's demo customer.

        Returns:
            ``{customerId, clientId, clientSecret, audience}``; the secret is stored hashed
            and shown only here.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> sorted(Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_customer())
        ['audience', 'clientId', 'clientSecret', 'customerId']
        """
        customer_id, client_id = new_id(), new_id()
        secret = secrets.token_urlsafe(32)
        now = self.now_ms()
        with self._tx() as db:
            db.execute(
                "INSERT INTO customers (id, name, demo, created_at) VALUES (?, ?, ?, ?)",
                (customer_id, name or f"Customer {customer_id[:6]}", int(demo), now),
            )
            db.execute(
                "INSERT INTO oauth_clients (client_id, customer_id, created_at) VALUES (?, ?, ?)",
                (client_id, customer_id, now),
            )
            db.execute(
                "INSERT INTO oauth_secrets (client_id, secret_hash, created_at) VALUES (?, ?, ?)",
                (client_id, _hash(secret), now),
            )
        return {
            "customerId": customer_id,
            "clientId": client_id,
            "clientSecret": secret,
            "audience": self.audience,
        }

    def demo_customer(self, name: str = "Demo law firm") -> dict[str, str]:
        """Return credentials of the demo customer, creating it on first use.

        Secrets are stored hashed, so on reuse a new secret is added to the demo client;
        earlier secrets and unexpired tokens stay valid.

        Args:
            name: Name given to a newly created demo customer.

        Returns:
            ``{customerId, clientId, clientSecret, audience}``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> store.demo_customer()["customerId"] == store.demo_customer()["customerId"]
        True
        """
        with self._read() as db:
            row = db.execute(
                "SELECT c.id, o.client_id FROM customers c JOIN oauth_clients o "
                "ON o.customer_id = c.id WHERE c.demo = 1 ORDER BY c.created_at LIMIT 1"
            ).fetchone()
        if row is None:
            return self.create_customer(name, demo=True)
        secret = secrets.token_urlsafe(32)
        with self._tx() as db:
            db.execute(
                "INSERT INTO oauth_secrets (client_id, secret_hash, created_at) VALUES (?, ?, ?)",
                (row["client_id"], _hash(secret), self.now_ms()),
            )
        return {
            "customerId": row["id"],
            "clientId": row["client_id"],
            "clientSecret": secret,
            "audience": self.audience,
        }

    def token(
        self, *, grant_type: str, client_id: str, client_secret: str, audience: str
    ) -> dict[str, Any]:
        """Exchange client credentials for an access token (client-credentials grant).

        Args:
            grant_type: Must be ``client_credentials``.
            client_id: The API client's id.
            client_secret: The API client's secret (compared in constant time).
            audience: Must equal the store's audience.

        Returns:
            ``{access_token, expires_in, token_type}``; the lifetime is the client's customer's
            ``tokenLifetimeSeconds`` (its profile), an integer or, when the profile's
            ``expiresIn`` is ``double``, a float (``86400.0``).

        Raises:
            UnsupportedGrantType: Any other grant type.
            InvalidClient: Unknown client or wrong secret.
            InvalidRequest: Unknown audience.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> c = store.create_customer()
        >>> store.token(grant_type="client_credentials", client_id=c["clientId"],
        ...     client_secret=c["clientSecret"], audience=c["audience"])["token_type"]
        'Bearer'
        """
        if grant_type != "client_credentials":
            raise UnsupportedGrantType("only the client_credentials grant is supported")
        offered = _hash(client_secret)
        with self._read() as db:
            client = db.execute(
                "SELECT customer_id FROM oauth_clients WHERE client_id = ?", (client_id,)
            ).fetchone()
            hashes = [
                r["secret_hash"]
                for r in db.execute(
                    "SELECT secret_hash FROM oauth_secrets WHERE client_id = ?", (client_id,)
                )
            ]
        matched = False
        for stored in hashes or [_DUMMY_HASH]:
            matched |= hmac.compare_digest(stored, offered)
        if client is None or not matched:
            raise InvalidClient("client authentication failed")
        if not hmac.compare_digest(audience.encode(), self.audience.encode()):
            raise InvalidRequest(f"unknown audience {audience!r}")
        token = secrets.token_urlsafe(32)
        profile = self.profile(client["customer_id"])
        lifetime = int(profile["tokenLifetimeSeconds"])
        with self._tx() as db:
            db.execute(
                "INSERT INTO tokens (token_hash, customer_id, client_id, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (_hash(token), client["customer_id"], client_id, self.now_ms() + lifetime * 1000),
            )
        expires_in = float(lifetime) if profile["expiresIn"] == "double" else lifetime
        return {"access_token": token, "expires_in": expires_in, "token_type": "Bearer"}

    def client_customer(self, client_id: str) -> str | None:
        """Return the customer an API client belongs to, or None for an unknown client.

        No secret is checked: the token route uses it to pick the profile whose
        ``tokenFaults`` apply, before the credentials are.

        Args:
            client_id: The API client's id.

        Returns:
            The customer id, or None.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> c = store.create_customer()
        >>> store.client_customer(c["clientId"]) == c["customerId"], store.client_customer("x")
        (True, None)
        """
        with self._read() as db:
            row = db.execute(
                "SELECT customer_id FROM oauth_clients WHERE client_id = ?", (client_id,)
            ).fetchone()
        return None if row is None else str(row["customer_id"])

    def authenticate(self, token: str | None, customer_id: str | None = None) -> str:
        """Return the customer of a bearer token, checking the path's customer.

        Args:
            token: The bearer token, or None when the header was missing.
            customer_id: The ``customerId`` of the request path, if any.

        Returns:
            The token's customer id.

        Raises:
            Unauthorized: Missing, unknown or expired token.
            Forbidden: The token belongs to another customer than ``customer_id``.

        >>> import tempfile, os
        >>> from toolkit.sandbox._store import Store
        >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).authenticate("nope")
        Traceback (most recent call last):
        ...
        toolkit.sandbox._exceptions.Unauthorized: unknown or expired access token
        """
        if not token:
            raise Unauthorized("missing bearer token", error=None)
        digest = _hash(token)
        with self._read() as db:
            row = db.execute(
                "SELECT token_hash, customer_id, expires_at FROM tokens WHERE token_hash = ?",
                (digest,),
            ).fetchone()
        if (
            row is None
            or not hmac.compare_digest(row["token_hash"], digest)
            or row["expires_at"] <= self.now_ms()
        ):
            raise Unauthorized("unknown or expired access token")
        if customer_id is not None and customer_id != row["customer_id"]:
            raise Forbidden("the access token belongs to another customer", slug="wrong-customer")
        return str(row["customer_id"])
