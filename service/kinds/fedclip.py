"""Client-ID personalization: the deployed FedCLIP artifact, its clients, and who may reach what.

A federation (artifact kind ``fedclip``) holds one global adapter and one personalised adapter per
participating client, all trained on the features of one frozen backbone. The service loads the
artifact and that backbone once at start-up and registers the federation's clients in SQL, so an
operator can issue each of them an API key (``POST /v1/keys {"client_id": ...}``).

Access follows ``service.kinds.clients`` (shared with anytime models): a client key reaches only
its own adapter, ``client_id: "global"`` returns the global adapter to any key, and another
client's id answers exactly like an unknown one. No adapter artifact deployed: client-ID requests
get 409 ``adapters-not-deployed`` (a state of this deployment, not a transient fault: retrying
does not help, so not 503).

Model rows are recipes like TAPER ones (``{kind, artifact_version, adapter, classes}``); like
every row they belong to the key's owner (``service.personalization``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save as st_save
from sqlalchemy.orm import Session, sessionmaker

from model_store.kinds import FEDCLIP
from service.core import crud, imaging
from service.core.auth import Principal
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.settings import Settings
from service.kinds.base import Draft, ModelKind
from service.kinds.clients import GLOBAL, resolve_client

log = logging.getLogger(__name__)

KIND = FEDCLIP
WEIGHTS_FORMAT = "tailor-fedclip-adapter/1"
METHODS = {True: "fedclip-global", False: "fedclip-personalized"}


class Federation:
    """One loaded ``fedclip`` artifact: backbone on the runtime device, global adapter, classes.

    Client adapters load on first use (the orchestrator keeps them in its byte-bounded LRU: a
    federation may have many clients); the backbone and global adapter stay resident.
    """

    def __init__(self, *, store: Path, artifact, classifier) -> None:
        self.store, self.version = store, artifact.version
        self.config: dict[str, Any] = artifact.config
        named = list(self.config.get("clients", []))
        self.clients: list[str] = [
            c for c in named if c != GLOBAL and len(c) <= 64 and not c.startswith("@")
        ]  # 'global' and '@…' are reserved (the global adapter; the admin owner)
        self.metrics: dict[str, Any] = dict(artifact.metadata.get("metrics") or {})
        canonical = json.dumps(artifact.manifest, sort_keys=True, default=str)
        self.manifest_sha256 = hashlib.sha256(canonical.encode()).hexdigest()
        self.classifier = classifier  # global adapter; shares backbone + class text with clients
        self.class_names: list[str] = list(classifier.class_names)
        for bad in sorted(set(named) - set(self.clients)):  # SQL ids <= 64
            log.warning("fedclip/%s: client id %r is not served", self.version, bad)

    @classmethod
    def load(cls, settings, device: torch.device) -> Federation | None:
        """Load ``settings.fedclip_version``; None when ``latest`` and the store has no fedclip.

        An explicitly named version that is missing, a corrupt artifact or a backbone whose
        fingerprint differs from the one the adapters were trained on fails start-up loudly.
        """
        from model_store.adapters import load_fedclip
        from model_store.artifacts import ArtifactNotFoundError, open_artifact, resolve_version

        try:
            version = resolve_version(settings.store_dir, KIND, settings.fedclip_version)
        except ArtifactNotFoundError:
            log.info("no fedclip artifact in %s: client-ID personalization is off",
                     settings.store_dir)  # fmt: skip
            return None
        artifact = open_artifact(settings.store_dir, KIND, version)
        classifier = load_fedclip(settings.store_dir, None, version, device=device)
        log.info("loaded fedclip artifact %s (%d clients) on %s", version,
                 len(artifact.config.get("clients", [])), device)  # fmt: skip
        return cls(store=Path(settings.store_dir), artifact=artifact, classifier=classifier)

    # ---- adapters -------------------------------------------------------------------------

    def has_adapter(self, adapter_id: str) -> bool:
        """True for ``global`` and for every client with a personalised adapter."""
        return adapter_id == GLOBAL or adapter_id in self.clients

    def classifier_for(self, adapter_id: str) -> tuple[Any, str]:
        """A ``FedClipClassifier`` for ``adapter_id`` and where its adapter came from
        (``memory``: the resident global adapter; ``artifact``: loaded from the store now).

        Serving runs through ``FedClipClassifier.logits`` itself: the library's own path.
        """
        from model_store.adapters import FedClipClassifier, load_fedclip_adapter

        c = self.classifier
        if adapter_id == GLOBAL:
            return c, "memory"
        adapter, *_ = load_fedclip_adapter(self.store, adapter_id, self.version)
        adapter = adapter.to(c.backbone.device).requires_grad_(False).eval()
        return FedClipClassifier(c.backbone, adapter, c.text_features, c.class_names,
                                 c.scale), "artifact"  # fmt: skip

    def payload(self, adapter_id: str, adapter: torch.nn.Module, dtype: str = "fp32") -> bytes:
        """Safetensors: ``adapter.*`` (the adapter state) + ``text_features`` (C, d).

        Everything an app needs to run the model on the backbone's image embeddings is in the
        single metadata key ``tailor`` (canonical JSON: safetensors writes a multi-key metadata
        map in a per-process random order, which would change the bytes and the ETag).
        """
        tensors = {f"adapter.{k}": v for k, v in adapter.state_dict().items()}
        tensors["text_features"] = self.classifier.text_features
        out = {}
        for name, t in tensors.items():
            t = t.detach().to("cpu")
            out[name] = (t.half() if dtype == "fp16" else t.float()).contiguous()
        meta = {**self._description(adapter_id), "classes": self.class_names}
        return st_save(out, metadata={"tailor": json.dumps(meta, sort_keys=True)})

    def _description(self, adapter_id: str) -> dict[str, Any]:
        """How to run an adapter: the weights' ``tailor`` metadata and ``config.json``'s block."""
        return {
            "format": WEIGHTS_FORMAT, "adapter_id": adapter_id, "artifact_version": self.version,
            "adapter": self.config["adapter"], "logit_scale": self.classifier.scale,
            "backbone": self.config.get("backbone", {}),
            "logits": "logit_scale * cos(adapter(image_embedding), text_features)",
        }  # fmt: skip

    def model_config(self, adapter_id: str) -> dict[str, Any]:
        """``config.json`` of an adapter: what :meth:`payload` holds, in the download's form."""
        return {"architecture": "tailor-fedclip-adapter", "num_classes": len(self.class_names),
                "label_names": self.class_names,
                "tailor": {"kind": KIND, **self._description(adapter_id)}}  # fmt: skip

    def method_accuracy(self, adapter_id: str) -> float | None:
        """Accuracy recorded by training: a client's personalised test accuracy; for ``global``
        the unseen-domain accuracy (what a non-participant can expect), else the participants'
        mean."""
        m = self.metrics
        if adapter_id != GLOBAL:
            value = (m.get("personal_acc") or {}).get(adapter_id)
        elif m.get("unseen_acc") is not None:
            value = m["unseen_acc"]
        else:
            parts = list((m.get("participant_acc") or {}).values())
            value = sum(parts) / len(parts) if parts else None
        return round(float(value), 6) if value is not None else None

    def recipe(self, adapter_id: str) -> dict[str, Any]:
        """Everything that determines the model (hashed into its id)."""
        return {"kind": KIND, "artifact_version": self.version, "adapter": adapter_id,
                "classes": self.class_names}  # fmt: skip

    def register(self, session: Session) -> int:
        """Record the artifact and upsert its clients in SQL; returns how many were new.

        Existing client rows (and their keys) are left untouched, so restarts are idempotent.
        """
        crud.register_artifact(session, kind=KIND, version=self.version,
                               manifest_sha256=self.manifest_sha256, metrics=self.metrics)
        created = [c for c in self.clients
                   if crud.ensure_client(session, client_id=c, name=f"federated client {c}")]
        log.info("fedclip/%s: %d clients, %d newly registered", self.version,
                 len(self.clients), len(created))  # fmt: skip
        return len(created)


