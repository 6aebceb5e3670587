"""The ``foundation`` artifact: an aligned open_clip model stored as a ``local-dir:`` bundle.

The trainer writes it (``tailor train foundation``); FedCLIP adapters name it as their frozen
backbone and ``model_store.adapters`` loads it back. The writer lives here, next to the loaders,
so the artifact's layout is defined by the shared kernel alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_store.artifacts import ArtifactRef, write_artifact
from model_store.clip import ClipBackbone, bundle_files
from model_store.kinds import FOUNDATION

KIND = FOUNDATION


def save_foundation(
    store: str | Path, backbone: ClipBackbone, *, image_tower: str, class_names: list[str],
    prompts: list[list[str]], metadata: dict[str, Any],
) -> ArtifactRef:  # fmt: skip
    """Write the aligned model as a ``foundation`` artifact that is an open_clip local-dir.

    ``prompts``: the class prompts the alignment used (one list per class), recorded so a reader
    can rebuild the same zero-shot text features.
    """
    tensors, json_files = bundle_files(backbone)
    json_files["classes"] = list(class_names)
    config = {"image_tower": image_tower, "embed_dim": backbone.model_cfg["embed_dim"],
              "image_size": backbone.image_size, "text_tower": "all-MiniLM-L6-v2",
              "prompts": prompts, "backbone_sha256": backbone.fingerprint}  # fmt: skip
    return write_artifact(store, KIND, tensors=tensors, json_files=json_files, config=config,
                          metadata=metadata)  # fmt: skip
