"""TAPER weights now describe themselves: forget digests of the old, metadata-less bytes.

The safetensors of a TAPER model gained a ``__metadata__`` header (class names, preprocessing,
method, artifact), so its bytes and sha256 changed. Recorded digests of the old bytes would no
longer match what is served; clearing them makes the next build or download record the new
digest (the Redis namespace changed with it, so no old blob is served under a new digest).
Recipes are untouched: the tensors are bit-identical.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _forget_taper_digests() -> None:
    op.execute(sa.text("UPDATE personalized_models SET weights_sha256 = NULL, "
                       "weights_bytes = NULL WHERE kind = 'taper'"))  # fmt: skip


def upgrade() -> None:
    _forget_taper_digests()


def downgrade() -> None:
    _forget_taper_digests()  # the older service writes metadata-less bytes again
