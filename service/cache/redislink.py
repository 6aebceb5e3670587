"""One Redis client per worker, shared by the weight cache and the rate limiter, with one
back-off window.

WHY: both used to open their own connection pool and keep their own copy of the same
"after a failure, skip Redis for ``retry_s``" logic. It is one Redis: when the limiter's call
times out, the cache's next call would too, so one failure now opens the window for both, and a
worker holds one pool. Each user still counts its own errors (``tailor_cache_errors_total``,
``tailor_ratelimit_errors_total``); ``tailor_redis_up`` is this link's state. redis-py reconnects
by itself, so the first call after the window that succeeds closes it.
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from service.core.metrics import Metrics

log = logging.getLogger(__name__)


class RedisLink:
    """A Redis client with socket timeouts and a shared back-off window.

    Args:
        url: Redis URL.
        metrics: ``redis_up`` is set here.
        retry_s: how long to skip Redis after a failure.
        timeout_s: socket connect/read timeout, so a hung Redis cannot stall requests.
    """

    def __init__(self, url: str, metrics: Metrics, *, retry_s: float = 2.0,
                 timeout_s: float = 1.0) -> None:  # fmt: skip
        self.client = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        self.metrics, self.retry_s = metrics, retry_s
        self._down_until = 0.0
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """False while in the back-off window after a failure."""
        return time.monotonic() >= self._down_until

    def failed(self, what: str, exc: Exception) -> None:
        """Open (or extend) the back-off window; warn on the first failure of an outage."""
        with self._lock:
            first = self._down_until == 0.0
            self._down_until = time.monotonic() + self.retry_s
        self.metrics.redis_up.set(0)
        (log.warning if first else log.debug)("redis %s failed (%s); continuing without it",
                                              what, exc)  # fmt: skip

    def ok(self) -> None:
        """A call succeeded: close the window (logged once per outage)."""
        if self._down_until:
            log.info("redis is reachable again; caching and shared rate limits resumed")
        self._down_until = 0.0
        self.metrics.redis_up.set(1)

    def ping(self) -> bool:
        """True if Redis answers now (readiness reports it; never raises)."""
        try:
            answered = bool(self.client.ping())
        except redis.RedisError as exc:
            self.failed("PING", exc)
            return False
        self.ok()
        return answered

    def close(self) -> None:
        """Release the connection pool."""
        self.client.close()
