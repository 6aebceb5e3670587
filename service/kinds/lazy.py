"""Served ResNet-18s built lazily from a state dict (TAPER's synthesized models).

Modules are built on the meta device and filled with ``load_state_dict(assign=True)``, which
skips torchvision's random init (tens of ms per model) and copies nothing.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Mapping

import torch
from torch import nn


@functools.lru_cache(maxsize=64)
def _meta_template(num_classes: int) -> nn.Module:
    """A storage-less ResNet-18 to deep-copy (3x cheaper than constructing one per model)."""
    from model_store.resnet import build_resnet18

    with torch.device("meta"):
        return build_resnet18(num_classes)


def build_module(state: Mapping[str, torch.Tensor], device: torch.device) -> nn.Module:
    """A stock torchvision ResNet-18 holding ``state`` (strict), in eval mode, on ``device``."""
    model = copy.deepcopy(_meta_template(int(state["fc.weight"].shape[0])))
    model.load_state_dict({k: v.to(device) for k, v in state.items()}, strict=True, assign=True)
    return model.requires_grad_(False).eval()


class LazyModule:
    """A synthesized state dict whose ``nn.Module`` is built on first use.

    WHY: a cold ``/personalize`` answers with the recipe row only; building the module
    (deep copy of the meta template + ``load_state_dict``) cost 5–15 ms of its latency. The
    module shares the state's storage (``assign=True``), so holding both costs no extra bytes.
    """

    def __init__(self, state: Mapping[str, torch.Tensor], device: torch.device) -> None:
        self.device = device
        self._state = {k: v.to(device) for k, v in state.items()}  # no copy when already there
        self.nbytes = sum(t.numel() * t.element_size() for t in self._state.values())
        self._module: nn.Module | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the module exists yet (tests, metrics)."""
        return self._module is not None

    @property
    def module(self) -> nn.Module:
        """The module, built once (concurrent first callers wait for one build)."""
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = build_module(self._state, self.device)
        return self._module

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The weights (the same tensors the module holds)."""
        return dict(self._state)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)
