"""Behaviour of the fast paths (issue 6): lazily built modules and the one-hop /predict route.

No timings here (benchmarks/service.py measures them): these tests pin that the faster paths
give the same bytes, outputs, errors and cache accounting as the paths they replaced.
"""

from __future__ import annotations

import hashlib
import threading
import time

import pytest
import torch
from service_testkit import b64, images, png

from model_store.images import to_batch
from model_store.resnet import build_resnet18
from service.cache.tensorbytes import serialize
from service.core.lru import ModuleLRU, module_nbytes
from service.core.metrics import Metrics
from service.core.problems import Problem
from service.kinds.lazy import LazyModule, build_module

CPU = torch.device("cpu")


def _state(num_classes: int = 3, seed: int = 0) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    net = build_resnet18(num_classes)
    for m in net.modules():  # non-trivial BN statistics, so eval-mode semantics matter
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def test_lazy_module_builds_once_on_first_use_and_matches_the_eager_build():
    state = _state()
    lazy = LazyModule(state, CPU)
    assert not lazy.built  # storing a synthesized model builds nothing
    assert lazy.nbytes == module_nbytes(build_module(state, CPU))
    assert serialize(lazy.state_dict()) == serialize(build_module(state, CPU).state_dict())
    assert not lazy.built  # serialising needs no module either

    seen: list[torch.nn.Module] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy.module)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lazy.built and all(m is seen[0] for m in seen)  # one build for concurrent callers
    assert not lazy.module.training

    x = to_batch(images(4, seed=1))
    with torch.inference_mode():
        eager = build_module(state, CPU)(x)
        assert torch.equal(lazy(x), eager)  # bit-identical outputs
    # The module holds the state's own storage: building it copied no weights.
    built = lazy.module.state_dict()
    assert all(built[k].data_ptr() == lazy.state_dict()[k].data_ptr() for k in built)


def test_lru_accounts_lazy_modules_like_built_ones():
    metrics = Metrics()
    a, b = LazyModule(_state(seed=1), CPU), LazyModule(_state(seed=2), CPU)
    lru = ModuleLRU(capacity_bytes=int(1.5 * a.nbytes), metrics=metrics)
    lru.put("a", a)
    assert lru.nbytes == a.nbytes == metrics.memory_bytes._value.get()
    lru.put("b", b)  # evicts a
    assert "a" not in lru and lru.get("b") is b and lru.nbytes == b.nbytes


def test_cold_personalize_defers_the_module_and_predict_builds_it(live):
    p = live.personalizer
    model = live.http.post("/v1/personalize", json={"classes": ["horse", "cat", "dog"]}).json()
    assert model["cache"] == "synthesized"
    entry = p.lru.get(p.get(model["id"]).recipe_key)
    assert isinstance(entry, LazyModule) and not entry.built

    imgs = images(5, seed=3)
    resp = live.http.post(model["predict_url"], json={"images": [b64(png(im)) for im in imgs],
                                                      "top_k": 2})  # fmt: skip
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    body = resp.json()
    assert entry.built and body["model_id"] == model["id"] and len(body["predictions"]) == 5
    with torch.inference_mode():
        probs = entry.module(to_batch(imgs)).softmax(dim=1)
    for row, pr in zip(body["predictions"], probs, strict=True):
        assert [r["label"] for r in row] == [model["classes"][int(i)] for i in pr.topk(2)[1]]
        assert abs(row[0]["probability"] - float(pr.max())) < 1e-6

    p.flush()  # the write-behind serialised the state itself: same digest as the module's
    recorded = live.http.get(f"/v1/models/{model['id']}").json()["weights_sha256"]
    assert live.http.get(model["weights_url"]).headers["etag"] == f'"{recorded}"'
    row = p.get(model["id"])
    expected = bytes(p.kinds.of(row).serialize(row, entry, "fp32"))  # the state + its metadata
    assert recorded == hashlib.sha256(expected).hexdigest()
    assert live.http.get(model["weights_url"]).content == expected


