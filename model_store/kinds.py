"""The artifact and model kinds, named in one place.

An artifact kind is a folder of the store (``<store>/<kind>/<version>/``); a *model* kind is what
the service serves and records in ``personalized_models.kind``. Trainer writers, ``model_store``
loaders and the service's kind registry all use these constants, so a kind is spelled once.
"""

from __future__ import annotations

TAPER = "taper"  # basis ResNet-18s + mixer predictor; serves personalized ResNet-18s
FEDCLIP = "fedclip"  # FedCLIP adapters over a frozen foundation; serves client-ID models
FOUNDATION = "foundation"  # an open_clip local-dir bundle (the frozen backbone of fedclip)
ANYTIME = "anytime"  # early-exit heads/Accumulator over a frozen ViT foundation, per client
PERFIX = "perfix"  # prefix-personalised ViTs (FedPerfix and baselines), per client

ARTIFACT_KINDS: tuple[str, ...] = (TAPER, FEDCLIP, FOUNDATION, ANYTIME, PERFIX)
# what personalized_models.kind may hold
MODEL_KINDS: tuple[str, ...] = (TAPER, FEDCLIP, ANYTIME, PERFIX)
