"""Faults under load: a SIGKILLed uvicorn worker, Redis and PostgreSQL restarted mid-stream.

The contract: while a fault lasts, a request may fail only in a way a client can safely retry (a
dropped connection, or 502/503/504 — our 503s are problem JSON with Retry-After), never with a
500 or a wrong answer; afterwards nothing written before the fault (keys, recipes, weights) is
lost, and the retrying :class:`~service.client.TailorClient` sees no error at all.

Every wait polls a condition against a deadline; every process started here is stopped in a
``finally`` (the multi-worker server runs in its own process group).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import redis
from service_testkit import ADMIN_KEY, b64, images, png

from service.client import TailorClient

pytestmark = pytest.mark.integration
TASKS = [["cat", "dog"], ["bag", "coat"], ["one", "two"], ["bird", "horse"]]
PREDICT = {"images": [b64(png(im)) for im in images(2, seed=3)], "top_k": 2}
REPO = Path(__file__).resolve().parents[2]


def wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    """Poll ``condition`` until it returns something truthy (returned) or fail naming ``what``."""
    print(f"{time.strftime('%X')} waiting for {what}", flush=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


# ---- checked traffic ----------------------------------------------------------------------------


def _retryable(response: httpx.Response) -> bool:
    """502/504 (a proxy's), or our 503: problem JSON that tells the client when to come back."""
    if response.status_code in (502, 504):
        return True
    problem = response.headers.get("content-type", "").startswith("application/problem+json")
    return response.status_code == 503 and problem and "retry-after" in response.headers


class Load:
    """Steady personalize → weights → predict traffic from threads, every answer checked.

    The first answer seen for a task (its model id), a model (its weights' sha256) or a
    prediction is the truth; any later answer that differs is recorded in ``wrong``, as is
    any failure a client could not safely retry. Safe-to-retry failures go to ``retryable``.
    """

    def __init__(self, url: str, key: str, tasks: list[list[str]], threads: int = 2) -> None:
        self.url, self.key, self.tasks = url, key, tasks
        self.truth: dict[object, object] = {}
        self.ok, self.retryable, self.wrong = 0, [], []
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(threads)]

    def __enter__(self) -> Load:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=120)

    def wait_ok(self, more: int, timeout: float = 60.0) -> None:
        """Block until ``more`` further requests have succeeded."""
        target = self.ok + more
        wait_until(lambda: self.ok >= target, timeout, f"{more} more successful requests")

    def model_ids(self) -> list[str]:
        """Every model id the traffic has seen."""
        return [v for k, v in self.truth.items() if k[0] == "task"]

    def _run(self, offset: int) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=60) as http:
            for i in range(offset, 10**9):
                if self._stop.is_set():
                    return
                self._step(http, self.tasks[i % len(self.tasks)])

    def _step(self, http: httpx.Client, task: list[str]) -> None:
        made = self._call(http, "POST", "/v1/personalize", json={"classes": task})
        if made is None or not self._same(("task", *task), made.json()["id"]):
            return
        model = made.json()["id"]
        got = self._call(http, "GET", f"/v1/models/{model}/weights")
        if got is not None:
            self._same(("sha", model), hashlib.sha256(got.content).hexdigest())
        pred = self._call(http, "POST", f"/v1/models/{model}/predict", json=PREDICT)
        if pred is not None:
            self._same(("pred", model), _rounded(pred.json()["predictions"]))

    def _call(self, http: httpx.Client, method: str, url: str, **kw) -> httpx.Response | None:
        try:
            response = http.request(method, url, **kw)
        except httpx.TransportError as exc:  # the connection broke: the request may be repeated
            with self._lock:
                self.retryable.append(f"{method} {url}: {type(exc).__name__}")
            return None
        with self._lock:
            if response.status_code == 200:
                self.ok += 1
                return response
            bucket = self.retryable if _retryable(response) else self.wrong
            bucket.append(f"{method} {url}: {response.status_code} {response.text[:300]}")
        return None

    def _same(self, key: tuple, value: object) -> bool:
        with self._lock:
            first = self.truth.setdefault(key, value)
            if first != value:
                self.wrong.append(f"{key}: {value!r} != first answer {first!r}")
        return first == value


def _rounded(predictions: list[list[dict]]) -> list:
    """Labels and probabilities to 4 places: the same weights give the same answer anywhere."""
    return [[(p["label"], round(p["probability"], 4)) for p in row] for row in predictions]


