"""The ``perfix`` artifact: each client's personalised ViT from one prefix-personalization
federation (FedPerfix or a baseline of ``model_store.perfix``), over a ViT foundation.

Written by ``tailor train perfix --save …``; the layout is :mod:`model_store.client_models`':
``global`` holds what the server averaged (for FedPerfix the whole trained ViT), each client
its local part (prefixes and head). ``config.json`` names the method, the prefix settings and
each client's validation and test accuracy. A client's model is global + its own part, so a
method that keeps anything local (FedPerfix keeps the head) has no model for non-participants.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from model_store.artifacts import ArtifactRef
from model_store.client_models import ClientModels, open_client_models, save_client_models
from model_store.kinds import PERFIX
from model_store.perfix import PerfixViT


def save_perfix(store: str | os.PathLike[str], *, model_cfg: dict[str, Any],
                class_names: list[str], foundation: dict[str, Any],
                global_state: dict[str, torch.Tensor],
                client_states: dict[str, dict[str, torch.Tensor]],
                client_acc: dict[str, dict[str, float]],
                metadata: dict[str, Any] | None = None) -> ArtifactRef:
    """Write a federation's personalised ViTs.

    Args:
        model_cfg: ``{"method", "rank", "scale", "num_tokens"}`` of :class:`PerfixViT`.
        client_acc: ``{client: {"val": …, "test": …}}`` measured after the last round.
    """
    return save_client_models(store, PERFIX, config={**model_cfg, "client_acc": client_acc},
                              class_names=class_names, foundation=foundation,
                              global_state=global_state, client_states=client_states,
                              metadata=metadata)  # fmt: skip


def build_perfix(visual: torch.nn.Module, config: dict[str, Any]) -> PerfixViT:
    """The config's model around ``visual`` (a copy is the caller's business)."""
    with torch.random.fork_rng(devices=[]):  # every tensor is overwritten by a load
        return PerfixViT(visual, int(config["num_classes"]), config["method"],
                         rank=int(config.get("rank", 64)), scale=float(config.get("scale", 0.8)),
                         num_tokens=int(config.get("num_tokens", 8)))


@dataclass
class PerfixClassifier:
    """One client's personalised ViT, ready for inference on uint8 images."""

    backbone: Any  # model_store.clip.ClipBackbone (its preprocessing)
    model: PerfixViT
    class_names: list[str]
    client_id: str
    config: dict[str, Any]

    @torch.no_grad()
    def logits(self, images: np.ndarray) -> torch.Tensor:
        return self.model(self.backbone.preprocess(images))


class PerfixFederation(ClientModels):
    """An opened ``perfix`` artifact and its foundation, loaded once."""

    def classifier(self, client_id: str) -> PerfixClassifier:
        """Client ``client_id``'s model: the averaged tensors plus its own local part.

        Raises:
            KeyError: ``client_id`` is not a client of this federation.
            ValueError: The stored tensors do not match the config's model.
        """
        self.check_client(client_id)
        model = build_perfix(copy.deepcopy(self.backbone.model.visual), self.config)
        parts = [(self.artifact.tensors("global"), set(model.global_names())),
                 (self.client_state(client_id), set(model.local_names()))]
        return PerfixClassifier(self.backbone, self.assemble(model, parts), self.class_names,
                                client_id, self.config)  # fmt: skip


def open_perfix(store: str | os.PathLike[str], version: str = "latest",
                device: Any = None) -> PerfixFederation:
    """Open a ``perfix`` artifact and load the foundation it was trained on."""
    return PerfixFederation(*open_client_models(store, PERFIX, version, device))
