"""StackedBases: packed per-block segments that synthesize bit-identically to per-tensor GEMVs."""

from __future__ import annotations

import pytest
import safetensors.torch
import torch

from model_store.resnet import CLASSIFIER_KEYS, block_of
from model_store.stacked import StackedBases
from model_store.synthesis import stack_bases, synthesize

CLASSES = [9, 0, 4]


@pytest.fixture(scope="module")
def plain(resnet_bases):
    """The unpacked ``key -> [Q, ...]`` layout (takes the per-tensor GEMV path)."""
    return {k: torch.stack([b[k] for b in resnet_bases]) for k in resnet_bases[0]}


def test_views_equal_the_stacked_tensors_in_key_order(plain):
    packed = StackedBases(plain)
    assert list(packed) == list(plain) and len(packed) == len(plain)
    for key, value in plain.items():
        assert packed[key].shape == value.shape and torch.equal(packed[key], value), key


@pytest.mark.parametrize("cap", [1 << 20, 16 << 20, 1 << 40])
def test_segments_cover_each_packable_key_once_within_one_block_and_the_cap(plain, cap):
    packed = StackedBases(plain, max_segment_bytes=cap)
    keys = [key for seg in packed.segments for key, *_ in seg.entries]
    packable = [k for k, v in plain.items() if v.is_floating_point() and k not in CLASSIFIER_KEYS]
    assert keys == packable
    assert set(packed.loose) == set(plain) - set(packable)
    for seg in packed.segments:
        assert {block_of(key) for key, *_ in seg.entries} == {seg.block}
        n = seg.buffer.shape[1]
        single = len(seg.entries) == 1  # one tensor larger than the cap gets its own segment
        assert single or n * seg.buffer.element_size() <= cap
    if cap == 1 << 40:  # uncapped: exactly one segment per block
        assert [seg.block for seg in packed.segments] == [0, 1, 2, 3]


def test_packed_synthesis_is_bit_identical_to_per_tensor_gemv(plain):
    """Recorded sha256 digests (ETags) of existing recipes must survive the faster layout."""
    mixers = torch.softmax(torch.randn(4, 3, generator=torch.Generator().manual_seed(3)), -1)
    with torch.no_grad():
        ref = synthesize(plain, mixers, CLASSES)
        for cap in (1 << 20, 16 << 20):
            out = synthesize(StackedBases(plain, max_segment_bytes=cap), mixers, CLASSES)
            assert list(out) == list(ref)
            for key in ref:
                assert out[key].dtype == ref[key].dtype and torch.equal(out[key], ref[key]), key
            assert safetensors.torch.save(out) == safetensors.torch.save(ref)


def test_outputs_are_disjoint_fresh_memory(resnet_bases):
    stacked = stack_bases(resnet_bases)
    assert isinstance(stacked, StackedBases)
    out = synthesize(stacked, torch.full((4, 3), 1 / 3), CLASSES)
    bases_ptrs = {t.untyped_storage().data_ptr() for t in stacked.storage()}  # loose ones too
    spans = []
    for t in out.values():
        assert t.untyped_storage().data_ptr() not in bases_ptrs
        start = t.data_ptr()
        spans.append((start, start + t.numel() * t.element_size()))
    spans.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


def test_bases_that_require_grad_are_refused(plain):
    with pytest.raises(ValueError, match="requires grad"):
        StackedBases({k: v.float().requires_grad_() if v.is_floating_point() else v
                      for k, v in plain.items()})  # fmt: skip
