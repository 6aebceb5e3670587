"""Stacked tensors packed per TAPER block into flat ``[Q, n]`` buffers: the stage-3 fast layout.

WHY: a stage-3 task mixes Q bases, runs the mixed model and folds the gradient back into the
bases and the mixer. Per state-dict tensor that is ~400 small ops per task (a mix, Q gradient
adds and a dot product for each of 62 parameters and ~60 buffers): on a GPU they are
kernel-launch bound (a stage-3 step cost 2.6-2.8x its forwards+backwards on an H100). Packed per
block, a task costs a dozen ops: one GEMV per block to mix, one rank-1 update (``addr_``) per block
to fold the gradient, one GEMV per block for ``dL/dalpha``. The service's ``StackedBases`` packs
the same way for inference; it refuses tensors that need gradients, hence this training twin.

``views`` gives ``name -> [Q, ...]`` views into the buffers (detached: in-place writes, e.g. BN
re-estimation or restoring a snapshot, land in the packed storage); ``flat`` holds the leaves an
optimiser steps.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch


class Packed:
    """Named ``[Q, ...]`` tensors of one dtype, packed per group (block) into ``[Q, n]``."""

    def __init__(self, stacked: Mapping[str, torch.Tensor], group: Mapping[str, int],
                 requires_grad: bool = False):
        self.layout: dict[int, list[tuple[str, torch.Size, int]]] = {}
        for name, t in stacked.items():
            self.layout.setdefault(group[name], []).append((name, t.shape[1:], t[0].numel()))
        self.flat = {
            g: torch.cat([stacked[n].reshape(stacked[n].shape[0], -1) for n, _, _ in entries], 1)
            for g, entries in self.layout.items()
        }
        if requires_grad:
            for t in self.flat.values():
                t.requires_grad_()
        self.views: dict[str, torch.Tensor] = {}
        for g in self.layout:
            self.views.update(self.split(self.flat[g].detach(), g, stacked=True))

    def split(self, flat: torch.Tensor, g: int, stacked: bool = False) -> dict[str, torch.Tensor]:
        """``name -> view`` of a group's flat tensor (``[Q, n]`` when stacked, else ``[n]``)."""
        sizes = [numel for _, _, numel in self.layout[g]]
        chunks = flat.split(sizes, dim=-1)
        lead = (flat.shape[0],) if stacked else ()
        return {name: chunk.view((*lead, *shape))
                for (name, shape, _), chunk in zip(self.layout[g], chunks, strict=True)}

    def mix(self, alpha: torch.Tensor) -> dict[int, torch.Tensor]:
        """``group -> [n]``: the alpha-weighted sum of the Q rows (row 0 for integer buffers).

        ``alpha`` is ``(groups, Q)`` on the buffers' device; each output is a fresh tensor.
        """
        out = {}
        for g, flat in self.flat.items():
            flat = flat.detach()
            out[g] = (torch.tensordot(alpha[g].to(flat.dtype), flat, dims=1)
                      if flat.is_floating_point() else flat[0].clone())
        return out

    def unflatten(self, mixed: Mapping[int, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``name -> tensor`` views of ``mix`` outputs (gradients flow back to them)."""
        out: dict[str, torch.Tensor] = {}
        for g, flat in mixed.items():
            out.update(self.split(flat, g))
        return out
