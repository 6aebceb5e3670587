"""Tiny real TAPER and FedCLIP artifacts for tests (service, trainer and model_store suites).

``make_tiny_taper`` writes a genuine artifact through ``save_taper`` in a few seconds: Q
randomly initialised ResNet-18 bases (with randomised BatchNorm statistics, so mixing them is
observable), a random generic model, a random-init mixer, and a small class catalogue whose
prompt embeddings come from the real offline ``TextEncoder`` (so phrase resolution by embedding
similarity behaves as in production). Weights are random: predictions are meaningless but
deterministic for a given seed. ``make_tiny_fedclip`` does the same for client-ID serving: a tiny
open_clip ``foundation`` bundle and a ``fedclip`` artifact with a global and per-client adapters.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from model_store.artifacts import ArtifactRef
from model_store.kinds import FOUNDATION
from model_store.mixer import MixerPredictor
from model_store.resnet import build_resnet18
from model_store.taper import save_taper
from model_store.text import TextEncoder

TINY_DOMAINS = ("photo", "art_painting", "cartoon", "sketch")
_DOMAIN_WORDS = {"photo": "photo", "art_painting": "painting", "cartoon": "cartoon",
                 "sketch": "sketch"}  # fmt: skip
# (name, group, definition without the name). Order interleaves groups so small N stays mixed.
TINY_CATALOGUE: tuple[tuple[str, str, str], ...] = (
    ("cat", "animals", "a small furry pet that purrs and chases mice"),
    ("zero", "digits", "the handwritten digit that is a closed oval"),
    ("sneaker", "clothing", "a soft sports shoe worn for running"),
    ("dog", "animals", "a loyal pet that barks and wags its tail"),
    ("one", "digits", "the handwritten digit that is a single vertical stroke"),
    ("trouser", "clothing", "a garment covering each leg separately"),
    ("horse", "animals", "a large hoofed animal people ride"),
    ("two", "digits", "the handwritten digit after one"),
    ("bag", "clothing", "a container with handles for carrying things"),
    ("bird", "animals", "a feathered animal with wings that flies"),
    ("three", "digits", "the handwritten digit before four"),
    ("coat", "clothing", "a warm outer garment with sleeves"),
)


def _prompts(name: str, domain: str | None = None) -> list[str]:
    if domain is None:
        return [f"a photo of a {name}", f"a drawing of a {name}", f"a {name}"]
    word = _DOMAIN_WORDS.get(domain, domain.replace("_", " "))
    return [f"a {word} of a {name}", f"a {word} showing a {name}", f"a {name} as a {word}"]


def random_resnet_state(num_classes: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Random-init ResNet-18 state dict with randomised BN running stats and batch counters.

    Seeds torch's global RNG from ``gen`` (wrap calls in ``torch.random.fork_rng`` to keep the
    caller's RNG state).
    """
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    state = build_resnet18(num_classes).state_dict()
    for key, t in state.items():
        if key.endswith("running_mean"):
            state[key] = 0.1 * torch.randn(t.shape, generator=gen)
        elif key.endswith("running_var"):
            state[key] = 0.5 + torch.rand(t.shape, generator=gen)
        elif key.endswith("num_batches_tracked"):
            state[key] = torch.randint(1, 1000, (), generator=gen)
    return state


def tiny_catalogue(num_classes: int, class_names: Sequence[str] | None = None) -> dict[str, Any]:
    """A catalogue dict of ``num_classes`` classes (from ``TINY_CATALOGUE`` or given names)."""
    if class_names is not None:
        rows = [(str(n), "custom", f"an example of the class {n}") for n in class_names]
    elif num_classes > len(TINY_CATALOGUE):
        raise ValueError(f"the tiny catalogue has {len(TINY_CATALOGUE)} classes; pass class_names")
    else:
        rows = list(TINY_CATALOGUE[:num_classes])
    classes: list[dict[str, Any]] = [
        {"name": n, "group": g, "prompts": _prompts(n), "definition": d} for n, g, d in rows
    ]
    groups = sorted({c["group"] for c in classes})
    return {"classes": classes, "groups": groups, "domains": list(TINY_DOMAINS)}


def tiny_class_text(
    catalogue: dict[str, Any], encoder: TextEncoder | None, seed: int = 0
) -> dict[str, torch.Tensor]:
    """Prompt embeddings for a catalogue: real ``encoder`` output, or seeded random unit vectors."""
    names = [c["name"] for c in catalogue["classes"]]
    texts = [p for n in names for p in _prompts(n)] + names
    texts += [p for d in catalogue["domains"] for n in names for p in _prompts(n, d)]
    if encoder is not None:
        emb = encoder.encode(texts)
    else:
        emb = np.random.default_rng(seed).standard_normal((len(texts), 384)).astype(np.float32)
        emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    n, p, d = len(names), 3, emb.shape[1]
    dom = len(catalogue["domains"])
    out = {
        "prompts": torch.from_numpy(emb[: n * p].reshape(n, p, d).copy()),
        "names": torch.from_numpy(emb[n * p : n * p + n].copy()),
    }
    if dom:
        out["domain_prompts"] = torch.from_numpy(emb[n * p + n :].reshape(dom, n, p, d).copy())
    return out


