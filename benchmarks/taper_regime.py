"""Is TAPER's gap to the generic model compute or method? The error ratio against budget and data.

    .venv/bin/python benchmarks/taper_regime.py [--sizes default,large] [--budgets 12,24,48]
        [--seeds 0,1] [--widths 64] [--device auto] [--out benchmarks/results/taper_regime]
    .venv/bin/python benchmarks/taper_regime.py --data .tailor/glyphs/images \
        --catalogue .tailor/glyphs/catalogue.json --sizes default --widths 4 ...  # both

For every Tailor-PACS size and budget (full passes over the training split, split 8:2:2 between
stages 1, 2 and 3 as in the ``default`` config; the generic baseline continues stage 1 for the
same passes), trains TAPER and the generic model at stock width with ``tailor train taper`` and
reports TAPER error ÷ selection error on the fixed test tasks (< 1: TAPER better), mean ± std over
seeds (ddof 0, as every TAPER report). Controls are skipped (they do not enter the ratio) and no
artifact is written. Each (size, budget, seed) is its own run directory and resumes: one whose
``summary.json`` exists is read, not retrained, so a grid can be filled over several sessions
(or machines) and ``--collect`` only tabulates what ``--out`` holds.

``--class-text FILE`` copies precomputed class-text embeddings (a run's
``class_text.safetensors``) into each run directory, so a machine without the MiniLM weights can
run it; with ``TAILOR_SOURCES`` (``tailor data export-sources``) it also needs no data packages.
``--data PATH --catalogue FILE`` trains on an image tree instead (``tailor train taper --data``;
``benchmarks/glyph_catalogue.py`` writes a fine-grained one), labelled by the tree's parent folder
name (with ``--sizes`` also given, both are run and drawn in one plot); specialists are always
one per group. ``--widths`` adds the network width as an axis (64 =
the stock ResNet-18; narrower ones are CPU-sized probes, labelled as such in every row).
Writes ``<out>/regime.json`` and ``<out>/regime.png``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from trainer.taper.train import main as train_main  # noqa: E402

SPLIT = (8, 2, 2)  # stage 1 : stage 2 : stage 3 passes, the default config's shares


def stage_epochs(budget: float) -> list[str]:
    """``--set`` overrides giving stages 1/2/3 the default shares of ``budget`` passes."""
    total = sum(SPLIT)
    names = ("stage1_epochs", "stage2_epochs", "stage3_epochs")
    return [f"{n}={budget * s / total:g}" for n, s in zip(names, SPLIT, strict=True)]


def run_one(size: str, width: int, budget: float, seed: int, args: argparse.Namespace) -> dict:
    """Train + score one (catalogue, width, budget, seed); its summary."""
    out = Path(args.out) / f"{size}-w{width}-b{budget:g}-s{seed}"
    legacy = Path(args.out) / f"{size}-b{budget:g}-s{seed}"  # runs from before the width axis
    if width == 64 and (legacy / "summary.json").exists():
        out = legacy
    if (out / "summary.json").exists():
        return json.loads((out / "summary.json").read_text())
    if args.collect:
        return {}
    out.mkdir(parents=True, exist_ok=True)
    if args.class_text and not (out / "class_text.safetensors").exists():
        shutil.copy(args.class_text, out / "class_text.safetensors")
    argv = ["--config", "default", "--seeds", str(seed), "--no-artifact", "--out", str(out),
            "--device", args.device, "--set", "controls=false", "--set", f"width={width}"]
    if args.data and size == data_label(args):
        argv += ["--data", args.data, "--set", "shard_by=group"]
        argv += ["--catalogue", args.catalogue] if args.catalogue else []
    else:
        argv += ["--set", f"data_size={size}"]
    if args.data_dir:
        argv += ["--data-dir", args.data_dir]
    for item in stage_epochs(budget):
        argv += ["--set", item]
    t0 = time.time()
    summary = train_main(argv)
    summary["wall_seconds"] = time.time() - t0
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def data_label(args: argparse.Namespace) -> str:
    """The table's name for ``--data``: the tree's parent folder (``.tailor/glyphs/images`` →
    glyphs)."""
    return Path(args.data).resolve().parent.name


def _stat(values: list[float]) -> dict:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std()), "n": int(arr.size)}


def row(size: str, width: int, budget: float, summaries: list[dict]) -> dict:
    """One table row: a (catalogue, width, budget) over the seeds that have run."""
    return {"size": size, "width": width, "budget": budget,
            "ratio": _stat([s["ratio"]["mean"] for s in summaries]),
            "taper": _stat([s["main"]["taper"]["mean"] for s in summaries]),
            "selection": _stat([s["main"]["selection"]["mean"] for s in summaries]),
            "routed": _stat([s["main"].get("routed", {}).get("mean", float("nan"))
                             for s in summaries]),
            "runtime": summaries[0].get("runtime", ""),
            "wall_seconds": _stat([s.get("wall_seconds", float("nan")) for s in summaries])}


def plot(rows: list[dict], path: Path) -> None:
    """Error ratio against budget, one line per data size (±std band)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for size, width in dict.fromkeys((r["size"], r["width"]) for r in rows):
        pts = sorted((r["budget"], r["ratio"]["mean"], r["ratio"]["std"]) for r in rows
                     if (r["size"], r["width"]) == (size, width))
        xs, ys, sd = zip(*pts, strict=True)
        ax.errorbar(xs, ys, yerr=sd, marker="o", capsize=3, label=f"{size}, width {width}")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("training budget (passes over the training split)")
    ax.set_ylabel("TAPER error ÷ selection error")
    ax.set_title(rows[0]["runtime"] or "TAPER regime", fontsize=8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default=None,
                   help="Tailor-PACS sizes (default: default,large; none with --data)")
    p.add_argument("--budgets", default="12,24,48")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--device", default="auto")
    p.add_argument("--widths", default="64", help="ResNet-18 base widths (64 = stock)")
    p.add_argument("--data", default=None, help="an image tree instead of Tailor-PACS")
    p.add_argument("--catalogue", default=None, help="with --data: its catalogue file")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--class-text", default=None, help="precomputed class_text.safetensors")
    p.add_argument("--out", default="benchmarks/results/taper_regime")
    p.add_argument("--collect", action="store_true", help="train nothing; tabulate --out")
    args = p.parse_args(argv)
    sizes = args.sizes.split(",") if args.sizes else [] if args.data else ["default", "large"]
    sizes += [data_label(args)] if args.data else []
    rows = []
    for size in sizes:
        for width in (int(w) for w in args.widths.split(",")):
            for budget in (float(b) for b in args.budgets.split(",")):
                done = [s for s in (run_one(size, width, budget, int(seed), args)
                                    for seed in args.seeds.split(",")) if s]
                if done:
                    rows.append(row(size, width, budget, done))
    out = Path(args.out)
    if not rows:
        print(f"no finished run under {out} for these sizes, budgets and seeds")
        return rows
    print(f"\n{rows[0]['runtime']}\n"
          "| catalogue | width | budget | seeds | selection acc | TAPER acc | routed acc "
          "| error ratio | wall s / seed |\n|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['size']} | {r['width']} | {r['budget']:g} | {r['ratio']['n']} | "
              f"{100 * r['selection']['mean']:.1f} | {100 * r['taper']['mean']:.1f} | "
              f"{100 * r['routed']['mean']:.1f} | "
              f"{r['ratio']['mean']:.3f} ± {r['ratio']['std']:.3f} | "
              f"{r['wall_seconds']['mean']:.0f} |")
    (out / "regime.json").write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))
    plot(rows, out / "regime.png")
    return rows


if __name__ == "__main__":
    main()
