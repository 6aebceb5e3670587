"""``tailor train perfix``: argument parsing only; the work is in
:func:`trainer.perfix.experiment.run_benchmark`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from model_store.perfix import METHODS
from trainer.perfix.experiment import SETTINGS, run_benchmark


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tailor train perfix",
                                description="FedPerfix vs partial-personalization baselines on "
                                            "a ViT foundation, on Flower.")
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--out", default="benchmarks/results/fedperfix")
    p.add_argument("--pacs-npz", default=None)
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--backbone", default="latest",
                   help="a ViT foundation: 'latest', foundation:<version> or local-dir:/path")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--settings", nargs="+", default=["label"], choices=list(SETTINGS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--per-class", type=int, default=40,
                   help="images per class drawn from Tailor-PACS (a CPU budget)")
    p.add_argument("--num-clients", type=int, default=12)
    p.add_argument("--alpha", type=float, default=0.1, help="Dirichlet label skew")
    p.add_argument("--fraction", type=float, default=0.34, help="clients trained per round")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--local-epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--rank", type=int, default=64, help="FedPerfix adapter bottleneck")
    p.add_argument("--scale", type=float, default=0.8, help="FedPerfix's s")
    p.add_argument("--num-tokens", type=int, default=8, help="vanilla prefix length")
    p.add_argument("--select", action="store_true",
                   help="choose each method's lr per setting from {0.3, 1, 3} x --lr on the "
                        "clients' validation splits (first seed), then run every seed")
    p.add_argument("--init-stability", action="store_true",
                   help="rerun vanilla_prefix and fedperfix with two other initial draws")
    p.add_argument("--save", default=None, metavar="METHOD",
                   help="write METHOD's first-seed label-skew federation (the averaged ViT and "
                        "every client's local part) as the 'perfix' artifact in --store")
    p.add_argument("--num-cpus", type=int, default=2)
    p.add_argument("--backend", default="ray", choices=("ray", "inline"),
                   help="Flower's Ray simulation engine, or the same apps in this process")
    return p


def perfix_main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write ``report.md``, ``results.json`` and PNGs under ``--out``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.save and (args.save not in args.methods or "label" not in args.settings):
        parser.error(f"--save {args.save!r} needs that method and the label setting to run")
    args.command = "tailor train perfix " + shlex.join(argv)
    return run_benchmark(args)
