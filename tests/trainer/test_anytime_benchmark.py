"""`tailor train anytime` end to end on a tiny ViT foundation and a tiny PACS-shaped set:
the same clients for every method, multi-tier budgets, FLOPs per exit, and the report. It runs
on the in-process grid: Ray's engine, the CLI default, is covered by test_anytime_flower.py and
costs ~28 s of start-up here."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
import torch

from model_store.anytime_artifact import load_anytime
from model_store.testing import make_tiny_foundation
from trainer.anytime.cli import anytime_main
from trainer.anytime.experiment import make_clients, plan_one, subsample, tiers_for
from trainer.federated.data import load_backbone, load_pacs
from trainer.federated.task import gated_epoch

C, DEPTH = 3, 3


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("anytime")
    ref, _ = make_tiny_foundation(tmp / "store", layers=DEPTH)
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(C), 24)
    images = rng.integers(0, 60, (len(labels), 32, 32, 3)).astype(np.uint8)
    images[np.arange(len(labels)), :16, :, labels] = 220  # the class lights one channel
    domains = np.arange(len(labels)) % 2  # two domains, every class in both
    np.savez(tmp / "pacs.npz", images=images, labels=labels, domains=domains,
             class_names=np.array(["r", "g", "b"]), domain_names=np.array(["photo", "sketch"]))
    payload = anytime_main([
        "--pacs-npz", str(tmp / "pacs.npz"), "--store", str(tmp / "store"),
        "--backbone", f"foundation:{ref.version}", "--save", "multitier/accumulator",
        "--out", str(tmp / "out"), "--methods", "accumulator", "lw_linear",
        "--settings", "multitier", "--seeds", "0", "--per-class", "20",
        "--num-clients", "3", "--fraction", "0.67", "--rounds", "2", "--batch-size", "16",
        "--lr", "3e-3", "--personal-epochs", "1", "--personal-gate", "crossfit",
        "--personal-folds", "2", "--select", "--backend", "inline"])
    return tmp / "out", payload, tmp / "store", tmp, ref


def test_report_json_and_plots_are_written(run):
    out, payload, *_ = run
    assert {"report.md", "results.json", "multitier.png", "multitier-rounds.png",
            "multitier-gates.png"} <= {
        p.name for p in out.iterdir()}
    assert json.loads((out / "results.json").read_text())["rows"] == payload["rows"]
    report = (out / "report.md").read_text()
    assert "| accumulator |" in report and "| lw_linear |" in report
    assert "zero-shot test accuracy" in report and 0 <= payload["zero_shot"][0] <= 1


def test_personalisation_is_recorded_per_epoch_and_its_replay_matches_the_run(run):
    """Replaying the run's own gate (min z 0, cross-fitted) on the recorded curves picks the
    epochs the clients kept and reproduces their test gains; the val gate is recorded beside
    it from the same global model; the report compares stricter gates of both."""
    out, payload, *_ = run
    for row in payload["rows"]:
        for glob, pers, curve in zip(row["client_global"], row["client_personal"],
                                     row["client_personal_curve"], strict=True):
            assert len(curve["val"]) == len(curve["z"]) == len(curve["z_fold"]) == 2
            assert len(curve["test"]) == 2 and curve["z_fold"][0] == 0.0  # through Flower
            assert gated_epoch(curve, 0.0) == curve["epoch"]
            assert curve["test"][0] == pytest.approx(glob, abs=1e-6)  # epoch 0 = global
            assert curve["test"][curve["epoch"]] == pytest.approx(pers, abs=1e-6)
            assert gated_epoch(curve, 1e9) == 0
        for curve, glob in zip(row["client_valgate_curve"], row["client_global"], strict=True):
            assert gated_epoch(curve, 0.0) == curve["epoch"]
            assert curve["test"][0] == pytest.approx(glob, abs=1e-6)
    report = (out / "report.md").read_text()
    assert report.count("| accumulator | val | 2.33 |") == 1
    assert "| lw_linear | cross-fitted | 1.64 |" in report
    assert "| lw_linear | cross-fitted, fold z | 2.13 |" in report


def test_lr_and_rounds_chosen_on_validation_only_and_used(run):
    _, payload, *_ = run
    sel = payload["selection"]
    assert set(sel) == {"multitier/accumulator", "multitier/lw_linear"}
    for key, choice in sel.items():
        assert len(choice["val"]) == 3
        assert choice["val"][f"{choice['lr']:.1e}"] == max(choice["val"].values())
        assert choice["rounds"] == choice["best_round"][f"{choice['lr']:.1e}"]
        assert 1 <= choice["rounds"] <= 2
        setting, method = key.split("/")
        (row,) = [r for r in payload["rows"] if (r["setting"], r["method"]) == (setting, method)]
        assert row["lr"] == choice["lr"] and row["rounds"] == choice["rounds"]
        assert len(row["val_curve"]) == row["rounds"]  # the run stopped at the chosen round
    assert len(payload["rows"]) == 2
    for row in payload["rows"]:
        assert 0.0 <= row["headline"] <= 1.0 and len(row["exit_acc"]) == DEPTH
        assert row["clients_per_round"] == 2  # partial participation: 2 of 3 per round


def test_budgets_exchange_and_flops(run):
    _, payload, *_ = run
    rows = {(r["method"], r["setting"]): r for r in payload["rows"]}
    assert rows[("accumulator", "multitier")]["tiers"] == tiers_for("multitier", 3, DEPTH)
    assert rows[("lw_linear", "multitier")]["params_per_round"] == DEPTH * (32 * C + C)
    assert rows[("accumulator", "multitier")]["params_per_round"] < payload["full_params"]
    for flops in payload["flops"].values():
        assert all(b > a for a, b in zip(flops, flops[1:], strict=False))  # deeper costs more
    multitier = rows[("accumulator", "multitier")]
    assert not np.isnan(multitier["exit_acc"][-1])  # one client reaches the last exit


def test_tiers_and_subsample_helpers():
    assert tiers_for("multitier", 5, 6) == [2, 4, 6, 2, 4]
    assert tiers_for("anytime", 2, 6) == [6, 6]
    labels = np.repeat(np.arange(4), [5, 9, 2, 30])
    idx = subsample(labels, 4, seed=1)
    assert np.bincount(labels[idx]).tolist() == [4, 4, 2, 4]
    assert idx.tolist() == subsample(labels, 4, seed=1).tolist()


def test_saved_artifact_serves_each_client_its_own_model(run):
    _, payload, store, *_ = run
    glob = load_anytime(store, None, payload["artifact"], device="cpu")
    cfg = glob.config
    assert cfg["clients"] == ["client0", "client1", "client2"] and cfg["depth"] == DEPTH
    assert cfg["tiers"] == dict(zip(cfg["clients"], tiers_for("multitier", 3, DEPTH),
                                    strict=True))
    assert glob.class_names == ["r", "g", "b"] and len(cfg["flops_per_exit"]) == DEPTH
    for client, tier in cfg["tiers"].items():  # the personalised model's val accuracy per exit
        accs = cfg["exit_val_acc"][client]
        assert all(0 <= a <= 1 for a in accs[:tier]) and accs[tier:] == [None] * (DEPTH - tier)
    assert len(cfg["exit_val_acc"]["global"]) == DEPTH  # every exit reached by some client
    assert all(0 <= a <= 1 for a in cfg["exit_val_acc"]["global"])
    images = np.random.default_rng(3).integers(0, 255, (4, 32, 32, 3), dtype=np.uint8)
    mine = load_anytime(store, "client2", payload["artifact"], device="cpu")
    for exit_ in range(1, DEPTH + 1):
        assert mine.logits(images, exit_).shape == (4, C)
        assert mine.model.blocks_run == exit_
    # personalisation tuned only the client token; the rest is the global model
    token = "accumulator.client_token"
    assert torch.equal(mine.model.head[3].weight, glob.model.head[3].weight)
    assert mine.model.state_dict()[token].shape == glob.model.state_dict()[token].shape
    with pytest.raises(KeyError, match="no model for client"):
        load_anytime(store, "client9", payload["artifact"])
    with pytest.raises(ValueError, match="exit must be"):
        mine.logits(images, DEPTH + 1)


def test_domain_partition_gives_one_client_per_domain(run):
    *_, tmp, ref = run
    backbone, _ = load_backbone(f"foundation:{ref.version}", str(tmp / "store"), "cpu")
    data = load_pacs(argparse.Namespace(pacs_npz=str(tmp / "pacs.npz")))
    args = argparse.Namespace(per_class=20, partition="domains", num_clients=5, alpha=0.1)
    clients = make_clients(backbone, data, args, seed=0)
    assert [c.name for c in clients] == ["photo", "sketch"]
    assert sum(c.num(s) for c in clients for s in ("train", "val", "test")) == 3 * 20
    for c in clients:  # feature skew, not label skew: every client holds every class
        assert set(c.split("train")[1].tolist()) == {0, 1, 2}
    pooled = make_clients(backbone, data, argparse.Namespace(
        per_class=20, partition="dirichlet", num_clients=3, alpha=1.0), seed=0)
    assert len(pooled) == 3


def test_zero_init_methods_start_the_federation_from_the_foundation(run, tmp_path):
    """``accumulator_zero_pa`` reaches the federation's model: its initial exchanged state has
    the Accumulator's residual outputs at zero; ``accumulator_pa`` (the paper's) does not, and
    ``accumulator_frozen_pa`` exchanges no block weight at all."""
    *_, tmp, ref = run
    backbone, _ = load_backbone(f"foundation:{ref.version}", str(tmp / "store"), "cpu")
    data = load_pacs(argparse.Namespace(pacs_npz=str(tmp / "pacs.npz")))
    args = argparse.Namespace(per_class=20, partition="dirichlet", num_clients=3, alpha=1.0,
                              adapter_rank=4, lr=1e-3, lr_finetune=1e-4, rounds=1,
                              local_epochs=1, batch_size=16, weight_decay=0.0, fraction=1.0,
                              personal_epochs=0, personal_min_z=0.0)
    clients = make_clients(backbone, data, args, seed=0)
    bench = {"args": args, "depth": DEPTH, "num_classes": C,
             "foundation": f"local-dir:{ref.path}"}
    zeroed = ("accumulator.layer_pos", "accumulator.block.linear2.weight",
              "accumulator.block.self_attn.out_proj.weight")
    for method, zero in (("accumulator_zero_pa", True), ("accumulator_pa", False)):
        job = plan_one(tmp_path / method, clients, bench, method, "anytime", seed=0)
        state = job["initial_state"]
        assert all(bool(state[k].eq(0).all()) == zero for k in zeroed), method
        assert "visual.transformer.resblocks.0.mlp.down.weight" in state  # PA on both
    frozen = plan_one(tmp_path / "frozen", clients, bench, "accumulator_frozen_pa", "anytime",
                      seed=0)["initial_state"]  # the ablation exchanges no block weight
    assert {k for k in frozen if k.startswith("accumulator.")} == {"accumulator.client_token"}
    assert "head.1.weight" in frozen