def _assert_nothing_lost(url: str, key: str, load: Load) -> None:
    """Every recipe seen is readable and its weights still hash to what was served before."""
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as h:
        for model in load.model_ids():
            meta = h.get(f"/v1/models/{model}")
            assert meta.status_code == 200, model
            served = load.truth[("sha", model)]
            assert meta.json()["weights_sha256"] in (None, served)  # None: recorded in an outage
            weights = h.get(f"/v1/models/{model}/weights")
            assert hashlib.sha256(weights.content).hexdigest() == served


# ---- a real multi-worker server, and who holds which connection (from /proc) -------------------


class ServeProcess:
    """``tailor serve --workers N`` in its own process group, logging to a file."""

    def __init__(self, env: dict[str, str], workers: int, log: Path) -> None:
        with contextlib.closing(socket.socket()) as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = log
        cmd = [sys.executable, "-m", "tailor.cli", "serve", "--workers", str(workers),
               "--port", str(self.port)]  # fmt: skip
        with log.open("wb") as out:  # own process group: teardown can signal every worker
            self.proc = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def started(self) -> int:
        """How many worker lifespans have completed (respawns included)."""
        return self.log.read_text(errors="replace").count("Application startup complete")

    def wait_started(self, count: int, timeout: float) -> None:
        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n{self._tail()}")
            return self.started() >= count

        wait_until(ready, timeout, f"{count} worker start-ups", interval=0.2)

    def workers(self) -> list[int]:
        """Pids of the live worker processes (the master's spawned children)."""
        return [p for p in _children(self.proc.pid) if b"spawn_main" in _cmdline(p)]

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGCONT)  # a stopped worker must see SIGTERM
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def _server_socket(server_port: int, client_port: int) -> tuple[int, int] | None:
    """(inode, unread bytes) of the server's end of the loopback connection from ``client_port``."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        local, remote = int(f[1].split(":")[1], 16), int(f[2].split(":")[1], 16)
        if (local, remote) == (server_port, client_port) and f[3] == "01":  # ESTABLISHED
            return int(f[9]), int(f[4].split(":")[1], 16)
    return None


def _owner(inode: int, pids: list[int]) -> int | None:
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return pid
    return None


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


def _client_port(http: httpx.Client) -> int:
    """Open (or reuse) the client's keep-alive connection and return its local port."""
    response = http.get("/healthz")
    return response.extensions["network_stream"].get_extra_info("client_addr")[1]


def _capture(outcome: dict, name: str, call, *args, **kwargs) -> None:
    """Run ``call`` in a thread and keep its result or the exception it raised."""
    try:
        outcome[name] = call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the test inspects what was raised
        outcome[name] = exc


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
            ports = [_client_port(raw), _client_port(client.http)]
        finally:
            os.kill(other, signal.SIGCONT)
        assert [_owner(_server_socket(srv.port, p)[0], workers) for p in ports] == [victim] * 2
        os.kill(victim, signal.SIGSTOP)
        outcome: dict = {}
        calls = [
            threading.Thread(target=_capture, args=(outcome, "raw", raw.post, "/v1/personalize"),
                             kwargs={"json": {"classes": TASKS[3]}}),
            threading.Thread(target=_capture, args=(outcome, "client", client.personalize),
                             kwargs={"classes": TASKS[3]}),
        ]  # fmt: skip
        for t in calls:
            t.start()
        wait_until(lambda: all(_server_socket(srv.port, p)[1] > 0 for p in ports), 10,
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
            assert live.metric("tailor_redis_up") == 0
            load.wait_ok(6)  # served with Redis down
            private_redis.start()
            wait_until(lambda: live.metric("tailor_redis_up") == 1, 20, "Redis seen back up")
            load.wait_ok(6)
            fresh = live.http.post("/v1/personalize", json={"classes": TASKS[3]})
            assert fresh.status_code == 200, fresh.text
            cache = redis.Redis.from_url(private_redis.url)
            wait_until(lambda: cache.keys(f"tailor:weights:{fresh.json()['id']}*"), 20,
                       "the new model's bytes in the restarted Redis")  # fmt: skip
            cache.close()
        assert load.wrong == [] and load.retryable == [], (load.wrong, load.retryable)
        _assert_nothing_lost(live.url, live.key, load)


def test_postgres_restart_under_load_gives_only_503s(run_live, make_settings, private_postgres):
    """While PostgreSQL restarts, requests get 503 + Retry-After (never 500); nothing is lost."""
    pg = private_postgres
    with run_live(make_settings(pg.url())) as live:
        spare = live.admin.post("/v1/keys", json={"name": "spare"}).json()["key"]
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
from service import crud, db
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
