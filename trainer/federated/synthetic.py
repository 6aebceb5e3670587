"""Synthetic image clients for tests and benchmarks of the federated loops.

The loops' cost, their aggregation and their client sampling do not depend on what the images
show, so a test or a benchmark that checks those needs only images whose class is learnable:
here the class lights one colour channel's top half. One definition instead of a copy per test
module (the ``duplicates`` tool found three).
"""

from __future__ import annotations

import numpy as np

from trainer.federated.task import ClientData


def synthetic_client(i: int, n: int, classes: int = 3, seed: int = 50,
                     held_out: int = 9) -> ClientData:
    """Client ``c{i}``: ``n`` train images and ``held_out`` val and test images, 3×32×32,
    labels in ``0..classes-1``, drawn from ``seed + i``."""
    rng = np.random.default_rng(seed + i)
    arrays = {}
    for split, m in (("train", n), ("val", held_out), ("test", held_out)):
        y = rng.integers(0, classes, m)
        x = rng.normal(size=(m, 3, 32, 32)).astype(np.float32)
        x[np.arange(m), y % 3, :16] += 1.5
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x, y.astype(np.int64)
    return ClientData(f"c{i}", arrays)
