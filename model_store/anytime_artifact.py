"""The ``anytime`` artifact: a federation's anytime model per client, over a ViT foundation.

Written by ``tailor train anytime --save …`` and read by whatever serves client IDs. It holds
only what federated training produced — the global trainable tensors and each client's
personalised ones — plus the ``foundation`` artifact (version and weight fingerprint) they run
on, so a model is never assembled over a backbone it was not trained with.

Files: ``global.safetensors`` (exchanged tensors), ``clients.safetensors`` (``<client>/<name>``),
``classes.json``; ``config.json`` names the method, adapter rank, depth, each client's depth
budget, FLOPs per exit and each client's validation accuracy per exit (null past its budget).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from model_store.anytime import AnytimeViT
from model_store.artifacts import ArtifactRef, open_artifact, write_artifact
from model_store.kinds import ANYTIME, FOUNDATION

CLIENT_SEP = "/"


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
    bad = [c for c in client_states if not c or CLIENT_SEP in c]
    if bad:
        raise ValueError(f"client ids must be non-empty and contain no {CLIENT_SEP!r}: {bad}")
    tensors = {"global": dict(global_state),
               "clients": {f"{c}{CLIENT_SEP}{k}": v for c, sd in client_states.items()
                           for k, v in sd.items()}}
    config = {**model_cfg, "num_classes": len(class_names), "clients": sorted(client_states),
              "tiers": {c: int(t) for c, t in tiers.items()}, "flops_per_exit": list(flops),
              "exit_val_acc": exit_val_acc,
              "backbone": {"kind": FOUNDATION, **foundation}}
    return write_artifact(store, ANYTIME, tensors=tensors, json_files={"classes": class_names},
                          config=config, metadata=metadata or {})


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


@dataclass
class AnytimeFederation:
    """An opened ``anytime`` artifact and the foundation it runs on, loaded once: what a
    server needs to build any of its clients' models without re-reading the backbone."""

    artifact: Any  # model_store.artifacts.Artifact
    backbone: Any  # model_store.clip.ClipBackbone

    @property
    def version(self) -> str:
        return self.artifact.version

    @property
    def config(self) -> dict[str, Any]:
        return self.artifact.config

    @property
    def class_names(self) -> list[str]:
        return list(self.artifact.json("classes"))

    def classifier(self, client_id: str | None = None) -> AnytimeClassifier:
        """A client's personalised model (``client_id``) or the global one (None).

        Each gets its own copy of the frozen tower: parallel adapters live inside its blocks.

        Raises:
            KeyError: ``client_id`` is not a client of this federation.
            ValueError: The stored tensors do not match the config's model.
        """
        cfg = self.config
        if client_id is not None and client_id not in cfg["clients"]:
            raise KeyError(f"no anytime model for client {client_id!r} in "
                           f"{ANYTIME}/{self.version}")  # fmt: skip
        with torch.random.fork_rng(devices=[]):  # every trainable tensor is overwritten below
            model = AnytimeViT(copy.deepcopy(self.backbone.model.visual), cfg["num_classes"],
                               cfg["method"], int(cfg.get("adapter_rank", 0)))
        expected = set(model.trainable_names())
        for state in self._states(client_id):  # strict on what training produced
            if set(state) != expected:
                raise ValueError(f"{ANYTIME}/{self.version} does not match its config: "
                                 f"{sorted(set(state) ^ expected)[:5]}")
            model.load_state_dict(state, strict=False)
        return AnytimeClassifier(self.backbone, model.to(self.backbone.device).eval(),
                                 self.class_names, client_id, cfg)  # fmt: skip

    def _states(self, client_id: str | None) -> list[dict[str, torch.Tensor]]:
        """The global tensors, then the client's personalised ones (which replace them)."""
        states = [self.artifact.tensors("global")]
        if client_id is not None:
            prefix = f"{client_id}{CLIENT_SEP}"
            states.append({k[len(prefix):]: v for k, v in self.artifact.tensors("clients").items()
                           if k.startswith(prefix)})
        return states


def open_anytime(store: str | os.PathLike[str], version: str = "latest",
                 device: Any = None) -> AnytimeFederation:
    """Open an ``anytime`` artifact and load the foundation it was trained on.

    Raises:
        ValueError: The foundation's weights differ from those it was trained on.
    """
    from model_store.clip import load_clip

    art = open_artifact(store, ANYTIME, version)
    src = art.config["backbone"]
    base = open_artifact(store, FOUNDATION, src["version"])
    backbone = load_clip(f"local-dir:{base.path}", device=device)
    if backbone.fingerprint != src["sha256"]:
        raise ValueError("foundation weights differ from those the anytime model was trained on")
    return AnytimeFederation(art, backbone)


def load_anytime(store: str | os.PathLike[str], client_id: str | None = None,
                 version: str = "latest", device: Any = None) -> AnytimeClassifier:
    """A client's personalised anytime model (``client_id``) or the global one (None); see
    :meth:`AnytimeFederation.classifier` for what it raises."""
    return open_anytime(store, version, device).classifier(client_id)
