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
        seen = context.state.config_records.get("seen", ConfigRecord({"n": 0}))
        seen["n"] = int(seen["n"]) + 1
        context.state["seen"] = seen
        if pid == 1:  # after changing its state: the grid must undo that, as Ray does
            raise RuntimeError(f"client 1 is broken (seen {int(seen['n'])})")
        if pid == 3:
            return Message(RecordDict({"metrics": MetricRecord({"pid": pid})}), dst_node_id=1,
                           message_type="train")  # not a reply: Flower would drop it
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
    torch.set_num_threads(2)  # the apps set 1: the grid must give ours back
    try:
        grid = InlineGrid(_app(), num_nodes=4)
        _round(grid)
        replies = _round(grid)
        assert len(replies) == 4 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    ok = sorted((int(r.content["metrics"]["pid"]), int(r.content["metrics"]["n"]))
                for r in replies if not r.has_error())
    assert ok == [(0, 2), (2, 2)]  # each node's state survived the first round
    broken, invalid = sorted((r for r in replies if r.has_error()),
                             key=lambda r: r.metadata.src_node_id)
    assert "client 1 is broken (seen 1)" in broken.error.reason  # its failed round undone
    assert "invalid reply" in invalid.error.reason
    assert {broken.metadata.src_node_id, invalid.metadata.src_node_id} == {3, 5}
    assert all(int(r.content["metrics"]["parts"]) == 4 for r in replies if not r.has_error())
    assert all(r.metadata.reply_to_message_id for r in replies)
    assert set(grid.get_node_ids()) == {2, 3, 4, 5}  # never 0 or the SuperLink's 1


def test_unknown_nodes_and_empty_grids_are_refused():
    with pytest.raises(ValueError, match="at least one node"):
        InlineGrid(_app(), num_nodes=0)
    with pytest.raises(ValueError, match="no node 9"):
        InlineGrid(_app(), num_nodes=2).send_and_receive(
            [Message(RecordDict({}), dst_node_id=9, message_type="train")])
    with pytest.raises(ValueError, match="invalid message.*SuperLink"):
        InlineGrid(_app(), num_nodes=2).send_and_receive(
            [Message(RecordDict({}), dst_node_id=1, message_type="train")])
