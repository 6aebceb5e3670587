"""Scoring methods on fixed held-out tasks, with one code path for every method.

A *method* is a set of bases plus a router (task -> block-wise mixers): the generic baseline is
one basis with mixer 1, TAPER routes with its mixer predictor, the domain-routed control routes
one-hot, the uniform average is one basis holding the averaged weights. Every method therefore
gets the same BatchNorm treatment (``recalibrate_bn`` on the same training task batches) and the
same forward, and is scored on the same tasks, so differences are the method's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.func import functional_call

from trainer.taper.data import Split, TaskBatcher
from trainer.taper.mixing import Bases, recalibrate_bn

Router = Callable[[Sequence[int], "int | None"], torch.Tensor]  # -> (4, Q)


@dataclass
class EvalTask:
    """A held-out task: its classes (order = local labels), optional domain, test images."""

    classes: list[int]
    domain: int | None
    idx: np.ndarray
    meta: dict = field(default_factory=dict)


@dataclass
class Method:
    """Bases + a router; ``selection`` False scores argmax over all classes."""

    name: str
    bases: Bases
    router: Router
    selection: bool = True


def constant_router(q: int, alpha: torch.Tensor | None = None) -> Router:
    """A router that ignores the task: uniform over ``q`` bases, or a fixed ``alpha``."""
    fixed = torch.full((4, q), 1.0 / q) if alpha is None else alpha

    def route(_classes, _domain):
        return fixed

    route.cacheable = True
    return route


def calibrate(method: Method, batcher: TaskBatcher, n_batches: int, batch: int) -> None:
    """Re-estimate ``method``'s BN statistics on ``n_batches`` sampled training task batches."""
    if n_batches <= 0:
        return
    batches = []
    for _ in range(n_batches):
        tb = batcher.task_batch(batch, augment=False)
        batches.append((tb.x, method.router(tb.classes.tolist(), tb.domain).detach()))
    recalibrate_bn(method.bases, batches)


_CACHE: dict[tuple, torch.Tensor] = {}


def clear_cache() -> None:
    """Forget cached logits (call whenever weights or BN statistics change)."""
    _CACHE.clear()


@torch.no_grad()
def _forward(method: Method, split: Split, alpha: torch.Tensor, idx: np.ndarray) -> torch.Tensor:
    """CPU logits of ``idx`` under the model ``model_store.synthesis`` builds for ``alpha``.

    Scoring runs in fp32 on the bases' device, as the service serves.
    """
    state = method.bases.mixed_state(alpha)
    model = method.bases.template.eval()
    out = []
    for start in range(0, len(idx), 512):
        chunk = torch.from_numpy(np.asarray(idx[start : start + 512]))
        x = split.batch(chunk).to(method.bases.device)
        out.append(functional_call(model, state, (x,)).float().cpu())
    return torch.cat(out)


def task_logits(method: Method, split: Split, task: EvalTask,
                alpha: torch.Tensor | None = None) -> torch.Tensor:
    """Full-way logits of the task's images under the method's model for this task.

    Routers that return few distinct mixers (``cacheable``: constant, routed) run the whole
    split once per distinct mixer; task-dependent ones run the task's images (memoised per task,
    so TAPER with and without selection share one forward).
    """
    if alpha is None:
        alpha = method.router(task.classes, task.domain)
    key = (id(method.bases), id(split), alpha.detach().numpy().tobytes())
    if getattr(method.router, "cacheable", False):
        if key not in _CACHE:
            _CACHE[key] = _forward(method, split, alpha, np.arange(len(split)))
        return _CACHE[key][torch.from_numpy(task.idx)]
    key = (*key, task.idx.tobytes())
    if key not in _CACHE:
        _CACHE[key] = _forward(method, split, alpha, task.idx)
    return _CACHE[key]


def task_predictions(method: Method, split: Split, task: EvalTask,
                     alpha: torch.Tensor | None = None) -> torch.Tensor:
    """Predicted global class ids (argmax over the task's classes, or all with no selection)."""
    logits = task_logits(method, split, task, alpha)
    if not method.selection:
        return logits.argmax(1)
    classes = torch.as_tensor(task.classes)
    return classes[logits[:, classes].argmax(1)]


def score(method: Method, split: Split, tasks: Sequence[EvalTask]) -> dict:
    """Accuracy averaged over tasks (each task = its images' mean), plus per-task values."""
    per_task = []
    for task in tasks:
        pred = task_predictions(method, split, task)
        per_task.append(float((pred == split.y[torch.from_numpy(task.idx)]).float().mean()))
    return {"acc": float(np.mean(per_task)) if per_task else float("nan"), "per_task": per_task}


def per_domain(per_task: Sequence[float], tasks: Sequence[EvalTask], domains: Sequence[str]):
    """Mean accuracy of the domain-fixed tasks of each domain (Table 5 style)."""
    out = {}
    for d, name in enumerate(domains):
        vals = [a for a, t in zip(per_task, tasks, strict=True) if t.domain == d]
        out[name] = float(np.mean(vals)) if vals else float("nan")
    return out


def mixer_similarity(router_a: Router, router_b: Router, tasks: Sequence[EvalTask]) -> float:
    """Mean cosine similarity of two routers' flattened mixers over ``tasks`` (§5.1)."""
    sims = []
    for t in tasks:
        a, b = router_a(t.classes, t.domain).flatten(), router_b(t.classes, t.domain).flatten()
        sims.append(float(torch.nn.functional.cosine_similarity(a, b, dim=0)))
    return float(np.mean(sims))


def self_improvement(generic: Method, taper: Method, split: Split, tasks: Sequence[EvalTask],
                     k: int, batch: int, steps: int, seed: int) -> list[float]:
    """§5.2: accuracy vs number of unlabeled test batches seen, with no task description.

    Step 0 is the generic model over all classes (``generic.selection`` must be False). After
    each batch, the k classes the generic model predicts most often over the batches seen so far
    form the task; TAPER mixes a model for them (with classifier selection). Accuracy at step s
    is measured on all of the task's images with the model built after s batches.
    """
    rng = np.random.default_rng(seed)
    curves = np.zeros((len(tasks), steps + 1))
    for i, task in enumerate(tasks):
        order = rng.permutation(task.idx)
        labels = split.y[torch.from_numpy(task.idx)]
        seen: list[int] = []
        current: Method = generic
        if generic.selection:
            raise ValueError("self_improvement needs the generic method without selection")
        guess: list[int] | None = None
        for s in range(steps + 1):
            probe = EvalTask(guess or task.classes, None, task.idx)
            pred = task_predictions(current, split, probe)
            curves[i, s] = float((pred == labels).float().mean())
            chunk = order[s * batch : (s + 1) * batch]
            if len(chunk) == 0:
                chunk = order[:batch]
            seen += task_predictions(generic, split, EvalTask(task.classes, None, chunk)).tolist()
            counts = np.bincount(np.asarray(seen), minlength=int(split.y.max()) + 1)
            guess = [int(c) for c in np.argsort(-counts, kind="stable")[:k]]
            current = taper
    return curves.mean(0).tolist()
