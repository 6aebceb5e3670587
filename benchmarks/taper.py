"""TAPER benchmark: one command -> markdown table, JSON and PNGs under benchmarks/results/taper/.

Trains (resumably) TAPER, the generic baseline with and without classifier selection, the
controls and -- on the first seed -- the Table-6 ablations, all on the same budget, and scores
them on the same fixed held-out test tasks. Usage::

    .venv/bin/python benchmarks/taper.py                 # config "default", 3 seeds, 2 processes
    .venv/bin/python benchmarks/taper.py --config tiny   # seconds; smoke test
    .venv/bin/python benchmarks/taper.py --set width=16 --out benchmarks/results/taper-w16

Extra arguments are passed to ``tailor train taper`` (see ``--help`` there). Re-running the same
command resumes from the finished stages. The model store is not touched unless
``--artifact`` is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> None:
    """Run the benchmark and print where the report is."""
    from trainer.taper.train import main as train_main

    args = list(argv)
    if "--out" not in args:
        args += ["--out", str(ROOT / "benchmarks/results/taper")]
    if "--artifact" in args:
        args.remove("--artifact")
    else:
        args.append("--no-artifact")
    for flag, default in (("--jobs", "2"),):
        if flag not in args:
            args += [flag, default]
    if "--no-ablations" in args:
        args.remove("--no-ablations")
    elif "--ablations" not in args:
        args.append("--ablations")
    train_main(args)
    out = Path(args[args.index("--out") + 1])
    print(f"report: {out / 'report.md'}  (JSON: summary.json, figures: *.png)")


if __name__ == "__main__":
    main(sys.argv[1:])
