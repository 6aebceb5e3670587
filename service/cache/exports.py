"""Derived downloads (ONNX graphs): made once per recipe, cached, served with an ETag.

Exporting costs ~0.25–1 s of CPU per model, far more than reading 45 MB, so the bytes are cached:
in Redis under ``<recipe_key>:<format>`` (the same verified ``sha256 || payload`` entries as the
weights tier, so a corrupt entry is detected, deleted and re-made) when Redis is configured, else
in a small in-process LRU bounded in bytes. Identical concurrent downloads export once
(single-flight). Exports are deterministic, so every replica makes the same bytes and ETag.
"""

from __future__ import annotations

from collections.abc import Callable

from service.cache.singleflight import SingleFlight
from service.cache.weight_cache import RedisWeightCache
from service.core.lru import BoundedLRU

LOCAL_BUDGET_BYTES = 96 * 1024 * 1024  # two ResNet-18 graphs; only used without Redis


class ExportCache:
    """Cached derived downloads keyed by recipe key and format.

    Args:
        redis: the Redis tier, or None (then a local byte-bounded LRU).
        local_budget_bytes: budget of the local tier.
    """

    def __init__(self, redis: RedisWeightCache | None, *,
                 local_budget_bytes: int = LOCAL_BUDGET_BYTES) -> None:  # fmt: skip
        self.redis = redis
        self._local: BoundedLRU[bytes] = BoundedLRU(local_budget_bytes, len, name="exports")
        self._flight: SingleFlight[bytes] = SingleFlight()
        self.exports = 0  # how many times something was actually exported (tests, logs)

    def get(self, recipe_key: str, fmt: str, make: Callable[[], bytes]) -> bytes:
        """The cached bytes of ``recipe_key`` in ``fmt``, calling ``make`` on a miss."""
        key = f"{recipe_key}:{fmt}"
        cached = self.redis.get(key) if self.redis is not None else self._local.get(key)
        if cached is not None:
            return cached
        payload, _ = self._flight.do(key, lambda: self._make(key, make))
        return payload

    def _make(self, key: str, make: Callable[[], bytes]) -> bytes:
        payload = make()
        self.exports += 1
        if self.redis is not None:
            self.redis.put(key, payload)
        else:
            self._local.put(key, payload)
        return payload

    def drop(self, recipe_key: str, fmt: str) -> None:
        """Forget a recipe's export (its last owner deleted the model)."""
        key = f"{recipe_key}:{fmt}"
        if self.redis is not None:
            self.redis.delete(key)
        self._local.pop(key)
