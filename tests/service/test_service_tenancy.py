"""Models belong to the key's client that made them: isolation, listing, deletion (real uvicorn,
real Redis, SQLite), and the migration that introduced owners on SQLite and PostgreSQL."""

from __future__ import annotations

import secrets

import httpx
import pytest
import sqlalchemy as sa
from service_testkit import b64, images, png

from service.core import db

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def other(live):
    """A second tenant: its own client and key on the same server."""
    made = live.admin.post("/v1/keys", json={"name": "other tenant"}).json()
    with httpx.Client(base_url=live.url, timeout=60,
                      headers={"Authorization": f"Bearer {made['key']}"}) as http:  # fmt: skip
        yield http


def _not_found(resp: httpx.Response, model_id: str) -> None:
    """Exactly the answer a never-existing id gets: nothing about the model leaks."""
    assert resp.status_code == 404, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    assert resp.json()["type"].endswith("model-not-found") and model_id in resp.json()["detail"]


def _images_json(n: int = 3) -> dict:
    return {"images": [b64(png(im)) for im in images(n, seed=7)]}


def test_another_tenant_cannot_see_use_or_delete_a_model(live, other):
    mine = live.http.post("/v1/personalize", json={
        "description": "classify cats and dogs"}).json()  # fmt: skip
    url = f"/v1/models/{mine['id']}"
    missing = other.get(f"/v1/models/{'f' * 32}")
    assert missing.status_code == 404
    for resp in (other.get(url), other.get(f"{url}/weights"),
                 other.get(f"{url}/weights", params={"format": "onnx"}),
                 other.post(f"{url}/predict", json=_images_json()),
                 other.post(f"{url}/refine", json=_images_json()),
                 other.delete(url)):  # fmt: skip
        _not_found(resp, mine["id"])
        assert resp.json()["detail"] == missing.json()["detail"].replace("f" * 32, mine["id"])
    assert live.http.get(url).status_code == 200  # the delete attempt removed nothing
    seen = live.admin.get(url)  # the operator reads every model
    assert seen.status_code == 200 and seen.json()["description"] == mine["description"]


def test_identical_requests_get_their_own_ids_and_descriptions_but_share_bytes(live, other):
    a = live.http.post("/v1/personalize", json={"description": "horses and birds",
                                                "method": "taper"}).json()  # fmt: skip
    b = other.post("/v1/personalize", json={"description": "Horses and Birds",
                                            "method": "taper"}).json()  # fmt: skip
    assert a["classes"] == b["classes"] and a["id"] != b["id"]
    assert (a["description"], b["description"]) == ("horses and birds", "Horses and Birds")
    assert a["cache"] == "synthesized" and b["cache"] == "memory"  # one model in memory
    again = live.http.post(
        "/v1/personalize", json={"description": "horses and birds", "method": "taper"}
    ).json()
    assert again["id"] == a["id"]  # idempotent per owner
    wa, wb = live.http.get(a["weights_url"]), other.get(b["weights_url"])
    assert wa.status_code == wb.status_code == 200
    assert wa.content == wb.content and wa.headers["etag"] == wb.headers["etag"]
    p = live.personalizer
    assert p.get(a["id"]).recipe_key == p.get(b["id"]).recipe_key


def test_listing_pages_through_the_callers_models_only(live, other):
    made = live.admin.post("/v1/keys", json={"name": "lister"}).json()
    hdr = {"Authorization": f"Bearer {made['key']}"}
    with httpx.Client(base_url=live.url, timeout=60, headers=hdr) as me:
        tasks = [["cat", "dog"], ["cat", "horse"], ["dog", "bird"], ["horse", "bird"],
                 ["cat", "bird"]]  # fmt: skip
        ids = [me.post("/v1/personalize", json={"classes": t}).json()["id"] for t in tasks]
        other.post("/v1/personalize", json={"classes": ["dog", "horse"]})
        seen, cursor, pages = [], None, 0
        while True:
            params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            page = me.get("/v1/models", params=params).json()
            seen += [m["id"] for m in page["items"]]
            pages, cursor = pages + 1, page["next_cursor"]
            if cursor is None:
                break
        assert pages == 3 and seen == ids[::-1]  # newest first, each once, nobody else's
        assert me.get("/v1/models", params={"kind": "fedclip"}).json()["items"] == []
        assert [m["id"] for m in me.get("/v1/models", params={"kind": "taper"}).json()
                ["items"]] == ids[::-1]  # fmt: skip
        bad = me.get("/v1/models", params={"cursor": "bm90LWEtY3Vyc29y"})
        assert bad.status_code == 422 and bad.json()["type"].endswith("invalid-cursor")
        assert me.get("/v1/models", params={"limit": 0}).status_code == 422
    everyone = {m["id"] for m in live.admin.get("/v1/models", params={"limit": 200})
                .json()["items"]}  # fmt: skip
    assert set(ids) <= everyone and len(everyone) > len(ids)


