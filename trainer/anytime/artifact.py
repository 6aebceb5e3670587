"""Write one anytime federation as the ``anytime`` artifact the service serves by client ID
(global weights, each client's personalised weights, depth budgets, per-exit val accuracy and
FLOPs). Kept apart from :mod:`trainer.anytime.experiment` so the benchmark driver stays about
running and scoring federations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _or_none(value: float) -> float | None:
    """JSON has no NaN: an exit beyond a client's budget was not scored."""
    return None if math.isnan(value) else float(value)


def save_run(bench: dict[str, Any], clients: list, row: dict[str, Any],
             sink: dict[str, Any], model_cfg: dict[str, Any]) -> str:
    """Write one federation (first seed of ``--save``) as the ``anytime`` artifact the service
    serves by client ID; returns its version. ``model_cfg``: ``method`` (the
    :mod:`model_store.anytime` kind), ``adapter_rank``, ``depth``."""
    from model_store.anytime_artifact import save_anytime

    args, depth = bench["args"], bench["depth"]
    names = [c.name for c in clients]
    ref = save_anytime(
        args.store, model_cfg=model_cfg,
        class_names=bench["class_names"], foundation=bench["source"],
        global_state=sink["global_state"],
        client_states={names[i]: rec["state"] for i, rec in sink["personal"].items()},
        tiers=dict(zip(names, row["tiers"], strict=True)),
        exit_val_acc=exit_val_accuracies(names, sink, depth),
        flops=bench["flops"][row["method"]],
        metadata={"benchmark_row": dict(row), "command": getattr(args, "command", None)})
    return ref.version


def exit_val_accuracies(names: list[str], sink: dict[str, Any],
                        depth: int) -> dict[str, list[float | None]]:
    """Validation accuracy per exit of the models the artifact serves: each client's
    personalised model on its own val split, and ``global``: the global model's, averaged over
    the clients whose budget reaches the exit (None where nobody measured it)."""
    final, personal = sink["client_eval"][-1], sink["personal"]
    out: dict[str, list[float | None]] = {}
    for i, name in enumerate(names):
        rec = personal[i]["metrics"] if i in personal else final[i]
        out[name] = [_or_none(rec.get(f"val_acc_exit{e}")) for e in range(1, depth + 1)]
    out["global"] = [_or_none(float(np.nanmean(col)) if not np.isnan(col).all() else None)
                     for col in ([float(final[i][f"val_acc_exit{e}"]) for i in final]
                                 for e in range(1, depth + 1))]  # fmt: skip
    return out
