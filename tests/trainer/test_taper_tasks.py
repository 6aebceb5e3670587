"""TAPER tasks, descriptions, configs and shards (fast: no training)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from model_store.text import task_embedding
from trainer.data.catalogue import CLASSES
from trainer.taper.config import get_config
from trainer.taper.data import Split, TaskBatcher, shift_augment
from trainer.taper.describe import Describer
from trainer.taper.stages import Context, shard_of, shards
from trainer.taper.tasks import make_eval_tasks, neighbour_task_fn


def _split(n_per: int = 6, classes: int = 30, domains: int = 4, seed: int = 0) -> Split:
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(classes).repeat_interleave(n_per * domains)
    d = torch.arange(domains).repeat_interleave(n_per).repeat(classes)
    x = torch.randint(0, 255, (len(y), 3, 32, 32), generator=g, dtype=torch.uint8)
    return Split(x=x, y=y, d=d)


def test_neighbour_tasks_hold_the_label_and_k_distinct_near_classes():
    fn = neighbour_task_fn(CLASSES, k=5)
    rng = np.random.default_rng(0)
    for label in range(30):
        task = fn(label, None, rng)
        assert len(task) == 5 and len(set(task)) == 5 and label in task
        near = {
            CLASSES.index(c)
            for c in [e for e in CLASSES if e["name"] in CLASSES[label]["neighbours"][:10]]
        }
        assert set(task) - {label} <= near
        assert {CLASSES[c]["group"] for c in task} == {CLASSES[label]["group"]}


def test_neighbour_tasks_refuse_impossible_k():
    with pytest.raises(ValueError, match="k must be"):
        neighbour_task_fn(CLASSES, k=31)


def test_eval_tasks_are_fixed_by_seed_and_respect_classes_and_domain():
    split = _split()
    fn = neighbour_task_fn(CLASSES, k=3)
    a = make_eval_tasks(split, fn, 3, 20, per_class=4, domain_prob=0.5, seed=7)
    b = make_eval_tasks(split, fn, 3, 20, per_class=4, domain_prob=0.5, seed=7)
    assert [(t.classes, t.domain, t.idx.tolist()) for t in a] == [
        (t.classes, t.domain, t.idx.tolist()) for t in b
    ]
    assert any(t.domain is None for t in a) and any(t.domain is not None for t in a)
    for t in a:
        labels = split.y[torch.from_numpy(t.idx)]
        assert set(labels.tolist()) <= set(t.classes)
        assert all((labels == c).sum() <= 4 for c in t.classes)
        if t.domain is not None:
            assert (split.d[torch.from_numpy(t.idx)] == t.domain).all()


def test_task_batches_are_class_balanced_images_of_the_task():
    split = _split()
    batcher = TaskBatcher(split, neighbour_task_fn(CLASSES, 4), domain_prob=1.0, seed=3)
    tb = batcher.task_batch(40, augment=True)
    assert tb.x.shape == (40, 3, 32, 32) and tb.x.dtype == torch.float32
    assert set(tb.y.tolist()) <= set(tb.classes.tolist())
    assert tb.domain is not None


def test_shift_augment_moves_images_by_at_most_the_padding():
    x = torch.arange(2 * 1 * 6 * 6, dtype=torch.float32).view(2, 1, 6, 6)
    out = shift_augment(x, torch.Generator().manual_seed(0), pad=1)
    assert out.shape == x.shape
    for i in range(2):  # the centre 4x4 of the input appears somewhere in the output
        assert any(
            torch.equal(out[i, 0, dy : dy + 4, dx : dx + 4], x[i, 0, 1:5, 1:5])
            for dy in range(3)
            for dx in range(3)
        )


def test_task_description_matches_the_services_task_embedding():
    g = torch.Generator().manual_seed(0)
    prompts = torch.nn.functional.normalize(torch.randn(6, 3, 8, generator=g), dim=-1)
    domain_prompts = torch.nn.functional.normalize(torch.randn(4, 6, 3, 8, generator=g), dim=-1)
    text = {
        "prompts": prompts,
        "domain_prompts": domain_prompts,
        "definitions": torch.randn(6, 8, generator=g),
        "names": prompts[:, 0],
    }
    describe = Describer(text)
    classes = [4, 1, 2]
    expected = task_embedding([prompts[c].numpy() for c in classes])
    np.testing.assert_allclose(describe(classes).numpy(), expected, rtol=1e-5, atol=1e-6)
    expected_dom = task_embedding([domain_prompts[2, c].numpy() for c in classes])
    np.testing.assert_allclose(describe(classes, 2).numpy(), expected_dom, rtol=1e-5, atol=1e-6)
    bow = Describer(text, "bow")(classes, 1)
    assert bow.shape == (10,) and bow.sum() == 4 and bow[6 + 1] == 1


def _ctx(shard_by: str) -> Context:
    groups = [c // 10 for c in range(30)]
    return Context(
        cfg=get_config("tiny", shard_by=shard_by),
        seed=0,
        train=_split(),
        num_classes=30,
        groups=groups,
        task_fn=None,
        run_dir=Path("."),
    )


@pytest.mark.parametrize("shard_by,count", [("domain", 4), ("group", 3), ("group_domain", 12)])
def test_shards_partition_the_training_set(shard_by, count):
    ctx = _ctx(shard_by)
    parts = shards(ctx)
    assert len(parts) == count
    joined = np.sort(np.concatenate(parts))
    np.testing.assert_array_equal(joined, np.arange(len(ctx.train)))


def test_task_routing_to_shards():
    assert shard_of(_ctx("domain"), [1, 2], 3) == 3
    assert shard_of(_ctx("domain"), [1, 2], None) is None
    assert shard_of(_ctx("group"), [11, 12], None) == 1
    assert shard_of(_ctx("group"), [1, 12], None) is None
    assert shard_of(_ctx("group_domain"), [21, 22], 2) == 2 * 4 + 2


def test_shard_indices_stay_dense_when_a_group_is_missing():
    ctx = _ctx("group")
    ctx.groups = [0 if c < 15 else 2 for c in range(30)]  # e.g. the tiny build: no clothing
    assert len(shards(ctx)) == 2
    assert shard_of(ctx, [20, 21], None) == 1


def test_config_budget_and_errors():
    cfg = get_config("default")
    assert cfg.budget == cfg.stage1_epochs + cfg.stage2_epochs + cfg.stage3_epochs
    assert get_config("demo").width == 64 and get_config("tiny").width == 64
    with pytest.raises(ValueError, match="unknown TAPER config"):
        get_config("huge")
    with pytest.raises(ValueError, match="shard_by"):
        shards(_ctx("class"))


def test_cross_group_and_dynamic_k_training_tasks():
    """Issue 14 §7: training draws k from a range and, at the configured rate, tasks whose
    classes span groups (neighbour tasks stay inside the label's group)."""
    import numpy as np

    from trainer.data.catalogue import GROUPS, catalogue_for
    from trainer.taper.tasks import neighbour_task_fn, random_task_fn, training_tasks

    catalogue = catalogue_for([c for c in _all_class_names()])
    group = {i: GROUPS.index(c["group"]) for i, c in enumerate(catalogue)}
    rng = np.random.default_rng(0)

    def spans(task):
        return len({group[c] for c in task}) > 1

    near = [neighbour_task_fn(catalogue, 5)(i % 30, None, rng) for i in range(300)]
    wide = [random_task_fn(30, 5)(i % 30, None, rng) for i in range(300)]
    assert sum(map(spans, near)) == 0 and sum(map(spans, wide)) > 250
    assert all(len(set(t)) == 5 for t in wide)
    mixed = [training_tasks(catalogue, (3, 5, 10), 0.5)(i % 30, None, rng) for i in range(600)]
    assert {len(t) for t in mixed} == {3, 5, 10}
    assert 0.3 < np.mean([spans(t) for t in mixed]) < 0.6  # ~0.5 x P(a random task spans)
    assert all(i % 30 in t for i, t in enumerate(mixed))  # the anchor label is always in


def _all_class_names():
    from trainer.data.catalogue import CLASSES

    return [c["name"] for c in CLASSES]
