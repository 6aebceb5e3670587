"""Tailor-PACS: a seeded, cached, PACS-like benchmark built from the offline sources.

Each source image is rendered into exactly one domain (balanced per class), and train/val/test
are split per (class, domain) cell, so the splits are disjoint by source image.

Sources are partitioned ONCE, with a fixed seed that no build parameter changes, into a
Tailor-PACS pool (the first `PACS_POOL` = 800 images of every class, in a fixed shuffled order)
and a PUBLIC pool (everything else). Animal-MNIST has only 1,000 images per class, so the default
size is 800 per class for all 30 classes (balanced), leaving 200 animals per class public.
Because the partition ignores `seed` and `size`, no build of Tailor-PACS can ever overlap the
public set that the federated foundation model is trained on.

The `large` size (issue 14 §5: how TAPER scales with data) takes every image of a class that the
foundation's public build (`build_public` defaults: seed 0, 2,000 per class) does not: the 800 of
the Tailor-PACS pool plus the public pool's spare images, about 5,000 per digit or garment class
and 800 per animal (Animal-MNIST has 1,000, 200 of them public). It is disjoint from the default
public build, not from every public build (a larger `per_class` there would overlap it).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainer.data import sources
from trainer.data.catalogue import CLASSES, DOMAINS, GROUPS
from trainer.data.render import render

BUILD_VERSION = 1  # bump whenever rendering or selection changes, so old caches are not reused
PACS_POOL = 800
POOL_SEED = 20261122
SIZES = {"default": 800, "tiny": 32, "large": None}  # None: every image of the large pool
PUBLIC_SIZES = {"default": 2000, "tiny": 64}
# tiny avoids Fashion-MNIST so it works without the apt package (digits + animals only).
SIZE_GROUPS = {"default": GROUPS, "tiny": ("digit", "animal"), "large": GROUPS}
GROUP_SOURCE = {"digit": "mnist", "clothing": "fashion", "animal": "animal"}
SPLITS = ("train", "val", "test")
VAL_FRACTION, TEST_FRACTION = 0.1, 0.2


def default_data_dir() -> Path:
    """`TAILOR_DATA_DIR`, else `./.tailor/data` (docs/architecture.md, Settings)."""
    return Path(os.environ.get("TAILOR_DATA_DIR", "./.tailor/data"))


@dataclass(frozen=True)
class PacsData:
    """A rendered dataset; every per-image array has the same first dimension.

    `domains` index `domain_names`, `labels` index `class_names`, `split` is 0/1/2 for
    train/val/test. `fingerprint` is the sha256 of the arrays and build parameters.
    """

    images: np.ndarray
    labels: np.ndarray
    domains: np.ndarray
    source_ids: np.ndarray
    split: np.ndarray
    class_names: tuple[str, ...]
    fingerprint: str
    domain_names: tuple[str, ...] = DOMAINS

    def __len__(self) -> int:
        return len(self.labels)

    def indices(self, split: str) -> np.ndarray:
        """Indices of the images in one split ('train', 'val' or 'test')."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
        return np.flatnonzero(self.split == SPLITS.index(split))


@dataclass(frozen=True)
class PublicData:
    """Raw grayscale PUBLIC images (uint8 [n, 28, 28]) that no Tailor-PACS client holds."""

    images: np.ndarray
    labels: np.ndarray
    source_ids: np.ndarray
    class_names: tuple[str, ...]
    fingerprint: str

    def __len__(self) -> int:
        return len(self.labels)


