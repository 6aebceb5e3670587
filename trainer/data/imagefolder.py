"""Read a user's dataset in ImageFolder layout into the same structure as Tailor-PACS.

Accepted layouts: `root/class/*.{png,jpg,jpeg,webp}` or `root/domain/class/*.{...}`.
Class names come from folder names (underscores become spaces, so 'ankle_boot' reads like a
catalogue name). Images get the service's preprocessing (``model_store.images.fit_square``:
shorter side resized to ``size``, centre crop; 32 by default), so training sees what /predict
sees.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from model_store.images import IMAGE_SIZE, fit_square
from trainer.data.pacs import PacsData, _assign_split, fingerprint

EXTENSIONS = {".png", ".jpg", ".jpeg", ".webp"}


def _images_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in EXTENSIONS)


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _load(path: Path, size: int = IMAGE_SIZE) -> np.ndarray:
    try:
        with Image.open(path) as img:
            return np.asarray(fit_square(img, size), np.uint8)
    except (UnidentifiedImageError, OSError) as err:
        raise ValueError(f"cannot read image {path}: {err}") from err


def _load_folder(folder: Path, skip_bad: bool, skipped: list[str] | None,
                 size: int) -> list[np.ndarray]:
    """Every readable image of one class folder (ValueError when it has none)."""
    out = []
    for f in _images_in(folder):
        try:
            out.append(_load(f, size))
        except ValueError:
            if not skip_bad:
                raise
            if skipped is not None:
                skipped.append(str(f))
    if not out:
        raise ValueError(f"class folder {folder} has no readable .png/.jpg/.jpeg/.webp images")
    return out


def _layout(root: Path) -> dict[str, list[Path]]:
    """Map domain name ('default' when there is no domain level) to its class folders."""
    top = _subdirs(root)
    if not top:
        raise ValueError(f"{root} has no class folders; expected root/[domain/]class/*.png")
    with_images = [d for d in top if _images_in(d)]
    if len(with_images) == len(top):
        return {"default": top}
    if with_images:
        raise ValueError(f"{root} mixes class folders with images ({with_images[0].name}) and "
                         "folders without images; use root/class/* or root/domain/class/*")
    return {d.name: _subdirs(d) for d in top}


def read_imagefolder(root: str | Path, seed: int = 0, skip_bad: bool = False,
                     skipped: list[str] | None = None, size: int = IMAGE_SIZE) -> PacsData:
    """Read an ImageFolder tree; splits are seeded ~70/10/20 per (class, domain) cell.

    ``skip_bad``: unreadable images are left out (their paths appended to ``skipped``) instead
    of failing the whole read; a class folder left with no readable image still fails.

    Raises:
        FileNotFoundError: `root` does not exist.
        ValueError: empty tree, a class folder without images, or an unreadable image (naming
            the file).
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"ImageFolder root {root} does not exist or is not a directory")
    layout = _layout(root)
    class_names = sorted({c.name.replace("_", " ") for dirs in layout.values() for c in dirs})
    domain_names = tuple(layout)
    rng = np.random.default_rng(seed)
    images, labels, domains, split = [], [], [], []
    for d, dirs in enumerate(layout.values()):
        if not dirs:
            raise ValueError(f"domain folder {root / domain_names[d]} has no class folders")
        for folder in dirs:
            loaded = _load_folder(folder, skip_bad, skipped, size)
            images += loaded
            labels += [class_names.index(folder.name.replace("_", " "))] * len(loaded)
            domains += [d] * len(loaded)
            split.append(_assign_split(len(loaded), rng))
    arrays = {"images": np.stack(images), "labels": np.asarray(labels, np.int64),
              "domains": np.asarray(domains, np.int8),
              "source_ids": np.arange(len(labels), dtype=np.int64),
              "split": np.concatenate(split)}
    params = {"kind": "imagefolder", "classes": class_names, "domains": list(domain_names),
              "seed": seed, "image_size": size}
    return PacsData(**arrays, class_names=tuple(class_names),
                    fingerprint=fingerprint(arrays, params), domain_names=domain_names)
