"""Artifacts of one federation's per-client models over a foundation (anytime, FedPerfix).

Both hold only what federated training produced — the tensors the server averaged
(``global.safetensors``) and each client's own (``clients.safetensors``, ``<client>/<name>``) —
plus ``classes.json`` and the ``foundation`` artifact they ran on (version and weight
fingerprint), so a model is never assembled over a backbone it was not trained with.
:class:`ClientModels` is the opened artifact with that backbone loaded once: a server builds any
client's model from it without re-reading the foundation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from model_store.artifacts import ArtifactRef, open_artifact, write_artifact
from model_store.kinds import FOUNDATION

CLIENT_SEP = "/"


def save_client_models(store: str | os.PathLike[str], kind: str, *, config: dict[str, Any],
                       class_names: list[str], foundation: dict[str, Any],
                       global_state: dict[str, torch.Tensor],
                       client_states: dict[str, dict[str, torch.Tensor]],
                       metadata: dict[str, Any] | None = None) -> ArtifactRef:
    """Write one federation's models as artifact ``kind``.

    Args:
        config: the kind's model description (method, sizes, per-client facts).
        foundation: ``{"version", "sha256"}`` of the ``foundation`` artifact it ran on.
    """
    bad = [c for c in client_states if not c or CLIENT_SEP in c]
    if bad:
        raise ValueError(f"client ids must be non-empty and contain no {CLIENT_SEP!r}: {bad}")
    tensors = {"global": dict(global_state),
               "clients": {f"{c}{CLIENT_SEP}{k}": v for c, sd in client_states.items()
                           for k, v in sd.items()}}
    config = {**config, "num_classes": len(class_names), "clients": sorted(client_states),
              "backbone": {"kind": FOUNDATION, **foundation}}
    return write_artifact(store, kind, tensors=tensors, json_files={"classes": class_names},
                          config=config, metadata=metadata or {})


@dataclass
class ClientModels:
    """An opened per-client-models artifact and the foundation it runs on."""

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

    def check_client(self, client_id: str | None) -> None:
        """Raise ``KeyError`` when ``client_id`` (None: the global model) is not served."""
        if client_id is not None and client_id not in self.config["clients"]:
            raise KeyError(f"no model for client {client_id!r} in "
                           f"{self.artifact.kind}/{self.version}")  # fmt: skip

    def client_state(self, client_id: str) -> dict[str, torch.Tensor]:
        """The tensors stored for one client."""
        prefix = f"{client_id}{CLIENT_SEP}"
        return {k[len(prefix):]: v for k, v in self.artifact.tensors("clients").items()
                if k.startswith(prefix)}

    def assemble(self, model: nn.Module, parts: list[tuple[dict[str, torch.Tensor], set[str]]]
                 ) -> nn.Module:
        """Load each ``(state, expected names)`` in order into ``model``, refusing a state
        whose names differ from what the config's model has (a corrupt or mismatched store)."""
        for state, expected in parts:
            if set(state) != expected:
                raise ValueError(f"{self.artifact.kind}/{self.version} does not match its "
                                 f"config: {sorted(set(state) ^ expected)[:5]}")
            model.load_state_dict(state, strict=False)
        return model.to(self.backbone.device).eval()


def open_client_models(store: str | os.PathLike[str], kind: str, version: str = "latest",
                       device: Any = None) -> tuple[Any, Any]:
    """``(artifact, backbone)``: the artifact and the foundation it was trained on.

    Raises:
        ValueError: The foundation's weights differ from those it was trained on.
    """
    from model_store.clip import load_clip

    art = open_artifact(store, kind, version)
    src = art.config["backbone"]
    base = open_artifact(store, FOUNDATION, src["version"])
    backbone = load_clip(f"local-dir:{base.path}", device=device)
    if backbone.fingerprint != src["sha256"]:
        raise ValueError(f"foundation weights differ from those the {kind} models were "
                         "trained on")
    return art, backbone
