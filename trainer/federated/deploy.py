"""A real Flower deployment (SuperLink + one SuperNode per client): its inputs and its outputs.

A simulation writes every client's features into one folder. A deployment must not: each client
machine gets only its own features, the server only what every client shares (class text
features, the projection init). ``tailor train federated-prepare`` (:func:`prepare_main`) writes

- ``<out>/server/``: ``spec.json``, ``shared.npz`` — the run config's ``fed-dir``;
- ``<out>/client_<i>/``: ``spec.json``, ``shared.npz``, ``client_<i>.npz`` — copied to client
  machine ``i``, whose SuperNode gets ``--node-config "partition-id=<i> fed-dir='<folder>'"``;
- ``<out>/deployment.json``: those node configs and the ``flwr run --run-config`` string.

A deployed ServerApp runs in a subprocess of the SuperLink, so it reports through files:
:func:`save_outputs` writes ``global.safetensors``, ``personal_<client>.safetensors`` and
``result.json`` (per-round communication, per-client evaluation and personalisation) to the
run config's ``out-dir``. This module is imported by the ServerApp inside the FAB, so heavy
imports (backbone, features) stay inside :func:`prepare_main`.
"""

from __future__ import annotations

import argparse
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

import numpy as np

from trainer.federated.task import ClientData

#: lr / personal epochs that `tailor train federated --select-lr` picked on real Tailor-PACS
#: (docs/results-federated.md), used as the printed run config's defaults.
DEFAULT_LR = {"fedclip": 3e-3, "fedavg": 3e-5, "fedprox": 1e-4}


def _write_shared(folder: Path, spec: dict[str, Any], names: list[str],
                  shared: dict[str, np.ndarray]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "shared.npz", **shared)
    (folder / "spec.json").write_text(json.dumps({**spec, "clients": names}))


def write_deployment(root: Path, clients: list[ClientData], spec: dict[str, Any],
                     shared: dict[str, np.ndarray]) -> dict[str, Any]:
    """Write the server folder and one folder per client (its own features only).

    Returns:
        ``{"server": str, "clients": [str], "image_dim": int, "num_clients": int}``.
    """
    names = [c.name for c in clients]
    _write_shared(root / "server", spec, names, shared)
    folders = []
    for i, c in enumerate(clients):
        folder = root / f"client_{i}"
        _write_shared(folder, spec, names, shared)
        np.savez(folder / f"client_{i}.npz", **c.arrays)
        folders.append(str(folder.resolve()))
    return {"server": str((root / "server").resolve()), "clients": folders,
            "image_dim": int(clients[0].arrays["x_train"].shape[1]),
            "num_clients": len(clients)}


def config_string(values: dict[str, Any]) -> str:
    """``key=value`` pairs as Flower's ``--run-config`` / ``--node-config`` parse them (TOML
    values: strings quoted, so a path stays one value)."""
    def fmt(v: Any) -> str:
        if isinstance(v, str):
            return "'" + v + "'"
        return str(v).lower() if isinstance(v, bool) else repr(v)
    return " ".join(f"{k}={fmt(v)}" for k, v in values.items())


def node_config(partition_id: int, fed_dir: str) -> str:
    """A SuperNode's ``--node-config``: which partition it holds and where its folder is."""
    return config_string({"partition-id": partition_id, "fed-dir": fed_dir})


def save_outputs(out_dir: Path, cfg: dict[str, Any], sink: dict[str, Any],
                 client_names: list[str]) -> dict[str, Any]:
    """Write what a deployed federation produced (see the module docstring); return the JSON."""
    from safetensors.torch import save_file

    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in sink["global_state"].items()},
              str(out_dir / "global.safetensors"))
    for pid, rec in sink.get("personal", {}).items():
        save_file({k: v.contiguous() for k, v in rec["state"].items()},
                  str(out_dir / f"personal_{client_names[pid]}.safetensors"))
    result = {
        "config": cfg, "clients": client_names, "rounds": sink["rounds"],
        "client_eval": [{client_names[p]: m for p, m in e.items()} for e in sink["client_eval"]],
        "personal": {client_names[p]: r["metrics"] for p, r in sink.get("personal", {}).items()},
        "errors": sink["errors"]}
    tmp = out_dir / "result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(out_dir / "result.json")  # readers polling for result.json never see half
    return result