def make_tiny_taper(
    store: str | os.PathLike[str],
    num_classes: int = 6,
    Q: int = 2,  # noqa: N803 - the paper's name for the number of bases
    seed: int = 0,
    *,
    class_names: Sequence[str] | None = None,
    encoder: TextEncoder | None = None,
    use_encoder: bool = True,
    metrics: dict[str, Any] | None = None,
    version: str | None = None,
) -> ArtifactRef:
    """Write a small but real (random-init) TAPER artifact and return its ref.

    Args:
        store: Store root directory.
        num_classes: N classes (≤ 12 unless ``class_names`` is given).
        Q: Number of bases.
        seed: Seeds every random tensor; same seed -> identical tensors.
        class_names: Custom class names (group ``custom``) instead of the tiny catalogue.
        encoder: A ``TextEncoder`` to reuse (loading one costs seconds); created if needed.
        use_encoder: ``False`` uses random unit embeddings (no sentence-transformers load).
        metrics: Manifest metrics; default marks TAPER the better method.
        version: Explicit version id.
    """
    if class_names is not None:
        num_classes = len(class_names)
    gen = torch.Generator().manual_seed(seed)
    cat = tiny_catalogue(num_classes, class_names)
    if use_encoder and encoder is None:
        encoder = TextEncoder(device="cpu")
    class_text = tiny_class_text(cat, encoder if use_encoder else None, seed)
    with torch.random.fork_rng(devices=[]):
        bases = [random_resnet_state(num_classes, gen) for _ in range(Q)]
        generic = random_resnet_state(num_classes, gen)
        torch.manual_seed(seed)
        mixer = MixerPredictor(class_text["names"].shape[1], Q, hidden=64)
        with torch.no_grad():  # give BatchNorm realistic running statistics
            mixer.train()(class_text["prompts"].mean(1) + 0.05 * torch.randn(num_classes, 1))
    return save_taper(
        store, bases=bases, generic=generic, mixer_state=mixer.state_dict(),
        mixer_cfg=mixer.config, catalogue=cat, class_text=class_text,
        metrics=metrics or {"taper": {"acc": 0.5}, "selection": {"acc": 0.4},
                            "default_method": "taper"},
        metadata={"training": {"random_init": True, "seed": seed}}, version=version,
    )  # fmt: skip


# A tiny open_clip model (ViT + transformer text tower, open_clip's own BPE tokenizer): a real
# ``local-dir:`` foundation bundle of ~6 MB that builds and loads in well under a second.
TINY_CLIP_CONFIG: dict[str, Any] = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16,
                   "patch_size": 8, "mlp_ratio": 2.0},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}  # fmt: skip


def make_tiny_foundation(store: str | os.PathLike[str], seed: int = 0,
                         layers: int = 1) -> tuple[ArtifactRef, Any]:
    """Write a random-init tiny CLIP as a ``foundation`` artifact; returns it and the backbone.

    ``layers``: ViT blocks (the anytime tests want several exits).
    """
    from model_store.artifacts import write_artifact
    from model_store.clip import ClipBackbone, _create, _tokenizer, bundle_files

    cfg = {**TINY_CLIP_CONFIG, "vision_cfg": {**TINY_CLIP_CONFIG["vision_cfg"], "layers": layers}}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = _create(cfg, checkpoint=None)
    tokenizer = _tokenizer(cfg, None)
    backbone = ClipBackbone(model, cfg, tokenizer, device="cpu")
    tensors, json_files = bundle_files(backbone)
    ref = write_artifact(store, FOUNDATION, tensors=tensors, json_files=json_files,
                         config={"image_tower": "tiny-vit", "random_init": True})  # fmt: skip
    return ref, backbone


