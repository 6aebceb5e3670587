"""Where anytime clients train: the model on the configured device, batches following it,
exchanged tensors always on the CPU, and Ray sharing GPUs among simulated clients. Runs on
every device this machine has (the CPU here; CUDA too on a GPU machine)."""

from __future__ import annotations

import argparse
import copy

import numpy as np
import pytest
import torch

from model_store.anytime import AnytimeViT
from model_store.vit import reinit_vit, vit_vision_cfg
from trainer.anytime.experiment import job_config
from trainer.anytime.task import exchanged, exit_accuracies, to_device, train_local
from trainer.federated.simulation import _ray_env
from trainer.federated.task import ClientData

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(scope="module")
def visual():
    """A tiny ViT image tower from open_clip's own factory: no text tower, so this file needs
    no MiniLM weights (a GPU lease's upload can carry the Flower wheels instead)."""
    from open_clip.model import _build_vision_tower

    tower = _build_vision_tower(8, vit_vision_cfg(16, patch_size=4, width=32, layers=3,
                                                  head_width=16))  # fmt: skip
    reinit_vit(tower, seed=3)
    return tower.eval()


def _client(n: int = 24) -> ClientData:
    rng = np.random.default_rng(0)
    arrays = {}
    for split in ("train", "val", "test"):
        arrays[f"x_{split}"] = rng.normal(size=(n, 3, 16, 16)).astype(np.float32)
        arrays[f"y_{split}"] = rng.integers(0, 5, n).astype(np.int64)
    return ClientData("c0", arrays)


@pytest.mark.parametrize("device", DEVICES)
def test_a_client_trains_on_its_device_and_sends_cpu_tensors(visual, device):
    torch.manual_seed(0)
    model = to_device(AnytimeViT(copy.deepcopy(visual), 5, adapter_rank=4), device)
    before = exchanged(model)
    loss = train_local(model, _client(), 3, {"lr": 1e-2, "exit_mode": "anytime", "seed": 1,
                                             "batch_size": 8})  # fmt: skip
    after = exchanged(model)
    assert np.isfinite(loss)
    assert all(t.device.type == "cpu" for t in after.values())  # Flower's arrays are host-side
    assert any(not torch.equal(before[k], after[k]) for k in before)  # it did train there
    assert next(model.parameters()).device.type == device
    accs = exit_accuracies(model, *_client().split("val"), 3)
    assert len(accs) == 3 and all(0.0 <= a <= 1.0 for a in accs)


def test_ray_shares_gpus_among_the_clients_that_run_at_once():
    assert _ray_env(4, 1)["client_resources"]["num_gpus"] == 0.25
    assert _ray_env(4, 1)["init_args"]["num_gpus"] == 1
    assert _ray_env(2)["client_resources"]["num_gpus"] == 0.0


def test_the_clients_device_travels_in_the_job_config():
    args = argparse.Namespace(lr=1e-3, lr_finetune=1e-4, rounds=3, local_epochs=1,
                              batch_size=8, weight_decay=0.0, fraction=1.0, personal_epochs=1,
                              personal_min_z=0.0, device="cuda:1")  # fmt: skip
    assert job_config("accumulator", "anytime", 0, args)["device"] == "cuda:1"
