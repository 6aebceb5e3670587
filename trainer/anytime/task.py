"""Model, data and local train/evaluate of anytime federated learning (Accumulator paper §4.3).

Every client holds preprocessed images (``x_<split>`` float32 (n, 3, H, W), ``y_<split>``) in
``<fed_dir>/client_<i>.npz`` (written by :func:`trainer.federated.task.save_federation_inputs`,
the same layout as FedCLIP's federations) and a depth budget ``tiers[i]`` in ``spec.json``.
Unlike FedCLIP nothing can be cached past the patch embedding: the Accumulator rewrites the
CLS token that every later block reads, so each step runs the frozen blocks up to its exit.

Exit schedules (``exit_mode`` in the train config; paper §4.3 and §5):
- ``last``: every step trains the client's deepest exit ``L_i`` (conventional FL when
  ``L_i = L``, scheme (a) of multi-tier FL otherwise);
- ``anytime``: every step trains one exit drawn uniformly from ``1..L_i`` (scheme (b)).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from model_store.adapters import make_optimizer
from model_store.anytime import AnytimeViT
from trainer.anytime.crossfit import crossfit_personalize
from trainer.federated.task import ClientData, best_local_epoch, load_client, load_shared

EXIT_MODES = ("last", "anytime")
PERSONAL_PARTS = ("client_token", "all")


@functools.lru_cache(maxsize=2)
def foundation_visual(bundle: str) -> torch.nn.Module:
    """The foundation's image tower, loaded once per process (copied per model).

    Loading runs under a forked RNG: open_clip draws random weights before the checkpoint
    overwrites them, and whether that happened (a cache miss) must not change the draws of
    the model built next.
    """
    from model_store.clip import load_clip

    with torch.random.fork_rng(devices=[]):
        return load_clip(bundle, device="cpu").model.visual


def build_model(fed_dir: str) -> AnytimeViT:
    """The federation's model: frozen foundation ViT + this method's exits, freshly drawn
    from the global torch RNG (the server overwrites every exchanged weight); on the CPU,
    where the draws are the same on every machine (a client moves it: :func:`to_device`)."""
    spec, _ = load_shared(fed_dir)
    visual = copy.deepcopy(foundation_visual(spec["foundation"]))
    model = AnytimeViT(visual, int(spec["num_classes"]), spec["method"],
                       int(spec.get("adapter_rank", 0)), bool(spec.get("zero_init", False)))
    if spec.get("freeze_accumulator"):  # an ablation (trainer.anytime.experiment.VARIANTS)
        for name, p in model.accumulator.named_parameters():
            p.requires_grad_(name == "client_token")
    model.block_lr_scale = float(spec.get("block_lr_scale", 1.0))  # read by train_local
    return model


def to_device(model: AnytimeViT, device: str | None) -> AnytimeViT:
    """``model`` on ``device`` (``cpu``, ``cuda``, ``cuda:1``; None: the CPU). Batches follow
    the model (:func:`train_local`, :func:`exit_accuracies`), in bf16 autocast on CUDA."""
    return model.to(torch.device(device or "cpu"))


def _autocast(device: torch.device):
    """bf16 autocast on CUDA (the frozen ViT's matmuls dominate a step); off elsewhere, so CPU
    results stay those of the float32 runs already reported."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")


def exchanged(model: AnytimeViT) -> dict[str, torch.Tensor]:
    """What a round sends: every trainable tensor (never the frozen backbone's), on the CPU
    (Flower's arrays, the server's average and the artifact are device-free)."""
    names = set(model.trainable_names())
    return {k: v.detach().cpu().clone() for k, v in model.named_parameters() if k in names}


def client_tier(fed_dir: str, index: int) -> int:
    """Client ``index``'s depth budget ``L_i`` (the deepest block it may run)."""
    return int(load_shared(fed_dir)[0]["tiers"][index])


def load(fed_dir: str, index: int) -> tuple[ClientData, int]:
    """A client's data and depth budget."""
    return load_client(fed_dir, index), client_tier(fed_dir, index)


