"""Security: per-key rate limits (local, Redis-shared, Redis down), auth on every route, stored
keys, path-like ids, docs UI off in prod. Real uvicorn, real Redis, real SQLite.

Body limits (413) and decompression bombs (400) are covered in test_service_api.py; salted key
hashes at the crud level in test_service_db.py.
"""

from __future__ import annotations

import http.client
import re
import sqlite3
import time
from pathlib import Path

import httpx
import pytest
import redis
from fastapi.routing import APIRoute

from service.api.ratelimit import LocalLimiter
from service.main import create_app

PROBLEM = "application/problem+json"
PUBLIC = {"/healthz", "/readyz", "/metrics"}  # operational routes: no key, never rate limited
DOCS = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/static/docs"}  # by setting
LIMITS = {"rate_limit_per_minute": 30, "rate_limit_burst": 3}  # one token every 2 s


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {key}"})


def _new_key(live) -> str:
    made = live.admin.post("/v1/keys", json={"name": "other"})
    assert made.status_code == 201, made.text
    return made.json()["key"]


def _assert_429(resp: httpx.Response) -> int:
    assert resp.status_code == 429, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    body = resp.json()
    assert body["type"].endswith("rate-limited") and "retry after" in body["detail"]
    wait = resp.headers["retry-after"]
    assert wait.isdigit() and 1 <= int(wait) <= 2 and body["retry_after"] == int(wait)
    return int(wait)


def test_local_gcra_bucket_shape():
    now = [100.0]
    limiter = LocalLimiter(rate_per_minute=60, burst=3, clock=lambda: now[0])
    assert [limiter.check("a").allowed for _ in range(4)] == [True, True, True, False]
    assert limiter.check("a").retry_after == pytest.approx(1.0)
    assert limiter.check("b").allowed  # buckets are independent
    now[0] += 1.0
    assert limiter.check("a").allowed and not limiter.check("a").allowed
    now[0] += 60.0  # an idle bucket refills to the burst, no further
    assert sum(limiter.check("a").allowed for _ in range(5)) == 3


def test_rate_limit_429_per_key_then_recovers(run_live, make_settings, tmp_path):
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", **LIMITS)
    with run_live(settings) as live, _client(live.url, _new_key(live)) as other:
        codes = [live.http.get("/v1/catalogue").status_code for _ in range(3)]
        assert codes == [200, 200, 200]
        wait = _assert_429(live.http.get("/v1/catalogue"))
        assert other.get("/v1/catalogue").status_code == 200  # another key is unaffected
        assert all(live.anon.get("/healthz").status_code == 200 for _ in range(10))
        assert live.anon.get("/readyz").status_code == 200
        assert live.metric("tailor_rate_limited_total", principal="client") == 1
        time.sleep(wait)
        assert live.http.get("/v1/catalogue").status_code == 200


def test_redis_bucket_is_shared_by_two_apps(run_live, make_settings, private_redis, tmp_path):
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", redis_url=private_redis.url, **LIMITS)
    with run_live(settings) as a, run_live(settings) as b, _client(b.url, a.key) as a_on_b:
        assert [a.http.get("/v1/catalogue").status_code for _ in range(2)] == [200, 200]
        assert a_on_b.get("/v1/catalogue").status_code == 200
        _assert_429(a_on_b.get("/v1/catalogue"))  # b saw one call, but the bucket is shared
        _assert_429(a.http.get("/v1/catalogue"))
        assert b.http.get("/v1/catalogue").status_code == 200
        store = redis.Redis.from_url(private_redis.url)
        assert store.exists(f"tailor:ratelimit:key:{a.key.split('_')[1]}")
        assert store.exists("tailor:ratelimit:admin")  # the admin key has its own bucket


def test_limiter_falls_back_when_redis_is_down(run_live, make_settings, private_redis, tmp_path):
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", redis_url=private_redis.url, **LIMITS)
    with run_live(settings) as live:
        private_redis.stop()
        codes = [live.http.get("/v1/catalogue").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]  # served, and still limited (per worker)
        assert live.metric("tailor_ratelimit_errors_total") >= 1
        assert live.metric("tailor_redis_up") == 0
        private_redis.start()
        time.sleep(0.3)  # past redis_retry_s: the next check goes to Redis again
        assert live.http.get("/v1/catalogue").status_code == 200  # fresh shared bucket
        store = redis.Redis.from_url(private_redis.url)
        assert store.keys("tailor:ratelimit:key:*")


