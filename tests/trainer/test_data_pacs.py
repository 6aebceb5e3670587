"""Tailor-PACS builder: balance, splits disjoint by source, determinism, cache, public set."""

from __future__ import annotations

import os

import numpy as np
import pytest

from trainer.data import pacs
from trainer.data.catalogue import DOMAINS


def test_tiny_shape_and_balance(tiny_pacs):
    n = len(tiny_pacs)
    assert tiny_pacs.images.shape == (n, 32, 32, 3) and tiny_pacs.images.dtype == np.uint8
    assert len(tiny_pacs.class_names) == 20  # digits + animals: no apt package needed
    cells = np.bincount(tiny_pacs.labels * 4 + tiny_pacs.domains)
    assert cells.tolist() == [8] * 80  # 32 per class, balanced over the 4 domains
    for split in range(3):
        per_cell = np.bincount((tiny_pacs.labels * 4 + tiny_pacs.domains)[tiny_pacs.split == split])
        assert len(set(per_cell.tolist())) == 1  # every (class, domain) cell split alike
    assert np.bincount(tiny_pacs.split).tolist() == [400, 80, 160]


def test_each_source_image_used_once_so_splits_are_disjoint(tiny_pacs):
    ids = tiny_pacs.source_ids
    assert len(np.unique(ids)) == len(ids)
    sets = [set(ids[tiny_pacs.indices(s)]) for s in pacs.SPLITS]
    assert not (sets[0] & sets[1]) and not (sets[0] & sets[2]) and not (sets[1] & sets[2])


def test_same_seed_identical_other_seed_different(tiny_pacs, tmp_path):
    again = pacs.build_pacs(tmp_path / "a", size="tiny", seed=0)  # fresh dir: a real rebuild
    assert again.fingerprint == tiny_pacs.fingerprint
    for name in ("images", "labels", "domains", "source_ids", "split"):
        assert np.array_equal(getattr(again, name), getattr(tiny_pacs, name))
    other = pacs.build_pacs(tmp_path / "b", size="tiny", seed=1, per_class=8)
    assert other.fingerprint != tiny_pacs.fingerprint
    assert not np.array_equal(other.source_ids, tiny_pacs.source_ids[: len(other)])


def test_cache_hit_returns_same_fingerprint_without_rewriting(tiny_pacs, tiny_data_dir):
    path = tiny_data_dir / "tailor-pacs-tiny-n32-s0.npz"
    mtime = os.stat(path).st_mtime_ns
    loaded = pacs.build_pacs(tiny_data_dir, size="tiny", seed=0)
    assert loaded.fingerprint == tiny_pacs.fingerprint
    assert os.stat(path).st_mtime_ns == mtime
    assert np.array_equal(loaded.images, tiny_pacs.images)


def test_corrupted_cache_is_rebuilt(tmp_path):
    first = pacs.build_pacs(tmp_path, size="tiny", seed=2, per_class=4)
    path = tmp_path / "tailor-pacs-tiny-n4-s2.npz"
    path.write_bytes(path.read_bytes()[:-100])
    second = pacs.build_pacs(tmp_path, size="tiny", seed=2, per_class=4)
    assert second.fingerprint == first.fingerprint


def test_public_set_is_disjoint_from_every_pacs_pool(tiny_pacs, tiny_data_dir):
    public = pacs.build_public(tiny_data_dir, size="tiny")
    assert public.images.shape[1:] == (28, 28) and public.images.dtype == np.uint8
    assert not set(public.source_ids) & set(tiny_pacs.source_ids)
    for group in ("digit", "animal"):
        for pool, public_pool in pacs.class_pools(group):
            assert len(pool) == pacs.PACS_POOL and not set(pool) & set(public_pool)
    animals = pacs.build_public(tiny_data_dir, per_class=5000, groups=("animal",))
    assert np.bincount(animals.labels).tolist() == [200] * 10  # 1000 - PACS_POOL reserved


def test_bad_parameters_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown size"):
        pacs.build_pacs(tmp_path, size="huge")
    with pytest.raises(ValueError, match="per_class"):
        pacs.build_pacs(tmp_path, size="tiny", per_class=pacs.PACS_POOL + 1)
    with pytest.raises(ValueError, match="unknown groups"):
        pacs.build_public(tmp_path, groups=("plants",))


def test_domain_names_default(tiny_pacs):
    assert tiny_pacs.domain_names == DOMAINS
    with pytest.raises(ValueError, match="unknown split"):
        tiny_pacs.indices("holdout")


def test_large_pool_is_everything_the_default_public_build_leaves_out(tmp_path):
    """Issue 14 §5: `large` adds every public image of a class that the foundation's public
    build (seed 0, 2,000 per class) does not take, and none that it takes. Checked against the
    ids an actual public build holds (digits, which come first, keep their class indices)."""
    from trainer.data.pacs import build_public, class_pools, large_pool

    public_build = build_public(tmp_path, groups=("digit",))
    pools = class_pools("digit")
    for c, big in enumerate(large_pool("digit")):
        pacs, public = pools[c]
        taken = public_build.source_ids[public_build.labels == c] % 1_000_000
        assert len(taken) == 2000 and len(np.intersect1d(big, taken)) == 0
        assert set(big) == set(pacs) | (set(public) - set(taken))
        assert len(big) == len(set(big)) > 4000  # ~4,100-5,900 digits per class
