"""The trained part of a foundation CLIP as one small file, so a GPU run's result travels back.

A foundation artifact holds the whole CLIP, and 86 % of it is the MiniLM text tower, which
``tailor train foundation`` never changes (``foundation.py``). A GPU machine reached through a
64 MiB file channel cannot return 100 MB artifacts, but it can return what training changed: the
image tower, the text projection and the temperature (~11 MB for the ViT). Loading that file into
a fresh default CLIP of the same architecture here rebuilds the trained foundation exactly, up to
MiniLM's own weights, which both machines read from the bundled package.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, safe_open, save_file

FROZEN_PREFIX = "text.transformer."


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every tensor of ``model`` except the frozen text transformer's, on the CPU."""
    return {k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()
            if not k.startswith(FROZEN_PREFIX)}


def _shape_of(backbone: Any) -> dict[str, str]:
    """What a file must match besides tensor shapes: the image tower's config (a CNN's weights
    fit any input size) and the preprocessing, as safetensors metadata strings."""
    return {"vision_cfg": json.dumps(backbone.model_cfg["vision_cfg"], sort_keys=True),
            "embed_dim": str(backbone.model_cfg.get("embed_dim")),
            "preprocess": json.dumps({"size": backbone.image_size, "mean": list(backbone.mean),
                                      "std": list(backbone.std)})}


def export_trained(backbone: Any, path: str | Path) -> dict[str, str | int]:
    """Write :func:`trained_state` of a ``ClipBackbone`` as safetensors (with its tower config
    and preprocessing as metadata); return the file, its size and sha256."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(trained_state(backbone.model), str(path), metadata=_shape_of(backbone))
    data = path.read_bytes()
    return {"file": str(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _read(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and metadata of a safetensors file; ``ValueError`` when it is not one."""
    if not path.is_file():
        raise ValueError(f"no trained-towers file at {path}")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        return load_file(str(path)), meta
    except (SafetensorError, OSError) as exc:
        raise ValueError(f"{path} is not a readable safetensors file ({exc})") from exc


def load_trained(backbone: Any, path: str | Path) -> str:
    """Load a :func:`export_trained` file into ``backbone`` (a default CLIP of the same
    architecture and preprocessing); return the file's sha256.

    Raises:
        ValueError: unreadable; the file lacks a trained tensor of the model, holds one it does
            not have, or a shape differs; or its tower config or preprocessing differ (another
            ``--arch``/``--embed-dim``/``--image-size``).
    """
    path = Path(path)
    state, meta = _read(path)
    own = trained_state(backbone.model)
    missing, extra = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    shapes = [k for k in set(own) & set(state) if own[k].shape != state[k].shape]
    differ = [k for k, v in _shape_of(backbone).items() if k in meta and meta[k] != v]
    if missing or extra or shapes or differ:
        raise ValueError(f"{path} does not fit this architecture: missing {missing[:3]}, "
                         f"unexpected {extra[:3]}, other shapes {sorted(shapes)[:3]}, "
                         f"other {differ}")
    backbone.model.load_state_dict(state, strict=False)
    backbone.weights_changed()
    return hashlib.sha256(path.read_bytes()).hexdigest()