def train_local(model: AnytimeViT, data: ClientData, tier: int, cfg: dict[str, Any],
                params: list[torch.nn.Parameter] | None = None) -> float:
    """Local epochs of AdamW on the trainable parts, one exit per step (see ``exit_mode``).

    Returns:
        Mean training loss of the last epoch.
    """
    mode = str(cfg.get("exit_mode", "last"))
    if mode not in EXIT_MODES:
        raise ValueError(f"exit_mode must be one of {EXIT_MODES}, got {mode!r}")
    x, y = data.split("train")
    seed = int(cfg.get("seed", 0))
    gen, rng = torch.Generator().manual_seed(seed), np.random.default_rng(seed)
    params = params if params is not None else param_groups(model, float(cfg["lr"]))
    opt = make_optimizer(params, lr=float(cfg["lr"]),
                         weight_decay=float(cfg.get("weight_decay", 0.05)))
    bs, last, dev = int(cfg.get("batch_size", 32)), 0.0, _device(model)
    model.train()
    for _ in range(int(cfg.get("local_epochs", 1))):
        perm, total = torch.randperm(len(y), generator=gen), 0.0
        for start in range(0, len(y), bs):
            idx = perm[start:start + bs]
            exit_ = tier if mode == "last" else int(rng.integers(1, tier + 1))
            with _autocast(dev):
                logits = model(x[idx].to(dev, non_blocking=True), exit_)
            loss = F.cross_entropy(logits.float(), y[idx].to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        last = total / max(len(y), 1)
    return last


def param_groups(model: AnytimeViT, lr: float) -> list:
    """The trainable parameters; with ``model.block_lr_scale`` != 1 (an experiment's spec), the
    Accumulator's block and layer positions form their own group at ``lr * scale``."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    scale = float(getattr(model, "block_lr_scale", 1.0))
    if scale == 1.0:
        return [p for _, p in named]

    def slow(name: str) -> bool:
        return name.startswith("accumulator.") and name != "accumulator.client_token"

    return [{"params": [p for n, p in named if slow(n)], "lr": lr * scale},
            {"params": [p for n, p in named if not slow(n)]}]


def exit_accuracies(model: AnytimeViT, x: torch.Tensor, y: torch.Tensor, max_exit: int,
                    batch_size: int = 256) -> list[float]:
    """Top-1 accuracy at every exit ``1..max_exit`` (NaN when the split is empty)."""
    if len(y) == 0:
        return [float("nan")] * max_exit
    return exit_hits(model, x, y, max_exit, batch_size).mean(0).tolist()


@torch.no_grad()
def exit_hits(model: AnytimeViT, x: torch.Tensor, y: torch.Tensor, max_exit: int,
              batch_size: int = 256) -> torch.Tensor:
    """Per-example correctness at every exit, float (n, max_exit); one pass per batch."""
    model.eval()
    rows, dev = [torch.zeros(0, max_exit)], _device(model)
    for start in range(0, len(y), batch_size):
        with _autocast(dev):
            logits = model.forward_exits(x[start:start + batch_size].to(dev), max_exit)
        labels = y[start:start + batch_size].to(dev)
        rows.append(torch.stack([(lg.argmax(1) == labels).float().cpu() for lg in logits], 1))
    return torch.cat(rows)


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def score_items(model: AnytimeViT, data: ClientData, tier: int, split: str,
                mode: str) -> torch.Tensor:
    """The number a client selects on, per example (so comparisons can be paired): a hit at
    ``L_i`` (``last``) or the share of its exits ``1..L_i`` that hit (``anytime``); the mean
    is the accuracy at ``L_i`` or the mean accuracy over exits."""
    grid = exit_hits(model, *data.split(split), tier)
    return grid.mean(1) if mode == "anytime" else grid[:, -1]


def personal_params(model: AnytimeViT, part: str) -> list[torch.nn.Parameter]:
    """Parameters personalisation tunes: the client token only, or every trainable part."""
    if part not in PERSONAL_PARTS:
        raise ValueError(f"personal part must be one of {PERSONAL_PARTS}, got {part!r}")
    if part == "client_token":
        if model.method != "accumulator":
            raise ValueError("only the Accumulator has a client token to personalise")
        return [model.accumulator.client_token]
    return [p for p in model.parameters() if p.requires_grad]


def personalize(model: AnytimeViT, data: ClientData, tier: int,
                cfg: dict[str, Any]) -> dict[str, Any]:
    """Fine-tune ``personal_part`` locally for ``personal_epochs``; keep the epoch best on the
    client's val (:func:`trainer.federated.task.best_local_epoch`) and score it on test."""
    mode, part = str(cfg.get("exit_mode", "last")), str(cfg.get("personal_part", "all"))
    params = personal_params(model, part)

    def train_epoch(epoch: int) -> None:
        seed = int(cfg.get("seed", 0)) * 1000 + epoch
        train_local(model, data, tier, {**cfg, "local_epochs": 1, "seed": seed}, params)

    received = exchanged(model)
    best = best_local_epoch(model, int(cfg.get("personal_epochs", 5)), train_epoch,
                            lambda: score_items(model, data, tier, "val", mode),
                            lambda: exchanged(model),
                            min_z=float(cfg.get("personal_min_z", 0.0)),
                            test_items=lambda: score_items(model, data, tier, "test", mode))
    best["test_acc"] = best["curve"][best["epoch"]]["test"]  # scored when that epoch ended
    if cfg.get("personal_gate", "val") == "crossfit":  # the val gate above stays on record
        best = _crossfit(model, data, tier, cfg, params, received, best)
    return best


def _crossfit(model: AnytimeViT, data: ClientData, tier: int, cfg: dict[str, Any],
              params: list, received: dict[str, torch.Tensor],
              val_gate: dict[str, Any]) -> dict[str, Any]:
    """:func:`trainer.anytime.crossfit.crossfit_personalize` from the received weights; the
    val gate's epoch and record ride along as ``val_gate`` (both judged on one federation)."""
    mode, seed = str(cfg.get("exit_mode", "last")), int(cfg.get("seed", 0))

    def train_epoch(split: ClientData, epoch: int) -> None:
        train_local(model, split, tier, {**cfg, "local_epochs": 1, "seed": seed * 1000 + epoch},
                    params)  # fmt: skip

    load = functools.partial(model.load_state_dict, strict=False)
    best = crossfit_personalize(
        data, int(cfg.get("personal_epochs", 5)), int(cfg.get("personal_folds", 5)), seed,
        float(cfg.get("personal_min_z", 0.0)), lambda: load(received), train_epoch,
        lambda split: exit_hits(model, *split.split("val"), tier), lambda: exchanged(model),
        load, lambda: score_items(model, data, tier, "test", mode),
        reduce=(lambda h: h.mean(1)) if mode == "anytime" else (lambda h: h[:, -1]))
    return {**best, "val_acc": val_gate["val_acc"], "test_acc": best["curve"]["test"][
        best["epoch"]], "val_gate": {"epoch": val_gate["epoch"], "curve": val_gate["curve"]}}
