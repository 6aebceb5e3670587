"""What a downloaded model needs to describe itself: its ``config.json`` and safetensors metadata.

A downloaded ``.safetensors`` used to carry no class names, image size or normalisation; the
class order existed only in a JSON response the app may have lost. One description, two forms:

- :func:`resnet_config` is a ``config.json`` in timm's Hugging Face convention (``save_for_hf``:
  ``architecture``, ``num_classes``, ``num_features``, ``global_pool``, ``label_names`` in output
  order, ``pretrained_cfg`` with ``input_size``, ``interpolation``, ``mean``, ``std``,
  ``crop_pct``, ``crop_mode``, ``first_conv``, ``classifier``), plus a ``tailor`` block;
- :func:`safetensors_metadata` flattens it to the ``__metadata__`` string map of the weights file.

Both describe the *recipe* (classes, method, artifact), never the owner: identical requests of two
tenants share the same bytes (and ETag, and cache entry), so an owner-specific id or description
cannot be inside them; ``config.json`` (per model) carries the model id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from model_store.images import IMAGE_SIZE, MEAN, STD

ARCHITECTURE = "resnet18"  # timm's and torchvision's name for the same network
CONSTRUCTOR = "torchvision.models.resnet18"


def pretrained_cfg(image_size: int = IMAGE_SIZE) -> dict[str, Any]:
    """timm's ``pretrained_cfg`` for the served preprocessing (``model_store.images``): the
    shorter side resized to ``image_size`` bilinearly, the centre ``image_size``² crop, scaled to
    [0, 1], normalised by ``mean``/``std`` (torchvision: ``Resize(S)``, ``CenterCrop(S)``)."""
    return {
        "input_size": [3, image_size, image_size],
        "interpolation": "bilinear",
        "mean": list(MEAN),
        "std": list(STD),
        "crop_pct": 1.0,
        "crop_mode": "center",
        "first_conv": "conv1",
        "classifier": "fc",
    }


def resnet_config(
    classes: Sequence[str],
    *,
    method: str,
    artifact_version: str,
    kind: str,
    extra: Mapping[str, Any] | None = None,
    image_size: int = IMAGE_SIZE,
) -> dict[str, Any]:
    """``config.json`` of a personalized ResNet-18 (loads as ``resnet18(num_classes=k)``)."""
    return {
        "architecture": ARCHITECTURE,
        "num_classes": len(classes),
        "num_features": 512,
        "global_pool": "avg",
        "label_names": list(classes),
        "pretrained_cfg": pretrained_cfg(image_size),
        "tailor": {
            "constructor": CONSTRUCTOR,
            "kind": kind,
            "method": method,
            "artifact_version": artifact_version,
            **dict(extra or {}),
        },
    }


def safetensors_metadata(config: Mapping[str, Any]) -> dict[str, str]:
    """The ``__metadata__`` map (strings only) of the weights file described by ``config``.

    Flat keys an app can read with ``safe_open(path, "pt").metadata()``; list values are JSON.
    """
    pre = config["pretrained_cfg"]
    tailor = config["tailor"]
    size = pre["input_size"][-1]
    meta = {
        "format": "pt",
        "architecture": tailor["constructor"],
        "num_classes": config["num_classes"],
        "label_names": config["label_names"],
        "image_size": size,
        "mean": pre["mean"],
        "std": pre["std"],
        "interpolation": pre["interpolation"],
        "crop": f"resize the shorter side to {size}, then the centre {size}x{size} crop "
                f"({pre['crop_mode']})",
        "method": tailor["method"],
        "artifact_version": tailor["artifact_version"],
        "kind": tailor["kind"],
    }
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()}


def foundation_pretrained_cfg(backbone: Any) -> dict[str, Any]:
    """timm's ``pretrained_cfg`` of a model fed as the service feeds its foundation: the
    shared square fit (``model_store.images.fit_square``: shorter side, centre crop), scaled
    to [0, 1], normalised with the foundation's own mean/std."""
    size = int(backbone.image_size)
    return {"input_size": [3, size, size], "interpolation": "bilinear",
            "mean": list(backbone.mean), "std": list(backbone.std), "crop_pct": 1.0,
            "crop_mode": "center"}


def vision_tower(tailor: Mapping[str, Any]) -> Any:
    """An open_clip image tower built from a download's ``vision_cfg`` and ``embed_dim``
    (random weights: the caller loads the downloaded ones)."""
    import torch
    from open_clip.model import _build_vision_tower  # open_clip's own tower factory

    with torch.random.fork_rng(devices=[]):
        return _build_vision_tower(int(tailor["embed_dim"]), dict(tailor["vision_cfg"]))
