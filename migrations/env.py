"""Alembic environment: the URL comes from the service settings (``TAILOR_DATABASE_URL``).

Programmatic callers (``service.core.db.upgrade``) set ``sqlalchemy.url`` on the config; the plain
``alembic`` command line falls back to :class:`service.core.settings.Settings`.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

from service.core.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from service.core.settings import Settings

    return Settings().database_url


def run_migrations_offline() -> None:
    """Emit SQL to stdout (``alembic upgrade head --sql``)."""
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Apply migrations over a fresh connection (NullPool: nothing lingers afterwards)."""
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            # Several replicas/workers may start at once: one migrates, the rest wait here and
            # then find the schema at head (the lock is released when the connection closes).
            connection.execute(text("SELECT pg_advisory_lock(7400315)"))
            connection.commit()
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
