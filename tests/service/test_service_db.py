"""Registry tests against real SQLite and real PostgreSQL: migrations, keys, recipes."""

from __future__ import annotations

import secrets

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from service.core import crud, db
from service.core.models import ApiKey, PersonalizedModel


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/registry.db"
    server = request.getfixturevalue("postgres_server")
    return server.create_database(f"t_{secrets.token_hex(6)}")


def test_upgrade_creates_schema_at_head(db_url):
    engine = db.prepare_database(db_url, migrate=True)
    tables = set(sa.inspect(engine).get_table_names())
    assert {"artifacts", "clients", "api_keys", "personalized_models"} <= tables
    assert db.current_revision(engine) == db.head_revision(db_url) is not None
    engine.dispose()


def test_refuses_old_schema_when_not_migrating(db_url):
    with pytest.raises(db.SchemaOutOfDateError, match="alembic upgrade head"):
        db.prepare_database(db_url, migrate=False)
    db.upgrade(db_url)
    db.prepare_database(db_url, migrate=False).dispose()


def test_keys_are_salted_hashes_and_verify(db_url):
    engine = db.prepare_database(db_url, migrate=True)
    with Session(engine, expire_on_commit=False) as s, s.begin():
        client = crud.create_client(s, name="app")
        _, key1 = crud.create_api_key(s, client_id=client.id)
        _, key2 = crud.create_api_key(s, client_id=client.id)
    with Session(engine, expire_on_commit=False) as s:
        rows = s.scalars(sa.select(ApiKey)).all()
        stored = " ".join(f"{r.key_id} {r.salt} {r.secret_hash}" for r in rows)
        for key in (key1, key2):
            assert key.split("_", 2)[2] not in stored  # the secret is never stored
        assert len({r.salt for r in rows}) == 2
        principal = crud.authenticate(s, plaintext=key1)
        assert principal is not None and principal.client_id == client.id
        assert crud.authenticate(s, plaintext=key1[:-1] + ("A" if key1[-1] != "A" else "B")) is None
        assert crud.authenticate(s, plaintext="tlr_nope") is None
    with Session(engine, expire_on_commit=False) as s, s.begin():
        assert crud.revoke_api_key(s, key_id=key1.split("_")[1])
    with Session(engine, expire_on_commit=False) as s:
        assert crud.authenticate(s, plaintext=key1) is None
        assert crud.authenticate(s, plaintext=key2) is not None
    engine.dispose()


def test_recipe_rows_are_idempotent(db_url):
    engine = db.prepare_database(db_url, migrate=True)

    def row():
        recipe = {"classes": ["cat", "dog"], "domain": None}
        return PersonalizedModel(
            id="a" * 32, recipe_key="a" * 64, kind="taper", method="taper",
            artifact_version="v1", recipe=recipe, mixers=[[0.5, 0.5]], owner="c_app",
        )  # fmt: skip

    with Session(engine, expire_on_commit=False) as s, s.begin():
        first = crud.save_model(s, row=row())
    with Session(engine, expire_on_commit=False) as s, s.begin():
        again = crud.save_model(s, row=row())
        assert again.recipe == {"classes": ["cat", "dog"], "domain": None}
        crud.set_weights_digest(s, recipe_key="a" * 64, sha256="f" * 64, size=10)
        crud.set_weights_digest(s, recipe_key="a" * 64, sha256="0" * 64, size=11)
    with Session(engine, expire_on_commit=False) as s:
        got = crud.get_model(s, model_id=first.id)
        assert (got.weights_sha256, got.weights_bytes) == ("f" * 64, 10)
        assert s.scalar(sa.select(sa.func.count()).select_from(PersonalizedModel)) == 1
    engine.dispose()


def test_listing_pages_newest_first_per_owner(db_url):
    """Keyset pages on (created_at, id): ties on created_at are broken by id, nothing is
    skipped or repeated, other owners never appear, and a foreign cursor is a ValueError."""
    from datetime import UTC, datetime, timedelta

    engine = db.prepare_database(db_url, migrate=True)
    t0 = datetime(2026, 11, 24, 12, tzinfo=UTC)
    stamps = [
        t0,
        t0,
        t0 + timedelta(seconds=1),
        t0 + timedelta(seconds=2),
        t0 + timedelta(seconds=2),
    ]
    with Session(engine, expire_on_commit=False) as s, s.begin():
        for i, at in enumerate([*stamps, t0]):
            s.add(PersonalizedModel(
                id=f"{i:032x}", recipe_key=f"{i % 3:064x}", kind="taper", method="taper",
                artifact_version="v1", recipe={"classes": ["a", "b"]}, created_at=at,
                owner="c_a" if i < len(stamps) else "c_b",
            ))  # fmt: skip
    want = [f"{i:032x}" for i in (4, 3, 2, 1, 0)]
    seen, cursor = [], None
    with Session(engine) as s:
        for _ in range(4):
            rows, cursor = crud.list_models(s, owner="c_a", kind=None, limit=2, cursor=cursor)
            seen += [r.id for r in rows]
            if cursor is None:
                break
        assert seen == want
        everyone, _ = crud.list_models(s, owner=None, kind=None, limit=10, cursor=None)
        assert len(everyone) == 6
        assert crud.list_models(s, owner="c_a", kind="fedclip", limit=10, cursor=None)[0] == []
        with pytest.raises(ValueError, match="not a page cursor"):
            crud.list_models(s, owner="c_a", kind=None, limit=2, cursor="WzFd")  # "[1]"
    with Session(engine) as s, s.begin():
        assert crud.delete_model(s, model_id=want[0]) is False  # recipe 1 is still used by id 1
        assert crud.delete_model(s, model_id=f"{5:032x}") is False  # recipe 2: id 2 remains
        assert crud.delete_model(s, model_id=f"{2:032x}") is True  # recipe 2's last row
        assert crud.delete_model(s, model_id="f" * 32) is False
    engine.dispose()


def test_downgrade_to_base_and_back(db_url):
    from alembic import command

    db.upgrade(db_url)
    command.downgrade(db.alembic_config(db_url), "base")
    engine = db.make_engine(db_url)
    assert "personalized_models" not in sa.inspect(engine).get_table_names()
    engine.dispose()
    db.upgrade(db_url)


def test_concurrent_upgrades_on_postgres_serialize(postgres_server):
    """Replicas starting together (separate processes): the advisory lock serialises them."""
    import subprocess
    import sys

    url = postgres_server.create_database(f"t_{secrets.token_hex(6)}")
    code = "import sys; from service.core import db; db.upgrade(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE)
             for _ in range(3)]  # fmt: skip
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    engine = db.make_engine(url)
    assert db.current_revision(engine) == db.head_revision(url)
    engine.dispose()
