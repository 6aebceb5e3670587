"""Flower ClientApp: local training, evaluation and personalisation on one client's features.

Thin by design (Flower examples' layout): the work is in :mod:`trainer.federated.task`. A node
finds its data through ``context.node_config["partition-id"]`` (set by the simulation engine, or
by ``flower-supernode --node-config "partition-id=0"`` on a real deployment) and the federation
directory in the message config's ``fed-dir`` (else the run config's), so the same app runs under
``run_simulation`` and on SuperLink/SuperNodes, and one simulation can run several federations
(methods, seeds, held-out domains) back to back without restarting Ray.

Per-client state lives in ``context.state`` (it persists across rounds for a node): the number
of rounds this client took part in and, after the final ``train.personalize`` message, its
personalised weights, which is what a deployed client would keep serving locally.
"""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from trainer.federated.sampling import answer_partition
from trainer.federated.task import (
    accuracy,
    build_model,
    client_seed,
    load_client,
    personalize,
    train_local,
)


def _setup(msg: Message, context: Context, fed_dir: str | None):
    """Load this node's data and a model holding the server's weights."""
    torch.set_num_threads(1)  # several simulated clients share a 2-core machine
    cfg = msg.content.config_records.get("config", {})
    fed_dir = str(cfg.get("fed-dir") or fed_dir or context.node_config.get("fed-dir")
                  or context.run_config["fed-dir"])
    data = load_client(fed_dir, int(context.node_config["partition-id"]))
    model = build_model(fed_dir, data.arrays["x_train"].shape[1])
    state = msg.content["arrays"].to_torch_state_dict()
    model.load_state_dict(state, strict=False)
    return data, model, state


def _reply(msg: Message, model, metrics: dict) -> Message:
    content = RecordDict({"arrays": ArrayRecord(model.exchanged()),
                          "metrics": MetricRecord(metrics)})
    return Message(content=content, reply_to=msg)


def _count_round(context: Context) -> int:
    rec = context.state.config_records.get("client", ConfigRecord({"rounds": 0}))
    rec["rounds"] = int(rec["rounds"]) + 1
    context.state["client"] = rec
    return int(rec["rounds"])


def make_client_app(fed_dir: str | None = None) -> ClientApp:
    """The ClientApp; ``fed_dir`` overrides the run config's ``fed-dir`` (simulation)."""
    app = ClientApp()
    answer_partition(app)  # lets the server sample by partition (repeatable under Ray)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        """One FedAvg/FedProx round: start at the global weights, train, send them back."""
        data, model, state = _setup(msg, context, fed_dir)
        cfg = dict(msg.content["config"])
        rounds = _count_round(context)
        cfg["seed"] = client_seed(cfg.get("seed", 0), rounds, data.num("train"))
        loss = train_local(model, data, cfg, global_state=state)
        metrics = {"num-examples": data.num("train"), "unit": 1, "train_loss": loss}
        return _reply(msg, model, metrics)

    @app.train("personalize")
    def train_personalize(msg: Message, context: Context) -> Message:
        """After federation: fine-tune locally, select on val, keep the result in context.state."""
        data, model, _ = _setup(msg, context, fed_dir)
        best = personalize(model, data, dict(msg.content["config"]))
        context.state["personal"] = ArrayRecord(best["state"])
        metrics = {"num-examples": data.num("train"), "unit": 1, "best_epoch": best["epoch"],
                   "val_acc": best["val_acc"], "test_acc": best["test_acc"],
                   "partition-id": int(context.node_config["partition-id"])}
        return _reply(msg, model, metrics)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        """Score the received (global) weights on this client's val and test splits."""
        data, model, _ = _setup(msg, context, fed_dir)
        metrics = {"num-examples": data.num("test"), "unit": 1,
                   "val_acc": accuracy(model, *data.split("val")),
                   "test_acc": accuracy(model, *data.split("test")),
                   "partition-id": int(context.node_config["partition-id"])}
        return Message(content=RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app


app = make_client_app()
