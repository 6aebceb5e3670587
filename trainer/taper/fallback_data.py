"""Stop-gap Tailor-PACS builder used only while ``trainer.data.pacs`` is not available.

Same sources and renderer as the data package (``trainer.data.sources``/``render``): per class
``per_class`` source images, each rendered into one random domain, split 70/15/15 at random (each
source image appears once, so splits are disjoint by source). Runs on this data record the
fingerprint ``taper-fallback-<per_class>-<seed>`` so they are never confused with the real build.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np


def build_fallback(data_dir: str | Path, per_class: int = 700, seed: int = 0) -> SimpleNamespace:
    """Build (or load from ``<data_dir>/taper_fallback_<n>_<seed>.npz``) the stop-gap set."""
    from trainer.data.catalogue import CLASS_NAMES, DOMAINS
    from trainer.data.render import render
    from trainer.data.sources import load_source

    path = Path(data_dir) / f"taper_fallback_{per_class}_{seed}.npz"
    if not path.exists():
        rng = np.random.default_rng(seed)
        images, labels, domains = [], [], []
        for offset, source in ((0, "mnist"), (10, "fashion"), (20, "animal")):
            x, y = load_source(source)
            for c in range(10):
                for i in rng.permutation(np.flatnonzero(y == c))[:per_class]:
                    d = int(rng.integers(len(DOMAINS)))
                    images.append(render(x[i], DOMAINS[d], rng))
                    labels.append(offset + c)
                    domains.append(d)
        split = rng.choice(3, size=len(labels), p=[0.7, 0.15, 0.15])
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, images=np.stack(images), labels=np.asarray(labels),
                 domains=np.asarray(domains), split=split)
    z = np.load(path)
    return SimpleNamespace(images=z["images"], labels=z["labels"], domains=z["domains"],
                           split=z["split"], class_names=CLASS_NAMES,
                           fingerprint=f"taper-fallback-{per_class}-{seed}")
