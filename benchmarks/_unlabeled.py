"""Tasks, estimates and scoring for ``benchmarks/self_improvement.py`` (issue 18).

A task is ``way`` classes of one Tailor-PACS split, inside one domain (``scope="domain"``) or
across all four (``"mixed"``), with its images in a fixed shuffled order: the app's stream.
Estimates are made from the first ``n`` images with ``model_store.unlabeled`` (what the service
runs); models are built by ``model_store`` synthesis (what the service serves) and scored on a
fixed subset of the task's images.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model_store.images import MEAN, STD
from model_store.resnet import build_resnet18
from model_store.unlabeled import TaskEstimate, estimate_task

_MEAN = torch.tensor(MEAN).view(1, 3, 1, 1)
_STD = torch.tensor(STD).view(1, 3, 1, 1)


def normalise(images: np.ndarray) -> torch.Tensor:
    """uint8 NHWC → the normalised NCHW batch the service feeds its models."""
    x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255.0
    return (x - _MEAN) / _STD


@dataclass
class Task:
    """One task: its classes, its domain (None: mixed), its stream order and its eval set."""

    way: int
    scope: str
    classes: list[int]
    domain: int | None
    stream: np.ndarray  # indices into the split, shuffled: the order the app sees them
    evaluate: np.ndarray  # a fixed subset of the task's images, scored at every n


def make_tasks(labels: np.ndarray, domains: np.ndarray, *, ways: tuple[int, ...],
               scopes: tuple[str, ...], per_config: int, seed: int,
               eval_cap: int = 200) -> list[Task]:
    """``per_config`` tasks per (way, scope), each drawn from its own fixed seed."""
    tasks, n_classes, n_domains = [], int(labels.max()) + 1, int(domains.max()) + 1
    for way in ways:
        for scope in scopes:
            for t in range(per_config):
                rng = np.random.default_rng([seed, way, scopes.index(scope), t])
                classes = sorted(int(c) for c in rng.choice(n_classes, way, replace=False))
                dom = int(rng.integers(n_domains)) if scope == "domain" else None
                mask = np.isin(labels, classes) & ((domains == dom) if dom is not None else True)
                pool = rng.permutation(np.flatnonzero(mask))
                tasks.append(Task(way, scope, classes, dom, pool,
                                  np.sort(rng.permutation(pool)[:eval_cap])))
    return tasks


def relabel_shortlist(probs: np.ndarray, k: int, rounds: int = 3) -> list[int]:
    """The paper's loop iterated: take the 2k most common labels, re-label the batch over that
    shortlist (the all-class posteriors restricted to it: what the ``selection`` model over the
    shortlist predicts), keep the k most common, repeat."""
    counts = np.bincount(probs.argmax(1), minlength=probs.shape[1])
    short = np.argsort(-counts, kind="stable")[:2 * k]
    for _ in range(rounds):
        votes = short[probs[:, short].argmax(1)]
        counts = np.bincount(votes, minlength=probs.shape[1])
        short = np.argsort(-counts, kind="stable")[:max(k, len(short) // 2)]
    return sorted(int(i) for i in np.argsort(-counts, kind="stable")[:k])


def estimates(probs: np.ndarray, doms: np.ndarray | None, k: int, share: float,
              conf: float) -> dict[str, TaskEstimate | list[int]]:
    """Every estimator the benchmark compares, on one prefix of a stream."""
    out: dict[str, TaskEstimate | list[int]] = {
        rule: estimate_task(probs, doms, k=k, min_share=share, min_domain_conf=conf, rule=rule)
        for rule in ("count", "soft", "em")
    }
    out["em_k"] = estimate_task(probs, doms, min_share=share, min_domain_conf=conf, rule="em")
    out["relabel"] = relabel_shortlist(probs, k)
    return out


class Scorer:
    """Accuracy of personalized models on task images, built by ``model_store`` synthesis and
    cached by recipe (the same classes, domain and method give the same model)."""

    def __init__(self, bundle, images: torch.Tensor, labels: np.ndarray, domains: list[str]):
        self.bundle, self.images, self.labels, self.domains = bundle, images, labels, domains
        self._cache: dict[tuple, np.ndarray] = {}

    def predictions(self, classes: list[int], domain: int | None, method: str,
                    idx: np.ndarray, weights: tuple[float, ...] | None = None) -> np.ndarray:
        """Catalogue labels the model predicts for split images ``idx``."""
        key = (tuple(classes), domain, method, weights, idx.tobytes())
        if key not in self._cache:
            name = self.domains[domain] if domain is not None else None
            if weights is None:
                state, _ = self.bundle.personalize(classes, domain=name, method=method)
            else:  # the old /refine: the embedding weighted by pseudo-label shares, taper
                emb = self.bundle.task_embedding(classes, name, weights=list(weights))
                state = self.bundle.synthesize_from_mixers(self.bundle.mixers_for(emb), classes)
            model = build_resnet18(len(classes))
            model.load_state_dict(state)
            with torch.no_grad():
                out = model.eval()(self.images[torch.from_numpy(idx)]).argmax(1).numpy()
            self._cache[key] = np.asarray(classes)[out]
        return self._cache[key]

    def accuracy(self, classes: list[int], domain: int | None, method: str, idx: np.ndarray,
                 weights: tuple[float, ...] | None = None) -> float:
        pred = self.predictions(classes, domain, method, idx, weights)
        return float((pred == self.labels[idx]).mean())
