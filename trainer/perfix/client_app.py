"""Flower ClientApp of prefix personalization: local rounds that keep the personal part, and
per-client evaluation of global + personal. Thin, as FedCLIP's and the anytime one: the ML is
in :mod:`trainer.perfix.task`; a node finds its data by ``partition-id``.

The personal part lives in the node's ``context.state`` (across rounds, keyed by federation) and
is never put in a training reply: those carry :func:`trainer.perfix.task.exchanged` only. The
one exception is the ``personalize`` message a server sends only to deploy the federation.
"""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from trainer.federated.sampling import answer_partition
from trainer.federated.task import client_seed, load_client, state_key
from trainer.perfix.task import (
    accuracy,
    build_model,
    exchanged,
    local_state,
    scored_model,
    train_local,
)


def _setup(msg: Message, context: Context, fed_dir: str | None):
    """This node's data and a model holding the server's weights plus its own local part."""
    torch.set_num_threads(1)  # several simulated clients share a small machine
    cfg = msg.content.config_records.get("config", {})
    fed_dir = str(cfg.get("fed-dir") or fed_dir or context.node_config.get("fed-dir")
                  or context.run_config["fed-dir"])
    pid = int(context.node_config["partition-id"])
    model = build_model(fed_dir)
    model.load_state_dict(msg.content["arrays"].to_torch_state_dict(), strict=False)
    local = state_key("local", fed_dir)
    if local in context.state.array_records:
        model.load_state_dict(context.state[local].to_torch_state_dict(), strict=False)
    return load_client(fed_dir, pid), model, pid, {**dict(cfg), "fed-dir": fed_dir}


def make_client_app(fed_dir: str | None = None) -> ClientApp:
    """The ClientApp; ``fed_dir`` overrides the run config's ``fed-dir``."""
    app = ClientApp()
    answer_partition(app)  # lets the server sample by partition (repeatable under Ray)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        """One round: train by the method's schedule, keep the local part, send the rest."""
        data, model, pid, cfg = _setup(msg, context, fed_dir)
        key = state_key("rounds", cfg["fed-dir"])
        rounds = int(context.state[key]["n"]) + 1 if key in context.state else 1
        context.state[key] = MetricRecord({"n": rounds})
        cfg["seed"] = client_seed(cfg.get("seed", 0), rounds, data.num("train"))
        loss = train_local(model, data, cfg)
        context.state[state_key("local", cfg["fed-dir"])] = ArrayRecord(local_state(model))
        metrics = {"num-examples": data.num("train"), "unit": 1, "train_loss": loss,
                   "partition-id": pid}
        return Message(content=RecordDict({"arrays": ArrayRecord(exchanged(model)),
                                           "metrics": MetricRecord(metrics)}), reply_to=msg)

    @app.train("personalize")
    def hand_over(msg: Message, context: Context) -> Message:
        """After the last round, when the operator deploys the federation (``--save``): send
        this client's local part so the service can serve its model. Nothing is trained; this
        is the one message in which local tensors leave the client, and only on request."""
        data, model, pid, _ = _setup(msg, context, fed_dir)
        metrics = {"num-examples": data.num("train"), "unit": 1, "partition-id": pid,
                   "val_acc": accuracy(model, data, "val"),
                   "test_acc": accuracy(model, data, "test")}
        return Message(content=RecordDict({"arrays": ArrayRecord(local_state(model)),
                                           "metrics": MetricRecord(metrics)}), reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        """Val and test accuracy of the model this client would use (global + its part)."""
        data, model, pid, cfg = _setup(msg, context, fed_dir)
        scored = scored_model(model, data, cfg)
        metrics = {"num-examples": data.num("test"), "unit": 1, "partition-id": pid,
                   "val_acc": accuracy(scored, data, "val"),
                   "test_acc": accuracy(scored, data, "test")}
        return Message(content=RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app


app = make_client_app()
