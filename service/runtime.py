"""Loaded artifacts on the runtime device, and the in-process LRU of ready nn.Modules.

The LRU is bounded in *bytes* (parameters + buffers), not entries: a ResNet-18 is ~45 MB in
fp32, so an entry count says nothing about memory. Modules are built on the meta device and
filled with ``load_state_dict(assign=True)``, which skips torchvision's random init (tens of ms
per model) and copies nothing.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from service.metrics import Metrics

log = logging.getLogger(__name__)


def module_nbytes(module: nn.Module) -> int:
    """Bytes held by a module's parameters and buffers."""
    tensors = list(module.parameters()) + list(module.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


@functools.lru_cache(maxsize=64)
def _meta_template(num_classes: int) -> nn.Module:
    """A storage-less ResNet-18 to deep-copy (3x cheaper than constructing one per model)."""
    from model_store.resnet import build_resnet18

    with torch.device("meta"):
        return build_resnet18(num_classes)


def build_module(state: Mapping[str, torch.Tensor], device: torch.device) -> nn.Module:
    """A stock torchvision ResNet-18 holding ``state`` (strict), in eval mode, on ``device``."""
    model = copy.deepcopy(_meta_template(int(state["fc.weight"].shape[0])))
    model.load_state_dict({k: v.to(device) for k, v in state.items()}, strict=True, assign=True)
    return model.requires_grad_(False).eval()


class LazyModule:
    """A synthesized state dict whose ``nn.Module`` is built on first use.

    WHY: a cold ``/personalize`` answers with the recipe row only; building the module
    (deep copy of the meta template + ``load_state_dict``) cost 5–15 ms of its latency. The
    module shares the state's storage (``assign=True``), so holding both costs no extra bytes.
    Behaves like the module where the service uses it: called on a batch, and ``state_dict()``
    (the synthesized tensors, so serialising never needs the module).
    """

    def __init__(self, state: Mapping[str, torch.Tensor], device: torch.device) -> None:
        self.device = device
        self._state = {k: v.to(device) for k, v in state.items()}  # no copy when already there
        self.nbytes = sum(t.numel() * t.element_size() for t in self._state.values())
        self._module: nn.Module | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the module exists yet (tests, metrics)."""
        return self._module is not None

    @property
    def module(self) -> nn.Module:
        """The module, built once (concurrent first callers wait for one build)."""
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = build_module(self._state, self.device)
        return self._module

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The weights (the same tensors the module holds)."""
        return dict(self._state)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)


def _nbytes(value: nn.Module | LazyModule) -> int:
    return value.nbytes if isinstance(value, LazyModule) else module_nbytes(value)


@dataclass
class _Entry:
    module: nn.Module | LazyModule
    nbytes: int


class ModuleLRU:
    """Thread-safe LRU of modules (or :class:`LazyModule`), bounded in bytes; evicts LRU first.

    Args:
        capacity_bytes: budget; a single model larger than it is served but not kept.
        metrics: ``tailor_memory_cache_*`` gauges and hit/miss counters.
    """

    TIER = "memory"

    def __init__(self, capacity_bytes: int, metrics: Metrics) -> None:
        self.capacity_bytes, self.metrics = capacity_bytes, metrics
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes currently held."""
        return self._bytes

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def get(self, key: str) -> nn.Module | LazyModule | None:
        """The module for ``key`` (marking it recently used), or None."""
        with self._lock:
            entry = self._items.get(key)
            if entry is not None:
                self._items.move_to_end(key)
        result = "hit" if entry else "miss"
        self.metrics.cache_requests.labels(self.TIER, result).inc()
        return entry.module if entry else None

    def put(self, key: str, module: nn.Module | LazyModule) -> None:
        """Insert (or refresh) ``key`` and evict until the byte budget holds."""
        size = _nbytes(module)
        if size > self.capacity_bytes:
            log.warning("model %s (%d B) exceeds the memory budget; not cached", key, size)
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._bytes -= old.nbytes if old else 0
            self._items[key] = _Entry(module, size)
            self._bytes += size
            while self._bytes > self.capacity_bytes:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.nbytes
            self._publish()

    def pop(self, key: str) -> None:
        """Evict one key."""
        with self._lock:
            entry = self._items.pop(key, None)
            self._bytes -= entry.nbytes if entry else 0
            self._publish()

    def clear(self) -> None:
        """Evict everything."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self._publish()

    def _publish(self) -> None:
        self.metrics.memory_bytes.set(self._bytes)
        self.metrics.memory_models.set(len(self._items))


