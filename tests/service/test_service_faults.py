"""Faults under load: a SIGKILLed uvicorn worker, Redis and PostgreSQL restarted mid-stream.

The contract: while a fault lasts, a request may fail only in a way a client can safely retry (a
dropped connection, or 502/503/504 — our 503s are problem JSON with Retry-After), never with a
500 or a wrong answer; afterwards nothing written before the fault (keys, recipes, weights) is
lost, and the retrying :class:`~tailor.client.TailorClient` sees no error at all.

Every wait polls a condition against a deadline; every process started here is stopped in a
``finally`` (the multi-worker server runs in its own process group).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
import redis
from fault_kit import (
    REPO,
    Load,
    ServeProcess,
    capture,
    client_port,
    owner,
    server_socket,
    wait_until,
)  # fmt: skip
from service_testkit import ADMIN_KEY

from tailor.client import TailorClient

pytestmark = pytest.mark.integration
TASKS = [["cat", "dog"], ["bag", "coat"], ["one", "two"], ["bird", "horse"]]


def _assert_nothing_lost(url: str, key: str, load: Load) -> None:
    """Every recipe seen is readable and its weights still hash to what was served before.

    A model whose weights the traffic never got (the worker died between its /personalize
    and its /weights, or the load stopped there) has no served digest; its weights must then
    match the digest the registry recorded, if one was recorded."""
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as h:
        for model in load.model_ids():
            meta = h.get(f"/v1/models/{model}")
            assert meta.status_code == 200, model
            recorded = meta.json()["weights_sha256"]  # None: recorded in an outage
            served = load.truth.get(("sha", model), recorded)
            assert recorded in (None, served)
            weights = h.get(f"/v1/models/{model}/weights")
            assert weights.status_code == 200, model
            if served is not None:
                assert hashlib.sha256(weights.content).hexdigest() == served


def _serve_env(store: Path, database_url: str, **extra: str) -> dict[str, str]:
    """The environment ``tailor serve`` reads its settings from (nothing inherited)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_")}
    env.update(TAILOR_STORE_DIR=str(store), TAILOR_DATABASE_URL=database_url,
               TAILOR_ADMIN_KEY=ADMIN_KEY, TAILOR_DEVICE="cpu")  # fmt: skip
    env.update({f"TAILOR_{k.upper()}": v for k, v in extra.items()})
    return env


@pytest.fixture
def workers_server(taper_store, private_redis, tmp_path):
    """Two real uvicorn workers (``tailor serve --workers 2``) on real Redis and SQLite."""
    env = _serve_env(taper_store, f"sqlite:///{tmp_path}/t.db", redis_url=private_redis.url,
                     redis_retry_s="0.2", redis_timeout_s="0.5")  # fmt: skip
    server = ServeProcess(env, workers=2, log=tmp_path / "serve.log")
    try:
        server.wait_started(2, timeout=180)
        yield server
    finally:
        server.stop()


def test_tailor_serve_refuses_a_tampered_artifact_naming_the_file(taper_store, tmp_path):
    """Checked once before forking: uvicorn's supervisor would exit 0 if the workers failed."""
    store = tmp_path / "store"
    shutil.copytree(taper_store, store)
    (victim,) = store.glob("taper/*/mixer.safetensors")
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    server = ServeProcess(_serve_env(store, f"sqlite:///{tmp_path}/t.db"), workers=2,
                          log=tmp_path / "serve.log")  # fmt: skip
    try:
        assert server.proc.wait(timeout=120) == 1
    finally:
        server.stop()
    log = server.log.read_text()
    assert "refusing to start" in log and f"{victim}: sha256 mismatch" in log
    assert server.started() == 0


def _new_key(url: str) -> str:
    made = httpx.post(f"{url}/v1/keys", json={"name": "faults"},
                      headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)  # fmt: skip
    assert made.status_code == 201, made.text
    return made.json()["key"]


