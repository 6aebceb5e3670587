"""Unit tests of service parts with real backends: Redis tier, LRU, single-flight, images, keys."""

from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest
import torch
from PIL import Image
from service_testkit import declared_bomb

from service.api.ratelimit import RedisLimiter
from service.cache.redislink import RedisLink
from service.cache.singleflight import SingleFlight
from service.cache.tensorbytes import deserialize, serialize
from service.cache.weight_cache import RedisWeightCache
from service.core import auth, imaging
from service.core.lru import BoundedLRU, ModuleLRU, module_nbytes
from service.core.metrics import Metrics
from service.core.problems import Problem


def _count(metrics: Metrics, tier: str, result: str) -> float:
    return metrics.cache_requests.labels(tier, result)._value.get()


def test_redis_tier_roundtrip_corruption_and_outage(private_redis):
    metrics = Metrics()
    link = RedisLink(private_redis.url, metrics, retry_s=0.2, timeout_s=0.5)
    cache = RedisWeightCache(link, metrics, ttl_s=60)
    payload = bytes(range(256)) * 100
    assert cache.get("k") is None and _count(metrics, "redis", "miss") == 1
    assert cache.put("k", payload)
    assert cache.get("k") == payload and _count(metrics, "redis", "hit") == 1
    assert 0 < cache.client.ttl(cache.key("k")) <= 60
    blob = bytearray(cache.client.get(cache.key("k")))
    blob[-1] ^= 0xFF  # flip a payload bit: the stored digest no longer matches
    cache.client.set(cache.key("k"), bytes(blob))
    assert cache.get("k") is None and _count(metrics, "redis", "corrupt") == 1
    assert cache.client.exists(cache.key("k")) == 0  # corrupt entry was deleted

    private_redis.stop()
    assert cache.get("k") is None and not cache.put("k", payload)  # no exception
    assert metrics.cache_errors.labels("redis")._value.get() >= 1
    assert metrics.redis_up._value.get() == 0
    private_redis.start()
    time.sleep(0.3)  # past the back-off window
    assert cache.put("k", payload) and cache.get("k") == payload
    assert metrics.redis_up._value.get() == 1


def test_one_redis_link_backs_off_for_cache_and_limiter_alike(private_redis):
    """A failure seen by the rate limiter opens the window for the weight cache too (one Redis)."""
    metrics = Metrics()
    link = RedisLink(private_redis.url, metrics, retry_s=0.3, timeout_s=0.5)
    cache = RedisWeightCache(link, metrics, ttl_s=60)
    limiter = RedisLimiter(link, metrics, rate_per_minute=600, burst=5)
    assert limiter.check("a").allowed and cache.put("k", b"x" * 10)
    private_redis.stop()
    assert limiter.check("a").allowed  # local fallback, no exception
    assert metrics.ratelimit_errors._value.get() == 1 and not link.available
    assert cache.get("k") is None and _count(metrics, "redis", "skipped") == 1  # not even tried
    assert metrics.cache_errors.labels("redis")._value.get() == 0
    private_redis.start()
    time.sleep(0.4)  # past the window: the next call reaches Redis and closes it
    assert cache.put("k", b"y" * 10) and link.available and cache.get("k") == b"y" * 10
    assert metrics.redis_up._value.get() == 1


def _linear(n: int) -> torch.nn.Module:
    return torch.nn.Linear(n, n, bias=False)  # n*n*4 bytes


def test_lru_is_bounded_in_bytes_and_evicts_least_recent():
    metrics = Metrics()
    size = module_nbytes(_linear(16))
    lru = ModuleLRU(capacity_bytes=int(2.5 * size), metrics=metrics)
    lru.put("a", _linear(16))
    lru.put("b", _linear(16))
    assert lru.get("a") is not None  # a is now most recent
    lru.put("c", _linear(16))
    assert "b" not in lru and "a" in lru and "c" in lru
    assert lru.nbytes == 2 * size == metrics.memory_bytes._value.get()
    lru.put("huge", _linear(64))  # larger than the whole budget: served, never cached
    assert "huge" not in lru and lru.nbytes == 2 * size


def test_row_cache_forgets_entries_after_its_ttl():
    """A DELETE on another replica must take effect here once the TTL has passed."""
    rows: BoundedLRU[str] = BoundedLRU(4, ttl_s=0.2, name="rows")
    rows.put("a", "row a")
    assert rows.get("a") == "row a"
    time.sleep(0.3)
    assert rows.get("a") is None and "a" not in rows
    for key in "bcdef":  # bounded by entry count as well
        rows.put(key, key)
    assert len(rows) == 4 and rows.get("b") is None


