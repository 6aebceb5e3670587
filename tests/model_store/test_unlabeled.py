"""model_store.unlabeled: the task of a batch of unlabeled images from its posteriors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model_store.resnet import build_resnet18
from model_store.unlabeled import count_k, em_prior, estimate_task, generic_scores, pick_domain


def _posteriors(prior: np.ndarray, n: int, noise: float, seed: int = 0):
    """Images drawn from ``prior``; each image's likelihood favours its class over a noisy
    background; posteriors by Bayes with the uniform training prior (what a classifier gives)."""
    rng = np.random.default_rng(seed)
    labels = rng.choice(len(prior), size=n, p=prior)
    like = rng.random((n, len(prior))) * noise
    like[np.arange(n), labels] += 1.0
    return like / like.sum(1, keepdims=True), labels


def test_em_recovers_the_batch_prior_where_mean_posteriors_are_biased():
    truth = np.array([0.5, 0.3, 0.2, 0, 0, 0, 0, 0])
    probs, _ = _posteriors(truth, 400, noise=0.8)
    em, soft = em_prior(probs), probs.mean(0)
    assert np.abs(em - truth).sum() < 0.5 * np.abs(soft - truth).sum()
    assert em[3:].sum() < 0.05 < soft[3:].sum()  # absent classes lose their mass


def test_k_is_counted_from_the_prior_and_given_k_wins():
    truth = np.array([0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0, 0, 0])
    probs, _ = _posteriors(truth, 300, noise=0.6, seed=1)
    est = estimate_task(probs, min_share=0.05)
    assert est.classes == [0, 1, 2, 3] and est.k_estimated
    fixed = estimate_task(probs, k=2)
    assert len(fixed.classes) == 2 and not fixed.k_estimated
    assert count_k(np.array([0.9, 0.1, 0.0]), min_share=0.5) == 2  # never fewer than two


def test_weights_let_a_stream_forget_old_images():
    old, _ = _posteriors(np.array([0.5, 0.5, 0, 0]), 100, noise=0.3, seed=2)
    new, _ = _posteriors(np.array([0, 0, 0.5, 0.5]), 40, noise=0.3, seed=3)
    probs = np.concatenate([old, new])
    recent = np.concatenate([np.full(100, 0.01), np.ones(40)])
    assert estimate_task(probs, k=2).classes == [0, 1]  # unweighted: the old scene dominates
    assert estimate_task(probs, k=2, weights=recent).classes == [2, 3]


def test_the_paper_rule_counts_argmaxes():
    probs = np.array([[0.6, 0.4, 0.0], [0.6, 0.4, 0.0], [0.1, 0.2, 0.7]])
    est = estimate_task(probs, k=2, rule="count")
    assert est.classes == [0, 2] and est.counts.tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="unknown rule"):
        estimate_task(probs, k=2, rule="vote")


def test_a_domain_needs_confidence():
    assert pick_domain(np.array([0.7, 0.2, 0.1]), 0.6) == 0
    assert pick_domain(np.array([0.5, 0.4, 0.1]), 0.6) is None
    assert pick_domain(None, 0.6) is None


def test_one_forward_gives_class_and_domain_posteriors():
    torch.manual_seed(0)
    model = build_resnet18(5).eval()
    head = {"weight": torch.randn(3, 512), "bias": torch.zeros(3)}
    x = torch.randn(6, 3, 32, 32)
    probs, doms = generic_scores(model, x, head, chunk=4)
    with torch.no_grad():
        torch.testing.assert_close(torch.from_numpy(probs), model(x).softmax(1))
    assert doms.shape == (6, 3) and np.allclose(doms.sum(1), 1, atol=1e-5)
    assert generic_scores(model, x)[1] is None
