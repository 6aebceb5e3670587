"""FedCLIP attention adapters over frozen CLIP image features, and their artifact format.

The adapter (AttAI in the FedCLIP paper, layout from the authors' code) is
``Linear(d, d) -> Tanh -> Linear(d, d) -> Softmax``; its output is an attention vector that is
multiplied element-wise with the frozen image feature. Logits are ``scale * cos(adapted image
feature, class text feature)``. Only the adapter trains and is exchanged in federated rounds, which
is why it must be small: :class:`AttentionAdapter` with ``rank`` set is the low-rank variant
(``Linear(d, r) -> Tanh -> Linear(r, d) -> Softmax``, ``2dr + r + d`` parameters instead of
``2d^2 + 2d``).

Why AdamW and not the authors' Adam with weight decay 0.2: at initialisation the softmax is almost
uniform (every weight ~1/d), so the adapter is an identity map up to a scale that cosine ignores.
Coupled L2 decay pulls the weights back to zero faster than the tiny cross-entropy gradients move
them, and the attention stays uniform for good; decoupled decay does not (DESIGN.md §5c).
:func:`make_optimizer` is the single place that choice lives.

Artifact kind ``fedclip`` (written by the trainer, served by the service, one version per
federation): ``global.safetensors`` (global adapter state dict), ``clients.safetensors`` (keys
``"{client_id}/{param}"``, one personalised adapter per client), ``class_text.safetensors``
(``text_features`` float32 (C, d), L2-normalised features of the class prompts from the same
backbone, so serving needs no text tower), ``classes.json`` (class names in logit order) and
``config.json`` (``adapter`` = :meth:`AttentionAdapter.config`, ``logit_scale``, ``backbone`` =
where the frozen image tower comes from and its hash, ``clients`` = client ids).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from model_store.artifacts import ArtifactRef, open_artifact, write_artifact
from model_store.kinds import FEDCLIP, FOUNDATION

KIND = FEDCLIP
CLIENT_SEP = "/"


class AttentionAdapter(nn.Module):
    """FedCLIP attention adapter: softmax attention over feature dimensions.

    Args:
        dim: Feature dimension ``d`` of the frozen image embedding.
        rank: Hidden width; ``None`` (the paper's adapter) means ``d``. A smaller rank is the
            low-rank variant that cuts communication per round.
    """

    def __init__(self, dim: int, rank: int | None = None):
        super().__init__()
        if dim <= 0 or (rank is not None and rank <= 0):
            raise ValueError(f"adapter dim and rank must be positive, got dim={dim} rank={rank}")
        self.dim = int(dim)
        self.rank = int(rank) if rank is not None else None
        hidden = self.rank or self.dim
        self.fc1 = nn.Linear(self.dim, hidden)
        self.fc2 = nn.Linear(hidden, self.dim)

    def attention(self, features: torch.Tensor) -> torch.Tensor:
        """Attention weights over feature dimensions, each row summing to 1."""
        return torch.softmax(self.fc2(torch.tanh(self.fc1(features))), dim=-1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Re-weight frozen image features: ``attention(x) * x``."""
        if features.shape[-1] != self.dim:
            raise ValueError(f"adapter expects features of dim {self.dim}, got {features.shape}")
        return self.attention(features) * features

    def config(self) -> dict[str, Any]:
        """JSON config that :func:`build_adapter` turns back into this architecture."""
        return {"type": "attention", "dim": self.dim, "rank": self.rank}


def build_adapter(config: Mapping[str, Any]) -> AttentionAdapter:
    """Rebuild an adapter from :meth:`AttentionAdapter.config` output.

    Raises:
        ValueError: Unknown adapter type or missing dim.
    """
    if config.get("type", "attention") != "attention" or "dim" not in config:
        raise ValueError(f"unsupported adapter config: {dict(config)!r}")
    return AttentionAdapter(int(config["dim"]), config.get("rank"))


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars: what one federated round sends per client and direction."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def cosine_logits(
    image_features: torch.Tensor, text_features: torch.Tensor, scale: float
) -> torch.Tensor:
    """CLIP-style logits: ``scale * cos`` between every image and every class text feature."""
    return scale * F.normalize(image_features, dim=-1) @ F.normalize(text_features, dim=-1).T


