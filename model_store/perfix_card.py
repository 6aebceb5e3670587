"""What a downloaded prefix-personalised ViT is: its ``config.json`` and how to rebuild it.

The download is the client's whole :class:`~model_store.perfix.PerfixViT` (the averaged ViT,
its prefixes and its head) in one safetensors; ``config.json`` follows the timm / Hugging Face
convention where it applies and names the method, the prefix settings and the accuracy
training measured for this client. :func:`perfix_from_download` is the rebuild.
"""

from __future__ import annotations

from typing import Any

import torch

from model_store.kinds import PERFIX
from model_store.model_card import foundation_pretrained_cfg, vision_tower
from model_store.perfix import PerfixViT
from model_store.perfix_artifact import build_perfix

ARCHITECTURE = "tailor-perfix-vit"
FORMAT = "tailor-perfix-vit/1"
REBUILD = "model_store.perfix_card.perfix_from_download(safetensors.torch.load_file(w), cfg)"


def perfix_config(federation: Any, client_id: str | None) -> dict[str, Any]:
    """``config.json`` of client ``client_id``'s model.

    Args:
        federation: a :class:`model_store.perfix_artifact.PerfixFederation`.
    """
    cfg, bb = federation.config, federation.backbone
    acc = cfg.get("client_acc", {}).get(client_id, {})
    return {
        "architecture": ARCHITECTURE,
        "num_classes": len(federation.class_names),
        "label_names": federation.class_names,
        "pretrained_cfg": foundation_pretrained_cfg(bb),
        "tailor": {
            "kind": PERFIX, "format": FORMAT, "artifact_version": federation.version,
            "client_id": client_id, "method": cfg["method"], "rank": int(cfg.get("rank", 64)),
            "scale": float(cfg.get("scale", 0.8)), "num_tokens": int(cfg.get("num_tokens", 8)),
            "val_accuracy": acc.get("val"), "test_accuracy": acc.get("test"),
            "vision_cfg": dict(bb.model_cfg["vision_cfg"]),
            "embed_dim": int(bb.model_cfg["embed_dim"]),
            "foundation": dict(cfg["backbone"]), "rebuild": REBUILD,
        },
    }  # fmt: skip


def perfix_from_download(tensors: dict[str, torch.Tensor], config: dict[str, Any]) -> PerfixViT:
    """Rebuild a downloaded model, every tensor loaded strictly."""
    t = config["tailor"]
    if t.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} config: format={t.get('format')!r}")
    model = build_perfix(vision_tower(t), {**t, "num_classes": config["num_classes"]})
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    return model.eval()