def test_worker_sigkill_mid_request_loses_nothing(workers_server):
    """A worker dies holding requests: they fail retryably, the client retries, uvicorn respawns.

    Deterministic, not lucky: while the other worker is paused (SIGSTOP) a plain httpx client
    and a TailorClient open keep-alive connections, so the victim accepts both; then the victim
    is paused until both next requests sit unread in its sockets, and killed.
    """
    srv = workers_server
    key = _new_key(srv.url)
    raw = httpx.Client(base_url=srv.url, timeout=60, headers={"Authorization": f"Bearer {key}"})
    with Load(srv.url, key, TASKS[:3]) as load, raw, TailorClient(srv.url, key) as client:
        load.wait_ok(9)  # every task made, downloaded and predicted once
        workers = srv.workers()
        assert len(workers) == 2
        victim, other = workers
        os.kill(other, signal.SIGSTOP)  # briefly: uvicorn's health check allows 5 s
        try:
            ports = [client_port(raw), client_port(client.http)]
        finally:
            os.kill(other, signal.SIGCONT)
        assert [owner(server_socket(srv.port, p)[0], workers) for p in ports] == [victim] * 2
        os.kill(victim, signal.SIGSTOP)
        outcome: dict = {}
        calls = [
            threading.Thread(target=capture, args=(outcome, "raw", raw.post, "/v1/personalize"),
                             kwargs={"json": {"classes": TASKS[3]}}),
            threading.Thread(target=capture, args=(outcome, "client", client.personalize),
                             kwargs={"classes": TASKS[3]}),
        ]  # fmt: skip
        for t in calls:
            t.start()
        wait_until(lambda: all(server_socket(srv.port, p)[1] > 0 for p in ports), 10,
                   "both requests to reach the stopped worker")  # fmt: skip
        os.kill(victim, signal.SIGKILL)
        for t in calls:
            t.join(timeout=120)
        assert isinstance(outcome["raw"], httpx.ReadError | httpx.RemoteProtocolError)  # not a 5xx
        answer = outcome["client"]
        assert answer["classes"] == TASKS[3] and client.retried >= 1  # the client rode through
        # uvicorn's supervisor (checked every 0.5 s) replaces a dead worker with a new process
        wait_until(lambda: len(set(srv.workers()) - set(workers)) == 1, 30, "a respawned worker")
        load.wait_ok(6)  # meanwhile the surviving worker carries the traffic
        load.truth[("task", *TASKS[3])] = answer["id"]
        load.truth[("sha", answer["id"])] = hashlib.sha256(client.weights(answer["id"])).hexdigest()
    srv.wait_started(3, timeout=180)  # the replacement ran its lifespan and is serving
    assert victim not in srv.workers() and len(srv.workers()) == 2
    assert load.wrong == [], load.wrong
    dropped = {"ReadError", "RemoteProtocolError", "WriteError", "ConnectError"}
    assert all(r.rsplit(": ", 1)[1] in dropped for r in load.retryable), load.retryable
    _assert_nothing_lost(srv.url, key, load)


def test_redis_restart_under_load_fails_no_request(run_live, make_settings, private_redis,
                                                   tmp_path):  # fmt: skip
    """Redis is only a cache: while it is down every request is still served (by synthesis)."""
    settings = make_settings(f"sqlite:///{tmp_path}/t.db", redis_url=private_redis.url)
    with run_live(settings) as live:
        with Load(live.url, live.key, TASKS[:3]) as load:
            load.wait_ok(9)
            errors = live.metric("tailor_cache_errors_total", tier="redis")
            private_redis.stop()
            wait_until(lambda: live.metric("tailor_cache_errors_total", tier="redis") > errors,
                       20, "the service to count a Redis error")  # fmt: skip
            # a request whose GET succeeded just before the stop may still mark the link up
            wait_until(lambda: live.metric("tailor_redis_up") == 0, 20, "Redis seen down")
            load.wait_ok(6)  # served with Redis down
            private_redis.start()
            wait_until(lambda: live.metric("tailor_redis_up") == 1, 20, "Redis seen back up")
            load.wait_ok(6)
            fresh = live.http.post("/v1/personalize", json={"classes": TASKS[3]})
            assert fresh.status_code == 200, fresh.text
            cache = redis.Redis.from_url(private_redis.url)
            meta = f"/v1/models/{fresh.json()['id']}"  # Redis is written before the digest
            wait_until(lambda: live.http.get(meta).json()["weights_sha256"], 20,
                       "the new model's digest (its bytes went to Redis first)")  # fmt: skip
            assert cache.keys("tailor:weights2:*"), "the new model's bytes in the restarted Redis"
            cache.close()
        assert load.wrong == [] and load.retryable == [], (load.wrong, load.retryable)
        _assert_nothing_lost(live.url, live.key, load)