def _routes(app) -> list[tuple[str, object]]:
    """(path, route) of every route; FastAPI >= 0.16x nests included routers (flatten them)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is already flat
        return [(r.path, r) for r in app.routes]
    return [(c.path, c.original_route) for c in iter_route_contexts(app.routes)]


def _fill(path: str) -> str:
    return re.sub(r"\{model_id\}", "0" * 32, re.sub(r"\{(?!model_id)[^}]+\}", "x", path))


def test_every_non_health_route_requires_a_key(live):
    """Walks ``app.routes``, so a route added later without authentication fails here."""
    checked = 0
    for path, route in _routes(live.app):
        if path in DOCS:
            continue
        assert isinstance(route, APIRoute), f"unexpected non-API route {path}"
        for method in route.methods - {"HEAD", "OPTIONS"}:
            resp = live.anon.request(method, _fill(path), json={})
            if path in PUBLIC:
                assert resp.status_code == 200, (method, path)
                continue
            assert resp.status_code == 401, (method, path, resp.text)
            assert resp.headers["content-type"].startswith(PROBLEM)
            checked += 1
    assert checked >= 7


def test_keys_are_stored_salted_and_hashed_via_http(live):
    keys = [_new_key(live) for _ in range(2)]
    db_path = Path(live.app.state.settings.database_url.removeprefix("sqlite:///"))
    raw = db_path.read_bytes() + b"".join(p.read_bytes() for p in db_path.parent.glob("*-wal"))
    with sqlite3.connect(db_path) as con:
        rows = con.execute("SELECT key_id, salt, secret_hash FROM api_keys").fetchall()
    ids = [k.split("_")[1] for k in keys]
    mine = [r for r in rows if r[0] in ids]
    assert len(mine) == 2 and mine[0][1] != mine[1][1]  # a fresh salt per key
    for key in keys:
        secret = key.split("_", 2)[2]
        assert secret.encode() not in raw and key.encode() not in raw
        assert all(secret not in r[2] for r in mine)


@pytest.mark.parametrize(
    "path",
    ["/v1/models/../../etc/passwd", "/v1/models/%2e%2e", "/v1/models/%2e%2e%2f%2e%2e%2fetc",
     "/v1/models/..%2F..%2Fservice%2Fmain.py/weights", "/v1/models/....//x/weights",
     "/v1/models/%2e%2e/weights", "/v1/models/" + "0" * 31 + "%2f/weights"],
)  # fmt: skip
def test_path_like_ids_never_reach_files(live, path):
    conn = http.client.HTTPConnection("127.0.0.1", int(live.url.rsplit(":", 1)[1]), timeout=30)
    conn.request("GET", path, headers={"Authorization": f"Bearer {live.key}"})  # sent verbatim
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    assert resp.status in (404, 422), (path, resp.status, body[:200])
    assert resp.getheader("content-type", "").startswith(PROBLEM)
    assert b"root:" not in body and b"create_app" not in body


def test_docs_ui_is_off_in_prod_but_schema_stays(make_settings, tmp_path):
    prod = create_app(make_settings(f"sqlite:///{tmp_path}/p.db", env="prod"))
    paths = {path for path, _ in _routes(prod)}
    assert "/openapi.json" in paths and not paths & {"/docs", "/redoc"}
    dev = create_app(make_settings(f"sqlite:///{tmp_path}/d.db"))
    assert {"/docs", "/redoc"} <= {path for path, _ in _routes(dev)}


def test_artifact_upgrade_never_rebuilds_old_models_from_new_bases(run_live, make_settings,
                                                                    tmp_path):  # fmt: skip
    """An old recipe rebuilt from a new artifact's bases would silently serve other weights."""
    from model_store.testing import make_tiny_taper
    from service.kinds.taper import load_text_encoder

    store, encoder = tmp_path / "store", load_text_encoder(None, "cpu")
    make_tiny_taper(store, num_classes=12, Q=2, seed=0, encoder=encoder, version="v1")
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", store_dir=store)
    with run_live(settings) as live:
        old = live.admin.post("/v1/personalize", json={"classes": ["cat", "zero"]}).json()
    make_tiny_taper(store, num_classes=12, Q=2, seed=1, encoder=encoder, version="v2")  # LATEST
    # the admin owns both (each run_live makes a new client key); no Redis: the old model
    # must be rebuilt to be served
    with run_live(settings) as live:
        assert live.admin.get(f"/v1/models/{old['id']}").json()["artifact_version"] == "v1"
        refused = live.admin.get(old["weights_url"])
        assert refused.status_code == 409 and "v1" in refused.json()["detail"], refused.text
        new = live.admin.post("/v1/personalize", json={"classes": ["cat", "zero"]}).json()
        assert new["artifact_version"] == "v2" and new["id"] != old["id"]
        assert live.admin.get(new["weights_url"]).status_code == 200
