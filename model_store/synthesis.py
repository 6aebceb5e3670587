"""TAPER weight synthesis: block-wise weighted sums of Q basis ResNet-18s + classifier selection.

``synthesize`` is the whole "personalization without training" step: for every state-dict
tensor, the weighted sum of the Q bases with the mixer coefficients of that tensor's block
(``resnet.block_of``). BatchNorm running means/variances are mixed the same way (a linear
approximation, see DESIGN.md §5) and ``num_batches_tracked`` is copied from basis 0. Classifier
selection then keeps ``fc`` rows ``class_indices`` in the task's order, so output ``j`` of the
synthesized model is class ``class_indices[j]``.

Speed: synthesis is memory-bound (it must read all Q bases once). The fast path works on
``stack_bases`` output (done once at load time): the floating tensors of each block packed
into a few ``[Q, n]`` buffers, one ``torch.mv`` each (``model_store.stacked``); classifier rows
are selected *before* mixing so only the task's rows are read. Outputs of one segment are
disjoint views of one buffer (safetensors saves them as they are).
``benchmarks/synthesis.py`` measures it against the time to copy the stacked bases once.
Everything is differentiable w.r.t. mixers, and w.r.t. bases given as a list or a plain stacked
dict (no in-place ops on inputs), so the trainer can use the same function inside
``torch.func.functional_call``; ``StackedBases`` is inference-only.

Determinism: the service rebuilds evicted models from their recipes and serves their sha256 as
ETag, so output bytes must be reproducible. On one machine and software stack the result is
bit-identical across calls and CPU thread counts (tested); across different CPU instruction sets
or CPU vs CUDA, last-bit differences are possible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from model_store.resnet import CLASSIFIER_KEYS, NUM_BLOCKS, block_of
from model_store.stacked import StackedBases

StateDict = dict[str, torch.Tensor]


def stack_bases(bases: Sequence[Mapping[str, torch.Tensor]]) -> StackedBases:
    """Stack Q state dicts into ``key -> [Q, ...]`` backed by packed segments (fast path).

    Raises:
        ValueError: If there are no bases, or their keys, shapes or dtypes disagree.
    """
    check_bases(bases)
    return StackedBases({k: torch.stack([b[k].detach() for b in bases]) for k in bases[0]})


def check_bases(bases: Sequence[Mapping[str, torch.Tensor]]) -> None:
    """Raise ``ValueError`` unless ``bases`` are >= 1 state dicts with equal keys/shapes/dtypes."""
    if isinstance(bases, Mapping) or len(bases) == 0:
        raise ValueError("bases must be a non-empty sequence of state dicts")
    ref = bases[0]
    for q, basis in enumerate(bases[1:], start=1):
        if list(basis) != list(ref):
            missing = sorted(set(ref) ^ set(basis))
            raise ValueError(f"basis {q} keys differ from basis 0 (e.g. {missing[:3]})")
        for key, t in basis.items():
            if t.shape != ref[key].shape or t.dtype != ref[key].dtype:
                raise ValueError(
                    f"basis {q} {key}: {tuple(t.shape)}/{t.dtype} != "
                    f"basis 0 {tuple(ref[key].shape)}/{ref[key].dtype}"
                )


def _check_mixers(mixers: torch.Tensor, num_bases: int) -> torch.Tensor:
    mixers = torch.as_tensor(mixers)
    if mixers.shape != (NUM_BLOCKS, num_bases):
        raise ValueError(
            f"mixers must have shape ({NUM_BLOCKS}, {num_bases}) = (blocks, bases), "
            f"got {tuple(mixers.shape)}"
        )
    if not mixers.is_floating_point() or not torch.isfinite(mixers).all():
        raise ValueError("mixers must be finite floating-point coefficients")
    return mixers


def _check_classes(class_indices: Sequence[int] | torch.Tensor, num_classes: int) -> list[int]:
    if isinstance(class_indices, torch.Tensor):
        class_indices = class_indices.tolist()
    idx = list(class_indices)
    if not idx:
        raise ValueError("class_indices must name at least one class")
    for i in idx:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < num_classes:
            raise ValueError(f"class index {i!r} out of range [0, {num_classes})")
    if len(set(idx)) != len(idx):
        raise ValueError(f"class_indices contains duplicates: {idx}")
    return idx


def _num_classes(fc_weight: torch.Tensor) -> int:
    return fc_weight.shape[-2]


def synthesize(
    bases: Sequence[Mapping[str, torch.Tensor]] | Mapping[str, torch.Tensor],
    mixers: torch.Tensor,
    class_indices: Sequence[int] | torch.Tensor,
) -> StateDict:
    """Synthesize a task model's state dict from Q bases.

    Args:
        bases: Either a list of Q ResNet-18 state dicts (reference path) or the output of
            ``stack_bases`` (fast path); both give the same result.
        mixers: ``(NUM_BLOCKS, Q)`` coefficients; row ``b`` weighs the bases in block ``b``.
            Rows are normally softmax outputs but any finite weights are accepted.
        class_indices: The task's classes as indices into the bases' classifier, in the order
            the synthesized model's outputs should have. Unique, non-empty.

    Returns:
        A state dict that loads with ``strict=True`` into
        ``torchvision.models.resnet18(num_classes=len(class_indices))``. Its tensors never
        alias the bases (those of one block may be disjoint views of one fresh buffer), so it
        can be serialised or cached directly.

    Raises:
        ValueError: On mismatched bases, wrongly shaped/non-finite mixers, or invalid classes.
    """
    if isinstance(bases, Mapping):
        return _synthesize_stacked(bases, mixers, class_indices)
    check_bases(bases)
    mixers = _check_mixers(mixers, len(bases))
    idx = _check_classes(class_indices, _num_classes(bases[0]["fc.weight"]))
    out: StateDict = {}
    for key, ref in bases[0].items():
        if not ref.is_floating_point():
            out[key] = ref.detach().clone()
            continue
        weights = mixers[block_of(key)].to(device=ref.device, dtype=ref.dtype)
        rows = (lambda t: t[idx]) if key in CLASSIFIER_KEYS else (lambda t: t)
        acc = weights[0] * rows(bases[0][key])
        for q in range(1, len(bases)):
            acc = acc + weights[q] * rows(bases[q][key])
        out[key] = acc
    return out


def _synthesize_stacked(
    stacked: Mapping[str, torch.Tensor],
    mixers: torch.Tensor,
    class_indices: Sequence[int] | torch.Tensor,
) -> StateDict:
    """Fast path: one ``torch.mv`` per packed segment, then per-tensor GEMVs for the rest.

    A plain ``key -> [Q, ...]`` dict (e.g. bases that require grad in a test) takes the
    per-tensor GEMV for every key; ``StackedBases`` only for its classifier and integer buffers.
    """
    if "fc.weight" not in stacked:
        raise ValueError("stacked bases have no 'fc.weight' (not a ResNet-18 state dict?)")
    num_bases = stacked["fc.weight"].shape[0]
    mixers = _check_mixers(mixers, num_bases)
    idx = _check_classes(class_indices, _num_classes(stacked["fc.weight"]))
    out: StateDict = {}
    loose = stacked
    if isinstance(stacked, StackedBases):
        for seg in stacked.segments:
            weights = mixers[seg.block].to(device=seg.buffer.device, dtype=seg.buffer.dtype)
            # (n, Q) @ (Q,): one pass over the segment, no temporary
            out.update(seg.unflatten(torch.mv(seg.buffer.T, weights)))
        loose = stacked.loose
    idx_t = torch.tensor(idx, device=stacked["fc.weight"].device)
    for key, t in loose.items():
        out[key] = _mix_one(key, t, mixers, num_bases, idx_t)
    return {key: out[key] for key in stacked}


def _mix_one(
    key: str, t: torch.Tensor, mixers: torch.Tensor, num_bases: int, idx_t: torch.Tensor
) -> torch.Tensor:
    """Mix one ``[Q, ...]`` tensor: basis 0 for integer buffers, selected rows for ``fc``."""
    if t.shape[0] != num_bases:
        raise ValueError(f"stacked {key} has {t.shape[0]} bases, expected {num_bases}")
    if not t.is_floating_point():
        return t[0].clone()
    if key in CLASSIFIER_KEYS:
        t = t.index_select(1, idx_t)
    weights = mixers[block_of(key)].to(device=t.device, dtype=t.dtype)
    # (Q,) . (Q, ...) as one GEMM. Unlike axpy chains (elementwise OpenMP ops, 3-10x slower
    # whenever the other core was busy) it stays fast under contention; tensordot (a (1, Q) x
    # (Q, n) mm) took 0.4-0.5x the time of matmul's (Q,) x (Q, n) path on this CPU, same bits.
    return torch.tensordot(weights, t, dims=1)


def select_classes(state: Mapping[str, torch.Tensor], class_indices: Sequence[int]) -> StateDict:
    """Classifier selection on one model: keep ``fc`` rows ``class_indices`` in task order.

    The "selection" baseline (generic stage-1 model, no mixing). Other tensors are cloned so the
    result never aliases the source model.
    """
    idx = _check_classes(class_indices, _num_classes(state["fc.weight"]))
    return {
        k: (v.detach()[idx].clone() if k in CLASSIFIER_KEYS else v.detach().clone())
        for k, v in state.items()
    }
