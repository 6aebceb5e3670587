"""What a downloaded anytime model is: its ``config.json``, its weights, and how to rebuild it.

The download is self-contained: the whole :class:`~model_store.anytime.AnytimeViT` state, the
frozen foundation tower included (a few MB at Tailor's ViT size), so an app runs it with no
Tailor store and no second file. ``config.json`` follows the timm / Hugging Face convention
where it applies (``architecture``, ``num_classes``, ``label_names``, ``pretrained_cfg``) and
names the exits: for each, the FLOPs of one image's forward to it and the validation accuracy
training measured there. :func:`anytime_from_download` is the rebuild, and the test that the
served predictions equal the download's.
"""

from __future__ import annotations

from typing import Any

import torch

from model_store.anytime import AnytimeViT
from model_store.kinds import ANYTIME
from model_store.model_card import foundation_pretrained_cfg, vision_tower

ARCHITECTURE = "tailor-anytime-vit"
FORMAT = "tailor-anytime-vit/1"
GLOBAL = "global"  # the key of the global model's accuracies in the artifact's exit_val_acc
REBUILD = "model_store.anytime_card.anytime_from_download(safetensors.torch.load_file(w), cfg)"


def default_exit(config: dict[str, Any], client_id: str | None) -> int:
    """The exit a prediction uses when none is asked for: the client's own depth budget (the
    deepest exit it trained and can afford), the last block for the global model."""
    depth = int(config["depth"])
    return int(config.get("tiers", {}).get(client_id, depth)) if client_id else depth


def exits(config: dict[str, Any], client_id: str | None) -> list[dict[str, Any]]:
    """``[{"exit", "flops", "val_accuracy"}]`` for exits 1..depth (accuracy None where
    training did not measure it: past the client's budget, or an artifact that lacks it)."""
    accs = config.get("exit_val_acc", {}).get(client_id or GLOBAL) or []
    flops = config.get("flops_per_exit") or []
    return [{"exit": e,
             "flops": int(flops[e - 1]) if e <= len(flops) else None,
             "val_accuracy": round(float(accs[e - 1]), 6)
             if e <= len(accs) and accs[e - 1] is not None else None}
            for e in range(1, int(config["depth"]) + 1)]  # fmt: skip


def anytime_config(federation: Any, client_id: str | None) -> dict[str, Any]:
    """``config.json`` of one client's (``client_id``) or the global (None) anytime model.

    Args:
        federation: a :class:`model_store.anytime_artifact.AnytimeFederation`.
    """
    cfg, bb = federation.config, federation.backbone
    return {
        "architecture": ARCHITECTURE,
        "num_classes": len(federation.class_names),
        "label_names": federation.class_names,
        "pretrained_cfg": foundation_pretrained_cfg(bb),
        "tailor": {
            "kind": ANYTIME, "format": FORMAT, "artifact_version": federation.version,
            "client_id": client_id or GLOBAL, "method": cfg["method"],
            "adapter_rank": int(cfg.get("adapter_rank", 0)), "depth": int(cfg["depth"]),
            "default_exit": default_exit(cfg, client_id), "exits": exits(cfg, client_id),
            "vision_cfg": dict(bb.model_cfg["vision_cfg"]),
            "embed_dim": int(bb.model_cfg["embed_dim"]),
            "foundation": dict(cfg["backbone"]), "rebuild": REBUILD,
        },
    }  # fmt: skip


def anytime_from_download(tensors: dict[str, torch.Tensor], config: dict[str, Any]) -> AnytimeViT:
    """Rebuild a downloaded model: open_clip's ViT from ``vision_cfg``, wrapped as trained,
    every tensor loaded strictly (a missing or extra name raises)."""
    t = config["tailor"]
    if t.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} config: format={t.get('format')!r}")
    with torch.random.fork_rng(devices=[]):  # every tensor is overwritten by the download
        model = AnytimeViT(vision_tower(t), int(config["num_classes"]), t["method"],
                           int(t["adapter_rank"]))
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    return model.eval()
