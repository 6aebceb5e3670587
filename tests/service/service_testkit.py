"""Test helpers for the service suite (a uniquely named module: ``conftest`` is ambiguous)."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np
from PIL import Image

ADMIN_KEY = "tests-admin-Qm7vX2pL9sK4wR8nT3yZ6bH1"  # strong enough for TAILOR_ENV=prod
NUM_CLASSES, Q = 12, 2


def images(n: int, seed: int = 0, size: int = 32) -> list[np.ndarray]:
    """Seeded random RGB uint8 images."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (size, size, 3), dtype=np.uint8) for _ in range(n)]


def png(array: np.ndarray) -> bytes:
    """Lossless PNG bytes of an image."""
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def b64(data: bytes) -> str:
    """Base64 text of bytes."""
    return base64.b64encode(data).decode()


def declared_bomb(width: int, height: int) -> bytes:
    """A valid PNG header declaring a huge image with almost no data (cheap to build)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def resolve_description(resolver, text: str, ignored: list[str] | None = None):
    """``(class names, domain)`` that ``POST /v1/personalize {"description": text}`` resolves
    to (raises the 422 ``Problem``); what was read as context is appended to ``ignored``."""
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    matches, domain = resolve_request(resolver, PersonalizeCreate(description=text),
                                      resolver.domains, ignored)
    return [m.name for m in matches], domain


def resolve_classes(resolver, classes: list[str]):
    """``(class names, domain)`` that ``POST /v1/personalize {"classes": classes}`` resolves to
    (raises the 422 ``Problem``)."""
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    matches, domain = resolve_request(resolver, PersonalizeCreate(classes=classes),
                                      resolver.domains)
    return [m.name for m in matches], domain
