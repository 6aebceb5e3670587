"""Single-flight: concurrent callers with the same key share one execution of the work.

Twenty apps asking for the same task at the same moment must cost one synthesis, not twenty
(each is ~Q × 45 MB of memory traffic). Works across the threadpool FastAPI runs sync code on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """Deduplicates in-flight calls by key; results are not cached after the call ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, Future[T]] = {}

    def do(self, key: str, fn: Callable[[], T]) -> tuple[T, bool]:
        """Run ``fn`` once per key among concurrent callers.

        Returns:
            ``(result, shared)`` where ``shared`` is True for callers that waited on another's
            execution. Exceptions propagate to every waiter.
        """
        with self._lock:
            existing = self._calls.get(key)
            if existing is None:
                fut: Future[T] = Future()
                self._calls[key] = fut
        if existing is not None:
            return existing.result(), True
        try:
            result = fn()
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        else:
            fut.set_result(result)
            return result, False
        finally:
            with self._lock:
                self._calls.pop(key, None)