def adapter_logits(
    adapter: nn.Module | None,
    image_features: torch.Tensor,
    text_features: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """Logits of frozen features through an adapter (``None``: zero-shot, no adapter)."""
    feats = image_features if adapter is None else adapter(image_features)
    return cosine_logits(feats, text_features, scale)


def make_optimizer(
    params: Any, lr: float = 1e-3, weight_decay: float = 0.2, decoupled: bool = True
) -> torch.optim.Optimizer:
    """Optimizer for adapters: AdamW by default, the authors' coupled Adam+L2 on request.

    The betas/eps are the authors' (0.9, 0.98), 1e-6. ``decoupled=False`` reproduces their Adam
    with L2 decay, kept only so the failure mode stays measurable (see module docstring).
    """
    cls = torch.optim.AdamW if decoupled else torch.optim.Adam
    return cls(params, lr=lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=weight_decay)


def write_fedclip_artifact(
    store: str | os.PathLike[str],
    *,
    global_state: Mapping[str, torch.Tensor],
    client_states: Mapping[str, Mapping[str, torch.Tensor]],
    adapter_config: Mapping[str, Any],
    class_names: Sequence[str],
    text_features: torch.Tensor,
    logit_scale: float,
    backbone: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
) -> ArtifactRef:
    """Save a federation's global and per-client adapters as one ``fedclip`` artifact.

    Args:
        store: Artifact store root.
        global_state: State dict of the aggregated adapter.
        client_states: Client id -> personalised adapter state dict.
        adapter_config: :meth:`AttentionAdapter.config` of every adapter here.
        class_names: Class names in logit order.
        text_features: (C, d) class text features from the backbone's text tower.
        logit_scale: Multiplier of the cosine similarities.
        backbone: Where the frozen image tower comes from, e.g. ``{"kind": "foundation",
            "version": ..., "sha256": ...}`` or ``{"spec": "local-dir:/path"}``.
        metadata: Manifest extras (metrics, communication, training config).
    """
    if text_features.shape[0] != len(class_names):
        raise ValueError(f"{len(class_names)} class names but {text_features.shape[0]} features")
    bad = [c for c in client_states if not c or CLIENT_SEP in c]
    if bad:
        raise ValueError(f"client ids must be non-empty and contain no {CLIENT_SEP!r}: {bad}")
    tensors: dict[str, dict[str, torch.Tensor]] = {
        "global": dict(global_state),
        "class_text": {"text_features": F.normalize(text_features.float(), dim=-1)},
    }
    if client_states:
        tensors["clients"] = {
            f"{cid}{CLIENT_SEP}{k}": v for cid, sd in client_states.items() for k, v in sd.items()
        }
    config = {
        "adapter": dict(adapter_config),
        "logit_scale": float(logit_scale),
        "backbone": dict(backbone),
        "clients": sorted(client_states),
    }
    return write_artifact(
        store,
        KIND,
        tensors=tensors,
        json_files={"classes": list(class_names)},
        config=config,
        metadata=metadata,
    )


def load_fedclip_adapter(
    store: str | os.PathLike[str], client_id: str | None = None, version: str = "latest"
) -> tuple[AttentionAdapter, torch.Tensor, list[str], dict[str, Any]]:
    """Load one adapter (a client's personalised one, or the global one) ready for inference.

    Returns:
        ``(adapter in eval mode, text_features (C, d), class_names, config)``.

    Raises:
        KeyError: ``client_id`` is not a client of this federation.
    """
    art = open_artifact(store, KIND, version)
    config = art.config
    adapter = build_adapter(config["adapter"])
    if client_id is None:
        state = art.tensors("global")
    else:
        if client_id not in config.get("clients", []):
            raise KeyError(f"no adapter for client {client_id!r} in {KIND}/{art.version}")
        prefix = f"{client_id}{CLIENT_SEP}"
        state = {
            k[len(prefix) :]: v for k, v in art.tensors("clients").items() if k.startswith(prefix)
        }
    adapter.load_state_dict(state, strict=True)
    return adapter.eval(), art.tensors("class_text")["text_features"], art.json("classes"), config


class FedClipClassifier:
    """What serving needs for a client ID: frozen backbone -> adapter -> cosine with classes.

    Attributes:
        backbone: :class:`model_store.clip.ClipBackbone` the adapters were trained on.
        adapter: The client's personalised adapter (or the global one).
        text_features: (C, d) normalised class text features.
        class_names: Class names in logit order.
        scale: Logit scale.
    """

    def __init__(self, backbone: Any, adapter: AttentionAdapter, text_features: torch.Tensor,
                 class_names: list[str], scale: float):
        self.backbone, self.class_names, self.scale = backbone, class_names, float(scale)
        self.adapter = adapter.to(backbone.device).eval()
        self.text_features = text_features.to(backbone.device)

    @torch.no_grad()
    def logits(self, images: Any) -> torch.Tensor:
        """(n, C) logits for uint8 NHWC images (any size; resized like in training)."""
        feats = torch.from_numpy(self.backbone.encode_images(images)).to(self.backbone.device)
        return adapter_logits(self.adapter, feats, self.text_features, self.scale)


def load_fedclip(store: str | os.PathLike[str], client_id: str | None = None,
                 version: str = "latest", device: Any = None) -> FedClipClassifier:
    """Load a client's (or the global) FedCLIP classifier with the backbone it was trained on.

    The backbone is the ``foundation`` artifact version named in the adapter's config (or an
    open_clip ``spec``); its weight fingerprint must equal the recorded one, so an adapter is
    never served on top of features it was not trained for.

    Raises:
        KeyError: Unknown client.
        ValueError: The backbone's fingerprint differs from the one the adapters were trained on.
    """
    from model_store.clip import build_default_clip, load_clip

    adapter, text, names, config = load_fedclip_adapter(store, client_id, version)
    src = config["backbone"]
    if src.get("kind") == FOUNDATION:
        art = open_artifact(store, FOUNDATION, src["version"])
        backbone = load_clip(f"local-dir:{art.path}", device=device)
    elif src.get("spec") == "default":
        backbone = build_default_clip(device=device)
    else:
        backbone = load_clip(src["spec"], device=device)
    if src.get("sha256") and backbone.fingerprint != src["sha256"]:
        raise ValueError("backbone weights differ from those the adapters were trained on")
    return FedClipClassifier(backbone, adapter, text, names, config["logit_scale"])
