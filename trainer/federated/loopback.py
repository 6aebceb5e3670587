"""A Flower deployment on one machine: the same processes as across machines, on 127.0.0.1.

``flower-superlink``, one ``flower-supernode`` per client folder (each with its own FLWR_HOME,
like separate machines) and the ``flwr`` CLI with a SuperLink connection in its
``$FLWR_HOME/config.toml``. Used by ``tests/trainer/test_federated_deployment.py`` and
``benchmarks/flower_deployment.py``, and handy to rehearse a deployment before using real hosts.
Two things a deployment needs that the simulation does not: the interpreter's bin folder on PATH
(the SuperLink spawns ``flower-superexec`` and ``flwr-serverapp`` by name) and
``--disable-runtime-dependency-installation`` (else the SuperLink ``uv sync``s the app's
dependencies, torch included, from the network).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trainer.federated.deploy import node_config


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on loopback (held open together so they differ)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _env(home: Path) -> dict[str, str]:
    """SuperLink/SuperNode spawn ``flower-superexec``/``flwr-*app`` by name: the interpreter's
    bin folder must be on PATH. Each process gets its own FLWR_HOME, like separate machines."""
    home.mkdir(parents=True, exist_ok=True)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "FLWR_HOME": str(home), "PYTHONUNBUFFERED": "1"}


def write_connection(home: Path, name: str, address: str) -> None:
    """The ``flwr`` CLI's SuperLink connection (``$FLWR_HOME/config.toml``), insecure (no TLS)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "{name}"\n\n[superlink.{name}]\n'
        f'address = "{address}"\ninsecure = true\n')


@contextlib.contextmanager
def local_deployment(client_dirs: list[str], work: Path) -> Iterator[dict[str, Any]]:
    """Start a SuperLink and one SuperNode per client folder on loopback; stop them on exit.

    Yields ``{"env": <environment for the flwr CLI>, "connection": name, "logs": folder}``.
    Every process starts in its own session, so exit (or a failure) kills its whole group,
    including the ``flower-superexec`` / ``flwr-*app`` children it spawned.
    """
    fleet, control, appio, *node_ports = free_ports(3 + len(client_dirs))
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    cmds = [("superlink", ["flower-superlink", "--insecure",
                           "--disable-runtime-dependency-installation",  # never `uv sync`
                           "--fleet-api-address", f"127.0.0.1:{fleet}",
                           "--control-api-address", f"127.0.0.1:{control}",
                           "--serverappio-api-address", f"127.0.0.1:{appio}"])]
    for i, (folder, port) in enumerate(zip(client_dirs, node_ports, strict=True)):
        cmds.append((f"supernode{i}", [
            "flower-supernode", "--insecure", "--superlink", f"127.0.0.1:{fleet}",
            "--clientappio-api-address", f"127.0.0.1:{port}",
            "--node-config", node_config(i, folder)]))
    procs: list[subprocess.Popen] = []
    try:
        for name, cmd in cmds:
            with open(logs / f"{name}.log", "wb") as log:
                procs.append(subprocess.Popen(cmd, env=_env(work / "home" / name), stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        write_connection(work / "home" / "cli", "loopback", f"127.0.0.1:{control}")
        yield {"env": _env(work / "home" / "cli"), "connection": "loopback", "logs": logs}
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)
            # A flwr-serverapp whose SuperLink went away keeps retrying it after SIGTERM.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)


def flwr_run(project: Path, dep: dict[str, Any], run_config: str) -> str:
    """``flwr run <project> <connection> --run-config ...``; returns the run id."""
    out = subprocess.run(["flwr", "run", str(project), dep["connection"], "--run-config",
                          run_config, "--format", "json"], env=dep["env"], capture_output=True,
                         text=True, timeout=300)
    try:
        return str(json.loads(out.stdout[out.stdout.index("{"):])["run-id"])
    except (ValueError, KeyError) as err:
        raise RuntimeError(f"flwr run failed ({out.returncode}): {out.stdout}{out.stderr}") \
            from err


def _flwr_json(dep: dict[str, Any], *args: str) -> dict[str, Any]:
    out = subprocess.run(["flwr", *args, dep["connection"], "--format", "json"], env=dep["env"],
                         capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout[out.stdout.index("{"):]) if "{" in out.stdout else {}


def wait_for_result(dep: dict[str, Any], run_id: str, out_dir: Path,
                    timeout: float = 600) -> dict[str, Any]:
    """Wait for the ServerApp's ``result.json``; fail fast (with the run's log) if the run ends
    without one."""
    start, checked = time.monotonic(), time.monotonic()
    while time.monotonic() - start < timeout:
        if (out_dir / "result.json").exists():
            return json.loads((out_dir / "result.json").read_text())
        if time.monotonic() - checked > 20:  # a `flwr ls` costs a CLI start-up: not every poll
            checked = time.monotonic()
            runs = _flwr_json(dep, "ls", "--run-id", run_id).get("runs", [{}])
            status = str(runs[0].get("status", "")) if runs else ""
            if status.startswith("finished") and not (out_dir / "result.json").exists():
                log = subprocess.run(["flwr", "log", run_id, dep["connection"], "--show"],
                                     env=dep["env"], capture_output=True, text=True, timeout=120)
                raise RuntimeError(f"run {run_id} {status} without a result:\n"
                                   f"{log.stdout[-4000:]}")
        time.sleep(0.5)
    raise TimeoutError(f"run {run_id}: no {out_dir / 'result.json'} after {timeout:.0f} s")
