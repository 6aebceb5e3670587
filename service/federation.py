"""Client-ID personalization: the deployed FedCLIP artifact, its clients, and who may reach what.

A federation (artifact kind ``fedclip``) holds one global adapter and one personalised adapter per
participating client, all trained on the features of one frozen backbone. The service loads the
artifact and that backbone once at start-up and registers the federation's clients in SQL, so an
operator can issue each of them an API key (``POST /v1/keys {"client_id": ...}``).

Access rules (what a client of such a service expects):

- a client key reaches only its own adapter; asking for another client's id, or reading another
  client's model, answers exactly like a non-existent id (404, same body), so ids do not leak;
- ``client_id: "global"`` is reserved: it returns the federation's global adapter to any key,
  which is how a client that did not take part (an unseen domain) asks for it explicitly;
- a known client without a personalised adapter gets a 404 that tells it to ask for ``global``;
- no adapter artifact deployed: client-ID requests get 409 ``adapters-not-deployed`` (a state of
  this deployment, not a transient fault: retrying does not help, so not 503).

Model rows are content-addressed recipes like TAPER ones (``{kind, artifact_version, adapter,
classes}``), so the same request maps to the same model id on every replica.
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

from service import crud, imaging
from service.auth import Principal
from service.models import PersonalizedModel
from service.problems import Problem
from service.singleflight import SingleFlight

log = logging.getLogger(__name__)

KIND = "fedclip"
GLOBAL = "global"
WEIGHTS_FORMAT = "tailor-fedclip-adapter/1"
METHODS = {True: "fedclip-global", False: "fedclip-personalized"}


def model_not_found(model_id: str) -> Problem:
    """The one 404 for a missing model *and* for someone else's model (ids must not leak)."""
    return Problem(404, "model-not-found", f"no personalized model with id {model_id!r}")


def client_not_found(client_id: str) -> Problem:
    """The one 404 for an unknown client *and* for another client's id."""
    return Problem(404, "client-not-found", f"no client with id {client_id!r}")


def decode_images(raw: list[bytes], names: list[str], settings) -> np.ndarray:
    """uint8 NHWC images through the service's safe decoder (limits, bomb checks).

    The backbone does its own resize and normalisation (``ClipBackbone.preprocess``), so adapters
    get exactly the preprocessing they were trained with; images are decoded at the service's
    ``IMAGE_SIZE`` like the federation's training data.
    """
    return np.stack([
        imaging.decode_image(data, name=name, max_pixels=settings.max_image_pixels,
                             max_bytes=settings.max_image_bytes)
        for data, name in zip(raw, names, strict=True)
    ])  # fmt: skip


class Federation:
    """One loaded ``fedclip`` artifact: backbone on the runtime device, global adapter, classes.

    Client adapters load on first use into the runtime's byte-bounded module LRU (a federation may
    have many clients; the backbone and global adapter stay resident).
    """

    def __init__(self, *, store: Path, artifact, classifier, lru) -> None:
        self.store, self.version, self.lru = store, artifact.version, lru
        self.config: dict[str, Any] = artifact.config
        named = list(self.config.get("clients", []))
        self.clients: list[str] = [c for c in named if c != GLOBAL and len(c) <= 64]
        self.metrics: dict[str, Any] = dict(artifact.metadata.get("metrics") or {})
        canonical = json.dumps(artifact.manifest, sort_keys=True, default=str)
        self.manifest_sha256 = hashlib.sha256(canonical.encode()).hexdigest()
        self.classifier = classifier  # global adapter; shares backbone + class text with clients
        self.class_names: list[str] = list(classifier.class_names)
        self._flight: SingleFlight[Any] = SingleFlight()
        for bad in sorted(set(named) - set(self.clients)):  # 'global' is reserved; SQL ids <= 64
            log.warning("fedclip/%s: client id %r is not served", self.version, bad)

    @classmethod
    def load(cls, settings, device: torch.device, lru) -> Federation | None:
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
        return cls(store=Path(settings.store_dir), artifact=artifact, classifier=classifier,
                   lru=lru)  # fmt: skip

    # ---- adapters -------------------------------------------------------------------------

    def has_adapter(self, adapter_id: str) -> bool:
        """True for ``global`` and for every client with a personalised adapter."""
        return adapter_id == GLOBAL or adapter_id in self.clients

    def adapter(self, adapter_id: str) -> tuple[torch.nn.Module, str]:
        """The adapter module and the tier that supplied it (``memory`` or ``artifact``)."""
        if adapter_id == GLOBAL:
            return self.classifier.adapter, "memory"
        key = f"{KIND}/{self.version}/{adapter_id}"
        module = self.lru.get(key)
        if module is not None:
            return module, "memory"
        module, shared = self._flight.do(key, lambda: self._load_adapter(adapter_id, key))
        return module, ("memory" if shared else "artifact")

    def _load_adapter(self, adapter_id: str, key: str) -> torch.nn.Module:
        from model_store.adapters import load_fedclip_adapter

        adapter, *_ = load_fedclip_adapter(self.store, adapter_id, self.version)
        adapter = adapter.to(self.classifier.backbone.device).requires_grad_(False).eval()
        self.lru.put(key, adapter)
        return adapter

    def logits(self, adapter_id: str, images: np.ndarray) -> torch.Tensor:
        """(n, C) logits: backbone features -> adapter -> scaled cosine with class text features.

        Runs through ``FedClipClassifier.logits`` itself, so serving is the library's own path.
        """
        from model_store.adapters import FedClipClassifier

        c = self.classifier
        module, _ = self.adapter(adapter_id)
        clf = FedClipClassifier(c.backbone, module, c.text_features, c.class_names, c.scale)
        return clf.logits(images)

    def payload(self, adapter_id: str, dtype: str = "fp32") -> bytes:
        """Safetensors: ``adapter.*`` (the adapter state) + ``text_features`` (C, d).

        Everything an app needs to run the model on the backbone's image embeddings is in the
        single metadata key ``tailor`` (canonical JSON: safetensors writes a multi-key metadata
        map in a per-process random order, which would change the bytes and the ETag).
        """
        module, _ = self.adapter(adapter_id)
        tensors = {f"adapter.{k}": v for k, v in module.state_dict().items()}
        tensors["text_features"] = self.classifier.text_features
        out = {}
        for name, t in tensors.items():
            t = t.detach().to("cpu")
            out[name] = (t.half() if dtype == "fp16" else t.float()).contiguous()
        meta = {
            "format": WEIGHTS_FORMAT, "adapter_id": adapter_id, "artifact_version": self.version,
            "adapter": self.config["adapter"], "logit_scale": self.classifier.scale,
            "classes": self.class_names, "backbone": self.config.get("backbone", {}),
            "logits": "logit_scale * cos(adapter(image_embedding), text_features)",
        }  # fmt: skip
        return st_save(out, metadata={"tailor": json.dumps(meta, sort_keys=True)})

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


