"""The three TAPER stages, the baselines and the controls, each resumable from its checkpoint.

Every function takes a ``Context`` (config, seed, splits, run directory) and returns state dicts;
a finished stage is saved as safetensors under ``<run_dir>/seed<k>/`` and loaded instead of
retrained when the run is resumed (delete the file to retrain that stage).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from trainer.taper.checkpoint import Checkpoint
from trainer.taper.config import TaperConfig
from trainer.taper.data import Split, TaskBatcher, TaskFn
from trainer.taper.describe import Describer
from trainer.taper.device import Runtime
from trainer.taper.loops import Curves, train_full_way, train_stage3
from trainer.taper.mixing import Bases
from trainer.taper.nets import build_net

State = dict[str, torch.Tensor]


@dataclass
class Context:
    """What every stage needs; ``curves`` collects training curves for JSON/PNG output."""

    cfg: TaperConfig
    seed: int
    train: Split
    num_classes: int
    groups: list[int]  # group id per class
    task_fn: TaskFn
    run_dir: Path
    curves: Curves = field(default_factory=dict)
    rt: Runtime = field(default_factory=Runtime)
    checkpoint_every: float = 300.0  # seconds between mid-stage snapshots

    def net(self):
        """A fresh ResNet-18 on this run's device and memory format."""
        return self.rt.module(build_net(self.num_classes, self.cfg.width))

    def snapshots(self, final: Path) -> Checkpoint:
        """The mid-stage snapshot file of the stage whose final checkpoint is ``final``."""
        return Checkpoint(partial_path(final), self.checkpoint_every, self.rt)

    def batcher(self, offset: int) -> TaskBatcher:
        return TaskBatcher(self.train, self.task_fn, self.cfg.domain_task_prob,
                           seed=self.seed * 1000 + offset)

    def save_curves(self) -> None:
        """Rank 0 writes the curves (its own slice's losses under torchrun), atomically."""
        if self.rt.is_main:
            tmp = self.run_dir / "curves.json.tmp"
            tmp.write_text(json.dumps(self.curves))
            os.replace(tmp, self.run_dir / "curves.json")


def partial_path(final: Path) -> Path:
    """Where a stage's mid-stage snapshot lives while it trains."""
    return final.with_name(final.stem + ".partial.safetensors")


def _save(path: Path, state: State, rt: Runtime) -> None:
    """Rank 0 writes ``state`` atomically and drops the stage's snapshot; all ranks then sync."""
    if rt.is_main:
        tmp = path.with_suffix(".tmp")
        save_file(state, str(tmp))
        os.replace(tmp, path)
        partial_path(path).unlink(missing_ok=True)
    rt.barrier()


def _exists(path: Path, rt: Runtime) -> bool:
    """Whether ``path`` exists, agreed by every rank (a barrier on both sides of the check, so
    rank 0 cannot write it between two ranks' checks)."""
    rt.barrier()
    found = path.exists()
    rt.barrier()
    return found


def _cached(path: Path, build: Callable[[], State], rt: Runtime | None = None) -> State:
    """Load ``path`` if a previous run finished it, else build and save it atomically.

    Under torchrun every rank builds (the stage's collectives need them all) and rank 0 saves.
    """
    rt = rt or Runtime()
    if _exists(path, rt):
        return load_file(str(path))
    state = {k: v.detach().cpu().contiguous().clone() for k, v in build().items()}
    _save(path, state, rt)
    return state


def stack_states(states: list[State]) -> State:
    """``{"q.key": tensor}`` flat layout (the artifact's bases.safetensors format)."""
    return {f"{q}.{k}": v for q, s in enumerate(states) for k, v in s.items()}


def unstack_states(flat: State) -> list[State]:
    """Inverse of ``stack_states``."""
    out: dict[int, State] = {}
    for key, value in flat.items():
        q, name = key.split(".", 1)
        out.setdefault(int(q), {})[name] = value
    return [out[q] for q in sorted(out)]


