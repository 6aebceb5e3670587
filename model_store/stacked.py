"""Stacked bases packed into contiguous per-block segments: the layout synthesis reads fastest.

WHY: synthesis is bound by reading the Q bases once, but one GEMV per state-dict tensor (~120 of
them, most of them small BatchNorm vectors) adds per-call overhead, and ``torch.matmul`` of a
``(Q,)`` vector with a ``(Q, n)`` matrix goes through a ``[1, n]`` temporary. Packing the
floating-point tensors of each TAPER block into a few ``[Q, n]`` buffers and running one
``torch.mv`` per buffer makes synthesis 5-9 % faster (``benchmarks/synthesis.py``, Q = 4, one
thread: 1.85-2.5x a read-only pass over the bases, vs 1.94-2.7x per tensor; writing the 45 MB
output is the rest), with bit-identical results on CPU (every output element is the same Q-term
dot product in the same order).

Segments end at block boundaries (each block has its own mixer row) and are capped at
``MAX_SEGMENT_BYTES`` of *output* per segment: under glibc's mmap threshold (32 MB at most), so a
synthesized model's buffers come from the heap and are reused after eviction instead of being
fresh, page-faulting memory every time. The classifier (rows are selected per task before
mixing) and integer buffers stay as plain ``[Q, ...]`` tensors.

``StackedBases`` is a ``Mapping`` of ``key -> [Q, ...]`` views into the segments (do not modify
them in place), so code that only needs the stacked layout (per-basis views, byte counts) uses
it like a dict. It is an inference layout: packing copies the bases, so bases that require grad
are refused (training mixes a list of state dicts or a plain ``key -> [Q, ...]`` dict).

Bit-identity with the per-tensor GEMV is tested on CPU; on CUDA, ``mv`` and ``matmul`` may take
different cuBLAS kernels, so a GPU deployment should not rebuild recipes recorded on another
layout or device (ETags would differ; the service logs the mismatch).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import torch
from torch._utils import _unflatten_dense_tensors

from model_store.resnet import CLASSIFIER_KEYS, block_of

MAX_SEGMENT_BYTES = 16 << 20


@dataclass(frozen=True, eq=False)  # tensors: compare by identity
class Segment:
    """One ``[Q, n]`` buffer holding consecutive floating tensors of one block, flattened."""

    block: int
    buffer: torch.Tensor
    entries: tuple[tuple[str, int, int, torch.Size], ...]  # (key, offset, numel, shape)
    templates: tuple[torch.Tensor, ...]  # "meta" tensors of the entries' shapes, for unflatten

    def unflatten(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """``key -> view`` of a ``(n,)`` result, shaped like the entries.

        One C++ call (the helper DDP uses for its gradient buckets) instead of ~100 Python
        ``narrow``/``view`` calls: ~1 ms less per synthesis, ~0.15x of the read bound.
        """
        views = _unflatten_dense_tensors(flat, list(self.templates))
        return {key: view for (key, *_), view in zip(self.entries, views, strict=True)}


class StackedBases(Mapping[str, torch.Tensor]):
    """Q bases as ``key -> Tensor[Q, ...]`` backed by packed per-block segments."""

    def __init__(
        self, stacked: Mapping[str, torch.Tensor], max_segment_bytes: int = MAX_SEGMENT_BYTES
    ):
        """Pack ``stacked`` (``key -> [Q, ...]``, equal Q) on the device its tensors are on.

        Raises:
            ValueError: If a tensor requires grad (packing would silently cut the graph).
        """
        if grads := [k for k, v in stacked.items() if v.requires_grad]:
            raise ValueError(f"StackedBases is for inference; {grads[0]!r} requires grad")
        self._order = list(stacked)
        self.segments = tuple(
            _pack(stacked, keys) for keys in _segment_keys(stacked, max_segment_bytes)
        )
        packed = {key for seg in self.segments for key, *_ in seg.entries}
        self.loose = {k: v for k, v in stacked.items() if k not in packed}
        self._views = dict(self.loose)
        for seg in self.segments:
            for key, offset, numel, shape in seg.entries:
                self._views[key] = seg.buffer[:, offset : offset + numel].view(-1, *shape)

    def storage(self) -> list[torch.Tensor]:
        """The contiguous tensors that hold the bases (segments, then loose tensors).

        Benchmarks read these for the memory-bandwidth bound: the views are strided slices.
        """
        return [seg.buffer for seg in self.segments] + list(self.loose.values())

    def __getitem__(self, key: str) -> torch.Tensor:
        return self._views[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def _segment_keys(stacked: Mapping[str, torch.Tensor], max_bytes: int) -> list[list[str]]:
    """Runs of consecutive packable keys with the same block and dtype, capped at ``max_bytes``."""
    runs: list[list[str]] = []
    current: list[str] = []
    ident, size = None, 0
    for key, t in stacked.items():
        if not t.is_floating_point() or key in CLASSIFIER_KEYS:
            continue
        nbytes = t[0].numel() * t.element_size()
        if current and ((block_of(key), t.dtype) != ident or size + nbytes > max_bytes):
            runs.append(current)
            current, size = [], 0
        current.append(key)
        ident, size = (block_of(key), t.dtype), size + nbytes
    if current:
        runs.append(current)
    return runs


def _pack(stacked: Mapping[str, torch.Tensor], keys: list[str]) -> Segment:
    q = stacked[keys[0]].shape[0]
    entries, offset = [], 0
    for key in keys:
        numel = stacked[key][0].numel()
        entries.append((key, offset, numel, stacked[key].shape[1:]))
        offset += numel
    buffer = torch.cat([stacked[k].detach().reshape(q, -1) for k in keys], dim=1)
    templates = tuple(torch.empty(shape, device="meta") for *_, shape in entries)
    return Segment(block_of(keys[0]), buffer, tuple(entries), templates)
