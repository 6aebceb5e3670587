"""Anytime early-exit models on a frozen ViT: the Accumulator and the paper's baselines.

The Accumulator (``../shared/papers/accumulator-anytime-fl.txt`` §4.2) is one randomly
initialised pre-LN transformer block that reads the history of CLS tokens,

    h^l = Acc([z_client, z_cls^0 + p'_0, ..., z_cls^l + p'_l])            (eq. 7)

and its output ``h^l_{l+1}`` replaces ``z_cls^l`` before block ``l + 1``; the prediction at exit
``l`` is ``head(h^l_0 + z_cls^l)`` (eq. 8), one MLP head shared by every exit. ``z_cls^l`` in
the history and in eq. 8 is the CLS token *as block l produced it* (before its replacement).

Baselines (paper §5.1), the same class with another ``method``:
- ``linear`` / ``mlp``: one head per exit on the block's CLS token, backbone untouched;
- ``finetune``: ``mlp`` heads with the whole ViT trainable.
Any method may add parallel adapters ("PA", He et al. 2021) beside every block's FFN:
``FFN(x) + s * up(relu(down(x)))`` with ``up`` zero-initialised, so a fresh adapter is exact
identity and the frozen backbone's features are where training starts.

``zero_init`` (not in the paper; issue 15's stop-41 hypothesis) zeroes the Accumulator's two
residual-branch output projections and its layer positions, so at step 0 ``h^l_{l+1} = z_cls^l``
and the model *is* the foundation's forward pass; the paper's random block instead perturbs
the CLS token before every later block from the first step.

Exits are numbered 1..L (after block l). A model run to exit ``e`` computes blocks 1..e only:
that is the anytime contract a client with a depth budget relies on.
"""

from __future__ import annotations

import torch
from torch import nn

from model_store.vit import is_vit

METHODS = ("accumulator", "linear", "mlp", "finetune")


class ParallelAdapter(nn.Module):
    """``ffn(x) + scale * up(relu(down(x)))`` around a frozen FFN (identity at init)."""

    def __init__(self, ffn: nn.Module, width: int, rank: int, scale: float = 1.0):
        super().__init__()
        self.ffn, self.scale = ffn, scale
        self.down, self.up = nn.Linear(width, rank), nn.Linear(rank, width)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ffn(x) + self.scale * self.up(torch.relu(self.down(x)))


def mlp_head(width: int, num_classes: int) -> nn.Sequential:
    """LayerNorm -> Linear -> GELU -> Linear: ViT's head norm plus the paper's two-layer MLP."""
    return nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU(),
                         nn.Linear(width, num_classes))


class Accumulator(nn.Module):
    """The single-block transformer over ``[z_client, z_cls^0 + p'_0, ...]`` (eq. 7)."""

    def __init__(self, width: int, heads: int, depth_plus_one: int, mlp_ratio: float = 4.0,
                 zero_init: bool = False):
        super().__init__()
        self.client_token = nn.Parameter(torch.randn(width) * width**-0.5)
        self.layer_pos = nn.Parameter(torch.randn(depth_plus_one, width) * width**-0.5)
        self.block = nn.TransformerEncoderLayer(
            width, heads, int(width * mlp_ratio), dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True)
        if zero_init:  # pre-LN: output = input + attn(...) + ffn(...), both branches now 0
            for w in (self.layer_pos, self.block.self_attn.out_proj.weight,
                      self.block.self_attn.out_proj.bias, self.block.linear2.weight,
                      self.block.linear2.bias):
                nn.init.zeros_(w)

    def forward(self, history: list[torch.Tensor]) -> torch.Tensor:
        """``h^l`` (B, l + 2, D) from the CLS history ``[z_cls^0, ..., z_cls^l]`` (each (B, D))."""
        cls = torch.stack(history, dim=1) + self.layer_pos[: len(history)]
        client = self.client_token.expand(cls.shape[0], 1, -1)
        return self.block(torch.cat([client, cls], dim=1))


