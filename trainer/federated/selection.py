"""Hyper-parameters chosen per task on the participants' validation splits only.

Why a module of its own: the first FedCLIP benchmark chose learning rates once, by federating
the participants of the *first* leave-one-out task, and reused them for every task, so in three
of four tasks the held-out domain had taken part in the choice; rounds (8) and FedProx's mu were
never chosen at all (issue 15). Here every task (a held-out domain, or a 4-client setting) gets
its own choice:

- each candidate federates that task's participants (seed 0 split) for ``max_rounds`` rounds with
  no server-side evaluation, so the held-out client's data is never loaded;
- after every round Flower asks each participant to score the global weights on its **val**
  split; a candidate's score is the best round's mean over participants, and that round is the
  chosen number of rounds (early stopping on validation);
- learning rates come from a grid per feature kind; FedProx keeps FedAvg's chosen lr for the same
  task and chooses mu from its own grid, so both baselines get the same number of candidates.

The benchmark's jobs read their choices lazily (:func:`chosen`), because selection jobs run
earlier in the same Flower simulation and fill the table as they finish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def candidates(method: str, grids: dict[str, list[float]]) -> list[dict[str, Any]]:
    """The settings one method tries: lr from its kind's grid; FedProx: mu at FedAvg's lr."""
    if method == "fedprox":
        return [{"mu": mu, "lr_from": "fedavg"} for mu in grids["mu"]]
    kind = "embed" if method.startswith("fedclip") else "trunk"
    return [{"lr": lr} for lr in grids[kind]]


def val_curve(sink: dict[str, Any]) -> list[float]:
    """Participants' mean validation accuracy of the global weights after each round."""
    return [float(np.mean([m["val_acc"] for m in per.values()])) for per in sink["client_eval"]]


def record(table: dict[str, Any], task: str, method: str, setting: dict[str, Any],
           sink: dict[str, Any]) -> None:
    """Score a finished candidate; keep it in ``table`` if it is the task's best so far."""
    curve = val_curve(sink)
    best_round = int(np.argmax(curve)) + 1
    entry = {**setting, "lr": sink["meta"]["lr"], "mu": sink["meta"]["mu"],
             "rounds": best_round, "val": curve[best_round - 1], "curve": curve,
             "participants": sink["meta"]["participants"]}
    table.setdefault("_tried", {}).setdefault(f"{task}/{method}", []).append(entry)
    if f"{task}/{method}" not in table or entry["val"] > table[f"{task}/{method}"]["val"]:
        table[f"{task}/{method}"] = entry


def chosen(table: dict[str, Any] | None, task: str, method: str, key: str,
           default: Any) -> Callable[[], Any]:
    """A value read when its job starts: the task's choice, or ``default`` without selection."""
    def value() -> Any:
        if table is None:
            return default
        if f"{task}/{method}" not in table:
            raise RuntimeError(f"no selection finished for {task}/{method} before its run")
        return table[f"{task}/{method}"][key]
    return value


def resolve(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` with every lazy value (a callable from :func:`chosen`) evaluated."""
    return {k: v() if callable(v) else v for k, v in cfg.items()}
