"""Tensors and task batches for TAPER training, on top of ``trainer.data`` (Tailor-PACS).

Images stay uint8 in memory (a quarter of float32) and are normalised per batch with
``model_store.images`` MEAN/STD, so training and serving preprocess identically. On a GPU the
uint8 images move to it once (``Split.to``; Tailor-PACS default is 74 MB) and batches are cut,
normalised and augmented there; labels and domains stay on the CPU, where task sampling reads
them. Augmentation is a
random translation of up to 2 pixels (no flips: digits and some garments are not mirror-symmetric).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import torch

from model_store.images import MEAN, STD
from trainer.taper.mixing import TaskBatch

TRAIN, VAL, TEST = 0, 1, 2
_MEAN = torch.tensor(MEAN, dtype=torch.float32).view(1, 3, 1, 1)
_STD = torch.tensor(STD, dtype=torch.float32).view(1, 3, 1, 1)


@lru_cache(maxsize=8)
def _mean_std(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """MEAN/STD on ``device``, copied once: a pageable host-to-GPU copy per batch would
    synchronise the stream every step."""
    return _MEAN.to(device), _STD.to(device)


def normalise(x_uint8: torch.Tensor) -> torch.Tensor:
    """uint8 NCHW -> normalised float32 NCHW (on the images' device)."""
    mean, std = _mean_std(x_uint8.device)
    return (x_uint8.float() / 255.0 - mean) / std


def shift_augment(x: torch.Tensor, gen: torch.Generator, pad: int = 2) -> torch.Tensor:
    """Random per-image translation by up to ``pad`` pixels (edge padding).

    The offsets come from the CPU generator ``gen`` whatever ``x``'s device, so a run draws the
    same augmentation on CPU and GPU.
    """
    n, c, h, w = x.shape
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad), mode="replicate")
    dy = torch.randint(0, 2 * pad + 1, (n,), generator=gen).to(x.device)
    dx = torch.randint(0, 2 * pad + 1, (n,), generator=gen).to(x.device)
    rows = (dy[:, None] + torch.arange(h, device=x.device)[None])[:, None, :, None]
    out = padded.gather(2, rows.expand(n, c, h, w + 2 * pad))
    cols = (dx[:, None] + torch.arange(w, device=x.device)[None])[:, None, None, :]
    return out.gather(3, cols.expand(n, c, h, w))


@dataclass
class Split:
    """One split of Tailor-PACS as tensors: uint8 images NCHW (on the training device), CPU
    labels and domain ids."""

    x: torch.Tensor
    y: torch.Tensor
    d: torch.Tensor
    plain: torch.Tensor | None = None  # the same images as plain scans (Tailor-PACS sources)
    plain_prob: float = 0.0  # share of augmented images swapped for their plain scan

    def __len__(self) -> int:
        return len(self.y)

    @property
    def device(self) -> torch.device:
        """Where the images (and so every batch) live."""
        return self.x.device

    def to(self, device: torch.device) -> Split:
        """The same split with its images on ``device`` (labels stay on the CPU)."""
        plain = None if self.plain is None else self.plain.to(device)
        return replace(self, x=self.x.to(device), plain=plain)

    def batch(self, idx: torch.Tensor, gen: torch.Generator | None = None) -> torch.Tensor:
        """Normalised float images ``idx``; augmented when a generator is given (shifts, and
        with ``plain_prob`` the plain scan in either polarity instead of the rendering)."""
        x = self.x[idx.to(self.device)]
        if gen is None:
            return normalise(x)
        if self.plain is not None and self.plain_prob > 0:
            x = self._swap_plain(x, idx, gen)
        return shift_augment(normalise(x), gen)

    def _swap_plain(self, x: torch.Tensor, idx: torch.Tensor,
                    gen: torch.Generator) -> torch.Tensor:
        """Issue 14 §6: real scans are plain, white-on-black or ink-on-paper; the rendered
        domains are not, and the model scored 16 % on real digits without this."""
        pick = (torch.rand(len(idx), generator=gen) < self.plain_prob).to(self.device)
        invert = (torch.rand(len(idx), generator=gen) < 0.5).to(self.device)
        plain = self.plain[idx.to(self.device)]
        plain = torch.where(invert[:, None, None, None], 255 - plain, plain)
        return torch.where(pick[:, None, None, None], plain, x)

    def labels(self, idx: torch.Tensor) -> torch.Tensor:
        """Labels of ``idx`` on the images' device (for the loss)."""
        return self.y[idx].to(self.device, non_blocking=True)


def make_split(data, split: int) -> Split:
    """Select one split (0 train / 1 val / 2 test) of a ``PacsData``."""
    mask = np.asarray(data.split) == split
    if not mask.any():
        raise ValueError(f"dataset has no images in split {split}")
    images = torch.from_numpy(np.ascontiguousarray(np.asarray(data.images)[mask]))
    return Split(
        x=images.permute(0, 3, 1, 2).contiguous(),
        y=torch.from_numpy(np.asarray(data.labels)[mask].astype(np.int64)),
        d=torch.from_numpy(np.asarray(data.domains)[mask].astype(np.int64)),
    )


TaskFn = Callable[[int, "int | None", np.random.Generator], Sequence[int]]


class TaskBatcher:
    """Samples stage-3 task batches: a k-way task and class-balanced images of its classes.

    A task is anchored on a random training image (so tasks follow the data distribution, as the
    paper pairs each image with a task around its label); with probability ``domain_prob`` the
    task also fixes the anchor's domain and draws only images of that domain.
    """

    def __init__(self, split: Split, task_fn: TaskFn, domain_prob: float, seed: int):
        self.split, self.task_fn, self.domain_prob = split, task_fn, domain_prob
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(seed)
        y, d = split.y.numpy(), split.d.numpy()
        self.by_class = {int(c): np.flatnonzero(y == c) for c in np.unique(y)}
        self.by_class_domain = {
            (int(c), int(k)): np.flatnonzero((y == c) & (d == k))
            for c in np.unique(y)
            for k in np.unique(d)
        }

    def sample_task(self) -> tuple[list[int], int | None]:
        """(classes, domain or None) for one random anchor image."""
        i = int(self.rng.integers(len(self.split)))
        label, domain = int(self.split.y[i]), int(self.split.d[i])
        domain_or_none = domain if self.rng.random() < self.domain_prob else None
        return list(self.task_fn(label, domain_or_none, self.rng)), domain_or_none

    def images_for(self, classes: Sequence[int], domain: int | None, n: int) -> np.ndarray:
        """``n`` class-balanced image indices of ``classes`` (in ``domain`` when given)."""
        picks = self.rng.integers(len(classes), size=n)
        out = np.empty(n, dtype=np.int64)
        for j, c in enumerate(picks):
            key = int(classes[c])
            pool = self.by_class[key] if domain is None else self.by_class_domain[(key, domain)]
            if len(pool) == 0:
                pool = self.by_class[key]
            out[j] = pool[self.rng.integers(len(pool))]
        return out

    def task_batch(self, n: int, augment: bool) -> TaskBatch:
        """One sampled task with ``n`` images."""
        classes, domain = self.sample_task()
        idx = torch.from_numpy(self.images_for(classes, domain, n))
        return TaskBatch(
            x=self.split.batch(idx, self.gen if augment else None),
            y=self.split.labels(idx),
            classes=torch.tensor(classes, dtype=torch.long, device=self.split.device),
            domain=domain,
        )
