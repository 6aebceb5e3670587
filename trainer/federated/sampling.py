"""Repeatable partial participation, whatever ids the nodes were given.

Flower samples a round's participants with ``random.sample(list(grid.get_node_ids()), k)``
(``flwr.serverapp.strategy.strategy_utils.sample_nodes``). Seeding ``random`` (as
:mod:`trainer.federated.server_app` does per job) fixes which *positions* are drawn, but the
Ray engine and a SuperLink give nodes random ids and return them as a ``set``, so the same
positions name different clients in every run (stop 44 measured ~3 points between two runs of
one seed). Here the server first asks every node for its ``partition-id`` (a ``query.partition``
message that every Tailor ClientApp answers, see :func:`answer_partition`) and then lists the
nodes in partition order, so a seed draws the same clients on Ray, on a deployment and on the
in-process grid. It costs one small message per node per job.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from flwr.app import Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid

QUERY = "query.partition"


def answer_partition(app: ClientApp) -> None:
    """Register the handler that tells the server this node's ``partition-id``."""

    @app.query("partition")
    def partition(msg: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"])
        return Message(RecordDict({"metrics": MetricRecord({"partition-id": pid})}),
                       reply_to=msg)


def _wait_for(grid: Grid, num_nodes: int, timeout: float) -> list[int]:
    end = time.monotonic() + timeout
    while len(nodes := list(grid.get_node_ids())) < num_nodes:
        if time.monotonic() > end:
            raise RuntimeError(f"{len(nodes)} of {num_nodes} nodes came online in {timeout:.0f} s")
        time.sleep(0.2)
    return nodes


class PartitionOrderedGrid(Grid):
    """``grid`` whose :meth:`get_node_ids` lists nodes by partition id (everything else is
    ``grid``'s own). ``partition_of`` maps node id → partition id for the accounting."""

    def __init__(self, grid: Grid, timeout: float, num_nodes: int = 1):
        """Waits (up to ``timeout``) for ``num_nodes`` nodes: under Ray they come online only
        after the ServerApp has started."""
        self.inner = grid
        nodes = _wait_for(grid, num_nodes, timeout)
        msgs = [Message(RecordDict(), dst_node_id=nid, message_type=QUERY) for nid in nodes]
        replies = list(grid.send_and_receive(msgs, timeout=timeout))
        node_of = {m.metadata.message_id: m.metadata.dst_node_id for m in msgs}  # ids stamped
        self.partition_of: dict[int, int] = {}  # on push; a reply's src id is not (under Ray)
        for reply in replies:
            if reply.has_error():
                raise RuntimeError("a node did not say its partition id (is its ClientApp "
                                   f"registered with answer_partition?): {reply.error.reason}")
            self.partition_of[node_of[reply.metadata.reply_to_message_id]] = int(
                reply.content["metrics"]["partition-id"])
        if missing := set(nodes) - set(self.partition_of):
            raise RuntimeError(f"{len(missing)} node(s) did not answer the partition query "
                               f"within {timeout:.0f} s")

    def get_node_ids(self) -> list[int]:
        """Nodes in partition order, then any node that joined after the query (by id)."""
        ids = list(self.inner.get_node_ids())
        known = sorted((n for n in ids if n in self.partition_of), key=self.partition_of.get)
        return known + sorted(n for n in ids if n not in self.partition_of)

    def set_run(self, run) -> None:  # noqa: D102 - Grid interface
        self.inner.set_run(run)

    @property
    def run(self):  # noqa: D102 - Grid interface
        return self.inner.run

    def create_message(self, content, message_type, dst_node_id, group_id,
                       ttl=None) -> Message:  # noqa: D102 - Grid interface
        return self.inner.create_message(content, message_type, dst_node_id, group_id, ttl)

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:  # noqa: D102
        return self.inner.push_messages(messages)

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:  # noqa: D102
        return self.inner.pull_messages(message_ids)

    def send_and_receive(self, messages: Iterable[Message], *,
                         timeout: float | None = None) -> Iterable[Message]:  # noqa: D102
        return self.inner.send_and_receive(messages, timeout=timeout)