def _full_way(ctx: Context, init: State | None, name: str, *, epochs: float, lr: float,
              indices: np.ndarray | None = None, seed_offset: int = 0) -> State:
    """Train (or resume) one full-way stage; cached as ``<run_dir>/<name>.safetensors``."""
    final = ctx.run_dir / f"{name}.safetensors"

    def build() -> State:
        model = ctx.net()
        if init is not None:
            model.load_state_dict(init)
        train_full_way(model, ctx.train, epochs=epochs, lr=lr, batch_size=ctx.cfg.batch_size,
                       weight_decay=ctx.cfg.weight_decay, seed=ctx.seed * 1000 + seed_offset,
                       augment=ctx.cfg.augment, indices=indices,
                       curve=ctx.curves.setdefault(name, []), desc=f"s{ctx.seed} {name}",
                       rt=ctx.rt, checkpoint=ctx.snapshots(final))
        return model.state_dict()

    return _cached(final, build, ctx.rt)


def stage1(ctx: Context) -> State:
    """Stage 1: one ResNet-18 over all classes, cosine schedule over ``stage1_epochs``."""
    return _full_way(ctx, None, "stage1", epochs=ctx.cfg.stage1_epochs, lr=ctx.cfg.stage1_lr)


def baseline(ctx: Context, s1: State) -> State:
    """Generic baseline: stage 1 continued for the epochs TAPER spends on stages 2 + 3."""
    extra = ctx.cfg.stage2_epochs + ctx.cfg.stage3_epochs
    return _full_way(ctx, s1, "baseline", epochs=extra, lr=ctx.cfg.stage2_lr, seed_offset=1)


def _shard_key(ctx: Context, g: np.ndarray, d: np.ndarray) -> np.ndarray:
    num_domains = int(ctx.train.d.max()) + 1
    keys = {"domain": d, "group": g, "group_domain": g * num_domains + d}
    if ctx.cfg.shard_by not in keys:
        raise ValueError(f"shard_by must be one of {sorted(keys)}, got {ctx.cfg.shard_by!r}")
    return keys[ctx.cfg.shard_by]


def _shard_values(ctx: Context) -> np.ndarray:
    y, d = ctx.train.y.numpy(), ctx.train.d.numpy()
    return np.unique(_shard_key(ctx, np.asarray(ctx.groups)[y], d))


def shards(ctx: Context) -> list[np.ndarray]:
    """Training-index shards for stage 2 (by domain, group or group x domain)."""
    y, d = ctx.train.y.numpy(), ctx.train.d.numpy()
    key = _shard_key(ctx, np.asarray(ctx.groups)[y], d)
    return [np.flatnonzero(key == v) for v in _shard_values(ctx)]


def shard_of(ctx: Context, classes: list[int], domain: int | None) -> int | None:
    """Index of the shard a task belongs to (routed control, warm-up), None if it spans shards."""
    groups = {ctx.groups[c] for c in classes}
    group = next(iter(groups)) if len(groups) == 1 else None
    needs_group = ctx.cfg.shard_by in ("group", "group_domain")
    needs_domain = ctx.cfg.shard_by in ("domain", "group_domain")
    if (needs_group and group is None) or (needs_domain and domain is None):
        return None
    key = int(_shard_key(ctx, np.asarray([group or 0]), np.asarray([domain or 0]))[0])
    values = _shard_values(ctx).tolist()
    return values.index(key) if key in values else None


def stage2(ctx: Context, s1: State) -> list[State]:
    """Stage 2: Q specialists fine-tuned from stage 1, each on its own shard."""
    return [_full_way(ctx, s1, f"stage2_{q}", epochs=ctx.cfg.stage2_epochs,
                      lr=ctx.cfg.stage2_lr, indices=idx, seed_offset=10 + q)
            for q, idx in enumerate(shards(ctx))]


def make_mixer(ctx: Context, describer: Describer, q: int, blockwise: bool = True):
    """A fresh mixer predictor for ``q`` bases (one block when not block-wise)."""
    from model_store.mixer import MixerPredictor

    torch.manual_seed(ctx.seed)
    mixer = MixerPredictor(describer.dim, q, num_blocks=4 if blockwise else 1,
                           hidden=ctx.cfg.mixer_hidden, norm=ctx.cfg.mixer_norm)
    with torch.no_grad():  # start from uniform mixing: no basis is preferred by chance
        mixer.net[-1].weight.zero_()
        mixer.net[-1].bias.zero_()
    return mixer


