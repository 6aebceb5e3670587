"""A process-local cache of immutable SQL recipe rows (skips a ~1 ms lookup per request)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class RowCache:
    """Process-local LRU of *immutable* recipe rows (those whose weights digest is recorded).

    WHY: every /predict and weights request looked its row up in SQL (~1 ms). A row never
    changes once ``weights_sha256`` is set (the only update), and rows are never deleted, so
    caching exactly those rows cannot serve stale data on any replica. Rows without a digest
    are not kept: the write-behind is about to record it.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any | None:
        """The cached row, or None."""
        with self._lock:
            row = self._items.get(key)
            if row is not None:
                self._items.move_to_end(key)
            return row

    def put(self, key: str, row: Any) -> None:
        """Keep ``row`` if it is immutable (digest recorded); evict the oldest past capacity."""
        if getattr(row, "weights_sha256", None) is None:
            return
        with self._lock:
            self._items[key] = row
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
