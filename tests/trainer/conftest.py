"""Session-scoped Tailor-PACS fixtures: the tiny build is rendered once and shared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from trainer.data.pacs import build_pacs


@pytest.fixture(scope="session")
def tiny_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tailor-data")


@pytest.fixture(scope="session")
def tiny_pacs(tiny_data_dir):
    """The tiny Tailor-PACS (digits + animals, 32 per class), built into a temp data dir."""
    return build_pacs(tiny_data_dir, size="tiny", seed=0)


def write_image(path: Path, size: tuple[int, int] = (40, 30), value: int = 128,
                mode: str = "RGB") -> Path:
    """Write a solid-colour image (format from the extension) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((size[1], size[0], 3), value, np.uint8)).convert(mode).save(path)
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


@pytest.fixture
def image_factories():
    """(write_image, make_imagefolder): factories for ImageFolder trees in tmp_path."""
    return write_image, make_imagefolder
