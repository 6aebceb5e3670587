"""Streams of unlabeled images per model (``POST /v1/models/{id}/observe``, issue 18).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "observations",
        sa.Column("model_id", sa.String(32),
                  sa.ForeignKey("personalized_models.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("k", sa.Integer(), nullable=True),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.Column("images_seen", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("observations")
