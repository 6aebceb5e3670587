"""A PNG contact sheet of a dataset: rows = classes, columns = domains, a few images per cell.

Meant for eyes: it is how we check that each domain looks like its name and each class stays
recognisable after rendering.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from PIL.Image import Resampling

SCALE = 2
LABEL_W = 110
HEADER_H = 18
GAP = 6


def preview(data, out_png: str | Path, per_cell: int = 4, split: str | None = None,
            seed: int = 0) -> Path:
    """Write the grid to `out_png` and return its path.

    Args:
        data: a PacsData (images, labels, domains, class_names, domain_names).
        per_cell: images per (class, domain) cell, chosen at random (seeded).
        split: restrict to one split ('train', 'val', 'test'); None = all images.
    """
    rng = np.random.default_rng(seed)
    keep = np.ones(len(data.labels), bool) if split is None else np.isin(
        np.arange(len(data.labels)), data.indices(split))
    side = data.images.shape[1] * SCALE
    cell_w = per_cell * side + GAP
    width = LABEL_W + cell_w * len(data.domain_names)
    height = HEADER_H + side * len(data.class_names)
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for d, name in enumerate(data.domain_names):
        draw.text((LABEL_W + d * cell_w + 2, 3), name, fill="black", font=font)
    for c, cname in enumerate(data.class_names):
        y = HEADER_H + c * side
        draw.text((4, y + side // 2 - 6), cname, fill="black", font=font)
        for d in range(len(data.domain_names)):
            idx = np.flatnonzero(keep & (data.labels == c) & (data.domains == d))
            chosen = rng.choice(idx, min(per_cell, len(idx)), replace=False) if len(idx) else []
            for j, i in enumerate(chosen):
                tile = Image.fromarray(data.images[i]).resize((side, side), Resampling.NEAREST)
                sheet.paste(tile, (LABEL_W + d * cell_w + j * side, y))
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return out
