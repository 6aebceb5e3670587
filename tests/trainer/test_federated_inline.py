"""The in-process Flower grid (trainer.federated.inline): what a ClientApp sees of its node,
and failures reported as the Ray engine reports them. The apps' results under it are compared
with Ray's in tests/trainer/test_anytime_flower.py."""

from __future__ import annotations

import pytest
import torch
from flwr.app import ConfigRecord, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from trainer.federated.inline import InlineGrid


def _app() -> ClientApp:
    app = ClientApp()

    @app.train()
    def train(msg: Message, context) -> Message:
        torch.set_num_threads(1)  # as the real ClientApps do in their worker
        pid = int(context.node_config["partition-id"])
        if pid == 1:
            raise RuntimeError("client 1 is broken")
        seen = context.state.config_records.get("seen", ConfigRecord({"n": 0}))
        seen["n"] = int(seen["n"]) + 1
        context.state["seen"] = seen
        metrics = MetricRecord({"pid": pid, "n": int(seen["n"]),
                                "parts": int(context.node_config["num-partitions"])})
        return Message(RecordDict({"metrics": metrics}), reply_to=msg)

    return app


def _round(grid: InlineGrid) -> list[Message]:
    msgs = [Message(RecordDict({}), dst_node_id=n, message_type="train")
            for n in grid.get_node_ids()]
    return grid.send_and_receive(msgs)


def test_nodes_keep_their_partition_and_state_and_failures_are_error_replies():
    threads = torch.get_num_threads()
    grid = InlineGrid(_app(), num_nodes=3)
    _round(grid)
    replies = _round(grid)
    assert len(replies) == 3 and torch.get_num_threads() == threads
    ok = sorted((int(r.content["metrics"]["pid"]), int(r.content["metrics"]["n"]))
                for r in replies if not r.has_error())
    assert ok == [(0, 2), (2, 2)]  # each node's state survived the first round
    (bad,) = [r for r in replies if r.has_error()]
    assert "client 1 is broken" in bad.error.reason and bad.metadata.src_node_id == 2
    assert all(int(r.content["metrics"]["parts"]) == 3 for r in replies if not r.has_error())
    assert all(r.metadata.reply_to_message_id for r in replies)


def test_unknown_nodes_and_empty_grids_are_refused():
    with pytest.raises(ValueError, match="at least one node"):
        InlineGrid(_app(), num_nodes=0)
    with pytest.raises(ValueError, match="no node 9"):
        InlineGrid(_app(), num_nodes=2).send_and_receive(
            [Message(RecordDict({}), dst_node_id=9, message_type="train")])
