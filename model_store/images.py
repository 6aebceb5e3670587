"""Image preprocessing shared by trainer and service: the one definition.

A model is served with exactly the preprocessing it was trained with: RGB; the shorter side
resized to the artifact's ``image_size`` S (bilinear), then the centre S×S crop
(:func:`fit_square`); /255; normalised with fixed per-channel ``MEAN``/``STD`` (ImageNet
statistics). The artifact records S, and the downloads document it in timm's terms
(``crop_mode: center``, ``crop_pct: 1.0``) — on PIL images it is bit-identical to torchvision's
``Resize(S, interpolation=BILINEAR)`` + ``CenterCrop(S)`` (tested), so a stock app reproduces
the service's logits. A square image is only resized; nothing is ever squashed.
"""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

IMAGE_SIZE = 32
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

_MEAN_T = torch.tensor(MEAN).view(3, 1, 1)
_STD_T = torch.tensor(STD).view(3, 1, 1)


def fit_square(img: Image.Image, size: int) -> Image.Image:
    """RGB, shorter side resized to ``size`` (bilinear), centre ``size``² crop.

    WHY not torchvision here: ``model_store`` serves without torchvision transforms in the
    request path; the arithmetic is torchvision's own (long side ``int(size * long / short)``,
    crop offsets ``int(round((dim - size) / 2))``) so the results are the same pixels.
    """
    img = img.convert("RGB")
    w, h = img.size
    if (w, h) == (size, size):
        return img
    if min(w, h) != size:
        short, long = (w, h) if w <= h else (h, w)
        new_long = int(size * long / short)
        img = img.resize((size, new_long) if w <= h else (new_long, size),
                         Image.Resampling.BILINEAR)
        w, h = img.size
    top, left = int(round((h - size) / 2.0)), int(round((w - size) / 2.0))
    return img.crop((left, top, left + size, top + size))


def _from_pil(img: Image.Image, size: int) -> np.ndarray:
    return np.asarray(fit_square(img, size), dtype=np.uint8)


def _as_uint8_hwc(image: np.ndarray | Image.Image, size: int) -> np.ndarray:
    """Validate/convert one image into a ``size x size x 3`` uint8 array."""
    if isinstance(image, Image.Image):
        return _from_pil(image, size)
    if not isinstance(image, np.ndarray):
        raise TypeError(f"expected a PIL image or numpy array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ValueError(f"numpy images must be uint8 (0..255), got {image.dtype}")
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] not in (1, 3, 4):
        raise ValueError(f"expected HxW, HxWx1, HxWx3 or HxWx4 uint8, got shape {image.shape}")
    if image.shape[2] == 1:
        image = np.repeat(image, 3, axis=2)
    if image.shape[2] == 4 or image.shape[:2] != (size, size):
        return _from_pil(Image.fromarray(image), size)
    return image


def normalize_batch(images: np.ndarray | torch.Tensor) -> torch.Tensor:
    """uint8 ``[N, H, W, 3]`` (already ``IMAGE_SIZE``) -> normalised float ``[N, 3, H, W]``.

    The vectorised path for training loops and batched prediction.
    """
    x = torch.as_tensor(images)
    if x.dtype != torch.uint8 or x.dim() != 4 or x.shape[-1] != 3:
        raise ValueError(f"expected uint8 [N, H, W, 3], got {x.dtype} {tuple(x.shape)}")
    x = x.permute(0, 3, 1, 2).float().div_(255.0)
    return (x - _MEAN_T.to(x.device)) / _STD_T.to(x.device)


def to_tensor(image: np.ndarray | Image.Image, size: int = IMAGE_SIZE) -> torch.Tensor:
    """One image (uint8 HxWx3 / HxW array, or any PIL image) -> normalised ``[3, size, size]``.

    PIL inputs are converted to RGB and fitted by :func:`fit_square` when their size differs;
    so are arrays of another size or with an alpha channel.
    """
    return normalize_batch(_as_uint8_hwc(image, size)[None].copy())[0]


def to_batch(images: list[np.ndarray | Image.Image], size: int = IMAGE_SIZE) -> torch.Tensor:
    """Several images of any supported form -> normalised ``[N, 3, size, size]``."""
    if not images:
        raise ValueError("expected at least one image")
    return normalize_batch(np.stack([_as_uint8_hwc(im, size) for im in images]))
