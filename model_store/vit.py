"""The ViT image tower of Tailor's foundation: open_clip's own ``VisionTransformer``, small.

Why open_clip's native ViT and not a timm one: the bundle stays a plain open_clip ``local-dir:``
config (``vision_cfg`` with ``width``/``layers``/``patch_size``), which open_clip loads offline
with no timm model name to resolve, and its tower exposes the pieces the per-layer methods need
(``_embeds``, ``transformer.resblocks``, ``ln_post``, ``proj``): the Accumulator reads the CLS
token after every block and FedPerfix adds prefixes inside every block's attention.

Size: 32x32 inputs, 4x4 patches (64 tokens + CLS), width 192, 6 blocks of 3 heads of 64: about
2.7 M parameters, what a 2-core CPU can align in minutes.
"""

from __future__ import annotations

from typing import Any

import torch

VIT = "vit"
VIT_DEFAULTS = {"patch_size": 4, "width": 192, "layers": 6, "head_width": 64, "mlp_ratio": 4.0}


def vit_vision_cfg(image_size: int = 32, **overrides: Any) -> dict[str, Any]:
    """open_clip ``vision_cfg`` of Tailor's ViT (CLS-token pooling, learnable positions)."""
    cfg = {**VIT_DEFAULTS, **overrides}
    if image_size % int(cfg["patch_size"]):
        raise ValueError(f"image size {image_size} is not a multiple of patch {cfg['patch_size']}")
    if int(cfg["width"]) % int(cfg["head_width"]):
        raise ValueError(f"width {cfg['width']} is not a multiple of heads' {cfg['head_width']}")
    return {"image_size": int(image_size), **cfg, "pool_type": "tok"}


def is_vit(visual: torch.nn.Module) -> bool:
    """Whether an open_clip image tower is a native ViT (vs a timm trunk + head)."""
    return hasattr(visual, "transformer") and hasattr(visual, "class_embedding")


def reinit_vit(visual: torch.nn.Module, seed: int) -> None:
    """Redraw every weight of the tower from ``seed``, so a build is bit-identical anywhere.

    Token, position and projection use open_clip's own ``width ** -0.5`` normal init; linear,
    attention and norm layers use PyTorch's defaults (open_clip leaves them at those too).
    """
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        scale = visual.class_embedding.shape[0] ** -0.5
        for param in (visual.class_embedding, visual.positional_embedding, visual.proj):
            param.normal_(0.0, scale)
        for m in visual.modules():
            if isinstance(m, torch.nn.MultiheadAttention):
                m._reset_parameters()  # torch has no public name for it
            elif hasattr(m, "reset_parameters"):
                m.reset_parameters()


def cls_states(visual: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    """Token states before the first block and after every block: ``L + 1`` tensors (B, T, D).

    The per-layer view the anytime methods read (``z_cls^l`` is ``states[l][:, 0]``).
    """
    h = visual._embeds(x)  # open_clip's patch + CLS + position embedding
    states = [h]
    for block in visual.transformer.resblocks:
        h = block(h)
        states.append(h)
    return states


def pooled(visual: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Pre-projection image feature of final token states: ``ln_post`` of the CLS token."""
    return visual._pool(tokens)[0]


def encode_pre_projection(visual: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The ViT's pooled feature before ``proj`` (the cacheable part of the image tower)."""
    return pooled(visual, visual.transformer(visual._embeds(x)))


def project(visual: torch.nn.Module, features: torch.Tensor) -> torch.Tensor:
    """Apply the ViT's projection to pooled features (``encode_image`` = project ∘ pre-proj)."""
    return features @ visual.proj
