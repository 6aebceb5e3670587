"""Client-ID anytime models: the deployed ``anytime`` artifact, served with a depth budget.

An anytime federation (``tailor train anytime --save``) holds a global early-exit model and
each client's personalised one over a frozen ViT foundation (the Accumulator, issue 15). A
request ``{"client_id": …, "kind": "anytime"}`` returns that client's model with its exits:
FLOPs and validation accuracy at each. ``/predict`` takes ``exit`` (1…L: exactly that exit) or
``max_layers`` (a compute budget: the deepest exit it affords) and answers with the exit it
used; without either, the client's own depth budget (its tier), the last block for ``global``.

Loading, access and downloads are :mod:`service.kinds.federated`'s; the download is the whole
model, frozen tower included, described by ``model_store.anytime_card``.
"""

from __future__ import annotations

from typing import Any

import torch

from model_store.anytime_card import anytime_config, default_exit, exits
from model_store.kinds import ANYTIME
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.settings import Settings
from service.kinds.federated import ClientDeployment, ClientModelKind, ClientServed


def load_anytime(settings: Settings, device: torch.device) -> ClientDeployment | None:
    """``settings.anytime_version`` of the store, or None when ``latest`` finds none."""
    from model_store.anytime_artifact import open_anytime

    return ClientDeployment.load(settings, ANYTIME, settings.anytime_version, device,
                                 open_anytime)  # fmt: skip


class AnytimeKind(ClientModelKind):
    """Kind ``anytime``: early-exit models per client, ``exit``/``max_layers`` on predict."""

    name = ANYTIME
    methods = {True: "anytime-global", False: "anytime-personalized"}

    def card(self, deployment: ClientDeployment, client: str | None) -> dict[str, Any]:
        return anytime_config(deployment.federation, client)

    def describe(self, deployment: ClientDeployment, who: str) -> str:
        cfg = deployment.config
        return f"anytime {cfg['method']} model, {cfg['depth']} exits: {who}"

    def exit_for(self, row: PersonalizedModel, exit_: int | None,
                 max_layers: int | None) -> int:
        """``exit`` exactly (1…L), or the deepest exit within ``max_layers``, or the default."""
        cfg = self._serving(row).config
        depth = int(cfg["depth"])
        if exit_ is not None and max_layers is not None:
            raise Problem(422, "invalid-exit", "give 'exit' or 'max_layers', not both")
        if exit_ is not None and not 1 <= exit_ <= depth:
            raise Problem(422, "invalid-exit", f"exit must be in 1..{depth} for model {row.id} "
                          f"(got {exit_})", depth=depth)  # fmt: skip
        if max_layers is not None and max_layers < 1:
            raise Problem(422, "invalid-exit", f"max_layers must be >= 1 (got {max_layers})")
        if exit_ is not None:
            return exit_
        return min(max_layers, depth) if max_layers else default_exit(cfg, self.client_of(row))

    def probabilities(self, served: ClientServed, batch: Any,
                      exit_: int | None = None) -> torch.Tensor:
        with torch.inference_mode():
            return served(batch, exit_).float().softmax(dim=1)

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        """Exits (FLOPs, val accuracy) and the accuracy at the default exit, when the row's
        artifact is the deployed one."""
        d = self.deployment
        if d is None or d.version != row.artifact_version:
            return {"method_accuracy": None}
        client = self.client_of(row)
        table, default = exits(d.config, client), default_exit(d.config, client)
        return {"method_accuracy": table[default - 1]["val_accuracy"], "exits": table,
                "default_exit": default}
