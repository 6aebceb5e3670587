"""Per-API-key rate limiting with GCRA (a token bucket stored as one timestamp per key).

GCRA keeps a single number per bucket, the "theoretical arrival time" (TAT): each allowed
request pushes it ``interval`` seconds forward, and a request is refused while the TAT is more
than ``burst`` intervals ahead of now. That is exactly a token bucket of ``burst`` tokens refilled
at ``rate_per_minute``, but it needs one key and one atomic read-modify-write, so the Redis
version is a short Lua script that every replica and worker shares (Redis's own clock is used,
so replicas with skewed clocks still agree).

Without Redis the same algorithm runs in process (per worker). If Redis fails at run time the
limiter falls back to the in-process buckets for ``retry_s`` and tries Redis again afterwards:
a dead limiter store must never fail a request, only loosen the limit to per-worker for a while.
Failures are counted in ``tailor_ratelimit_errors_total`` and flip ``tailor_redis_up`` to 0.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import redis

from service.cache.redislink import RedisLink
from service.core.metrics import Metrics

# KEYS[1]: bucket key. ARGV: interval seconds, burst. Returns {allowed 0/1, retry-after seconds}.
_GCRA_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return {0, tostring(allow_at - now)}
end
redis.call('SET', KEYS[1], string.format('%.6f', new_tat), 'PX',
           math.max(1, math.ceil((new_tat - now) * 1000)))
return {1, '0'}
"""


@dataclass(frozen=True)
class Decision:
    """Outcome of one check: ``retry_after`` is 0 when allowed, else seconds to wait."""

    allowed: bool
    retry_after: float = 0.0

    @property
    def retry_after_header(self) -> str:
        """Integer seconds for ``Retry-After`` (rounded up, at least 1)."""
        return str(max(1, math.ceil(self.retry_after)))


class LocalLimiter:
    """In-process GCRA buckets (one worker's view; used alone or as the Redis fallback).

    Args:
        rate_per_minute: sustained requests per bucket per minute (> 0).
        burst: requests allowed at once from an idle bucket.
        clock: monotonic seconds (injectable so unit tests need no sleeps).
    """

    PRUNE_AT = 10_000  # buckets; idle ones (TAT in the past) carry no state and are dropped

    def __init__(self, rate_per_minute: int, burst: int, clock=time.monotonic) -> None:
        self.interval, self.burst, self.clock = 60.0 / rate_per_minute, burst, clock
        self._tat: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, bucket: str) -> Decision:
        """Consume one request from ``bucket`` if its budget allows."""
        with self._lock:
            now = self.clock()
            tat = max(self._tat.get(bucket, now), now)
            new_tat = tat + self.interval
            allow_at = new_tat - self.burst * self.interval
            if now < allow_at:
                return Decision(False, allow_at - now)
            self._tat[bucket] = new_tat
            if len(self._tat) > self.PRUNE_AT:
                self._tat = {b: t for b, t in self._tat.items() if t > now}
            return Decision(True)


class RedisLimiter:
    """GCRA buckets in Redis shared by every replica, falling back to ``LocalLimiter``.

    Args:
        link: the worker's Redis client and back-off window (shared with the weight cache);
            while it is open, decisions are local.
        metrics: where store failures are counted.
        rate_per_minute, burst: the bucket shape (same as ``LocalLimiter``).
        prefix: key namespace.
    """

    def __init__(self, link: RedisLink, metrics: Metrics, *, rate_per_minute: int, burst: int,
                 prefix: str = "tailor:ratelimit:") -> None:  # fmt: skip
        self.link = link
        self.script = link.client.register_script(_GCRA_LUA)
        self.local = LocalLimiter(rate_per_minute, burst)
        self.metrics, self.prefix = metrics, prefix
        self.interval, self.burst = 60.0 / rate_per_minute, burst

    def check(self, bucket: str) -> Decision:
        """Shared decision from Redis; the local decision while Redis is failing."""
        if not self.link.available:
            return self.local.check(bucket)
        try:
            key, args = self.prefix + bucket, [self.interval, self.burst]
            allowed, retry = self.script(keys=[key], args=args)
        except redis.RedisError as exc:
            self.link.failed("rate limit (limiting per worker meanwhile)", exc)
            self.metrics.ratelimit_errors.inc()  # after: a scrape seeing it sees redis_up 0
            return self.local.check(bucket)
        self.link.ok()
        return Decision(bool(int(allowed)), float(retry))


def build_limiter(settings, metrics: Metrics, link: RedisLink | None
                  ) -> LocalLimiter | RedisLimiter | None:  # fmt: skip
    """The limiter the settings ask for: None when disabled, Redis-shared when there is Redis."""
    rate, burst = settings.rate_limit_per_minute, settings.rate_limit_burst
    if rate <= 0:
        return None
    if link is None:
        return LocalLimiter(rate, burst)
    return RedisLimiter(link, metrics, rate_per_minute=rate, burst=burst)
