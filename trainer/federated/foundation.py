"""``tailor train foundation``: the offline default CLIP, aligned on PUBLIC grayscale data.

No CLIP weights exist offline, and aligning a backbone on the clients' own data would make
federation pointless (DESIGN.md §5c), so the foundation is trained on a public set that no
federated client holds: raw grayscale source images (MNIST / Fashion-MNIST / Animal-MNIST images
that Tailor-PACS does not use), never rendered into any client domain. Colour/contrast
augmentation (random foreground and background colours, inversion, contrast, noise, shifts) is
what lets it transfer to coloured domains it never saw.

Objective: CLIP's image->text cross-entropy against the prompts of the classes (one randomly
chosen template per class per step). With only 30 classes a batch holds many images of the same
class, so the usual in-batch InfoNCE would push same-class pairs apart; contrasting each image
with the de-duplicated class texts is the same loss without false negatives.

What trains: the whole image tower (trunk + projection), the text projection and the logit
scale. MiniLM itself stays frozen (its pooled outputs for every prompt are computed once): on a
2-core CPU a transformer backward per step is unaffordable and 30 class names give it nothing
to learn.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from model_store.clip import ClipBackbone
from model_store.kinds import FOUNDATION

KIND = FOUNDATION
TEMPLATES = ("a picture of a {}.", "a photo of a {}.", "a drawing of a {}.", "an image of a {}.")


def augment(gray: np.ndarray, rng: np.random.Generator, size: int = 32) -> np.ndarray:
    """Grayscale (n, h, w) uint8 -> coloured (n, size, size, 3) uint8 with random styles.

    Each image gets its own foreground and background colour (sometimes inverted, i.e. dark
    strokes on a light ground), a random contrast, pixel noise and a random placement.
    """
    n, h, w = gray.shape
    if h > size or w > size:
        raise ValueError(f"public images must be at most {size}x{size}, got {h}x{w}")
    alpha = gray.astype(np.float32) / 255.0
    alpha = np.clip((alpha - 0.5) * rng.uniform(0.6, 1.6, (n, 1, 1)) + 0.5, 0.0, 1.0)
    fg = rng.uniform(0, 1, (n, 1, 1, 3)).astype(np.float32)
    bg = rng.uniform(0, 1, (n, 1, 1, 3)).astype(np.float32)
    swap = rng.random(n) < 0.5
    fg[swap], bg[swap] = bg[swap].copy(), fg[swap].copy()
    bg = np.where(np.abs(fg - bg).sum(-1, keepdims=True) < 0.6, 1.0 - fg, bg)
    out = np.empty((n, size, size, 3), np.float32)
    out[:] = bg
    ys, xs = rng.integers(0, size - h + 1, n), rng.integers(0, size - w + 1, n)
    for i in range(n):
        a = alpha[i][..., None]
        out[i, ys[i]:ys[i] + h, xs[i]:xs[i] + w] = a * fg[i] + (1 - a) * bg[i]
    out += rng.normal(0, rng.uniform(0, 0.08, (n, 1, 1, 1)), out.shape)
    return (np.clip(out, 0, 1) * 255).astype(np.uint8)


def class_prompts(class_names: list[str]) -> list[list[str]]:
    """Prompts per class: the catalogue's generic prompts when every class is in the catalogue
    (they disambiguate, e.g. "the digit zero"), else :data:`TEMPLATES`; equal count per class.
    """
    from trainer.data import catalogue

    known = set(catalogue.CLASS_NAMES)
    if all(c in known for c in class_names):
        prompts = [list(catalogue.class_prompts(c)) for c in class_names]
        if len({len(p) for p in prompts}) == 1:
            return prompts
    return [[t.format(c) for t in TEMPLATES] for c in class_names]


def pooled_prompts(backbone: ClipBackbone, class_names: list[str]) -> torch.Tensor:
    """Frozen MiniLM mean-pooled outputs, (C, P, 384), computed once."""
    prompts = class_prompts(class_names)
    flat = [p for ps in prompts for p in ps]
    pooled = backbone.encode_text(flat, pre_projection=True)
    return torch.from_numpy(pooled).view(len(class_names), len(prompts[0]), -1)


def text_features(backbone: ClipBackbone, class_names: list[str]) -> torch.Tensor:
    """Class text features as used for zero-shot and the adapters: mean over templates."""
    pooled = pooled_prompts(backbone, class_names).to(backbone.device)
    with torch.no_grad():
        feats = F.normalize(backbone.model.text.proj(pooled), dim=-1).mean(1)
    return F.normalize(feats, dim=-1).cpu()


@torch.no_grad()
def zero_shot_accuracy(backbone: ClipBackbone, images: np.ndarray, labels: np.ndarray,
                       class_names: list[str]) -> float:
    """Top-1 zero-shot accuracy of coloured (n, H, W, 3) uint8 images against class prompts."""
    backbone.model.eval()
    txt = text_features(backbone, class_names)
    img = torch.from_numpy(backbone.encode_images(images))
    return float(((img @ txt.T).argmax(1).numpy() == labels).mean())


def _step(backbone: ClipBackbone, pooled: torch.Tensor, x: np.ndarray, y: np.ndarray,
          rng: np.random.Generator) -> torch.Tensor:
    """Loss of one batch: images vs one random template per class."""
    model = backbone.model
    choice = torch.from_numpy(rng.integers(0, pooled.shape[1], pooled.shape[0]))
    txt = F.normalize(model.text.proj(pooled[torch.arange(pooled.shape[0]), choice]), dim=-1)
    img = F.normalize(model.encode_image(backbone.preprocess(x)), dim=-1)
    logits = model.logit_scale.exp().clamp(max=100) * img @ txt.T
    return F.cross_entropy(logits, torch.from_numpy(y).long().to(logits.device))


def train_foundation(backbone: ClipBackbone, images: np.ndarray, labels: np.ndarray,
                     class_names: list[str], cfg: dict[str, Any]) -> dict[str, Any]:
    """Align the towers contrastively on public grayscale images; return a training log."""
    rng = np.random.default_rng(int(cfg.get("seed", 0)))
    torch.manual_seed(int(cfg.get("seed", 0)))
    model = backbone.model
    for p in model.text.transformer.parameters():
        p.requires_grad_(False)
    pooled = pooled_prompts(backbone, class_names).to(backbone.device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    steps, bs = int(cfg["steps"]), int(cfg["batch_size"])
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps // 20)) * 0.5
        * (1 + math.cos(math.pi * s / steps)))
    log, t0 = [], time.perf_counter()
    model.train()
    model.text.transformer.eval()
    for step in range(steps):
        idx = rng.integers(0, len(labels), bs)
        loss = _step(backbone, pooled, augment(images[idx], rng), labels[idx], rng)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % max(1, steps // 10) == 0 or step == steps - 1:
            log.append({"step": step, "loss": float(loss.detach()),
                        "seconds": round(time.perf_counter() - t0, 1)})
            print(json.dumps(log[-1]), flush=True)
    model.eval()
    return {"log": log, "seconds": time.perf_counter() - t0, "images_seen": steps * bs}


def run_foundation(args: Any) -> dict[str, Any]:
    """Train the default foundation CLIP on public data (``args``: ``tailor train foundation``'s
    options) and save it as an artifact unless ``args.no_save``.

    Returns:
        Summary dict (also printed as JSON): zero-shot accuracy on held-out public images
        before and after training, timing, and the artifact version.
    """
    from model_store.clip import build_default_clip
    from model_store.foundation import save_foundation
    from trainer.federated.data import load_backbone, load_public

    images, labels, names, fingerprint = load_public(args)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(labels))
    n_val = max(1, int(args.val_fraction * len(labels)))
    val, train = perm[:n_val], perm[n_val:]
    val_images = augment(images[val], np.random.default_rng(10_000 + args.seed))
    if args.init:
        spec = args.init if args.init.startswith("local-dir:") or args.init == "latest" \
            else f"foundation:{args.init}"
        backbone, source = load_backbone(spec, args.store, args.device)
        vision = backbone.model_cfg["vision_cfg"]
        args.image_tower = vision.get("timm_model_name") or ("vit" if "width" in vision
                                                             else "custom")
    else:
        backbone = build_default_clip(args.image_tower, args.embed_dim, args.image_size,
                                      args.device)
        source = {"spec": "default"}
    before = zero_shot_accuracy(backbone, val_images, labels[val], names)
    cfg = {k: getattr(args, k) for k in ("steps", "batch_size", "lr", "weight_decay", "seed",
                                         "image_tower", "embed_dim", "image_size")}
    log = train_foundation(backbone, images[train], labels[train], names, cfg)
    after = zero_shot_accuracy(backbone, val_images, labels[val], names)
    summary: dict[str, Any] = {
        "image_tower": args.image_tower, "public_val_zero_shot_before": before,
        "public_val_zero_shot_after": after, "train_seconds": round(log["seconds"], 1),
        "images_seen": log["images_seen"], "public_train_images": int(len(train)),
        "public_fingerprint": fingerprint, "init": source,
    }
    if not args.no_save:
        ref = save_foundation(
            args.store, backbone, image_tower=args.image_tower, class_names=names,
            prompts=class_prompts(names),
            metadata={"metrics": summary, "training": {**cfg, "log": log["log"]},
                      "dataset_fingerprint": fingerprint})
        summary["version"], summary["path"] = ref.version, str(ref.path)
    print(json.dumps(summary), flush=True)
    return summary