class AnytimeViT(nn.Module):
    """A frozen open_clip ViT with exits after every block (see module docstring).

    Args:
        visual: open_clip ``VisionTransformer`` (the foundation's image tower).
        num_classes: Classes of the task.
        method: One of :data:`METHODS`.
        adapter_rank: Rank of parallel adapters in every FFN; 0 = none.
        zero_init: Start the Accumulator as identity (module docstring); a training choice
            only, so artifacts need not record it.
    """

    def __init__(self, visual: nn.Module, num_classes: int, method: str = "accumulator",
                 adapter_rank: int = 0, zero_init: bool = False):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"unknown anytime method {method!r}; expected one of {METHODS}")
        if not is_vit(visual):
            raise ValueError("anytime exits need a ViT image tower (train a foundation --arch vit)")
        self.visual, self.method = visual, method
        blocks = visual.transformer.resblocks
        self.depth, width = len(blocks), visual.class_embedding.shape[0]
        for p in visual.parameters():
            p.requires_grad_(method == "finetune")
        if method == "accumulator":
            heads = blocks[0].attn.num_heads
            self.accumulator = Accumulator(width, heads, self.depth + 1, zero_init=zero_init)
            self.head = mlp_head(width, num_classes)
        else:
            make = (lambda: nn.Linear(width, num_classes)) if method == "linear" \
                else (lambda: mlp_head(width, num_classes))
            self.heads = nn.ModuleList(make() for _ in range(self.depth))
        if adapter_rank:  # drawn last, so a seed gives the same heads with or without PA
            for block in blocks:
                block.mlp = ParallelAdapter(block.mlp, width, adapter_rank)
        self.blocks_run = 0  # blocks computed by the last forward
        self.deepest_run = 0  # the most blocks any forward computed: the depth-budget audit

    def trainable_names(self) -> list[str]:
        """Parameter names a client trains and exchanges (the frozen backbone's are absent)."""
        return [n for n, p in self.named_parameters() if p.requires_grad]

    def check_exit(self, exit_: int) -> int:
        if not isinstance(exit_, int) or isinstance(exit_, bool) or not 1 <= exit_ <= self.depth:
            raise ValueError(f"exit must be an integer in 1..{self.depth}, got {exit_!r}")
        return exit_

    def forward(self, x: torch.Tensor, exit_: int | None = None) -> torch.Tensor:
        """Logits at ``exit_`` (default: the last block), computing blocks 1..exit_ only."""
        return self.forward_exits(x, self.check_exit(self.depth if exit_ is None else exit_))[-1]

    def forward_exits(self, x: torch.Tensor, max_exit: int) -> list[torch.Tensor]:
        """Logits at every exit 1..max_exit from one pass (the anytime evaluation)."""
        self.check_exit(max_exit)
        z = self.visual._embeds(x)  # open_clip's patch + CLS + position embedding
        history, logits = [z[:, 0]], []
        if self.method == "accumulator":
            z = self._replace_cls(z, self.accumulator(history)[:, -1])
        self.blocks_run = 0
        for depth, block in enumerate(self.visual.transformer.resblocks[:max_exit], start=1):
            z = block(z)
            self.blocks_run += 1
            self.deepest_run = max(self.deepest_run, self.blocks_run)
            cls = z[:, 0]
            if self.method != "accumulator":
                logits.append(self.heads[depth - 1](cls))
                continue
            history.append(cls)
            h = self.accumulator(history)
            logits.append(self.head(h[:, 0] + cls))
            if depth < max_exit:
                z = self._replace_cls(z, h[:, -1])
        return logits

    @staticmethod
    def _replace_cls(z: torch.Tensor, cls: torch.Tensor) -> torch.Tensor:
        return torch.cat([cls.unsqueeze(1), z[:, 1:]], dim=1)
