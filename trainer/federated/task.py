"""Model, data and local train/evaluate for federated runs over cached frozen features.

Every federated method here trains a small head on features that the frozen backbone computed
once per client (:mod:`trainer.federated.features`), which is what makes 3 seeds x 4 tasks
affordable on a CPU:

- ``adapter`` (FedCLIP): an :class:`~model_store.adapters.AttentionAdapter` on the projected
  image embedding; class text features are fixed buffers. Exchanged: the adapter only.
- ``proj`` (FedAvg / FedProx baseline): the backbone's own image projection
  (``visual.head.proj``) and text projection (``text.proj``), initialised from the backbone and
  fine-tuned on cached trunk features / pooled text-tower outputs. Exchanged: both projections.

A client's data lives in ``<fed_dir>/client_<i>.npz`` and the shared model inputs in
``<fed_dir>/shared.npz`` + ``spec.json``; Flower's ClientApp loads them by partition id, so no
arrays travel inside the app object (the Flower examples' ``load_data(partition_id)`` pattern).
"""

from __future__ import annotations

import functools
import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model_store.adapters import AttentionAdapter, cosine_logits, make_optimizer

SPLITS = ("train", "val", "test")


@dataclass
class ClientData:
    """One client's cached features: ``x_<split>`` float32 (n, d), ``y_<split>`` int64 (n,)."""

    name: str
    arrays: dict[str, np.ndarray]

    def split(self, which: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Features and labels of ``train``, ``val`` or ``test`` as tensors."""
        return (torch.from_numpy(self.arrays[f"x_{which}"]).float(),
                torch.from_numpy(self.arrays[f"y_{which}"]).long())

    def num(self, which: str) -> int:
        """Number of examples in one split (the FedAvg weight for ``train``)."""
        return int(self.arrays[f"y_{which}"].shape[0])


class FeatureModel(nn.Module):
    """Classifier over cached features; ``exchanged()`` names what a round sends.

    Args:
        spec: ``{"kind": "adapter"|"proj", "scale": float, "rank": int|None}``.
        text: ``adapter``: (C, E) class text features; ``proj``: (C, T) pooled text-tower outputs.
        image_dim: Width of the cached image features (E for adapter, trunk width for proj).
        init: For ``proj``, the backbone's projection weights ``image_proj`` (E, trunk) and
            ``text_proj`` (E, T), so fine-tuning starts at the foundation, not at random.
    """

    def __init__(self, spec: dict[str, Any], text: torch.Tensor, image_dim: int,
                 init: dict[str, torch.Tensor] | None = None):
        super().__init__()
        self.kind, self.scale = spec["kind"], float(spec["scale"])
        self.register_buffer("text", text.float().clone())
        if self.kind == "adapter":
            self.adapter = AttentionAdapter(image_dim, spec.get("rank"))
        elif self.kind == "proj":
            if init is None:
                raise ValueError("proj model needs the backbone's projection weights")
            self.image_proj = nn.Linear(image_dim, init["image_proj"].shape[0], bias=False)
            self.text_proj = nn.Linear(text.shape[1], init["text_proj"].shape[0], bias=False)
            with torch.no_grad():
                self.image_proj.weight.copy_(init["image_proj"])
                self.text_proj.weight.copy_(init["text_proj"])
        else:
            raise ValueError(f"unknown federated model kind {self.kind!r}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (n, C)."""
        if self.kind == "adapter":
            return cosine_logits(self.adapter(x), self.text, self.scale)
        return cosine_logits(self.image_proj(x), self.text_proj(self.text), self.scale)

    def exchanged(self) -> dict[str, torch.Tensor]:
        """The parameters a client uploads (and the server averages) each round."""
        return {k: v.detach().clone() for k, v in self.named_parameters()}


def save_federation_inputs(fed_dir: Path, clients: list[ClientData], spec: dict[str, Any],
                           shared: dict[str, np.ndarray]) -> None:
    """Write what every ClientApp needs: its own ``client_<i>.npz`` plus the shared inputs."""
    fed_dir.mkdir(parents=True, exist_ok=True)
    for i, c in enumerate(clients):
        np.savez(fed_dir / f"client_{i}.npz", **c.arrays)
    np.savez(fed_dir / "shared.npz", **shared)
    (fed_dir / "spec.json").write_text(json.dumps({**spec, "clients": [c.name for c in clients]}))


@functools.lru_cache(maxsize=16)
def load_client(fed_dir: str, index: int) -> ClientData:
    """Load (once per process) the cached features of client ``index``."""
    spec = json.loads((Path(fed_dir) / "spec.json").read_text())
    with np.load(Path(fed_dir) / f"client_{index}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return ClientData(spec["clients"][index], arrays)


@functools.lru_cache(maxsize=4)
def load_shared(fed_dir: str) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Model spec and shared tensors (text inputs, projection init) of a federation."""
    spec = json.loads((Path(fed_dir) / "spec.json").read_text())
    with np.load(Path(fed_dir) / "shared.npz") as z:
        shared = {k: torch.from_numpy(z[k]) for k in z.files}
    return spec, shared


def build_model(fed_dir: str, image_dim: int) -> FeatureModel:
    """The federation's model, freshly initialised (the server overwrites exchanged weights)."""
    spec, shared = load_shared(fed_dir)
    init = {k: shared[k] for k in ("image_proj", "text_proj") if k in shared}
    return FeatureModel(spec, shared["text"], image_dim, init or None)


def state_key(name: str, fed_dir: str) -> str:
    """The ``context.state`` record name of ``name`` for one federation: a node's state outlives
    a job when one simulation runs several federations back to back (one Ray start for a whole
    lr grid), so each federation (its ``fed-dir``) keeps its own round count and local part."""
    return f"{name}-{zlib.crc32(str(fed_dir).encode()):08x}"


def client_seed(base: int, round_: int, num_train: int) -> int:
    """Shuffling seed of one client's local round: differs per round and per client."""
    return int(base) * 10_000 + int(round_) * 100 + int(num_train) % 97


def train_local(model: FeatureModel, data: ClientData, cfg: dict[str, Any],
                global_state: dict[str, torch.Tensor] | None = None) -> float:
    """Local epochs of minibatch AdamW; FedProx adds ``mu/2 * ||w - w_global||^2``.

    Returns:
        Mean training loss of the last epoch.
    """
    x, y = data.split("train")
    gen = torch.Generator().manual_seed(int(cfg.get("seed", 0)))
    opt = make_optimizer(model.parameters(), lr=float(cfg["lr"]),
                         weight_decay=float(cfg.get("weight_decay", 0.2)))
    mu = float(cfg.get("proximal-mu", 0.0))
    anchors = {k: v.detach().clone() for k, v in (global_state or {}).items()}
    bs, last = int(cfg.get("batch_size", 32)), 0.0
    model.train()
    for _ in range(int(cfg.get("local_epochs", 1))):
        perm, total = torch.randperm(len(y), generator=gen), 0.0
        for start in range(0, len(y), bs):
            idx = perm[start:start + bs]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            if mu > 0 and anchors:
                prox = sum(((p - anchors[k]) ** 2).sum() for k, p in model.named_parameters())
                loss = loss + 0.5 * mu * prox
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        last = total / max(len(y), 1)
    return last


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy (0..1); an empty split scores NaN rather than a misleading 0."""
    if len(y) == 0:
        return float("nan")
    return float(hits(model, x, y).mean())


def hits(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-example top-1 correctness (float 0/1, shape (n,)): what a paired comparison needs."""
    model.eval()
    return (model(x).argmax(1) == y).float()


def paired_gain(new: torch.Tensor, old: torch.Tensor) -> tuple[float, float]:
    """Mean per-example gain of ``new`` over ``old`` (scores of the same examples) and its
    standard error; with under two examples the error is infinite (no evidence either way)."""
    d = (new.double() - old.double()).flatten()
    if d.numel() < 2:
        return (float(d.mean()) if d.numel() else 0.0), float("inf")
    return float(d.mean()), float(d.std(unbiased=True)) / d.numel() ** 0.5


def paired_z(new: torch.Tensor, old: torch.Tensor) -> tuple[float, float]:
    """``(mean gain, z)`` of :func:`paired_gain`: the gain in standard errors; with no spread,
    +inf for a gain, 0 otherwise (a loss never passes a gate, whatever its z)."""
    gain, err = paired_gain(new, old)
    return gain, gain / err if err > 0 else (math.inf if gain > 0 else 0.0)


def signed_z(new: torch.Tensor, old: torch.Tensor) -> float:
    """The gain of :func:`paired_gain` in standard errors, a loss as a negative z (-inf with no
    spread): how reports tell a client made worse beyond test noise from one that lost an
    image or two, which :func:`paired_z` cannot (it floors a spreadless loss at 0 for gates)."""
    gain, err = paired_gain(new, old)
    return gain / err if err > 0 else math.copysign(math.inf, gain) if gain else 0.0


def best_local_epoch(model: nn.Module, epochs: int, train_epoch: Callable[[int], Any],
                     val_items: Callable[[], torch.Tensor],
                     snapshot: Callable[[], dict[str, torch.Tensor]], *,
                     min_z: float = 0.0,
                     test_items: Callable[[], torch.Tensor] | None = None) -> dict[str, Any]:
    """Personalisation's epoch choice, shared by FedCLIP and the anytime clients: train
    ``epochs`` local epochs, keep the one best on the client's validation split, load it.

    Epoch 0 (the model as received) is a candidate, so personalisation can only match or beat
    the global model on validation; on test it may still lose, because a val split of a few
    dozen images rewards noise. ``min_z`` guards against that: a trained epoch replaces the
    received model only when its paired val gain (``val_items``: per-example scores) is above
    ``min_z`` standard errors (0: any gain, the old rule). ``test_items`` (per-example test
    scores), when given, are recorded per epoch in ``curve`` for analysis only, as their mean
    and :func:`signed_z` over epoch 0; they never take part in the choice.

    Returns:
        ``{"epoch", "val_acc", "state", "curve"}`` of the chosen epoch; ``curve`` lists
        ``{"val", "z", "test", "test_z"}`` per epoch 0..epochs (``z``: val gain over epoch 0
        ÷ its error; ``test``/``test_z``: NaN without ``test_items``).
    """
    base, test0 = val_items(), _maybe(test_items)
    best = {"epoch": 0, "val_acc": float(base.mean()), "state": snapshot()}
    curve = [{"val": best["val_acc"], "z": 0.0, **_tested(test0, test0)}]
    for epoch in range(1, epochs + 1):
        train_epoch(epoch)
        items = val_items()
        _, z = paired_z(items, base)
        curve.append({"val": float(items.mean()), "z": z,
                      **_tested(_maybe(test_items), test0)})
        if keeps(curve[-1]["val"], z, best["val_acc"], min_z):
            best = {"epoch": epoch, "val_acc": curve[-1]["val"], "state": snapshot()}
    model.load_state_dict(best["state"], strict=False)
    return {**best, "curve": curve}


def keeps(val: float, z: float, best_val: float, min_z: float) -> bool:
    """The gate of :func:`best_local_epoch`: an epoch beats the best so far on val and its
    gain over the received model is above ``min_z`` (>= 0) standard errors."""
    if min_z < 0:
        raise ValueError(f"min_z must be >= 0, got {min_z}")
    return val > best_val and z > min_z


def gated_epoch(curve: dict[str, list[float]], min_z: float) -> int:
    """The epoch :func:`best_local_epoch` would keep under ``min_z``, replayed from a recorded
    curve (``val``, ``z`` per epoch): how reports compare gates without retraining."""
    best = 0
    for epoch in range(1, len(curve["val"])):
        if keeps(curve["val"][epoch], curve["z"][epoch], curve["val"][best], min_z):
            best = epoch
    return best


def _maybe(items: Callable[[], torch.Tensor] | None) -> torch.Tensor | None:
    return items() if items is not None else None


def _tested(items: torch.Tensor | None, base: torch.Tensor | None) -> dict[str, float]:
    """An epoch's test record: mean score and signed z over epoch 0 (NaN when untested)."""
    if items is None or base is None:
        return {"test": math.nan, "test_z": math.nan}
    return {"test": float(items.double().mean()), "test_z": signed_z(items, base)}


def personalize(model: FeatureModel, data: ClientData, cfg: dict[str, Any]) -> dict[str, Any]:
    """Fine-tune the global model locally for ``personal_epochs`` (no proximal term); keep
    the epoch best on the client's val (:func:`best_local_epoch`) and score it on test."""
    step_cfg = {**cfg, "local_epochs": 1, "proximal-mu": 0.0}

    def train_epoch(epoch: int) -> None:
        train_local(model, data, {**step_cfg, "seed": int(cfg.get("seed", 0)) * 1000 + epoch})

    best = best_local_epoch(model, int(cfg.get("personal_epochs", 5)), train_epoch,
                            lambda: hits(model, *data.split("val")), model.exchanged,
                            min_z=float(cfg.get("personal_min_z", 0.0)))
    best["test_acc"] = accuracy(model, *data.split("test"))
    return best


def unseen_evaluator(fed_dir: str, unseen: ClientData | None, sink: dict[str, Any]):
    """Server-side evaluation of each round's global weights on the held-out client's test."""
    if unseen is None:
        return None

    from flwr.app import MetricRecord

    def evaluate(server_round: int, arrays) -> MetricRecord:
        model = build_model(fed_dir, unseen.arrays["x_test"].shape[1])
        model.load_state_dict(arrays.to_torch_state_dict(), strict=False)
        acc = accuracy(model, *unseen.split("test"))
        sink.setdefault("unseen_curve", []).append((server_round, acc))
        return MetricRecord({"unseen_test_acc": acc})

    return evaluate
