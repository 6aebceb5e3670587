"""The service's one bounded in-process cache: ready models, ONNX bytes and recipe rows.

``cachetools`` supplies the eviction policy (LRU, or LRU with a time-to-live) and the size
accounting (``getsizeof``); this module adds what it leaves to the caller: a lock (cachetools
caches are not thread-safe, and the service looks things up from many worker threads), serving
an item too large for the budget without keeping it (cachetools raises), and metrics hooks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import cachetools
from torch import nn

from service.core.metrics import Metrics

log = logging.getLogger(__name__)
V = TypeVar("V")


class BoundedLRU(Generic[V]):
    """Thread-safe LRU bounded by the total ``sizeof`` of its values (bytes, or 1 per entry).

    Args:
        capacity: the budget, in the unit ``sizeof`` returns.
        sizeof: size of one value (default: 1, i.e. an entry count).
        ttl_s: entries expire this many seconds after insertion (None: never).
        name: for the log line when a value is larger than the whole budget.
    """

    def __init__(
        self, capacity: int, sizeof: Callable[[V], int] | None = None, *,
        ttl_s: float | None = None, name: str = "cache",
    ) -> None:  # fmt: skip
        self.capacity, self.name = capacity, name
        self._sizeof = sizeof or (lambda _v: 1)
        self._items: cachetools.Cache = (
            cachetools.TTLCache(capacity, ttl_s, getsizeof=self._sizeof)
            if ttl_s is not None
            else cachetools.LRUCache(capacity, getsizeof=self._sizeof)
        )
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Total size held (bytes for byte-bounded caches)."""
        return int(self._items.currsize)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._items

    def get(self, key: str) -> V | None:
        """The value for ``key`` (marking it recently used), or None."""
        with self._lock:
            value = self._items.get(key)
        self._counted(value is not None)
        return value

    def put(self, key: str, value: V) -> None:
        """Insert (or refresh) ``key``, evicting least recently used entries to fit."""
        if self._sizeof(value) > self.capacity:
            log.warning("%s: %s (%d) exceeds the budget %d; served, not kept", self.name, key,
                        self._sizeof(value), self.capacity)  # fmt: skip
            return
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = value
        self._changed()

    def pop(self, key: str) -> None:
        """Forget one key (no error when absent)."""
        with self._lock:
            self._items.pop(key, None)
        self._changed()

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()
        self._changed()

    def _counted(self, hit: bool) -> None:
        """Hook: a lookup hit or missed."""

    def _changed(self) -> None:
        """Hook: the contents changed."""


def module_nbytes(module: nn.Module) -> int:
    """Bytes held by a module's parameters and buffers."""
    tensors = list(module.parameters()) + list(module.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


def served_nbytes(value) -> int:
    """Bytes of a served model: its own ``nbytes`` when it keeps count, else its tensors'."""
    size = getattr(value, "nbytes", None)
    return int(size) if size is not None else module_nbytes(value)


class ModuleLRU(BoundedLRU):
    """The runtime's byte-bounded LRU of served models, reporting ``tailor_memory_cache_*``.

    Keys are recipe keys, so owners whose requests are identical share one resident model.
    """

    TIER = "memory"

    def __init__(self, capacity_bytes: int, metrics: Metrics) -> None:
        super().__init__(capacity_bytes, served_nbytes, name="memory cache")
        self.capacity_bytes, self.metrics = capacity_bytes, metrics

    def _counted(self, hit: bool) -> None:
        self.metrics.cache_requests.labels(self.TIER, "hit" if hit else "miss").inc()

    def _changed(self) -> None:
        self.metrics.memory_bytes.set(self.nbytes)
        self.metrics.memory_models.set(len(self))
