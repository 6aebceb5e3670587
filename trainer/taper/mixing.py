"""Q stacked basis models: block-wise mixing, the stage-3 gradient fold, and mixed BN statistics.

Why not one ``functional_call`` over per-task mixed weights that stay in the autograd graph: that
keeps a full ResNet-18 copy per task alive for backward and differentiates through Q-way einsums.
Instead each task's mixed weights are materialised as fresh leaves, the task's loss is
back-propagated to them only, and the gradient is folded back with the chain rule:
``dL/dv_q = sum_t a_tq * dL/dW_t`` and ``dL/da_tq = <dL/dW_t, v_q>`` (summed over the block's
tensors). One task's mixed copy is alive at a time (DESIGN.md §5b). The bases are packed per
block (``trainer.taper.packed``), so a task's fold is a rank-1 update and a GEMV per block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from model_store.resnet import NUM_BLOCKS, block_of
from model_store.synthesis import synthesize
from trainer.taper.device import Runtime
from trainer.taper.packed import Packed


@dataclass
class TaskBatch:
    """One task inside a stage-3 step: images, global labels, the task's classes (in order)."""

    x: torch.Tensor
    y: torch.Tensor  # global class ids
    classes: torch.Tensor  # (k,) global ids; position = local label
    domain: int | None = None


def local_labels(y: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
    """Map global labels to positions in ``classes`` (classifier selection's label space).

    Raises:
        ValueError: If a label is not one of the task's classes.
    """
    match = y[:, None] == classes[None, :]
    if not bool(match.any(1).all()):
        raise ValueError("a label is outside its task's classes")
    return match.float().argmax(1)


class Bases:
    """Q ResNet-18s stored as stacked tensors ``[Q, ...]`` per state-dict key, on one device.

    Parameters live in per-block flat leaves that require grad (``trainer.taper.packed``:
    optimise ``self.parameters()``); ``params`` and ``buffers`` are ``name -> [Q, ...]`` views
    into them. BN running statistics are plain tensors (re-estimated explicitly, see
    ``recalibrate_bn``). Models that are scored or saved are mixed by
    ``model_store.synthesis.synthesize``, the function the service builds models with
    (``mixed_state``); stage 3 mixes with the packed GEMVs (``train_state``), pinned equal to it
    in a test.
    """

    def __init__(self, states: Sequence[dict[str, torch.Tensor]], template: nn.Module):
        """Stack ``states`` (each a full state dict of ``template``'s architecture) on the
        template's device."""
        if not states:
            raise ValueError("need at least one basis")
        self.template = template
        self.device = next(template.parameters()).device
        self.param_names = [n for n, _ in template.named_parameters()]
        self.buffer_names = [n for n, _ in template.named_buffers()]
        self.block = {n: block_of(n) for n in self.param_names + self.buffer_names}

        def stack(names: list[str]) -> dict[str, torch.Tensor]:
            return {n: torch.stack([s[n].detach() for s in states]).to(self.device)
                    for n in names}

        floats = [n for n in self.buffer_names if states[0][n].is_floating_point()]
        ints = [n for n in self.buffer_names if n not in floats]
        params = {n: t.float() for n, t in stack(self.param_names).items()}
        self._params = Packed(params, self.block, requires_grad=True)
        self._buffers = [Packed(stack(floats), self.block), Packed(stack(ints), self.block)]
        self.params = self._params.views
        self.buffers = {**self._buffers[0].views, **self._buffers[1].views}
        self.num_classes = self.params["fc.weight"].shape[1]

    @property
    def num_bases(self) -> int:
        """Q."""
        return next(iter(self.params.values())).shape[0]

    def parameters(self) -> list[torch.Tensor]:
        """The packed parameter leaves (one ``[Q, n]`` per block), for an optimiser."""
        return list(self._params.flat.values())

    def grad(self, name: str) -> torch.Tensor | None:
        """``[Q, ...]`` gradient of one parameter after ``accumulate_task_grads``."""
        flat = self._params.flat[self.block[name]]
        if flat.grad is None:
            return None
        return self._params.split(flat.grad, self.block[name], stacked=True)[name]

    def train_state(self, alpha: torch.Tensor) -> tuple[dict[int, torch.Tensor], dict]:
        """One task's mixed model for stage 3: (per-block parameter leaves that collect the
        task's gradient, the full state dict of views into them and fresh mixed buffers).
        ``alpha`` is ``(NUM_BLOCKS, Q)`` on this device."""
        leaves = {b: w.requires_grad_() for b, w in self._params.mix(alpha).items()}
        state = self._params.unflatten(leaves)
        for packed in self._buffers:
            state.update(packed.unflatten(packed.mix(alpha)))
        return leaves, state

    def state(self, q: int) -> dict[str, torch.Tensor]:
        """Basis ``q`` as an ordinary CPU state dict (detached copies)."""
        out = {n: p[q].detach().cpu().clone() for n, p in self.params.items()}
        out.update({n: b[q].cpu().clone() for n, b in self.buffers.items()})
        return out

    def stacked_state(self) -> dict[str, torch.Tensor]:
        """Every key as a detached CPU ``[Q, ...]`` tensor (what ``save_taper`` stores)."""
        out = {n: p.detach().cpu().clone() for n, p in self.params.items()}
        out.update({n: b.cpu().clone() for n, b in self.buffers.items()})
        return out

    def mixed_state(self, alpha: torch.Tensor, classes: Sequence[int] | None = None):
        """The mixed model's state dict (``alpha`` is ``(NUM_BLOCKS, Q)``), with classifier
        selection of ``classes`` (all classes, in order, when None). Detached."""
        stacked = {n: p.detach() for n, p in self.params.items()}
        stacked.update(self.buffers)
        rows = range(self.num_classes) if classes is None else classes
        return synthesize(stacked, alpha.detach().float().cpu(), list(rows))

    def mix(self, alpha: torch.Tensor) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Mixed (params, buffers) of one task over all classes; ``alpha`` is detached."""
        state = self.mixed_state(alpha)
        return ({n: state[n] for n in self.param_names},
                {n: state[n] for n in self.buffer_names})


def task_logits(bases: Bases, alpha: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Full-way logits of the mixed model on ``x`` (module mode decides BN behaviour)."""
    params, buffers = bases.mix(alpha)
    return functional_call(bases.template, {**params, **buffers}, (x,))


def stage3_loss(logits: torch.Tensor, task: TaskBatch, aux_weight: float) -> torch.Tensor:
    """k-way loss on the selected classifier rows + ``aux_weight`` x full-way loss (§5b)."""
    loss = F.cross_entropy(logits[:, task.classes], local_labels(task.y, task.classes))
    if aux_weight > 0:
        loss = loss + aux_weight * F.cross_entropy(logits, task.y)
    return loss


def accumulate_task_grads(
    bases: Bases, alpha: torch.Tensor, tasks: Sequence[TaskBatch], aux_weight: float,
    rt: Runtime | None = None,
) -> tuple[torch.Tensor, float]:
    """Back-propagate every task's loss into ``bases`` (``.grad``) and return ``dL/dalpha``.

    Args:
        bases: The stacked bases; their ``.grad`` is overwritten with the mean-task gradient.
        alpha: ``(T, NUM_BLOCKS, Q)`` detached mixers, one row per task (CPU).
        tasks: The T task batches.
        aux_weight: Weight of the auxiliary full-way loss.
        rt: Runtime: autocast, memory format, and (under torchrun) which tasks this rank
            computes; the per-rank sums are then all-reduced, so every rank gets the full step.

    Returns:
        ``(grad_alpha (T, NUM_BLOCKS, Q) on the CPU, mean loss)``.
    """
    rt = rt or Runtime()
    num_tasks, dev = len(tasks), bases.device
    alpha = alpha.to(dev, torch.float32)
    flats = bases._params.flat
    grads = {b: torch.zeros_like(f) for b, f in flats.items()}
    grad_alpha = torch.zeros(alpha.shape, device=dev)
    total = torch.zeros((), device=dev)
    for t in rt.tasks_of(num_tasks):
        task = tasks[t]
        leaves, state = bases.train_state(alpha[t])
        with rt.autocast():
            logits = functional_call(bases.template, state, (rt.images(task.x),))
        loss = stage3_loss(logits.float(), task, aux_weight) / num_tasks
        loss.backward()
        total += loss.detach()
        for b, leaf in leaves.items():  # chain rule, one rank-1 update and one GEMV per block
            grads[b].addr_(alpha[t, b], leaf.grad)
            grad_alpha[t, b] += flats[b].detach() @ leaf.grad
    rt.all_reduce_([*grads.values(), grad_alpha, total])
    for b, flat in flats.items():
        flat.grad = grads[b]
    return grad_alpha.cpu(), float(total)


class _BnMoments:
    """Forward pre-hooks that record each BatchNorm input's per-channel mean and E[x^2]."""

    def __init__(self, model: nn.Module):
        self.moments: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self.handles = [
            m.register_forward_pre_hook(self._hook(name))
            for name, m in model.named_modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm)
        ]

    def _hook(self, name: str):
        def hook(_module, args):
            x = args[0].detach().transpose(0, 1).reshape(args[0].shape[1], -1)
            self.moments[name] = (x.mean(1), (x * x).mean(1))

        return hook

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


