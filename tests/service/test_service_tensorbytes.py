"""service.cache.tensorbytes: the GIL-friendly writer must produce safetensors' own bytes.

Recorded digests and ETags were computed from ``safetensors.torch.save`` output, and replicas
on either code path must agree, so every check here is byte equality with the library.
"""

from __future__ import annotations

import hashlib

import pytest
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from model_store.resnet import build_resnet18
from service.cache import tensorbytes


def _state(num_classes: int, seed: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    return {k: v.detach().clone() for k, v in build_resnet18(num_classes).state_dict().items()}


@pytest.mark.parametrize("num_classes", [3, 7])
def test_serialize_equals_safetensors_save_fp32_and_fp16(num_classes):
    state = _state(num_classes, seed=num_classes)
    assert bytes(tensorbytes.serialize(state)) == st_save(state)
    half = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    assert bytes(tensorbytes.serialize(state, "fp16")) == st_save(half)


def test_serialize_reuses_the_cached_header_for_new_values_of_one_layout():
    a, b = _state(4, seed=1), _state(4, seed=2)
    assert bytes(tensorbytes.serialize(a)) == st_save(a)
    assert bytes(tensorbytes.serialize(b)) == st_save(b)  # same layout, other data
    odd = {"z": torch.arange(5, dtype=torch.int64), "a": torch.randn(2, 3), "e": torch.empty(0)}
    assert bytes(tensorbytes.serialize(odd)) == st_save(odd)  # ints, 0-element, name order


def test_allocate_gives_views_whose_contents_are_the_file():
    state = _state(6, seed=3)
    payload, views = tensorbytes.allocate([(k, v.dtype, tuple(v.shape)) for k, v in state.items()])
    for key, view in views.items():
        view.copy_(state[key])
    assert bytes(payload) == st_save(state)
    assert hashlib.sha256(payload).hexdigest() == hashlib.sha256(st_save(state)).hexdigest()
    loaded = tensorbytes.deserialize(payload)
    assert loaded.keys() == state.keys() and all(torch.equal(loaded[k], state[k]) for k in state)


def test_deserialize_equals_safetensors_load_and_falls_back_for_other_dtypes():
    state = _state(5, seed=4) | {"empty": torch.empty(0, 3), "flag": torch.tensor(True)}
    for dtype in ("fp32", "fp16"):
        blob = bytes(tensorbytes.serialize(state, dtype))
        got, ref = tensorbytes.deserialize(blob), st_load(blob)
        assert got.keys() == ref.keys()
        for key, t in ref.items():
            assert got[key].dtype == t.dtype and got[key].shape == t.shape
            assert torch.equal(got[key], t), key
    odd = {"w": torch.randn(4, 4).to(torch.bfloat16), "n": torch.arange(3)}  # no numpy bf16
    got = tensorbytes.deserialize(st_save(odd))
    assert got["w"].dtype == torch.bfloat16 and torch.equal(got["w"], odd["w"])
    with pytest.raises(ValueError, match="bfloat16"):
        tensorbytes.serialize(odd)
