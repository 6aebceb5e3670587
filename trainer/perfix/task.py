"""Model, data and local training of prefix personalization (FedPerfix paper §3-4).

Clients hold preprocessed images in ``<fed_dir>/client_<i>.npz`` (the layout of FedCLIP's and
the anytime federations, :func:`trainer.federated.task.save_federation_inputs`); ``spec.json``
names the foundation bundle, the method and its hyperparameters.

What a client keeps: the tensors :meth:`model_store.perfix.PerfixViT.local_names` lists live in
the node's own state between rounds and are never sent; the rest is what the server averages.
Every model, the server's included, starts from the same draw (``init_seed``), so a client that
was never sampled holds the initial local part, as in the paper's partial participation.

Local schedules (paper §4.1): every method trains its trainable tensors for ``local_epochs``;
FedRep first fits its head with the body frozen (one epoch) then the body with the head frozen;
FedBABU never trains its head while federating and fine-tunes it on the client's train split
(one epoch) before it is scored.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.nn.functional as F

from model_store.adapters import make_optimizer
from model_store.perfix import PerfixViT
from trainer.anytime.task import foundation_visual
from trainer.federated.task import ClientData, load_shared


def build_model(fed_dir: str) -> PerfixViT:
    """The federation's model, drawn from ``init_seed`` (identical on every node)."""
    spec, _ = load_shared(fed_dir)
    visual = copy.deepcopy(foundation_visual(spec["foundation"]))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(spec.get("init_seed", 0)))
        return PerfixViT(visual, int(spec["num_classes"]), spec["method"],
                         rank=int(spec.get("rank", 64)), scale=float(spec.get("scale", 0.8)),
                         num_tokens=int(spec.get("num_tokens", 8)))


def _subset(model: PerfixViT, names: list[str]) -> dict[str, torch.Tensor]:
    keep, params = set(names), dict(model.named_parameters())
    return {k: params[k].detach().clone() for k in params if k in keep}


def exchanged(model: PerfixViT) -> dict[str, torch.Tensor]:
    """What a round sends: the averaged tensors only (never a local one)."""
    return _subset(model, model.global_names())


def local_state(model: PerfixViT) -> dict[str, torch.Tensor]:
    """What stays on the client."""
    return _subset(model, model.local_names())


def _epochs(model: PerfixViT, data: ClientData, params: list[torch.nn.Parameter],
            cfg: dict[str, Any], epochs: int, seed: int) -> float:
    """``epochs`` passes of AdamW over ``params``; the last epoch's mean loss."""
    x, y = data.split("train")
    gen = torch.Generator().manual_seed(seed)
    opt = make_optimizer(params, lr=float(cfg["lr"]),
                         weight_decay=float(cfg.get("weight_decay", 0.05)))
    bs, last = int(cfg.get("batch_size", 32)), 0.0
    model.train()
    for _ in range(epochs):
        perm, total = torch.randperm(len(y), generator=gen), 0.0
        for start in range(0, len(y), bs):
            idx = perm[start:start + bs]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        last = total / max(len(y), 1)
    return last


def train_local(model: PerfixViT, data: ClientData, cfg: dict[str, Any]) -> float:
    """One round of local training by the method's schedule (module docstring)."""
    seed, epochs = int(cfg.get("seed", 0)), int(cfg.get("local_epochs", 1))
    head = list(model.head.parameters())
    if model.method != "fedrep":
        trainable = [p for p in model.parameters() if p.requires_grad]
        return _epochs(model, data, trainable, cfg, epochs, seed)
    body = [p for n, p in model.named_parameters() if not n.startswith("head.")]
    _epochs(model, data, head, cfg, 1, seed)
    return _epochs(model, data, body, cfg, epochs, seed + 1)


@torch.no_grad()
def accuracy(model: PerfixViT, data: ClientData, split: str, batch_size: int = 256) -> float:
    """Top-1 accuracy on one split (NaN when it is empty)."""
    x, y = data.split(split)
    if len(y) == 0:
        return float("nan")
    model.eval()
    hits = sum(int((model(x[s:s + batch_size]).argmax(1) == y[s:s + batch_size]).sum())
               for s in range(0, len(y), batch_size))
    return hits / len(y)


def scored_model(model: PerfixViT, data: ClientData, cfg: dict[str, Any]) -> PerfixViT:
    """The model a client is scored with: itself, or for FedBABU a copy whose head was
    fine-tuned on the client's train split (the global head never moved)."""
    if model.method != "fedbabu":
        return model
    tuned = copy.deepcopy(model)
    tuned.head.requires_grad_(True)
    _epochs(tuned, data, list(tuned.head.parameters()), cfg, 1, int(cfg.get("seed", 0)))
    return tuned