def test_delete_keeps_shared_bytes_until_the_last_owner_deletes(live, other):
    body = {"classes": ["bird", "cat", "dog"], "method": "taper"}
    a = live.http.post("/v1/personalize", json=body).json()
    b = other.post("/v1/personalize", json=body).json()
    p = live.personalizer
    p.flush()
    key = p.get(a["id"]).recipe_key
    assert p.redis.get(key) is not None
    assert live.http.delete(f"/v1/models/{a['id']}").status_code == 204
    _not_found(live.http.get(f"/v1/models/{a['id']}"), a["id"])
    _not_found(live.http.delete(f"/v1/models/{a['id']}"), a["id"])
    assert p.redis.get(key) is not None and p.lru.get(key) is not None  # b still uses them
    assert other.post(b["predict_url"], json=_images_json()).status_code == 200
    assert other.delete(f"/v1/models/{b['id']}").status_code == 204
    assert p.redis.get(key) is None and p.lru.get(key) is None  # last owner gone: bytes gone
    again = live.http.post("/v1/personalize", json=body).json()  # can be made again
    assert again["id"] == a["id"] and again["cache"] == "synthesized"


def test_client_ids_reserved_for_owners_are_refused(live):
    """``@admin`` owns the admin key's models: no client may be given that id (or a control
    character)."""
    for bad in ("@admin", "@x", "\u0001c"):
        resp = live.admin.post("/v1/keys", json={"name": "x", "client_id": bad})
        assert resp.status_code == 422, (bad, resp.text)
        assert resp.headers["content-type"].startswith(PROBLEM)


# ---- the migration that introduced owners, with rows present ----------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def old_db(request, tmp_path):
    """A database at revision 0001 holding rows made before models had owners."""
    from alembic import command

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/registry.db"
    else:
        url = request.getfixturevalue("postgres_server").create_database(
            f"t_{secrets.token_hex(6)}")  # fmt: skip
    command.upgrade(db.alembic_config(url), "0001")
    engine = db.make_engine(url)
    rows = [("a" * 32, "a" * 64, "c_one"), ("b" * 32, "b" * 64, None)]
    with engine.begin() as c:
        for model_id, key, by in rows:
            c.execute(sa.text(
                "INSERT INTO personalized_models (id, recipe_key, kind, method, artifact_version,"
                " recipe, description, created_by, created_at) VALUES (:id, :key, 'taper',"
                " 'taper', 'v1', '{\"classes\": [\"cat\", \"dog\"]}', 'old', :by, :at)"),
                {"id": model_id, "key": key, "by": by, "at": "2026-11-01 10:00:00"})  # fmt: skip
    engine.dispose()
    return url


def test_owner_migration_backfills_rows_and_lets_owners_share_recipes(old_db):
    from alembic import command

    db.upgrade(old_db)
    engine = db.make_engine(old_db)
    with engine.begin() as c:
        got = dict(c.execute(sa.text("SELECT id, owner FROM personalized_models")).all())
        assert got == {"a" * 32: "c_one", "b" * 32: "@admin"}  # unknown owner: admin only
        c.execute(sa.text(
            "INSERT INTO personalized_models (id, recipe_key, owner, kind, method,"
            " artifact_version, recipe, created_at) VALUES (:id, :key, 'c_two', 'taper', 'taper',"
            " 'v1', '{}', '2026-11-24 10:00:00')"), {"id": "c" * 32, "key": "a" * 64})  # fmt: skip
        desc = c.execute(sa.text("SELECT description FROM personalized_models WHERE id = :i"),
                         {"i": "a" * 32}).scalar()  # fmt: skip
        assert desc == "old"  # nothing stored was lost
    engine.dispose()
    with pytest.raises(RuntimeError, match="shared by several owners"):
        command.downgrade(db.alembic_config(old_db), "0001")
