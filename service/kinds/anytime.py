"""Client-ID anytime models: the deployed ``anytime`` artifact, served with a depth budget.

An anytime federation (``tailor train anytime --save``) holds a global early-exit model and
each client's personalised one over a frozen ViT foundation (the Accumulator, issue 15). A
request ``{"client_id": …, "kind": "anytime"}`` (``kind`` may be left out when only this
federation has the client) returns that client's model with its exits: FLOPs and validation
accuracy at each. ``/predict`` takes ``exit`` (1…L: exactly that exit) or ``max_layers`` (a
compute budget: the deepest exit it affords) and answers with the exit it used; without
either, the client's own depth budget (its tier), the last block for ``global``.

Access is FedCLIP's (``service.kinds.clients``): a client key reaches only its own model.
Downloads are the whole model, frozen tower included, with a ``config.json`` naming the
architecture, exits and preprocessing (``model_store.anytime_card``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import numpy as np
import torch
from safetensors.torch import save as st_save
from sqlalchemy.orm import Session, sessionmaker

from model_store.anytime_card import anytime_config, default_exit, download_tensors, exits
from model_store.kinds import ANYTIME
from service.core import crud, imaging
from service.core.auth import Principal
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.settings import Settings
from service.kinds.base import Draft, ModelKind
from service.kinds.clients import GLOBAL, resolve_client

log = logging.getLogger(__name__)

KIND = ANYTIME
METHODS = {True: "anytime-global", False: "anytime-personalized"}


class AnytimeDeployment:
    """One loaded ``anytime`` artifact (``model_store.anytime_artifact.AnytimeFederation``)
    and the client ids it serves (``global`` and ``@…`` are reserved, SQL ids are ≤ 64)."""

    def __init__(self, federation: Any) -> None:
        self.federation, self.version = federation, federation.version
        self.config: dict[str, Any] = federation.config
        named = list(self.config.get("clients", []))
        self.clients = [c for c in named if c != GLOBAL and len(c) <= 64 and c[:1] != "@"]
        for bad in sorted(set(named) - set(self.clients)):
            log.warning("anytime/%s: client id %r is not served", self.version, bad)
        canonical = json.dumps(federation.artifact.manifest, sort_keys=True, default=str)
        self.manifest_sha256 = hashlib.sha256(canonical.encode()).hexdigest()

    @classmethod
    def load(cls, settings: Settings, device: torch.device) -> AnytimeDeployment | None:
        """Load ``settings.anytime_version``; None when ``latest`` and the store has none.

        A named version that is missing, a corrupt artifact or a foundation whose fingerprint
        differs from the one it was trained on fails start-up loudly.
        """
        from model_store.anytime_artifact import open_anytime
        from model_store.artifacts import ArtifactNotFoundError, resolve_version

        try:
            version = resolve_version(settings.store_dir, KIND, settings.anytime_version)
        except ArtifactNotFoundError:
            log.info("no anytime artifact in %s: anytime models are off", settings.store_dir)
            return None
        deployment = cls(open_anytime(settings.store_dir, version, device))
        log.info("loaded anytime artifact %s (%d clients) on %s", version,
                 len(deployment.clients), device)  # fmt: skip
        return deployment

    def register(self, session: Session) -> None:
        """Record the artifact and upsert its clients (idempotent across restarts)."""
        crud.register_artifact(session, kind=KIND, version=self.version,
                               manifest_sha256=self.manifest_sha256, metrics={})  # fmt: skip
        for c in self.clients:
            crud.ensure_client(session, client_id=c, name=f"federated client {c}")


class AnytimeServed:
    """A client's anytime model as the orchestrator caches it: callable on uint8 NHWC images
    with an exit; ``nbytes`` counts its own copy of the tower (the LRU's budget)."""

    def __init__(self, classifier: Any) -> None:
        self.classifier = classifier
        model = classifier.model
        self.nbytes = sum(t.numel() * t.element_size()
                          for t in (*model.parameters(), *model.buffers()))  # fmt: skip

    def __call__(self, images: np.ndarray, exit_: int | None = None) -> torch.Tensor:
        return self.classifier.logits(images, exit_)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return self.classifier.model.state_dict()


class AnytimeKind(ModelKind):
    """Kind ``anytime``: client-ID requests against the deployed anytime federation (or None:
    ``kind: anytime`` requests then answer 409 ``anytime-not-deployed``)."""

    name = ANYTIME
    cache_bytes = False  # models are read from the loaded artifact; nothing to synthesize

    def __init__(self, deployment: AnytimeDeployment | None, sessions: sessionmaker) -> None:
        self.deployment, self.sessions = deployment, sessions
        self.version = deployment.version if deployment is not None else None

    def _deployed(self, **extra: Any) -> AnytimeDeployment:
        if self.deployment is None:
            raise Problem(409, "anytime-not-deployed",
                          "this deployment serves no anytime artifact; ask for the client's "
                          "FedCLIP adapter (kind 'fedclip') instead", **extra)  # fmt: skip
        return self.deployment

    def accepts(self, request: Any) -> bool:
        return request.client_id is not None and request.kind in (None, KIND)

    def has_client(self, client_id: str) -> bool:
        d = self.deployment
        return d is not None and (client_id == GLOBAL or client_id in d.clients)

    def draft(self, request: Any, principal: Principal) -> Draft:
        cid = request.client_id
        model_id = resolve_client(
            cid, principal, served=lambda: self._deployed(client_id=cid).clients,
            sessions=self.sessions, what="model", federation=f"{KIND}/{self.version}")
        d, is_global = self._deployed(), model_id == GLOBAL
        who = "the federation's global model" if is_global else f"client {model_id}"
        recipe = {"kind": KIND, "artifact_version": d.version, "client": model_id,
                  "classes": d.federation.class_names}
        return Draft(recipe, METHODS[is_global], description=(
            f"anytime {d.config['method']} model, {d.config['depth']} exits: {who}"))

    def _serving(self, row: PersonalizedModel) -> AnytimeDeployment:
        d = self._deployed(model_id=row.id)
        if row.artifact_version != d.version:
            raise Problem(409, "artifact-not-deployed",
                          f"model {row.id} uses {KIND}/{row.artifact_version} but this deployment "
                          f"serves {KIND}/{d.version}; personalize again for a model on the "
                          "deployed artifact", model_id=row.id)  # fmt: skip
        return d

    @staticmethod
    def _client(row: PersonalizedModel) -> str | None:
        client = row.recipe["client"]
        return None if client == GLOBAL else client

    def build(self, row: PersonalizedModel, hint: Any = None) -> tuple[AnytimeServed, str]:
        classifier = self._serving(row).federation.classifier(self._client(row))
        return AnytimeServed(classifier), "artifact"

    def preprocess(self, raw: list[bytes], names: list[str], settings: Settings) -> np.ndarray:
        """uint8 NHWC, as for FedCLIP: the foundation resizes and normalises itself."""
        return imaging.decode_uint8(raw, names, settings)

    def exit_for(self, row: PersonalizedModel, exit_: int | None,
                 max_layers: int | None) -> int:
        """``exit`` exactly (1…L), or the deepest exit within ``max_layers``, or the default."""
        cfg = self._serving(row).config
        depth = int(cfg["depth"])
        if exit_ is not None and max_layers is not None:
            raise Problem(422, "invalid-exit", "give 'exit' or 'max_layers', not both")
        if exit_ is not None and not 1 <= exit_ <= depth:
            raise Problem(422, "invalid-exit", f"exit must be in 1..{depth} for model {row.id} "
                          f"(got {exit_})", depth=depth)  # fmt: skip
        if max_layers is not None and max_layers < 1:
            raise Problem(422, "invalid-exit", f"max_layers must be >= 1 (got {max_layers})")
        if exit_ is not None:
            return exit_
        return min(max_layers, depth) if max_layers else default_exit(cfg, self._client(row))

    def probabilities(self, served: AnytimeServed, batch: Any,
                      exit_: int | None = None) -> torch.Tensor:
        with torch.inference_mode():
            return served(batch, exit_).float().softmax(dim=1)

    def serialize(self, row: PersonalizedModel, served: AnytimeServed, dtype: str) -> bytes:
        """The whole model's tensors (``fp16`` halves them) with ``config.json`` as the single
        canonical metadata key ``tailor`` (so the same model gives the same bytes)."""
        tensors = download_tensors(served.classifier,
                                   torch.float16 if dtype == "fp16" else torch.float32)
        meta = json.dumps(self.config(row), sort_keys=True)
        return st_save(tensors, metadata={"tailor": meta})

    def config(self, row: PersonalizedModel) -> dict[str, Any]:
        return anytime_config(self._serving(row).federation, self._client(row))

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        """Exits (FLOPs, val accuracy) and the accuracy at the default exit, when the row's
        artifact is the deployed one."""
        d = self.deployment
        if d is None or d.version != row.artifact_version:
            return {"method_accuracy": None}
        client = self._client(row)
        table, default = exits(d.config, client), default_exit(d.config, client)
        return {"method_accuracy": table[default - 1]["val_accuracy"], "exits": table,
                "default_exit": default}

    def register(self, session: Session) -> None:
        if self.deployment is not None:
            self.deployment.register(session)
