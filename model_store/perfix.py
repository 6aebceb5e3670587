"""Prefix personalization of a ViT (FedPerfix, ``../shared/papers/fedperfix.txt`` §3.4-3.5) and
the partial-personalization baselines it is compared with, as one model class.

:class:`PrefixAttention` replaces a block's ``nn.MultiheadAttention`` (same parameter names, so
a plain ViT's weights load into it) and adds per-layer prefixes:

- ``adapter`` (FedPerfix, eq. 4-5): ``P_k, P_v = tanh(Z W_down) W_up``, scaled by ``s`` and
  added to every token's keys and values, ``K = Z W_k + s P_k``, ``V = Z W_v + s P_v``. The
  paper writes eq. 5 as a concatenation; its authors' released code adds the prefixes (the
  parallel-attention form of He et al. 2021), which is the form where ``s = 0`` is exactly
  standard attention: we follow the code (tested).
- ``tokens`` (Vanilla Prefix-tuning, §3.4, eq. 3): ``n`` learnable key and value vectors per
  layer, randomly initialised and concatenated to every head's keys and values (Li & Liang).

:class:`PerfixViT` is the whole network every method trains (the ViT is trainable, as in the
paper): the foundation's tower, optional prefixes in every block, and a linear head on the
pooled CLS feature. :data:`METHODS` says, per method, which tensors stay on the client
(:meth:`PerfixViT.local_names`) and which are averaged by the server.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from model_store.vit import encode_pre_projection, is_vit

#: method -> (prefix kind or None, which parameters are local; see PerfixViT.local_names)
METHODS: dict[str, tuple[str | None, str]] = {
    "fedavg": (None, "none"),
    "local": (None, "all"),
    "fedbn": (None, "norms"),  # FedBN, LayerNorm version (the paper's ViT adaptation)
    "fedrep": (None, "head"),
    "fedbabu": (None, "none"),  # head frozen at its init during federation
    "vanilla_attention": (None, "attention"),  # self-attention + head local
    "vanilla_prefix": ("tokens", "prefix"),  # random-init prefixes + head local
    "fedperfix": ("adapter", "prefix"),  # adapter-generated prefixes + head local
}


class PrefixAdapter(nn.Module):
    """``tanh(Z W_down) W_up`` -> (P_k, P_v), each (B, N, D) (eq. 4)."""

    def __init__(self, width: int, rank: int):
        super().__init__()
        self.down, self.up = nn.Linear(width, rank), nn.Linear(rank, 2 * width)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.up(torch.tanh(self.down(z))).chunk(2, dim=-1)


class PrefixAttention(nn.Module):
    """Self-attention with prefixes, in place of a batch-first ``nn.MultiheadAttention``.

    Why not ``nn.MultiheadAttention`` itself: its ``add_bias_kv`` adds one shared key/value and
    nothing token-dependent, so the projections are done here with the module's own weights.
    """

    def __init__(self, mha: nn.MultiheadAttention, kind: str, rank: int = 64,
                 scale: float = 0.8, num_tokens: int = 8):
        super().__init__()
        if not mha.batch_first or mha.in_proj_weight is None:
            raise ValueError("expected a batch-first nn.MultiheadAttention with packed in_proj")
        width = mha.embed_dim
        self.num_heads, self.kind, self.scale = mha.num_heads, kind, float(scale)
        self.in_proj_weight, self.in_proj_bias, self.out_proj = (
            mha.in_proj_weight, mha.in_proj_bias, mha.out_proj)
        if kind == "adapter":
            self.prefix = PrefixAdapter(width, rank)
        elif kind == "tokens":
            self.prefix_k = nn.Parameter(torch.randn(num_tokens, width))
            self.prefix_v = nn.Parameter(torch.randn(num_tokens, width))
        else:
            raise ValueError(f"prefix kind must be 'adapter' or 'tokens', got {kind!r}")

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        b, n, d = t.shape
        return t.view(b, n, self.num_heads, d // self.num_heads).transpose(1, 2)

    def forward(self, query: torch.Tensor, key=None, value=None, need_weights: bool = False,
                attn_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        """``(output, None)`` as ``nn.MultiheadAttention`` returns; self-attention only."""
        if attn_mask is not None or need_weights:
            raise ValueError("prefix attention serves unmasked ViT self-attention only")
        q, k, v = F.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        if self.kind == "adapter":
            pk, pv = self.prefix(query)
            k, v = k + self.scale * pk, v + self.scale * pv
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if self.kind == "tokens":
            b = query.shape[0]
            k = torch.cat([self._heads(self.prefix_k.expand(b, -1, -1)), k], dim=2)
            v = torch.cat([self._heads(self.prefix_v.expand(b, -1, -1)), v], dim=2)
        out = F.scaled_dot_product_attention(q, k, v)
        b, h, n, dh = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, n, h * dh)), None


class PerfixViT(nn.Module):
    """A trainable open_clip ViT + optional prefixes + a linear head on the pooled CLS token.

    Args:
        visual: open_clip ``VisionTransformer`` (copied by the caller; modified in place).
        num_classes: Classes of the task.
        method: One of :data:`METHODS`.
        rank, scale: FedPerfix's adapter bottleneck and ``s``.
        num_tokens: Vanilla prefix length per layer.
    """

    def __init__(self, visual: nn.Module, num_classes: int, method: str = "fedperfix",
                 rank: int = 64, scale: float = 0.8, num_tokens: int = 8):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; expected one of {sorted(METHODS)}")
        if not is_vit(visual):
            raise ValueError("prefix personalization needs a ViT tower (foundation --arch vit)")
        self.visual, self.method = visual, method
        visual.proj = None  # the CLIP projection is unused: the head reads the pooled feature
        kind, self.local_part = METHODS[method]
        if kind is not None:
            for block in visual.transformer.resblocks:
                block.attn = PrefixAttention(block.attn, kind, rank, scale, num_tokens)
        self.head = nn.Linear(visual.class_embedding.shape[0], num_classes)
        for p in self.parameters():
            p.requires_grad_(True)
        if method == "fedbabu":  # the head stays at its (shared) random init while federating
            self.head.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(encode_pre_projection(self.visual, x))

    def local_names(self) -> list[str]:
        """Parameters that never leave the client (the method's personal part)."""
        part = self.local_part
        names = [n for n, _ in self.named_parameters()]
        if part == "all":
            return names
        keep = {"none": lambda n: False,
                "norms": lambda n: ".ln_" in f".{n}",
                "head": lambda n: n.startswith("head."),
                "attention": lambda n: n.startswith("head.") or ".attn." in n,
                "prefix": lambda n: n.startswith("head.") or ".attn.prefix" in n}[part]
        return [n for n in names if keep(n)]

    def global_names(self) -> list[str]:
        """Parameters the server averages: trainable and not local."""
        local = set(self.local_names())
        return [n for n, p in self.named_parameters() if p.requires_grad and n not in local]
