"""Entry points: ``tailor train foundation`` (:func:`foundation_main`) and ``tailor train
federated`` (:func:`federated_main`), each ``main(argv)`` so a test can run a tiny job on CPU."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from model_store.clip import IMAGE_TOWERS, build_default_clip
from model_store.foundation import save_foundation
from trainer.federated import foundation as fnd
from trainer.federated.data import load_backbone


def load_public(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """``(gray images (n,h,w) uint8, labels, class names, fingerprint)`` of the public set.

    ``--public-npz`` (arrays ``images``, ``labels``, ``class_names``) is for tests and for users
    with their own public data; otherwise ``trainer.data.pacs.build_public`` provides the images
    that no Tailor-PACS client holds.
    """
    if args.public_npz:
        with np.load(args.public_npz) as z:
            return (z["images"], z["labels"].astype(np.int64),
                    [str(c) for c in z["class_names"]], f"npz:{Path(args.public_npz).name}")
    try:
        from trainer.data.pacs import build_public
    except ImportError as exc:
        raise SystemExit("trainer.data.pacs.build_public is not available yet; "
                         "pass --public-npz") from exc
    pub = build_public(args.data_dir, size=args.size)
    images = pub.images if pub.images.ndim == 3 else pub.images[..., 0]
    return (images, np.asarray(pub.labels, np.int64), list(pub.class_names),
            str(getattr(pub, "fingerprint", "unknown")))


def _foundation_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train foundation", description=fnd.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--public-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--image-tower", default="efficientnet_lite0", choices=IMAGE_TOWERS)
    p.add_argument("--init", default=None,
                   help="continue from a foundation: 'latest', a version, or local-dir:/path")
    p.add_argument("--embed-dim", type=int, default=256)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--val-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None)
    p.add_argument("--no-save", action="store_true", help="train and report, write nothing")
    return p


def foundation_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train the default foundation CLIP on public data and save it as an artifact.

    Returns:
        Summary dict (also printed as JSON): zero-shot accuracy on held-out public images
        before and after training, timing, and the artifact version.
    """
    args = _foundation_parser().parse_args(argv)
    images, labels, names, fingerprint = load_public(args)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(labels))
    n_val = max(1, int(args.val_fraction * len(labels)))
    val, train = perm[:n_val], perm[n_val:]
    val_images = fnd.augment(images[val], np.random.default_rng(10_000 + args.seed))
    if args.init:
        spec = args.init if args.init.startswith("local-dir:") or args.init == "latest" \
            else f"foundation:{args.init}"
        backbone, source = load_backbone(spec, args.store, args.device)
        args.image_tower = backbone.model_cfg["vision_cfg"].get("timm_model_name", "custom")
    else:
        backbone = build_default_clip(args.image_tower, args.embed_dim, args.image_size,
                                      args.device)
        source = {"spec": "default"}
    before = fnd.zero_shot_accuracy(backbone, val_images, labels[val], names)
    cfg = {k: getattr(args, k) for k in ("steps", "batch_size", "lr", "weight_decay", "seed",
                                         "image_tower", "embed_dim", "image_size")}
    log = fnd.train_foundation(backbone, images[train], labels[train], names, cfg)
    after = fnd.zero_shot_accuracy(backbone, val_images, labels[val], names)
    summary: dict[str, Any] = {
        "image_tower": args.image_tower, "public_val_zero_shot_before": before,
        "public_val_zero_shot_after": after, "train_seconds": round(log["seconds"], 1),
        "images_seen": log["images_seen"], "public_train_images": int(len(train)),
        "public_fingerprint": fingerprint, "init": source,
    }
    if not args.no_save:
        ref = save_foundation(
            args.store, backbone, image_tower=args.image_tower, class_names=names,
            prompts=fnd.class_prompts(names),
            metadata={"metrics": summary, "training": {**cfg, "log": log["log"]},
                      "dataset_fingerprint": fingerprint})
        summary["version"], summary["path"] = ref.version, str(ref.path)
    print(json.dumps(summary), flush=True)
    return summary


def _federated_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train federated",
                                description="FedCLIP benchmark + deployable client adapters.")
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--out", default="benchmarks/results/federated")
    p.add_argument("--pacs-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--backbone", default="latest")
    p.add_argument("--methods", nargs="+", default=["fedclip", "fedclip_r32", "fedavg",
                                                    "fedprox"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--local-epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr-adapter", type=float, default=1e-3)
    p.add_argument("--lr-proj", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.2)
    p.add_argument("--mu", type=float, default=0.01)
    p.add_argument("--weighting", default="samples", choices=("samples", "uniform"))
    p.add_argument("--personal-epochs", type=int, default=5)
    p.add_argument("--dirichlet-alpha", type=float, default=0.5)
    p.add_argument("--no-deploy", action="store_true", help="skip the 4-client artifact run")
    p.add_argument("--select-lr", action="store_true",
                   help="pick each method's lr from {0.3, 1, 3} x its default on participants' "
                        "val (seed 0, first task) before the benchmark")
    p.add_argument("--device", default=None)
    return p


def federated_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, write the report, and save deployable adapters (see
    :mod:`trainer.federated.run`)."""
    from trainer.federated.run import run_benchmark

    return run_benchmark(_federated_parser().parse_args(argv))
