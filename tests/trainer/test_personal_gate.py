"""Personalisation's epoch choice (trainer.federated.task.best_local_epoch): the paired val
gate that keeps the received model unless a trained epoch's gain is above noise, and the
per-epoch record that never takes part in the choice."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from trainer.federated.task import best_local_epoch, paired_gain, paired_z, signed_z

# Per-example val scores of epochs 0..3 on 20 examples (1 = right). Epoch 1 fixes one example
# (a gain of 0.05, z = 1); epoch 2 fixes ten and breaks none (z ~ 4.4); epoch 3 breaks four.
BASE = np.array([1] * 8 + [0] * 12, dtype=np.float32)
EPOCHS = [BASE, BASE.copy(), BASE.copy(), BASE.copy()]
EPOCHS[1][8] = 1
EPOCHS[2][8:18] = 1
EPOCHS[3][0:4] = 0


def _choose(epochs: list[np.ndarray], min_z: float, test: list[float] | None = None):
    model = torch.nn.Linear(1, 1, bias=False)
    model.weight.data.fill_(0.0)
    at = {"epoch": 0}

    def train_epoch(epoch: int) -> None:  # the "training" marks the weights with the epoch
        at["epoch"] = epoch
        model.weight.data.fill_(float(epoch))

    def snapshot() -> dict[str, torch.Tensor]:
        return {k: v.clone() for k, v in model.state_dict().items()}

    best = best_local_epoch(
        model, len(epochs) - 1, train_epoch, lambda: torch.from_numpy(epochs[at["epoch"]]),
        snapshot, min_z=min_z,
        test_items=None if test is None else (lambda: torch.from_numpy(test[at["epoch"]])))
    return best, float(model.weight.detach())


def test_paired_gain_is_the_mean_difference_and_its_standard_error():
    new, old = torch.tensor([1.0, 1, 0, 1, 0.5]), torch.tensor([0.0, 1, 0, 0, 1])
    d = (new - old).numpy()
    gain, err = paired_gain(new, old)
    assert gain == pytest.approx(d.mean())
    assert err == pytest.approx(d.std(ddof=1) / np.sqrt(len(d)))
    assert paired_gain(torch.tensor([1.0]), torch.tensor([0.0])) == (1.0, float("inf"))


def test_paired_z_is_the_gain_in_standard_errors_and_a_spreadless_loss_never_passes():
    new, old = torch.tensor([1.0, 1, 0, 1, 0.5]), torch.tensor([0.0, 1, 0, 0, 1])
    gain, err = paired_gain(new, old)
    assert paired_z(new, old) == pytest.approx((gain, gain / err))
    assert paired_z(torch.ones(4), torch.zeros(4)) == (1.0, float("inf"))
    assert paired_z(torch.zeros(4), torch.ones(4)) == (-1.0, 0.0)  # not +inf


def test_without_a_gate_the_best_val_epoch_is_kept_and_loaded():
    best, weight = _choose(EPOCHS[:2], min_z=0.0)  # a one-example gain is enough
    assert best["epoch"] == 1 and weight == 1.0
    best, weight = _choose(EPOCHS, min_z=0.0)
    assert best["epoch"] == 2 and weight == 2.0
    assert best["val_acc"] == pytest.approx(EPOCHS[2].mean())


def test_the_gate_refuses_a_gain_within_noise_and_restores_the_received_model():
    best, weight = _choose(EPOCHS[:2], min_z=1.64)
    assert best["epoch"] == 0 and weight == 0.0  # epoch 1's weights were undone
    assert best["val_acc"] == pytest.approx(BASE.mean())
    assert best["curve"][1]["z"] == pytest.approx(1.0)


def test_the_gate_keeps_a_gain_well_above_noise():
    best, weight = _choose(EPOCHS, min_z=1.64)
    assert best["epoch"] == 2 and weight == 2.0
    assert best["curve"][2]["z"] == pytest.approx(0.5 / (0.5 * (20 / 19) ** 0.5 / 20 ** 0.5))
    assert best["curve"][3]["z"] < 0


def test_the_test_record_never_changes_the_choice():
    test = [np.array(v) for v in ([1.0, 1, 1, 0], [0.0, 0, 1, 0], [0.0, 1, 0, 0], [1.0, 1, 1, 1])]
    best, _ = _choose(EPOCHS, min_z=0.0, test=test)  # test would favour epochs 0 and 3
    assert best["epoch"] == 2
    assert [c["test"] for c in best["curve"]] == [0.75, 0.25, 0.25, 1.0]
    assert [c["test_z"] for c in best["curve"]] == pytest.approx(
        [0.0, -0.5 / (1 / 3**0.5 / 2), -0.5 / (1 / 3**0.5 / 2), 1.0])
    assert [c["val"] for c in best["curve"]] == pytest.approx([e.mean() for e in EPOCHS])
    best, _ = _choose(EPOCHS, min_z=0.0)
    assert all(np.isnan(c["test"]) and np.isnan(c["test_z"]) for c in best["curve"])


def test_signed_z_keeps_the_sign_of_a_loss_where_the_gate_z_floors_it():
    assert signed_z(torch.zeros(4), torch.ones(4)) == -math.inf
    assert paired_z(torch.zeros(4), torch.ones(4))[1] == 0.0
    new, old = torch.tensor([0.0, 1, 0, 1, 0.5]), torch.tensor([1.0, 1, 0, 0, 1])
    assert signed_z(new, old) == pytest.approx(paired_z(new, old)[1])
    assert signed_z(new, old) < 0
    assert signed_z(torch.ones(3), torch.ones(3)) == 0.0


def test_fedclip_personalisation_reads_the_gate_from_its_config():
    """The FedCLIP client's personalisation honours ``personal_min_z``: an unreachable gate
    keeps the received adapter bit for bit; without one it moves (random class text features
    start near chance on this toy task, and the adapter learns it)."""
    from trainer.federated.task import ClientData, FeatureModel, personalize

    rng = np.random.default_rng(0)
    arrays = {}
    for split, n in (("train", 60), ("val", 30), ("test", 30)):
        y = rng.integers(0, 3, n)
        x = rng.normal(size=(n, 8)).astype(np.float32)
        x[np.arange(n), y] += 3.0  # the class lights its own feature
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x, y.astype(np.int64)
    data = ClientData("c0", arrays)
    kept = {}
    for min_z in (0.0, 1e9):
        torch.manual_seed(0)
        text = torch.from_numpy(np.random.default_rng(1).normal(size=(3, 8)).astype(np.float32))
        model = FeatureModel({"kind": "adapter", "scale": 1.0, "rank": None}, text, image_dim=8)
        start = {k: v.clone() for k, v in model.exchanged().items()}
        best = personalize(model, data, {"lr": 3e-2, "batch_size": 16, "weight_decay": 0.0,
                                         "personal_epochs": 3, "personal_min_z": min_z})
        same = all(torch.equal(v, start[k]) for k, v in model.exchanged().items())
        kept[min_z] = (best["epoch"], same)
    assert kept[1e9] == (0, True)
    assert kept[0.0][0] > 0 and not kept[0.0][1]
