"""Prometheus metrics, one registry per app so several apps (tests, workers) never collide.

With ``--workers N`` each worker is its own process; a scrape reaches one of them, so per-process
counters would jump between scrapes. ``tailor serve`` then runs prometheus_client's multiprocess
mode (``PROMETHEUS_MULTIPROC_DIR``, set before the workers start): every worker writes its values
to memory-mapped files there, and :meth:`Metrics.render` aggregates all workers' files, so any
worker answers with the same totals. Gauges say how workers combine (``livesum`` for cache
sizes, ``livemin`` for "Redis is up").

What to alert on: ``tailor_cache_errors_total{tier="redis"}`` rising (Redis down: requests
still succeed by synthesizing, at higher latency), 5xx in ``tailor_request_seconds``, and
``tailor_memory_cache_bytes`` pinned at its budget with a low hit rate (budget too small),
``tailor_rate_limited_total`` rising (a client over its quota) and
``tailor_ratelimit_errors_total`` rising (limits are per worker while Redis is down).
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The service's collectors on a private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.request_seconds = Histogram(
            "tailor_request_seconds",
            "HTTP request latency by route template, method and status",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.synthesis_seconds = Histogram(
            "tailor_synthesis_seconds",
            "Time to synthesize one personalized model from the bases",
            ["method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.cache_requests = Counter(
            "tailor_cache_requests_total",
            "Cache lookups per tier and result (hit, miss, corrupt)",
            ["tier", "result"],
            registry=r,
        )
        self.cache_errors = Counter(
            "tailor_cache_errors_total",
            "Cache backend failures per tier (e.g. Redis unreachable)",
            ["tier"],
            registry=r,
        )
        self.memory_bytes = Gauge(
            "tailor_memory_cache_bytes", "Bytes of ready models held in process (all workers)",
            registry=r, multiprocess_mode="livesum",
        )  # fmt: skip
        self.memory_models = Gauge(
            "tailor_memory_cache_models", "Ready models held in process (all workers)",
            registry=r, multiprocess_mode="livesum",
        )  # fmt: skip
        self.redis_up = Gauge(
            "tailor_redis_up", "1 if the last Redis call succeeded (in every worker), 0 otherwise",
            registry=r, multiprocess_mode="livemin",
        )  # fmt: skip
        self.syntheses = Counter(
            "tailor_syntheses_total", "Models synthesized (cache misses on every tier)", registry=r
        )
        self.rate_limited = Counter(
            "tailor_rate_limited_total", "Requests refused with 429 by the per-key rate limit",
            ["principal"], registry=r,
        )  # fmt: skip
        self.ratelimit_errors = Counter(
            "tailor_ratelimit_errors_total",
            "Rate-limit store (Redis) failures; limits fall back to per-worker buckets",
            registry=r,
        )

    def render(self) -> bytes:
        """Prometheus text exposition: of every worker in multiprocess mode, else this registry."""
        if not multiprocess_dir():
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)


def multiprocess_dir() -> str | None:
    """The multiprocess directory when this process runs in that mode (set at start-up)."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def worker_exited(pid: int) -> None:
    """Drop a stopping worker's live gauges (its counters stay: totals must not go down)."""
    if multiprocess_dir():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
