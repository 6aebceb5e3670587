"""Partial participation drawn by partition, not by node id (trainer.federated.sampling): the
Ray engine and a SuperLink give nodes random ids in no order, so a seeded draw over node ids
named different clients in every run of one seed."""

from __future__ import annotations

import random

import pytest
from flwr.app import Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp.strategy.strategy_utils import sample_nodes

from trainer.federated.inline import InlineGrid
from trainer.federated.sampling import PartitionOrderedGrid, answer_partition

RAY_LIKE = [907, 15, 3_000_001, 44, 12, 999]  # partition i's id: random, listed in id order


def _app(answers: bool = True) -> ClientApp:
    app = ClientApp()
    if answers:
        answer_partition(app)

    @app.train()
    def train(msg: Message, context) -> Message:
        pid = int(context.node_config["partition-id"])
        return Message(RecordDict({"metrics": MetricRecord({"pid": pid})}), reply_to=msg)

    return app


def _draws(grid, partition_of: dict[int, int], seed: int = 7) -> list[list[int]]:
    random.seed(seed)
    return [sorted(partition_of[n] for n in sample_nodes(grid, 6, 3)[0]) for _ in range(4)]


def test_a_seed_draws_the_same_partitions_whatever_ids_the_nodes_have():
    plain = PartitionOrderedGrid(InlineGrid(_app(), 6), timeout=5)
    shuffled = PartitionOrderedGrid(InlineGrid(_app(), 6, node_ids=RAY_LIKE), timeout=5)
    assert shuffled.partition_of == {nid: i for i, nid in enumerate(RAY_LIKE)}
    assert _draws(plain, plain.partition_of) == _draws(shuffled, shuffled.partition_of)


def test_without_the_ordering_the_same_seed_draws_other_clients():
    """The control: the failure the ordering removes is real for these ids."""
    plain, raw = InlineGrid(_app(), 6), InlineGrid(_app(), 6, node_ids=RAY_LIKE)
    by_pid = {nid: nid - 2 for nid in plain.get_node_ids()}
    assert _draws(plain, by_pid) != _draws(raw, {nid: i for i, nid in enumerate(RAY_LIKE)})


def test_the_ordered_grid_still_delivers_messages():
    grid = PartitionOrderedGrid(InlineGrid(_app(), 3, node_ids=[40, 9, 17]), timeout=5)
    msgs = [Message(RecordDict({}), dst_node_id=n, message_type="train")
            for n in grid.get_node_ids()]
    assert [int(r.content["metrics"]["pid"]) for r in grid.send_and_receive(msgs)] == [0, 1, 2]


def test_a_client_app_that_cannot_say_its_partition_is_a_clear_error():
    with pytest.raises(RuntimeError, match="answer_partition"):
        PartitionOrderedGrid(InlineGrid(_app(answers=False), 2), timeout=5)


def test_bad_node_ids_are_refused():
    with pytest.raises(ValueError, match="distinct node ids"):
        InlineGrid(_app(), 3, node_ids=[5, 5, 6])


class _Late(InlineGrid):
    """Nodes that come online only after the server has started, as under Ray."""

    def __init__(self, *args, empty_calls: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.empty_calls = empty_calls

    def get_node_ids(self) -> list[int]:
        self.empty_calls -= 1
        return [] if self.empty_calls >= 0 else super().get_node_ids()


def test_the_server_waits_for_nodes_that_come_online_late():
    grid = PartitionOrderedGrid(_Late(_app(), 3, node_ids=[40, 9, 17], empty_calls=2),
                                timeout=5, num_nodes=3)
    assert grid.get_node_ids() == [40, 9, 17]


def test_nodes_that_never_come_online_are_a_clear_error():
    with pytest.raises(RuntimeError, match="0 of 3 nodes came online"):
        PartitionOrderedGrid(_Late(_app(), 3, empty_calls=10**6), timeout=0.5, num_nodes=3)
