"""A real, loopback-only Tailor stack for the load and fuzz scripts (not a test fixture).

``LiveStack`` builds a tiny-random but full-size TAPER artifact (ResNet-18, Q bases), starts a
real ``redis-server`` (when installed), migrates a SQLite registry (or the ``database_url`` you
pass, e.g. PostgreSQL), and runs ``uvicorn service.main:create_app --workers N`` in a subprocess
so client and server never share a GIL. Everything binds to 127.0.0.1 and is torn down on exit.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks._server import ADMIN, ROOT, free_port
from benchmarks._server import _wait_ready as _wait


class LiveStack:
    """Context manager: ``with LiveStack(workers=2, env={...}) as s: s.url, s.admin_headers``.

    Args:
        workers: uvicorn worker processes.
        q: number of TAPER bases in the artifact.
        env: extra ``TAILOR_*`` settings (e.g. the rate limit).
        database_url: registry URL; a SQLite file in the work dir when None.
        log_level: uvicorn log level (``warning`` keeps output readable).
    """

    def __init__(self, *, workers: int = 1, q: int = 2, env: dict[str, str] | None = None,
                 database_url: str | None = None, log_level: str = "warning") -> None:  # fmt: skip
        self.workers, self.q, self.extra_env, self.log_level = workers, q, env or {}, log_level
        self.work = Path(tempfile.mkdtemp(prefix="tailor-live-"))
        self.database_url = database_url or f"sqlite:///{self.work}/tailor.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.redis_url: str | None = None
        self._procs: list[subprocess.Popen] = []

    @property
    def admin_headers(self) -> dict[str, str]:
        """Authorization header for the admin key."""
        return {"Authorization": f"Bearer {ADMIN}"}

    def make_keys(self, n: int) -> list[str]:
        """``n`` fresh client keys (one client each), created through the admin route."""
        with httpx.Client(base_url=self.url, headers=self.admin_headers, timeout=60) as http:
            made = [http.post("/v1/keys", json={"name": f"bench-{i}"}) for i in range(n)]
        for resp in made:
            resp.raise_for_status()
        return [resp.json()["key"] for resp in made]

    def _start_redis(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            print("redis-server not installed: running without Redis", file=sys.stderr)
            return
        port = free_port()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.work)]  # fmt: skip
        self._procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL))
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("redis-server did not start")

    def _env(self) -> dict[str, str]:
        env = {**os.environ, "TAILOR_STORE_DIR": str(self.work / "store"),
               "TAILOR_ADMIN_KEY": ADMIN, "TAILOR_DATABASE_URL": self.database_url,
               "TAILOR_DEVICE": "cpu", "TAILOR_MIGRATE_ON_START": "0"}  # fmt: skip
        if self.redis_url:
            env["TAILOR_REDIS_URL"] = self.redis_url
        env.update(self.extra_env)
        return env

    def __enter__(self) -> LiveStack:
        from model_store.testing import make_tiny_taper
        from service.core import db

        try:
            make_tiny_taper(self.work / "store", num_classes=12, Q=self.q, seed=0)
            db.upgrade(self.database_url)  # once, before workers race to do it
            self._start_redis()
            cmd = [sys.executable, "-m", "uvicorn", "service.main:create_app", "--factory",
                   "--host", "127.0.0.1", "--port", str(self.port), "--workers",
                   str(self.workers), "--log-level", self.log_level]  # fmt: skip
            server = subprocess.Popen(cmd, env=self._env(), cwd=ROOT)
            self._procs.insert(0, server)
            _wait(self.url + "/readyz", server, timeout=300)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for proc in self._procs:  # server first, then redis
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self._procs.clear()
        shutil.rmtree(self.work, ignore_errors=True)
