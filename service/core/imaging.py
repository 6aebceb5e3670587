"""Safe image decoding for /predict and /refine: size limits before pixels are decoded.

PIL reads only the header on ``Image.open``; we check width × height against the limit *then*
decode, so a decompression bomb (a tiny PNG that inflates to gigapixels) costs nothing. Only the
formats in :data:`FORMATS` are opened, JPEGs decode at a reduced DCT scale, and a request's decoded
pixels are bounded in all. Any decoding failure becomes a 4xx problem naming the image, never a 500.
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

# Only decoders we test are reachable: Pillow would otherwise try every plugin it has, EPS
# included (which runs Ghostscript where it is installed).
FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF")


def decode_image(
    data: bytes, *, name: str, max_pixels: int, max_bytes: int, budget: int | None = None
) -> tuple[np.ndarray, int]:
    """Decode one encoded image to uint8 RGB ``(IMAGE_SIZE, IMAGE_SIZE, 3)``.

    JPEGs are decoded at the smallest DCT scale (1/2 … 1/8) that still covers the model's input
    (``Image.draft``), so a 4096² photo costs what a 512² one does. ``budget`` is what is left
    of the request's decoded-pixel allowance; the pixels this image decodes are returned with it.

    Raises:
        Problem: 400 for empty, oversize, undecodable, unsupported or bomb images; 413 when the
            request's decoded pixels would exceed its budget.
    """
    from model_store.images import IMAGE_SIZE

    _check_bytes(data, name, max_bytes)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as im:
                _check_pixels(im.size, name, max_pixels)
                if im.format == "JPEG":
                    im.draft("RGB", (IMAGE_SIZE, IMAGE_SIZE))
                decoded = im.size[0] * im.size[1]
                if budget is not None and decoded > budget:
                    raise Problem(413, "too-many-pixels",
                                  f"{name}: the request's images decode to more pixels than "
                                  "its limit (TAILOR_MAX_REQUEST_PIXELS); send fewer or smaller "
                                  "images")  # fmt: skip
                rgb = im.convert("RGB")
                if rgb.size != (IMAGE_SIZE, IMAGE_SIZE):
                    rgb = rgb.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
                return np.asarray(rgb, dtype=np.uint8).copy(), decoded
    except Problem:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise Problem(400, "decompression-bomb", f"{name}: {exc}") from None
    except UnidentifiedImageError:
        raise Problem(400, "invalid-image", f"{name}: not a decodable image in a supported "
                      f"format ({', '.join(FORMATS)})") from None  # fmt: skip
    except (OSError, ValueError, SyntaxError) as exc:
        raise Problem(400, "invalid-image", f"{name}: cannot decode image ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - decoder bugs on hostile input are still bad input
        raise Problem(
            400, "invalid-image", f"{name}: cannot decode image ({type(exc).__name__})"
        ) from None


def _check_bytes(data: bytes, name: str, max_bytes: int) -> None:
    if not data:
        raise Problem(400, "invalid-image", f"{name}: empty image")
    if len(data) > max_bytes:
        raise Problem(400, "image-too-large", f"{name}: {len(data)} bytes > limit {max_bytes}")


def _check_pixels(size: tuple[int, int], name: str, max_pixels: int) -> None:
    """Refuse on the header's size, before a single pixel is decoded."""
    w, h = size
    if w * h > max_pixels or w <= 0 or h <= 0:
        detail = f"{name}: {w}x{h} = {w * h} pixels exceeds the limit of {max_pixels}"
        raise Problem(400, "decompression-bomb", detail)


def decode_base64(text: str, *, name: str) -> bytes:
    """Strict base64 (``data:`` URL prefix allowed); 400 when malformed."""
    if text.startswith("data:") and "," in text:
        text = text.split(",", 1)[1]
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Problem(400, "invalid-image", f"{name}: not valid base64") from None


def decode_uint8(raw: list[bytes], names: list[str], settings) -> np.ndarray:
    """Decode a request's images into one preallocated uint8 NHWC batch.

    Limits apply per image (bytes, header pixels) and per request (decoded pixels in all), so a
    batch of large-but-legal images cannot cost minutes of server CPU.
    """
    from model_store.images import IMAGE_SIZE

    out = np.empty((len(raw), IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    budget = settings.max_request_pixels
    for i, (data, name) in enumerate(zip(raw, names, strict=True)):
        out[i], used = decode_image(data, name=name, max_pixels=settings.max_image_pixels,
                                    max_bytes=settings.max_image_bytes, budget=budget)  # fmt: skip
        budget -= used
    return out


def decode_normalised(raw: list[bytes], names: list[str], settings) -> torch.Tensor:
    """:func:`decode_uint8`, normalised once with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(decode_uint8(raw, names, settings))


def to_batch(images: list[np.ndarray], device: torch.device) -> torch.Tensor:
    """Normalise decoded images with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(np.stack(images)).to(device)
