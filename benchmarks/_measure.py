"""Timing helpers and in-process baselines for the service benchmark.

Everything is timed as medians over repeats, and the two sides of every ratio are timed
*alternately* within each repeat: this machine is shared, and interleaving makes background load
hit numerator and denominator alike (the previous sequential figures swung 0.65–1.24).
The baselines (reading the Q bases, synthesis, raw ``model(x)``, image decoding) run in the
benchmark's own process, which ``service.py`` starts with the same thread count and malloc
environment as the server's workers, so "server ÷ raw" compares like with like.
"""

from __future__ import annotations

import base64
import io
import itertools
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
from PIL import Image


def timed(fn: Callable[[], object]) -> float:
    """Wall seconds of one call."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(fns: dict[str, Callable[[], object]], repeats: int,
                between: Callable[[], object] | None = None) -> dict[str, list[float]]:  # fmt: skip
    """Times per function, calling them in turn within each repeat.

    ``between`` runs untimed after each function (e.g. waiting for the server's write-behind,
    which would otherwise compete with the next measurement).
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(timed(fn))
            if between is not None:
                between()
    return times


def median(values: list[float]) -> float:
    """Median (NaN for no values)."""
    return statistics.median(values) if values else float("nan")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in [0, 100]."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Tasks:
    """An endless supply of never-requested tasks (class lists), so every request is cold.

    Recipes hash the class order, so permutations of the catalogue are distinct models.
    """

    def __init__(self, names: list[str], k: int = 3) -> None:
        self._it: Iterator[tuple[str, ...]] = itertools.permutations(names, k)

    def next(self) -> list[str]:
        """A task no earlier call returned."""
        return list(next(self._it))


class Baselines:
    """The memory-bandwidth yardsticks and in-process synthesis on the served artifact, on the
    server's device (``device``; CUDA timings synchronise before they stop).

    ``sum`` reads every byte of the stacked Q bases once (the strict bound: synthesis must read
    them all), ``minimum`` reads them once and writes one model (their plain sum into a
    preallocated model: the physical minimum of any synthesis), ``copy`` reads them and writes
    Q models into preallocated buffers, ``clone`` reads and writes into fresh memory (page faults
    included). ``synth`` is ``bundle.personalize`` — mixer + block-wise weighted sum +
    classifier selection — as the server runs it.
    """

    def __init__(self, store: Path, num_classes: int, device: str = "cpu") -> None:
        from model_store.taper import load_taper

        self.device = torch.device(device)
        self.bundle = load_taper(store, device=self.device)
        self.stacked = self.bundle.bases.storage()  # contiguous (the views are strided)
        self.floats = [t for t in self.stacked if t.is_floating_point()]
        self.buffers = [torch.empty_like(t) for t in self.stacked]
        self.model = [torch.empty_like(t[0]) for t in self.floats]  # one model's worth
        self.ones = torch.ones(len(self.floats[0]), device=self.device)  # Q unit weights
        self.nbytes = sum(t.numel() * t.element_size() for t in self.stacked)
        self._tasks = itertools.cycle(itertools.permutations(range(num_classes), 3))
        for fn in (self.read_sum, self.minimum, self.copy, self.clone, self.synth):  # warm-up
            fn()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def read_sum(self) -> None:
        """Read only."""
        with torch.inference_mode():
            for t in self.floats:
                t.sum()
        self._sync()

    def minimum(self) -> None:
        """Read the Q bases once, write one model: their unit-weight sum by ``mv`` into a
        preallocated model, the fastest of sum(dim=0), chained adds, matmul and mv measured here
        (1.3x the read-only pass at Q = 4; ``sum(dim=0)`` was 1.7x)."""
        with torch.inference_mode():
            for t, out in zip(self.floats, self.model, strict=True):
                torch.mv(t.flatten(1).t(), self.ones, out=out.view(-1))
        self._sync()

    def copy(self) -> None:
        """Read + write into existing buffers."""
        with torch.inference_mode():
            for src, dst in zip(self.stacked, self.buffers, strict=True):
                dst.copy_(src)
        self._sync()

    def clone(self) -> None:
        """Read + write into fresh memory."""
        with torch.inference_mode():
            for t in self.stacked:
                t.clone()
        self._sync()

    def synth(self) -> None:
        """One TAPER synthesis, as ``TaperKind.synthesize`` runs it."""
        with torch.no_grad():
            self.bundle.personalize(list(next(self._tasks)), method="taper")
        self._sync()


def random_images(n: int, seed: int = 0) -> list[np.ndarray]:
    """Seeded random 32×32 RGB uint8 images (incompressible, the PNG worst case)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(n)]


def png(array: np.ndarray) -> bytes:
    """Lossless PNG bytes."""
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def b64(data: bytes) -> str:
    """Base64 text."""
    return base64.b64encode(data).decode()


def decode_fn(pngs: list[bytes], as_base64: bool) -> Callable[[], torch.Tensor]:
    """The server's own decode path for a batch (base64 → PNG → uint8 → normalised tensor)."""
    from service.core.imaging import decode_base64, decode_image, to_batch

    texts = [b64(p) for p in pngs]
    cpu = torch.device("cpu")

    def run() -> torch.Tensor:
        raws = [decode_base64(t, name="i") for t in texts] if as_base64 else pngs
        arrays = [decode_image(r, name="i", max_pixels=1 << 24, max_bytes=1 << 23) for r in raws]
        return to_batch(arrays, cpu)

    return run
