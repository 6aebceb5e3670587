"""The FedCLIP benchmark on Tailor-PACS: zero-shot, FedAvg, FedProx and FedCLIP, LODO x seeds.

For each seed the 4 domain clients are split 60/20/20; for each held-out domain the other three
federate and the held-out one is scored after every round (generalisation). Every method runs in
ONE Flower simulation per client count (3 SuperNodes for the leave-one-out tasks), one federation
after another, because starting Ray costs ~12-30 s here while a round of these small heads costs
well under a second.

Methods and exactly what each exchanges per round, per client and direction:
- ``zero_shot``: nothing (cosine of foundation image and text embeddings).
- ``fedclip``: the attention adapter (``adapter.fc1``, ``adapter.fc2``; d x d each + biases).
- ``fedclip_r<k>``: the low-rank adapter (``2dk + k + d``).
- ``fedavg`` / ``fedprox``: the backbone's image projection ``visual.head.proj.weight`` and text
  projection ``text.proj.weight`` fine-tuned on cached trunk / pooled-text features (FedProx adds
  the client-side proximal term). The full-backbone variants (both towers, as in the paper) are
  not trained here — a CPU cannot afford them — their per-round size is reported analytically.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from model_store.adapters import adapter_logits
from model_store.clip import ClipBackbone
from trainer.federated.foundation import pooled_prompts, text_features
from trainer.federated.selection import candidates, chosen, record, resolve
from trainer.federated.task import (
    ClientData,
    build_model,
    save_federation_inputs,
    unseen_evaluator,
)

METHODS = ("fedclip", "fedavg", "fedprox")


def shared_inputs(backbone: ClipBackbone, class_names: list[str]) -> dict[str, dict]:
    """Model inputs every client shares: class text for the adapter and for the proj baselines."""
    pooled = pooled_prompts(backbone, class_names).mean(1)
    model = backbone.model
    return {
        "embed": {"text": text_features(backbone, class_names).numpy()},
        "trunk": {"text": pooled.numpy(),
                  "image_proj": backbone.image_projection().cpu().numpy(),
                  "text_proj": model.text.proj.weight.detach().cpu().numpy()},
    }


def zero_shot(clients: list[ClientData], text: np.ndarray, scale: float) -> dict[str, float]:
    """Test accuracy of the foundation alone on each client."""
    t = torch.from_numpy(text)
    out = {}
    for c in clients:
        x, y = c.split("test")
        out[c.name] = float((adapter_logits(None, x, t, scale).argmax(1) == y).float().mean())
    return out


def method_spec(method: str, scale: float, rank: int | None) -> tuple[str, dict[str, Any]]:
    """Feature kind and model spec of a method."""
    if method.startswith("fedclip"):
        return "embed", {"kind": "adapter", "scale": scale, "rank": rank}
    if method in ("fedavg", "fedprox"):
        return "trunk", {"kind": "proj", "scale": scale}
    raise ValueError(f"unknown method {method!r}")


def make_job(method: str, participants: list[ClientData], unseen: ClientData | None,
             shared: dict[str, np.ndarray], spec: dict[str, Any], cfg: dict[str, Any],
             root: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """One federation as a ServerApp job; inputs are written only when its turn comes.

    ``cfg`` values may be lazy (:func:`trainer.federated.selection.chosen`): they are read when
    the job starts, after the selection jobs before it in the same simulation have finished.
    """
    sink: dict[str, Any] = {"meta": meta}

    def prepare() -> dict[str, Any]:
        job_cfg = resolve(cfg)
        sink["meta"].update(lr=job_cfg["lr"], mu=job_cfg["mu"], rounds=job_cfg["rounds"])
        fed_dir = Path(tempfile.mkdtemp(prefix=f"{method}-", dir=root))
        save_federation_inputs(fed_dir, participants, spec, shared)
        torch.manual_seed(int(job_cfg["seed"]))
        init = build_model(str(fed_dir), participants[0].arrays["x_train"].shape[1])
        job_cfg.update(method="fedprox" if method == "fedprox" else "fedavg",
                       num_clients=len(participants), **{"fed-dir": str(fed_dir)})
        return {"cfg": job_cfg, "initial_state": init.exchanged(),
                "evaluate_fn": unseen_evaluator(str(fed_dir), unseen, sink)}

    return {"prepare": prepare, "sink": sink}


def task_jobs(task: str, participants: dict[str, list[ClientData]],
              unseen: dict[str, ClientData] | None, shared: dict[str, dict], scale: float,
              cfg: dict[str, Any], methods: list[str], root: Path, seed: int,
              table: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One federation per method on one task's participants, at the task's chosen settings.

    Args:
        task: The held-out domain (leave-one-out) or the name of a 4-client setting.
        participants: Per feature kind (``embed``/``trunk``), the federating clients.
        unseen: Per feature kind, the held-out client scored after every round (or ``None``).
        table: Filled by :func:`selection_jobs` (lr, mu, rounds per task and method); ``None``
            uses ``cfg``'s defaults. Every method is personalised afterwards (FedAvg + local
            fine-tuning is the baseline for the personalised FedCLIP).
    """
    jobs = []
    for method in methods:
        rank = int(method.split("_r")[1]) if "_r" in method else None
        kind, spec = method_spec(method, scale, rank)
        default_lr = cfg["lr_adapter" if kind == "embed" else "lr_proj"]
        mcfg = {**cfg, "seed": seed,
                **{key: chosen(table, task, method, key, default)
                   for key, default in (("lr", default_lr), ("mu", cfg["mu"]),
                                        ("rounds", cfg["rounds"]))}}
        meta = {"seed": seed, "held_out": task, "method": method,
                "participants": [c.name for c in participants[kind]]}
        jobs.append(make_job(method, participants[kind], unseen[kind] if unseen else None,
                             shared[kind], spec, mcfg, root, meta))
    return jobs


