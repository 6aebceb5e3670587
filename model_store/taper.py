"""The TAPER artifact (kind ``taper``): save, load, and personalize from it.

Layout is fixed by docs/architecture.md ("TAPER artifact layout"): ``bases.safetensors`` with
keys ``"{q}.{param}"``, ``generic.safetensors`` (stage-1 model, used by the classifier-selection
method), ``mixer.safetensors``, ``class_text.safetensors`` (prompt embeddings), ``catalogue.json``,
``config.json`` and ``manifest.json`` (metrics etc.). The trainer writes it with ``save_taper``;
the service loads it once with ``load_taper`` and calls ``TaperBundle.personalize`` per request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from model_store._taper_checks import (
    _check_class_text,
    _check_domain_head,
    _check_models,
    _normalise_catalogue,
    _per_basis,
    _resnet_keys,
    _taper_config,
)
from model_store.artifacts import ArtifactRef, open_artifact, write_artifact
from model_store.device import pick_device
from model_store.kinds import TAPER
from model_store.mixer import MixerPredictor, build_mixer
from model_store.resnet import NUM_BLOCKS
from model_store.stacked import StackedBases
from model_store.synthesis import select_classes, synthesize
from model_store.text import task_embedding

KIND = TAPER
METHODS = ("taper", "selection")
StateDict = dict[str, torch.Tensor]


def save_taper(
    store: str | os.PathLike[str],
    *,
    bases: Sequence[Mapping[str, torch.Tensor]] | Mapping[str, torch.Tensor],
    generic: Mapping[str, torch.Tensor],
    mixer_state: Mapping[str, torch.Tensor],
    mixer_cfg: Mapping[str, Any],
    catalogue: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    class_text: Mapping[str, torch.Tensor],
    config: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    version: str | None = None,
    domain_head: Mapping[str, torch.Tensor] | None = None,
) -> ArtifactRef:
    """Validate and write a TAPER artifact; see the module docstring for the layout.

    Args:
        bases: Q ResNet-18 state dicts (all N classes), or their ``stack_bases`` form.
        generic: The stage-1 ResNet-18 state dict (N classes).
        mixer_state: ``MixerPredictor`` state dict; ``mixer_cfg`` its constructor arguments.
        catalogue: ``{"classes": [{"name", "group", "prompts", "definition"}], "groups",
            "domains"}`` (a bare list of class dicts is accepted too).
        class_text: ``prompts`` (N, P, d), ``names`` (N, d), optional ``domain_prompts``
            (D, N, P, d), optional ``definitions`` (N, d); all L2-normalised float32. Further
            entries are stored as given.
        config: Extra/overriding ``config.json`` entries (must agree with the tensors).
        metrics: Evaluation results; ``metrics["default_method"]`` picks the service default.
        metadata: Further manifest entries (training config, dataset fingerprint, ...).
        version: Explicit version id (default: timestamp + content hash).
        domain_head: Optional linear domain classifier on the generic model's pooled features,
            ``weight`` (D, F) and ``bias`` (D,), one row per catalogue domain (estimates the
            domain of unlabeled images; older artifacts have none).

    Raises:
        ValueError: If shapes, keys or configs are inconsistent (caught here, not at serving).
    """
    per_basis = _per_basis(bases)
    cat = _normalise_catalogue(catalogue)
    n, q = len(cat["classes"]), len(per_basis)
    if q == 0:
        raise ValueError("bases must hold at least one ResNet-18 state dict")
    keys = _resnet_keys(n)
    stock = _check_models(per_basis[0], generic, n, int((config or {}).get("width", 64)))
    embed_dim = _check_class_text(class_text, n, len(cat["domains"]))
    mixer = build_mixer(dict(mixer_cfg))
    mixer.load_state_dict(mixer_state, strict=True)
    if mixer.num_bases != q or mixer.embed_dim != embed_dim or mixer.num_blocks != NUM_BLOCKS:
        raise ValueError(f"mixer config {mixer.config} does not fit Q={q}, d={embed_dim}")
    full = _taper_config(derived=dict(
        num_classes=n, num_bases=q, embed_dim=embed_dim, mixer=mixer.config,
        torchvision_compatible=stock), given=config)  # fmt: skip
    tensors = {
        "bases": {f"{i}.{k}": per_basis[i][k] for k in keys for i in range(q)},
        "generic": {k: generic[k] for k in keys},
        "mixer": dict(mixer_state),
        "class_text": dict(class_text),
    }
    if domain_head is not None:
        tensors["domain_head"] = _check_domain_head(domain_head, len(cat["domains"]),
                                                    int(generic["fc.weight"].shape[1]))
    return write_artifact(
        store, KIND, config=full, version=version, json_files={"catalogue": cat},
        metadata={**dict(metadata or {}), "metrics": dict(metrics or {})}, tensors=tensors,
    )  # fmt: skip



@dataclass
class TaperBundle:
    """A loaded TAPER artifact, ready to personalize (all tensors on ``device``).

    Attributes:
        bases: ``param -> Tensor[Q, ...]`` packed into per-block segments (``StackedBases``,
            the synthesis fast-path layout).
        generic: Stage-1 state dict, used by the ``selection`` method.
        mixer: ``MixerPredictor`` in eval mode (batch-1 safe, see ``model_store.mixer``).
        catalogue: The ``catalogue.json`` dict: ``classes`` (dicts with ``name``, ``group``,
            ``prompts``, ``definition``; list index = label), ``groups``, ``domains``.
        class_text: ``prompts`` (N, P, d), ``names`` (N, d), maybe ``domain_prompts``; on CPU.
        config, metrics, manifest: From ``config.json`` / ``manifest.json``.
        domain_head: ``weight`` (D, F), ``bias`` (D,) on ``device``, or None (older artifacts).
    """

    version: str
    bases: StackedBases
    generic: StateDict
    mixer: MixerPredictor
    catalogue: dict[str, Any]
    class_text: StateDict
    config: dict[str, Any]
    metrics: dict[str, Any]
    manifest: dict[str, Any] = field(repr=False)
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    domain_head: StateDict | None = None

    @property
    def classes(self) -> list[dict[str, Any]]:
        """Catalogue class dicts in label order."""
        return self.catalogue["classes"]

    @property
    def class_names(self) -> list[str]:
        """Class names in label order."""
        return [c["name"] for c in self.classes]

    @property
    def groups(self) -> list[str]:
        return list(self.catalogue.get("groups", []))

    @property
    def domains(self) -> list[str]:
        return list(self.catalogue.get("domains", []))

    @property
    def num_bases(self) -> int:
        return int(self.config["num_bases"])

    @property
    def nbytes(self) -> int:
        """Bytes of tensor memory the bundle holds (bases, generic, mixer, class text)."""
        tensors = [*self.bases.values(), *self.generic.values(), *self.class_text.values(),
                   *self.mixer.state_dict().values()]  # fmt: skip
        return sum(t.numel() * t.element_size() for t in tensors)

    @property
    def default_method(self) -> str:
        """The method the artifact's own evaluation found more accurate (``taper`` if unknown)."""
        method = self.metrics.get("default_method", "taper")
        return method if method in METHODS else "taper"

    def task_embedding(
        self,
        class_indices: Sequence[int],
        domain: str | None = None,
        weights: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Mean of the task classes' normalised prompt embeddings, re-normalised (``(d,)``).

        With a ``domain`` the domain-aware prompts are used when the artifact has them; an
        artifact without them falls back to the plain prompts. ``weights`` weighs the classes
        (see ``model_store.text.task_embedding``).

        Raises:
            ValueError: Unknown class index or domain.
        """
        idx = list(class_indices)
        n = len(self.classes)
        if not idx or any(isinstance(i, bool) or not 0 <= int(i) < n for i in idx):
            raise ValueError(f"class indices must be non-empty and within [0, {n}): {idx}")
        prompts = self.class_text["prompts"]
        if domain is not None:
            if domain not in self.domains:
                raise ValueError(f"unknown domain {domain!r}; known: {self.domains}")
            if "domain_prompts" in self.class_text:
                prompts = self.class_text["domain_prompts"][self.domains.index(domain)]
        return task_embedding([prompts[int(i)].numpy() for i in idx], weights)

    def mixers_for(self, embedding: np.ndarray | torch.Tensor) -> torch.Tensor:
        """Block-wise coefficients ``(NUM_BLOCKS, Q)`` (CPU float32) for a ``(d,)`` embedding."""
        if isinstance(embedding, torch.Tensor):
            emb = embedding.detach().float().cpu()
        else:
            emb = torch.as_tensor(np.asarray(embedding, dtype=np.float32))
        if emb.shape != (self.mixer.embed_dim,):
            raise ValueError(
                f"embedding must have shape ({self.mixer.embed_dim},), got {emb.shape}"
            )
        return self.mixer.predict(emb).float().cpu()

    @torch.no_grad()
    def personalize(
        self,
        class_indices: Sequence[int],
        domain: str | None = None,
        method: str = "taper",
        embedding: np.ndarray | torch.Tensor | None = None,
    ) -> tuple[StateDict, torch.Tensor | None]:
        """Build the task model's state dict (on ``self.device``).

        Args:
            class_indices: Catalogue indices in the order the model's outputs should have.
            domain: Optional domain for domain-aware task embeddings (validated for both
                methods; only ``taper`` uses it).
            method: ``"taper"`` (mixed bases) or ``"selection"`` (generic model, fc rows only).
            embedding: Override the task embedding (e.g. of a free-text description).

        Returns:
            ``(state_dict, mixers)``: the state dict loads strictly into
            ``resnet18(num_classes=len(class_indices))``; mixers is ``(NUM_BLOCKS, Q)`` for
            ``taper`` and ``None`` for ``selection``.
        """
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if domain is not None and domain not in self.domains:
            raise ValueError(f"unknown domain {domain!r}; known: {self.domains}")
        if method == "selection":
            return select_classes(self.generic, class_indices), None
        if embedding is None:
            embedding = self.task_embedding(class_indices, domain)
        mixers = self.mixers_for(embedding)
        return self.synthesize_from_mixers(mixers, class_indices), mixers

    @torch.no_grad()
    def synthesize_from_mixers(
        self, mixers: torch.Tensor, class_indices: Sequence[int]
    ) -> StateDict:
        """``synthesize`` on this bundle's bases with given ``(NUM_BLOCKS, Q)`` mixers."""
        return synthesize(self.bases, mixers, class_indices)


def _unstack(flat: Mapping[str, torch.Tensor], keys: list[str], q: int) -> StateDict:
    try:
        return {k: torch.stack([flat[f"{i}.{k}"] for i in range(q)]) for k in keys}
    except KeyError as exc:
        raise ValueError(f"bases.safetensors lacks {exc.args[0]!r}") from None


def load_taper(
    store: str | os.PathLike[str],
    version: str = "latest",
    device: str | torch.device | None = None,
) -> TaperBundle:
    """Open (hash-verified) and load a TAPER artifact onto ``device`` (default ``pick_device``).

    Raises:
        ArtifactNotFoundError, ArtifactIntegrityError: From ``open_artifact``.
        ValueError: If the contents are inconsistent with ``config.json``.
    """
    dev = pick_device(str(device) if device is not None else None)
    # Every file below is read through Artifact.tensors/json, which hash the exact bytes they
    # parse; verifying up front as well would hash the (large) bases twice at start-up.
    art = open_artifact(store, KIND, version, verify=False)
    cfg = art.config
    cat = art.json("catalogue")
    n, q = int(cfg["num_classes"]), int(cfg["num_bases"])
    keys = _resnet_keys(n)
    bases = StackedBases({k: v.to(dev) for k, v in _unstack(art.tensors("bases"), keys, q).items()})
    generic_flat = art.tensors("generic", device=dev)
    if set(generic_flat) != set(keys):
        raise ValueError("generic.safetensors is not a ResNet-18 state dict")
    mixer = build_mixer(cfg["mixer"])
    mixer.load_state_dict(art.tensors("mixer"), strict=True)
    head = (art.tensors("domain_head", device=dev)
            if "domain_head.safetensors" in art.manifest.get("files", {}) else None)
    return TaperBundle(
        domain_head=head,
        version=art.version,
        bases=bases,
        generic={k: generic_flat[k] for k in keys},
        mixer=mixer.to(dev).eval(),
        catalogue=cat,
        class_text=art.tensors("class_text"),
        config=cfg,
        metrics=dict(art.manifest.get("metrics", {})),
        manifest=art.manifest,
        device=dev,
    )
