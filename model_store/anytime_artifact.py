"""The ``anytime`` artifact: a federation's anytime model per client, over a ViT foundation.

Written by ``tailor train anytime --save …`` and read by whatever serves client IDs; the layout
(global + per-client tensors, classes, the foundation's version and fingerprint) is
:mod:`model_store.client_models`'. ``config.json`` names the method, adapter rank, depth, each
client's depth budget, FLOPs per exit and, per client and for ``global``, the validation
accuracy per exit (null past a client's budget).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from model_store.anytime import AnytimeViT
from model_store.artifacts import ArtifactRef
from model_store.client_models import ClientModels, open_client_models, save_client_models
from model_store.kinds import ANYTIME


def save_anytime(store: str | os.PathLike[str], *, model_cfg: dict[str, Any],
                 class_names: list[str], foundation: dict[str, Any],
                 global_state: dict[str, torch.Tensor],
                 client_states: dict[str, dict[str, torch.Tensor]], tiers: dict[str, int],
                 exit_val_acc: dict[str, list[float | None]], flops: list[int],
                 metadata: dict[str, Any] | None = None) -> ArtifactRef:
    """Write a federation's anytime models (see the module docstring).

    Args:
        model_cfg: ``{"method", "adapter_rank", "depth"}`` of :class:`AnytimeViT`.
        foundation: ``{"version", "sha256"}`` of the ``foundation`` artifact it ran on.
    """
    config = {**model_cfg, "tiers": {c: int(t) for c, t in tiers.items()},
              "flops_per_exit": list(flops), "exit_val_acc": exit_val_acc}
    return save_client_models(store, ANYTIME, config=config, class_names=class_names,
                              foundation=foundation, global_state=global_state,
                              client_states=client_states, metadata=metadata)


@dataclass
class AnytimeClassifier:
    """One client's (or the global) anytime model, ready for inference on uint8 images."""

    backbone: Any  # model_store.clip.ClipBackbone (its preprocessing)
    model: AnytimeViT
    class_names: list[str]
    client_id: str | None
    config: dict[str, Any]

    @torch.no_grad()
    def logits(self, images: np.ndarray, exit_: int | None = None) -> torch.Tensor:
        """(n, C) logits at ``exit_`` (1..depth; default: the last), blocks 1..exit_ only."""
        return self.model(self.backbone.preprocess(images), exit_)


class AnytimeFederation(ClientModels):
    """An opened ``anytime`` artifact and its foundation, loaded once."""

    def classifier(self, client_id: str | None = None) -> AnytimeClassifier:
        """A client's personalised model (``client_id``) or the global one (None).

        Each gets its own copy of the frozen tower: parallel adapters live inside its blocks.

        Raises:
            KeyError: ``client_id`` is not a client of this federation.
            ValueError: The stored tensors do not match the config's model.
        """
        self.check_client(client_id)
        cfg = self.config
        with torch.random.fork_rng(devices=[]):  # every trainable tensor is overwritten below
            model = AnytimeViT(copy.deepcopy(self.backbone.model.visual), cfg["num_classes"],
                               cfg["method"], int(cfg.get("adapter_rank", 0)))
        names = set(model.trainable_names())
        parts = [(self.artifact.tensors("global"), names)]
        if client_id is not None:  # the personalised tensors replace the global ones
            parts.append((self.client_state(client_id), names))
        return AnytimeClassifier(self.backbone, self.assemble(model, parts), self.class_names,
                                 client_id, cfg)  # fmt: skip


def open_anytime(store: str | os.PathLike[str], version: str = "latest",
                 device: Any = None) -> AnytimeFederation:
    """Open an ``anytime`` artifact and load the foundation it was trained on (ValueError when
    the foundation's weights differ from those it was trained on)."""
    return AnytimeFederation(*open_client_models(store, ANYTIME, version, device))


def load_anytime(store: str | os.PathLike[str], client_id: str | None = None,
                 version: str = "latest", device: Any = None) -> AnytimeClassifier:
    """A client's personalised anytime model (``client_id``) or the global one (None); see
    :meth:`AnytimeFederation.classifier` for what it raises."""
    return open_anytime(store, version, device).classifier(client_id)
