"""A linear domain classifier on the generic model's pooled features, saved in the artifact.

WHY: images-only personalization (issue 18) must say which domain a batch of unlabeled images
comes from (a camera sees photos, a scanner sees sketches), and the domain-aware task embedding
needs it. The generic (stage-1) model's features already separate rendering styles; a
multinomial logistic regression on them costs one matrix product at serving time, in the same
forward that pseudo-labels the classes. Weight decay is chosen on the validation split.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from model_store.resnet import pooled_features
from trainer.taper.data import Split
from trainer.taper.nets import build_net

DECAYS = (1e-4, 1e-3, 1e-2)


@torch.no_grad()
def split_features(model: torch.nn.Module, split: Split, idx: np.ndarray,
                   batch: int = 256) -> torch.Tensor:
    """Pooled features of ``split`` images ``idx`` (eval mode, on the CPU)."""
    dev = next(model.parameters()).device
    out = [pooled_features(model, split.batch(torch.from_numpy(idx[i:i + batch])).to(dev)).cpu()
           for i in range(0, len(idx), batch)]
    return torch.cat(out)


def balanced(split: Split, per_domain: int, seed: int) -> np.ndarray:
    """Up to ``per_domain`` random image indices of every domain in ``split``."""
    rng, d = np.random.default_rng(seed), split.d.numpy()
    return np.concatenate([rng.permutation(np.flatnonzero(d == k))[:per_domain]
                           for k in np.unique(d)])


def fit_logistic(x: torch.Tensor, y: torch.Tensor, classes: int, decay: float,
                 steps: int = 200) -> dict[str, torch.Tensor]:
    """Multinomial logistic regression by full-batch L-BFGS (features standardised inside,
    folded back into ``weight``/``bias`` so serving is one affine map on raw features)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    w = torch.zeros(classes, x.shape[1], requires_grad=True)
    b = torch.zeros(classes, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(z @ w.T + b, y) + decay * (w ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    weight = (w / sd).detach()
    return {"weight": weight, "bias": (b - weight @ mu).detach()}


def batch_accuracy(probs: torch.Tensor, y: torch.Tensor, size: int, seed: int) -> float:
    """Accuracy of the batch-mean domain over random same-domain batches of ``size`` images."""
    rng, hits, total = np.random.default_rng(seed), 0, 0
    for k in torch.unique(y).tolist():
        pool = np.flatnonzero(y.numpy() == k)
        for _ in range(50):
            pick = rng.choice(pool, size=min(size, len(pool)), replace=False)
            hits += int(probs[pick].mean(0).argmax()) == k
            total += 1
    return hits / max(total, 1)


def fit_domain_head(generic: dict[str, torch.Tensor], width: int, train: Split, val: Split,
                    num_domains: int, per_domain: int = 600,
                    seed: int = 0) -> tuple[dict, dict[str, Any]]:
    """The head (``weight``, ``bias``; one row per catalogue domain, even one without training
    images) with the val-chosen decay, and its val figures."""
    model = build_net(int(generic["fc.weight"].shape[0]), width)
    model.load_state_dict(generic)
    model.eval()
    tr, va = balanced(train, per_domain, seed), balanced(val, per_domain, seed)
    xt, xv = split_features(model, train, tr), split_features(model, val, va)
    yt, yv = train.d[torch.from_numpy(tr)], val.d[torch.from_numpy(va)]
    classes = num_domains
    scored = []
    for decay in DECAYS:
        head = fit_logistic(xt, yt, classes, decay)
        acc = float(((xv @ head["weight"].T + head["bias"]).argmax(1) == yv).float().mean())
        scored.append((acc, -decay, head))
    acc, neg_decay, head = max(scored, key=lambda s: (s[0], s[1]))
    probs = (xv @ head["weight"].T + head["bias"]).softmax(1)
    return head, {"val_acc": round(acc, 4), "val_acc_batch8": round(
        batch_accuracy(probs, yv, 8, seed), 4), "weight_decay": -neg_decay,
        "per_domain": per_domain}