def suggested_run_config(info: dict[str, Any], method: str, kind: str, seed: int,
                         out_dir: Path) -> dict[str, Any]:
    """The ``flwr run --run-config`` values for a prepared deployment (every key must be
    declared in ``pyproject.toml``'s ``[tool.flwr.app.config]``, or the SuperLink rejects it)."""
    base = "fedclip" if method.startswith("fedclip") else method
    return {"fed-dir": info["server"], "image-dim": info["image_dim"],
            "method": "fedprox" if base == "fedprox" else "fedavg",
            "num-clients": info["num_clients"], "lr": DEFAULT_LR[base], "rounds": 8,
            "local-epochs": 2, "mu": 0.01 if base == "fedprox" else 0.0,
            "personal-epochs": 5 if kind == "embed" else 0, "seed": seed,
            "out-dir": str(out_dir.resolve())}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train federated-prepare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--out", default=".tailor/federated-deploy")
    p.add_argument("--pacs-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--backbone", default="latest",
                   help="'latest', foundation:<version>, 'default' or local-dir:/path")
    p.add_argument("--method", default="fedclip",
                   help="fedclip, fedclip_r<rank>, fedavg or fedprox (projection baselines)")
    p.add_argument("--domains", nargs="+", default=None,
                   help="client domains (default: all four), partition ids in this order")
    p.add_argument("--seed", type=int, default=0, help="60/20/20 split seed")
    p.add_argument("--device", default=None)
    return p


def prepare_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Compute frozen features per domain client and write a deployment (see module doc).

    Returns:
        The ``deployment.json`` payload (also printed): folders, node configs, run config.
    """
    from trainer.federated.cli import load_backbone, load_pacs
    from trainer.federated.data import FeatureCache, client_arrays, domain_clients
    from trainer.federated.experiment import method_spec, shared_inputs
    from trainer.federated.run import domain_features

    args = _parser().parse_args(argv)
    data = load_pacs(args)
    names = list(args.domains or data.domain_names)
    if unknown := set(names) - set(data.domain_names):
        raise SystemExit(f"unknown domains {sorted(unknown)}; choose from {data.domain_names}")
    backbone, source = load_backbone(args.backbone, args.store, args.device)
    rank = int(args.method.split("_r")[1]) if "_r" in args.method else None
    kind, spec = method_spec(args.method, backbone.logit_scale, rank)
    full = domain_features(backbone, FeatureCache(Path(args.data_dir) / "features"), data)
    splits = {s.name: s for s in domain_clients(np.asarray(data.domains),
                                                list(data.domain_names), args.seed)}
    labels = np.asarray(data.labels)
    clients = [ClientData(n, client_arrays(splits[n], full[kind][splits[n].all()], labels))
               for n in names]
    out = Path(args.out)
    shared = shared_inputs(backbone, list(data.class_names))[kind]
    info = write_deployment(out, clients, spec, shared)
    run_cfg = suggested_run_config(info, args.method, kind, args.seed, out / "result")
    payload = {"method": args.method, "backbone": source, "clients": names,
               "folders": info, "node_configs": [node_config(i, f) for i, f in
                                                 enumerate(info["clients"])],
               "run_config": config_string(run_cfg)}
    (out / "deployment.json").write_text(json.dumps(payload, indent=1))
    print(json.dumps(payload, indent=1), flush=True)
    return payload


# --- Loopback deployment: the same processes as on real machines, all on 127.0.0.1 -------------

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
