"""Shared infrastructure fixtures: a real redis-server, a real PostgreSQL, a real uvicorn.

Nothing here is mocked. Servers run from temporary directories on free loopback ports and are
torn down at the end. PostgreSQL refuses to run as root, so when the suite runs as root (CI) the
cluster is owned by and started as the ``postgres`` system user. A fixture skips (with the
reason) only when the server binaries are not installed; ``make setup`` installs them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """Block until something accepts connections on ``port`` (or raise)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


class RedisServer:
    """A throw-away ``redis-server`` (no persistence) that tests can stop and restart."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary, self.workdir, self.port = binary, workdir, free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """``redis://`` URL of this server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart on the same port)."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(self.workdir)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)

    def stop(self) -> None:
        """Stop the server and wait until it is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None


def _redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server not installed (apt-get install redis-server)")
    return binary


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """A session-wide real Redis."""
    server = RedisServer(_redis_binary(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def private_redis(tmp_path) -> Iterator[RedisServer]:
    """A real Redis owned by one test (so it may stop and restart it)."""
    server = RedisServer(_redis_binary(), tmp_path)
    server.start()
    yield server
    server.stop()


def _pg_bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    """A throw-away PostgreSQL cluster (trust auth, unix socket + loopback TCP)."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir, self.root, self.port = bindir, root, free_port()
        self.datadir, self.sockdir = root / "data", root / "sock"
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        """initdb, then ``pg_ctl start`` and create the ``tailor`` database."""
        self.sockdir.mkdir(parents=True)
        if self.as_root:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.sockdir, "postgres")
            self.root.chmod(0o700)
        self._run("initdb", "-D", str(self.datadir), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        self.start_existing()
        self._run("createdb", "-h", str(self.sockdir), "-p", str(self.port), "-U", "postgres",
                  "tailor")  # fmt: skip

    def start_existing(self) -> None:
        """``pg_ctl start`` on the already initialised cluster (also: restart after stop)."""
        opts = f"-p {self.port} -k {self.sockdir} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.root / "pg.log")
        self._run("pg_ctl", "-D", str(self.datadir), "-o", opts, "-l", log, "-w", "start")

    def url(self, database: str = "tailor") -> str:
        """SQLAlchemy URL (psycopg 3) over loopback TCP."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create a fresh database in this cluster and return its URL."""
        self._run("createdb", "-h", str(self.sockdir), "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def stop(self) -> None:
        """``pg_ctl stop -m fast``."""
        with contextlib.suppress(subprocess.SubprocessError):
            self._run("pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "stop")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A session-wide real PostgreSQL (run as the ``postgres`` user when we are root)."""
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not installed (apt-get install postgresql)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as 'postgres'")
    root = Path(tempfile.mkdtemp(prefix="tailor-pg-"))
    server = PostgresServer(bindir, root)
    try:
        server.start()
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL failed to start: {exc.stderr.decode()[-2000:]}") from exc
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def private_postgres(tmp_path) -> Iterator[PostgresServer]:
    """A real PostgreSQL cluster owned by one test (so it may stop and restart it)."""
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not installed (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="tailor-pg-"))
    server = PostgresServer(bindir, root)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


class UvicornThread:
    """A real uvicorn server for an ASGI app, on a free port, in a background thread."""

    def __init__(self, app, port: int | None = None, **options) -> None:
        import uvicorn

        self.port = port or free_port()
        extra = {k: options.pop(k) for k in ("header_timeout_s",) if k in options}
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                **options)  # fmt: skip
        for name, value in extra.items():  # read by service.api.protocol (not a uvicorn option)
            setattr(config, name, value)
        self.server = uvicorn.Server(config)
        self.exit_code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.server.run()
        except SystemExit as exc:  # uvicorn exits 3 when the lifespan fails
            self.exit_code = int(exc.code or 0)

    @property
    def url(self) -> str:
        """Base URL of the server."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn failed to start (exit {self.exit_code}; see its log)")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture(scope="session")
def serve_app():
    """Factory: ``with serve_app(app) as server: httpx.get(server.url + ...)``."""
    return UvicornThread
