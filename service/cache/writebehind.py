"""Write-behind: cache writes that must not delay the response, one background thread.

Serialising, hashing and SETting a ~45 MB model takes longer than synthesizing it, so a cold
/personalize answers as soon as the model is ready and its bytes reach Redis a moment later.
Readers that need those exact bytes (weight downloads) wait for the pending write by key.

A job submitted while a request is being answered is queued only once that response has been
sent (:data:`RESPONSE_GATE`, opened by ``service.api.middleware.ResponseGateMiddleware``): running
it at once made the response's own last steps (validation, JSON, send) compete with the copy, the
hash and the Redis write for the GIL and the memory bus (cold ``/personalize`` −4 ms, ~10 %, in
an interleaved A/B). A held job never occupies the writer thread, and whoever waits for a key
(its own request or another) opens that job's gate first, so nobody waits for someone else's
slow response.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import ContextVar

log = logging.getLogger(__name__)


class ResponseGate:
    """Jobs held until a response has been sent; :meth:`open` queues them (once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._opened = False
        self._held: list[Callable[[], None]] = []

    def hold(self, start: Callable[[], None]) -> bool:
        """Keep ``start`` until :meth:`open`; False (and nothing kept) when already open."""
        with self._lock:
            if not self._opened:
                self._held.append(start)
            return not self._opened

    def open(self) -> None:
        """Start whatever was held; later :meth:`hold` calls are refused (run them directly)."""
        with self._lock:
            if self._opened:
                return
            self._opened, held, self._held = True, self._held, []
        for start in held:
            start()


# Set per request by the API (service.api.middleware.ResponseGateMiddleware).
RESPONSE_GATE: ContextVar[ResponseGate | None] = ContextVar("response_gate", default=None)


class WriteBehind:
    """Runs keyed jobs on one worker thread; failures are logged, never raised to callers."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tailor-writer")
        self._pending: dict[str, tuple[Future[None], ResponseGate | None]] = {}
        self._lock = threading.Lock()

    def submit(self, key: str, job: Callable[[], None]) -> None:
        """Queue ``job`` under ``key`` (after the current response, when there is one)."""
        gate, done = RESPONSE_GATE.get(), Future()

        def run() -> None:
            try:
                job()
            except Exception:  # noqa: BLE001 - a failed cache write must not surface anywhere
                log.exception("write-behind %s failed", key)
            finally:
                with self._lock:
                    if self._pending.get(key, (None,))[0] is done:
                        del self._pending[key]
                done.set_result(None)

        with self._lock:
            self._pending[key] = (done, gate)
        if gate is None or not gate.hold(lambda: self._pool.submit(run)):
            self._pool.submit(run)

    def wait(self, key: str) -> None:
        """Block until the pending job for ``key`` (if any) has finished."""
        with self._lock:
            entry = self._pending.get(key)
        if entry is not None:
            done, gate = entry
            if gate is not None:
                gate.open()  # its response may take long (a slow client): do not wait for it
            done.result()

    def flush(self) -> None:
        """Block until every pending job has finished."""
        with self._lock:
            entries = list(self._pending.values())
        for done, gate in entries:
            if gate is not None:
                gate.open()
            done.result()

    def close(self) -> None:
        """Finish pending jobs and stop the thread."""
        self.flush()
        self._pool.shutdown(wait=True)
