"""`tailor train foundation` on a tiny synthetic public set: trains, saves a loadable bundle."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from model_store.artifacts import open_artifact
from model_store.clip import load_clip
from trainer.federated.cli import foundation_main
from trainer.federated.foundation import augment, zero_shot_accuracy


def _shapes(n_per_class: int = 12, seed: int = 0):
    """Three grayscale classes a CNN can tell apart: horizontal bar, vertical bar, square."""
    rng = np.random.default_rng(seed)
    images, labels = [], []
    for c in range(3):
        for _ in range(n_per_class):
            img = np.zeros((28, 28), np.uint8)
            a, b = rng.integers(4, 10), rng.integers(18, 24)
            if c == 0:
                img[12:16, a:b] = 255
            elif c == 1:
                img[a:b, 12:16] = 255
            else:
                img[a : a + 10, a : a + 10] = 255
            images.append(img)
            labels.append(c)
    return np.stack(images), np.asarray(labels)


def test_augment_colours_and_places_the_foreground():
    gray, _ = _shapes(4)
    out = augment(gray, torch.Generator().manual_seed(0)).numpy()
    assert out.shape == (12, 32, 32, 3) and out.dtype == np.uint8
    corners = out[:, 0, 0].astype(int)
    assert len({tuple(c // 32) for c in corners}) > 3  # backgrounds differ across images
    fg_mask = np.zeros((12, 32, 32), bool)
    for i in range(12):  # the shape is still there: pixels far from the background colour
        fg_mask[i] = np.abs(out[i].astype(int) - corners[i]).sum(-1) > 60
    assert fg_mask.mean(axis=(1, 2)).min() > 0.02


def test_foundation_main_trains_and_saves_an_open_clip_bundle(tmp_path):
    images, labels = _shapes()
    npz = tmp_path / "public.npz"
    np.savez(npz, images=images, labels=labels, class_names=np.array(["dash", "pipe", "box"]))
    summary = foundation_main(
        [
            "--public-npz",
            str(npz),
            "--store",
            str(tmp_path / "store"),
            "--image-tower",
            "resnet18",
            "--embed-dim",
            "16",
            "--steps",
            "3",
            "--batch-size",
            "8",
            "--device",
            "cpu",
        ]
    )
    assert 0.0 <= summary["public_val_zero_shot_after"] <= 1.0
    art = open_artifact(tmp_path / "store", "foundation")
    assert art.version == summary["version"]
    assert art.json("classes") == ["dash", "pipe", "box"]
    assert art.metadata["metrics"]["images_seen"] == 24
    bb = load_clip(f"local-dir:{art.path}", device="cpu")
    assert bb.fingerprint == art.config["backbone_sha256"]
    acc = zero_shot_accuracy(
        bb, augment(images, torch.Generator().manual_seed(1)).numpy(), labels,
        ["dash", "pipe", "box"]
    )
    assert 0.0 <= acc <= 1.0
    again = foundation_main([
        "--public-npz", str(npz), "--store", str(tmp_path / "store"), "--init", "latest",
        "--steps", "2", "--batch-size", "8", "--device", "cpu"])
    assert again["init"]["version"] == summary["version"]
    assert again["image_tower"] == "resnet18"
    assert open_artifact(tmp_path / "store", "foundation").version == again["version"]
    newer = load_clip(f"local-dir:{open_artifact(tmp_path / 'store', 'foundation').path}")
    assert newer.fingerprint != bb.fingerprint  # training continued from the saved weights


def test_vit_foundation_learns_the_public_shapes_and_continues_as_a_vit(tmp_path):
    images, labels = _shapes(16)
    npz = tmp_path / "public.npz"
    np.savez(npz, images=images, labels=labels, class_names=np.array(["dash", "pipe", "box"]))
    common = ["--public-npz", str(npz), "--store", str(tmp_path / "store"), "--device", "cpu",
              "--batch-size", "16", "--val-fraction", "0.25"]
    summary = foundation_main([*common, "--arch", "vit", "--embed-dim", "16", "--steps", "40",
                               "--lr", "1e-3"])
    art = open_artifact(tmp_path / "store", "foundation")
    log = art.metadata["training"]["log"]
    assert summary["image_tower"] == "vit" and art.config["image_tower"] == "vit"
    assert log[-1]["loss"] < 0.8 * log[0]["loss"], log  # it learns, not just runs
    again = foundation_main([*common, "--init", "latest", "--steps", "2"])
    assert again["image_tower"] == "vit"
    assert load_clip(f"local-dir:{art.path}").model_cfg["vision_cfg"]["width"] == 192
    assert open_artifact(tmp_path / "store", "foundation").metadata["training"][
        "vit_layers"] == 6  # the depth built, recorded though no flag asked for it
    for bad in (["--init", "latest", "--arch", "vit", "--vit-layers", "8"],  # a stored depth
                ["--arch", "resnet18", "--vit-layers", "8"],
                ["--arch", "vit", "--vit-layers", "0"]):
        with pytest.raises(SystemExit):
            foundation_main([*common, *bad])


def test_augment_is_reproducible_from_its_generator():
    gray, _ = _shapes(2)
    a = augment(gray, torch.Generator().manual_seed(3))
    b = augment(torch.from_numpy(gray), torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert not torch.equal(a, augment(gray, torch.Generator().manual_seed(4)))


@pytest.mark.parametrize("arch", ["vit", "resnet18"])
def test_exported_towers_rebuild_the_trained_foundation(tmp_path, arch):
    """A run's towers exported at a snapshot and at the end load into a fresh default CLIP
    (``--init trained:FILE``, as after a GPU run) and give the trained foundation's weights
    (resnet18: BatchNorm buffers too, and training mode restored after the mid-run snapshot)."""
    images, labels = _shapes()
    npz = tmp_path / "public.npz"
    np.savez(npz, images=images, labels=labels, class_names=np.array(["dash", "pipe", "box"]))
    common = ["--public-npz", str(npz), "--arch", arch, "--embed-dim", "16", "--batch-size", "8",
              "--device", "cpu"]
    trained = foundation_main([*common, "--store", str(tmp_path / "a"), "--steps", "3",
                               "--snapshot-steps", "2", "--export-dir", str(tmp_path / "out")])
    assert [s["step"] for s in trained["snapshots"]] == [2, 3]
    final = tmp_path / "out" / "trained-s3.safetensors"
    assert trained["snapshots"][-1]["sha256"] and final.is_file()
    rebuilt = foundation_main([*common, "--store", str(tmp_path / "b"), "--steps", "0",
                               "--init", f"trained:{final}"])
    assert rebuilt["init"]["spec"] == "trained"
    assert rebuilt["public_val_zero_shot_after"] == trained["public_val_zero_shot_after"]
    a = load_clip(f"local-dir:{trained['path']}", device="cpu")
    b = load_clip(f"local-dir:{rebuilt['path']}", device="cpu")
    assert a.fingerprint == b.fingerprint
    assert open_artifact(tmp_path / "b", "foundation").config["backbone_sha256"] == b.fingerprint
    if arch == "resnet18":
        bn = dict(a.model.visual.named_buffers())
        assert any(k.endswith("num_batches_tracked") and int(v) == 3 for k, v in bn.items())


def test_trained_towers_that_do_not_fit_are_refused(tmp_path):
    images, labels = _shapes()
    npz = tmp_path / "public.npz"
    np.savez(npz, images=images, labels=labels, class_names=np.array(["dash", "pipe", "box"]))
    common = ["--public-npz", str(npz), "--arch", "resnet18", "--embed-dim", "16",
              "--batch-size", "8", "--device", "cpu"]
    foundation_main([*common, "--steps", "1", "--no-save", "--export-dir", str(tmp_path)])
    wrong = tmp_path / "wrong.safetensors"
    save_file({"visual.proj": torch.zeros(3, 3)}, str(wrong))
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"not a safetensors file")
    cases = [(wrong, [], "does not fit"), (broken, [], "not a readable safetensors"),
             (tmp_path / "trained-s1.safetensors", ["--image-size", "48"], "preprocess")]
    for path, extra, message in cases:  # a CNN's weights fit any input size: metadata decides
        with pytest.raises(SystemExit, match=message):
            foundation_main([*common, *extra, "--store", str(tmp_path / "c"), "--steps", "0",
                             "--init", f"trained:{path}"])
    assert not (tmp_path / "c").exists()


def test_continued_training_records_the_new_weights_fingerprint(tmp_path):
    images, labels = _shapes()
    npz = tmp_path / "public.npz"
    np.savez(npz, images=images, labels=labels, class_names=np.array(["dash", "pipe", "box"]))
    common = ["--public-npz", str(npz), "--store", str(tmp_path / "s"), "--arch", "vit",
              "--embed-dim", "16", "--batch-size", "8", "--device", "cpu"]
    foundation_main([*common, "--steps", "1"])
    again = foundation_main([*common, "--steps", "2", "--init", "latest"])
    art = open_artifact(tmp_path / "s", "foundation", again["version"])
    assert art.config["backbone_sha256"] != again["init"]["sha256"]
    assert art.config["backbone_sha256"] == load_clip(f"local-dir:{art.path}",
                                                      device="cpu").fingerprint