def lodo_tasks(features: dict[str, list[ClientData]]):
    """``(held-out name, participants per kind, unseen per kind)`` for every domain."""
    names = [c.name for c in features["embed"]]
    for held, name in enumerate(names):
        parts = {k: [c for i, c in enumerate(v) if i != held] for k, v in features.items()}
        yield name, parts, {k: v[held] for k, v in features.items()}


def summarize_job(job: dict[str, Any]) -> dict[str, Any]:
    """A JSON-able row: final accuracies, curves, communication and personalisation."""
    sink = job["sink"]
    meta = sink["meta"]
    last_eval = sink["client_eval"][-1] if sink["client_eval"] else {}
    parts = meta["participants"]
    row = {**meta,
           "unseen_acc": sink["unseen_curve"][-1][1] if sink.get("unseen_curve") else None,
           "unseen_curve": sink.get("unseen_curve", []),
           "participant_acc": {parts[p]: m["test_acc"] for p, m in last_eval.items()},
           "participant_curve": [float(np.mean([m["test_acc"] for m in e.values()]))
                                 for e in sink["client_eval"]],
           "comm": sink["rounds"],
           "personal_acc": {parts[p]: r["metrics"]["test_acc"]
                            for p, r in sink.get("personal", {}).items()},
           "personal_epoch": {parts[p]: r["metrics"]["best_epoch"]
                              for p, r in sink.get("personal", {}).items()}}
    return row


def selection_jobs(task: str, participants: dict[str, list[ClientData]], shared: dict[str, dict],
                   scale: float, cfg: dict[str, Any], methods: list[str], root: Path,
                   grids: dict[str, list[float]], table: dict[str, Any]) -> list[dict[str, Any]]:
    """Candidate federations of one task, scored on its participants' val (see ``selection``).

    No candidate has an unseen client, so the held-out domain is never loaded; each records its
    score in ``table`` when done. ``cfg["max_rounds"]`` is how long each candidate runs.
    """
    if "fedprox" in methods and "fedavg" not in methods:
        raise ValueError("FedProx is tuned at FedAvg's chosen lr: select fedavg too")
    jobs = []
    for method in sorted(methods, key=lambda m: m == "fedprox"):  # FedProx reads FedAvg's lr
        rank = int(method.split("_r")[1]) if "_r" in method else None
        kind, spec = method_spec(method, scale, rank)
        for setting in candidates(method, grids):
            lr = setting.get("lr") or chosen(table, task, setting.get("lr_from", ""), "lr", None)
            mcfg = {**cfg, "seed": 0, "lr": lr, "mu": setting.get("mu", cfg["mu"]),
                    "rounds": cfg["max_rounds"], "personal_epochs": 0}
            meta = {"seed": 0, "held_out": task, "method": method, "selection": True,
                    "participants": [c.name for c in participants[kind]]}
            job = make_job(method, participants[kind], None, shared[kind], spec, mcfg, root, meta)
            job["on_done"] = (lambda j, m=method, s=setting:
                              record(table, task, m, s, j["sink"]))  # fmt: skip
            jobs.append(job)
    return jobs
