"""ONNX downloads: export a personalized model once, cache the bytes, serve them with an ETag.

Exporting costs ~0.25–1 s of CPU per model (``model_store.onnx_export``), far more than reading
45 MB, so the bytes are cached: in Redis under ``<recipe_key>:onnx`` (the same verified
``sha256 || payload`` entries as the safetensors tier, so a corrupt entry is detected, deleted
and re-exported) when Redis is configured, else in a small in-process LRU bounded in bytes.
Identical concurrent downloads export once (single-flight). The export is deterministic, so
every replica produces the same bytes and the same ETag.

The instance per app is created lazily next to the app's ``Personalizer`` (a weak mapping), so
the route needs one line and the lifespan does not change.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict

import torch
from fastapi import Response

from service import runtime as rt
from service.downloads import immutable_download
from service.models import PersonalizedModel
from service.problems import Problem
from service.singleflight import SingleFlight

log = logging.getLogger(__name__)
LOCAL_BUDGET_BYTES = 96 * 1024 * 1024  # two ResNet-18 graphs; only used without Redis
_REGISTRY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


class OnnxExports:
    """Cached ONNX exports of one app's personalized models.

    Args:
        personalizer: the app's orchestration object (supplies ready modules and the Redis tier).
        local_budget_bytes: byte budget of the in-process tier (used when Redis is absent).
    """

    def __init__(self, personalizer, *, local_budget_bytes: int = LOCAL_BUDGET_BYTES) -> None:
        self.p, self.local_budget_bytes = personalizer, local_budget_bytes
        self._local: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._flight: SingleFlight[bytes] = SingleFlight()
        self.exports = 0  # how many times a graph was actually exported (tests, logs)

    @staticmethod
    def key(row: PersonalizedModel) -> str:
        """Cache key: the recipe key (content address of the weights) plus the format."""
        return row.recipe_key + ":onnx"

    def get(self, row: PersonalizedModel) -> bytes:
        """ONNX bytes of ``row`` from a cache tier, exporting on a miss."""
        cached = self._cached(row)
        if cached is not None:
            return cached
        payload, _ = self._flight.do(row.id, lambda: self._export(row))
        return payload

    def _cached(self, row: PersonalizedModel) -> bytes | None:
        if self.p.redis is not None:
            return self.p.redis.get(self.key(row))
        with self._lock:
            payload = self._local.get(row.id)
            if payload is not None:
                self._local.move_to_end(row.id)
            return payload

    def _export(self, row: PersonalizedModel) -> bytes:
        from model_store.onnx_export import export_onnx

        module, _ = self.p.ensure(row)
        # A CPU twin sharing storage (no copy on CPU): export never touches the served module.
        twin = rt.build_module(module.state_dict(), torch.device("cpu"))
        t0 = time.perf_counter()
        meta = {"tailor.model_id": row.id, "tailor.artifact_version": row.artifact_version}
        payload = export_onnx(twin, classes=list(row.recipe["classes"]), metadata=meta)
        self.exports += 1
        log.info("exported model %s to ONNX in %.2f s (%d bytes)", row.id,
                 time.perf_counter() - t0, len(payload))  # fmt: skip
        if self.p.redis is not None:
            self.p.redis.put(self.key(row), payload)
        else:
            self._remember(row.id, payload)
        return payload

    def _remember(self, model_id: str, payload: bytes) -> None:
        if len(payload) > self.local_budget_bytes:
            return
        with self._lock:
            self._local[model_id] = payload
            self._local.move_to_end(model_id)
            while sum(map(len, self._local.values())) > self.local_budget_bytes:
                self._local.popitem(last=False)


def exports_for(personalizer) -> OnnxExports:
    """The ``OnnxExports`` of an app (one per ``Personalizer``, created on first use)."""
    with _REGISTRY_LOCK:
        exports = _REGISTRY.get(personalizer)
        if exports is None:
            exports = _REGISTRY[personalizer] = OnnxExports(personalizer)
        return exports


def _contract_headers() -> dict[str, str]:
    """How to feed the graph: the same preprocessing as /predict and the safetensors download."""
    from model_store.onnx_export import preprocessing_contract

    c = preprocessing_contract()
    size, mean, std = c["image_size"], c["mean"], c["std"]
    return {
        "X-Tailor-Input": f"{c['input']}: float32[N,3,{size},{size}] NCHW RGB",
        "X-Tailor-Preprocess": f"resize {size}x{size} bilinear; x/255; (x-mean)/std; "
        f"mean={','.join(map(str, mean))}; std={','.join(map(str, std))}",  # type: ignore[arg-type]
        "X-Tailor-Output": f"{c['output']}: float32[N,k] in the model's class order",
    }


def onnx_response(p, row: PersonalizedModel, dtype: str, if_none_match: str | None) -> Response:
    """The ``format=onnx`` download: 200 with the graph, or 304 when the ETag matches.

    Raises:
        Problem: 422 for ``dtype=fp16`` (graphs are fp32), 409 for non-TAPER models.
    """
    if row.kind != "taper":
        raise Problem(409, "onnx-unsupported-kind",
                      f"model {row.id} is a {row.kind!r} model; ONNX export covers the "
                      "personalized ResNet-18 (kind 'taper') only", kind=row.kind)  # fmt: skip
    if dtype != "fp32":
        raise Problem(422, "onnx-fp32-only",
                      "ONNX downloads are fp32 only; use format=onnx&dtype=fp32, or "
                      "format=safetensors&dtype=fp16 for half-precision weights")  # fmt: skip
    payload = exports_for(p).get(row)
    return immutable_download(payload, f"{row.id}.onnx", if_none_match, _contract_headers())
