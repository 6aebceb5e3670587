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
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

FROZEN_PREFIX = "text.transformer."


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every tensor of ``model`` except the frozen text transformer's, on the CPU."""
    return {k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()
            if not k.startswith(FROZEN_PREFIX)}


def export_trained(model: torch.nn.Module, path: str | Path) -> dict[str, str | int]:
    """Write :func:`trained_state` as safetensors; return the file, its size and sha256."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(trained_state(model), str(path))
    data = path.read_bytes()
    return {"file": str(path), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def load_trained(model: torch.nn.Module, path: str | Path) -> str:
    """Load a :func:`export_trained` file into ``model`` (a default CLIP of the same
    architecture); return the file's sha256.

    Raises:
        ValueError: the file lacks a trained tensor of ``model``, holds one ``model`` does not
            have, or a shape differs (another ``--arch``/``--embed-dim``/``--image-size``).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no trained-towers file at {path}")
    state = load_file(str(path))
    own = trained_state(model)
    missing, extra = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    shapes = [k for k in set(own) & set(state) if own[k].shape != state[k].shape]
    if missing or extra or shapes:
        raise ValueError(f"{path} does not fit this architecture: missing {missing[:3]}, "
                         f"unexpected {extra[:3]}, other shapes {sorted(shapes)[:3]}")
    model.load_state_dict(state, strict=False)
    return hashlib.sha256(path.read_bytes()).hexdigest()
