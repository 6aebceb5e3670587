"""Task sampler: label inside, k distinct classes, same group first, fixed test tasks."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.data.catalogue import CLASS_NAMES, CLASSES
from trainer.data.tasks import TaskSampler, fixed_test_tasks

GROUP = [c["group"] for c in CLASSES]


@pytest.mark.parametrize("k", [2, 5, 10])
def test_tasks_contain_label_with_k_distinct_same_group_classes(k):
    sampler = TaskSampler(CLASSES, k, rng=0)
    for label in range(30):
        for _ in range(20):
            task = sampler.task(label)
            assert task.k == k and len(set(task.classes)) == k
            assert task.classes[task.target] == label
            assert all(GROUP[c] == GROUP[label] for c in task.classes)


def test_large_k_takes_whole_group_then_others():
    sampler = TaskSampler(CLASS_NAMES, 14, rng=1)
    for label in (0, 15, 27):
        classes = sampler.task_for(label)
        same = [c for c in classes if GROUP[c] == GROUP[label]]
        assert len(same) == 10 and len(classes) == 14 and label in classes


def test_near_neighbours_preferred_but_tasks_vary():
    sampler = TaskSampler(CLASSES, 3, rng=0)
    zero = CLASS_NAMES.index("zero")
    counts = np.zeros(30)
    seen = set()
    for _ in range(2000):
        classes = sampler.task_for(zero)
        counts[classes] += 1
        seen.add(frozenset(classes))
    nearest, farthest = CLASSES[zero]["neighbours"][0], CLASSES[zero]["neighbours"][-1]
    assert counts[CLASS_NAMES.index(nearest)] > 2 * counts[CLASS_NAMES.index(farthest)]
    assert len(seen) > 10


def test_label_position_is_shuffled():
    sampler = TaskSampler(CLASSES, 5, rng=0)
    targets = {sampler.task(7).target for _ in range(200)}
    assert targets == set(range(5))


def test_dynamic_k_covers_range_and_fixed_domain_is_kept():
    sampler = TaskSampler(CLASSES, (2, 6), rng=3)
    tasks = [sampler.task(4, domain="sketch") for _ in range(300)]
    assert {t.k for t in tasks} == set(range(2, 7))
    assert all(t.domain == "sketch" for t in tasks)


def test_invalid_k_and_label_rejected():
    with pytest.raises(ValueError, match="k must"):
        TaskSampler(CLASSES, 1)
    with pytest.raises(ValueError, match="k must"):
        TaskSampler(CLASSES, 31)
    with pytest.raises(ValueError, match="label"):
        TaskSampler(CLASSES, 3).task(30)


def test_unknown_classes_sample_uniformly():
    sampler = TaskSampler(["guitar", "violin", "drum", "flute"], 3, rng=0)
    assert all(0 in sampler.task_for(0) for _ in range(10))


def test_fixed_test_tasks_identical_across_calls(tiny_pacs):
    a = fixed_test_tasks(tiny_pacs, k=5, seed=0)
    b = fixed_test_tasks(tiny_pacs, k=5, seed=0)
    c = fixed_test_tasks(tiny_pacs, k=5, seed=1)
    assert a == b and a != c
    assert [t.index for t in a] == tiny_pacs.indices("test").tolist()
    for t in a:
        assert t.classes[t.target] == tiny_pacs.labels[t.index]


def test_fixed_test_tasks_subset_and_domain(tiny_pacs):
    tasks = fixed_test_tasks(tiny_pacs, k=(3, 5), n=50, seed=0, with_domain=True)
    assert len(tasks) == 50 and len({t.index for t in tasks}) == 50
    test_idx = set(tiny_pacs.indices("test").tolist())
    for t in tasks:
        assert t.index in test_idx and 3 <= t.k <= 5
        assert t.domain == tiny_pacs.domain_names[tiny_pacs.domains[t.index]]
    with pytest.raises(ValueError, match="asked for"):
        fixed_test_tasks(tiny_pacs, k=3, n=10_000)
