"""Render 28×28 grayscale sources into four PACS-like domains at 32×32 RGB.

Each domain mimics what its PACS namesake looks like, built only from offline material
(`skimage.data` photos and textures):
- photo: the foreground blended into a crop of a real photo by absolute difference (MNIST-M);
- art_painting: a texture-filled foreground on a smooth painted background with brush strokes;
- cartoon: flat saturated colours with a dark outline;
- sketch: dark pencil strokes of the edge map (plus light hatching) on white paper.
All randomness comes from the `rng` argument, so a seeded generator gives identical output.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image
from scipy import ndimage

from trainer.data.catalogue import DOMAINS

SIZE = 32
_PHOTOS = (
    "astronaut", "coffee", "chelsea", "rocket", "camera", "clock", "coins", "hubble_deep_field",
)
_TEXTURES = ("brick", "grass", "gravel", "page", "moon", "camera")
_PHOTO_SCALES = (0.12, 0.2, 0.3)


@lru_cache(maxsize=1)
def _photo_pool() -> tuple[np.ndarray, ...]:
    """Real photos at a few downscales, so a 32×32 crop shows scene structure, not one blur."""
    import skimage.data

    pool = []
    for name in _PHOTOS:
        img = getattr(skimage.data, name)()
        if img.ndim == 2:
            img = np.stack([img] * 3, axis=-1)
        pil = Image.fromarray(img[..., :3])
        for scale in _PHOTO_SCALES:
            w, h = pil.size
            size = (max(SIZE + 8, int(w * scale)), max(SIZE + 8, int(h * scale)))
            pool.append(np.asarray(pil.resize(size, Image.Resampling.LANCZOS), np.float32))
    return tuple(pool)


@lru_cache(maxsize=1)
def _texture_pool() -> tuple[np.ndarray, ...]:
    """Grayscale textures in [0, 1], downscaled so their grain is visible at 32 px."""
    import skimage.data

    pool = []
    for name in _TEXTURES:
        img = Image.fromarray(getattr(skimage.data, name)())
        img = img.resize((img.size[0] // 4, img.size[1] // 4), Image.Resampling.LANCZOS)
        arr = np.asarray(img, np.float32) / 255.0
        pool.append((arr - arr.min()) / max(float(np.ptp(arr)), 1e-6))
    return tuple(pool)


def _crop(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    y = int(rng.integers(0, img.shape[0] - SIZE + 1))
    x = int(rng.integers(0, img.shape[1] - SIZE + 1))
    return img[y : y + SIZE, x : x + SIZE]


def _place(gray28: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Scale (26–32 px) and shift the source onto a 32×32 canvas; float in [0, 1]."""
    side = int(rng.integers(26, SIZE + 1))
    img = Image.fromarray(gray28).resize((side, side), Image.Resampling.BILINEAR)
    canvas = np.zeros((SIZE, SIZE), np.float32)
    y, x = (int(v) for v in rng.integers(0, SIZE - side + 1, size=2))
    canvas[y : y + side, x : x + side] = np.asarray(img, np.float32) / 255.0
    return canvas


def _hsv_colour(rng: np.random.Generator, sat: tuple[float, float], val: tuple[float, float],
                hue: float | None = None) -> np.ndarray:
    """An RGB colour in [0, 255] from a (random) hue, saturation and value range."""
    h = float(rng.random()) if hue is None else hue % 1.0
    s, v = float(rng.uniform(*sat)), float(rng.uniform(*val))
    k = (np.array([5.0, 3.0, 1.0]) + h * 6.0) % 6.0
    rgb = v - v * s * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)
    return (rgb * 255.0).astype(np.float32)