def test_postgres_restart_under_load_gives_only_503s(run_live, make_settings, private_postgres):
    """While PostgreSQL restarts, requests get 503 + Retry-After (never 500); nothing is lost."""
    pg = private_postgres
    with run_live(make_settings(pg.url())) as live:
        spare = live.admin.post("/v1/keys", json={"name": "spare", "client_id": live.client_id}
                                ).json()["key"]  # a second key of the same client: same models
        with Load(live.url, live.key, TASKS[:3]) as load:
            load.wait_ok(9)
            pg.stop()
            wait_until(lambda: len(load.retryable) >= 3, 20, "requests to meet the outage")
            assert live.anon.get("/readyz").status_code == 503
            pg.start_existing()
            load.wait_ok(3)  # recovered without restarting the service (pool_pre_ping) ...
            failed = len(load.retryable)
            load.wait_ok(6)
            assert len(load.retryable) == failed  # ... and no stale pooled connection lingers
        assert load.wrong == [], load.wrong
        assert all(": 503 " in r for r in load.retryable), load.retryable
        with TailorClient(live.url, spare) as client:  # a key made before the outage still works
            assert client.model(load.model_ids()[0])["weights_sha256"] is not None
        _assert_nothing_lost(live.url, live.key, load)


_START = """
import sys
from sqlalchemy.orm import sessionmaker
from service.core import crud
from service.core import db
def barrier(name):  # tell the test we are here, wait for its word to go on
    print(name, flush=True)
    sys.stdin.readline()
db.head_revision(sys.argv[1])  # alembic's scripts loaded: the race window is the DDL itself
barrier("imported")
engine = db.prepare_database(sys.argv[1], migrate=True)  # a worker's lifespan does this first ...
barrier("migrated")
with sessionmaker(engine).begin() as s:  # ... and then this, all workers at the same moment
    row = crud.register_artifact(s, kind="t", version="v1", manifest_sha256="0" * 64, metrics={})
    print(row.id, flush=True)
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_workers_starting_together_on_a_fresh_registry_all_start(backend, request, tmp_path):
    """N workers run N lifespans at once: the migrations (SQLite DDL is not transactional) and
    the artifact registration (a unique row) must not fail any of them, or uvicorn stops."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path}/race.db"
    else:
        url = request.getfixturevalue("postgres_server").create_database(f"race_{os.getpid()}")
    procs = [
        subprocess.Popen([sys.executable, "-c", _START, url], cwd=REPO, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
        for _ in range(4)
    ]
    try:
        for stage in ("imported", "migrated"):  # release everyone only when all are waiting
            assert [p.stdout.readline().strip() for p in procs] == [stage] * len(procs)
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
        ids = {p.stdout.readline().strip() for p in procs}
        assert [p.wait(timeout=60) for p in procs] == [0] * len(procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert len(ids) == 1 and "" not in ids  # every worker got the one shared artifact row


def _healthz_count(exposition: str) -> float:
    found = re.search(r'^tailor_request_seconds_count\{[^}]*route="/healthz"[^}]*\} (\S+)$',
                      exposition, re.M)  # fmt: skip
    return float(found.group(1)) if found else 0.0


def test_metrics_are_one_consistent_set_across_two_workers(taper_store, tmp_path):
    """Each scrape reaches one of the workers; every one must report the totals of both."""
    prom = tmp_path / "prom"
    prom.mkdir()
    (prom / "counter_999999.db").write_bytes(b"left by an earlier run")  # must be wiped
    env = _serve_env(taper_store, f"sqlite:///{tmp_path}/m.db")
    env["PROMETHEUS_MULTIPROC_DIR"] = str(prom)
    server = ServeProcess(env, workers=2, log=tmp_path / "serve.log")
    try:
        server.wait_started(2, timeout=180)
        def ten() -> None:
            for _ in range(10):  # a new connection each: the workers take turns accepting
                httpx.get(f"{server.url}/healthz")

        threads = [threading.Thread(target=ten) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        pids = {int(m.group(1)) for f in prom.iterdir() if (m := re.search(r"_(\d+)\.db$", f.name))}
        assert set(server.workers()) <= pids and 999999 not in pids
        counts = [_healthz_count(httpx.get(f"{server.url}/metrics").text) for _ in range(8)]
        assert counts == [40.0] * 8, counts
    finally:
        server.stop()
