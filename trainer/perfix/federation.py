"""Run one prefix-personalization federation (one method, one client set) in a Flower simulation.

The server is FedCLIP's (:mod:`trainer.federated.server_app`: Flower's FedAvg over what clients
send, with accounting); only the ClientApp differs. Evaluation runs on every node after every
round (each client scores global + its own part), so the last round's per-client numbers are
the method's result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer.federated.simulation import simulate
from trainer.federated.task import ClientData, save_federation_inputs
from trainer.perfix.client_app import make_client_app
from trainer.perfix.task import build_model, exchanged


def perfix_job(fed_dir: Path, clients: list[ClientData], spec: dict[str, Any],
               cfg: dict[str, Any], collect: bool = False) -> dict[str, Any]:
    """One federation of ``clients`` as a job for :func:`run_jobs` (results in ``job["sink"]``;
    ``collect``: also ask every client for its local part after the last round, into
    ``sink["personal"]``, to deploy the federation).

    Args:
        spec: ``foundation`` (an open_clip ``local-dir:`` bundle with a ViT tower), ``method``
            (:data:`model_store.perfix.METHODS`), ``num_classes``, ``init_seed``, ``rank``,
            ``scale``, ``num_tokens``.
        cfg: :func:`trainer.federated.server_app.run_job`'s config.
    """
    save_federation_inputs(fed_dir, clients, spec, {})
    fed = str(fed_dir)
    cfg = {**cfg, "num_clients": len(clients), "fed-dir": fed, "personal_epochs": int(collect)}
    return {"cfg": cfg, "initial_state": exchanged(build_model(fed)), "sink": {}}


def run_jobs(jobs: list[dict[str, Any]], num_nodes: int, num_cpus: int = 2,
             backend: str = "ray") -> None:
    """Run :func:`perfix_job` federations back to back in one simulation: a Ray start costs
    more than a small federation, and each job keeps its own node state (its ``fed-dir``), so
    the results are those of separate runs. ``backend``: see :func:`simulate`."""
    simulate(jobs, num_nodes=num_nodes, num_cpus=num_cpus, client_app=make_client_app(),
             backend=backend)


def run_perfix(fed_dir: Path, clients: list[ClientData], spec: dict[str, Any],
               cfg: dict[str, Any], num_cpus: int = 2, collect: bool = False) -> dict[str, Any]:
    """Federate ``clients`` (see :func:`perfix_job`) on its own; return the server's sink."""
    job = perfix_job(fed_dir, clients, spec, cfg, collect)
    run_jobs([job], len(clients), num_cpus)
    return job["sink"]
