"""The cross-fitted personalisation gate (trainer.anytime.crossfit): every train+val image is
held out exactly once, no fold trains on what it scores, the choice follows the val gate's
rule on the pooled gains, and the pooled fine-tune keeps the chosen epoch's weights; then the
real anytime client path on a tiny ViT."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from model_store.anytime import AnytimeViT
from model_store.vit import reinit_vit, vit_vision_cfg
from trainer.anytime.crossfit import (
    crossfit_curve,
    crossfit_personalize,
    fold_clustered_z,
    fold_ids,
    pooled,
)
from trainer.anytime.task import exchanged, personalize
from trainer.federated.task import ClientData, gated_epoch, paired_z


def _ids_client(n_train: int = 17, n_val: int = 8) -> ClientData:
    """A client whose features are example ids, so folds can be traced."""
    ids = np.arange(n_train + n_val + 5, dtype=np.float32)[:, None]
    return ClientData("c", {"x_train": ids[:n_train], "y_train": np.zeros(n_train, np.int64),
                            "x_val": ids[n_train:n_train + n_val],
                            "y_val": np.zeros(n_val, np.int64),
                            "x_test": ids[-5:], "y_test": np.zeros(5, np.int64)})


class _Fake:
    """A "model" whose weight is the number of epochs trained since the last restart; it gets
    an example right when weight >= (id % 4), so each epoch fixes a known share."""

    def __init__(self) -> None:
        self.w, self.scored, self.trained = 0, [], []

    def restart(self) -> None:
        self.w = 0

    def train_epoch(self, split: ClientData, epoch: int) -> None:
        held = set(split.arrays["x_val"][:, 0].tolist())
        assert not held & set(split.arrays["x_train"][:, 0].tolist())  # no peeking
        self.w, self.trained = epoch, self.trained + [len(split.arrays["x_train"])]

    def items(self, split: ClientData) -> torch.Tensor:
        ids = split.arrays["x_val"][:, 0]
        self.scored.append(ids.tolist())
        return torch.from_numpy((self.w >= ids % 4).astype(np.float32))[:, None]  # one exit


def test_folds_cover_every_pooled_example_once_and_are_balanced():
    ids = fold_ids(25, 5, seed=3)
    assert sorted(np.bincount(ids).tolist()) == [5] * 5
    assert not np.array_equal(ids, np.arange(25) % 5)  # shuffled
    assert np.array_equal(ids, fold_ids(25, 5, seed=3))
    with pytest.raises(ValueError):
        fold_ids(3, 5, seed=0)
    pool = pooled(_ids_client())
    assert pool.num("train") == 25 and pool.num("val") == 0 and pool.num("test") == 5


def test_a_client_smaller_than_the_folds_is_left_one_out_and_a_lone_image_is_an_error():
    fake, data = _Fake(), _ids_client(n_train=2, n_val=1)
    curve = crossfit_curve(data, 1, 5, seed=0, restart=fake.restart,
                           train_epoch=fake.train_epoch, items=fake.items)
    assert len(curve["val"]) == 2 and set(fake.trained) == {2}  # 3 folds of one image
    with pytest.raises(ValueError, match="at least 2"):
        crossfit_curve(_ids_client(n_train=1, n_val=0), 1, 5, seed=0, restart=fake.restart,
                       train_epoch=fake.train_epoch, items=fake.items)


def test_the_cli_refuses_a_single_fold(capsys):
    from trainer.anytime.cli import anytime_main

    with pytest.raises(SystemExit):
        anytime_main(["--personal-gate", "crossfit", "--personal-folds", "1"])
    assert "at least 2 folds" in capsys.readouterr().err


def test_the_curve_scores_every_image_held_out_once_against_the_received_model():
    fake, data = _Fake(), _ids_client()
    curve = crossfit_curve(data, 3, 5, seed=1, restart=fake.restart,
                           train_epoch=fake.train_epoch, items=fake.items)
    held = [i for k, s in enumerate(fake.scored) if k % 4 == 0 for i in s]  # base per fold
    assert sorted(held) == list(range(25))  # train and val, each once
    ids = np.arange(25)
    expected = [float(((e >= ids % 4).astype(float) - (0 >= ids % 4)).mean()) for e in range(4)]
    assert curve["val"] == pytest.approx(expected)
    assert curve["z"][0] == 0.0 and curve["z"][3] > curve["z"][1] > 0
    assert curve["z_fold"][0] == 0.0 and curve["z_fold"][3] > 0
    assert [a[0] for a in curve["exit_acc"]] == pytest.approx([(e >= ids % 4).mean()
                                                               for e in range(4)])
    assert set(fake.trained) == {20}  # each fold trains on the other 4/5


def test_the_choice_follows_the_gate_and_the_pooled_fine_tune_keeps_its_weights():
    for min_z, want in ((0.0, 3), (1e9, 0)):
        fake, data = _Fake(), _ids_client()
        best = crossfit_personalize(
            data, 3, 5, seed=1, min_z=min_z, restart=fake.restart,
            train_epoch=fake.train_epoch, items=fake.items,
            snapshot=lambda f=fake: {"w": torch.tensor(f.w)},
            load=lambda s, f=fake: setattr(f, "w", int(s["w"])),
            test_items=lambda f=fake: torch.full((4,), float(f.w)))
        assert best["epoch"] == want == gated_epoch(best["curve"], min_z)
        assert fake.w == want  # loaded
        assert best["curve"]["test"] == [0, 1, 2, 3]  # every pooled epoch, for replays
        assert best["curve"]["test_z"] == [0.0, math.inf, math.inf, math.inf]  # no spread
        assert fake.trained[-1] == 25  # the last fine-tune uses the whole pool


def test_the_anytime_client_keeps_the_cross_fitted_model_and_records_the_val_gate():
    from open_clip.model import _build_vision_tower

    tower = _build_vision_tower(8, vit_vision_cfg(16, patch_size=4, width=32, layers=2,
                                                  head_width=16))  # fmt: skip
    reinit_vit(tower, seed=3)
    torch.manual_seed(0)
    model = AnytimeViT(copy.deepcopy(tower.eval()), 4, adapter_rank=4)
    rng = np.random.default_rng(0)
    data = ClientData("c0", {f"{k}_{s}": (rng.normal(size=(12, 3, 16, 16)).astype(np.float32)
                                          if k == "x" else rng.integers(0, 4, 12))
                             for s in ("train", "val", "test") for k in ("x", "y")})
    cfg = {"lr": 5e-2, "exit_mode": "anytime", "seed": 2, "batch_size": 8,
           "personal_epochs": 2, "personal_part": "client_token", "personal_gate": "crossfit",
           "personal_folds": 3}
    best = personalize(model, data, 2, cfg)
    assert len(best["curve"]["val"]) == len(best["curve"]["test"]) == 3
    assert len(best["curve"]["test_z"]) == 3 and best["curve"]["test_z"][0] == 0.0
    assert all(len(a) == 2 for a in best["curve"]["exit_acc"])  # held-out accuracy per exit
    assert len(best["val_gate"]["curve"]) == 3  # the val gate's record, epochs 0..2
    assert best["test_acc"] == best["curve"]["test"][best["epoch"]]
    now = exchanged(model)
    assert all(torch.equal(now[k], best["state"][k]) for k in now)


def test_the_fold_clustered_z_counts_a_fold_that_moves_together_as_one_observation():
    fold_of = torch.arange(40) % 5
    spread = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0] * 6)[:40]  # folds gain unevenly
    one_fold = (fold_of == 0).double() * 4  # the same mean gain, all from one fold's model
    _, pooled_z = paired_z(one_fold, torch.zeros(40))
    assert fold_clustered_z(one_fold, fold_of) == pytest.approx(1.0) and pooled_z > 3
    d = spread - spread.mean()  # CR1 by hand: F/(F-1) * sum_f (sum_i d_i)^2 / n^2
    var = 5 / 4 * sum(float(d[fold_of == f].sum()) ** 2 for f in range(5)) / 40**2
    assert fold_clustered_z(spread, fold_of) == pytest.approx(float(spread.mean()) / var**0.5)
    assert fold_clustered_z(torch.ones(10), torch.arange(10) % 5) == math.inf
    assert fold_clustered_z(torch.zeros(10), torch.arange(10) % 5) == 0.0
    assert fold_clustered_z(torch.ones(3), torch.zeros(3, dtype=torch.long)) == 0.0


def test_reports_replay_the_cross_fitted_record_on_its_fold_clustered_z():
    from trainer.anytime.report import gate_table

    record = {"val": [0.0, 0.2], "z": [0.0, 9.0], "z_fold": [0.0, 1.0], "test": [0.5, 0.4]}
    row = {"method": "m", "setting": "anytime", "client_personal_curve": [record],
           "client_valgate_curve": [{"val": [0.5, 0.6], "z": [0.0, 0.1], "test": [0.5, 0.4]}]}
    lines = [ln for ln in gate_table([row], ["m"], "anytime") if "| 1.64 |" in ln]
    kept = {ln.split(" | ")[1]: ln.split(" | ")[3] for ln in lines}
    assert kept == {"val": "0/1", "cross-fitted": "1/1", "cross-fitted, fold z": "0/1"}


def test_reports_tell_a_client_worse_beyond_test_noise_from_one_that_lost_an_image():
    """Both clients lose on test; only the one whose loss is 2+ paired standard errors is
    counted worse beyond noise. Records from before stop 51 (no ``test_z``) show a dash."""
    from trainer.anytime.report import gate_table, personal_table

    def record(test_z: float) -> dict:
        return {"epoch": 1, "val": [0.0, 0.2], "z": [0.0, 9.0], "test": [0.5, 0.48],
                "test_z": [0.0, test_z]}

    row = {"method": "m", "setting": "anytime", "client_global": [0.5, 0.5],
           "client_personal": [0.48, 0.48], "client_personal_curve": [record(-0.7),
                                                                      record(-2.5)]}
    line = next(ln for ln in gate_table([row], ["m"], "anytime") if "| 0 |" in ln)
    assert line.split(" | ")[-2:] == ["0/2", "1/2 |"]  # not worse; not worse beyond noise
    assert personal_table([row], ["m"], "anytime")[-1].endswith("| 0/2 | 1/2 |")
    old = {**row, "client_personal_curve": [{k: v for k, v in record(0).items()
                                             if k != "test_z"}] * 2}
    assert personal_table([old], ["m"], "anytime")[-1].endswith("| 0/2 | – |")