def test_predict_answers_404_for_a_missing_model_before_judging_the_body(live):
    url = f"/v1/models/{'0' * 32}/predict"
    assert live.http.post(url, json={"images": ["@@notbase64@@"]}).status_code == 404
    assert live.http.post(url, content=b"x", headers={"content-type": "text/plain"}).status_code \
        == 404  # fmt: skip
    model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
    bad = live.http.post(model["predict_url"], json={"images": ["@@notbase64@@"]})
    assert bad.status_code == 400 and "images[0]" in bad.json()["detail"]


def test_rows_are_cached_only_once_their_digest_is_recorded(live):
    p = live.personalizer
    model = live.http.post("/v1/personalize", json={"classes": ["cat", "horse"]}).json()
    first = p.get(model["id"])
    if first.weights_sha256 is None:  # write-behind pending: the row may still change
        assert p.get(model["id"]) is not first
    p.flush()
    row = p.get(model["id"])
    assert row.weights_sha256 is not None and p.get(model["id"]) is row  # immutable: cached
    meta = live.http.get(f"/v1/models/{model['id']}").json()
    assert meta["weights_sha256"] == row.weights_sha256
    with pytest.raises(Problem) as missing:
        p.get("f" * 32)
    assert missing.value.status == 404


def test_a_recorded_digest_means_the_bytes_are_already_in_redis(live):
    """Clients and the benchmarks read "write-behind finished" off ``weights_sha256`` (while
    Redis is up: a failed put still lets the digest be recorded)."""
    p = live.personalizer
    model = live.http.post("/v1/personalize", json={"classes": ["dog", "horse"]}).json()
    deadline = time.monotonic() + 30
    while (sha := live.http.get(f"/v1/models/{model['id']}").json()["weights_sha256"]) is None:
        assert time.monotonic() < deadline, "write-behind never recorded a digest"
        time.sleep(0.002)
    payload = p.redis.get(p.get(model["id"]).recipe_key)  # verifies the entry's own digest
    assert payload is not None and hashlib.sha256(payload).hexdigest() == sha
    p.flush()


def test_a_digest_lost_to_a_database_failure_is_recorded_on_the_next_redis_hit(live, monkeypatch):
    """Redis is written before SQL; if the digest insert fails, a later hit must repair it."""
    from service.core import crud

    p = live.personalizer

    def db_down(*args, **kwargs):
        raise RuntimeError("database unavailable")

    with monkeypatch.context() as m:
        m.setattr(crud, "set_weights_digest", db_down)
        model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog", "horse"]}).json()
        p.flush()
    url = f"/v1/models/{model['id']}"
    assert live.http.get(url).json()["weights_sha256"] is None
    assert p.redis.get(p.get(model["id"]).recipe_key) is not None  # the bytes did land
    body = live.http.get(model["weights_url"]).content  # served from Redis: a hit
    p.flush()
    assert live.http.get(url).json()["weights_sha256"] == hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize("weights", [None, [0.5, 0.25, 0.25]])
def test_mixers_computed_once_give_the_same_bits_as_the_bundles_own_path(make_settings, tmp_path,
                                                                         weights):  # fmt: skip
    """A cold request computes the mixers once and passes them to synthesis; a rebuild from
    the recipe computes them again. Both must equal ``TaperBundle.personalize`` bit for bit
    (recorded digests/ETags depend on it), also for refined (class-weighted) recipes."""
    from service.kinds.taper import TaperKind as Runtime

    runtime = Runtime.load(make_settings(f"sqlite:///{tmp_path}/t.db"), Metrics())
    recipe = runtime.recipe([4, 0, 9], domain=None, method="taper", class_weights=weights)
    mixers = runtime.mixers(recipe)
    emb = runtime.task_embedding(recipe) if weights is not None else None
    with torch.no_grad():
        ref, ref_mixers = runtime.bundle.personalize([4, 0, 9], method="taper", embedding=emb)
    assert torch.equal(mixers, ref_mixers)
    for got in (runtime.synthesize(recipe, mixers), runtime.synthesize(recipe)):
        assert serialize(got) == serialize(ref)
    assert runtime.mixers(runtime.recipe([4, 0], domain=None, method="selection")) is None
