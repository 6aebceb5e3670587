"""Federated clients from Tailor-PACS, and frozen-feature caching per client.

Clients (FedCLIP's protocol): one client per domain, leave-one-domain-out (3 participants, the
4th is the unseen "upcoming" client), each client's images split at random 60/20/20 into
train/val/test. Each source image is rendered into exactly one domain, so domain clients never
share a source image. The Dirichlet setting instead pools the domains and gives each client a
label distribution drawn from ``Dirichlet(alpha)`` per class (smaller alpha = more skew).

Loaders (``load_pacs``, ``load_backbone``, ``domain_features``) bring the dataset, the frozen
backbone and every image's features; the CLI, the simulation runner and the deployment share them.

Features: the backbone is frozen, so a client computes its image features once; the cache key
hashes the backbone's weights (:attr:`ClipBackbone.fingerprint`), the feature kind and the exact
client images, so a retrained foundation can never be served stale features.
"""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FRACTIONS = (0.6, 0.2, 0.2)


@dataclass
class ClientSplit:
    """Indices (into the dataset arrays) of one client's train/val/test images."""

    name: str
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def all(self) -> np.ndarray:
        """Every index of the client, train then val then test."""
        return np.concatenate([self.train, self.val, self.test])


def split_60_20_20(name: str, idx: np.ndarray, rng: np.random.Generator) -> ClientSplit:
    """Random 60/20/20 split of one client's indices (FedCLIP's per-client protocol)."""
    if len(idx) < 5:
        raise ValueError(f"client {name!r} has {len(idx)} images; need at least 5 to split")
    idx = rng.permutation(idx)
    n_tr, n_va = int(round(FRACTIONS[0] * len(idx))), int(round(FRACTIONS[1] * len(idx)))
    return ClientSplit(name, np.sort(idx[:n_tr]), np.sort(idx[n_tr:n_tr + n_va]),
                       np.sort(idx[n_tr + n_va:]))


def domain_clients(domains: np.ndarray, domain_names: list[str], seed: int) -> list[ClientSplit]:
    """One client per domain, each split 60/20/20 (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for d, name in enumerate(domain_names):
        idx = np.flatnonzero(_domain_ids(domains, domain_names) == d)
        out.append(split_60_20_20(name, idx, rng))
    return out


def dirichlet_clients(labels: np.ndarray, num_clients: int, alpha: float, seed: int,
                      min_size: int = 20) -> list[ClientSplit]:
    """Label-skewed clients: per class, images shared out by Dirichlet(alpha) proportions.

    Redraws (up to 100 times) until every client holds at least ``min_size`` images, the usual
    guard so that no client ends up with an unsplittable handful.
    """
    if alpha <= 0 or num_clients < 2:
        raise ValueError("Dirichlet split needs alpha > 0 and at least 2 clients")
    rng = np.random.default_rng(seed)
    for _ in range(100):
        parts: list[list[int]] = [[] for _ in range(num_clients)]
        for c in np.unique(labels):
            idx = rng.permutation(np.flatnonzero(labels == c))
            cuts = (np.cumsum(rng.dirichlet([alpha] * num_clients))[:-1] * len(idx)).astype(int)
            for k, chunk in enumerate(np.split(idx, cuts)):
                parts[k].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [split_60_20_20(f"client{k}", np.asarray(p), rng) for k, p in enumerate(parts)]
    raise ValueError(f"could not draw {num_clients} clients of >= {min_size} images "
                     f"with alpha={alpha}")


def _domain_ids(domains: np.ndarray, domain_names: list[str]) -> np.ndarray:
    """Domains as integer ids whether the dataset stores names or ids."""
    if domains.dtype.kind in "iu":
        return domains.astype(np.int64)
    lookup = {n: i for i, n in enumerate(domain_names)}
    return np.asarray([lookup[str(d)] for d in domains], dtype=np.int64)


class FeatureCache:
    """Frozen-backbone features on disk, ``<root>/<key>.npy``, key = sha256 of what matters.

    Capacity: unbounded by design (one float32 row per image per backbone, ~1-5 KB); delete the
    directory to evict. Writes go to a temp name and are renamed, so a crash leaves no torn file.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(backbone_fingerprint: str, kind: str, images: np.ndarray) -> str:
        """Cache key of ``kind`` features of these exact images under this exact backbone."""
        h = hashlib.sha256(f"{backbone_fingerprint}|{kind}|{images.shape}|{images.dtype}".encode())
        h.update(np.ascontiguousarray(images).tobytes())
        return h.hexdigest()

    def features(self, backbone: Any, images: np.ndarray, kind: str = "embed") -> np.ndarray:
        """``embed`` (normalised CLIP embedding) or ``trunk`` (pre-projection) features.

        When the backbone can project cached trunk features (``project_images``), ``embed`` is
        derived from the cached ``trunk`` features, so each image crosses the trunk once.
        """
        if kind not in ("embed", "trunk"):
            raise ValueError(f"unknown feature kind {kind!r}")
        path = self.root / f"{self.key(backbone.fingerprint, kind, images)}.npy"
        if path.is_file():
            self.hits += 1
            return np.load(path)
        if kind == "embed" and hasattr(backbone, "project_images"):
            feats = backbone.project_images(self.features(backbone, images, "trunk"))
        else:
            self.misses += 1
            feats = backbone.encode_images(images, pre_projection=(kind == "trunk"))
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, feats.astype(np.float32))
        tmp.replace(path)
        return feats


