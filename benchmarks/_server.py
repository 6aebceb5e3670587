"""Real server processes for the service benchmark: ``redis-server`` + ``uvicorn --workers N``.

The API runs in its own process tree (never in the benchmark's process, so client and server do
not share a GIL), on loopback only, against a tiny-random but full-size TAPER artifact
(ResNet-18 × Q bases) and a SQLite registry migrated once up front (N workers must not race
``alembic upgrade`` on one file). ``rss_bytes`` reads every server process's resident set from
``/proc`` so memory is measured the way an operator's dashboard sees it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "bench-admin-Vb4nQ8rT2xL6mZ9pK3sW7yH5"  # strong enough for TAILOR_ENV=prod
# glibc knobs benchmarks/synthesis.py found: keep freed model-sized blocks in the heap instead of
# returning them to the OS, so each synthesis does not re-fault ~45 MB of fresh pages.
MALLOC_TUNED = {"MALLOC_TRIM_THRESHOLD_": str(512 << 20), "MALLOC_MMAP_THRESHOLD_": str(32 << 20)}


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before {url} was ready")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} not ready after {timeout}s")


def thread_env(threads: int) -> dict[str, str]:
    """Environment that pins torch/BLAS to ``threads`` intra-op threads in a new process."""
    return {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def build_store(work: Path, *, q: int, num_classes: int, use_encoder: bool = True) -> Path:
    """Write the tiny-random full-size artifact and a migrated SQLite registry under ``work``.

    ``use_encoder=False`` embeds the class prompts with seeded random vectors instead of loading
    the text encoder here (seconds saved in quick mode; the server loads its own encoder).
    """
    from model_store.testing import make_tiny_taper
    from service.core.db import prepare_database

    store = work / "store"
    make_tiny_taper(store, num_classes=num_classes, Q=q, seed=0, use_encoder=use_encoder)
    prepare_database(f"sqlite:///{work}/bench.db", migrate=True).dispose()
    return store


class Redis:
    """A throw-away loopback ``redis-server`` without persistence."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(workdir)]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Terminate and reap the server."""
        self.proc.terminate()
        self.proc.wait(10)


class Server:
    """``uvicorn service.main:create_app --workers N`` over ``store`` (a context manager).

    Args:
        work: scratch directory (holds ``bench.db``).
        store: artifact store.
        redis_url: weight cache.
        workers: uvicorn worker processes.
        env: extra environment (``TAILOR_*`` knobs, thread and malloc settings).
        device: the server's torch device (``TAILOR_DEVICE``); yardsticks must use the same.
    """

    def __init__(self, work: Path, store: Path, redis_url: str, *, workers: int,
                 env: dict[str, str], device: str = "cpu") -> None:  # fmt: skip
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.env = {
            **os.environ, "TAILOR_STORE_DIR": str(store), "TAILOR_ADMIN_KEY": ADMIN,
            "TAILOR_DATABASE_URL": f"sqlite:///{work}/bench.db", "TAILOR_DEVICE": device,
            "TAILOR_REDIS_URL": redis_url, "TAILOR_MIGRATE_ON_START": "false",
            "TAILOR_RATE_LIMIT_PER_MINUTE": "0", "TAILOR_MAX_BATCH": "64",
            "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **env,
        }  # fmt: skip
        for knob in MALLOC_TUNED:  # only what ``env`` asks for: an A/B must not inherit ours
            if knob not in env:
                self.env.pop(knob, None)
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        cmd = [sys.executable, "-m", "uvicorn", "service.main:create_app", "--factory",
               "--host", "127.0.0.1", "--port", str(self.port), "--workers", str(self.workers),
               "--log-level", "warning", "--no-access-log"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, env=self.env, cwd=ROOT)
        try:
            _wait_ready(self.url + "/readyz", self.proc, timeout=240)
            self._wait_workers(timeout=240)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_workers(self, timeout: float) -> None:
        """With N > 1, /readyz answers once ONE worker is up: wait until all N have started and
        the tree has gone quiet (start-up is CPU-bound: imports, artifact load, migrations check).
        """
        deadline = time.monotonic() + timeout
        need = self.workers + 1 if self.workers > 1 else 1  # master + workers
        while len(self.pids()) < need and time.monotonic() < deadline:
            time.sleep(0.2)
        self.wait_quiet(max(1.0, deadline - time.monotonic()))

    def wait_quiet(self, timeout: float = 60, interval: float = 0.5) -> None:
        """Block until the server tree uses < 10 % of a core over ``interval`` (background work
        such as write-behinds has finished), or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        last = self.cpu_seconds()
        while time.monotonic() < deadline:
            time.sleep(interval)
            now = self.cpu_seconds()
            if now - last < 0.1 * interval:
                return
            last = now

    def cpu_seconds(self) -> float:
        """User + system CPU time consumed so far by the server's processes."""
        tick, total = os.sysconf("SC_CLK_TCK"), 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / tick

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        children = self.pids()[1:]
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        for pid in children:  # our own workers only, by pid, should any outlive the master
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None

    def pids(self) -> list[int]:
        """The uvicorn master and all its descendants (workers, multiprocessing helpers)."""
        if self.proc is None:
            return []
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        tree, frontier = [self.proc.pid], [self.proc.pid]
        while frontier:
            frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
            tree += frontier
        return tree

    def rss_bytes(self) -> int:
        """Total resident memory (VmRSS) of the server's processes."""
        total = 0
        for pid in self.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        return total
