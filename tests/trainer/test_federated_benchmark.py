"""`tailor train federated` end to end on a tiny synthetic 4-domain set (real Flower apps in
the in-process grid; the Ray engine itself is covered by test_federated_flower.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model_store.adapters import load_fedclip, load_fedclip_adapter
from trainer.federated.cli import federated_main
from trainer.federated.task import FeatureModel

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
CLASSES = ["zero", "one", "bear"]
# full-rank FedCLIP runs in the 4-client federations; the leave-one-out tables skip it to save
# a quarter of the fixture's federations (its exchange is counted below without one)
METHODS = ("fedclip_r4", "fedavg", "fedprox")


def _tiny_pacs(path, per=10, seed=0):
    """Per domain and class, coloured blobs whose position encodes the class."""
    rng = np.random.default_rng(seed)
    images, labels, domains = [], [], []
    for d in range(4):
        for c in range(3):
            for _ in range(per):
                img = np.full((32, 32, 3), 40 * d, np.uint8)
                y0 = 4 + 9 * c + rng.integers(0, 3)
                img[y0 : y0 + 6, 8:24] = rng.integers(150, 256, 3)
                images.append(img)
                labels.append(c)
                domains.append(d)
    np.savez(
        path,
        images=np.stack(images),
        labels=np.asarray(labels),
        domains=np.asarray(domains),
        class_names=np.array(CLASSES),
        domain_names=np.array(DOMAINS),
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    _tiny_pacs(tmp / "pacs.npz")
    payload = federated_main(
        [
            "--pacs-npz",
            str(tmp / "pacs.npz"),
            "--backbone",
            "default",
            "--device",
            "cpu",
            "--data-dir",
            str(tmp / "data"),
            "--store",
            str(tmp / "store"),
            "--out",
            str(tmp / "out"),
            "--methods",
            "fedclip_r4",
            "fedavg",
            "fedprox",
            "--seeds",
            "0",
            "--rounds",
            "2",
            "--personal-epochs",
            "1",
            "--dirichlet-alpha",
            "1.0",
            "--select",
            "--max-rounds",
            "2",
            "--backend",
            "inline",
        ]
    )
    return tmp, payload


def test_report_has_all_tables_and_every_task(run):
    tmp, payload = run
    rows = payload["rows"]
    assert {(r["method"], r["held_out"]) for r in rows} == {
        (m, d) for m in METHODS for d in DOMAINS
    }
    for r in rows:
        assert r["held_out"] not in r["participants"] and len(r["participants"]) == 3
        assert [x for x, _ in r["unseen_curve"]] == list(range(r["rounds"] + 1))
        assert len(r["comm"]) == r["rounds"] and 1 <= r["rounds"] <= 2
    report = (tmp / "out" / "report.md").read_text()
    for title in ("Table 1", "Table 2", "Table 3", "Communication per round"):
        assert title in report
    assert (tmp / "out" / "curves.png").stat().st_size > 1000
    saved = json.loads((tmp / "out" / "results.json").read_text())
    assert saved["zero_shot"][0]["acc"].keys() == set(DOMAINS)


def test_settings_chosen_per_task_on_its_participants_val_only(run):
    _, payload = run
    sel = payload["selection"]
    chosen, tried = sel["chosen"], sel["chosen"]["_tried"]
    assert sel["grids"]["embed"] == [3e-4, 1e-3, 3e-3] and sel["grids"]["mu"] == [1e-3, 1e-2, 0.1]
    for held in DOMAINS:
        for method in METHODS:
            cands = tried[f"{held}/{method}"]
            assert len(cands) == 3  # the same number of candidates for every method
            assert all(held not in c["participants"] for c in cands)
            best = chosen[f"{held}/{method}"]
            assert best["val"] == max(c["val"] for c in cands)
            assert best["rounds"] == 1 + best["curve"].index(max(best["curve"]))
        fedavg_lr = chosen[f"{held}/fedavg"]["lr"]
        assert {c["lr"] for c in tried[f"{held}/fedprox"]} == {fedavg_lr}
        assert {c["mu"] for c in tried[f"{held}/fedprox"]} == {1e-3, 1e-2, 0.1}
    for r in payload["rows"]:
        best = chosen[f"{r['held_out']}/{r['method']}"]
        assert (r["lr"], r["mu"], r["rounds"]) == (best["lr"], best["mu"], best["rounds"])
        assert set(r["personal_acc"]) == set(r["participants"])  # FedAvg + fine-tuning too
    assert not any(r.get("selection") for r in payload["rows"])


def test_exchanged_sizes_match_each_method(run):
    _, payload = run
    comm = {r["method"]: r["comm"][0]["params_per_client"] for r in payload["rows"]}
    d = 256  # default embed dim
    full_rank = FeatureModel({"kind": "adapter", "scale": 1.0, "rank": None},
                             torch.zeros(3, d), d).exchanged()  # the 4-client runs' FedCLIP
    assert sum(v.numel() for v in full_rank.values()) == 2 * d * d + 2 * d
    assert comm["fedclip_r4"] == 2 * d * 4 + 4 + d
    assert comm["fedprox"] == d * 1280 + d * 384  # image + text projections
    assert payload["full_backbone_params"]["both_towers"] > 100 * comm["fedclip_r4"]


def test_features_cached_once_per_client_and_adapters_saved(run):
    tmp, payload = run
    # one trunk pass per client; embeddings are projected from the cached trunk features
    assert payload["feature_cache"] == {"hits": 4, "misses": 4}
    adapter, text, names, cfg = load_fedclip_adapter(tmp / "store", "sketch")
    assert names == CLASSES and cfg["clients"] == sorted(DOMAINS)
    assert cfg["backbone"]["sha256"] == payload["backbone"]["sha256"]
    glob, *_ = load_fedclip_adapter(tmp / "store")
    x = torch.randn(2, text.shape[1])
    assert adapter(x).shape == (2, text.shape[1]) and glob(x).shape == (2, text.shape[1])
    runs = payload["extra"]["four_client_runs"]
    assert {r["held_out"] for r in runs} == {"all-domains", "dirichlet-1.0"}


def test_client_classifier_loads_with_its_backbone_and_predicts(run):
    tmp, _ = run
    with np.load(tmp / "pacs.npz") as z:
        images = z["images"][z["domains"] == 3][:5]
    clf = load_fedclip(tmp / "store", "sketch", device="cpu")
    assert clf.class_names == CLASSES
    assert clf.logits(images).shape == (5, 3)
