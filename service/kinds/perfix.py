"""Client-ID prefix-personalised ViTs (FedPerfix, issue 16): the deployed ``perfix`` artifact.

A FedPerfix federation (``tailor train perfix --save``) holds the ViT the server averaged and
each client's local part (prefix adapters and head). ``{"client_id": …, "kind": "perfix"}``
returns the client's model — global + its own part — with the accuracy training measured on
its validation split; there is no ``global`` model (every model's head is local). Loading,
access and downloads (the whole ViT as one safetensors + ``config.json``) are
:mod:`service.kinds.federated`'s.
"""

from __future__ import annotations

from typing import Any

import torch

from model_store.kinds import PERFIX
from model_store.perfix_card import perfix_config
from service.core.models import PersonalizedModel
from service.core.settings import Settings
from service.kinds.federated import ClientDeployment, ClientModelKind


def load_perfix(settings: Settings, device: torch.device) -> ClientDeployment | None:
    """``settings.perfix_version`` of the store, or None when ``latest`` finds none."""
    from model_store.perfix_artifact import open_perfix

    return ClientDeployment.load(settings, PERFIX, settings.perfix_version, device, open_perfix)


class PerfixKind(ClientModelKind):
    """Kind ``perfix``: one personalised ViT per client, no global model."""

    name = PERFIX
    methods = {True: "perfix-global", False: "perfix-personalized"}  # no global is ever drafted
    has_global = False

    def card(self, deployment: ClientDeployment, client: str | None) -> dict[str, Any]:
        return perfix_config(deployment.federation, client)

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        """The client's validation accuracy from training, when its artifact is deployed."""
        d = self.deployment
        if d is None or d.version != row.artifact_version:
            return {"method_accuracy": None}
        acc = d.config.get("client_acc", {}).get(row.recipe["client"], {}).get("val")
        return {"method_accuracy": round(float(acc), 6) if acc is not None else None}
