"""k-way tasks as in the TAPER paper: the image's label plus its nearest classes.

Negatives come from the label's own group first (the confusable ones), drawn at random with a
preference for near neighbours (weight exp(-rank / temperature)), so tasks are hard but vary.
Only when k exceeds the group size are other groups used. The order of classes inside a task is
shuffled: a model must never learn that the label sits at position 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trainer.data.catalogue import catalogue_for


@dataclass(frozen=True)
class Task:
    """One k-way task: global class indices (task order), the label's position, optional domain.

    `index` is the image the task was drawn for (fixed test tasks), else None.
    """

    classes: tuple[int, ...]
    target: int
    domain: str | None = None
    index: int | None = None

    @property
    def k(self) -> int:
        return len(self.classes)


def _as_catalogue(catalogue: Sequence[Mapping[str, Any] | str]) -> list[Mapping[str, Any]]:
    if all(isinstance(c, str) for c in catalogue):
        return catalogue_for([str(c) for c in catalogue])
    return [c for c in catalogue if not isinstance(c, str)]


class TaskSampler:
    """Draw k-way tasks over a catalogue (list of class dicts, or class names).

    Args:
        catalogue: classes in label order; uses each entry's 'group' and 'neighbours'.
        k: a fixed k, or an inclusive (low, high) range for dynamic k drawn per task.
        rng: a numpy Generator or an int seed.
        temperature: how strongly near neighbours are preferred (smaller = harder tasks).
    """

    def __init__(self, catalogue: Sequence[Mapping[str, Any] | str], k: int | tuple[int, int],
                 rng: np.random.Generator | int | None = 0, temperature: float = 3.0) -> None:
        entries = _as_catalogue(catalogue)
        self.names = [str(c["name"]) for c in entries]
        if len(set(self.names)) != len(self.names) or len(self.names) < 2:
            raise ValueError("a catalogue needs at least two distinct class names")
        self.k_range = (k, k) if isinstance(k, int) else (int(k[0]), int(k[1]))
        lo, hi = self.k_range
        if not 2 <= lo <= hi <= len(self.names):
            raise ValueError(f"k must satisfy 2 <= k <= {len(self.names)} classes, got {k}")
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.temperature = float(temperature)
        self.groups = [c.get("group") for c in entries]
        self._near = [self._same_group_order(i, entries[i]) for i in range(len(entries))]

    def _same_group_order(self, i: int, entry: Mapping[str, Any]) -> list[int]:
        """Same-group classes nearest first: catalogue neighbours, then any others of the group."""
        index = {n: j for j, n in enumerate(self.names)}
        group = self.groups[i]
        members = [j for j, g in enumerate(self.groups) if j != i and g is not None and g == group]
        ordered = [index[n] for n in entry.get("neighbours", []) if index.get(n) in members]
        return ordered + [j for j in members if j not in ordered]

    def draw_k(self) -> int:
        lo, hi = self.k_range
        return int(self.rng.integers(lo, hi + 1))

    def task(self, label: int, domain: str | None = None, k: int | None = None) -> Task:
        """A task containing `label`; `domain` fixes the task's domain ("a sketch of ...")."""
        if not 0 <= int(label) < len(self.names):
            raise ValueError(f"label {label} outside 0..{len(self.names) - 1}")
        k = self.draw_k() if k is None else int(k)
        if not 2 <= k <= len(self.names):
            raise ValueError(f"k must be in [2, {len(self.names)}], got {k}")
        near = self._near[label]
        if k - 1 >= len(near):
            taken = list(near)
            rest = [j for j in range(len(self.names)) if j != label and j not in near]
            taken += [int(j) for j in self.rng.choice(rest, k - 1 - len(near), replace=False)]
        else:
            weights = np.exp(-np.arange(len(near)) / self.temperature)
            picks = self.rng.choice(len(near), k - 1, replace=False, p=weights / weights.sum())
            taken = [near[int(p)] for p in picks]
        classes = [int(label), *taken]
        order = self.rng.permutation(k)
        classes = [classes[int(o)] for o in order]
        return Task(tuple(classes), classes.index(int(label)), domain)

    def task_for(self, label: int, domain: str | None = None) -> list[int]:
        """Class indices of a task containing `label` (docs/architecture.md contract)."""
        return list(self.task(label, domain).classes)


def fixed_test_tasks(data: Any, k: int | tuple[int, int], n: int | None = None, seed: int = 0,
                     split: str = "test", with_domain: bool = False) -> list[Task]:
    """The seeded task list every method is scored on: one task per chosen image.

    Args:
        data: a PacsData (or anything with class_names, labels, domains, domain_names, indices()).
        k: fixed k or (low, high) range.
        n: number of images (drawn without replacement, seeded); None = every image of the split.
        seed: same seed → identical list.
        split: which split the images come from.
        with_domain: fix each task's domain to the image's domain.
    """
    rng = np.random.default_rng([seed, 7])
    sampler = TaskSampler(list(data.class_names), k, rng)
    idx = data.indices(split)
    if n is not None:
        if n > len(idx):
            raise ValueError(f"asked for {n} tasks but split {split!r} has {len(idx)} images")
        idx = np.sort(rng.choice(idx, n, replace=False))
    tasks = []
    for i in idx:
        domain = data.domain_names[int(data.domains[i])] if with_domain else None
        t = sampler.task(int(data.labels[i]), domain)
        tasks.append(Task(t.classes, t.target, t.domain, int(i)))
    return tasks