def client_arrays(split: ClientSplit, feats: np.ndarray, labels: np.ndarray
                  ) -> dict[str, np.ndarray]:
    """``x_<split>``/``y_<split>`` arrays of one client from features of ``split.all()``."""
    out: dict[str, np.ndarray] = {}
    start = 0
    for which in ("train", "val", "test"):
        idx = getattr(split, which)
        out[f"x_{which}"] = feats[start:start + len(idx)].astype(np.float32)
        out[f"y_{which}"] = labels[idx].astype(np.int64)
        start += len(idx)
    return out


# ---- loaders: the dataset, the frozen backbone, every image's features -------------------


def load_pacs(args: argparse.Namespace) -> Any:
    """Tailor-PACS (``trainer.data.pacs.build_pacs``) or an ``--pacs-npz`` with the same arrays
    (``images, labels, domains, class_names, domain_names``) for tests and custom data."""
    if args.pacs_npz:
        with np.load(args.pacs_npz) as z:
            return argparse.Namespace(
                images=z["images"], labels=z["labels"].astype(np.int64), domains=z["domains"],
                class_names=[str(c) for c in z["class_names"]],
                domain_names=[str(d) for d in z["domain_names"]],
                fingerprint=f"npz:{Path(args.pacs_npz).name}")
    try:
        from trainer.data.catalogue import DOMAINS
        from trainer.data.pacs import build_pacs
    except ImportError as exc:
        raise SystemExit("trainer.data.pacs.build_pacs is not available yet; "
                         "pass --pacs-npz") from exc
    data = build_pacs(args.data_dir, size=args.size)
    if not hasattr(data, "domain_names"):
        data.domain_names = list(getattr(data, "domain_names", DOMAINS))
    return data


def load_public(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """``(gray images (n,h,w) uint8, labels, class names, fingerprint)`` of the public set.

    ``--public-npz`` (arrays ``images``, ``labels``, ``class_names``) is for tests and for users
    with their own public data; otherwise ``trainer.data.pacs.build_public`` provides the images
    that no Tailor-PACS client holds.
    """
    if args.public_npz:
        with np.load(args.public_npz) as z:
            return (z["images"], z["labels"].astype(np.int64),
                    [str(c) for c in z["class_names"]], f"npz:{Path(args.public_npz).name}")
    try:
        from trainer.data.pacs import build_public
    except ImportError as exc:
        raise SystemExit("trainer.data.pacs.build_public is not available yet; "
                         "pass --public-npz") from exc
    pub = build_public(args.data_dir, size=args.size)
    images = pub.images if pub.images.ndim == 3 else pub.images[..., 0]
    return (images, np.asarray(pub.labels, np.int64), list(pub.class_names),
            str(getattr(pub, "fingerprint", "unknown")))


def load_backbone(spec: str, store: str, device: str | None) -> tuple[Any, dict[str, Any]]:
    """``latest`` / ``foundation:<version>`` (store artifact), ``default`` (unaligned towers) or
    any open_clip ``local-dir:`` bundle; returns the backbone and where it came from."""
    from model_store.artifacts import open_artifact
    from model_store.clip import build_default_clip, load_clip
    from model_store.kinds import FOUNDATION

    if spec == "default":
        bb = build_default_clip(device=device)
        return bb, {"spec": "default", "sha256": bb.fingerprint}
    if spec == "latest" or spec.startswith("foundation:"):
        version = "latest" if spec == "latest" else spec.split(":", 1)[1]
        art = open_artifact(store, FOUNDATION, version)
        bb = load_clip(f"local-dir:{art.path}", device=device)
        return bb, {"kind": FOUNDATION, "version": art.version, "sha256": bb.fingerprint}
    bb = load_clip(spec, device=device)
    return bb, {"spec": spec, "sha256": bb.fingerprint}


def domain_features(backbone: Any, cache: FeatureCache, data: Any) -> dict[str, np.ndarray]:
    """Features of every image, computed per domain client (each client's images once)."""
    doms = np.asarray(data.domains)
    ids = np.asarray([data.domain_names.index(str(d)) for d in doms]) \
        if doms.dtype.kind not in "iu" else doms
    full: dict[str, np.ndarray] = {}
    for kind in ("embed", "trunk"):
        parts = {}
        for d in range(len(data.domain_names)):
            idx = np.flatnonzero(ids == d)
            parts[d] = (idx, cache.features(backbone, data.images[idx], kind))
        dim = next(iter(parts.values()))[1].shape[1]
        full[kind] = np.zeros((len(ids), dim), np.float32)
        for idx, f in parts.values():
            full[kind][idx] = f
    return full
