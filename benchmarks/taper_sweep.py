"""Compare finished TAPER benchmark runs (e.g. a width or sharding sweep): table, JSON and PNG.

Each run directory is one ``benchmarks/taper.py --out DIR`` run; this script only reads their
``summary.json`` and ``config.json``, so it costs nothing and never re-trains. Usage::

    .venv/bin/python benchmarks/taper_sweep.py benchmarks/results/taper-w4 \
        benchmarks/results/taper-w8 benchmarks/results/taper-w8-group \
        benchmarks/results/taper-pacs benchmarks/results/taper-pacs-group

Writes ``benchmarks/results/taper-sweep/{sweep.json,sweep.png}``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("selection", "taper", "one_basis", "routed", "uniform")


def load_run(run_dir: Path) -> dict:
    """One row: the run's config knobs that vary in a sweep, and its error ratios."""
    summary = json.loads((run_dir / "summary.json").read_text())
    cfg = json.loads((run_dir / "config.json").read_text())
    main = summary["main"]
    sel_err = 1 - main["selection"]["mean"]
    return {
        "run": run_dir.name, "width": cfg["width"], "shard_by": cfg["shard_by"],
        "budget": cfg["stage1_epochs"] + cfg["stage2_epochs"] + cfg["stage3_epochs"],
        "seeds": summary["ratio"]["n"], "ratio": summary["ratio"]["mean"],
        "ratio_std": summary["ratio"]["std"],
        "one_basis_ratio": (1 - main["one_basis"]["mean"]) / sel_err,
        "acc": {m: round(100 * main[m]["mean"], 2) for m in METHODS if m in main},
    }  # fmt: skip


def plot(rows: list[dict], path: Path) -> None:
    """Error ratio TAPER ÷ selection per run, with the 1.0 line the method has to beat."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = [f"w{r['width']} {r['shard_by']}\n{r['budget']:g} passes" for r in rows]
    ax.bar(labels, [r["ratio"] for r in rows], yerr=[r["ratio_std"] for r in rows], capsize=4,
           label="TAPER ÷ selection")  # fmt: skip
    ax.plot(labels, [r["one_basis_ratio"] for r in rows], "k_", markersize=20,
            label="one-basis control ÷ selection")  # fmt: skip
    ax.axhline(1.0, color="red", lw=1, ls="--", label="parity (goal: below)")
    ax.set_ylim(0.9, max(1.15, max(r["ratio"] + r["ratio_std"] for r in rows) + 0.02))
    ax.set_ylabel("test error ratio (k=5)")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    """Print the sweep table and write JSON + PNG."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/taper-sweep")
    args = p.parse_args(argv)
    rows = [load_run(r) for r in args.runs]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep.json").write_text(json.dumps(rows, indent=1))
    plot(rows, args.out / "sweep.png")
    print("| run | width | shards | passes | seeds | selection | TAPER | one basis | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a = r["acc"]
        print(f"| {r['run']} | {r['width']} | {r['shard_by']} | {r['budget']:g} | {r['seeds']} "
              f"| {a['selection']} | {a['taper']} | {a['one_basis']} "
              f"| {r['ratio']:.3f} ± {r['ratio_std']:.3f} |")  # fmt: skip
    print(f"wrote {args.out / 'sweep.json'} and {args.out / 'sweep.png'}")


if __name__ == "__main__":
    main()
