"""Flower ClientApp of anytime federated learning: local rounds, per-exit evaluation,
personalisation. Thin, as FedCLIP's (:mod:`trainer.federated.client_app`): the ML is in
:mod:`trainer.anytime.task`; a node finds its data and depth budget by ``partition-id``.

A client never runs past its budget ``L_i``: training draws exits from ``1..L_i`` and
evaluation scores exits ``1..L_i`` only (what the multi-tier test counts).
"""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from trainer.anytime.task import (
    build_model,
    exchanged,
    exit_accuracies,
    load,
    personalize,
    to_device,
)
from trainer.anytime.task import train_local as train_anytime
from trainer.federated.sampling import answer_partition
from trainer.federated.task import client_seed, state_key


def _setup(msg: Message, context: Context, fed_dir: str | None):
    """This node's data, budget, a model holding the server's weights, and the federation's
    folder (which keys the node's state)."""
    torch.set_num_threads(1)  # several simulated clients share a small machine
    cfg = msg.content.config_records.get("config", {})
    fed_dir = str(cfg.get("fed-dir") or fed_dir or context.node_config.get("fed-dir")
                  or context.run_config["fed-dir"])
    pid = int(context.node_config["partition-id"])
    data, tier = load(fed_dir, pid)
    model = build_model(fed_dir)
    model.load_state_dict(msg.content["arrays"].to_torch_state_dict(), strict=False)
    return data, tier, to_device(model, cfg.get("device")), pid, fed_dir


def _count_round(context: Context, fed_dir: str) -> int:
    key = state_key("client", fed_dir)
    rec = context.state.config_records.get(key, ConfigRecord({"rounds": 0}))
    rec["rounds"] = int(rec["rounds"]) + 1
    context.state[key] = rec
    return int(rec["rounds"])


def _reply(msg: Message, model, metrics: dict) -> Message:
    content = RecordDict({"arrays": ArrayRecord(exchanged(model)),
                          "metrics": MetricRecord(metrics)})
    return Message(content=content, reply_to=msg)


CURVE_KEYS = ("val", "z", "z_fold", "test", "test_z")


def _curves(prefix: str, curve: list[dict[str, float]] | dict[str, list[float]]) -> dict:
    """A personalisation record as flat metric lists: ``{prefix}_val``, ``_z``, ``_test``,
    ``_test_z`` (the val gate records a list of per-epoch dicts, the cross-fitted one lists
    per key, with its fold-clustered ``_z_fold`` too)."""
    if isinstance(curve, dict):
        return {f"{prefix}_{k}": list(curve[k]) for k in CURVE_KEYS if k in curve}  # no exit_acc
    return {f"{prefix}_{k}": [c[k] for c in curve] for k in CURVE_KEYS if k in curve[0]}



def make_client_app(fed_dir: str | None = None) -> ClientApp:
    """The ClientApp; ``fed_dir`` overrides the run config's ``fed-dir``."""
    app = ClientApp()
    answer_partition(app)  # lets the server sample by partition (repeatable under Ray)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        """One FedAvg round within this client's depth budget."""
        data, tier, model, _, fed = _setup(msg, context, fed_dir)
        cfg = dict(msg.content["config"])
        cfg["seed"] = client_seed(cfg.get("seed", 0), _count_round(context, fed),
                                  data.num("train"))
        loss = train_anytime(model, data, tier, cfg)
        return _reply(msg, model, {"num-examples": data.num("train"), "unit": 1,
                                   "train_loss": loss, "deepest_block": model.deepest_run,
                                   "partition-id": int(context.node_config["partition-id"])})

    @app.train("personalize")
    def train_personalize(msg: Message, context: Context) -> Message:
        """Fine-tune locally (client token or all), select the epoch on val, keep it."""
        data, tier, model, pid, fed = _setup(msg, context, fed_dir)
        best = personalize(model, data, tier, dict(msg.content["config"]))
        context.state[state_key("personal", fed)] = ArrayRecord(best["state"])
        metrics = {"num-examples": data.num("train"), "unit": 1, "best_epoch": best["epoch"],
                   "val_acc": best["val_acc"], "test_acc": best["test_acc"], "partition-id": pid,
                   **_curves("curve", best["curve"])}
        if "val_gate" in best:  # cross-fitted: the val gate's record rides along
            metrics |= {"valgate_epoch": best["val_gate"]["epoch"],
                        **_curves("valgate", best["val_gate"]["curve"])}
        accs = exit_accuracies(model, *data.split("val"), tier) if "val_gate" not in best \
            else best["curve"]["exit_acc"][best["epoch"]]  # cross-fitted: val was trained on
        for e in range(1, model.depth + 1):  # what serving reports per exit (NaN: past L_i)
            metrics[f"val_acc_exit{e}"] = accs[e - 1] if e <= tier else float("nan")
        return _reply(msg, model, metrics)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        """Per-exit val/test accuracy of the global weights, exits 1..L_i only."""
        data, tier, model, pid, _ = _setup(msg, context, fed_dir)
        metrics = {"num-examples": data.num("test"), "unit": 1, "partition-id": pid,
                   "tier": tier}
        for split in ("val", "test"):  # every client sends the same keys (Flower requires it):
            accs = exit_accuracies(model, *data.split(split), tier)  # NaN = beyond the budget
            for e in range(1, model.depth + 1):
                metrics[f"{split}_acc_exit{e}"] = accs[e - 1] if e <= tier else float("nan")
        metrics["deepest_block"] = model.deepest_run
        return Message(content=RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app


app = make_client_app()