def make_tiny_fedclip(
    store: str | os.PathLike[str],
    clients: Sequence[str] = ("photo", "sketch"),
    class_names: Sequence[str] = ("cat", "dog", "horse", "bird"),
    seed: int = 0,
    *,
    sharpness: float = 6.0,
    metrics: dict[str, Any] | None = None,
) -> ArtifactRef:
    """Write a tiny foundation plus a ``fedclip`` artifact (global + one adapter per client).

    Adapters are random with ``fc2`` scaled by ``sharpness`` so their attention is far from
    uniform: different clients then predict differently, which tests of routing can observe.
    Class text features come from the tiny backbone's real text tower.
    """
    from model_store.adapters import AttentionAdapter, write_fedclip_artifact

    foundation, backbone = make_tiny_foundation(store, seed)
    dim = TINY_CLIP_CONFIG["embed_dim"]

    def adapter(i: int) -> dict[str, torch.Tensor]:
        torch.manual_seed(seed * 1000 + i)
        ad = AttentionAdapter(dim)
        with torch.no_grad():
            ad.fc2.weight.mul_(sharpness)
        return ad.state_dict()

    with torch.random.fork_rng(devices=[]):
        states = {c: adapter(i + 1) for i, c in enumerate(clients)}
        global_state = adapter(0)
    text = backbone.encode_text([f"a photo of a {n}" for n in class_names])
    return write_fedclip_artifact(
        store, global_state=global_state, client_states=states,
        adapter_config={"type": "attention", "dim": dim, "rank": None},
        class_names=list(class_names), text_features=torch.from_numpy(text),
        logit_scale=backbone.logit_scale,
        backbone={"kind": "foundation", "version": foundation.version,
                  "sha256": backbone.fingerprint},
        metadata={"metrics": metrics if metrics is not None else {
            "unseen_acc": 0.4, "participant_acc": {c: 0.5 for c in clients},
            "personal_acc": {c: round(0.6 + 0.1 * i, 6) for i, c in enumerate(clients)}}},
    )  # fmt: skip


def make_tiny_anytime(
    store: str | os.PathLike[str],
    clients: Sequence[str] = ("client0", "client1"),
    class_names: Sequence[str] = ("cat", "dog", "horse", "bird"),
    *,
    layers: int = 3,
    method: str = "accumulator",
    adapter_rank: int = 4,
    tiers: Sequence[int] | None = None,
    seed: int = 0,
) -> ArtifactRef:
    """Write a tiny ViT foundation plus an ``anytime`` artifact (global + one model per client).

    Every trainable tensor is random (drawn per client, PA up-projections included, so adapters
    are not identity), so clients and exits predict differently and routing is observable.
    """
    from model_store.anytime import AnytimeViT
    from model_store.anytime_artifact import save_anytime

    foundation, backbone = make_tiny_foundation(store, seed, layers=layers)
    tiers = list(tiers) if tiers is not None else [layers] * len(clients)

    def trained(i: int) -> dict[str, torch.Tensor]:
        torch.manual_seed(seed * 1000 + i)
        model = AnytimeViT(copy.deepcopy(backbone.model.visual), len(class_names), method,
                           adapter_rank)  # fmt: skip
        names = set(model.trainable_names())
        return {k: torch.randn_like(v) * 0.5 for k, v in model.state_dict().items() if k in names}

    with torch.random.fork_rng(devices=[]):
        global_state, states = trained(0), {c: trained(i + 1) for i, c in enumerate(clients)}
    accs = {c: [round(0.3 + 0.1 * e, 6) if e <= t else None for e in range(1, layers + 1)]
            for c, t in zip(clients, tiers, strict=True)}  # fmt: skip
    accs["global"] = [round(0.25 + 0.1 * e, 6) for e in range(1, layers + 1)]
    return save_anytime(
        store, model_cfg={"method": method, "adapter_rank": adapter_rank, "depth": layers},
        class_names=list(class_names),
        foundation={"version": foundation.version, "sha256": backbone.fingerprint},
        global_state=global_state, client_states=states,
        tiers=dict(zip(clients, tiers, strict=True)), exit_val_acc=accs,
        flops=[1000 * e for e in range(1, layers + 1)])  # fmt: skip


def make_tiny_perfix(
    store: str | os.PathLike[str],
    clients: Sequence[str] = ("client0", "client1"),
    class_names: Sequence[str] = ("cat", "dog", "horse", "bird"),
    *,
    method: str = "fedperfix",
    seed: int = 0,
) -> ArtifactRef:
    """Write a tiny ViT foundation plus a ``perfix`` artifact: one averaged ViT and each
    client's local part, every tensor random (clients predict differently)."""
    from model_store.perfix import PerfixViT
    from model_store.perfix_artifact import save_perfix

    foundation, backbone = make_tiny_foundation(store, seed, layers=2)
    cfg = {"method": method, "rank": 4, "scale": 0.8, "num_tokens": 3}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = PerfixViT(copy.deepcopy(backbone.model.visual), len(class_names), method, 4,
                          0.8, 3)  # fmt: skip
        glob = {n: p.detach() + 0.05 * torch.randn_like(p) for n, p in model.named_parameters()
                if n in set(model.global_names())}  # fmt: skip
        local = {c: {n: torch.randn_like(p) for n, p in model.named_parameters()
                     if n in set(model.local_names())} for c in clients}  # fmt: skip
    acc = {c: {"val": round(0.5 + 0.1 * i, 6), "test": 0.4} for i, c in enumerate(clients)}
    return save_perfix(store, model_cfg=cfg, class_names=list(class_names),
                       foundation={"version": foundation.version, "sha256": backbone.fingerprint},
                       global_state=glob, client_states=local, client_acc=acc)
