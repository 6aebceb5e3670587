"""`tailor train perfix` end to end on a tiny ViT foundation and a tiny PACS-shaped set: lr
chosen on validation, the same clients for every method, resources, the report, and the
artifact the service serves."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model_store.perfix_artifact import open_perfix
from model_store.testing import make_tiny_foundation
from trainer.perfix.cli import perfix_main

C = 3


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("perfix")
    ref, _ = make_tiny_foundation(tmp / "store", layers=2)
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(C), 24)
    images = rng.integers(0, 60, (len(labels), 32, 32, 3)).astype(np.uint8)
    images[np.arange(len(labels)), :16, :, labels] = 220  # the class lights one channel
    np.savez(tmp / "pacs.npz", images=images, labels=labels, domains=labels % 2,
             class_names=np.array(["r", "g", "b"]), domain_names=np.array(["photo", "sketch"]))
    payload = perfix_main([
        "--pacs-npz", str(tmp / "pacs.npz"), "--store", str(tmp / "store"),
        "--backbone", f"foundation:{ref.version}", "--out", str(tmp / "out"),
        "--methods", "local", "fedperfix", "--settings", "label",
        "--seeds", "0", "--per-class", "20", "--num-clients", "3", "--alpha", "1.0",
        "--fraction", "0.67", "--rounds", "2", "--batch-size", "16", "--lr", "3e-3",
        "--rank", "4", "--num-tokens", "2", "--select",
        "--save", "fedperfix", "--backend", "inline"])
    return tmp / "out", payload, tmp / "store"


def test_report_rows_and_lr_chosen_on_validation(run):
    out, payload, _ = run
    assert {"report.md", "results.json", "label-gain.png"} <= {p.name for p in out.iterdir()}
    assert json.loads((out / "results.json").read_text())["rows"] == payload["rows"]
    report = (out / "report.md").read_text()
    assert "| fedperfix |" in report and "| local |" in report
    rows = {r["method"]: r for r in payload["rows"]}
    assert set(rows) == {"local", "fedperfix"}
    for method, row in rows.items():
        choice = payload["selection"][f"label/{method}"]
        assert choice["val"][f"{choice['lr']:.1e}"] == max(choice["val"].values())
        assert row["lr"] == choice["lr"] and row["clients_per_round"] == 2
        assert len(row["client_test"]) == 3 and 0 <= row["mean_test"] <= 1
    assert len({tuple(r["clients"]) for r in payload["rows"]}) == 1  # same clients for all
    assert rows["local"]["params_per_round"] == 0  # Local sends nothing
    res = payload["resources"]
    assert 0 < res["fedperfix"]["sent"] < res["fedavg"]["sent"]  # prefixes and head stay
    assert res["fedperfix"]["stored"] > res["fedavg"]["stored"]  # prefixes cost storage
    assert res["fedperfix"]["flops"] > res["fedavg"]["flops"] and res["local"]["sent"] == 0


def test_saved_artifact_holds_each_clients_own_part(run):
    _, payload, store = run
    fed = open_perfix(store, payload["artifact"], device="cpu")
    assert fed.config["method"] == "fedperfix" and fed.config["clients"] == [
        "client0", "client1", "client2"]
    a, b = fed.classifier("client0"), fed.classifier("client1")
    assert not torch.equal(a.model.head.weight, b.model.head.weight)  # local heads
    glob = fed.artifact.tensors("global")
    assert all(torch.equal(a.model.state_dict()[k], v) for k, v in glob.items())
    row = next(r for r in payload["rows"] if r["method"] == "fedperfix")
    accs = [fed.config["client_acc"][c]["test"] for c in fed.config["clients"]]
    assert accs == pytest.approx(row["client_test"])  # the same models the report scored
