"""Anytime federated learning in a real Flower simulation with 4 multi-tier clients on a tiny
ViT foundation: the aggregate, what travels, and the depth budgets; under Ray's engine and
under the in-process grid (trainer.federated.inline), which must give the same answers."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from model_store.testing import make_tiny_foundation
from trainer.anytime.federation import run_anytime
from trainer.anytime.task import build_model, exchanged, personal_params, train_local
from trainer.federated.synthetic import synthetic_client
from trainer.federated.task import ClientData, client_seed, load_shared

C, DEPTH = 3, 3
SIZES = (30, 12, 20, 40)  # unequal: sample weighting differs from uniform
TIERS = (1, 2, 3, 3)  # multi-tier: clients 0 and 1 may not run the deeper blocks


def _tiny_foundation(store) -> str:
    ref, _ = make_tiny_foundation(store, layers=DEPTH)
    return f"local-dir:{ref.path}"


def _client(i: int, n: int) -> ClientData:
    return synthetic_client(i, n, C, seed=50)


@pytest.fixture(scope="module", params=["ray", "inline"])
def federation(tmp_path_factory, request):
    spec = {"foundation": _tiny_foundation(tmp_path_factory.mktemp("store")),
            "method": "accumulator", "adapter_rank": 4, "num_classes": C}
    cfg = {"method": "fedavg", "weighting": "samples", "rounds": 1, "lr": 3e-3,
           "local_epochs": 1, "batch_size": 8, "weight_decay": 0.05, "seed": 5,
           "exit_mode": "anytime", "personal_part": "client_token", "personal_epochs": 1}
    clients = [_client(i, n) for i, n in enumerate(SIZES)]
    fed_dir = tmp_path_factory.mktemp("fed")
    sink = run_anytime(fed_dir, clients, list(TIERS), spec, cfg, backend=request.param)
    return str(fed_dir), clients, cfg, sink


def test_aggregate_is_the_sample_weighted_mean_of_independent_local_updates(federation):
    fed_dir, clients, cfg, sink = federation
    torch.set_num_threads(1)  # as on the simulated clients
    torch.manual_seed(cfg["seed"])
    init = exchanged(build_model(fed_dir))
    states = []
    for c, tier in zip(clients, TIERS, strict=True):  # round 1, reproduced outside Flower
        model = build_model(fed_dir)
        model.load_state_dict(init, strict=False)
        train_local(model, c, tier, {**cfg, "seed": client_seed(cfg["seed"], 1, c.num("train"))})
        states.append(exchanged(model))
    w = torch.tensor(SIZES, dtype=torch.float64) / sum(SIZES)
    got = sink["global_state"]
    assert set(got) == set(init)
    for k in got:
        expected = sum(wi * s[k].double() for wi, s in zip(w, states, strict=True))
        torch.testing.assert_close(got[k].double(), expected, atol=2e-5, rtol=1e-4)
    uniform = sum(s["head.3.weight"].double() for s in states) / len(states)
    assert not torch.allclose(got["head.3.weight"].double(), uniform, atol=1e-4)
    moved = [k for k in got if not torch.allclose(got[k], init[k], atol=1e-6)]
    assert "accumulator.client_token" in moved and "head.3.weight" in moved


def test_only_the_accumulator_head_and_adapters_travel(federation):
    fed_dir, _, _, sink = federation
    names = set(sink["global_state"])
    assert {n.split(".")[0] for n in names} == {"accumulator", "head", "visual"}
    assert all(".mlp.down." in n or ".mlp.up." in n for n in names if n.startswith("visual."))
    full = sum(p.numel() for p in build_model(fed_dir).parameters())
    (rnd,) = sink["rounds"]
    assert rnd["params_per_client"] == sum(v.numel() for v in sink["global_state"].values())
    assert rnd["params_per_client"] < full


def test_multi_tier_clients_never_compute_past_their_depth(federation):
    _, _, _, sink = federation
    for m in sink["train_metrics"]:
        assert 1 <= m["deepest_block"] <= TIERS[int(m["partition-id"])], m
    for pid, m in sink["client_eval"][-1].items():
        exits = sorted(int(k.removeprefix("test_acc_exit")) for k, v in m.items()
                       if "test_acc_exit" in k and not np.isnan(v))
        assert exits == list(range(1, TIERS[pid] + 1)) and m["deepest_block"] == TIERS[pid]


def test_personalisation_tunes_only_the_client_token_and_never_loses_on_val(federation):
    fed_dir, _, _, sink = federation
    assert set(sink["personal"]) == set(range(4))
    for pid, p in sink["personal"].items():
        glob = sink["client_eval"][-1][pid]
        glob_val = np.mean([glob[f"val_acc_exit{e}"] for e in range(1, TIERS[pid] + 1)])
        m = p["metrics"]
        assert m["val_acc"] >= glob_val - 1e-9
        assert len(m["curve_val"]) == len(m["curve_test"]) == 2  # epochs 0 and 1
        assert m["curve_val"][0] == pytest.approx(glob_val)  # epoch 0: the global model
        assert m["curve_val"][int(m["best_epoch"])] == pytest.approx(m["val_acc"])
        assert m["curve_test"][int(m["best_epoch"])] == pytest.approx(m["test_acc"])
        changed = [k for k in p["state"]
                   if not torch.equal(p["state"][k], sink["global_state"][k])]
        assert set(changed) <= {"accumulator.client_token"}
    model = build_model(fed_dir)
    assert personal_params(model, "client_token") == [model.accumulator.client_token]
    assert load_shared(fed_dir)[0]["tiers"] == list(TIERS)
    assert copy.deepcopy(model).depth == DEPTH


def test_a_slow_block_moves_by_its_fraction_of_the_lr(tmp_path):
    """``block_lr_scale`` (``accumulator_slow_pa``): after one AdamW step from the same start,
    the block and layer positions moved by exactly the scale times what they move at full lr;
    the head and client token moved the same in both."""
    from model_store.anytime import AnytimeViT

    _, backbone = make_tiny_foundation(tmp_path, layers=DEPTH)
    data = _client(0, 16)
    moved = {}
    for scale in (1.0, 0.1):
        torch.manual_seed(0)
        model = AnytimeViT(copy.deepcopy(backbone.model.visual), C, adapter_rank=4)
        model.block_lr_scale = scale
        start = {k: v.detach().clone() for k, v in model.named_parameters()}
        train_local(model, data, DEPTH, {"lr": 1e-2, "batch_size": 16, "seed": 0,
                                         "weight_decay": 0.05})  # one step
        moved[scale] = {k: v.detach() - start[k] for k, v in model.named_parameters()}
    for name in ("accumulator.block.linear1.weight", "accumulator.layer_pos"):
        assert moved[1.0][name].abs().sum() > 0
        torch.testing.assert_close(moved[0.1][name], 0.1 * moved[1.0][name])
    for name in ("head.1.weight", "accumulator.client_token",
                 "visual.transformer.resblocks.0.mlp.down.weight"):
        torch.testing.assert_close(moved[0.1][name], moved[1.0][name])


def test_partial_participation_is_repeatable_under_the_in_process_grid(tmp_path):
    """Flower draws each round's participants with the global ``random``; the server seeds
    it per job (``server_app._seeded_sampling``), so two runs of one seed under the
    in-process grid federate the same clients and end with the same weights (unseeded,
    2 of 4 clients over 2 rounds agree by chance once in 36)."""
    spec = {"foundation": _tiny_foundation(tmp_path / "store"), "method": "accumulator",
            "adapter_rank": 4, "num_classes": C}
    cfg = {"method": "fedavg", "weighting": "samples", "rounds": 2, "lr": 3e-3,
           "local_epochs": 1, "batch_size": 8, "weight_decay": 0.05, "seed": 5,
           "fraction_train": 0.5, "exit_mode": "anytime", "personal_part": "client_token",
           "personal_epochs": 0}
    clients = [_client(i, n) for i, n in enumerate(SIZES)]
    sinks = [run_anytime(tmp_path / f"fed{k}", clients, list(TIERS), spec, cfg,
                         backend="inline") for k in range(2)]
    drawn = [[r["partitions"] for r in s["rounds"]] for s in sinks]
    assert drawn[0] == drawn[1] and all(len(p) == 2 for p in drawn[0])
    ends = [s["global_state"] for s in sinks]
    assert ends[0].keys() == ends[1].keys()
    assert all(torch.equal(ends[0][k], ends[1][k]) for k in ends[0])
