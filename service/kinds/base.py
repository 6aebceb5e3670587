"""The model-kind interface and the registry the orchestrator dispatches through.

A *kind* is one way of making a personalized model from a deployed artifact (TAPER mixes basis
ResNet-18s; FedCLIP serves a client's adapter). The orchestrator (``service.personalization``)
owns everything kinds share: owners and ids, the SQL row, the in-process LRU, Redis and the
write-behind, ETags. A kind only says how to turn a request into a recipe, a recipe into a
served model, and a batch of images into probabilities. Adding a kind is one module implementing
:class:`ModelKind` plus one line where the app registers it (``service.main``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from sqlalchemy.orm import Session

from service.core.auth import Principal
from service.core.models import PersonalizedModel
from service.core.problems import Problem
from service.core.settings import Settings


@dataclass
class Draft:
    """A personalization request turned into a recipe, before the orchestrator records it.

    Attributes:
        recipe: everything that determines the weights (its canonical hash is the cache key).
        method: the method name recorded on the row (e.g. ``taper``, ``fedclip-global``).
        description: the caller's own text (stored on the caller's row only).
        mixers: informational coefficients stored on the row (JSON), or None.
        hint: handed back to :meth:`ModelKind.build` (e.g. mixers already computed).
        extra: extra response fields (e.g. how the description was resolved).
    """

    recipe: dict[str, Any]
    method: str
    description: str | None = None
    mixers: list[list[float]] | None = None
    hint: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


class ModelKind(ABC):
    """One model kind. ``name`` is a constant of ``model_store.kinds``; ``version`` is the
    deployed artifact's version.

    ``cache_bytes``: the orchestrator keeps this kind's fp32 bytes in Redis and serialises them
    with the write-behind (worth it when building is costly, as synthesis is). Kinds that read
    their weights straight from a loaded artifact set it False.
    """

    name: ClassVar[str]
    cache_bytes: ClassVar[bool] = True
    exports: ClassVar[tuple[str, ...]] = ()  # derived download formats offered, e.g. ("onnx",)
    version: str | None

    # ---- requests -------------------------------------------------------------------------

    @abstractmethod
    def accepts(self, request: Any) -> bool:
        """Whether this kind handles a ``PersonalizeCreate`` (by the fields it sets)."""

    @abstractmethod
    def draft(self, request: Any, principal: Principal) -> Draft:
        """Resolve a request into a recipe (or raise a 4xx :class:`Problem`)."""

    def has_client(self, client_id: str) -> bool:
        """Whether this kind has a model for federated client ``client_id`` (client-ID kinds:
        how the registry picks between several that accept the same request)."""
        return False

    def refine(self, row: PersonalizedModel, batch: Any,
               settings: Settings) -> tuple[Draft, bool]:
        """A recipe improved by unlabeled images, and whether it differs from ``row``'s
        (default: 409)."""
        raise Problem(409, "not-refinable", f"model {row.id} is a {row.kind!r} model; "
                      "refinement is not offered for this kind", kind=row.kind)  # fmt: skip

    def draft_images(self, request: Any, batch: Any, settings: Settings) -> Draft:
        """A recipe from unlabeled images alone (default: 409, the kind cannot)."""
        raise Problem(409, "images-unsupported", f"{self.name!r} models cannot be made from "
                      "images alone", kind=self.name)  # fmt: skip

    # ---- serving --------------------------------------------------------------------------

    @abstractmethod
    def build(self, row: PersonalizedModel, hint: Any = None) -> tuple[Any, str]:
        """The served model for ``row`` and the tier that supplied it.

        The served object is callable on a preprocessed batch (returning logits) and has
        ``state_dict()``; it is kept in the runtime LRU under the row's recipe key.
        """

    def restore(self, tensors: dict[str, torch.Tensor]) -> Any:
        """A served model from tensors read back from Redis (``cache_bytes`` kinds only)."""
        raise NotImplementedError(f"kind {self.name!r} keeps no bytes in Redis")

    @abstractmethod
    def preprocess(self, raw: list[bytes], names: list[str], settings: Settings) -> Any:
        """Decode a request's encoded images into the batch the served model takes."""

    def exit_for(self, row: PersonalizedModel, exit_: int | None,
                 max_layers: int | None) -> int | None:
        """The exit a prediction runs to (early-exit kinds); None: the model has one output.

        Asking a single-output model for an exit is a client error (422), not ignored."""
        if exit_ is None and max_layers is None:
            return None
        raise Problem(422, "exit-not-supported",
                      f"model {row.id} is a {row.kind!r} model with one output; 'exit' and "
                      "'max_layers' apply to anytime models", kind=row.kind)  # fmt: skip

    def probabilities(self, served: Any, batch: Any, exit_: int | None = None) -> torch.Tensor:
        """(n, k) class probabilities for a preprocessed batch (``exit_``: from
        :meth:`exit_for`)."""
        with torch.inference_mode():
            return served(batch).float().softmax(dim=1)

    @abstractmethod
    def serialize(self, row: PersonalizedModel, served: Any, dtype: str) -> bytes | memoryview:
        """The downloadable safetensors bytes (deterministic: the same recipe, the same bytes)."""

    def onnx(self, row: PersonalizedModel, served: Any) -> bytes:
        """An fp32 ONNX graph of the served model (kinds with ``"onnx"`` in ``exports``)."""
        raise NotImplementedError(f"kind {self.name!r} offers no ONNX export")

    def onnx_headers(self) -> dict[str, str]:
        """How to feed the ONNX graph (response headers)."""
        return {}

    # ---- description ----------------------------------------------------------------------

    @abstractmethod
    def config(self, row: PersonalizedModel) -> dict[str, Any]:
        """The model's ``config.json`` (timm / Hugging Face convention where it applies):
        architecture, ``num_classes``, ``label_names`` in output order, preprocessing. Recipe
        facts only; the orchestrator adds the model id."""

    def public(self, row: PersonalizedModel) -> dict[str, Any]:
        """Kind-specific public fields (``method_accuracy``)."""
        return {"method_accuracy": None}

    def register(self, session: Session) -> None:  # noqa: B027 - optional hook
        """Record the deployed artifact (and whatever it brings, e.g. clients) in SQL."""


