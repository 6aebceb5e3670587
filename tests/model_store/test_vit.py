"""The ViT foundation tower: a native open_clip ViT, rebuilt bit-identically, loadable by
open_clip itself, and readable block by block (what the per-layer methods build on)."""

from __future__ import annotations

import numpy as np
import open_clip
import pytest
import torch
import torch.nn.functional as F

from model_store.artifacts import write_artifact
from model_store.clip import build_default_clip, bundle_files, default_model_config, load_clip
from model_store.vit import cls_states, is_vit, pooled, project, vit_vision_cfg

IMAGES = np.random.default_rng(1).integers(0, 256, (4, 32, 32, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def vit():
    return build_default_clip("vit", embed_dim=16, image_size=32, device="cpu")


def test_config_is_a_native_open_clip_vit():
    cfg = default_model_config("vit", embed_dim=16)["vision_cfg"]
    assert "timm_model_name" not in cfg
    assert (cfg["patch_size"], cfg["width"], cfg["layers"], cfg["pool_type"]) == (4, 192, 6, "tok")
    with pytest.raises(ValueError, match="multiple of patch"):
        vit_vision_cfg(30)
    with pytest.raises(ValueError, match="multiple of heads"):
        vit_vision_cfg(32, width=100)


def test_depth_is_a_choice_and_a_trained_file_of_another_depth_is_refused(vit, tmp_path):
    from trainer.federated.trained import export_trained, load_trained

    deep = build_default_clip("vit", embed_dim=16, image_size=32, device="cpu", vit_layers=8)
    assert len(deep.model.visual.transformer.resblocks) == 8
    assert len(cls_states(deep.model.visual, deep.preprocess(IMAGES[:1]))) == 9
    export_trained(deep, tmp_path / "deep.safetensors")
    with pytest.raises(ValueError, match="does not fit"):
        load_trained(vit, tmp_path / "deep.safetensors")


def test_every_vision_weight_is_drawn_from_the_seed(vit):
    again = build_default_clip("vit", embed_dim=16, image_size=32, device="cpu")
    other = build_default_clip("vit", embed_dim=16, image_size=32, device="cpu", seed=1)
    assert again.fingerprint == vit.fingerprint
    mine, theirs = vit.model.visual.state_dict(), other.model.visual.state_dict()
    redrawn = [k for k in mine if not torch.equal(mine[k], theirs[k])]
    constant = {k for k in mine if k not in redrawn}
    # only the LayerNorm/bias defaults (ones and zeros) may coincide between seeds
    assert all(torch.all((mine[k] == 0) | (mine[k] == 1)) for k in constant)
    assert any("resblocks.5" in k for k in redrawn) and "proj" in redrawn


def test_block_by_block_reading_reproduces_open_clip_forward(vit):
    visual = vit.model.visual
    assert is_vit(visual)
    x = vit.preprocess(IMAGES)
    with torch.no_grad():
        states = cls_states(visual, x)
        ours = project(visual, pooled(visual, states[-1]))
        theirs = visual(x)
    assert len(states) == 7 and states[0].shape == (4, 65, 192)
    torch.testing.assert_close(ours, theirs)
    pre = vit.encode_images(IMAGES, pre_projection=True)
    np.testing.assert_allclose(vit.project_images(pre), vit.encode_images(IMAGES), atol=1e-6)
    assert vit.image_projection().shape == (16, 192)


def test_bundle_loads_in_open_clip_with_the_same_features(vit, tmp_path):
    tensors, json_files = bundle_files(vit)
    ref = write_artifact(tmp_path, "foundation", tensors=tensors, json_files=json_files,
                         config={"image_tower": "vit"})
    again = load_clip(ref.path, device="cpu")
    assert again.fingerprint == vit.fingerprint
    model, _, _ = open_clip.create_model_and_transforms(f"local-dir:{ref.path}")
    with torch.no_grad():
        feats = F.normalize(model.eval().encode_image(vit.preprocess(IMAGES)), dim=-1)
    np.testing.assert_allclose(feats.numpy(), vit.encode_images(IMAGES), atol=1e-5)
