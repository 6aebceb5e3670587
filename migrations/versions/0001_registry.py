"""Registry: artifacts, clients, api keys, personalized models.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "artifacts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("manifest_sha256", sa.String(64), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("registered_at", TZ, nullable=False),
        sa.UniqueConstraint("kind", "version", name="uq_artifacts_kind_version"),
    )
    op.create_table(
        "clients",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column(
            "client_id",
            sa.String(64),
            sa.ForeignKey("clients.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("salt", sa.String(64), nullable=False),
        sa.Column("secret_hash", sa.String(128), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("revoked_at", TZ, nullable=True),
    )
    op.create_index("ix_api_keys_client_id", "api_keys", ["client_id"])
    op.create_table(
        "personalized_models",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("recipe_key", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("method", sa.String(32), nullable=False),
        sa.Column("artifact_version", sa.String(64), nullable=False),
        sa.Column("recipe", sa.JSON(), nullable=False),
        sa.Column("mixers", sa.JSON(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("parent_id", sa.String(32), nullable=True),
        sa.Column("weights_sha256", sa.String(64), nullable=True),
        sa.Column("weights_bytes", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index(
        "ix_personalized_models_artifact_version", "personalized_models", ["artifact_version"]
    )


def downgrade() -> None:
    op.drop_index("ix_personalized_models_artifact_version", "personalized_models")
    op.drop_table("personalized_models")
    op.drop_index("ix_api_keys_client_id", "api_keys")
    op.drop_table("api_keys")
    op.drop_table("clients")
    op.drop_table("artifacts")
