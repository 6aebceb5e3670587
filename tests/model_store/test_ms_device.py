"""pick_device: automatic choice, TAILOR_DEVICE override, clear errors for bad values."""

import pytest
import torch

from model_store.device import pick_device


def test_auto_picks_cuda_when_available_else_cpu(monkeypatch):
    monkeypatch.delenv("TAILOR_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert pick_device().type == expected
    assert pick_device("auto").type == expected


def test_env_override_and_argument_precedence(monkeypatch):
    monkeypatch.setenv("TAILOR_DEVICE", "cpu")
    assert pick_device() == torch.device("cpu")
    monkeypatch.setenv("TAILOR_DEVICE", "not-a-device")
    assert pick_device("cpu") == torch.device("cpu")  # explicit argument wins over the env


@pytest.mark.parametrize("value", ["tpu", "banana", "cuda:x", "meta"])
def test_invalid_env_value_is_a_clear_value_error(monkeypatch, value):
    monkeypatch.setenv("TAILOR_DEVICE", value)
    with pytest.raises(ValueError, match="TAILOR_DEVICE"):
        pick_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_request_without_cuda_fails_loudly():
    with pytest.raises(ValueError, match="CUDA is unavailable"):
        pick_device("cuda")
