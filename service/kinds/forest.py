"""A gradient-boosted forest as plain arrays: saved with safetensors, evaluated with numpy.

scikit-learn fits the forest (``HistGradientBoostingClassifier``, binary) but stores it only by
pickle, and weights here load with safetensors, never pickle. So the fitted trees are flattened
into arrays (:func:`Forest.from_sklearn`) and walked here, all trees at once, one level per step
(a request's 30 classes × 200 trees take well under a millisecond). ``Forest.predict`` equals
``predict_proba(X)[:, 1]`` of the fitted model (tested).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

_FIELDS = ("feature", "threshold", "left", "right", "leaf", "value", "missing_left", "roots",
           "baseline")


class Forest:
    """Trees in flat arrays: node ``i`` splits on ``feature[i] <= threshold[i]`` (missing
    values go ``missing_left``) to the absolute node ``left[i]``/``right[i]``; a leaf adds
    ``value[i]``; ``roots`` holds each tree's first node; the log-odds start at ``baseline``."""

    def __init__(self, arrays: dict[str, np.ndarray], n_features: int) -> None:
        missing = [f for f in _FIELDS if f not in arrays]
        if missing:
            raise ValueError(f"not a forest: no {', '.join(missing)}")
        self.a, self.n_features = arrays, n_features

    @classmethod
    def from_sklearn(cls, model: Any) -> Forest:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` over numeric
        features (its private ``_predictors``: no public API exposes the trees)."""
        if len(model.classes_) != 2 or any(t.nodes["is_categorical"].any()
                                           for (t,) in model._predictors):  # fmt: skip
            raise ValueError("only a binary forest over numeric features can be flattened")
        parts: dict[str, list[np.ndarray]] = {f: [] for f in _FIELDS[:-2]}
        roots, start = [], 0
        for (tree,) in model._predictors:  # one tree per iteration for a binary target
            nodes = tree.nodes
            roots.append(start)
            parts["feature"].append(nodes["feature_idx"].astype(np.int64))
            parts["threshold"].append(nodes["num_threshold"].astype(np.float64))
            parts["left"].append(nodes["left"].astype(np.int64) + start)
            parts["right"].append(nodes["right"].astype(np.int64) + start)
            parts["leaf"].append(nodes["is_leaf"].astype(np.uint8))
            parts["value"].append(nodes["value"].astype(np.float64))
            parts["missing_left"].append(nodes["missing_go_to_left"].astype(np.uint8))
            start += len(nodes)
        arrays = {f: np.concatenate(v) for f, v in parts.items()}
        arrays["roots"] = np.array(roots, dtype=np.int64)
        arrays["baseline"] = np.asarray(model._baseline_prediction, dtype=np.float64).ravel()
        return cls(arrays, int(model.n_features_in_))

    def save(self, path: Path, metadata: dict[str, str] | None = None) -> None:
        """Write the arrays with safetensors (``metadata``: what it was fitted on)."""
        save_file(self.a, str(path), metadata={**(metadata or {}),
                                               "n_features": str(self.n_features)})

    @classmethod
    def load(cls, path: Path) -> tuple[Forest, dict[str, str]]:
        """(the forest at ``path``, the file's metadata); ``ValueError`` when the file holds
        no forest."""
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            metadata = dict(f.metadata() or {})
        if not metadata.get("n_features", "").isdigit():
            raise ValueError(f"{path} is no forest: its metadata has no n_features")
        return cls(load_file(str(path)), int(metadata["n_features"])), metadata

    def predict(self, x: np.ndarray) -> np.ndarray:
        """P(positive) per row of ``x`` (rows, n_features)."""
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"expected (rows, {self.n_features}) features, got {x.shape}")
        a, rows = self.a, np.arange(len(x))[:, None]
        node = np.broadcast_to(a["roots"], (len(x), len(a["roots"]))).copy()
        while not a["leaf"][node].all():
            value = x[rows, a["feature"][node]]
            left = np.where(np.isnan(value), a["missing_left"][node] == 1,
                            value <= a["threshold"][node])
            step = np.where(left, a["left"][node], a["right"][node])
            node = np.where(a["leaf"][node] == 1, node, step)
        raw = a["baseline"][0] + a["value"][node].sum(axis=1)
        return 1.0 / (1.0 + np.exp(-raw))
