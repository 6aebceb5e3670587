"""Keyword-only CRUD over the registry tables. Callers own the session and its transaction."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service import auth
from service.models import ApiKey, Artifact, Client, PersonalizedModel, utcnow


def create_client(session: Session, *, name: str, client_id: str | None = None) -> Client:
    """Insert a client; ``client_id`` defaults to a random ``c_<hex>`` id."""
    client = Client(id=client_id or f"c_{secrets.token_hex(8)}", name=name)
    session.add(client)
    session.flush()
    return client


def ensure_client(session: Session, *, client_id: str, name: str) -> bool:
    """Insert a client unless it exists (an existing row, its name and keys stay as they are).

    Safe when replicas start at once: a concurrent insert of the same id is the same client.
    Returns True when this call created the row.
    """
    if session.get(Client, client_id) is not None:
        return False
    try:
        with session.begin_nested():
            session.add(Client(id=client_id, name=name))
    except IntegrityError:
        if session.get(Client, client_id) is None:
            raise
        return False
    return True


def get_client(session: Session, *, client_id: str) -> Client | None:
    """Look a client up by id."""
    return session.get(Client, client_id)


def create_api_key(session: Session, *, client_id: str) -> tuple[ApiKey, str]:
    """Create a key for ``client_id``; returns the row and the plaintext (shown exactly once)."""
    new = auth.generate_key()
    row = ApiKey(key_id=new.key_id, client_id=client_id, salt=new.salt, secret_hash=new.secret_hash)
    session.add(row)
    session.flush()
    return row, new.plaintext


def authenticate(session: Session, *, plaintext: str) -> auth.Principal | None:
    """Resolve a presented key to its client, or None if unknown, revoked or wrong."""
    parts = auth.split_key(plaintext)
    if parts is None:
        return None
    row = session.get(ApiKey, parts[0])
    if row is None or row.revoked_at is not None:
        return None
    if not auth.verify_secret(parts[1], salt=row.salt, secret_hash=row.secret_hash):
        return None
    return auth.Principal(client_id=row.client_id)


def revoke_api_key(session: Session, *, key_id: str) -> bool:
    """Mark a key revoked; False if it does not exist or was already revoked (first time kept)."""
    row = session.get(ApiKey, key_id)
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = utcnow()
    return True


def register_artifact(
    session: Session, *, kind: str, version: str, manifest_sha256: str, metrics: dict[str, Any]
) -> Artifact:
    """Record an artifact version (idempotent: returns the existing row when present).

    Every worker of every replica runs this in its lifespan, so on a fresh registry several
    insert the same row at once; the losers take the winner's row instead of failing start-up.
    """
    stmt = select(Artifact).where(Artifact.kind == kind, Artifact.version == version)
    row = session.scalars(stmt).first()
    if row is None:
        row = Artifact(kind=kind, version=version, manifest_sha256=manifest_sha256, metrics=metrics)
        try:
            with session.begin_nested():
                session.add(row)
        except IntegrityError:
            row = session.scalars(stmt).first()
            if row is None:
                raise
    return row


def recipe_key(recipe: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of everything that determines a model (its content address)."""
    canonical = json.dumps(recipe, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def get_model(session: Session, *, model_id: str) -> PersonalizedModel | None:
    """Look a personalized model up by its public id."""
    return session.get(PersonalizedModel, model_id)


def save_model(session: Session, *, row: PersonalizedModel) -> PersonalizedModel:
    """Insert a recipe row unless one with the same id already exists (concurrent replicas).

    Recipes are content-addressed, so a duplicate insert from another replica is the same row:
    the existing one wins and is returned.
    """
    existing = session.get(PersonalizedModel, row.id)
    if existing is not None:
        return existing
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        existing = session.get(PersonalizedModel, row.id)
        if existing is None:
            raise
        return existing
    return row


def set_weights_digest(session: Session, *, model_id: str, sha256: str, size: int) -> None:
    """Record the sha256 and size of a model's fp32 safetensors (first serialization wins)."""
    row = session.get(PersonalizedModel, model_id)
    if row is not None and row.weights_sha256 is None:
        row.weights_sha256 = sha256
        row.weights_bytes = size
