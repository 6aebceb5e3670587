"""Safe image decoding for /predict and /refine: size limits before pixels are decoded.

PIL reads only the header on ``Image.open``; we check width × height against the limit *then*
decode, so a decompression bomb (a tiny PNG that inflates to gigapixels) costs nothing. Only the
formats in :data:`FORMATS` are opened, JPEGs decode at a reduced DCT scale, and a request's decoded
pixels are bounded in all. Any decoding failure becomes a 4xx problem naming the image, never a 500.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from model_store.images import IMAGE_SIZE
from service.core.problems import Problem

# Only decoders we test are reachable: Pillow would otherwise try every plugin it has, EPS
# included (which runs Ghostscript where it is installed).
FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF")


@contextmanager
def _as_problem(name: str) -> Iterator[None]:
    """Turn whatever a decoder raises on hostile or broken input into a 400 naming the image."""
    try:  # no warnings.catch_warnings here: it is process-global and decoding runs in threads;
        yield  # bombs are refused on the header (_check_pixels) before Pillow's own limit
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


def _open(data: bytes, name: str, max_pixels: int, max_bytes: int,
          size: int = IMAGE_SIZE) -> Image.Image:
    """Header only: format allowlist, size limits, and JPEG's reduced decode scale set.

    JPEGs decode at the smallest DCT scale (1/2 … 1/8) that still covers the model's input
    (``Image.draft`` keeps both sides ≥ ``size``), so a 4096² photo costs what a 512² one does.
    """
    _check_bytes(data, name, max_bytes)
    im = Image.open(io.BytesIO(data), formats=FORMATS)
    _check_pixels(im.size, name, max_pixels)
    if im.format == "JPEG":
        im.draft("RGB", (size, size))
    return im


def decoded_pixels(data: bytes, *, name: str, max_pixels: int, max_bytes: int) -> int:
    """How many pixels decoding ``data`` will produce (header only; 4xx like decoding)."""
    with _as_problem(name), _open(data, name, max_pixels, max_bytes) as im:
        return im.size[0] * im.size[1]


def decode_image(data: bytes, *, name: str, max_pixels: int, max_bytes: int,
                 size: int = IMAGE_SIZE) -> np.ndarray:
    """Decode one encoded image to uint8 RGB ``(size, size, 3)`` with the shared
    preprocessing (``model_store.images.fit_square``: shorter side, centre crop).

    Raises:
        Problem: 400 for empty, oversize, undecodable, unsupported or bomb images.
    """
    from model_store.images import fit_square

    with _as_problem(name), _open(data, name, max_pixels, max_bytes, size) as im:
        return np.asarray(fit_square(im, size), dtype=np.uint8).copy()


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


def decode_uint8(raw: list[bytes], names: list[str], settings,
                 size: int = IMAGE_SIZE) -> np.ndarray:
    """Decode a request's images into one preallocated uint8 NHWC batch.

    Limits apply per image (bytes, header pixels) and per request: every header is read first
    and a request whose images would decode to more than ``max_request_pixels`` in all gets a
    413 before a single pixel is decoded. Batches are then decoded by a small thread pool
    (Pillow's decoders release the GIL), the route's own thread taking part.
    """
    limits = {"max_pixels": settings.max_image_pixels, "max_bytes": settings.max_image_bytes}
    pairs = list(zip(raw, names, strict=True))
    total = sum(decoded_pixels(data, name=name, **limits) for data, name in pairs)
    if total > settings.max_request_pixels:
        raise Problem(413, "too-many-pixels",
                      f"the {len(raw)} images decode to {total} pixels, over this request limit "
                      f"of {settings.max_request_pixels} (TAILOR_MAX_REQUEST_PIXELS); send fewer "
                      "or smaller images")  # fmt: skip
    out = np.empty((len(raw), size, size, 3), dtype=np.uint8)

    def one(i: int) -> None:
        out[i] = decode_image(pairs[i][0], name=pairs[i][1], size=size, **limits)

    if len(raw) < PARALLEL_FROM:
        for i in range(len(raw)):
            one(i)
    else:
        list(_pool().map(one, range(len(raw))))  # re-raises the first failure, in input order
    return out


PARALLEL_FROM = 8  # below this, handing images to threads costs more than it saves


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """One decoding pool per process (a worker's requests share it)."""
    return ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1),
                              thread_name_prefix="tailor-decode")  # fmt: skip


def decode_normalised(raw: list[bytes], names: list[str], settings,
                      size: int = IMAGE_SIZE) -> torch.Tensor:
    """:func:`decode_uint8`, normalised once with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(decode_uint8(raw, names, settings, size))


def to_batch(images: list[np.ndarray], device: torch.device) -> torch.Tensor:
    """Normalise decoded images with the shared preprocessing (train/serve parity)."""
    from model_store.images import normalize_batch

    return normalize_batch(np.stack(images)).to(device)