class ClientModels:
    """Client-ID requests against the deployed federation (or None), with the access rules.

    Args:
        federation: the loaded artifact, or None when this deployment has none.
        sessions: SQLAlchemy session factory.
    """

    def __init__(self, federation: Federation | None, sessions: sessionmaker) -> None:
        self.federation, self.sessions = federation, sessions

    def _deployed(self, **extra: Any) -> Federation:
        if self.federation is None:
            raise Problem(409, "adapters-not-deployed",
                          "this deployment serves no FedCLIP adapter artifact, so client-ID "
                          "personalization is unavailable; personalize by 'description' or "
                          "'classes' instead", **extra)  # fmt: skip
        return self.federation

    def resolve(self, client_id: str, principal: Principal) -> str:
        """The adapter id a request for ``client_id`` gets, or the problem that refuses it."""
        if client_id == GLOBAL:
            self._deployed(client_id=client_id)
            return GLOBAL
        if not principal.is_admin and principal.client_id != client_id:
            raise client_not_found(client_id)
        fed = self._deployed(client_id=client_id)
        if fed.has_adapter(client_id):
            return client_id
        with self.sessions() as s:
            if crud.get_client(s, client_id=client_id) is None:
                raise client_not_found(client_id)
        raise Problem(404, "no-personal-adapter",
                      f"client {client_id!r} has no personalised adapter in {KIND}/{fed.version} "
                      f"(it did not take part in that federation); send "
                      f"{{\"client_id\": \"{GLOBAL}\"}} to get the federation's global adapter",
                      client_id=client_id, use_client_id=GLOBAL)  # fmt: skip

    def personalize(self, client_id: str, principal: Principal) -> tuple[PersonalizedModel, str]:
        """Find or record the model row for a client id; returns it and the adapter's tier."""
        adapter_id = self.resolve(client_id, principal)
        fed = self._deployed()
        _, tier = fed.adapter(adapter_id)
        recipe = fed.recipe(adapter_id)
        key = crud.recipe_key(recipe)
        who = "the federation's global adapter" if adapter_id == GLOBAL else f"client {adapter_id}"
        row = PersonalizedModel(
            id=key[:32], recipe_key=key, kind=KIND, method=METHODS[adapter_id == GLOBAL],
            artifact_version=fed.version, recipe=recipe, mixers=None,
            description=f"FedCLIP adapter: {who}", created_by=principal.client_id,
        )  # fmt: skip
        with self.sessions.begin() as s:
            return crud.save_model(s, row=row), tier

    def check_access(self, row: PersonalizedModel, principal: Principal) -> None:
        """Owner, admin, or anyone for a global model; everyone else sees a plain 404."""
        adapter = row.recipe.get("adapter")
        if not (principal.is_admin or adapter == GLOBAL or adapter == principal.client_id):
            raise model_not_found(row.id)

    def _serving(self, row: PersonalizedModel) -> Federation:
        fed = self._deployed(model_id=row.id)
        if row.artifact_version != fed.version:
            raise Problem(409, "artifact-not-deployed",
                          f"model {row.id} uses {KIND}/{row.artifact_version} but this deployment "
                          f"serves {KIND}/{fed.version}; personalize again for a model on the "
                          "deployed adapters", model_id=row.id)  # fmt: skip
        return fed

    def probabilities(self, row: PersonalizedModel, images: np.ndarray) -> torch.Tensor:
        """Softmax over the federation's classes for uint8 NHWC images."""
        logits = self._serving(row).logits(row.recipe["adapter"], images)
        return logits.float().softmax(dim=1)

    def weights(self, row: PersonalizedModel, dtype: str) -> bytes:
        """Adapter safetensors; the fp32 digest is recorded once (ETag without re-serialising)."""
        payload = self._serving(row).payload(row.recipe["adapter"], dtype)
        if dtype == "fp32" and row.weights_sha256 is None:
            digest = hashlib.sha256(payload).hexdigest()
            with self.sessions.begin() as s:
                crud.set_weights_digest(s, model_id=row.id, sha256=digest, size=len(payload))
            row.weights_sha256, row.weights_bytes = digest, len(payload)
        return payload

    def method_accuracy(self, row: PersonalizedModel) -> float | None:
        """Training-time accuracy of the row's adapter, when its artifact is the deployed one."""
        fed = self.federation
        if fed is None or fed.version != row.artifact_version:
            return None
        return fed.method_accuracy(row.recipe["adapter"])
