"""Training loops: ordinary full-way training (stage 1, stage 2, baselines) and stage 3.

Both loops use SGD with momentum and a cosine learning-rate decay to zero over their own steps,
log (step, loss, accuracy) points into a ``curves`` dict (saved as JSON and plotted by
``trainer.taper.report``), show a tqdm bar in images/s, run where their ``Runtime`` says (CPU or
CUDA, fp32 or bf16 autocast, one process or torchrun ranks) and snapshot themselves every few
minutes (``trainer.taper.checkpoint``) so an interrupted stage resumes where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from trainer.taper.checkpoint import (
    Checkpoint,
    generator_state,
    optimizer_tensors,
    restore_optimizer,
)
from trainer.taper.data import Split, TaskBatcher
from trainer.taper.device import Runtime
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


def _progress(total: int, desc: str, rt: Runtime, done: int = 0) -> tqdm:
    """Images/s, not steps/s (comparable across batch sizes); rank 0 only under torchrun."""
    return tqdm(total=total, initial=done, desc=desc, unit="img", unit_scale=True,
                mininterval=10, leave=False, disable=not rt.is_main)


def _wrap(model: nn.Module, rt: Runtime) -> nn.Module:
    """DistributedDataParallel under torchrun (gradients averaged over ranks), else ``model``."""
    if not rt.distributed:
        return model
    from torch.nn.parallel import DistributedDataParallel

    ids = [rt.device.index] if rt.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids)


@dataclass
class _Order:
    """The epoch-wise shuffled index stream of a full-way stage (resumable)."""

    pool: np.ndarray
    rng: np.random.Generator
    order: np.ndarray = None
    pos: int = 0

    def __post_init__(self):
        if self.order is None:
            self.order = self.rng.permutation(self.pool)

    def next(self, n: int) -> torch.Tensor:
        if self.pos + n > len(self.order):
            self.order, self.pos = self.rng.permutation(self.pool), 0
        self.pos += n
        return torch.from_numpy(self.order[self.pos - n : self.pos])


def train_full_way(
    model: nn.Module, split: Split, *, epochs: float, lr: float, batch_size: int,
    weight_decay: float, seed: int, augment: bool = True, indices: np.ndarray | None = None,
    curve: list[dict[str, float]] | None = None, desc: str = "train",
    rt: Runtime | None = None, checkpoint: Checkpoint | None = None,
) -> nn.Module:
    """Train ``model`` in place with all-class cross-entropy on ``split`` (or a shard of it).

    ``epochs`` passes (fractional allowed) over the shard ``indices`` (default: all), peak
    ``lr`` cosine-decayed to 0, coupled L2 ``weight_decay``, random 2-pixel shifts when
    ``augment``; ``seed`` fixes the shuffling and augmentation; (step, loss, acc) points go to
    ``curve``. ``rt`` places the work (device, bf16, channels_last, torchrun ranks: every rank
    draws the same global batch and trains its slice under DDP); ``checkpoint`` snapshots the
    loop every few minutes and resumes from the last snapshot.
    """
    rt = rt or Runtime()
    pool = np.arange(len(split)) if indices is None else np.asarray(indices)
    if len(pool) == 0:
        raise ValueError(f"{desc}: empty training shard")
    if batch_size % rt.world:  # unequal slices would weigh images unequally in DDP's average
        raise ValueError(f"batch size {batch_size} is not divisible by {rt.world} ranks")
    steps = max(1, math.ceil(epochs * len(pool) / batch_size))
    every = log_every(steps)
    stream, gen = _Order(pool, np.random.default_rng(seed)), torch.Generator().manual_seed(seed)
    net = _wrap(rt.module(model), rt)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay,
                          nesterov=True)
    model.train()
    sums = torch.zeros(2, dtype=torch.float64, device=rt.device)
    snap = checkpoint.restore() if checkpoint is not None else None
    start = _restore_full_way(snap, model, opt, stream, gen, sums, curve) if snap else 0
    bar = _progress(steps * batch_size, desc, rt, start * batch_size)
    for step in range(start, steps):
        idx = stream.next(batch_size)
        _set_lr(opt, cosine_lr(lr, step, steps))
        x = rt.shard(split.batch(idx, gen if augment else None))
        y = rt.shard(split.labels(idx))
        with rt.autocast():
            logits = net(rt.images(x))
        loss = F.cross_entropy(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sums += torch.stack([loss.detach(), (logits.argmax(1) == y).float().mean()]).double()
        bar.update(batch_size)
        if curve is not None and (step + 1) % every == 0:
            run_loss, run_acc = (sums / every).tolist()
            curve.append({"step": step + 1, "loss": run_loss, "acc": run_acc})
            sums.zero_()
        if checkpoint is not None and step + 1 < steps and checkpoint.due():
            checkpoint.save(*_full_way_snapshot(step + 1, model, opt, stream, gen, sums, curve))
    bar.close()
    return model


def _full_way_snapshot(step, model, opt, stream: _Order, gen, sums, curve):
    tensors, opt_meta = optimizer_tensors(opt, "opt")
    tensors.update({f"model.{k}": v for k, v in model.state_dict().items()})
    tensors.update({"rng.torch": generator_state(gen),
                    "data.order": torch.from_numpy(stream.order)})
    meta = {"step": step, "pos": stream.pos, "rng": stream.rng.bit_generator.state,
            "sums": sums.tolist(), "curve": list(curve or []), "opt": opt_meta}
    return tensors, meta


def _restore_full_way(snap, model, opt, stream: _Order, gen, sums, curve) -> int:
    tensors, meta = snap
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    restore_optimizer(opt, "opt", tensors, meta["opt"])
    gen.set_state(tensors["rng.torch"])
    stream.rng.bit_generator.state = meta["rng"]
    stream.order, stream.pos = tensors["data.order"].numpy(), meta["pos"]
    sums.copy_(torch.tensor(meta["sums"], dtype=torch.float64))
    if curve is not None:
        curve[:] = meta["curve"]
    return int(meta["step"])


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
    rt: Runtime | None = None,
    checkpoint: Checkpoint | None = None,
) -> None:
    """Jointly train the bases and the mixer on sampled tasks with classifier selection.

    ``mixer=None`` trains the bases with fixed coefficients (uniform; Q=1 gives the one-basis
    control with the very same loss). ``embed(classes, domain)`` maps a task to the mixer's input.
    ``bn_mode`` "train" normalises with each task batch's statistics; "frozen" uses the mixed
    running statistics. ``blocks_share`` ties the 4 blocks to the mixer's first block (ablation
    "no block-wise mixers": the mixer then has ``num_blocks=1``). Under torchrun each rank
    computes a share of the step's tasks (``accumulate_task_grads``); the mixer stays on the CPU.
    """
    rt = rt or Runtime()
    steps = max(1, math.ceil(epochs * len(batcher.split) / (tasks_per_step * task_batch)))
    every = log_every(steps)
    opt = torch.optim.SGD(bases.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay,
                          nesterov=True)
    mopt = torch.optim.Adam(mixer.parameters(), lr=mixer_lr) if mixer is not None else None
    bases.template.train(bn_mode == "train")
    if mixer is not None:
        mixer.train()
    parts = _Stage3Parts(bases, batcher, opt, mixer, mopt)
    snap = checkpoint.restore() if checkpoint is not None else None
    start, run_loss = parts.restore(snap, curve) if snap else (0, 0.0)
    images = tasks_per_step * task_batch
    bar = _progress(steps * images, desc, rt, start * images)
    for step in range(start, steps):
        tasks = [batcher.task_batch(task_batch, augment) for _ in range(tasks_per_step)]
        alpha = _mixers(mixer, embed, tasks, bases.num_bases, blocks_share)
        grad_alpha, loss = accumulate_task_grads(bases, alpha.detach(), tasks, aux_weight, rt)
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
        bar.update(images)
        if curve is not None and (step + 1) % every == 0:
            curve.append({"step": step + 1, "loss": run_loss / every})
            run_loss = 0.0
        if checkpoint is not None and step + 1 < steps and checkpoint.due():
            checkpoint.save(*parts.snapshot(step + 1, run_loss, curve))
    bar.close()
    bases.template.train(False)
    if mixer is not None:
        mixer.eval()


def _mixers(mixer, embed, tasks, q: int, blocks_share: bool) -> torch.Tensor:
    """(T, 4, Q) mixers of a step's tasks: the predictor's, or uniform without one."""
    if mixer is None:
        return torch.full((len(tasks), 4, q), 1.0 / q)
    alpha = mixer(torch.stack([embed(t.classes.tolist(), t.domain) for t in tasks]))
    return alpha.expand(-1, 4, -1) if blocks_share else alpha


@dataclass
class _Stage3Parts:
    """What a stage-3 snapshot holds: bases, mixer, both optimisers, the task sampler's RNGs."""

    bases: Bases
    batcher: TaskBatcher
    opt: torch.optim.Optimizer
    mixer: nn.Module | None
    mopt: torch.optim.Optimizer | None

    def snapshot(self, step: int, run_loss: float, curve) -> tuple[dict, dict]:
        tensors, meta = optimizer_tensors(self.opt, "opt")
        tensors.update({f"p.{n}": p.detach() for n, p in self.bases.params.items()})
        tensors.update({f"b.{n}": b for n, b in self.bases.buffers.items()})
        tensors["rng.torch"] = generator_state(self.batcher.gen)
        out = {"step": step, "run_loss": run_loss, "curve": list(curve or []), "opt": meta,
               "rng": self.batcher.rng.bit_generator.state}
        if self.mixer is not None:
            mixer_t, out["mopt"] = optimizer_tensors(self.mopt, "mopt")
            tensors.update(mixer_t)
            tensors.update({f"mixer.{k}": v for k, v in self.mixer.state_dict().items()})
        return tensors, out

    def restore(self, snap, curve) -> tuple[int, float]:
        tensors, meta = snap
        with torch.no_grad():
            for n, p in self.bases.params.items():
                p.copy_(tensors[f"p.{n}"])
            for n, b in self.bases.buffers.items():
                b.copy_(tensors[f"b.{n}"])
        restore_optimizer(self.opt, "opt", tensors, meta["opt"])
        self.batcher.gen.set_state(tensors["rng.torch"])
        self.batcher.rng.bit_generator.state = meta["rng"]
        if self.mixer is not None:
            self.mixer.load_state_dict({k[6:]: v for k, v in tensors.items()
                                        if k.startswith("mixer.")})
            restore_optimizer(self.mopt, "mopt", tensors, meta["mopt"])
        if curve is not None:
            curve[:] = meta["curve"]
        return int(meta["step"]), float(meta["run_loss"])
