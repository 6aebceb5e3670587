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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from model_store.clip import ClipBackbone
from model_store.kinds import FOUNDATION

KIND = FOUNDATION
TEMPLATES = ("a picture of a {}.", "a photo of a {}.", "a drawing of a {}.", "an image of a {}.")


def augment(gray: np.ndarray | torch.Tensor, gen: torch.Generator, size: int = 32) -> torch.Tensor:
    """Grayscale (n, h, w) uint8 -> coloured (n, size, size, 3) uint8 with random styles.

    Each image gets its own foreground and background colour (sometimes inverted, i.e. dark
    strokes on a light ground), a random contrast, pixel noise and a random placement. Written in
    torch, batched, on the images' device with ``gen`` on that device, so a GPU run draws its
    batches without a per-image Python loop (numpy on the host capped an H100 at ~25 steps/s).
    """
    gray = torch.as_tensor(gray)
    n, h, w = gray.shape
    if h > size or w > size:
        raise ValueError(f"public images must be at most {size}x{size}, got {h}x{w}")
    dev = gray.device

    def uniform(*shape: int, lo: float = 0.0, hi: float = 1.0) -> torch.Tensor:
        return torch.rand(shape, generator=gen, device=dev) * (hi - lo) + lo

    alpha = gray.float() / 255.0
    alpha = ((alpha - 0.5) * uniform(n, 1, 1, lo=0.6, hi=1.6) + 0.5).clamp(0.0, 1.0)
    fg, bg = uniform(n, 1, 1, 3), uniform(n, 1, 1, 3)
    swap = (uniform(n) < 0.5).view(n, 1, 1, 1)
    fg, bg = torch.where(swap, bg, fg), torch.where(swap, fg, bg)
    bg = torch.where((fg - bg).abs().sum(-1, keepdim=True) < 0.6, 1.0 - fg, bg)
    ys = torch.randint(0, size - h + 1, (n, 1), generator=gen, device=dev)
    xs = torch.randint(0, size - w + 1, (n, 1), generator=gen, device=dev)
    grid = torch.arange(size, device=dev).view(1, size)
    rows, cols = grid - ys, grid - xs  # source pixel of each canvas pixel, per image
    inside = (((rows >= 0) & (rows < h)).view(n, size, 1)
              & ((cols >= 0) & (cols < w)).view(n, 1, size))
    canvas = alpha[torch.arange(n, device=dev).view(n, 1, 1), rows.clamp(0, h - 1).view(n, size, 1),
                   cols.clamp(0, w - 1).view(n, 1, size)] * inside
    a = canvas[..., None]
    out = a * fg + (1 - a) * bg
    out = out + torch.randn(out.shape, generator=gen, device=dev) * uniform(n, 1, 1, 1, hi=0.08)
    return (out.clamp(0.0, 1.0) * 255).to(torch.uint8)


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


def _step(backbone: ClipBackbone, pooled: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
          gen: torch.Generator) -> torch.Tensor:
    """Loss of one batch: images vs one random template per class."""
    model = backbone.model
    choice = torch.randint(0, pooled.shape[1], (pooled.shape[0],), generator=gen,
                           device=gen.device).to(pooled.device)
    txt = F.normalize(model.text.proj(pooled[torch.arange(pooled.shape[0]), choice]), dim=-1)
    img = F.normalize(model.encode_image(backbone.preprocess(x)), dim=-1)
    logits = model.logit_scale.exp().clamp(max=100) * img @ txt.T
    return F.cross_entropy(logits.float(), y.to(logits.device))


def _optimiser(params: list[torch.nn.Parameter], cfg: dict[str, Any]) -> tuple[Any, Any]:
    """AdamW with a 5 % linear warm-up, then a cosine decay to zero over ``cfg['steps']``."""
    steps = int(cfg["steps"])
    opt = torch.optim.AdamW(params, lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps // 20)) * 0.5
        * (1 + math.cos(math.pi * s / max(1, steps))))
    return opt, sched