def _photo(fg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    pool = _photo_pool()
    bg = _crop(pool[int(rng.integers(len(pool)))], rng)
    if rng.random() < 0.5:
        bg = bg[:, ::-1]
    return np.abs(bg - fg[..., None] * 255.0)


def _smooth_field(rng: np.random.Generator, cells: int, channels: int) -> np.ndarray:
    """Low-frequency random field in [0, 1]: bicubic upsampling of a few random cells."""
    small = rng.random((cells, cells, channels)).astype(np.float32)
    return np.clip(ndimage.zoom(small, (SIZE / cells, SIZE / cells, 1), order=3), 0, 1)


def _brush(rng: np.random.Generator) -> np.ndarray:
    """Directional streaks: noise smeared along one random angle, like brush strokes."""
    noise = ndimage.zoom(rng.random((16, 16)).astype(np.float32), 2, order=1)
    angle = float(rng.uniform(0, 180))
    streak = ndimage.uniform_filter1d(ndimage.rotate(noise, angle, reshape=False, mode="wrap"),
                                      7, axis=1)
    streak = ndimage.rotate(streak, -angle, reshape=False, mode="wrap")
    return (streak - streak.mean()) / (streak.std() + 1e-6)


def _art_painting(fg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    hue = float(rng.random())
    base = _hsv_colour(rng, (0.3, 0.6), (0.45, 0.8), hue)
    other = _hsv_colour(rng, (0.3, 0.6), (0.35, 0.75), hue + rng.uniform(0.1, 0.3))
    mix = _smooth_field(rng, 3, 1)
    bg = base * mix + other * (1 - mix) + 16.0 * _brush(rng)[..., None]
    tex = _crop(_texture_pool()[int(rng.integers(len(_texture_pool())))], rng)
    paint = _hsv_colour(rng, (0.6, 1.0), (0.65, 1.0), hue + rng.uniform(0.4, 0.6))
    dark = paint * float(rng.uniform(0.2, 0.45))
    fill = dark + (paint - dark) * np.clip(0.7 * tex + 0.5 * fg, 0, 1)[..., None]
    fill += 12.0 * _brush(rng)[..., None]
    alpha = np.clip(fg * 1.6, 0, 1)[..., None]
    out = bg * (1 - alpha) + fill * alpha
    return ndimage.median_filter(out, size=(2, 2, 1))


def _cartoon(fg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    mask = fg > 0.3
    hue = float(rng.random())
    bg = _hsv_colour(rng, (0.25, 0.55), (0.9, 1.0), hue)
    fill = _hsv_colour(rng, (0.85, 1.0), (0.8, 1.0), hue + rng.uniform(0.3, 0.7))
    shade = fill * 0.6
    out = np.empty((SIZE, SIZE, 3), np.float32)
    out[:] = bg
    light = mask & (fg > 0.65)
    out[mask] = shade
    out[light] = fill
    outline = mask & ~ndimage.binary_erosion(mask)
    inner = ndimage.sobel(light.astype(np.float32), 0) ** 2 + ndimage.sobel(
        light.astype(np.float32), 1) ** 2
    ink = np.array([25.0, 20.0, 30.0], np.float32)
    out[outline] = ink
    out[(inner > 4.0) & mask & ~outline] = ink * 2.0
    return out


def _sketch(fg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    soft = ndimage.gaussian_filter(fg, 0.6)
    edges = np.hypot(ndimage.sobel(soft, 0), ndimage.sobel(soft, 1))
    edges = np.clip(edges / (edges.max() + 1e-6) * float(rng.uniform(1.3, 1.9)) - 0.15, 0, 1)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    period = int(rng.integers(3, 5))
    hatch = ((xx + yy * float(rng.choice([1, -1]))) % period == 0) & (fg > 0.5)
    pencil = float(rng.uniform(0.75, 0.95))
    paper = 250.0 - 6.0 * rng.random((SIZE, SIZE)).astype(np.float32)
    dark = paper * (1 - pencil * edges) * (1 - 0.25 * hatch)
    tint = np.array([1.0, 0.99, 0.96], np.float32)
    return dark[..., None] * tint


_RENDERERS = {"photo": _photo, "art_painting": _art_painting, "cartoon": _cartoon,
              "sketch": _sketch}
assert tuple(_RENDERERS) == DOMAINS


def render(gray28: np.ndarray, domain: str, rng: np.random.Generator) -> np.ndarray:
    """Render one grayscale source image into `domain`.

    Args:
        gray28: uint8 (H, W) white-on-black source image (any square size; 28 for our sources).
        domain: one of `DOMAINS`.
        rng: the only source of randomness, so seeded calls are reproducible.

    Returns:
        uint8 array (32, 32, 3).
    """
    if domain not in _RENDERERS:
        raise ValueError(f"unknown domain {domain!r}; expected one of {DOMAINS}")
    gray28 = np.asarray(gray28)
    if gray28.ndim != 2 or gray28.dtype != np.uint8:
        raise ValueError(f"expected a uint8 (H, W) image, got {gray28.dtype} {gray28.shape}")
    out = _RENDERERS[domain](_place(gray28, rng), rng)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def plain(gray28: np.ndarray, invert: bool = False) -> np.ndarray:
    """The source as a plain scan, with no domain styling: the grayscale image resized to 32×32
    (bilinear) and copied to RGB; ``invert`` gives dark ink on white paper.

    This is what an app sees when its users photograph or scan a handwritten digit or a garment
    silhouette; the four rendered domains do not cover it (issue 14 §6). Deterministic.
    """
    gray28 = np.asarray(gray28, np.uint8)
    img = Image.fromarray(255 - gray28 if invert else gray28)
    arr = np.asarray(img.resize((SIZE, SIZE), Image.Resampling.BILINEAR))
    return np.repeat(arr[..., None], 3, axis=-1)
