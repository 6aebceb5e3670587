"""Write-behind: cache writes that must not delay the response, one background thread.

Serialising, hashing and SETting a ~45 MB model takes longer than synthesizing it, so a cold
/personalize answers as soon as the model is ready and its bytes reach Redis a moment later.
Readers that need those exact bytes (weight downloads) wait for the pending write by key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)


class WriteBehind:
    """Runs keyed jobs on one worker thread; failures are logged, never raised to callers."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tailor-writer")
        self._pending: dict[str, Future[None]] = {}
        self._lock = threading.Lock()

    def submit(self, key: str, job: Callable[[], None]) -> None:
        """Queue ``job`` under ``key``."""

        def run() -> None:
            try:
                job()
            except Exception:  # noqa: BLE001 - a failed cache write must not surface anywhere
                log.exception("write-behind %s failed", key)
            finally:
                with self._lock:
                    self._pending.pop(key, None)

        with self._lock:
            self._pending[key] = self._pool.submit(run)

    def wait(self, key: str) -> None:
        """Block until the pending job for ``key`` (if any) has finished."""
        with self._lock:
            fut = self._pending.get(key)
        if fut is not None:
            fut.result()

    def flush(self) -> None:
        """Block until every pending job has finished."""
        with self._lock:
            futures = list(self._pending.values())
        for fut in futures:
            fut.result()

    def close(self) -> None:
        """Finish pending jobs and stop the thread."""
        self.flush()
        self._pool.shutdown(wait=True)
