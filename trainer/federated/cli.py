"""Entry points: ``tailor train foundation`` (:func:`foundation_main`) and ``tailor train
federated`` (:func:`federated_main`), each ``main(argv)`` so a test can run a tiny job on CPU."""

from __future__ import annotations

import argparse
import os
from typing import Any

from model_store.clip import IMAGE_TOWERS
from trainer.federated import foundation as fnd


def _non_negative(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def add_personal_args(p: argparse.ArgumentParser) -> None:
    """Local personalisation after federation, shared by ``federated`` and ``anytime``."""
    p.add_argument("--personal-epochs", type=int, default=5,
                   help="local epochs after federation; the best on the client's val is kept")
    p.add_argument("--personal-min-z", type=_non_negative, default=0.0,
                   help="keep a personalised epoch only when its paired val gain over the "
                        "global model exceeds this many standard errors (0: any gain)")


def _foundation_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train foundation", description=fnd.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--public-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--image-tower", "--arch", dest="image_tower", default="efficientnet_lite0",
                   choices=IMAGE_TOWERS,
                   help="image tower; 'vit' is open_clip's ViT (32x32, patch 4, width 192, "
                        "6 blocks), trained from scratch")
    p.add_argument("--vit-layers", type=int, default=None,
                   help="blocks of the ViT tower (default 6); each block is one more exit for "
                        "the anytime methods")
    p.add_argument("--init", default=None,
                   help="continue from a foundation: 'latest', a version, local-dir:/path, or "
                        "trained:FILE (towers exported by --export-dir, e.g. on a GPU machine)")
    p.add_argument("--embed-dim", type=int, default=256)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--val-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None)
    p.add_argument("--no-save", action="store_true",
                   help="train and report, save no artifact (--export-dir still writes its files)")
    p.add_argument("--snapshot-steps", type=int, nargs="*", default=[],
                   help="also score public validation after these many steps")
    p.add_argument("--export-dir", default=None,
                   help="write the trained towers (no frozen MiniLM, ~11 MB for the ViT) at each "
                        "snapshot and at the end, as trained-s<step>.safetensors")
    return p


def foundation_main(argv: list[str] | None = None) -> dict[str, Any]:
    """``tailor train foundation``: parse the options, then ``foundation.run_foundation``."""
    parser = _foundation_parser()
    args = parser.parse_args(argv)
    if args.vit_layers is not None and (args.image_tower != "vit" or args.vit_layers < 1):
        parser.error("--vit-layers takes a positive block count, with --arch vit only")
    if args.vit_layers is not None and args.init and not args.init.startswith("trained:"):
        parser.error("--vit-layers shapes a new tower; a stored foundation (--init) keeps its own")
    return fnd.run_foundation(args)


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
    add_personal_args(p)
    p.add_argument("--dirichlet-alpha", type=float, default=0.5)
    p.add_argument("--no-deploy", action="store_true", help="skip the 4-client artifact run")
    p.add_argument("--backend", default="ray", choices=("ray", "inline"),
                   help="Flower's Ray simulation engine, or the same apps in this process")
    p.add_argument("--select", "--select-lr", dest="select", action="store_true",
                   help="choose lr (from {0.3, 1, 3} x its default), FedProx's mu and the number "
                        "of rounds per task, on that task's participants' val splits (seed 0)")
    p.add_argument("--max-rounds", type=int, default=12,
                   help="with --select: rounds each candidate runs; the best round on val is kept")
    p.add_argument("--mu-grid", type=float, nargs="+", default=[0.001, 0.01, 0.1])
    p.add_argument("--device", default=None)
    return p


def federated_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, write the report, and save deployable adapters (see
    :mod:`trainer.federated.run`)."""
    from trainer.federated.run import run_benchmark

    return run_benchmark(_federated_parser().parse_args(argv))
