"""TAPER training variants × seeds: the price of plain scans (§6) and of dynamic-way tasks (§7).

    .venv/bin/python benchmarks/taper_grid.py [--variants p0,p0.1,p0.2,dyn] [--seeds 0,1,2]
        [--jobs 6] [--device auto] [--config default] [--class-text FILE]
        [--out benchmarks/results/taper_grid] [--collect]

Each (variant, seed) trains the named config with ``tailor train taper`` (controls off, its own
run directory and model store) and then scores the artifact's generic model on plain scans with
``benchmarks/plain_images.py``; ``--jobs`` runs go at once (one GPU holds several: a 12-pass
default run leaves an H100 mostly idle). A run whose two JSON files exist is read, not retrained,
so a grid can be filled over several calls and ``--collect`` only tabulates. The dataset is
built once before the runs start, so parallel runs do not race to write it.

Why a grid and not single runs: every ``plain_prob`` > 0 changes the augmentation's random
stream, so one seed cannot tell the share's effect from the stream's (``docs/results-taper.md``).
Writes ``<out>/grid.json`` and ``<out>/grid.png``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

VARIANTS = {
    "p0": ["plain_prob=0"],  # the control: the shipped configs
    "p0.1": ["plain_prob=0.1"],
    "p0.2": ["plain_prob=0.2"],
    "dyn": ["train_ks=3,5,10", "cross_group_prob=0.3"],  # §7's dynamic-way training tasks
}
VIEWS = ("rendered", "plain", "plain inverted")


def run_one(tag: str, seed: int, args: argparse.Namespace) -> None:
    """Train one (variant, seed) and score its artifact on plain scans (in this process)."""
    from benchmarks.plain_images import main as plain_main
    from trainer.taper.train import main as train_main

    out, res = Path(args.out), Path(args.out) / "res"
    run_dir, name = out / "runs" / f"{tag}-s{seed}", f"{tag}-s{seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    if args.class_text:
        shutil.copy(args.class_text, run_dir / "class_text.safetensors")
    argv = ["--config", args.config, "--seeds", str(seed), "--out", str(run_dir),
            "--store-dir", str(out / "stores" / name), "--data-dir", args.data_dir,
            "--device", args.device, "--threads", str(args.threads), "--set", "controls=false"]
    for item in VARIANTS[tag]:
        argv += ["--set", item]
    summary = train_main(argv)
    res.mkdir(parents=True, exist_ok=True)
    (res / f"{name}-summary.json").write_text(json.dumps(summary, indent=1))
    plain_main(["--store", str(out / "stores" / name), "--data-dir", args.data_dir,
                "--size", args.size, "--out", str(res / f"{name}-plain.json")])


def launch(tag: str, seed: int, args: argparse.Namespace, argv: list[str]) -> int:
    """One run as a child process (its own CUDA context) given this call's own arguments, its
    log beside the results."""
    log = Path(args.out) / "logs" / f"{tag}-s{seed}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, __file__, "--one", tag, str(seed), *argv]
    with log.open("w") as fh:
        return subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT)


def _done(out: Path, name: str) -> bool:
    return all((out / "res" / f"{name}-{part}.json").exists() for part in ("summary", "plain"))


def _stat(values: list[float]) -> dict:
    arr = 100 * np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std()), "n": int(arr.size)}


def collect(out: Path, tags: list[str], seeds: list[int]) -> dict:
    """Per variant, over the seeds that ran: task accuracies (test, val, the dynamic table's row
    at the config's k, the cross-group table) and plain-scan accuracies per class group and view."""
    rows = {}
    for tag in tags:
        names = [f"{tag}-s{s}" for s in seeds if _done(out, f"{tag}-s{s}")]
        if not names:
            continue
        runs = [json.loads((out / "res" / f"{n}-summary.json").read_text()) for n in names]
        plains = [json.loads((out / "res" / f"{n}-plain.json").read_text()) for n in names]
        tasks = {}
        for method in ("selection", "taper"):
            tasks[method] = {
                "test": _stat([r["main"][method]["mean"] for r in runs]),
                "val": _stat([r["val"][method]["mean"] for r in runs]),
                "k": _stat([r["dynamic"][str(r["k"])][method]["mean"] for r in runs]),
                "cross": _stat([r["cross_group"][method]["mean"] for r in runs])}
        groups = plains[0]["scores"]["rendered"].keys()
        plain = {view: {g: _stat([p["scores"][view][g]["within_group"] / 100 for p in plains])
                        for g in groups} for view in VIEWS}  # fmt: skip
        rows[tag] = {"settings": VARIANTS[tag], "seeds": len(names), "tasks": tasks,
                     "plain_within_group": plain, "runtime": runs[0].get("runtime")}
    return rows


def _cell(s: dict) -> str:
    return f"{s['mean']:.1f} ± {s['std']:.1f}"


def table(rows: dict) -> str:
    """Two markdown tables: task accuracy per variant, then plain scans per group."""
    lines = ["| variant | seeds | selection test | TAPER test | selection val | TAPER val | "
             "TAPER, config's k | cross-group: selection / TAPER |", "|---" * 8 + "|"]
    for tag, r in rows.items():
        t = r["tasks"]
        lines.append(f"| {tag} ({', '.join(r['settings'])}) | {r['seeds']} | "
                     f"{_cell(t['selection']['test'])} | {_cell(t['taper']['test'])} | "
                     f"{_cell(t['selection']['val'])} | {_cell(t['taper']['val'])} | "
                     f"{_cell(t['taper']['k'])} | {_cell(t['selection']['cross'])} / "
                     f"{_cell(t['taper']['cross'])} |")  # fmt: skip
    lines += ["", "generic model, test split, accuracy % within the class group",
              "| variant | group | " + " | ".join(VIEWS) + " |", "|---" * (2 + len(VIEWS)) + "|"]
    for tag, r in rows.items():
        for g in r["plain_within_group"]["rendered"]:
            cells = [_cell(r["plain_within_group"][v][g]) for v in VIEWS]
            lines.append(f"| {tag} | {g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows: dict, path: Path) -> None:
    """Within-group accuracy per view, one panel per class group, a bar per variant (± std)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(next(iter(rows.values()))["plain_within_group"]["rendered"])
    fig, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.5), sharey=True)
    width = 0.8 / len(rows)
    for ax, g in zip(np.atleast_1d(axes), groups, strict=True):
        for i, (tag, r) in enumerate(rows.items()):
            stats = [r["plain_within_group"][v][g] for v in VIEWS]
            ax.bar(np.arange(len(VIEWS)) + i * width, [s["mean"] for s in stats], width,
                   yerr=[s["std"] for s in stats], label=tag, capsize=2)
        ax.set_xticks(np.arange(len(VIEWS)) + width * (len(rows) - 1) / 2, VIEWS)
        ax.set_title(g)
    np.atleast_1d(axes)[0].set_ylabel("test accuracy % (within group)")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", default="p0,p0.1,p0.2,dyn")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--jobs", type=int, default=1, help="runs at once")
    p.add_argument("--threads", type=int, default=2, help="CPU threads per run")
    p.add_argument("--config", default="default")
    p.add_argument("--size", default="default", help="the config's Tailor-PACS size")
    p.add_argument("--device", default="auto")
    p.add_argument("--data-dir", default=".tailor/data")
    p.add_argument("--class-text", default=None, help="precomputed class text (no MiniLM)")
    p.add_argument("--out", default="benchmarks/results/taper_grid")
    p.add_argument("--collect", action="store_true", help="only tabulate what --out holds")
    p.add_argument("--one", nargs=2, metavar=("VARIANT", "SEED"), help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = p.parse_args(argv)
    if args.one:
        run_one(args.one[0], int(args.one[1]), args)
        return {}
    tags, seeds = args.variants.split(","), [int(s) for s in args.seeds.split(",")]
    unknown = sorted(set(tags) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; expected some of {sorted(VARIANTS)}")
    out = Path(args.out)
    todo = [(t, s) for t in tags for s in seeds if not _done(out, f"{t}-s{s}")]
    if todo and not args.collect:
        from trainer.data.pacs import build_pacs

        build_pacs(args.data_dir, size=args.size)
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            codes = list(pool.map(lambda ts: launch(*ts, args, argv), todo))
        print(f"{sum(c == 0 for c in codes)} of {len(todo)} runs finished (logs: {out}/logs)")
    rows = collect(out, tags, seeds)
    if not rows:
        raise SystemExit(f"no finished runs under {out}")
    print(table(rows))
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid.json").write_text(json.dumps(rows, indent=1))
    plot(rows, out / "grid.png")
    print(f"wrote {out / 'grid.json'} and {out / 'grid.png'}")
    return rows


if __name__ == "__main__":
    main()
