"""The TAPER mixer predictor: task text embedding -> block-wise mixing coefficients.

Architecture per DESIGN.md §5: a 4-layer MLP (Linear -> BatchNorm -> ReLU, three times, then a
Linear) whose ``num_blocks * Q`` logits are softmaxed over the Q bases separately per block.

BatchNorm caveat (DESIGN.md §5b): with few tasks per training step its batch statistics are
noisy, and at serving time the mixer sees one task at a time (batch 1, where training-mode
BatchNorm cannot even run). Serving must therefore use eval mode (running statistics): call
``mixer.eval()`` or use :meth:`MixerPredictor.predict`, which always runs in eval mode. The
``norm`` option (``"layer"`` or ``"none"``) exists for trainers that want a batch-size-independent
alternative; it is recorded in the artifact's ``mixer`` config so the service rebuilds the same
network.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

NORMS = ("batch", "layer", "none")


def _norm(kind: str, width: int) -> nn.Module:
    if kind == "batch":
        return nn.BatchNorm1d(width)
    if kind == "layer":
        return nn.LayerNorm(width)
    return nn.Identity()


class MixerPredictor(nn.Module):
    """Predicts ``(B, num_blocks, Q)`` mixing coefficients that sum to 1 over Q per block."""

    def __init__(
        self,
        embed_dim: int,
        num_bases: int,
        num_blocks: int = 4,
        hidden: int = 256,
        norm: str = "batch",
    ):
        """Build the MLP.

        Args:
            embed_dim: Size of the task text embedding (384 for MiniLM).
            num_bases: Q, the number of basis models to mix.
            num_blocks: Number of independently mixed blocks (4 for ResNet-18).
            hidden: Width of the three hidden layers.
            norm: ``"batch"`` (the paper's choice), ``"layer"`` or ``"none"``.
        """
        super().__init__()
        for name, value in (
            ("embed_dim", embed_dim),
            ("num_bases", num_bases),
            ("num_blocks", num_blocks),
            ("hidden", hidden),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        self.embed_dim, self.num_bases, self.num_blocks = embed_dim, num_bases, num_blocks
        self.hidden, self.norm = hidden, norm
        layers: list[nn.Module] = []
        width = embed_dim
        for _ in range(3):
            layers += [nn.Linear(width, hidden), _norm(norm, hidden), nn.ReLU(inplace=True)]
            width = hidden
        layers.append(nn.Linear(width, num_blocks * num_bases))
        self.net = nn.Sequential(*layers)

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments, stored in artifacts so the mixer can be rebuilt exactly."""
        return {
            "embed_dim": self.embed_dim,
            "num_bases": self.num_bases,
            "num_blocks": self.num_blocks,
            "hidden": self.hidden,
            "norm": self.norm,
        }

    def logits(self, embeddings: torch.Tensor) -> torch.Tensor:
        """Unnormalised ``(B, num_blocks, Q)`` scores (useful for losses/temperature)."""
        if embeddings.dim() != 2 or embeddings.shape[1] != self.embed_dim:
            raise ValueError(
                f"expected embeddings of shape (B, {self.embed_dim}), got {tuple(embeddings.shape)}"
            )
        return self.net(embeddings).view(-1, self.num_blocks, self.num_bases)

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        """Block-wise softmax coefficients ``(B, num_blocks, Q)``."""
        return self.logits(embeddings).softmax(dim=-1)

    @torch.no_grad()
    def predict(self, embedding: torch.Tensor) -> torch.Tensor:
        """Serving entry point: one embedding ``(d,)`` or a batch ``(B, d)``, always eval mode.

        Returns ``(num_blocks, Q)`` for a single embedding, else ``(B, num_blocks, Q)``. The
        module's previous train/eval mode is restored afterwards.
        """
        single = embedding.dim() == 1
        x = embedding.unsqueeze(0) if single else embedding
        param = next(self.parameters())
        was_training = self.training
        self.eval()
        try:
            out = self(x.to(device=param.device, dtype=param.dtype))
        finally:
            self.train(was_training)
        return out[0] if single else out


def build_mixer(config: dict[str, Any]) -> MixerPredictor:
    """Rebuild a ``MixerPredictor`` from its ``config`` dict (as stored in artifacts)."""
    allowed = {"embed_dim", "num_bases", "num_blocks", "hidden", "norm"}
    if unknown := set(config) - allowed:
        raise ValueError(f"unknown mixer config keys: {sorted(unknown)}")
    return MixerPredictor(**config)
