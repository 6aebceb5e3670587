"""``tailor train anytime``: argument parsing only; the work is in
:func:`trainer.anytime.experiment.run_benchmark`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from trainer.anytime.experiment import METHODS, PARTITIONS, SETTINGS, run_benchmark
from trainer.federated.cli import add_personal_args


def _folds(text: str) -> int:
    """``--personal-folds``: an integer of at least 2 (one fold holds nothing out)."""
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"needs at least 2 folds, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train anytime",
                                description="Anytime federated benchmark (Accumulator + "
                                            "baselines) on a ViT foundation, on Flower.")
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--out", default="benchmarks/results/anytime")
    p.add_argument("--pacs-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--backbone", default="latest",
                   help="a ViT foundation: 'latest', foundation:<version> or local-dir:/path")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--per-class", type=int, default=60,
                   help="images per class drawn from Tailor-PACS (a CPU budget)")
    p.add_argument("--partition", default="dirichlet", choices=PARTITIONS,
                   help="dirichlet: domains pooled, label skew over --num-clients clients; "
                        "domains: one client per domain (--num-clients and --alpha unused)")
    p.add_argument("--num-clients", type=int, default=8)
    p.add_argument("--alpha", type=float, default=1.0, help="Dirichlet label skew")
    p.add_argument("--fraction", type=float, default=0.5, help="clients sampled per round")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--local-epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lr-finetune", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--adapter-rank", type=int, default=16)
    add_personal_args(p)
    p.add_argument("--personal-gate", default="val", choices=("val", "crossfit"),
                   help="judge personalisation on the val split, or cross-fitted on every "
                        "train+val image (--personal-folds folds; the val gate is recorded too)")
    p.add_argument("--personal-folds", type=_folds, default=5,
                   help="folds of the cross-fitted gate (>= 2; a smaller client: leave-one-out)")
    p.add_argument("--save", default=None, metavar="SETTING/METHOD",
                   help="write that federation (first seed: global + personalised per client) "
                        "as the 'anytime' artifact in --store, e.g. anytime/accumulator_pa")
    p.add_argument("--select", action="store_true",
                   help="choose each method's lr per setting from {0.3, 1, 3} x its default, "
                        "and the number of rounds (up to --rounds), on the clients' validation "
                        "splits (first seed), then run every seed")
    p.add_argument("--num-cpus", type=int, default=2,
                   help="simulated clients run at once (one CPU each, sharing the GPU if any)")
    p.add_argument("--backend", default="ray", choices=("ray", "inline"),
                   help="Flower's Ray simulation engine, or the same apps in this process, "
                        "clients in turn (no Ray needed: a GPU box without it, quick checks)")
    p.add_argument("--device", default="auto",
                   help="where clients train and the foundation runs: auto (CUDA when "
                        "present), cpu, cuda, cuda:N")
    return p


def anytime_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write ``report.md``, ``results.json`` and PNGs under ``--out``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.save and args.save not in {f"{s}/{m}" for s in args.settings for m in args.methods}:
        parser.error(f"--save {args.save!r} is not one of the runs (SETTING/METHOD)")
    args.command = "tailor train anytime " + shlex.join(argv)
    return run_benchmark(args)
