"""Run one anytime federation (one method, one client set) in a Flower simulation.

The server side is FedCLIP's (:mod:`trainer.federated.server_app`: Flower's FedAvg plus
accounting, then a ``train.personalize`` message to every node); only the ClientApp differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from trainer.anytime.client_app import make_client_app
from trainer.anytime.task import build_model, exchanged
from trainer.federated.simulation import simulate
from trainer.federated.task import ClientData, save_federation_inputs


def client_images(backbone: Any, images: np.ndarray, labels: np.ndarray, split: Any) -> ClientData:
    """A client's preprocessed images (float32 NCHW, the foundation's normalisation) per split."""
    arrays = {}
    for which in ("train", "val", "test"):
        idx = getattr(split, which)
        arrays[f"x_{which}"] = backbone.preprocess(images[idx]).cpu().numpy()
        arrays[f"y_{which}"] = labels[idx].astype(np.int64)
    return ClientData(split.name, arrays)


def anytime_job(fed_dir: Path, clients: list[ClientData], tiers: list[int],
                spec: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """One federation of ``clients`` with depth budgets ``tiers``, as a job for
    :func:`run_jobs` (its results land in ``job["sink"]``).

    Args:
        spec: ``foundation`` (an open_clip ``local-dir:`` bundle with a ViT tower),
            ``method`` (see :data:`model_store.anytime.METHODS`), ``adapter_rank``,
            ``num_classes``.
        cfg: :func:`trainer.federated.server_app.run_job`'s config plus ``exit_mode`` and
            ``personal_part`` (see :mod:`trainer.anytime.task`), and ``device`` for the
            clients.
    """
    if len(tiers) != len(clients):
        raise ValueError(f"{len(clients)} clients but {len(tiers)} depth budgets")
    save_federation_inputs(fed_dir, clients, {**spec, "tiers": [int(t) for t in tiers]}, {})
    fed = str(fed_dir)
    torch.manual_seed(int(cfg.get("seed", 0)))
    return {"cfg": {**cfg, "num_clients": len(clients), "fed-dir": fed},
            "initial_state": exchanged(build_model(fed)), "sink": {}}


def run_jobs(jobs: list[dict[str, Any]], num_nodes: int, num_cpus: int = 2,
             num_gpus: int = 0, backend: str = "ray") -> None:
    """Run :func:`anytime_job` federations back to back in one simulation: a Ray start costs
    more than a small federation, and each job keeps its own node state (its ``fed-dir``), so
    the results are those of separate runs. ``num_gpus`` GPUs are shared by the clients;
    ``backend`` is Ray's engine or the in-process grid (:func:`simulate`)."""
    simulate(jobs, num_nodes=num_nodes, num_cpus=num_cpus, client_app=make_client_app(),
             num_gpus=num_gpus, backend=backend)


def run_anytime(fed_dir: Path, clients: list[ClientData], tiers: list[int],
                spec: dict[str, Any], cfg: dict[str, Any], num_cpus: int = 2,
                num_gpus: int = 0, backend: str = "ray") -> dict[str, Any]:
    """Federate ``clients`` (see :func:`anytime_job`) on its own; return the server's sink."""
    job = anytime_job(fed_dir, clients, tiers, spec, cfg)
    run_jobs([job], len(clients), num_cpus, num_gpus, backend)
    return job["sink"]
