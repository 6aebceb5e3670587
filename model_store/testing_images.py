"""A tiny TAPER artifact whose all-class model and domain head really read images (tests).

``model_store.testing.make_tiny_taper`` has random weights: its generic model's labels are
noise, so nothing built on pseudo-labels could be tested with it. Here the images are
synthetic — the class is the colour, the domain the texture — and the generic model's
classifier and the domain head are fitted (ridge regression on the random trunk's pooled
features, closed form: seconds, no training loop) so that they read them. What images-only
personalization and the stream infer can then be checked against the classes and domain the
images were drawn from.
"""

from __future__ import annotations

import colorsys
import os

import numpy as np
import torch

from model_store.artifacts import ArtifactRef
from model_store.images import MEAN, STD
from model_store.resnet import build_resnet18, pooled_features
from model_store.taper import save_taper
from model_store.testing import TINY_DOMAINS, make_tiny_taper

SIZE = 32


def synthetic_image(c: int, d: int, num_classes: int, rng: np.random.Generator) -> np.ndarray:
    """One RGB uint8 image of class ``c`` (its hue) in domain ``d`` (its texture)."""
    hue = (c + 0.25 * rng.random()) / num_classes
    rgb = np.array(colorsys.hsv_to_rgb(hue, 0.9, 0.9)) * 255
    yy, xx = np.mgrid[:SIZE, :SIZE]
    texture = [np.ones((SIZE, SIZE)), (xx // 4 % 2).astype(float),
               ((xx // 4 + yy // 4) % 2).astype(float), rng.random((SIZE, SIZE))][d % 4]
    img = rgb[None, None, :] * (0.35 + 0.65 * texture[..., None])
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def synthetic_batch(classes: list[int], domain: int, n: int, num_classes: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images cycling over ``classes`` in ``domain``, and their labels."""
    rng = np.random.default_rng(seed)
    labels = np.array([classes[i % len(classes)] for i in range(n)])
    return np.stack([synthetic_image(int(c), domain, num_classes, rng) for c in labels]), labels


def _features(model: torch.nn.Module, images: np.ndarray) -> torch.Tensor:
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255.0
    x = (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    with torch.no_grad():
        return pooled_features(model.eval(), x)


def _ridge(feats: torch.Tensor, labels: np.ndarray, classes: int, temperature: float = 30.0):
    """Linear read-out (weight, bias) onto one-hot targets, sharpened by ``temperature``."""
    mu, f = feats.mean(0), feats - feats.mean(0)
    y = torch.nn.functional.one_hot(torch.from_numpy(labels).long(), classes).float() - 1 / classes
    w = torch.linalg.solve(f.T @ f + 1e-2 * torch.eye(f.shape[1]), f.T @ y).T * temperature
    return w.contiguous(), (-(w @ mu)).contiguous()


def make_readable_taper(store: str | os.PathLike[str], num_classes: int = 12, Q: int = 2,  # noqa: N803
                        seed: int = 0, per_cell: int = 6, **kwargs) -> ArtifactRef:
    """A tiny TAPER artifact (``make_tiny_taper``'s) whose generic ``fc`` and domain head are
    fitted to :func:`synthetic_image` (``kwargs``: ``make_tiny_taper``'s, e.g. ``encoder``)."""
    tmp = make_tiny_taper(os.path.join(store, ".scratch"), num_classes, Q, seed, **kwargs)
    from model_store.taper import load_taper

    bundle = load_taper(os.path.join(store, ".scratch"), tmp.version, device="cpu")
    model = build_resnet18(num_classes)
    model.load_state_dict(bundle.generic)
    cells = [(c, d) for c in range(num_classes) for d in range(len(TINY_DOMAINS))]
    rng = np.random.default_rng(seed + 1)
    imgs = np.stack([synthetic_image(c, d, num_classes, rng) for c, d in cells
                     for _ in range(per_cell)])
    feats = _features(model, imgs)
    ys = np.repeat(np.array([c for c, _ in cells]), per_cell)
    ds = np.repeat(np.array([d for _, d in cells]), per_cell)
    generic = dict(bundle.generic)
    generic["fc.weight"], generic["fc.bias"] = _ridge(feats, ys, num_classes)
    weight, bias = _ridge(feats, ds, len(TINY_DOMAINS))
    return save_taper(store, bases={k: v.clone() for k, v in bundle.bases.items()}, generic=generic,
                      mixer_state=bundle.mixer.state_dict(), mixer_cfg=bundle.mixer.config,
                      catalogue=bundle.catalogue, class_text=bundle.class_text,
                      metrics=bundle.metrics, domain_head={"weight": weight, "bias": bias},
                      metadata={"training": {"synthetic_readout": True, "seed": seed}})
