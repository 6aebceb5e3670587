"""Who may reach a federated client's model: the access rule every client-ID kind shares.

FedCLIP adapters and anytime models are both served by client ID, so both must answer the same
way, or the difference would leak which ids exist where:

- a client key reaches only its own model; another client's id, an unknown id, and reading
  another client's model all answer the *same* 404 (only the echoed id differs);
- ``client_id: "global"`` is reserved: the federation's global model, for any key (how a client
  that did not take part asks for it explicitly);
- a known client without a model in this federation gets a 404 that names ``global``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from sqlalchemy.orm import sessionmaker

from service.core import crud
from service.core.auth import Principal
from service.core.problems import Problem

GLOBAL = "global"


def client_not_found(client_id: str) -> Problem:
    """The one 404 for an unknown client *and* for another client's id."""
    return Problem(404, "client-not-found", f"no client with id {client_id!r}")


def resolve_client(client_id: str, principal: Principal, *, served: Callable[[], Collection[str]],
                   sessions: sessionmaker, what: str, federation: str) -> str:
    """The model id a request for ``client_id`` gets (``global`` or the client's own).

    Args:
        served: the ids with a personal model; raises the kind's 409 when nothing is deployed
            (called after the access check, so a refused id never learns the deployment state).
        what: ``adapter`` / ``model``: the noun in the 404 of a client with nothing here.
        federation: ``kind/version`` named in that 404.
    """
    if client_id == GLOBAL:
        served()
        return GLOBAL
    if not principal.is_admin and principal.client_id != client_id:
        raise client_not_found(client_id)
    if client_id in served():
        return client_id
    with sessions() as s:
        if crud.get_client(s, client_id=client_id) is None:
            raise client_not_found(client_id)
    raise Problem(404, f"no-personal-{what}",
                  f"client {client_id!r} has no personalised {what} in {federation} (it did not "
                  f"take part in that federation); send {{\"client_id\": \"{GLOBAL}\"}} to get "
                  f"the federation's global {what}", client_id=client_id,
                  use_client_id=GLOBAL)  # fmt: skip
