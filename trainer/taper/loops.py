"""Training loops: ordinary full-way training (stage 1, stage 2, baselines) and stage 3.

Both loops use SGD with momentum and a cosine learning-rate decay to zero over their own steps,
log (step, loss, accuracy) points into a ``curves`` dict (saved as JSON and plotted by
``trainer.taper.report``), and show a tqdm bar.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from trainer.taper.data import Split, TaskBatcher
from trainer.taper.mixing import Bases, accumulate_task_grads

Curves = dict[str, list[dict[str, float]]]
LOG_EVERY = 20


def log_every(steps: int) -> int:
    """Curve resolution: every ``LOG_EVERY`` steps, finer for short runs (>= ~10 points)."""
    return max(1, min(LOG_EVERY, steps // 10))


def cosine_lr(base: float, step: int, total: int) -> float:
    """Cosine decay from ``base`` to 0 over ``total`` steps."""
    return 0.5 * base * (1 + math.cos(math.pi * min(step, total) / max(total, 1)))


def _set_lr(opt: torch.optim.Optimizer, lr: float, scale_key: str = "lr_scale") -> None:
    for group in opt.param_groups:
        group["lr"] = lr * group.get(scale_key, 1.0)


def train_full_way(
    model: nn.Module,
    split: Split,
    *,
    epochs: float,
    lr: float,
    batch_size: int,
    weight_decay: float,
    seed: int,
    augment: bool = True,
    indices: np.ndarray | None = None,
    curve: list[dict[str, float]] | None = None,
    desc: str = "train",
) -> nn.Module:
    """Train ``model`` in place with all-class cross-entropy on ``split`` (or a shard of it).

    Args:
        model: Any ResNet-18 over all classes.
        split: Training split.
        epochs: Passes over the (shard of the) data; fractional epochs allowed.
        lr: Peak learning rate (cosine-decayed to 0).
        batch_size: Images per step.
        weight_decay: L2 weight decay (coupled, as SGD's standard).
        seed: Seeds the shuffling and augmentation.
        augment: Random 2-pixel translations.
        indices: Restrict training to these image indices (a stage-2 shard).
        curve: If given, (step, loss, acc) points are appended every ``LOG_EVERY`` steps.
        desc: Progress-bar label.
    """
    pool = np.arange(len(split)) if indices is None else np.asarray(indices)
    if len(pool) == 0:
        raise ValueError(f"{desc}: empty training shard")
    steps = max(1, math.ceil(epochs * len(pool) / batch_size))
    every = log_every(steps)
    rng, gen = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay,
                          nesterov=True)
    model.train()
    order, pos, run_loss, run_acc = rng.permutation(pool), 0, 0.0, 0.0
    bar = tqdm(total=steps * batch_size, desc=desc, unit="img", unit_scale=True, mininterval=10,
               leave=False)  # images/s, not steps/s: comparable across batch sizes
    for step in range(steps):
        bar.update(batch_size)
        if pos + batch_size > len(order):
            order, pos = rng.permutation(pool), 0
        idx = torch.from_numpy(order[pos : pos + batch_size])
        pos += batch_size
        _set_lr(opt, cosine_lr(lr, step, steps))
        logits = model(split.batch(idx, gen if augment else None))
        loss = F.cross_entropy(logits, split.y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        run_loss += float(loss.detach())
        run_acc += float((logits.argmax(1) == split.y[idx]).float().mean())
        if curve is not None and (step + 1) % every == 0:
            curve.append({"step": step + 1, "loss": run_loss / every, "acc": run_acc / every})
            run_loss, run_acc = 0.0, 0.0
    bar.close()
    return model


MixerFn = Callable[[list], torch.Tensor]


def train_stage3(
    bases: Bases,
    batcher: TaskBatcher,
    *,
    mixer: nn.Module | None,
    embed: Callable[[list[int], int | None], torch.Tensor] | None,
    epochs: float,
    lr: float,
    mixer_lr: float,
    tasks_per_step: int,
    task_batch: int,
    aux_weight: float,
    weight_decay: float,
    bn_mode: str,
    augment: bool,
    curve: list[dict[str, float]] | None = None,
    desc: str = "stage3",
    blocks_share: bool = False,
) -> None:
    """Jointly train the bases and the mixer on sampled tasks with classifier selection.

    ``mixer=None`` trains the bases with fixed coefficients (uniform; Q=1 gives the one-basis
    control with the very same loss). ``embed(classes, domain)`` maps a task to the mixer's input.
    ``bn_mode`` "train" normalises with each task batch's statistics; "frozen" uses the mixed
    running statistics. ``blocks_share`` ties the 4 blocks to the mixer's first block (ablation
    "no block-wise mixers": the mixer then has ``num_blocks=1``).
    """
    n_train = len(batcher.split)
    steps = max(1, math.ceil(epochs * n_train / (tasks_per_step * task_batch)))
    every = log_every(steps)
    opt = torch.optim.SGD(bases.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay,
                          nesterov=True)
    mopt = torch.optim.Adam(mixer.parameters(), lr=mixer_lr) if mixer is not None else None
    bases.template.train(bn_mode == "train")
    if mixer is not None:
        mixer.train()
    q, run_loss = bases.num_bases, 0.0
    bar = tqdm(total=steps * tasks_per_step * task_batch, desc=desc, unit="img", unit_scale=True,
               mininterval=10, leave=False)
    for step in range(steps):
        bar.update(tasks_per_step * task_batch)
        tasks = [batcher.task_batch(task_batch, augment) for _ in range(tasks_per_step)]
        if mixer is None:
            alpha = torch.full((len(tasks), 4, q), 1.0 / q)
        else:
            emb = torch.stack([embed(t.classes.tolist(), t.domain) for t in tasks])
            alpha = mixer(emb)
            alpha = alpha.expand(-1, 4, -1) if blocks_share else alpha
        grad_alpha, loss = accumulate_task_grads(bases, alpha.detach(), tasks, aux_weight)
        frac = cosine_lr(1.0, step, steps)
        _set_lr(opt, lr * frac)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if mopt is not None:
            _set_lr(mopt, mixer_lr * frac)
            mopt.zero_grad(set_to_none=True)
            alpha.backward(grad_alpha)
            mopt.step()
        run_loss += loss
        if curve is not None and (step + 1) % every == 0:
            curve.append({"step": step + 1, "loss": run_loss / every})
            run_loss = 0.0
    bar.close()
    bases.template.train(False)
    if mixer is not None:
        mixer.eval()