def train_foundation(backbone: ClipBackbone, images: np.ndarray, labels: np.ndarray,
                     class_names: list[str], cfg: dict[str, Any],
                     on_snapshot: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Align the towers contrastively on public grayscale images; return a training log.

    The images live on the backbone's device and batches are drawn and augmented there (bf16
    autocast on CUDA). ``on_snapshot(n)`` runs after ``n`` steps for each ``n`` in
    ``cfg['snapshot_steps']``, e.g. to score and export the towers part-way along one schedule.
    """
    dev, seed = backbone.device, int(cfg.get("seed", 0))
    gen = torch.Generator(device=dev).manual_seed(seed)
    torch.manual_seed(seed)
    model = backbone.model
    for p in model.text.transformer.parameters():
        p.requires_grad_(False)
    pooled = pooled_prompts(backbone, class_names).to(dev)
    opt, sched = _optimiser([p for p in model.parameters() if p.requires_grad], cfg)
    steps, bs = int(cfg["steps"]), int(cfg["batch_size"])
    snaps = set(cfg.get("snapshot_steps") or ())
    x_all, y_all = torch.as_tensor(images).to(dev), torch.as_tensor(labels).long().to(dev)
    log, t0 = [], time.perf_counter()
    model.train()
    model.text.transformer.eval()
    for step in tqdm(range(steps), desc="foundation", unit="step", mininterval=5):
        idx = torch.randint(0, len(y_all), (bs,), generator=gen, device=dev)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            loss = _step(backbone, pooled, augment(x_all[idx], gen), y_all[idx], gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % max(1, steps // 10) == 0 or step == steps - 1:
            secs = time.perf_counter() - t0
            log.append({"step": step, "loss": float(loss.detach()), "seconds": round(secs, 1),
                        "images_per_s": round((step + 1) * bs / max(secs, 1e-9))})
            tqdm.write(json.dumps(log[-1]))
        if on_snapshot is not None and step + 1 in snaps:
            on_snapshot(step + 1)
            model.train()
            model.text.transformer.eval()
    model.eval()
    backbone.weights_changed()
    return {"log": log, "seconds": time.perf_counter() - t0, "images_seen": steps * bs}


def _initial_backbone(args: Any) -> tuple[ClipBackbone, dict[str, Any]]:
    """The backbone to train from: ``--init`` (a stored foundation, a ``local-dir:`` bundle, or
    ``trained:FILE`` from :func:`trained.export_trained`) or a fresh default CLIP."""
    from model_store.clip import build_default_clip
    from trainer.federated.data import load_backbone
    from trainer.federated.trained import load_trained

    init = args.init or ""
    if init and not init.startswith("trained:"):
        spec = init if init.startswith("local-dir:") or init == "latest" else f"foundation:{init}"
        backbone, source = load_backbone(spec, args.store, args.device)
        vision = backbone.model_cfg["vision_cfg"]
        args.image_tower = vision.get("timm_model_name") or ("vit" if "width" in vision
                                                             else "custom")
        return backbone, source
    backbone = build_default_clip(args.image_tower, args.embed_dim, args.image_size, args.device,
                                  vit_layers=getattr(args, "vit_layers", None))
    if not init:
        return backbone, {"spec": "default"}
    try:
        sha = load_trained(backbone, init.removeprefix("trained:"))
    except ValueError as exc:
        raise SystemExit(f"--init {init}: {exc}") from exc
    return backbone, {"spec": "trained", "file": Path(init[8:]).name, "sha256": sha}


def _snapshotter(args: Any, backbone: ClipBackbone, val: tuple[np.ndarray, np.ndarray],
                 names: list[str], records: list[dict[str, Any]]) -> Callable[[int], None]:
    """A ``train_foundation`` snapshot hook: score public validation, export if ``--export-dir``."""
    from trainer.federated.trained import export_trained

    def snapshot(step: int) -> None:
        rec: dict[str, Any] = {"step": step, "public_val_zero_shot":
                               zero_shot_accuracy(backbone, val[0], val[1], names)}
        if args.export_dir:
            rec.update(export_trained(backbone,
                                      Path(args.export_dir) / f"trained-s{step}.safetensors"))
        records.append(rec)
        print(json.dumps(rec), flush=True)
    return snapshot


def run_foundation(args: Any) -> dict[str, Any]:
    """Train the default foundation CLIP on public data (``args``: ``tailor train foundation``'s
    options) and save it as an artifact unless ``args.no_save``.

    Returns:
        Summary dict (also printed as JSON): zero-shot accuracy on held-out public images
        before and after training, timing, snapshots, and the artifact version.
    """
    from model_store.foundation import save_foundation
    from trainer.federated.data import load_public

    images, labels, names, fingerprint = load_public(args)
    perm = np.random.default_rng(args.seed).permutation(len(labels))
    n_val = max(1, int(args.val_fraction * len(labels)))
    val, train = perm[:n_val], perm[n_val:]
    val_images = augment(images[val], torch.Generator().manual_seed(10_000 + args.seed)).numpy()
    backbone, source = _initial_backbone(args)
    before = zero_shot_accuracy(backbone, val_images, labels[val], names)
    cfg = {k: getattr(args, k) for k in ("steps", "batch_size", "lr", "weight_decay", "seed",
                                         "image_tower", "embed_dim", "image_size")}
    vision = backbone.model_cfg["vision_cfg"]  # the tower as built, whatever asked for it
    cfg["vit_layers"] = int(vision["layers"]) if "width" in vision else None
    cfg["snapshot_steps"] = sorted({*args.snapshot_steps, args.steps} if args.export_dir
                                   else set(args.snapshot_steps)) if args.steps else []
    snapshots: list[dict[str, Any]] = []
    log = train_foundation(backbone, images[train], labels[train], names, cfg,
                           _snapshotter(args, backbone, (val_images, labels[val]), names,
                                        snapshots))
    after = zero_shot_accuracy(backbone, val_images, labels[val], names)
    summary: dict[str, Any] = {
        "image_tower": args.image_tower, "public_val_zero_shot_before": before,
        "public_val_zero_shot_after": after, "train_seconds": round(log["seconds"], 1),
        "images_seen": log["images_seen"], "public_train_images": int(len(train)),
        "public_fingerprint": fingerprint, "init": source, "device": str(backbone.device),
        "snapshots": snapshots,
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
