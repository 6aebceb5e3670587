"""Write-behind: cache writes that must not delay the response, one background thread.

Serialising, hashing and SETting a ~45 MB model takes longer than synthesizing it, so a cold
/personalize answers as soon as the model is ready and its bytes reach Redis a moment later.
Readers that need those exact bytes (weight downloads) wait for the pending write by key.

A job submitted while a request is being answered starts only once that response has been sent
(:data:`RESPONSE_GATE`, opened by ``service.api.middleware.ResponseGateMiddleware``): running it
at once made the response's own last steps (validation, JSON, send) compete with the copy, the
hash and the Redis write for the GIL and the memory bus (cold ``/personalize`` −4 ms, ~10 %, in
an interleaved A/B). A request that itself waits for a write it queued opens its gate first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import ContextVar

log = logging.getLogger(__name__)
# Set per request by the API; jobs queued under it wait for it (at most GATE_TIMEOUT_S).
RESPONSE_GATE: ContextVar[threading.Event | None] = ContextVar("response_gate", default=None)
GATE_TIMEOUT_S = 5.0


class WriteBehind:
    """Runs keyed jobs on one worker thread; failures are logged, never raised to callers."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tailor-writer")
        self._pending: dict[str, Future[None]] = {}
        self._lock = threading.Lock()

    def submit(self, key: str, job: Callable[[], None]) -> None:
        """Queue ``job`` under ``key`` (after the current response, when there is one)."""
        gate = RESPONSE_GATE.get()

        def run() -> None:
            if gate is not None:
                gate.wait(GATE_TIMEOUT_S)
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
        _open_own_gate()
        with self._lock:
            fut = self._pending.get(key)
        if fut is not None:
            fut.result()

    def flush(self) -> None:
        """Block until every pending job has finished."""
        _open_own_gate()
        with self._lock:
            futures = list(self._pending.values())
        for fut in futures:
            fut.result()

    def close(self) -> None:
        """Finish pending jobs and stop the thread."""
        self.flush()
        self._pool.shutdown(wait=True)


def _open_own_gate() -> None:
    """A request about to wait for a write must not hold that write back until it answers."""
    gate = RESPONSE_GATE.get()
    if gate is not None:
        gate.set()
