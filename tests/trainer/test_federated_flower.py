"""A real Flower simulation (Ray backend) with 4 tiny clients: averaging, accounting, state."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model_store.adapters import count_parameters
from trainer.federated.simulation import run_federation
from trainer.federated.task import ClientData, FeatureModel, client_seed, train_local

D, C = 8, 3
SIZES = (40, 10, 25, 70)  # unequal, so sample weighting differs from uniform weighting


def _client(i: int, n: int) -> ClientData:
    rng = np.random.default_rng(100 + i)
    arrays = {}
    for split, m in (("train", n), ("val", 12), ("test", 12)):
        y = rng.integers(0, C, m)
        x = rng.normal(size=(m, D)).astype(np.float32)
        x[np.arange(m), y] += 2.0 + i  # each client's features are shifted differently
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x, y.astype(np.int64)
    return ClientData(f"c{i}", arrays)


@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    clients = [_client(i, n) for i, n in enumerate(SIZES)]
    text = np.eye(C, D, dtype=np.float32)
    spec = {"kind": "adapter", "scale": 10.0, "rank": 4}
    cfg = {
        "method": "fedavg",
        "weighting": "samples",
        "rounds": 1,
        "lr": 1e-2,
        "local_epochs": 2,
        "batch_size": 16,
        "weight_decay": 0.2,
        "seed": 3,
        "personal_epochs": 2,
    }
    sink = run_federation(
        tmp_path_factory.mktemp("fed"), clients, spec, {"text": text}, cfg, unseen=_client(9, 20)
    )
    return clients, text, spec, cfg, sink


def test_global_adapter_is_the_sample_weighted_mean_of_independent_local_training(federation):
    clients, text, spec, cfg, sink = federation
    torch.manual_seed(cfg["seed"])  # the server's initial adapter, rebuilt here
    init = FeatureModel(spec, torch.from_numpy(text), D).exchanged()
    states, weights = [], []
    for c in clients:  # each client's round-1 training, reproduced outside Flower
        m = FeatureModel(spec, torch.from_numpy(text), D)
        m.load_state_dict(init, strict=False)
        local_cfg = {**cfg, "seed": client_seed(cfg["seed"], 1, c.num("train"))}
        train_local(m, c, local_cfg, global_state=init)
        states.append(m.exchanged())
        weights.append(c.num("train"))
    w = torch.tensor(weights, dtype=torch.float64) / sum(weights)
    got = sink["global_state"]
    assert set(got) == {
        "adapter.fc1.weight",
        "adapter.fc1.bias",
        "adapter.fc2.weight",
        "adapter.fc2.bias",
    }
    for k in got:
        expected = sum(wi * s[k].double() for wi, s in zip(w, states, strict=True))
        uniform = sum(s[k].double() for s in states) / len(states)
        assert torch.allclose(got[k].double(), expected, atol=1e-5), k
        assert not torch.allclose(got[k].double(), uniform, atol=1e-4), k
        assert not torch.allclose(got[k], init[k], atol=1e-4), k  # training really happened


def test_only_adapter_parameters_travel_and_are_counted(federation):
    clients, text, spec, _, sink = federation
    (rnd,) = sink["rounds"]
    n_params = count_parameters(FeatureModel(spec, torch.from_numpy(text), D).adapter)
    assert rnd["params_per_client"] == n_params == 2 * D * 4 + 4 + D
    assert rnd["clients"] == len(clients)
    assert rnd["bytes_down"] == rnd["bytes_up"]
    assert 4 * n_params * len(clients) <= rnd["bytes_up"] < 4 * n_params * len(clients) + 4096


def test_evaluation_personalisation_and_unseen_curve(federation):
    clients, _, _, _, sink = federation
    assert set(sink["client_eval"][-1]) == set(range(len(clients)))
    assert [r for r, _ in sink["unseen_curve"]] == [0, 1]
    assert set(sink["personal"]) == set(range(len(clients)))
    for pid, p in sink["personal"].items():
        glob_val = sink["client_eval"][-1][pid]["val_acc"]
        assert p["metrics"]["val_acc"] >= glob_val  # epoch 0 (= global) is a candidate
        assert set(p["state"]) == set(sink["global_state"])
    assert sink["seconds"] < 120