def test_single_flight_runs_identical_concurrent_work_once():
    flight: SingleFlight[int] = SingleFlight()
    calls, gate = [], threading.Event()

    def work():
        calls.append(1)
        gate.wait(5)
        return 42

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(flight.do("k", work))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(r[0] for r in results) == [42] * 8
    assert sum(shared for _, shared in results) == 7


def test_serialize_is_deterministic_and_fp16_casts_only_floats():
    state = {"w": torch.randn(4, 4), "n": torch.tensor(3, dtype=torch.long), "a": torch.ones(2)}
    reordered = {k: state[k].clone() for k in reversed(list(state))}
    assert serialize(state) == serialize(reordered)
    half = deserialize(serialize(state, "fp16"))
    assert half["w"].dtype == torch.float16 and half["n"].dtype == torch.long


def _png(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def test_decode_image_limits():
    kw = {"max_pixels": 256 * 256, "max_bytes": 1 << 20}
    rgb = np.random.default_rng(0).integers(0, 255, (40, 40, 3), dtype=np.uint8)
    assert imaging.decode_image(_png(rgb), name="ok", **kw).shape == (32, 32, 3)
    assert imaging.decoded_pixels(_png(rgb), name="ok", **kw) == 40 * 40
    with pytest.raises(Problem) as bomb:
        imaging.decode_image(declared_bomb(50_000, 50_000), name="bomb", **kw)
    assert bomb.value.status == 400 and bomb.value.slug == "decompression-bomb"
    real = np.zeros((300, 300, 3), np.uint8)  # a real image just over the pixel limit
    with pytest.raises(Problem, match="exceeds the limit"):
        imaging.decode_image(_png(real), name="big", **kw)
    for bad in (b"", b"not an image", _png(rgb)[:60]):
        with pytest.raises(Problem) as err:
            imaging.decode_image(bad, name="bad", **kw)
        assert err.value.status == 400
    with pytest.raises(Problem):
        imaging.decode_base64("###", name="b64")


def test_keys_never_contain_secret_in_hash_and_admin_compare():
    new = auth.generate_key()
    key_id, secret = auth.split_key(new.plaintext)
    assert key_id == new.key_id and secret not in new.secret_hash
    assert auth.verify_secret(secret, salt=new.salt, secret_hash=new.secret_hash)
    assert not auth.verify_secret(secret + "x", salt=new.salt, secret_hash=new.secret_hash)
    assert auth.is_admin_key("s3cret", "s3cret") and not auth.is_admin_key("s3cret", None)
    assert auth.split_key("Bearer nonsense") is None


def test_write_behind_waits_by_key_and_swallows_failures(caplog):
    from service.cache.writebehind import WriteBehind

    writer, gate, done = WriteBehind(), threading.Event(), []
    writer.submit("a", lambda: (gate.wait(5), done.append("a")))
    writer.submit("b", lambda: 1 / 0)  # a failing cache write is logged, never raised
    gate.set()
    writer.wait("a")
    assert done == ["a"]
    writer.flush()
    assert "write-behind b failed" in caplog.text
    writer.close()


def test_write_behind_holds_jobs_until_the_response_without_blocking_the_writer():
    import contextvars
    import time

    from service.cache.writebehind import RESPONSE_GATE, ResponseGate, WriteBehind

    writer, done = WriteBehind(), []
    response = ResponseGate()

    def request() -> None:  # what a route does while its response is still being made
        RESPONSE_GATE.set(response)
        writer.submit("a", lambda: done.append("a"))

    contextvars.copy_context().run(request)
    writer.submit("b", lambda: done.append("b"))  # not held: the writer thread is free for it
    deadline = time.monotonic() + 5
    while "b" not in done and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done == ["b"], "a held job blocked the writer, or ran before its response was sent"
    response.open()
    writer.wait("a")
    assert done == ["b", "a"]

    slow = ResponseGate()  # another request's response is slow: whoever waits opens its gate
    contextvars.copy_context().run(lambda: (RESPONSE_GATE.set(slow),
                                            writer.submit("c", lambda: done.append("c"))))
    t0 = time.perf_counter()
    writer.wait("c")
    assert done[-1] == "c" and time.perf_counter() - t0 < 1.0
    writer.close()
