"""A real Flower deployment (SuperLink + one SuperNode per client): its inputs and its outputs.

A simulation writes every client's features into one folder. A deployment must not: each client
machine gets only its own features, the server only what every client shares (class text
features, the projection init). ``tailor train federated-prepare`` (:func:`prepare_main`) writes

- ``<out>/server/``: ``spec.json``, ``shared.npz`` — the run config's ``fed-dir``;
- ``<out>/client_<i>/``: ``spec.json``, ``shared.npz``, ``client_<i>.npz`` — copied to client
  machine ``i``, whose SuperNode gets ``--node-config "partition-id=<i> fed-dir='<folder>'"``;
- ``<out>/deployment.json``: those node configs and the ``flwr run --run-config`` string.

A deployed ServerApp runs in a subprocess of the SuperLink, so it reports through files:
:func:`trainer.federated.report.save_outputs` writes ``global.safetensors``,
``personal_<client>.safetensors`` and
``result.json`` (per-round communication, per-client evaluation and personalisation) to the
run config's ``out-dir``; ``tailor train federated-register`` (:func:`register_main`) turns
that into the ``fedclip`` artifact the service serves. This module is imported by the ServerApp
inside the FAB, so heavy imports (backbone, features, artifacts) stay inside functions.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from trainer.federated.task import ClientData

#: lrs that `tailor train federated --select` chose on real Tailor-PACS when all four domains
#: federate (run 5, docs/results-federated.md), used as the printed run config's defaults;
#: FedProx chose FedAvg's 3e-5 in 3 of 4 leave-one-out tasks.
DEFAULT_LR = {"fedclip": 3e-3, "fedavg": 3e-5, "fedprox": 3e-5}


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
    from trainer.federated.data import (
        FeatureCache,
        client_arrays,
        domain_clients,
        domain_features,
        load_backbone,
        load_pacs,
    )
    from trainer.federated.experiment import method_spec, shared_inputs

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
               "classes": list(data.class_names),
               "folders": info, "node_configs": [node_config(i, f) for i, f in
                                                 enumerate(info["clients"])],
               "run_config": config_string(run_cfg)}
    (out / "deployment.json").write_text(json.dumps(payload, indent=1))
    print(json.dumps(payload, indent=1), flush=True)
    return payload


def register_main(argv: list[str] | None = None) -> str:
    """Turn a deployed FedCLIP federation's output into the ``fedclip`` artifact the service
    serves (global + per-client adapters, class text, backbone reference); returns its version.

    Reads ``<deployment>/deployment.json`` (written by :func:`prepare_main`), the server folder
    and the ServerApp's ``out-dir``; the same artifact ``tailor train federated`` writes.
    """
    from flwr.common.config import parse_config_args
    from safetensors.torch import load_file

    from model_store.adapters import write_fedclip_artifact
    from trainer.federated.task import load_shared

    p = argparse.ArgumentParser(prog="tailor train federated-register", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deployment", default=".tailor/federated-deploy")
    p.add_argument("--result", default=None, help="the run's out-dir (default: from the run "
                                                  "config in deployment.json)")
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    args = p.parse_args(argv)
    if not (Path(args.deployment) / "deployment.json").exists():
        raise SystemExit(f"no deployment.json in {args.deployment}: pass the --out folder of "
                         "`tailor train federated-prepare` as --deployment")
    dep = json.loads((Path(args.deployment) / "deployment.json").read_text())
    if not str(dep["method"]).startswith("fedclip"):
        raise SystemExit(f"method {dep['method']!r} fine-tunes projections, not an adapter: "
                         "only FedCLIP deployments produce a servable fedclip artifact")
    out = Path(args.result or parse_config_args([dep["run_config"]])["out-dir"])
    if not (out / "result.json").exists():
        raise SystemExit(f"no result.json in {out}: has the `flwr run` finished (with out-dir)?")
    result = json.loads((out / "result.json").read_text())
    spec, shared = load_shared(dep["folders"]["server"])

    def adapter_state(path: Path) -> dict:
        return {k.removeprefix("adapter."): v for k, v in load_file(str(path)).items()}

    ref = write_fedclip_artifact(
        args.store, global_state=adapter_state(out / "global.safetensors"),
        client_states={c: adapter_state(out / f"personal_{c}.safetensors")
                       for c in result["personal"]},
        adapter_config={"type": "attention", "dim": int(shared["text"].shape[1]),
                        "rank": spec.get("rank")},
        class_names=dep["classes"], text_features=shared["text"], logit_scale=spec["scale"],
        backbone=dep["backbone"],
        metadata={"source": "flower-deployment", "training": result["config"],
                  "comm": result["rounds"], "personal": result["personal"],
                  "client_eval": result["client_eval"][-1] if result["client_eval"] else {}})
    print(json.dumps({"version": ref.version, "path": str(ref.path)}), flush=True)
    return ref.version
