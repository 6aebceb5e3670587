"""Faults and replicas: Redis outage mid-run, PostgreSQL-backed replicas, refusing bad starts."""

from __future__ import annotations

import shutil
import time

import pytest
from service_testkit import ADMIN_KEY, b64, images, png

from model_store.artifacts import ArtifactIntegrityError
from service.core.db import SchemaOutOfDateError, prepare_database
from service.core.metrics import Metrics
from service.kinds.taper import TaperKind as Runtime
from service.main import create_app


def _personalize(live, classes):
    resp = live.http.post("/v1/personalize", json={"classes": classes})
    assert resp.status_code == 200, resp.text
    return resp.json()


def _redis_errors(live) -> float:
    """Failures of the worker's one Redis link: the rate limiter (first on every request) or the
    weight cache sees the outage first; either opens the back-off window for both."""
    cache = live.metric("tailor_cache_errors_total", tier="redis")
    return cache + live.metric("tailor_ratelimit_errors_total")


def test_redis_outage_mid_run_then_hits_resume(run_live, make_settings, private_redis, tmp_path):
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", redis_url=private_redis.url)
    with run_live(settings) as live:
        warm = _personalize(live, ["cat", "dog"])
        assert warm["cache"] == "synthesized"
        live.personalizer.flush()  # the warm model's write-behind landed while Redis was up
        # Read before the stop: the first Redis call after it must fail and be counted; read after
        # it, a failure counted in between would open the back-off window and hide later ones.
        errors_before = _redis_errors(live)
        private_redis.stop()
        down = _personalize(live, ["horse", "bird"])  # Redis is gone: synthesize and serve
        assert down["cache"] == "synthesized"
        body = {"images": [b64(png(im)) for im in images(4)]}
        assert live.http.post(down["predict_url"], json=body).status_code == 200
        assert live.http.get(down["weights_url"]).status_code == 200
        assert _redis_errors(live) > errors_before  # counted by whichever Redis user came first
        assert live.metric("tailor_redis_up") == 0
        assert live.anon.get("/readyz").json()["checks"]["redis"] == "down"

        private_redis.start()
        time.sleep(0.3)  # past the back-off window
        live.personalizer.lru.clear()
        assert _personalize(live, ["cat", "dog"])["cache"] == "synthesized"  # Redis was wiped
        live.personalizer.flush()  # the write-behind to Redis has landed
        live.personalizer.lru.clear()
        hits = live.metric("tailor_cache_requests_total", tier="redis", result="hit")
        assert _personalize(live, ["cat", "dog"])["cache"] == "redis"  # caching resumed
        assert live.metric("tailor_cache_requests_total", tier="redis", result="hit") == hits + 1
        assert live.metric("tailor_redis_up") == 1


def test_postgres_replicas_share_recipes_and_rebuild_identically(
    run_live, make_settings, postgres_server
):
    url = postgres_server.create_database("replicas")
    with run_live(make_settings(url)) as first:  # no Redis: in-process tier only
        model = _personalize(first, ["sneaker", "trouser", "coat"])
        weights = first.http.get(model["weights_url"]).content
        key = first.key
    with run_live(make_settings(url)) as second:  # a fresh replica on the same PostgreSQL
        second.http.headers["Authorization"] = f"Bearer {key}"  # keys live in SQL too
        meta = second.http.get(f"/v1/models/{model['id']}")
        assert meta.status_code == 200 and meta.json()["classes"] == ["sneaker", "trouser", "coat"]
        assert meta.json()["weights_sha256"] is not None
        again = second.http.get(model["weights_url"])
        assert again.content == weights
        assert again.headers["etag"] == f'"{meta.json()["weights_sha256"]}"'
        assert second.anon.get("/readyz").json()["checks"]["redis"] == "disabled"


def test_refuses_to_start_on_tampered_artifact(serve_app, make_settings, taper_store, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(taper_store, store)
    (version,) = [p for p in (store / "taper").iterdir() if p.is_dir()]
    victim = version / "mixer.safetensors"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0xFF
    victim.write_bytes(bytes(data))
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", store_dir=store)
    with pytest.raises(ArtifactIntegrityError, match="mixer.safetensors"):
        Runtime.load(settings, Metrics())
    with (
        pytest.raises(RuntimeError, match="uvicorn failed to start"),
        serve_app(create_app(settings)),
    ):
        pass


def test_refuses_old_schema_without_migrating(serve_app, make_settings, tmp_path):
    settings = make_settings(f"sqlite:///{tmp_path}/empty.db", migrate_on_start=False)
    with pytest.raises(SchemaOutOfDateError):
        prepare_database(settings.database_url, migrate=False)
    with (
        pytest.raises(RuntimeError, match="uvicorn failed to start"),
        serve_app(create_app(settings)),
    ):
        pass


def test_prod_settings_require_an_admin_key(make_settings, tmp_path):
    with pytest.raises(ValueError, match="TAILOR_ADMIN_KEY"):
        make_settings(f"sqlite:///{tmp_path}/t.db", env="prod", admin_key=None)
    assert make_settings(f"sqlite:///{tmp_path}/t.db", env="prod", admin_key=ADMIN_KEY)


def test_postgres_restart_gives_retryable_503_then_recovers(run_live, make_settings,
                                                           private_postgres):  # fmt: skip
    pg = private_postgres
    with run_live(make_settings(pg.url())) as live:
        assert _personalize(live, ["cat", "dog"])["classes"] == ["cat", "dog"]
        pg.stop()
        down = live.http.post("/v1/personalize", json={"classes": ["bag", "coat"]})
        assert down.status_code == 503 and down.headers["retry-after"]
        assert down.headers["content-type"].startswith("application/problem+json")
        assert live.anon.get("/readyz").status_code == 503
        pg.start_existing()
        assert _personalize(live, ["bag", "coat"])["classes"] == ["bag", "coat"]
        assert live.anon.get("/readyz").status_code == 200


def test_memory_tier_stays_within_its_byte_budget(run_live, make_settings, tmp_path):
    budget = 100 * 1024 * 1024  # two ResNet-18s (~45 MB each), not three
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", memory_cache_bytes=budget)
    with run_live(settings) as live:
        ids = [
            _personalize(live, pair)["id"]
            for pair in (["cat", "dog"], ["bag", "coat"], ["one", "two"], ["bird", "horse"])
        ]
        held = live.metric("tailor_memory_cache_bytes")
        assert 80e6 < held <= budget and live.metric("tailor_memory_cache_models") == 2
        assert _personalize(live, ["cat", "dog"])["cache"] == "synthesized"  # evicted: rebuilt
        assert _personalize(live, ["bird", "horse"])["cache"] != "synthesized"
        assert len(set(ids)) == 4
