"""SQL registry tables (SQLAlchemy 2.0 declarative). Schema changes go through Alembic.

The registry is the durable half of the cache: a personalized model's *recipe* is enough to
rebuild its weights bit-identically on any replica after Redis evicts them, so the weights
themselves never live in SQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)  # fmt: skip
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Timezone-aware now, so SQLite and PostgreSQL rows compare the same way."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base; ``Base.metadata`` is Alembic's target."""


class Artifact(Base):
    """A model artifact version the service has served (kind ``taper``; adapters later)."""

    __tablename__ = "artifacts"
    __table_args__ = (UniqueConstraint("kind", "version", name="uq_artifacts_kind_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(64))
    manifest_sha256: Mapped[str] = mapped_column(String(64))
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Client(Base):
    """An API consumer (an app, a hospital, a device fleet); federated clients reuse this row."""

    __tablename__ = "clients"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ApiKey(Base):
    """A client's API key, stored only as a salted hash; ``key_id`` is the public lookup half."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    client_id: Mapped[str] = mapped_column(ForeignKey("clients.id", ondelete="CASCADE"), index=True)
    salt: Mapped[str] = mapped_column(String(64))
    secret_hash: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class PersonalizedModel(Base):
    """A personalized model's recipe: everything that determines its weights, plus their sha256.

    ``recipe_key`` is the sha256 of the canonical recipe JSON (the content address of the
    weights, shared by every owner who asked for the same thing); ``id`` hashes the owner with
    it, so the same request from the same owner maps to the same id on every replica, and two
    owners never share an id. ``owner`` is the client of the key that made the row, or
    ``@admin`` (rows from before ownership existed and had no recorded client: admin only).
    """

    __tablename__ = "personalized_models"
    __table_args__ = (Index("ix_personalized_models_owner_created", "owner", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    recipe_key: Mapped[str] = mapped_column(String(64), index=True)
    owner: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    method: Mapped[str] = mapped_column(String(32))
    artifact_version: Mapped[str] = mapped_column(String(64), index=True)
    recipe: Mapped[dict[str, Any]] = mapped_column(JSON)
    mixers: Mapped[list[list[float]] | None] = mapped_column(JSON, nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    parent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    weights_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    weights_bytes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Observation(Base):
    """A model's stream of unlabeled images (``/observe``): bounded, decaying statistics.

    ``state`` holds, per kept image, its weight and the all-class model's class (and domain)
    posteriors as float16 (``service.kinds.unlabeled``; ~70 bytes an image). Workers update it
    optimistically: an UPDATE succeeds only at the ``revision`` it read, so two workers' calls
    never lose each other's images. ``k`` is the number of classes the stream keeps (null: it
    is estimated, for models made from images alone). Deleted with its model.
    """

    __tablename__ = "observations"

    model_id: Mapped[str] = mapped_column(
        ForeignKey("personalized_models.id", ondelete="CASCADE"), primary_key=True)
    k: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state: Mapped[bytes] = mapped_column(LargeBinary)
    images_seen: Mapped[int] = mapped_column(Integer, default=0)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