@functools.lru_cache(maxsize=4)
def load_text_encoder(path: str | None, device: str):
    """Load the text encoder once per process (read-only, so apps in one process share it)."""
    from model_store.text import TextEncoder

    return TextEncoder(path, device=device)


def _canonical_sha256(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


class Runtime:
    """The loaded TAPER artifact on the runtime device, and the module LRU.

    Args:
        bundle: ``model_store.taper.TaperBundle`` (already on ``device``).
        device: where models run (CUDA when present).
        lru: byte-bounded cache of ready modules.
    """

    def __init__(self, *, bundle, device: torch.device, lru: ModuleLRU) -> None:
        self.bundle, self.device, self.lru = bundle, device, lru
        self.version: str = bundle.version
        self.manifest_sha256 = _canonical_sha256(bundle.manifest)
        self.domains: list[str] = list(bundle.domains)
        self.catalogue: dict[str, Any] = bundle.catalogue
        self.class_names: list[str] = bundle.class_names

    @classmethod
    def load(cls, settings, metrics: Metrics) -> Runtime:
        """Load the configured artifact once (hash-verified) onto ``pick_device``."""
        from model_store.device import pick_device
        from model_store.taper import load_taper

        device = pick_device(settings.device)
        bundle = load_taper(settings.store_dir, settings.artifact_version, device=device)
        log.info("loaded taper artifact %s on %s", bundle.version, device)
        return cls(
            bundle=bundle, device=device, lru=ModuleLRU(settings.memory_cache_bytes, metrics)
        )

    @property
    def metrics(self) -> dict[str, Any]:
        """The artifact's own evaluation (``taper``/``selection`` accuracy, default method)."""
        return dict(self.bundle.metrics or {})

    @property
    def default_method(self) -> str:
        """Whichever method the artifact's evaluation found more accurate."""
        return self.bundle.default_method

    def method_accuracy(self, method: str) -> float | None:
        """Evaluation accuracy of ``method`` recorded in the artifact, if any."""
        value = (self.metrics.get(method) or {}).get("acc")
        return float(value) if value is not None else None

    def recipe(
        self,
        class_indices: list[int],
        *,
        domain: str | None,
        method: str,
        class_weights: list[float] | None = None,
    ) -> dict[str, Any]:
        """Everything that determines a model's weights (hashed into its id)."""
        classes = self.catalogue["classes"]
        prompts = [list(classes[i].get("prompts") or [classes[i]["name"]]) for i in class_indices]
        return {
            "kind": "taper",
            "artifact_version": self.version,
            "method": method,
            "classes": [self.class_names[i] for i in class_indices],
            "class_indices": list(class_indices),
            "domain": domain,
            "class_weights": class_weights,
            "embedded_text": prompts if method == "taper" else None,
        }

    def mixers(self, recipe: dict[str, Any]) -> torch.Tensor | None:
        """Block-wise mixer coefficients ``(4, Q)`` of a recipe; None for classifier selection.

        Computed once per cold request and handed to :meth:`synthesize` (the mixer MLP costs
        ~1 ms; it used to run twice). The same function of the recipe as inside
        ``TaperBundle.personalize``, so passing them changes no output bit (tested).
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
        """Deterministically build the state dict a recipe describes.

        ``mixers``: the recipe's own :meth:`mixers`, when the caller already has them.
        """
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