@torch.no_grad()
def recalibrate_bn(bases: Bases, batches: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> None:
    """Re-estimate every basis's BN running stats so that *mixing them* fits mixed models.

    Each batch ``(x, alpha)`` runs through its mixed model with batch statistics; basis q's
    running mean / E[x^2] become the ``alpha``-weighted averages of the batch moments, so a model
    mixed with similar coefficients gets statistics close to its own (exact for one-hot mixers
    and for Q=1). Bases that no batch used keep their statistics. Under ``functional_call`` the
    bases' own buffers are never updated by training-mode BN (§5b pitfall), hence this pass.
    """
    model = bases.template
    was_training = model.training
    model.train()
    hooks = _BnMoments(model)
    sums: dict[str, list[torch.Tensor]] = {}
    weight = torch.zeros(NUM_BLOCKS, bases.num_bases, device=bases.device)
    try:
        for x, alpha in batches:
            task_logits(bases, alpha, x.to(bases.device))
            alpha = alpha.to(bases.device)
            weight += alpha
            for name, (m1, m2) in hooks.moments.items():
                coef = alpha[bases.block[name + ".running_mean"]][:, None]
                acc = sums.setdefault(name, [0.0, 0.0])
                acc[0], acc[1] = acc[0] + coef * m1, acc[1] + coef * m2
    finally:
        hooks.close()
        model.train(was_training)
    for name, (s1, s2) in sums.items():
        w = weight[bases.block[name + ".running_mean"]][:, None]
        used = w[:, 0] > 1e-6
        mean, sq = s1 / w.clamp_min(1e-6), s2 / w.clamp_min(1e-6)
        var = (sq - mean * mean).clamp_min(0)
        bases.buffers[name + ".running_mean"][used] = mean[used]
        bases.buffers[name + ".running_var"][used] = var[used]
