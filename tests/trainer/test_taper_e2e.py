"""Tiny end-to-end TAPER training on the real tiny Tailor-PACS build -> a servable artifact."""

from __future__ import annotations

import json

import pytest
import torch
import torchvision

from model_store.taper import load_taper
from trainer.taper.train import main


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("taper")
    summary = main(
        [
            "--config",
            "tiny",
            "--data-dir",
            str(root / "data"),
            "--store-dir",
            str(root / "store"),
            "--out",
            str(root / "run"),
        ]
    )
    return root, summary


def test_tiny_training_writes_a_loadable_artifact_with_metrics(tiny_run):
    root, summary = tiny_run
    bundle = load_taper(root / "store", device="cpu")
    assert bundle.version == summary["artifact"]["version"]
    assert bundle.num_bases == 4  # shards by domain
    metrics = bundle.metrics
    assert metrics["default_method"] in ("taper", "selection")
    assert 0.0 <= metrics["taper"]["acc"] <= 1.0 and 0.0 <= metrics["selection"]["acc"] <= 1.0
    classes = [2, 0, 1]
    state, mixers = bundle.personalize(classes, domain="sketch")
    torch.testing.assert_close(mixers.sum(-1), torch.ones(4))
    model = torchvision.models.resnet18(num_classes=3)
    model.load_state_dict(state, strict=True)
    assert model.eval()(torch.randn(2, 3, 32, 32)).shape == (2, 3)


def test_tiny_artifact_has_a_domain_head_that_beats_chance(tiny_run):
    """The domain head (issue 18: the domain of unlabeled images) is fitted on the generic
    model's features; on the tiny build's val split it must beat 1/D chance by a margin."""
    root, _ = tiny_run
    bundle = load_taper(root / "store", device="cpu")
    head = bundle.domain_head
    assert head is not None and head["weight"].shape == (len(bundle.domains), 512)
    figures = bundle.metrics["domain_head"]
    assert figures["val_acc"] > 1.0 / len(bundle.domains) + 0.2, figures


def test_tiny_run_writes_report_curves_and_figures(tiny_run):
    root, summary = tiny_run
    run = root / "run"
    for name in (
        "report.md",
        "summary.json",
        "curves.png",
        "mixer_heatmap.png",
        "basis_similarity.png",
        "self_improvement.png",
    ):
        assert (run / name).is_file(), name
    curves = json.loads((run / "seed0" / "curves.json").read_text())
    assert {"stage1", "baseline", "stage2_0", "taper", "one_basis"} <= set(curves)
    report = (run / "report.md").read_text()
    assert "Error ratio TAPER ÷ selection" in report
    assert "Cross-group tasks" in report  # issue 14 §7: their own table
    assert set(summary["cross_group"]) >= {"selection", "taper"}
    assert set(summary["main"]) >= {
        "standard",
        "selection",
        "taper",
        "one_basis",
        "routed",
        "uniform",
        "taper_no_selection",
    }


def test_resuming_reuses_finished_stages(tiny_run):
    root, _ = tiny_run
    stage1 = root / "run" / "seed0" / "stage1.safetensors"
    before = stage1.stat().st_mtime_ns
    main(
        [
            "--config",
            "tiny",
            "--data-dir",
            str(root / "data"),
            "--out",
            str(root / "run"),
            "--no-artifact",
        ]
    )
    assert stage1.stat().st_mtime_ns == before


def test_checkpoints_resume_only_under_the_config_and_data_that_made_them(tmp_path):
    """Issue 14 §7: a stage checkpoint of another config or dataset is never reused."""
    from types import SimpleNamespace

    from trainer.taper.config import get_config
    from trainer.taper.inputs import check_resumable

    env = SimpleNamespace(cfg=get_config("tiny"), fingerprint="data-a")
    check_resumable(tmp_path, env)  # fresh: stamps the directory
    (tmp_path / "stage1.safetensors").write_bytes(b"x")
    check_resumable(tmp_path, SimpleNamespace(cfg=get_config("tiny", seeds=(7,)),
                                              fingerprint="data-a"))  # seeds do not matter
    for other in (SimpleNamespace(cfg=get_config("tiny", stage1_epochs=2), fingerprint="data-a"),
                  SimpleNamespace(cfg=get_config("tiny"), fingerprint="data-b")):
        with pytest.raises(SystemExit, match="another config or dataset"):
            check_resumable(tmp_path, other)
    (tmp_path / "run_stamp.json").unlink()
    with pytest.raises(SystemExit, match="unknown provenance"):
        check_resumable(tmp_path, env)


def test_every_main_row_states_its_training_passes(tiny_run):
    """Issue 14 §7: the controls that stop before stage 3 train for fewer passes; the report
    says so per row instead of implying one budget for all."""
    from trainer.taper.config import get_config

    root, _ = tiny_run
    report = (root / "run" / "report.md").read_text()
    cfg = get_config("tiny")
    assert "| method | acc | passes |" in report and "ddof = 0" in report
    row = next(line for line in report.splitlines() if line.startswith("| Stage-1 model alone"))
    assert row.endswith(f"| {cfg.stage1_epochs:g} |")
    row = next(line for line in report.splitlines() if line.startswith("| TAPER (text mixer"))
    assert row.endswith(f"| {cfg.budget:g} |")
