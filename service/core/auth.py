"""API keys: generation, salted hashing, verification.

A key looks like ``tlr_<key_id>_<secret>``. Only ``key_id`` (for lookup), a per-key random salt
and ``sha256(salt || secret)`` are stored. The secret carries 256 bits of entropy, so a fast
salted hash is as safe as a slow KDF here (nothing to brute-force) and keeps per-request
verification in microseconds. The admin key from settings is compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

PREFIX = "tlr"


@dataclass(frozen=True)
class NewKey:
    """A freshly generated key: ``plaintext`` is shown once; the rest is what gets stored."""

    key_id: str
    salt: str
    secret_hash: str
    plaintext: str


ADMIN_OWNER = "@admin"  # client ids never start with "@" (schemas.KeyCreate), so it cannot collide


@dataclass(frozen=True)
class Principal:
    """Who is calling: a client (by id) or the admin."""

    client_id: str | None
    is_admin: bool = False

    @property
    def owner(self) -> str:
        """The owner recorded on the models this caller makes: its client (every key of one
        client sees the same models, so rotating a key loses none), or :data:`ADMIN_OWNER`."""
        return ADMIN_OWNER if self.client_id is None else self.client_id

    def can_read(self, owner: str) -> bool:
        """Owners read their own models; the admin reads every model."""
        return self.is_admin or owner == self.owner


def hash_secret(secret: str, salt: str) -> str:
    """``sha256(salt || secret)`` as hex; the salt makes equal secrets hash differently."""
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode()).hexdigest()


def generate_key() -> NewKey:
    """Create a new random key and its storable hash."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return NewKey(key_id, salt, hash_secret(secret, salt), f"{PREFIX}_{key_id}_{secret}")


def split_key(plaintext: str) -> tuple[str, str] | None:
    """Split ``tlr_<key_id>_<secret>``; None when the shape is wrong (no DB lookup needed)."""
    parts = plaintext.split("_", 2)
    if len(parts) != 3 or parts[0] != PREFIX or len(parts[1]) != 16 or not parts[2]:
        return None
    return parts[1], parts[2]


def verify_secret(secret: str, *, salt: str, secret_hash: str) -> bool:
    """Constant-time comparison of the presented secret against the stored hash."""
    return hmac.compare_digest(hash_secret(secret, salt), secret_hash)


def is_admin_key(presented: str, admin_key: str | None) -> bool:
    """True when ``presented`` equals the configured admin key (constant time)."""
    if not admin_key:
        return False
    return hmac.compare_digest(presented.encode(), admin_key.encode())
