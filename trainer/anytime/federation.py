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


def run_anytime(fed_dir: Path, clients: list[ClientData], tiers: list[int],
                spec: dict[str, Any], cfg: dict[str, Any], num_cpus: int = 2,
                num_gpus: int = 0) -> dict[str, Any]:
    """Federate ``clients`` with depth budgets ``tiers``; return the server's sink.

    Args:
        spec: ``foundation`` (an open_clip ``local-dir:`` bundle with a ViT tower),
            ``method`` (see :data:`model_store.anytime.METHODS`), ``adapter_rank``,
            ``num_classes``.
        cfg: :func:`trainer.federated.server_app.run_job`'s config plus ``exit_mode`` and
            ``personal_part`` (see :mod:`trainer.anytime.task`), and ``device`` for the
            clients (with ``num_gpus`` GPUs for Ray to share among them).
    """
    if len(tiers) != len(clients):
        raise ValueError(f"{len(clients)} clients but {len(tiers)} depth budgets")
    save_federation_inputs(fed_dir, clients, {**spec, "tiers": [int(t) for t in tiers]}, {})
    fed = str(fed_dir)
    torch.manual_seed(int(cfg.get("seed", 0)))
    sink: dict[str, Any] = {}
    job = {"cfg": {**cfg, "num_clients": len(clients), "fed-dir": fed},
           "initial_state": exchanged(build_model(fed)), "sink": sink}
    sink["seconds"] = simulate([job], num_nodes=len(clients), num_cpus=num_cpus,
                               client_app=make_client_app(), num_gpus=num_gpus)
    return sink
