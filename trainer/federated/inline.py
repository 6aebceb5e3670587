"""Flower's ServerApp and ClientApp in one process, without Ray: an in-memory ``Grid``.

Why this exists: Flower 1.32's simulation engine has one backend, Ray. Ray is ~220 MB
installed, so it cannot travel to a GPU box through a 64 MiB upload, and it costs seconds to
start, more than a test-sized federation takes. :class:`InlineGrid` hands every message
straight to the ClientApp, with that node's own ``Context`` (``partition-id``,
``num-partitions`` and a ``state`` kept across rounds, as the simulation engine gives), so the
same ServerApp, strategies and ClientApp run unchanged. Flower's ``Grid`` interface is what a
ServerApp talks to in simulation and in deployment alike; this is one more implementation.

What is the same as the Ray engine: messages and replies pass Flower's own validation (an
invalid reply becomes an error reply here, where a SuperLink would drop it and the round would
time out); a ClientApp exception becomes an error reply and leaves the node's state as it was
before the message. What differs: nodes run one after another, in this process and on its
devices (a GPU is shared by simply using it), so a ``timeout`` cannot cut a slow node off (a
warning says when one was exceeded); node ids are 2..N+1, not random (0 is unset and 1 the
SuperLink's); messages are not serialised, which is safe because every app here rebuilds
tensors from its records (``to_torch_state_dict``) instead of keeping references.
"""

from __future__ import annotations

import copy
import logging
import time
import traceback
from collections.abc import Iterable
from uuid import uuid4

import torch
from flwr.app import Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.constant import SUPERLINK_NODE_ID, ErrorCode
from flwr.server.utils.validator import validate_message
from flwr.serverapp import Grid, ServerApp
from flwr.supercore.run import Run

log = logging.getLogger(__name__)
FIRST_NODE_ID = SUPERLINK_NODE_ID + 1  # Flower never gives a node 0 or the SuperLink's id


class InlineGrid(Grid):
    """``num_nodes`` virtual SuperNodes served by ``client_app`` in this process."""

    def __init__(self, client_app: ClientApp, num_nodes: int, run_id: int = 1,
                 node_ids: list[int] | None = None):
        """``node_ids``: partition i's node id (default 2..N+1); other ids, listed in another
        order, stand for what Ray and a SuperLink give (random ids, in no order)."""
        if num_nodes < 1:
            raise ValueError(f"a federation needs at least one node, not {num_nodes}")
        ids = node_ids or [FIRST_NODE_ID + i for i in range(num_nodes)]
        if len(set(ids)) != num_nodes or min(ids) < FIRST_NODE_ID:
            raise ValueError(f"need {num_nodes} distinct node ids >= {FIRST_NODE_ID}: {ids}")
        self._app, self._run = client_app, Run.create_empty(run_id)
        self._contexts = {
            nid: Context(run_id=run_id, node_id=nid, run_config={}, state=RecordDict(),
                         node_config={"partition-id": i, "num-partitions": num_nodes})
            for i, nid in enumerate(ids)}
        self._contexts = dict(sorted(self._contexts.items()))  # listed by id, not partition
        self._replies: dict[str, Message] = {}

    def set_run(self, run: Run) -> None:  # noqa: D102 - Grid interface
        self._run = run

    @property
    def run(self) -> Run:  # noqa: D102 - Grid interface
        return self._run

    def create_message(self, content: RecordDict, message_type: str, dst_node_id: int,
                       group_id: str, ttl: float | None = None) -> Message:  # noqa: D102
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> list[int]:  # noqa: D102 - Grid interface
        return list(self._contexts)

    def push_messages(self, messages: Iterable[Message]) -> list[str]:
        """Deliver each message now; its reply waits for :meth:`pull_messages`."""
        ids = []
        for msg in messages:
            meta = msg.metadata.__dict__  # what a SuperLink stamps on a message it accepts
            meta.update(_run_id=self._run.run_id, _src_node_id=SUPERLINK_NODE_ID,
                        _message_id=str(uuid4()))
            if errors := validate_message(msg, is_reply_message=False):
                raise ValueError(f"invalid message: {'; '.join(errors)}")
            self._replies[msg.metadata.message_id] = self._deliver(msg)
            ids.append(msg.metadata.message_id)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> list[Message]:  # noqa: D102
        return [self._replies.pop(i) for i in message_ids if i in self._replies]

    def send_and_receive(self, messages: Iterable[Message], *,
                         timeout: float | None = None) -> list[Message]:
        """Every reply (nodes answer in turn, so ``timeout`` never cuts one off)."""
        t0 = time.monotonic()
        replies = self.pull_messages(self.push_messages(messages))
        if timeout is not None and time.monotonic() - t0 > timeout:
            log.warning("inline grid: the nodes took %.0f s, past the %.0f s timeout that "
                        "would have dropped the slow ones under Ray", time.monotonic() - t0,
                        timeout)
        return replies

    def _deliver(self, msg: Message) -> Message:
        dst = msg.metadata.dst_node_id
        if dst not in self._contexts:
            raise ValueError(f"no node {dst} in this grid (nodes {list(self._contexts)})")
        context = self._contexts[dst]
        before = copy.deepcopy(context.state)  # Ray keeps a failed run's state changes neither
        threads = torch.get_num_threads()  # a ClientApp may set its worker's; not ours
        try:
            reply = self._app(msg, context)
        except Exception as exc:  # reported as the Ray engine reports it: an error reply
            context.state = before
            reply = _error(msg, f"{type(exc)}:<'{exc}'>\n{traceback.format_exc(limit=5)}")
        finally:
            torch.set_num_threads(threads)
        reply.metadata.__dict__["_message_id"] = str(uuid4())
        if errors := validate_message(reply, is_reply_message=True):
            reply = _error(msg, f"invalid reply: {'; '.join(errors)}")
            reply.metadata.__dict__["_message_id"] = str(uuid4())
        return reply


def _error(msg: Message, reason: str) -> Message:
    return Message(Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=reason),
                   reply_to=msg)


def run_inline(server_app: ServerApp, client_app: ClientApp, num_nodes: int) -> None:
    """Run ``server_app`` to completion against ``num_nodes`` in-process nodes."""
    grid = InlineGrid(client_app, num_nodes)
    server_app(grid=grid, context=Context(run_id=grid.run.run_id, node_id=0, node_config={},
                                          state=RecordDict(), run_config={}))
