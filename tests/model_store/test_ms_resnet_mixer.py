"""ResNet-18 builder (stock torchvision compatibility, block map) and the mixer predictor."""

from __future__ import annotations

import pytest
import torch
from torchvision.models import ResNet, resnet18

from model_store.mixer import MixerPredictor, build_mixer
from model_store.resnet import NUM_BLOCKS, block_of, build_resnet18


def test_state_dict_loads_strictly_into_stock_torchvision_with_same_logits():
    torch.manual_seed(0)
    ours = build_resnet18(7).eval()
    assert isinstance(ours, ResNet)
    stock = resnet18(num_classes=7)
    stock.load_state_dict(ours.state_dict(), strict=True)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(stock.eval()(x), ours(x), rtol=0, atol=0)
    assert ours(x).shape == (2, 7)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_num_classes(bad):
    with pytest.raises(ValueError, match="num_classes"):
        build_resnet18(bad)


def test_block_map_matches_the_documented_partition():
    expected_prefix = {"conv1": 0, "bn1": 0, "layer1": 0, "layer2": 1, "layer3": 2,
                       "layer4": 3, "fc": 3}  # fmt: skip
    keys = list(resnet18(num_classes=3).state_dict())
    for key in keys:
        assert block_of(key) == expected_prefix[key.split(".")[0]], key
    assert sorted({block_of(k) for k in keys}) == list(range(NUM_BLOCKS))
    for bad in ("layer5.0.weight", "fc", "module.conv1.weight", "bn1weight"):
        with pytest.raises(KeyError):
            block_of(bad)


def test_mixer_outputs_blockwise_distributions():
    torch.manual_seed(0)
    mixer = MixerPredictor(16, num_bases=5)
    out = mixer(torch.randn(8, 16))
    assert out.shape == (8, NUM_BLOCKS, 5)
    torch.testing.assert_close(out.sum(-1), torch.ones(8, NUM_BLOCKS))
    assert (out > 0).all()
    layers = [type(m).__name__ for m in mixer.net]
    assert layers.count("Linear") == 4 and layers.count("BatchNorm1d") == 3


def test_batch_of_one_needs_eval_mode_and_predict_provides_it():
    torch.manual_seed(0)
    mixer = MixerPredictor(16, num_bases=3)
    mixer(torch.randn(32, 16))  # train mode: updates running statistics
    x = torch.randn(16)
    with pytest.raises(ValueError):  # why serving must not run BatchNorm in train mode
        mixer(x[None])
    single = mixer.predict(x)
    assert mixer.training  # predict restores the caller's mode
    assert single.shape == (NUM_BLOCKS, 3)
    with torch.no_grad():
        torch.testing.assert_close(single, mixer.eval()(x[None])[0])
        batch = mixer(torch.stack([x, -x]))
    torch.testing.assert_close(batch[0], single)  # eval mode: no dependence on batch mates


@pytest.mark.parametrize("norm", ["batch", "layer", "none"])
def test_config_round_trip_rebuilds_identical_mixer(norm):
    torch.manual_seed(0)
    mixer = MixerPredictor(12, num_bases=2, hidden=8, norm=norm)
    mixer(torch.randn(4, 12))
    clone = build_mixer(mixer.config)
    clone.load_state_dict(mixer.state_dict(), strict=True)
    x = torch.randn(3, 12)
    torch.testing.assert_close(clone.predict(x), mixer.predict(x))


def test_mixer_argument_errors():
    with pytest.raises(ValueError, match="norm"):
        MixerPredictor(8, 2, norm="group")
    with pytest.raises(ValueError, match="num_bases"):
        MixerPredictor(8, 0)
    with pytest.raises(ValueError, match="unknown mixer config"):
        build_mixer({"embed_dim": 8, "num_bases": 2, "dropout": 0.1})
    with pytest.raises(ValueError, match=r"\(B, 8\)"):
        MixerPredictor(8, 2).predict(torch.randn(5))
