"""Fault-test kit: checked load, a multi-worker ``tailor serve`` process, and /proc look-ups.

Kept apart from the tests so each reads as a scenario. Everything polls against deadlines.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from service_testkit import b64, images, png

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
        return [p for p in children(self.proc.pid) if b"spawn_main" in cmdline(p)]

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


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry.name))
    return found


def cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def server_socket(server_port: int, client_port: int) -> tuple[int, int] | None:
    """(inode, unread bytes) of the server's end of the loopback connection from ``client_port``."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        local, remote = int(f[1].split(":")[1], 16), int(f[2].split(":")[1], 16)
        if (local, remote) == (server_port, client_port) and f[3] == "01":  # ESTABLISHED
            return int(f[9]), int(f[4].split(":")[1], 16)
    return None


def owner(inode: int, pids: list[int]) -> int | None:
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return pid
    return None


def client_port(http: httpx.Client) -> int:
    """Open (or reuse) the client's keep-alive connection and return its local port."""
    response = http.get("/healthz")
    return response.extensions["network_stream"].get_extra_info("client_addr")[1]


def capture(outcome: dict, name: str, call, *args, **kwargs) -> None:
    """Run ``call`` in a thread and keep its result or the exception it raised."""
    try:
        outcome[name] = call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the test inspects what was raised
        outcome[name] = exc
