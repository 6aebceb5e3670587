"""What task a batch of unlabeled images is (TAPER §5.2): which classes, how many, which domain.

The paper's loop pseudo-labels the images with the non-personalized model and takes the most
common labels as the task description. Counting argmaxes is biased towards classes the generic
model over-predicts (every 30-way confusion adds a stray count), so the estimate here is the
maximum-likelihood class prior of the batch under label shift (EM, Saerens, Latinne &
Decaestecker 2002): each image's posterior is re-weighted by the current prior and the prior is
re-estimated from them until it settles. Classes absent from the batch lose their mass, so the
classes and their number can be read from the prior. Thresholds are arguments: the service takes
them from its settings, which ``benchmarks/self_improvement.py`` chooses on validation tasks.

Everything here is a function of probabilities, so the service, the stream (``/observe``) and
the benchmark share one implementation; the forward that makes the probabilities is
:func:`generic_scores`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from model_store.resnet import pooled_features

EM_ITERS = 100


@dataclass
class TaskEstimate:
    """The estimated task of a batch (indices into the catalogue / its domains).

    Attributes:
        classes: chosen class indices, in catalogue order.
        prior: the estimated share of every catalogue class in the batch (sums to 1).
        counts: argmax pseudo-label counts per catalogue class (weighted when the images are).
        k_estimated: whether the number of classes was estimated (not given).
        domain: the estimated domain index, or None (mixed, or no domain head).
        domain_probs: mean domain posterior of the batch, or None.
        images: the (effective, when weighted) number of images behind the estimate.
    """

    classes: list[int]
    prior: np.ndarray
    counts: np.ndarray
    k_estimated: bool
    domain: int | None
    domain_probs: np.ndarray | None
    images: float


def em_prior(probs: np.ndarray, weights: np.ndarray | None = None,
             iters: int = EM_ITERS, tol: float = 1e-6) -> np.ndarray:
    """The batch's class prior maximising the likelihood of ``probs`` (n, N) under label shift
    from a uniform training prior; ``weights`` (n,) weigh images (a decaying stream)."""
    w = np.ones(len(probs)) if weights is None else np.asarray(weights, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    prior = np.full(p.shape[1], 1.0 / p.shape[1])
    for _ in range(iters):
        post = p * prior
        post /= post.sum(axis=1, keepdims=True) + 1e-300
        new = (w[:, None] * post).sum(axis=0) / w.sum()
        done = np.abs(new - prior).max() < tol
        prior = new
        if done:
            break
    return prior


def count_k(prior: np.ndarray, min_share: float, k_min: int = 2) -> int:
    """How many classes the batch has: those holding at least ``min_share`` of it (≥ k_min)."""
    return int(min(len(prior), max(k_min, int((prior >= min_share).sum()))))


def pick_domain(domain_probs: np.ndarray | None, min_conf: float) -> int | None:
    """The batch's domain when its mean posterior reaches ``min_conf`` (else None: mixed)."""
    if domain_probs is None:
        return None
    best = int(np.argmax(domain_probs))
    return best if domain_probs[best] >= min_conf else None


def estimate_task(probs: np.ndarray, domain_probs: np.ndarray | None = None, *,
                  k: int | None = None, min_share: float = 0.05, min_domain_conf: float = 0.6,
                  weights: np.ndarray | None = None, rule: str = "em") -> TaskEstimate:
    """Classes (top-k of the prior; k given or counted), domain and statistics of a batch.

    ``rule``: ``em`` (default), ``soft`` (mean posterior) or ``count`` (argmax counts, the
    paper's loop) — the baselines the benchmark compares.
    """
    p = np.asarray(probs, dtype=np.float64)
    w = np.ones(len(p)) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = np.bincount(p.argmax(axis=1), weights=w, minlength=p.shape[1])
    if rule == "em":
        prior = em_prior(p, w)
    elif rule == "soft":
        prior = (w[:, None] * p).sum(axis=0) / w.sum()
    elif rule == "count":
        prior = counts / counts.sum()
    else:
        raise ValueError(f"unknown rule {rule!r}")
    n = k if k is not None else count_k(prior, min_share)
    top = np.argsort(-prior, kind="stable")[:n]
    dom = None
    if domain_probs is not None:
        dom = (w[:, None] * np.asarray(domain_probs, dtype=np.float64)).sum(0) / w.sum()
    return TaskEstimate(sorted(int(i) for i in top), prior, counts, k is None,
                        pick_domain(dom, min_domain_conf), dom, float(w.sum()))


@torch.no_grad()
def generic_scores(model: torch.nn.Module, batch: torch.Tensor,
                   domain_head: Mapping[str, torch.Tensor] | None = None,
                   chunk: int = 256) -> tuple[np.ndarray, np.ndarray | None]:
    """Class posteriors of the all-class generic model (n, N) and, with a head, domain
    posteriors (n, D): one forward for both."""
    probs, doms = [], []
    for i in range(0, len(batch), chunk):
        feats = pooled_features(model, batch[i:i + chunk])
        probs.append(model.fc(feats).float().softmax(1).cpu())
        if domain_head is not None:
            logits = feats.float() @ domain_head["weight"].T + domain_head["bias"]
            doms.append(logits.softmax(1).cpu())
    return torch.cat(probs).numpy(), (torch.cat(doms).numpy() if doms else None)
