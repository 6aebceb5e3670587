"""Redis tier of the weight cache: safetensors bytes under content-addressed keys, with a TTL.

Values are ``sha256(payload) || payload`` so every read is verified without a SQL round trip;
a corrupt entry is deleted and reported as a miss (the caller rebuilds from the SQL recipe).
Redis is optional and allowed to fail: every error is counted, logged, and turned into a miss,
and after a failure Redis is skipped for ``retry_s`` so a dead Redis does not add a timeout to
every request. redis-py reconnects by itself, so caching resumes when Redis returns.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import cast

import redis

from service.metrics import Metrics

log = logging.getLogger(__name__)
DIGEST = 32


class RedisWeightCache:
    """Verified, failure-tolerant Redis store of weight blobs.

    Args:
        url: Redis URL.
        metrics: where hits, misses, corruption and errors are counted.
        ttl_s: expiry of each entry.
        retry_s: how long to skip Redis after a failure.
        timeout_s: socket connect/read timeout, so a hung Redis cannot stall requests.
        prefix: key namespace.
    """

    TIER = "redis"

    def __init__(
        self,
        url: str,
        metrics: Metrics,
        *,
        ttl_s: int,
        retry_s: float = 2.0,
        timeout_s: float = 1.0,
        prefix: str = "tailor:weights:",
    ) -> None:
        self.client = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        self.metrics, self.ttl_s, self.retry_s, self.prefix = metrics, ttl_s, retry_s, prefix
        self._down_until = 0.0
        self._lock = threading.Lock()

    def key(self, recipe_key: str) -> str:
        """The Redis key for a recipe."""
        return self.prefix + recipe_key

    @property
    def available(self) -> bool:
        """False while in the back-off window after a failure."""
        return time.monotonic() >= self._down_until

    def _failed(self, op: str, exc: Exception) -> None:
        with self._lock:
            first = self._down_until == 0.0
            self._down_until = time.monotonic() + self.retry_s
        self.metrics.cache_errors.labels(self.TIER).inc()
        self.metrics.redis_up.set(0)
        (log.warning if first else log.debug)("redis %s failed (%s); serving without it", op, exc)

    def _ok(self) -> None:
        if self._down_until:
            log.info("redis is reachable again; weight caching resumed")
        self._down_until = 0.0
        self.metrics.redis_up.set(1)

    def get(self, recipe_key: str) -> bytes | None:
        """Verified payload, or None on miss, corruption, or Redis failure."""
        if not self.available:
            self.metrics.cache_requests.labels(self.TIER, "skipped").inc()
            return None
        try:
            blob = cast(bytes | None, self.client.get(self.key(recipe_key)))
        except redis.RedisError as exc:
            self._failed("GET", exc)
            return None
        self._ok()
        if blob is None:
            self.metrics.cache_requests.labels(self.TIER, "miss").inc()
            return None
        payload = blob[DIGEST:]
        if len(blob) < DIGEST or hashlib.sha256(payload).digest() != blob[:DIGEST]:
            log.warning("corrupt redis entry for %s: deleting and rebuilding", recipe_key)
            self.metrics.cache_requests.labels(self.TIER, "corrupt").inc()
            self.delete(recipe_key)
            return None
        self.metrics.cache_requests.labels(self.TIER, "hit").inc()
        return payload

    def put(self, recipe_key: str, payload: bytes | memoryview) -> bool:
        """Store a payload with the TTL; False when Redis is unavailable.

        The entry is digest + payload, written as SET + APPEND in one MULTI/EXEC (atomic: no
        reader sees half an entry) so the 45 MB payload is never concatenated in Python, a copy
        that holds the GIL and stalls the worker's request threads.
        """
        if not self.available:
            return False
        key = self.key(recipe_key)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.set(key, hashlib.sha256(payload).digest(), ex=self.ttl_s)
            pipe.append(key, payload)
            pipe.execute()
        except redis.RedisError as exc:
            self._failed("SET", exc)
            return False
        self._ok()
        return True

    def delete(self, recipe_key: str) -> None:
        """Evict one entry (tests and operators use it; failures are only counted)."""
        try:
            self.client.delete(self.key(recipe_key))
        except redis.RedisError as exc:
            self._failed("DEL", exc)

    def ping(self) -> bool:
        """True if Redis answers now (readiness reports it; never raises)."""
        try:
            ok = bool(self.client.ping())
        except redis.RedisError:
            self.metrics.redis_up.set(0)
            return False
        self._ok()
        return ok

    def close(self) -> None:
        """Release the connection pool."""
        self.client.close()
