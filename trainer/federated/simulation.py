"""Run one federation on this machine with Flower's simulation engine (Ray backend).

The same ServerApp/ClientApp run on a real deployment (SuperLink + SuperNodes, see
docs/results-federated.md); here ``run_simulation`` starts one virtual SuperNode per client.

Ray starts its worker processes at nice 15 by default; on a shared 2-core machine those workers
starve behind any normal-priority job and a seconds-long federation takes minutes. We set
``RAY_worker_niceness`` to this process's own niceness (an unprivileged process may always keep
its niceness) so workers compete on equal terms with the driver — and run the driver itself
with ``nice`` when the machine is shared.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import torch
from flwr.clientapp import ClientApp
from flwr.simulation import run_simulation

from trainer.federated.client_app import make_client_app
from trainer.federated.inline import run_inline
from trainer.federated.server_app import make_server_app
from trainer.federated.task import (
    ClientData,
    build_model,
    save_federation_inputs,
    unseen_evaluator,
)

BACKENDS = ("ray", "inline")


def _ray_env(num_cpus: int, num_gpus: int = 0) -> dict[str, Any]:
    """Ray's settings: one CPU per simulated client; with GPUs, each client also takes a
    share of one, so that ``num_cpus`` clients run on it at once."""
    os.environ.setdefault("RAY_worker_niceness", str(os.nice(0)))
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    return {
        "client_resources": {"num_cpus": 1,
                             "num_gpus": num_gpus / max(num_cpus, 1) if num_gpus else 0.0},
        "init_args": {"num_cpus": num_cpus, "num_gpus": num_gpus, "logging_level": logging.ERROR,
                      "log_to_driver": False},
    }


def run_federation(fed_dir: Path, clients: list[ClientData], spec: dict[str, Any],
                   shared: dict, cfg: dict[str, Any], unseen: ClientData | None = None,
                   num_cpus: int = 2) -> dict[str, Any]:
    """Federate ``clients`` (one Flower SuperNode each); return what the server recorded.

    Args:
        fed_dir: Scratch directory for the per-client feature files the ClientApps read.
        clients: Participating clients' cached features.
        spec: Model spec (see :class:`~trainer.federated.task.FeatureModel`).
        shared: Shared numpy inputs (``text``, and for ``proj`` the projection init).
        cfg: Server config (see :func:`~trainer.federated.server_app.make_server_app`).
        unseen: Held-out client scored server-side after every round (generalisation).
        num_cpus: CPUs Ray may use (one simulated client per CPU at a time).

    Returns:
        The server sink: ``global_state``, ``rounds`` (communication), ``client_eval``,
        ``unseen_curve``, ``personal``, ``last_uploads``, ``seconds``.
    """
    save_federation_inputs(fed_dir, clients, spec, shared)
    fed = str(fed_dir)
    torch.manual_seed(int(cfg.get("seed", 0)))
    init = build_model(fed, clients[0].arrays["x_train"].shape[1])
    sink: dict[str, Any] = {}
    job = {"cfg": {**cfg, "num_clients": len(clients), "fed-dir": fed},
           "initial_state": init.exchanged(), "sink": sink,
           "evaluate_fn": unseen_evaluator(fed, unseen, sink)}
    seconds = simulate([job], num_nodes=len(clients), num_cpus=num_cpus)
    sink["seconds"] = seconds
    return sink


def simulate(jobs: list[dict[str, Any]], num_nodes: int, num_cpus: int = 2,
             client_app: ClientApp | None = None, num_gpus: int = 0,
             backend: str = "ray") -> float:
    """Run ``jobs`` (see :func:`make_server_app`) in one Flower simulation; return seconds.

    ``client_app`` defaults to FedCLIP's; the anytime trainer passes its own (the server side,
    FedAvg with accounting, is the same for both). ``backend="inline"`` runs the same apps
    without Ray, nodes in turn in this process (:mod:`trainer.federated.inline`; ``num_cpus``
    and ``num_gpus`` then do not apply).

    Raises:
        RuntimeError: A job did not finish (a client failed or timed out).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    t0 = time.perf_counter()
    if backend == "inline":
        run_inline(make_server_app(jobs), client_app or make_client_app(), num_nodes)
    else:
        run_simulation(server_app=make_server_app(jobs),
                       client_app=client_app or make_client_app(), num_supernodes=num_nodes,
                       backend_name="ray", backend_config=_ray_env(num_cpus, num_gpus))
    for job in jobs:
        if "global_state" not in job.get("sink", {}):
            raise RuntimeError(f"federation did not finish; client errors: "
                               f"{job.get('sink', {}).get('errors')}")
    return time.perf_counter() - t0
