"""Keyword-only CRUD over the registry tables. Callers own the session and its transaction."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.core import auth
from service.core.models import ApiKey, Artifact, Client, PersonalizedModel, utcnow


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
    """Insert an owner's row unless it exists (the same request again, or from another replica).

    A recipe another owner's row already has a digest for starts with that digest, so its ETag
    is known without serialising the weights again.
    """
    existing = session.get(PersonalizedModel, row.id)
    if existing is not None:
        return existing
    known = session.execute(
        select(PersonalizedModel.weights_sha256, PersonalizedModel.weights_bytes)
        .where(PersonalizedModel.recipe_key == row.recipe_key,
               PersonalizedModel.weights_sha256.is_not(None)).limit(1)
    ).first()  # fmt: skip
    if known is not None:
        row.weights_sha256, row.weights_bytes = known
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        existing = session.get(PersonalizedModel, row.id)
        if existing is None:
            raise
        return existing
    return row


def set_weights_digest(session: Session, *, recipe_key: str, sha256: str, size: int) -> None:
    """Record the sha256 and size of a recipe's fp32 safetensors on every row of that recipe
    that has none yet (the first serialization wins; the bytes are the same for every owner)."""
    session.execute(
        update(PersonalizedModel)
        .where(PersonalizedModel.recipe_key == recipe_key,
               PersonalizedModel.weights_sha256.is_(None))
        .values(weights_sha256=sha256, weights_bytes=size)
    )  # fmt: skip


def delete_model(session: Session, *, model_id: str) -> bool:
    """Delete one row; True when no other row uses its recipe any more (its bytes may go)."""
    row = session.get(PersonalizedModel, model_id)
    if row is None:
        return False
    key = row.recipe_key
    session.delete(row)
    session.flush()
    others = select(PersonalizedModel.id).where(PersonalizedModel.recipe_key == key).limit(1)
    return session.execute(others).first() is None


def list_models(
    session: Session, *, owner: str | None, kind: str | None, limit: int, cursor: str | None
) -> tuple[list[PersonalizedModel], str | None]:
    """Rows newest first (``owner`` None: every owner's), at most ``limit``, and the cursor of
    the next page (None on the last). Keyset pagination on ``(created_at, id)``: stable while
    rows are added or deleted, and one index range scan per page however deep."""
    stmt = select(PersonalizedModel)
    if owner is not None:
        stmt = stmt.where(PersonalizedModel.owner == owner)
    if kind is not None:
        stmt = stmt.where(PersonalizedModel.kind == kind)
    if cursor is not None:
        at, last_id = decode_cursor(cursor)
        stmt = stmt.where(tuple_(PersonalizedModel.created_at, PersonalizedModel.id)
                          < tuple_(at, last_id))  # fmt: skip
    order = (PersonalizedModel.created_at.desc(), PersonalizedModel.id.desc())
    rows = list(session.scalars(stmt.order_by(*order).limit(limit + 1)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode_cursor(rows[-1].created_at, rows[-1].id)


def encode_cursor(at: datetime, model_id: str) -> str:
    """An opaque page cursor: where the previous page ended."""
    raw = json.dumps([_utc(at).isoformat(), model_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The position a cursor names; ValueError when it is not one of ours."""
    try:
        at, model_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return _utc(datetime.fromisoformat(at)), str(model_id)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ValueError(f"not a page cursor: {cursor[:40]!r}") from exc


def _utc(at: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC): compare everything as aware UTC."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
