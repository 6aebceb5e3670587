"""Task construction for training and evaluation (k-way tasks around a label, same group first).

Training tasks come from ``trainer.data.tasks.TaskSampler`` when it is available (the shared
definition of a Tailor-PACS task); held-out evaluation tasks are built here from the *test* split
with a fixed seed that does not depend on the training seed, so every method and every training
seed is scored on exactly the same tasks and images. Validation tasks are built the same way from
the val split (choices such as the artifact's default method are made on val, never on test).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from trainer.taper.data import Split, TaskFn
from trainer.taper.evaluate import EvalTask


def neighbour_task_fn(catalogue: Sequence[dict], k: int) -> TaskFn:
    """Task = the label + ``k-1`` classes drawn from its nearest neighbours (same group first).

    Candidates are the label's ``2k`` nearest catalogue neighbours (as the paper samples from the
    2k nearest WordNet synsets), topped up with other classes when a group is small.
    """
    names = [c["name"] for c in catalogue]
    index = {n: i for i, n in enumerate(names)}
    near = [[index[n] for n in c.get("neighbours", []) if n in index] for c in catalogue]
    if k < 1 or k > len(names):
        raise ValueError(f"k must be in [1, {len(names)}], got {k}")

    def task_fn(label: int, _domain: int | None, rng: np.random.Generator) -> list[int]:
        pool = near[label][: 2 * k]
        others = [c for c in range(len(names)) if c != label and c not in pool]
        if len(pool) < k - 1:
            pool = pool + list(rng.permutation(others)[: k - 1 - len(pool)])
        chosen = [int(c) for c in rng.choice(pool, size=k - 1, replace=False)] if k > 1 else []
        order = [label, *chosen]
        return [order[i] for i in rng.permutation(len(order))]

    return task_fn


def random_task_fn(num_classes: int, k: int) -> TaskFn:
    """Task = the label + ``k-1`` classes drawn uniformly from all others: tasks that cross
    class groups, which neighbour tasks (same group first) almost never are, so a description
    cannot give the group away (issue 14 §7)."""
    if k < 1 or k > num_classes:
        raise ValueError(f"k must be in [1, {num_classes}], got {k}")

    def task_fn(label: int, _domain: int | None, rng: np.random.Generator) -> list[int]:
        others = [c for c in range(num_classes) if c != label]
        order = [label, *(int(c) for c in rng.choice(others, size=k - 1, replace=False))]
        return [order[i] for i in rng.permutation(len(order))]

    return task_fn


def training_tasks(catalogue: Sequence[dict], ks: Sequence[int], cross_prob: float) -> TaskFn:
    """Training tasks of a k drawn from ``ks`` per task (the paper's dynamic way), crossing
    groups with probability ``cross_prob`` (else neighbour tasks)."""
    near = {k: neighbour_task_fn(catalogue, k) for k in ks}
    wide = {k: random_task_fn(len(catalogue), k) for k in ks}

    def task_fn(label: int, domain: int | None, rng: np.random.Generator) -> list[int]:
        k = int(ks[int(rng.integers(len(ks)))]) if len(ks) > 1 else int(ks[0])
        fns = wide if cross_prob > 0 and rng.random() < cross_prob else near
        return fns[k](label, domain, rng)

    return task_fn


def make_eval_tasks(split: Split, task_fn: TaskFn, k: int, n: int, per_class: int,
                    domain_prob: float, seed: int) -> list[EvalTask]:
    """``n`` fixed tasks, each with up to ``per_class`` images of every one of its classes.

    Anchors are random images of the split (so tasks follow its distribution); a task fixes the
    anchor's domain with probability ``domain_prob`` and then uses only images of that domain.
    """
    rng = np.random.default_rng(seed)
    y, d = split.y.numpy(), split.d.numpy()
    tasks = []
    for _ in range(n):
        anchor = int(rng.integers(len(y)))
        domain = int(d[anchor]) if rng.random() < domain_prob else None
        classes = list(task_fn(int(y[anchor]), domain, rng))
        idx = []
        for c in classes:
            pool = np.flatnonzero((y == c) & ((d == domain) if domain is not None else True))
            idx.append(rng.permutation(pool)[:per_class])
        tasks.append(EvalTask(classes, domain, np.concatenate(idx).astype(np.int64)))
    return tasks


def task_labels(split: Split, task: EvalTask) -> torch.Tensor:
    """Ground-truth global labels of a task's images."""
    return split.y[torch.from_numpy(task.idx)]
