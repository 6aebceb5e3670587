"""ImageFolder reader on real trees written to tmp_path."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.data.imagefolder import read_imagefolder


def test_class_layout(tmp_path, image_factories):
    write_image, make_imagefolder = image_factories
    root = make_imagefolder(tmp_path / "ds", {"golden_retriever": 10, "tabby": 5})
    write_image(root / "tabby" / "big.JPEG", size=(80, 50))
    (root / "tabby" / "notes.txt").write_text("ignored")
    data = read_imagefolder(root)
    assert data.class_names == ("golden retriever", "tabby")
    assert data.images.shape == (16, 32, 32, 3) and data.images.dtype == np.uint8
    assert np.bincount(data.labels).tolist() == [10, 6]
    assert data.domain_names == ("default",) and set(data.domains) == {0}
    assert set(np.unique(data.split)) <= {0, 1, 2} and (data.split == 2).sum() == 3
    assert read_imagefolder(root).fingerprint == data.fingerprint


def test_domain_layout(tmp_path, image_factories):
    write_image, make_imagefolder = image_factories
    root = make_imagefolder(tmp_path / "ds", {"cat": 3, "dog": 4}, domains=["photo", "sketch"],
                            ext=".jpg")
    data = read_imagefolder(root)
    assert data.domain_names == ("photo", "sketch")
    assert data.class_names == ("cat", "dog")
    assert np.bincount(data.domains).tolist() == [7, 7]


def test_grayscale_and_rgba_become_rgb(tmp_path, image_factories):
    write_image, make_imagefolder = image_factories
    write_image(tmp_path / "a" / "x.png", mode="L")
    write_image(tmp_path / "b" / "y.png", mode="RGBA")
    data = read_imagefolder(tmp_path)
    assert data.images.shape == (2, 32, 32, 3)


def test_errors_are_clear(tmp_path, image_factories):
    write_image, make_imagefolder = image_factories
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_imagefolder(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no class folders"):
        read_imagefolder(tmp_path / "empty")
    mixed = make_imagefolder(tmp_path / "mixed", {"cat": 2})
    (mixed / "dog").mkdir()
    with pytest.raises(ValueError, match="mixes"):
        read_imagefolder(mixed)
    nested = make_imagefolder(tmp_path / "nested", {"cat": 2}, domains=["photo"])
    (nested / "photo" / "dog").mkdir()
    with pytest.raises(ValueError, match="dog has no"):
        read_imagefolder(nested)
    bad = make_imagefolder(tmp_path / "bad", {"cat": 2})
    (bad / "cat" / "broken.png").write_bytes(b"not an image")
    with pytest.raises(ValueError, match="broken.png"):
        read_imagefolder(bad)
