"""Kinds that serve one federation's per-client models from a deployed artifact (anytime,
FedPerfix): loading it, registering its clients, access, and the download, written once.

A subclass names its artifact kind, how to open it (``open``), how to describe a client's model
(``card``: the ``config.json``) and what its rows are called (``methods``); the access rule is
``service.kinds.clients``'. A request ``{"client_id": …, "kind": <name>}`` (``kind`` may be
left out when no earlier-registered kind has the client) returns the client's model.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch
from safetensors.torch import save as st_save
from sqlalchemy.orm import Session, sessionmaker

from service.core import crud, imaging
from service.core.auth import Principal
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.settings import Settings
from service.kinds.base import Draft, ModelKind
from service.kinds.clients import GLOBAL, resolve_client

log = logging.getLogger(__name__)


class ClientDeployment:
    """One loaded per-client-models artifact (``model_store.client_models.ClientModels``) and
    the client ids it serves (``global`` and ``@…`` are reserved, SQL ids are ≤ 64)."""

    def __init__(self, federation: Any) -> None:
        self.federation, self.version = federation, federation.version
        self.kind: str = federation.artifact.kind
        self.config: dict[str, Any] = federation.config
        named = list(self.config.get("clients", []))
        self.clients = [c for c in named if c != GLOBAL and len(c) <= 64 and c[:1] != "@"]
        for bad in sorted(set(named) - set(self.clients)):
            log.warning("%s/%s: client id %r is not served", self.kind, self.version, bad)
        canonical = json.dumps(federation.artifact.manifest, sort_keys=True, default=str)
        self.manifest_sha256 = hashlib.sha256(canonical.encode()).hexdigest()

    @classmethod
    def load(cls, settings: Settings, kind: str, version: str, device: torch.device,
             opener: Callable[..., Any]) -> ClientDeployment | None:
        """``opener(store, version, device)`` of ``version``; None when ``latest`` and the
        store has none. A named version that is missing, a corrupt artifact or a foundation
        whose fingerprint differs from the one it was trained on fails start-up loudly."""
        from model_store.artifacts import ArtifactNotFoundError, resolve_version

        try:
            resolved = resolve_version(settings.store_dir, kind, version)
        except ArtifactNotFoundError:
            log.info("no %s artifact in %s: that kind is off", kind, settings.store_dir)
            return None
        deployment = cls(opener(settings.store_dir, resolved, device))
        log.info("loaded %s artifact %s (%d clients) on %s", kind, resolved,
                 len(deployment.clients), device)  # fmt: skip
        return deployment

    def register(self, session: Session) -> None:
        """Record the artifact and upsert its clients (idempotent across restarts)."""
        crud.register_artifact(session, kind=self.kind, version=self.version,
                               manifest_sha256=self.manifest_sha256, metrics={})  # fmt: skip
        for c in self.clients:
            crud.ensure_client(session, client_id=c, name=f"federated client {c}")


class ClientServed:
    """A client's model as the orchestrator caches it: ``classifier.logits`` on uint8 NHWC
    images; ``nbytes`` counts its own copy of the tower (the LRU's budget)."""

    def __init__(self, classifier: Any) -> None:
        self.classifier = classifier
        model = classifier.model
        self.nbytes = sum(t.numel() * t.element_size()
                          for t in (*model.parameters(), *model.buffers()))  # fmt: skip

    def __call__(self, images: np.ndarray, *args: Any) -> torch.Tensor:
        return self.classifier.logits(images, *args)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return self.classifier.model.state_dict()


class ClientModelKind(ModelKind):
    """Client-ID requests against one deployed per-client-models artifact (or None: requests
    naming this kind then answer 409 ``<kind>-not-deployed``)."""

    cache_bytes = False  # models are read from the loaded artifact; nothing to synthesize
    methods: ClassVar[dict[bool, str]]  # {is_global: method recorded on the row}
    has_global: ClassVar[bool] = True  # whether 'global' names a model of this kind

    def __init__(self, deployment: ClientDeployment | None, sessions: sessionmaker) -> None:
        self.deployment, self.sessions = deployment, sessions
        self.version = deployment.version if deployment is not None else None

    # ---- hooks ----------------------------------------------------------------------------

    def card(self, deployment: ClientDeployment, client: str | None) -> dict[str, Any]:
        """The ``config.json`` of a client's (None: the global) model."""
        raise NotImplementedError

    def describe(self, deployment: ClientDeployment, who: str) -> str:
        return f"{self.name} {deployment.config['method']} model: {who}"

    # ---- the interface --------------------------------------------------------------------

    def _deployed(self, **extra: Any) -> ClientDeployment:
        if self.deployment is None:
            raise Problem(409, f"{self.name}-not-deployed",
                          f"this deployment serves no {self.name} artifact; ask for another "
                          "kind of the client's model", **extra)  # fmt: skip
        return self.deployment

    def _served_ids(self, client_id: str) -> list[str]:
        d = self._deployed(client_id=client_id)
        if client_id == GLOBAL and not self.has_global:
            raise Problem(404, "no-global-model",
                          f"{self.name}/{d.version} keeps part of every model on its client, so "
                          "there is no global model; ask with your own client id",
                          client_id=client_id)  # fmt: skip
        return d.clients

    def accepts(self, request: Any) -> bool:
        return request.client_id is not None and request.kind in (None, self.name)

    def has_client(self, client_id: str) -> bool:
        d = self.deployment
        return d is not None and (client_id in d.clients or
                                  (client_id == GLOBAL and self.has_global))

    def draft(self, request: Any, principal: Principal) -> Draft:
        cid = request.client_id
        model_id = resolve_client(cid, principal, served=lambda: self._served_ids(cid),
                                  sessions=self.sessions, what="model",
                                  federation=f"{self.name}/{self.version}")  # fmt: skip
        d, is_global = self._deployed(), model_id == GLOBAL
        who = "the federation's global model" if is_global else f"client {model_id}"
        recipe = {"kind": self.name, "artifact_version": d.version, "client": model_id,
                  "classes": d.federation.class_names}
        return Draft(recipe, self.methods[is_global], description=self.describe(d, who))

    def _serving(self, row: PersonalizedModel) -> ClientDeployment:
        d = self._deployed(model_id=row.id)
        if row.artifact_version != d.version:
            raise Problem(409, "artifact-not-deployed",
                          f"model {row.id} uses {self.name}/{row.artifact_version} but this "
                          f"deployment serves {self.name}/{d.version}; personalize again for a "
                          "model on the deployed artifact", model_id=row.id)  # fmt: skip
        return d

    @staticmethod
    def client_of(row: PersonalizedModel) -> str | None:
        client = row.recipe["client"]
        return None if client == GLOBAL else client

    def build(self, row: PersonalizedModel, hint: Any = None) -> tuple[ClientServed, str]:
        classifier = self._serving(row).federation.classifier(self.client_of(row))
        return ClientServed(classifier), "artifact"

    def preprocess(self, raw: list[bytes], names: list[str], settings: Settings) -> np.ndarray:
        """uint8 NHWC, as for FedCLIP: the foundation resizes and normalises itself."""
        return imaging.decode_uint8(raw, names, settings)

    def serialize(self, row: PersonalizedModel, served: ClientServed, dtype: str) -> bytes:
        """The whole model's tensors (``fp16`` halves them) with ``config.json`` as the single
        canonical metadata key ``tailor`` (so the same model gives the same bytes)."""
        to = torch.float16 if dtype == "fp16" else torch.float32
        tensors = {k: v.detach().to("cpu", to).contiguous()
                   for k, v in served.classifier.model.state_dict().items()}  # fmt: skip
        return st_save(tensors, metadata={"tailor": json.dumps(self.config(row), sort_keys=True)})

    def config(self, row: PersonalizedModel) -> dict[str, Any]:
        return self.card(self._serving(row), self.client_of(row))

    def register(self, session: Session) -> None:
        if self.deployment is not None:
            self.deployment.register(session)
