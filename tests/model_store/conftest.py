"""Fixtures for model_store tests: small real ResNet-18 bases, the real offline text encoder."""

from __future__ import annotations

import pytest
import torch

from model_store.testing import random_resnet_state


@pytest.fixture(scope="session")
def text_encoder():
    """The bundled MiniLM, loaded once per session (a few seconds on 2 cores)."""
    from model_store.text import TextEncoder

    return TextEncoder(device="cpu")


@pytest.fixture(scope="session")
def resnet_bases() -> list[dict[str, torch.Tensor]]:
    """Three distinct random ResNet-18 state dicts (10 classes) with distinct BN statistics."""
    gen = torch.Generator().manual_seed(1234)
    with torch.random.fork_rng(devices=[]):
        return [random_resnet_state(10, gen) for _ in range(3)]
