"""A cross-fitted personalisation gate: decide on every labelled image a client holds.

The val gate (:func:`trainer.federated.task.best_local_epoch`) judges a personalised epoch on
the client's val split, a few dozen images; at stop 44 one client per method still lost on
test at ``min_z`` 1.64, because a gain of one or two val images is noise. Here the client's
train and val images are pooled and cut into ``folds``; for each fold the received model is
fine-tuned on the other folds and scored on that one, so every image is held out once and the
paired gain of each epoch count over the received model is measured on all of them (about
five times the val split). The kept epoch count passes the same rule (``keeps``: best mean
gain, above ``min_z`` standard errors); the model is then fine-tuned on the whole pool for
that many epochs. K-fold model selection is textbook (scikit-learn's ``cross_val_score``);
it is written here because the folds must fine-tune a federated model's own parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from trainer.federated.task import ClientData, gated_epoch, paired_z, signed_z


def pooled(data: ClientData) -> ClientData:
    """``data`` with train and val as one training split (test untouched, val empty)."""
    arrays = dict(data.arrays)
    for key in ("x", "y"):
        arrays[f"{key}_train"] = np.concatenate([data.arrays[f"{key}_train"],
                                                 data.arrays[f"{key}_val"]])  # fmt: skip
        arrays[f"{key}_val"] = data.arrays[f"{key}_val"][:0]
    return ClientData(data.name, arrays)


def fold_ids(n: int, folds: int, seed: int) -> np.ndarray:
    """A fold index per pooled example, shuffled by ``seed``, sizes differing by at most one."""
    if folds < 2 or folds > n:
        raise ValueError(f"folds must be in 2..{n} for {n} examples, got {folds}")
    ids = np.arange(n) % folds
    return np.random.default_rng(seed).permutation(ids)


def _split(data: ClientData, held: np.ndarray) -> ClientData:
    """Train on the pooled examples outside ``held``, validate on those inside it."""
    x, y = data.arrays["x_train"], data.arrays["y_train"]
    return ClientData(data.name, {**data.arrays, "x_train": x[~held], "y_train": y[~held],
                                  "x_val": x[held], "y_val": y[held]})


def crossfit_curve(data: ClientData, epochs: int, folds: int, seed: int,
                   restart: Callable[[], None],
                   train_epoch: Callable[[ClientData, int], Any],
                   items: Callable[[ClientData], torch.Tensor],
                   reduce: Callable[[torch.Tensor], torch.Tensor] = lambda h: h.mean(1)
                   ) -> dict[str, list]:  # fmt: skip
    """Per epoch count 0..``epochs``: the mean paired gain over the received model on every
    pooled example held out once (``val``), its z, and the held-out accuracy per exit
    (``exit_acc``, what serving reports once val has been trained on). ``restart`` reloads
    the received model, ``train_epoch(split, epoch)`` fine-tunes one epoch on ``split``'s
    train, ``items(split)`` scores ``split``'s val per example and exit, (n, exits);
    ``reduce`` makes that one score per example (the mean over exits, or the last)."""
    pool = pooled(data)
    n = pool.num("train")
    if n < 2:  # nothing to hold out
        raise ValueError(f"cross-fitting needs at least 2 train+val examples, got {n}")
    folds = min(folds, n)  # a client smaller than the folds: leave-one-out
    ids = fold_ids(n, folds, seed)
    hits: list[list[torch.Tensor]] = [[] for _ in range(epochs + 1)]
    for f in range(folds):
        split = _split(pool, ids == f)
        restart()
        hits[0].append(items(split))
        for epoch in range(1, epochs + 1):
            train_epoch(split, epoch)
            hits[epoch].append(items(split))
    base = reduce(torch.cat(hits[0]))
    fold_of = torch.cat([torch.full((len(h),), f) for f, h in enumerate(hits[0])])
    curve: dict[str, list] = {"val": [], "z": [], "z_fold": [], "exit_acc": []}
    for h in map(torch.cat, hits):
        scores = reduce(h)
        gain, z = paired_z(scores, base)
        curve["val"].append(gain)
        curve["z"].append(z)
        curve["z_fold"].append(fold_clustered_z(scores - base, fold_of))
        curve["exit_acc"].append(h.mean(0).tolist())
    return curve


def fold_clustered_z(gain: torch.Tensor, fold_of: torch.Tensor) -> float:
    """The mean of per-example ``gain`` in cluster-robust standard errors, one cluster per fold.

    The pooled z (:func:`paired_z`) treats every held-out example as independent, but the
    examples of one fold are scored by one fine-tuned model, so a lucky fold moves all of them
    together. The cluster-robust (CR1) variance sums each fold's residual total, squared, with
    the small-sample factor F/(F-1); with F folds it behaves like a t with F-1 degrees of
    freedom (5 folds: one-sided 95 % at 2.13). Written here rather than imported because
    statsmodels is not a dependency and the estimator is four lines. With no spread: +inf for
    a gain, 0 otherwise, as :func:`paired_z`.
    """
    d = gain.double().flatten()
    folds = int(fold_of.max()) + 1 if d.numel() else 0
    if folds < 2:
        return 0.0
    totals = torch.zeros(folds, dtype=d.dtype).index_add_(0, fold_of.long(), d - d.mean())
    var = folds / (folds - 1) * float((totals**2).sum()) / d.numel() ** 2
    mean = float(d.mean())
    return mean / var**0.5 if var > 0 else (math.inf if mean > 0 else 0.0)


def crossfit_personalize(data: ClientData, epochs: int, folds: int, seed: int, min_z: float,
                         restart: Callable[[], None],
                         train_epoch: Callable[[ClientData, int], Any],
                         items: Callable[[ClientData], torch.Tensor],
                         snapshot: Callable[[], dict[str, torch.Tensor]],
                         load: Callable[[dict[str, torch.Tensor]], None],
                         test_items: Callable[[], torch.Tensor],
                         reduce: Callable[[torch.Tensor], torch.Tensor] = lambda h: h.mean(1)
                         ) -> dict[str, Any]:  # fmt: skip
    """Choose the epoch count by :func:`crossfit_curve` and the ``keeps`` rule at ``min_z``,
    then fine-tune on the whole pool, keeping that epoch's weights. ``test`` per epoch of the
    pooled fine-tune is recorded for analysis only (so reports can replay other gates).

    Returns ``{"epoch", "state", "curve"}``; ``curve`` has ``val`` (mean gain), ``z``,
    ``z_fold`` (:func:`fold_clustered_z`, recorded so reports can replay it), ``test``.
    """
    curve = crossfit_curve(data, epochs, folds, seed, restart, train_epoch, items, reduce)
    chosen = gated_epoch(curve, min_z)
    restart()
    pool = pooled(data)
    test0, state = test_items(), snapshot()
    curve["test"], curve["test_z"] = [float(test0.double().mean())], [0.0]
    for epoch in range(1, epochs + 1):
        train_epoch(pool, epoch)
        items = test_items()
        curve["test"].append(float(items.double().mean()))
        curve["test_z"].append(signed_z(items, test0))
        if epoch == chosen:
            state = snapshot()
    load(state)
    return {"epoch": chosen, "state": state, "curve": curve}
