"""Database engine and schema migrations (Alembic, programmatic).

The lifespan calls :func:`prepare_database`: it upgrades to ``head`` or, when migrations on start
are disabled, refuses an out-of-date schema. ``create_all`` is never used outside tests of the
migrations themselves, so the schema in production is always the one Alembic produced.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


class SchemaOutOfDateError(RuntimeError):
    """The database is not at the code's Alembic head and migrating on start is disabled."""


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets a busy timeout and WAL so threads don't trip on locks."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (None for in-memory databases)."""
    if "///" not in url:  # ``sqlite://`` is an in-memory database
        return None
    path = url.split("///", 1)[1].split("?", 1)[0]
    if not path or path == ":memory:" or "mode=memory" in url:
        return None
    return Path(path).expanduser()


def _ensure_sqlite_dir(url: str) -> None:
    path = _sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


@contextmanager
def _migration_lock(url: str) -> Iterator[None]:
    """Serialise migrations of one SQLite file across processes.

    ``tailor serve --workers N`` starts N lifespans at once and each runs ``upgrade``. SQLite DDL
    is not transactional under Alembic, so two workers racing on a fresh file both try
    ``CREATE TABLE`` and one dies with "table already exists" (which makes uvicorn stop the
    whole server). An exclusive ``flock`` on a sidecar file makes the others wait and then find
    the schema at head. PostgreSQL takes an advisory lock in ``migrations/env.py`` instead.
    """
    path = _sqlite_file(url) if url.startswith("sqlite") else None
    if path is None:
        yield
        return
    with path.with_name(path.name + ".migrate.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file is closed, even on a crash
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def alembic_config(url: str) -> Config:
    """An Alembic config that works from any working directory (absolute script location)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head_revision(url: str) -> str | None:
    """The newest revision in ``migrations/versions``."""
    return ScriptDirectory.from_config(alembic_config(url)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision stamped in the database (None for an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(url: str, revision: str = "head") -> None:
    """Run ``alembic upgrade`` programmatically (the CLI's ``migrate`` and the lifespan use it)."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
    with _migration_lock(url):
        command.upgrade(alembic_config(url), revision)


def prepare_database(url: str, *, migrate: bool) -> Engine:
    """Bring the schema to head (or refuse an old one) and return a ready engine.

    Raises:
        SchemaOutOfDateError: ``migrate`` is False and the database is not at head.
    """
    if migrate:
        upgrade(url)
    engine = make_engine(url)
    current, head = current_revision(engine), head_revision(url)
    if current != head:
        engine.dispose()
        raise SchemaOutOfDateError(
            f"database schema is at {current!r} but the code needs {head!r}: "
            "run `tailor migrate` (alembic upgrade head) or set TAILOR_MIGRATE_ON_START=1"
        )
    return engine