def warm_up_mixer(ctx: Context, mixer, describer: Describer, steps: int) -> None:
    """Teach the mixer the stage-2 routing before stage 3 (no images involved: milliseconds).

    Target per task: one-hot on the shard the task belongs to (its domain / group), uniform when
    it spans shards. Stage 3 then starts from the routed-specialists control and refines it,
    instead of spending its few steps discovering the routing (§5b: the mixer was undertrained).
    """
    batcher = ctx.batcher(offset=200)
    q = mixer.num_bases
    opt = torch.optim.Adam(mixer.parameters(), lr=1e-3)
    mixer.train()
    for _ in range(steps):
        tasks = [batcher.sample_task() for _ in range(64)]
        emb = torch.stack([describer(c, d) for c, d in tasks])
        target = torch.full((len(tasks), q), 1.0 / q)
        for i, (classes, domain) in enumerate(tasks):
            shard = shard_of(ctx, classes, domain)
            if shard is not None:
                target[i] = torch.nn.functional.one_hot(torch.tensor(shard), q).float()
        logp = torch.log_softmax(mixer.logits(emb), -1)
        loss = -(target[:, None, :] * logp).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def stage3(ctx: Context, init: list[State], describer: Describer | None, name: str,
           *, epochs: float | None = None, lr: float | None = None,
           blockwise: bool = True) -> tuple[list[State], State]:
    """Stage 3: bases (+ mixer when ``describer``) trained jointly on sampled k-way tasks.

    Returns (bases, mixer state); the mixer state is empty when no describer is given (fixed
    uniform mixing, i.e. the one-basis control when ``len(init) == 1``).
    """
    bases_path = ctx.run_dir / f"{name}_bases.safetensors"
    mixer_path = ctx.run_dir / f"{name}_mixer.safetensors"
    if _exists(bases_path, ctx.rt) and (describer is None or mixer_path.exists()):
        mixer_state = load_file(str(mixer_path)) if describer is not None else {}
        return unstack_states(load_file(str(bases_path))), mixer_state
    cfg = ctx.cfg
    bases = Bases(init, ctx.net())
    mixer = make_mixer(ctx, describer, len(init), blockwise) if describer is not None else None
    if mixer is not None and cfg.mixer_warmup > 0 and name != "naive":
        warm_up_mixer(ctx, mixer, describer, cfg.mixer_warmup)
    train_stage3(bases, ctx.batcher(offset=100), mixer=mixer, embed=describer,
                 epochs=cfg.stage3_epochs if epochs is None else epochs,
                 lr=cfg.stage3_lr if lr is None else lr, mixer_lr=cfg.mixer_lr,
                 tasks_per_step=cfg.tasks_per_step, task_batch=cfg.task_batch,
                 aux_weight=cfg.aux_weight, weight_decay=cfg.weight_decay, bn_mode=cfg.bn_mode,
                 augment=cfg.augment, curve=ctx.curves.setdefault(name, []),
                 desc=f"s{ctx.seed} {name}", blocks_share=not blockwise, rt=ctx.rt,
                 checkpoint=ctx.snapshots(bases_path))
    states = [bases.state(q) for q in range(bases.num_bases)]
    mixer_state = mixer.state_dict() if mixer is not None else {}
    if mixer is not None:  # always this run's mixer: an older file may belong to older bases
        _save(mixer_path, {k: v.detach().cpu().contiguous() for k, v in mixer_state.items()},
              ctx.rt)
    _save(bases_path, {k: v.contiguous() for k, v in stack_states(states).items()}, ctx.rt)
    return states, mixer_state


def one_basis_control(ctx: Context, s1: State) -> State:
    """TAPER with Q=1: full-data stage 2 (same cost as Q shards) then stage 3, no mixing."""
    s2 = _full_way(ctx, s1, "stage2_full", epochs=ctx.cfg.stage2_epochs, lr=ctx.cfg.stage2_lr,
                   seed_offset=9)
    return stage3(ctx, [s2], None, "one_basis")[0][0]


def average_states(states: list[State]) -> State:
    """Uniform weight average (BN statistics averaged too; recalibrated before scoring)."""
    out = {}
    for key in states[0]:
        if key.endswith("num_batches_tracked"):
            out[key] = states[0][key].clone()
        else:
            out[key] = torch.stack([s[key].float() for s in states]).mean(0)
    return out