def fingerprint(arrays: dict[str, np.ndarray], params: dict) -> str:
    """sha256 over build parameters and every array's name, dtype, shape and bytes."""
    h = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{arr.dtype.str}|{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def class_pools(group: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per class of a group: (Tailor-PACS pool, public pool) of source indices.

    The order depends only on POOL_SEED, so the partition is the same for every build.
    """
    images, labels = sources.load_source(GROUP_SOURCE[group])
    code = sources.SOURCE_CODES[GROUP_SOURCE[group]]
    pools = []
    for c in range(10):
        rng = np.random.default_rng([POOL_SEED, code, c])
        order = rng.permutation(np.flatnonzero(labels == c))
        pools.append((order[:PACS_POOL], order[PACS_POOL:]))
    return pools


def public_take(public: np.ndarray, class_index: int, seed: int = 0,
                per_class: int = PUBLIC_SIZES["default"]) -> np.ndarray:
    """The public-pool images ``build_public`` takes for one class (sorted source indices)."""
    rng = np.random.default_rng([seed, class_index])
    return np.sort(rng.permutation(public)[:per_class])


def large_pool(group: str) -> list[np.ndarray]:
    """Per class of a group: the Tailor-PACS pool plus the public images that the default
    public build leaves out (the `large` size's candidates)."""
    out = []
    for c, (pacs, public) in enumerate(class_pools(group)):
        index = GROUPS.index(group) * 10 + c  # the class's index among all 30 (build_public's)
        spare = np.setdiff1d(public, public_take(public, index))
        out.append(np.concatenate([pacs, spare]))
    return out


def _classes_of(groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c["name"] for c in CLASSES if c["group"] in groups)


def _assign_split(n: int, rng: np.random.Generator) -> np.ndarray:
    """Split labels for one (class, domain) cell of n images: ~70/10/20, shuffled."""
    n_test, n_val = int(round(n * TEST_FRACTION)), int(round(n * VAL_FRACTION))
    split = np.zeros(n, np.int8)
    split[:n_test] = 2
    split[n_test : n_test + n_val] = 1
    return rng.permutation(split)


def _render_class(group: str, pacs_pool: np.ndarray, label: int, n: int, seed: int) -> dict:
    """Choose n sources of one class, give each one domain (balanced), render and split."""
    images, _ = sources.load_source(GROUP_SOURCE[group])
    rng = np.random.default_rng([seed, label])
    chosen = np.sort(rng.choice(pacs_pool, size=n, replace=False))
    ids = sources.source_ids(GROUP_SOURCE[group], chosen)
    domains = rng.permutation(np.arange(n) % len(DOMAINS)).astype(np.int8)
    split = np.zeros(n, np.int8)
    for d in range(len(DOMAINS)):
        cell = np.flatnonzero(domains == d)
        split[cell] = _assign_split(len(cell), rng)
    # One generator per image, keyed by (seed, source id): output is independent of order.
    rendered = np.stack([
        render(images[i], DOMAINS[d], np.random.default_rng([seed, int(sid)]))
        for i, d, sid in zip(chosen, domains, ids, strict=True)
    ])
    return {"images": rendered, "labels": np.full(n, label, np.int64), "domains": domains,
            "source_ids": ids, "split": split}


def _save_npz(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Write atomically (temp file + os.replace) so a crash never leaves a half cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
    os.close(fd)
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays, __meta__=np.array(json.dumps(meta)))
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; caches are shared, not secret
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _load_npz(path: Path, params: dict) -> tuple[dict[str, np.ndarray], dict] | None:
    """Load a cache file; None when absent, built with other parameters, or corrupted."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "__meta__"}
            meta = json.loads(str(z["__meta__"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if meta.get("params") != params or fingerprint(arrays, params) != meta.get("fingerprint"):
        return None
    return arrays, meta


def build_pacs(
    data_dir: str | Path | None = None, size: str = "default", seed: int = 0,
    per_class: int | None = None,
) -> PacsData:
    """Build (or load from cache) Tailor-PACS.

    Args:
        data_dir: cache directory; default `default_data_dir()`.
        size: 'default' (800 per class, 30 classes), 'tiny' (32 per class, digits + animals,
            no apt package needed) or 'large' (every image outside the default public build:
            ~5,000 per digit/garment class, 800 per animal; ~110k images, ~80 s to render).
        seed: selects images, domains, splits and rendering; same seed → identical arrays.
        per_class: override the number of source images per class (at most PACS_POOL; for
            'large', a cap on its per-class counts).
    """
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    n = SIZES[size] if per_class is None else int(per_class)
    cap = 10**9 if size == "large" else PACS_POOL
    if n is not None and not 4 <= n <= cap:
        raise ValueError(f"per_class must be in [4, {cap}], got {n}")
    groups = SIZE_GROUPS[size]
    class_names = _classes_of(groups)
    params = {"kind": "tailor-pacs", "version": BUILD_VERSION, "size": size, "per_class": n,
              "seed": seed, "groups": list(groups), "classes": list(class_names)}
    path = Path(data_dir or default_data_dir()) / f"tailor-pacs-{size}-n{n or 'all'}-s{seed}.npz"
    cached = _load_npz(path, params)
    if cached is None:
        parts = []
        for group in groups:
            pools = (large_pool(group) if size == "large"
                     else [pacs for pacs, _ in class_pools(group)])
            for pool, name in zip(pools, _classes_of((group,)), strict=True):
                count = min(n or len(pool), len(pool))
                parts.append(_render_class(group, pool, class_names.index(name), count, seed))
        arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        meta = {"params": params, "fingerprint": fingerprint(arrays, params)}
        _save_npz(path, arrays, meta)
    else:
        arrays, meta = cached
    return PacsData(**arrays, class_names=class_names, fingerprint=meta["fingerprint"])


def build_public(
    data_dir: str | Path | None = None, size: str = "default", per_class: int | None = None,
    seed: int = 0, groups: tuple[str, ...] | None = None,
) -> PublicData:
    """Raw grayscale PUBLIC images from the public pools (disjoint from every Tailor-PACS build).

    Args:
        size: 'default' (up to 2,000 per class, all groups) or 'tiny' (64 per class, digits +
            animals, like the tiny Tailor-PACS). Animal classes have only 200 public images.
        per_class: override the cap per class.
        groups: override the groups (subset of GROUPS).
    """
    if size not in PUBLIC_SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(PUBLIC_SIZES)}")
    per_class = PUBLIC_SIZES[size] if per_class is None else int(per_class)
    groups = SIZE_GROUPS[size] if groups is None else tuple(groups)
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown groups {sorted(unknown)}; expected a subset of {GROUPS}")
    class_names = _classes_of(tuple(g for g in GROUPS if g in groups))
    params = {"kind": "public", "version": BUILD_VERSION, "per_class": per_class, "seed": seed,
              "classes": list(class_names)}
    tag = "-".join(g for g in GROUPS if g in groups)
    path = Path(data_dir or default_data_dir()) / f"public-{tag}-n{per_class}-s{seed}.npz"
    cached = _load_npz(path, params)
    if cached is None:
        imgs, labels, ids = [], [], []
        for group in (g for g in GROUPS if g in groups):
            source = GROUP_SOURCE[group]
            images, _ = sources.load_source(source)
            for (_, public), name in zip(class_pools(group), _classes_of((group,)), strict=True):
                take = public_take(public, class_names.index(name), seed, per_class)
                imgs.append(images[take])
                labels.append(np.full(len(take), class_names.index(name), np.int64))
                ids.append(sources.source_ids(source, take))
        arrays = {"images": np.concatenate(imgs), "labels": np.concatenate(labels),
                  "source_ids": np.concatenate(ids)}
        meta = {"params": params, "fingerprint": fingerprint(arrays, params)}
        _save_npz(path, arrays, meta)
    else:
        arrays, meta = cached
    return PublicData(**arrays, class_names=class_names, fingerprint=meta["fingerprint"])