class FedClipServed:
    """A client's classifier as the orchestrator caches it: callable on uint8 NHWC images."""

    def __init__(self, classifier, adapter_id: str) -> None:
        self.classifier, self.adapter_id = classifier, adapter_id
        adapter = classifier.adapter
        self.nbytes = sum(t.numel() * t.element_size()
                          for t in (*adapter.parameters(), *adapter.buffers()))  # fmt: skip

    def __call__(self, images: np.ndarray) -> torch.Tensor:
        return self.classifier.logits(images)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The adapter's state (the frozen backbone is the artifact's, not the model's)."""
        return self.classifier.adapter.state_dict()


class FedClipKind(ModelKind):
    """Kind ``fedclip``: client-ID requests against the deployed federation (or None).

    Args:
        federation: the loaded artifact, or None when this deployment has none (client-ID
            requests then answer 409 ``adapters-not-deployed``).
        sessions: SQLAlchemy session factory (to tell unknown clients from known ones).
    """

    name = FEDCLIP
    cache_bytes = False  # adapters are read from the loaded artifact; nothing to synthesize

    def __init__(self, federation: Federation | None, sessions: sessionmaker) -> None:
        self.federation, self.sessions = federation, sessions
        self.version = federation.version if federation is not None else None

    def _deployed(self, **extra: Any) -> Federation:
        if self.federation is None:
            raise Problem(409, "adapters-not-deployed",
                          "this deployment serves no FedCLIP adapter artifact, so client-ID "
                          "personalization is unavailable; personalize by 'description' or "
                          "'classes' instead", **extra)  # fmt: skip
        return self.federation

    def accepts(self, request: Any) -> bool:
        return request.client_id is not None and request.kind in (None, KIND)

    def has_client(self, client_id: str) -> bool:
        return self.federation is not None and self.federation.has_adapter(client_id)

    def resolve(self, client_id: str, principal: Principal) -> str:
        """The adapter id a request for ``client_id`` gets, or the problem that refuses it."""
        return resolve_client(
            client_id, principal, served=lambda: self._deployed(client_id=client_id).clients,
            sessions=self.sessions, what="adapter",
            federation=f"{KIND}/{self.version}")  # fmt: skip

    def draft(self, request: Any, principal: Principal) -> Draft:
        adapter_id = self.resolve(request.client_id, principal)
        fed = self._deployed()
        who = "the federation's global adapter" if adapter_id == GLOBAL else f"client {adapter_id}"
        return Draft(fed.recipe(adapter_id), METHODS[adapter_id == GLOBAL],
                     description=f"FedCLIP adapter: {who}")  # fmt: skip

    def _serving(self, row: PersonalizedModel) -> Federation:
        fed = self._deployed(model_id=row.id)
        if row.artifact_version != fed.version:
            raise Problem(409, "artifact-not-deployed",
                          f"model {row.id} uses {KIND}/{row.artifact_version} but this deployment "
                          f"serves {KIND}/{fed.version}; personalize again for a model on the "
                          "deployed adapters", model_id=row.id)  # fmt: skip
        return fed

    def build(self, row: PersonalizedModel, hint: Any = None) -> tuple[FedClipServed, str]:
        adapter_id = row.recipe["adapter"]
        classifier, tier = self._serving(row).classifier_for(adapter_id)
        return FedClipServed(classifier, adapter_id), tier

    def preprocess(self, raw: list[bytes], names: list[str], settings: Settings) -> np.ndarray:
        """uint8 NHWC at the service's ``IMAGE_SIZE``, like the federation's training data: the
        backbone resizes and normalises itself (``ClipBackbone.preprocess``), so adapters get
        exactly the preprocessing they were trained with."""
        return imaging.decode_uint8(raw, names, settings)

    def serialize(self, row: PersonalizedModel, served: FedClipServed, dtype: str) -> bytes:
        adapter = served.classifier.adapter
        return self._serving(row).payload(served.adapter_id, adapter, dtype)

    def config(self, row: PersonalizedModel) -> dict[str, Any]:
        return self._serving(row).model_config(row.recipe["adapter"])

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        """Training-time accuracy of the row's adapter, when its artifact is the deployed one."""
        fed = self.federation
        if fed is None or fed.version != row.artifact_version:
            return {"method_accuracy": None}
        return {"method_accuracy": fed.method_accuracy(row.recipe["adapter"])}

    def register(self, session: Session) -> None:
        if self.federation is not None:
            self.federation.register(session)
