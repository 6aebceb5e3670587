"""Redis tier of the weight cache: safetensors bytes under content-addressed keys, with a TTL.

Values are ``sha256(payload) || payload`` so every read is verified without a SQL round trip;
a corrupt entry is deleted and reported as a miss (the caller rebuilds from the SQL recipe).
Redis is optional and allowed to fail: every error is counted, logged, and turned into a miss,
and after a failure Redis is skipped for the link's ``retry_s`` (``service.cache.redislink``) so
a dead Redis does not add a timeout to every request; caching resumes when Redis returns.
"""

from __future__ import annotations

import hashlib
import logging
from typing import cast

import redis

from service.cache.redislink import RedisLink
from service.core.metrics import Metrics

log = logging.getLogger(__name__)
DIGEST = 32


class RedisWeightCache:
    """Verified, failure-tolerant Redis store of weight blobs.

    Args:
        link: the worker's Redis client and back-off window (shared with the rate limiter).
        metrics: where hits, misses, corruption and errors are counted.
        ttl_s: expiry of each entry.
        prefix: key namespace; ``weights2`` since the bytes carry ``__metadata__`` (migration
            0003): blobs of the old format are never read again and expire by their TTL.
    """

    TIER = "redis"

    def __init__(
        self, link: RedisLink, metrics: Metrics, *, ttl_s: int, prefix: str = "tailor:weights2:"
    ) -> None:
        self.link, self.client = link, link.client
        self.metrics, self.ttl_s, self.prefix = metrics, ttl_s, prefix

    def key(self, recipe_key: str) -> str:
        """The Redis key for a recipe."""
        return self.prefix + recipe_key

    @property
    def available(self) -> bool:
        """False while in the back-off window after a failure."""
        return self.link.available

    def _failed(self, op: str, exc: Exception) -> None:
        # The link goes down before the error is counted: a scrape that sees the count sees
        # tailor_redis_up at 0, unless another request's success has since set it back.
        self.link.failed(f"weight cache {op}", exc)
        self.metrics.cache_errors.labels(self.TIER).inc()

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
        self.link.ok()
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

    def put(
        self, recipe_key: str, payload: bytes | memoryview, sha256: bytes | None = None
    ) -> bool:
        """Store a payload with the TTL; False when Redis is unavailable.

        ``sha256`` is the payload's digest when the caller already has it (hashing 45 MB costs
        ~40 ms of the write-behind thread).

        The entry is digest + payload, written as SET + APPEND in one MULTI/EXEC (atomic: no
        reader sees half an entry) so the 45 MB payload is never concatenated in Python, a copy
        that holds the GIL and stalls the worker's request threads.
        """
        if not self.available:
            return False
        key = self.key(recipe_key)
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.set(key, sha256 or hashlib.sha256(payload).digest(), ex=self.ttl_s)
            pipe.append(key, payload)
            pipe.execute()
        except redis.RedisError as exc:
            self._failed("SET", exc)
            return False
        self.link.ok()
        return True

    def delete(self, recipe_key: str) -> None:
        """Evict one entry (tests and operators use it; failures are only counted)."""
        try:
            self.client.delete(self.key(recipe_key))
        except redis.RedisError as exc:
            self._failed("DEL", exc)
