"""Factories for small image trees and images used by data tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def write_image(path: Path, size: tuple[int, int] = (40, 30), value: int = 128,
                mode: str = "RGB") -> Path:
    """Write a solid-colour image (any extension PIL knows) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.full((size[1], size[0], 3), value, np.uint8)
    Image.fromarray(arr).convert(mode).save(path)
    return path


def make_imagefolder(root: Path, classes: dict[str, int], domains: list[str] | None = None,
                     ext: str = ".png") -> Path:
    """Build root/[domain/]class/img_i.ext with `classes[name]` images per class."""
    for domain in domains or [None]:
        base = root if domain is None else root / domain
        for c, (name, count) in enumerate(classes.items()):
            for i in range(count):
                write_image(base / name / f"img_{i}{ext}", value=40 * c + i)
    return root
