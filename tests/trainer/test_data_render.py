"""Domain renderer: determinism and the visual signature of each domain."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.data import sources
from trainer.data.catalogue import DOMAINS
from trainer.data.render import render


@pytest.fixture(scope="module")
def digits():
    images, _ = sources.load_mnist()
    return images[:8]


@pytest.mark.parametrize("domain", DOMAINS)
def test_same_seed_same_image_other_seed_differs(digits, domain):
    a = render(digits[0], domain, np.random.default_rng(3))
    b = render(digits[0], domain, np.random.default_rng(3))
    c = render(digits[0], domain, np.random.default_rng(4))
    assert a.shape == (32, 32, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def _saturation(img):
    f = img.astype(float)
    return float((f.max(-1) - f.min(-1)).mean())


def test_sketch_is_dark_strokes_on_white(digits):
    for i, img in enumerate(digits):
        out = render(img, "sketch", np.random.default_rng(i))
        assert np.median(out) > 230  # white paper dominates
        assert out.min() < 120  # and there are dark strokes
        assert _saturation(out) < 12  # nearly gray


def test_cartoon_uses_few_flat_colours_with_dark_outline(digits):
    for i, img in enumerate(digits):
        out = render(img, "cartoon", np.random.default_rng(i))
        assert len(np.unique(out.reshape(-1, 3), axis=0)) <= 5
        assert out.sum(-1).min() < 150


def test_photo_and_painting_have_rich_backgrounds(digits):
    for i, img in enumerate(digits):
        for domain in ("photo", "art_painting"):
            out = render(img, domain, np.random.default_rng(i))
            assert len(np.unique(out.reshape(-1, 3), axis=0)) > 100


def test_rejects_bad_input(digits):
    with pytest.raises(ValueError, match="unknown domain"):
        render(digits[0], "oil", np.random.default_rng(0))
    with pytest.raises(ValueError, match="uint8"):
        render(digits[0].astype(float), "photo", np.random.default_rng(0))
