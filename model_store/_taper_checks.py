"""Validation helpers for TAPER artifacts (used by ``model_store.taper``; not public API).

They run at save time so an inconsistent artifact is refused by the trainer, with a message
that names the offending tensor, instead of failing later inside the service.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from model_store.images import IMAGE_SIZE, MEAN, STD
from model_store.resnet import ARCH, NUM_BLOCKS, build_resnet18
from model_store.synthesis import check_bases
from model_store.text import DEFAULT_MODEL_NAME


def _resnet_shapes(num_classes: int) -> dict[str, torch.Size]:
    """Stock torchvision key order and shapes (built on the meta device: no memory, no init)."""
    with torch.device("meta"):
        return {k: v.shape for k, v in build_resnet18(num_classes).state_dict().items()}


def _resnet_keys(num_classes: int) -> list[str]:
    return list(_resnet_shapes(num_classes))


def _check_models(basis: Mapping[str, torch.Tensor], generic: Mapping[str, torch.Tensor],
                  n: int, width: int) -> bool:  # fmt: skip
    """Check keys/shapes of basis 0 and the generic model; return torchvision compatibility.

    Stock-width (64) artifacts must match ``torchvision.models.resnet18(num_classes=n)`` exactly
    (the service promises that downloads load into it). Narrow experimental models (trainer
    ``width`` < 64) keep the key names and are recorded as not torchvision-compatible.
    """
    stock = _resnet_shapes(n)
    for label, sd in (("bases", basis), ("generic", generic)):
        if set(sd) != set(stock):
            raise ValueError(f"{label} are not ResNet-18 state dicts with torchvision keys")
        if sd["fc.weight"].shape[0] != n:
            raise ValueError(f"{label} classifier differs from the catalogue's {n} classes")
    if diff := [k for k in stock if basis[k].shape != generic[k].shape]:
        raise ValueError(f"bases and generic model differ in shape at {diff[0]}")
    mismatch = [k for k in stock if basis[k].shape != stock[k]]
    if mismatch and width == 64:
        k = mismatch[0]
        raise ValueError(
            f"{k} has shape {tuple(basis[k].shape)}, stock resnet18 has {tuple(stock[k])}; "
            "pass config={'width': w} for a narrow experimental model"
        )
    return not mismatch


def _per_basis(bases: Sequence[Mapping[str, torch.Tensor]] | Mapping[str, torch.Tensor]):
    """Q per-basis views, from a list (validated like ``stack_bases``) or a stacked dict."""
    if isinstance(bases, Mapping):
        q = bases["fc.weight"].shape[0] if "fc.weight" in bases else 0
        return [{k: v[i] for k, v in bases.items()} for i in range(q)]
    check_bases(bases)
    return list(bases)


def _check_class_text(class_text: Mapping[str, torch.Tensor], n: int, n_domains: int) -> int:
    """Validate prompt-embedding shapes against the catalogue; return the embedding size."""
    prompts, names = class_text.get("prompts"), class_text.get("names")
    if prompts is None or names is None:
        raise ValueError("class_text needs 'prompts' (N, P, d) and 'names' (N, d)")
    if prompts.dim() != 3 or prompts.shape[0] != n or names.shape != (n, prompts.shape[2]):
        raise ValueError(
            f"class_text shapes {tuple(prompts.shape)}/{tuple(names.shape)} "
            f"do not match {n} classes"
        )
    dom = class_text.get("domain_prompts")
    if dom is not None and (dom.dim() != 4 or dom.shape[:2] != (n_domains, n)):
        raise ValueError(f"domain_prompts must be ({n_domains}, {n}, P, d), got {tuple(dom.shape)}")
    defs = class_text.get("definitions")
    if defs is not None and defs.shape != names.shape:
        raise ValueError(f"definitions must be {tuple(names.shape)}, got {tuple(defs.shape)}")
    return int(prompts.shape[2])


def _normalise_catalogue(catalogue: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict:
    cat = {"classes": list(catalogue)} if not isinstance(catalogue, Mapping) else dict(catalogue)
    classes = cat.get("classes")
    if not classes or not all(isinstance(c, Mapping) and c.get("name") for c in classes):
        raise ValueError("catalogue needs a non-empty 'classes' list of dicts with a 'name'")
    names = [c["name"] for c in classes]
    if len(set(names)) != len(names):
        raise ValueError("catalogue class names must be unique")
    cat.setdefault("groups", sorted({c.get("group", "") for c in classes} - {""}))
    cat.setdefault("domains", [])
    return cat


def _check_domain_head(head: Mapping[str, torch.Tensor], d: int, f: int) -> dict[str, torch.Tensor]:
    """``weight`` (D, F) + ``bias`` (D,), one row per catalogue domain (ValueError if not)."""
    if set(head) != {"weight", "bias"}:
        raise ValueError(f"domain_head needs exactly 'weight' and 'bias', got {sorted(head)}")
    if d < 2 or tuple(head["weight"].shape) != (d, f) or tuple(head["bias"].shape) != (d,):
        raise ValueError(f"domain_head must be weight ({d}, {f}) + bias ({d},) for {d} domains")
    return {k: v.detach().float().contiguous() for k, v in head.items()}


def _taper_config(derived: dict[str, Any], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """``config.json``: defaults < caller's entries; entries derived from tensors must agree."""
    derived = {"arch": ARCH, "num_blocks": NUM_BLOCKS, **derived}
    defaults = {"image_size": IMAGE_SIZE, "mean": list(MEAN), "std": list(STD),
                "text_encoder": DEFAULT_MODEL_NAME, "bn": "mixed"}  # fmt: skip
    full = {**defaults, **derived, **dict(given or {})}
    if clash := [k for k in derived if full[k] != derived[k]]:
        raise ValueError(f"config entries {clash} contradict the tensors")
    return full
