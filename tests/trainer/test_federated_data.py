"""Client splits (domain, Dirichlet) and the frozen-feature cache keyed by backbone hash."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.federated.data import (
    FeatureCache,
    client_arrays,
    dirichlet_clients,
    domain_clients,
)

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]


def test_domain_clients_are_disjoint_60_20_20_and_seeded():
    domains = np.repeat(np.arange(4), 100)
    clients = domain_clients(domains, DOMAINS, seed=1)
    assert [c.name for c in clients] == DOMAINS
    everything = np.concatenate([c.all() for c in clients])
    assert len(everything) == len(set(everything.tolist())) == 400
    for d, c in enumerate(clients):
        assert (domains[c.all()] == d).all()
        assert (len(c.train), len(c.val), len(c.test)) == (60, 20, 20)
        assert not set(c.train) & set(c.test)
    again = domain_clients(np.asarray(DOMAINS)[domains], DOMAINS, seed=1)  # names work too
    assert all(np.array_equal(a.test, b.test) for a, b in zip(clients, again, strict=True))
    other = domain_clients(domains, DOMAINS, seed=2)
    assert not np.array_equal(clients[0].test, other[0].test)


def test_dirichlet_skew_grows_as_alpha_shrinks():
    labels = np.repeat(np.arange(10), 60)

    def skew(alpha):
        clients = dirichlet_clients(labels, 4, alpha, seed=0)
        assert sorted(np.concatenate([c.all() for c in clients]).tolist()) == list(range(600))
        hists = [np.bincount(labels[c.all()], minlength=10) / len(c.all()) for c in clients]
        return np.mean([np.abs(h - 0.1).sum() for h in hists])

    assert skew(0.1) > skew(100.0) + 0.5
    with pytest.raises(ValueError, match="alpha"):
        dirichlet_clients(labels, 4, 0.0, seed=0)


class _Counting:
    """A stand-in backbone with a real fingerprint and a call counter (features = pixel means)."""

    def __init__(self, fingerprint):
        self.fingerprint, self.calls = fingerprint, 0

    def encode_images(self, images, pre_projection=False):
        self.calls += 1
        return images.reshape(len(images), -1).mean(1, keepdims=True).astype(np.float32) + (
            1.0 if pre_projection else 0.0
        )


def test_feature_cache_keys_on_backbone_kind_and_images(tmp_path):
    imgs = np.random.default_rng(0).integers(0, 256, (5, 4, 4, 3), dtype=np.uint8)
    cache, bb = FeatureCache(tmp_path), _Counting("a" * 64)
    first = cache.features(bb, imgs)
    assert np.array_equal(cache.features(bb, imgs), first) and bb.calls == 1
    assert cache.features(bb, imgs, "trunk")[0, 0] == first[0, 0] + 1.0 and bb.calls == 2
    cache.features(_Counting("b" * 64), imgs)  # another backbone: a miss, never stale
    cache.features(bb, imgs[:4])  # other images: a miss
    assert (cache.hits, cache.misses) == (1, 4)
    with pytest.raises(ValueError, match="feature kind"):
        cache.features(bb, imgs, "logits")


def test_client_arrays_follow_the_split_order():
    labels = np.arange(10)
    (c,) = [c for c in domain_clients(np.zeros(10, int), ["only"], seed=0)]
    feats = labels[c.all()].astype(np.float32)[:, None]
    arr = client_arrays(c, feats, labels)
    for which in ("train", "val", "test"):
        assert np.array_equal(arr[f"x_{which}"][:, 0], arr[f"y_{which}"])


def test_report_tables_average_over_seeds_and_clients():
    from trainer.federated.report import tables

    doms = ["a", "b"]
    rows = [{"method": "fedclip", "held_out": "a", "unseen_acc": u, "participant_acc": {"b": p},
             "personal_acc": {"b": p + 0.1}} for u, p in ((0.2, 0.5), (0.4, 0.7))]
    rows += [{"method": "fedclip", "held_out": "b", "unseen_acc": 0.6,
              "participant_acc": {"a": 0.9}, "personal_acc": {}}] * 2
    zero = [{"seed": 0, "acc": {"a": 0.1, "b": 0.3}}]
    md = tables(rows, zero, doms, ["fedclip"])
    t1 = md.split("### Table 2")[0]
    assert "| fedclip | 30.0 ± 10.0 | 60.0 ± 0.0 | 45.0 ± 5.0 |" in t1
    assert "| zero_shot | 10.0 | 30.0 | 20.0 |" in t1
    assert "| fedclip+personal | 70.0 ± 10.0 |" in md
    t3 = md.split("### Table 3")[1]
    assert "| fedclip | 45.0 ± 10.0 | 75.0 ± 0.0 | 60.0 ± 5.0 |" in t3
    assert "| zero_shot | 20.0 | 20.0 | 20.0 |" in t3
