"""Kind ``taper``: personalized ResNet-18s synthesized from the loaded TAPER artifact.

A request (``description`` or ``classes``) resolves to catalogue classes; the recipe (classes,
domain, method, embedded text, artifact version) determines the weights, which are a block-wise
mix of the Q basis models (or the generic model's rows, for ``selection``). Synthesis is
deterministic, so any replica rebuilds an evicted model bit-identically.

Served models are ``service.kinds.lazy.LazyModule``s: the synthesized state, with the
``nn.Module`` built on first use.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from model_store.kinds import TAPER
from service.cache import tensorbytes
from service.core import crud
from service.core.auth import Principal
from service.core.metrics import Metrics
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.schemas import Resolution
from service.core.settings import Settings
from service.kinds import senses
from service.kinds.base import Draft, ModelKind
from service.kinds.lazy import LazyModule, build_module
from service.kinds.phrases import Phrases
from service.kinds.phrases import configured as phrases_configured
from service.kinds.reader import Reader, configured, resolve_or_read
from service.kinds.resolution import ClassResolver
from service.kinds.tuned import Tuned
from service.kinds.tuned import configured as tuned_configured

log = logging.getLogger(__name__)


def load_text_encoder(path: str | None, device: str, runtime: str | None = None):
    """Load the text encoder once per process (read-only, so apps in one process share it).
    ``runtime`` None means ``Settings.text_runtime``'s default, resolved before the cache so
    that spelling it out or not loads one encoder, not two."""
    return _load_text_encoder(path, device,
                              runtime or Settings.model_fields["text_runtime"].default)


@functools.lru_cache(maxsize=4)
def _load_text_encoder(path: str | None, device: str, runtime: str):
    from model_store.text import TextEncoder

    return TextEncoder(path, device=device, runtime=runtime)


def _canonical_sha256(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


class TaperKind(ModelKind):
    """The loaded TAPER artifact on the runtime device, as a model kind.

    Args:
        bundle: ``model_store.taper.TaperBundle`` (already on ``device``).
        device: where models run (CUDA when present).
        resolver: phrase → class matcher over the artifact's catalogue (None: classes only by
            exact name are not resolvable; tests that never personalize by text).
        metrics: Prometheus collectors (synthesis time and count).
    """

    name = TAPER
    cache_bytes = True  # synthesis costs more than reading the bytes back from Redis
    exports = ("onnx",)

    def __init__(self, *, bundle, device: torch.device, resolver: ClassResolver | None = None,
                 metrics: Metrics | None = None) -> None:  # fmt: skip
        self.bundle, self.device, self.resolver, self.metrics = bundle, device, resolver, metrics
        self.version: str = bundle.version
        self.manifest_sha256 = _canonical_sha256(bundle.manifest)
        self.domains: list[str] = list(bundle.domains)
        self.catalogue: dict[str, Any] = bundle.catalogue
        self.reader: Reader | None = None  # reads a refused description again (reader.py)
        self.reader_accept = 1.01  # from settings when loaded: above 1 it only suggests
        self.tuned: Tuned | None = None  # checks the rules' reading of descriptions (tuned.py)
        self.phrases: Phrases | None = None  # reads refused class lists (phrases.py)
        self.class_names: list[str] = bundle.class_names
        self.image_size = int(bundle.config.get("image_size", 32))  # trained at this size
        self._generic: nn.Module | None = None
        self._lock = threading.Lock()

    @classmethod
    def load(cls, settings: Settings, metrics: Metrics, *, resolver: bool = True) -> TaperKind:
        """Load the configured artifact once (hash-verified) onto ``pick_device``."""
        from model_store.device import pick_device
        from model_store.taper import load_taper

        device = pick_device(settings.device)
        bundle = load_taper(settings.store_dir, settings.artifact_version, device=device)
        log.info("loaded taper artifact %s on %s", bundle.version, device)
        match = None
        if resolver:
            encoder = load_text_encoder(settings.text_encoder, "cpu", settings.text_runtime)
            match = ClassResolver(bundle.catalogue, encoder, settings.match_threshold,
                                  settings.match_margin, (settings.match_described_threshold,
                                                          settings.match_described_margin))
            senses.load()  # read WordNet's table now, not on the first request (0.4 s)
        kind = cls(bundle=bundle, device=device, resolver=match, metrics=metrics)
        if resolver:
            kind.reader, kind.reader_accept = configured(settings), settings.reader_accept
            kind.tuned = tuned_configured(settings)
            kind.phrases = phrases_configured(settings)
        return kind

    # ---- the artifact's own evaluation ----------------------------------------------------

    @property
    def artifact_metrics(self) -> dict[str, Any]:
        """The artifact's evaluation (``taper``/``selection`` accuracy, default method)."""
        return dict(self.bundle.metrics or {})

    @property
    def default_method(self) -> str:
        """Whichever method the artifact's evaluation found more accurate."""
        return self.bundle.default_method

    def method_accuracy(self, method: str) -> float | None:
        """Evaluation accuracy of ``method`` recorded in the artifact, if any."""
        value = (self.artifact_metrics.get(method) or {}).get("acc")
        return float(value) if value is not None else None

    # ---- requests -------------------------------------------------------------------------

    def accepts(self, request: Any) -> bool:
        return request.client_id is None and (
            request.description or request.classes or getattr(request, "images", None)) is not None

    def draft(self, request: Any, principal: Principal) -> Draft:
        """Resolve the description/classes, then recipe + mixers (computed once, reused)."""
        if self.resolver is None:
            raise Problem(409, "resolver-not-loaded", "this runtime resolves no descriptions")
        ignored: list[str] = []
        merged: list[str] = []
        matches, domain = resolve_or_read(self.resolver, self.reader, self.reader_accept,
                                          request, self.domains, ignored, merged, self.tuned,
                                          self.phrases)
        method = request.method or self.default_method
        recipe = self.recipe([m.index for m in matches], domain=domain, method=method)
        mixers = self.mixers(recipe)
        resolution = [
            Resolution.model_validate({"phrase": m.phrase, "name": m.name, "index": m.index,
                                       "score": m.score, "did_you_mean": m.suggestions})
            for m in matches
        ]  # fmt: skip
        from service.kinds.unlabeled import method_notes

        notes = method_notes(self, method, domain, request.method)
        if ignored:
            notes.append("read as context, not classes: " + ", ".join(map(repr, ignored)))
        notes += merged
        return Draft(recipe, method, request.description, self.rounded(mixers), hint=mixers,
                     extra={"resolution": resolution, "notes": notes})  # fmt: skip

    def draft_images(self, request: Any, batch: torch.Tensor, settings: Settings) -> Draft:
        """An images-only request: the task the images show (``service.kinds.unlabeled``)."""
        from service.kinds.unlabeled import draft_from_images

        return draft_from_images(self, batch, request, settings)

    def refine(self, row: PersonalizedModel, batch: torch.Tensor,
               settings: Settings) -> tuple[Draft, bool]:
        """The parent's classes and method plus what unlabeled images add (its domain)."""
        from service.kinds.unlabeled import refine_draft

        return refine_draft(self, row, batch, settings)

    @property
    def generic_module(self) -> nn.Module:
        """The all-class generic model (pseudo-labels unlabeled images), built once."""
        if self._generic is None:
            with self._lock:
                if self._generic is None:
                    self._generic = build_module(self.bundle.generic, self.device)
        return self._generic

    def recipe(
        self, class_indices: list[int], *, domain: str | None, method: str,
        class_weights: list[float] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Everything that determines a model's weights (hashed into its recipe key)."""
        classes = self.catalogue["classes"]
        prompts = [list(classes[i].get("prompts") or [classes[i]["name"]]) for i in class_indices]
        return {
            "kind": TAPER, "artifact_version": self.version, "method": method,
            "classes": [self.class_names[i] for i in class_indices],
            "class_indices": list(class_indices), "domain": domain,
            "class_weights": class_weights,
            "embedded_text": prompts if method == "taper" else None,
        }  # fmt: skip

    def mixers(self, recipe: dict[str, Any]) -> torch.Tensor | None:
        """Block-wise mixer coefficients ``(4, Q)`` of a recipe; None for classifier selection.

        Computed once per cold request and handed to :meth:`synthesize` (the mixer MLP costs
        ~1 ms); the same function of the recipe as inside ``TaperBundle.personalize``.
        """
        if recipe["method"] != "taper":
            return None
        with torch.no_grad():  # not inference_mode: the result feeds synthesis outside it
            return self.bundle.mixers_for(self.task_embedding(recipe))

    @staticmethod
    def rounded(mixers: torch.Tensor | None) -> list[list[float]] | None:
        """Mixers as stored in the recipe row (6 decimals; informational, never re-used)."""
        if mixers is None:
            return None
        return [[round(float(v), 6) for v in row] for row in mixers.tolist()]

    def synthesize(
        self, recipe: dict[str, Any], mixers: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """Deterministically build the state dict a recipe describes."""
        idx = recipe["class_indices"]
        with torch.no_grad():  # not inference_mode: nn.Parameter cannot wrap inference tensors
            if recipe["method"] != "taper":
                return self.bundle.personalize(idx, domain=recipe["domain"],
                                               method=recipe["method"])[0]  # fmt: skip
            mixers = self.mixers(recipe) if mixers is None else mixers
            return self.bundle.synthesize_from_mixers(mixers, idx)

    def task_embedding(self, recipe: dict[str, Any]) -> np.ndarray:
        """The recipe's task embedding; weighted by ``class_weights`` when present (refinement)."""
        return self.bundle.task_embedding(
            recipe["class_indices"], recipe["domain"], weights=recipe.get("class_weights")
        )

    # ---- serving --------------------------------------------------------------------------

    def build(self, row: PersonalizedModel, hint: Any = None) -> tuple[LazyModule, str]:
        """Synthesize ``row`` (a row of another artifact version is never rebuilt: 409)."""
        built_with = row.recipe.get("artifact_version")
        if built_with != self.version:  # other bases (and maybe classes)
            raise Problem(409, "artifact-version-mismatch",
                          f"model {row.id} was built from TAPER artifact {built_with}, but this "
                          f"deployment serves {self.version}; POST the same request to "
                          "/v1/personalize for a model from the current artifact")  # fmt: skip
        t0 = time.perf_counter()
        state = self.synthesize(row.recipe, hint)
        if self.metrics is not None:
            self.metrics.synthesis_seconds.labels(row.method).observe(time.perf_counter() - t0)
            self.metrics.syntheses.inc()
        return LazyModule(state, self.device), "synthesized"  # module built on first /predict

    def restore(self, tensors: dict[str, torch.Tensor]) -> LazyModule:
        return LazyModule(tensors, self.device)

    def preprocess(self, raw: list[bytes], names: list[str], settings: Settings) -> torch.Tensor:
        from service.core.imaging import decode_normalised

        return decode_normalised(raw, names, settings, self.image_size).to(self.device)

    def serialize(self, row: PersonalizedModel, served: LazyModule, dtype: str) -> memoryview:
        """Safetensors with the model's description in ``__metadata__`` (sorted: deterministic)."""
        from model_store.model_card import safetensors_metadata

        meta = safetensors_metadata(self.config(row)) | {"dtype": dtype}
        return tensorbytes.serialize(served.state_dict(), dtype, meta)

    def onnx(self, row: PersonalizedModel, served: LazyModule) -> bytes:
        """fp32 ONNX graph of a CPU twin sharing storage (export never touches the served
        module); ~0.25–1 s of CPU, which is why the orchestrator caches the bytes."""
        from model_store.onnx_export import export_onnx

        twin = build_module(served.state_dict(), torch.device("cpu"))
        t0 = time.perf_counter()
        meta = {"tailor.model_id": row.id, "tailor.artifact_version": row.artifact_version}
        payload = export_onnx(twin, classes=list(row.recipe["classes"]), metadata=meta,
                              image_size=self.image_size)
        log.info("exported model %s to ONNX in %.2f s (%d bytes)", row.id,
                 time.perf_counter() - t0, len(payload))  # fmt: skip
        return payload

    def onnx_headers(self) -> dict[str, str]:
        """How to feed the graph: the same preprocessing as /predict and the safetensors."""
        from model_store.onnx_export import preprocessing_contract

        c = preprocessing_contract(self.image_size)
        size, mean, std = c["image_size"], c["mean"], c["std"]
        return {
            "X-Tailor-Input": f"{c['input']}: float32[N,3,{size},{size}] NCHW RGB",
            "X-Tailor-Preprocess": f"resize shorter side to {size} bilinear; centre crop "
            f"{size}x{size}; x/255; (x-mean)/std; "
            f"mean={','.join(map(str, mean))}; std={','.join(map(str, std))}",  # type: ignore[arg-type]
            "X-Tailor-Output": f"{c['output']}: float32[N,k] in the model's class order",
        }

    # ---- description ----------------------------------------------------------------------

    def config(self, row: PersonalizedModel) -> dict[str, Any]:
        from model_store.model_card import resnet_config

        return resnet_config(row.recipe["classes"], method=row.method, kind=TAPER,
                             artifact_version=row.artifact_version,
                             extra={"domain": row.recipe.get("domain")},
                             image_size=self.image_size)  # fmt: skip

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        return {"method_accuracy": self.method_accuracy(row.method)}

    def register(self, session) -> None:
        crud.register_artifact(session, kind=TAPER, version=self.version,
                               manifest_sha256=self.manifest_sha256,
                               metrics=self.artifact_metrics)  # fmt: skip
