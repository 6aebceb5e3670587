"""Safe image decoding for /predict and /refine: size limits before pixels are decoded.

PIL reads only the header on ``Image.open``; we check width × height against the limit *then*
decode, so a decompression bomb (a tiny PNG that inflates to gigapixels) costs nothing. Any
decoding failure becomes a 400 problem naming the offending image, never a 500.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from service.core.problems import Problem


def decode_image(data: bytes, *, name: str, max_pixels: int, max_bytes: int) -> np.ndarray:
    """Decode one encoded image to uint8 RGB ``(IMAGE_SIZE, IMAGE_SIZE, 3)``.

    Raises:
        Problem: 400 for empty, oversize, undecodable or bomb images.
    """
    from model_store.images import IMAGE_SIZE

    if not data:
        raise Problem(400, "invalid-image", f"{name}: empty image")
    if len(data) > max_bytes:
        raise Problem(400, "image-too-large", f"{name}: {len(data)} bytes > limit {max_bytes}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                w, h = im.size
                if w * h > max_pixels or w <= 0 or h <= 0:
                    raise Problem(
                        400,
                        "decompression-bomb",
                        f"{name}: {w}x{h} = {w * h} pixels exceeds the limit of {max_pixels}",
                    )
                rgb = im.convert("RGB")
                if rgb.size != (IMAGE_SIZE, IMAGE_SIZE):
                    rgb = rgb.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
                return np.asarray(rgb, dtype=np.uint8).copy()
    except Problem:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise Problem(400, "decompression-bomb", f"{name}: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise Problem(400, "invalid-image", f"{name}: cannot decode image ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - decoder bugs on hostile input are still bad input
        raise Problem(
            400, "invalid-image", f"{name}: cannot decode image ({type(exc).__name__})"
        ) from None


def decode_base64(text: str, *, name: str) -> bytes:
    """Strict base64 (``data:`` URL prefix allowed); 400 when malformed."""
    if text.startswith("data:") and "," in text:
        text = text.split(",", 1)[1]
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Problem(400, "invalid-image", f"{name}: not valid base64") from None


def decode_uint8(raw: list[bytes], names: list[str], settings) -> np.ndarray:
    """Decode a request's images into one preallocated uint8 NHWC batch (limits per image)."""
    from model_store.images import IMAGE_SIZE

    out = np.empty((len(raw), IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    for i, (data, name) in enumerate(zip(raw, names, strict=True)):
        out[i] = decode_image(data, name=name, max_pixels=settings.max_image_pixels,
                              max_bytes=settings.max_image_bytes)  # fmt: skip
    return out


def decode_normalised(raw: list[bytes], names: list[str], settings) -> torch.Tensor:
    """:func:`decode_uint8`, normalised once with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(decode_uint8(raw, names, settings))


def to_batch(images: list[np.ndarray], device: torch.device) -> torch.Tensor:
    """Normalise decoded images with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(np.stack(images)).to(device)
