"""Model rows belong to an owner; one recipe may back many owners' rows.

Adds ``personalized_models.owner`` (back-filled from ``created_by``, the client whose key made
the row; rows without one were made by the admin key and stay admin-only as ``@admin``), drops
the uniqueness of ``recipe_key`` (each owner gets its own row and id for the same recipe) and
indexes what listing and deletion look up.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "personalized_models"
ADMIN_OWNER = "@admin"  # service.core.auth.ADMIN_OWNER (migrations never import the service)
NAMING = {"uq": "uq_%(table_name)s_%(column_0_name)s"}


def _old_unique_constraint() -> str | None:
    """The name the database gave ``UNIQUE (recipe_key)`` (PostgreSQL names it; SQLite not)."""
    for uc in sa.inspect(op.get_bind()).get_unique_constraints(TABLE):
        if uc["column_names"] == ["recipe_key"]:
            return uc["name"]
    return None


def upgrade() -> None:
    # SQLite cannot drop a constraint in place: batch mode copies the table, and the naming
    # convention gives its reflected, unnamed UNIQUE a name to drop (alembic's documented way).
    name = _old_unique_constraint() or "uq_personalized_models_recipe_key"
    with op.batch_alter_table(TABLE, naming_convention=NAMING) as batch:
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))
        batch.drop_constraint(name, type_="unique")
    op.execute(sa.text(f"UPDATE {TABLE} SET owner = COALESCE(created_by, :admin)")
               .bindparams(admin=ADMIN_OWNER))  # fmt: skip
    with op.batch_alter_table(TABLE) as batch:
        batch.alter_column("owner", existing_type=sa.String(64), nullable=False)
    op.create_index("ix_personalized_models_recipe_key", TABLE, ["recipe_key"])
    op.create_index("ix_personalized_models_owner_created", TABLE, ["owner", "created_at", "id"])


def downgrade() -> None:
    shared = op.get_bind().scalar(sa.text(
        f"SELECT COUNT(*) FROM (SELECT recipe_key FROM {TABLE} GROUP BY recipe_key "
        "HAVING COUNT(*) > 1) AS d"))  # fmt: skip
    if shared:  # one row per recipe again would mean deleting owners' rows: refuse instead
        raise RuntimeError(f"{shared} recipes are shared by several owners' rows; downgrading "
                           "below 0002 would lose rows (delete them first if you mean it)")
    op.drop_index("ix_personalized_models_owner_created", TABLE)
    op.drop_index("ix_personalized_models_recipe_key", TABLE)
    with op.batch_alter_table(TABLE, naming_convention=NAMING) as batch:
        batch.drop_column("owner")
        batch.create_unique_constraint("uq_personalized_models_recipe_key", ["recipe_key"])