class KindRegistry:
    """The kinds this deployment serves, by name; routes and export dispatch through it."""

    def __init__(self, kinds: list[ModelKind]) -> None:
        self._kinds = {k.name: k for k in kinds}

    def __iter__(self) -> Iterator[ModelKind]:
        return iter(self._kinds.values())

    def __contains__(self, name: str) -> bool:
        return name in self._kinds

    def names(self) -> list[str]:
        """Names of the deployed kinds."""
        return list(self._kinds)

    def get(self, name: str) -> ModelKind | None:
        """The deployed kind called ``name``, or None."""
        return self._kinds.get(name)

    def of(self, row: PersonalizedModel) -> ModelKind:
        """The kind that serves ``row`` (409 when this deployment does not serve it)."""
        kind = self._kinds.get(row.kind)
        if kind is None:
            raise Problem(409, "kind-not-deployed",
                          f"model {row.id} is a {row.kind!r} model, which this deployment does "
                          "not serve", kind=row.kind, model_id=row.id)  # fmt: skip
        return kind

    def for_request(self, request: Any, missing: Problem) -> ModelKind:
        """The kind that accepts ``request``; ``missing`` when none is deployed for it.

        Several client-ID kinds accept a request that names no ``kind``: the first (in
        registration order) that has the client wins, then the first deployed one, so adding a
        federation never changes what an existing client's request returns. Every choice ends
        in the same access rule (``service.kinds.clients``), so the choice leaks nothing.
        """
        found = [k for k in self._kinds.values() if k.accepts(request)]
        client = getattr(request, "client_id", None)
        if len(found) > 1 and client is not None:
            found = ([k for k in found if k.has_client(client)]
                     or [k for k in found if k.version is not None] or found)  # fmt: skip
        if not found:
            raise missing
        return found[0]


