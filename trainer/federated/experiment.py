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
from trainer.federated.data import ClientSplit, FeatureCache, client_arrays, domain_clients
from trainer.federated.foundation import pooled_prompts, text_features
from trainer.federated.task import (
    ClientData,
    build_model,
    save_federation_inputs,
    unseen_evaluator,
)

METHODS = ("fedclip", "fedavg", "fedprox")


def extract(backbone: ClipBackbone, cache: FeatureCache, images: np.ndarray, labels: np.ndarray,
            splits: list[ClientSplit]) -> dict[str, list[ClientData]]:
    """Per-client cached features: ``embed`` (adapter, zero-shot) and ``trunk`` (proj baselines)."""
    out: dict[str, list[ClientData]] = {"embed": [], "trunk": []}
    for s in splits:
        imgs = images[s.all()]
        for kind in out:
            feats = cache.features(backbone, imgs, kind)
            out[kind].append(ClientData(s.name, client_arrays(s, feats, labels)))
    return out


def shared_inputs(backbone: ClipBackbone, class_names: list[str]) -> dict[str, dict]:
    """Model inputs every client shares: class text for the adapter and for the proj baselines."""
    pooled = pooled_prompts(backbone, class_names).mean(1)
    model = backbone.model
    return {
        "embed": {"text": text_features(backbone, class_names).numpy()},
        "trunk": {"text": pooled.numpy(),
                  "image_proj": model.visual.head.proj.weight.detach().cpu().numpy(),
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
    """One federation as a ServerApp job; inputs are written only when its turn comes."""
    sink: dict[str, Any] = {"meta": meta}

    def prepare() -> dict[str, Any]:
        lr = cfg["lr"]
        if isinstance(lr, dict):  # a table filled by earlier selection jobs (see select_lr_jobs)
            lr = lr[method]
        sink["meta"]["lr"] = lr
        fed_dir = Path(tempfile.mkdtemp(prefix=f"{method}-", dir=root))
        save_federation_inputs(fed_dir, participants, spec, shared)
        torch.manual_seed(int(cfg["seed"]))
        init = build_model(str(fed_dir), participants[0].arrays["x_train"].shape[1])
        job_cfg = {**cfg, "lr": lr, "method": "fedprox" if method == "fedprox" else "fedavg",
                   "num_clients": len(participants), "fed-dir": str(fed_dir)}
        return {"cfg": job_cfg, "initial_state": init.exchanged(),
                "evaluate_fn": unseen_evaluator(str(fed_dir), unseen, sink)}

    return {"prepare": prepare, "sink": sink}


def lodo_jobs(features: dict[str, list[ClientData]], shared: dict[str, dict], scale: float,
              cfg: dict[str, Any], methods: list[str], root: Path, seed: int,
              lr_table: dict[str, float] | None = None, held_out: list[int] | None = None,
              ) -> list[dict[str, Any]]:
    """Jobs for every held-out domain x method of one seed (3 participants each).

    ``lr_table`` (method -> lr), when given, is read when each job starts, so selection jobs
    earlier in the same simulation can fill it.
    """
    jobs = []
    names = [c.name for c in features["embed"]]
    for held in held_out if held_out is not None else range(len(names)):
        for method in methods:
            rank = int(method.split("_r")[1]) if "_r" in method else None
            kind, spec = method_spec(method, scale, rank)
            parts = [c for i, c in enumerate(features[kind]) if i != held]
            lr = lr_table if lr_table is not None else \
                cfg["lr_adapter" if kind == "embed" else "lr_proj"]
            mcfg = {**cfg, "seed": seed, "lr": lr,
                    "personal_epochs": cfg["personal_epochs"] if kind == "embed" else 0}
            meta = {"seed": seed, "held_out": names[held], "method": method,
                    "participants": [c.name for c in parts]}
            jobs.append(make_job(method, parts, features[kind][held], shared[kind], spec, mcfg,
                                 root, meta))
    return jobs


def seed_features(backbone: ClipBackbone, cache: FeatureCache, data: Any, domain_names: list[str],
                  seed: int) -> dict[str, list[ClientData]]:
    """Domain clients of one seed with their cached features."""
    splits = domain_clients(np.asarray(data.domains), domain_names, seed)
    return extract(backbone, cache, data.images, np.asarray(data.labels), splits)


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


def select_lr_jobs(features: dict[str, list[ClientData]], shared: dict[str, dict], scale: float,
                   cfg: dict[str, Any], methods: list[str], root: Path,
                   grids: dict[str, list[float]], lr_table: dict[str, float]
                   ) -> list[dict[str, Any]]:
    """Learning-rate selection on the participants' VALIDATION splits (seed 0, first task).

    The held-out domain's data is never looked at: each candidate federates the three
    participants of the first leave-one-out task and is scored by their mean val accuracy after
    the last round; ``lr_table[method]`` ends up at the best candidate.
    """
    scores: dict[str, dict[float, float]] = {m: {} for m in methods}
    jobs = []
    for method in methods:
        kind = method_spec(method, scale, None)[0]
        for lr in grids["embed" if kind == "embed" else "trunk"]:
            (job,) = lodo_jobs(features, shared, scale, {**cfg, "personal_epochs": 0}, [method],
                               root, seed=0, lr_table={method: lr}, held_out=[0])
            job["sink"]["meta"]["selection"] = True

            def done(j: dict[str, Any], m: str = method, r: float = lr) -> None:
                last = j["sink"]["client_eval"][-1]
                scores[m][r] = float(np.mean([v["val_acc"] for v in last.values()]))
                lr_table[m] = max(scores[m], key=scores[m].get)

            job["on_done"] = done
            jobs.append(job)
    lr_table["_scores"] = scores  # type: ignore[assignment]
    return jobs
