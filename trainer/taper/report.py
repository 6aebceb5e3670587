"""Aggregate seeds (mean +- std), write the markdown report and the PNG figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from trainer.taper.config import TaperConfig

MAIN_ROWS = (
    ("standard", "Generic ResNet-18, no personalization"),
    ("selection", "Generic + classifier selection (baseline)"),
    ("taper", "TAPER (text mixer + classifier selection)"),
    ("one_basis", "Control: one basis, stage-3 loss, no mixing"),
    ("routed", "Control: stage-2 specialists routed by shard"),
    ("uniform", "Control: uniform average of specialists"),
    ("taper_no_selection", "TAPER without classifier selection"),
    ("stage1", "Stage-1 model alone (no selection)"),
)
ABLATION_ROWS = (
    ("standard", "1 Standard, w/o personalization"),
    ("selection", "2 + Classifier selection (baseline)"),
    ("naive", "3 TAPER w/ naive training & selection"),
    ("stage1", "4 TAPER at stage 1"),
    ("routed", "5 + Stage 2 & selection (routed specialists)"),
    ("uniform", "6 + uniform weight average"),
    ("no_description", "7 + fine-tuning w/o task description"),
    ("taper", "8 + Stage 3 (complete TAPER)"),
    ("bow", "9 BoW task description"),
    ("not_blockwise", "10 no block-wise mixers"),
    ("taper_no_selection", "11 - classifier selection"),
)


def _stat(values) -> dict:
    arr = np.asarray([v for v in values if v is not None and not np.isnan(v)], dtype=float)
    if arr.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "n": 0}
    return {"mean": float(arr.mean()), "std": float(arr.std()), "n": int(arr.size)}


def summarise(cfg: TaperConfig, per_seed: dict[int, dict]) -> dict:
    """Mean +- std over seeds of every table; ratio = TAPER error / selection error per seed."""
    seeds = list(per_seed)
    runs = [per_seed[s] for s in seeds]
    methods = runs[0]["main"].keys()
    ratios = [(1 - r["main"]["taper"]) / max(1 - r["main"]["selection"], 1e-9) for r in runs]
    domains = runs[0]["per_domain"]["taper"].keys()
    return {
        "config": cfg.name, "k": cfg.k, "seeds": seeds, "budget_epochs": cfg.budget,
        "main": {m: _stat([r["main"].get(m) for r in runs]) for m in methods},
        "ratio": _stat(ratios), "ratio_per_seed": ratios,
        "one_basis_ratio": _stat([(1 - r["main"]["one_basis"]) / max(1 - r["main"]["selection"],
                                  1e-9) for r in runs if "one_basis" in r["main"]]),
        "per_domain": {m: {d: _stat([r["per_domain"][m][d] for r in runs]) for d in domains}
                       for m in ("selection", "taper", "one_basis", "routed") if m in methods},
        "domain_free": {m: _stat([r["domain_free"][m] for r in runs])
                        for m in ("selection", "taper", "one_basis") if m in methods},
        "dynamic": {k: {m: _stat([r["dynamic"][k][m] for r in runs]) for m in v}
                    for k, v in runs[0]["dynamic"].items()},
        "cross_group": {m: _stat([r.get("cross_group", {}).get(m) for r in runs])
                        for m in runs[0].get("cross_group", {})},
        "free_language": {key: _stat([r["free_language"][key] for r in runs])
                          for key in runs[0]["free_language"]},
        "self_improvement": np.mean([r["self_improvement"] for r in runs], 0).tolist(),
        "val": {m: _stat([r["val"][m] for r in runs]) for m in runs[0]["val"]},
        "train_minutes": _stat([r.get("train_seconds", 0) / 60 for r in runs]),
    }


def passes(cfg: TaperConfig, method: str) -> float:
    """Training passes over the data behind a row: the controls built from stage 1 and the
    specialists stop before stage 3, so they get fewer than TAPER and the baseline (issue 14
    §7: every row says its budget)."""
    if method == "stage1":
        return cfg.stage1_epochs
    if method in ("routed", "uniform"):
        return cfg.stage1_epochs + cfg.stage2_epochs
    if method == "naive" and cfg.naive_epochs:
        return cfg.naive_epochs
    return cfg.budget


def _fmt(stat: dict, pct: bool = True) -> str:
    if not stat or stat.get("n", 0) == 0:
        return "n/a"
    scale = 100 if pct else 1
    return f"{stat['mean'] * scale:.2f} ± {stat['std'] * scale:.2f}"


def markdown(cfg: TaperConfig, summary: dict, ablation: dict | None) -> str:
    """The report tables (accuracy %, mean ± std over seeds)."""
    s = summary
    lines = [f"# TAPER on Tailor-PACS — config `{cfg.name}`", "",
             f"k = {cfg.k}, width = {cfg.width}, seeds = {s['seeds']}, budget = "
             f"{cfg.budget:g} epochs per method (stage 1/2/3 = {cfg.stage1_epochs:g}/"
             f"{cfg.stage2_epochs:g}/{cfg.stage3_epochs:g}, Q shards by {cfg.shard_by}).", "",
             f"**Error ratio TAPER ÷ selection: {_fmt(s['ratio'], False)}** "
             f"(per seed {[round(r, 3) for r in s['ratio_per_seed']]}); one-basis control ÷ "
             f"selection: {_fmt(s['one_basis_ratio'], False)}.", "",
             "## Main table (test tasks, accuracy %)", "",
             "± is the standard deviation over seeds with ddof = 0 (population), in every table.",
             "", "| method | acc | passes |", "|---|---|---|"]
    lines += [f"| {label} | {_fmt(s['main'][m])} | {passes(cfg, m):g} |"
              for m, label in MAIN_ROWS if m in s["main"]]
    doms = list(next(iter(s["per_domain"].values())))
    lines += ["", "## Per-domain (domain-fixed test tasks)", "",
              "| method | " + " | ".join(doms) + " | domain-free tasks |",
              "|---" * (len(doms) + 2) + "|"]
    for m, row in s["per_domain"].items():
        free = _fmt(s["domain_free"][m]) if m in s["domain_free"] else "n/a"
        lines.append(f"| {m} | " + " | ".join(_fmt(row[d]) for d in doms) + f" | {free} |")
    ks = list(s["dynamic"])
    lines += ["", "## Dynamic way", "", "| method | " + " | ".join(f"k={k}" for k in ks) + " |",
              "|---" * (len(ks) + 1) + "|"]
    for m in next(iter(s["dynamic"].values())):
        lines.append(f"| {m} | " + " | ".join(_fmt(s["dynamic"][k][m]) for k in ks) + " |")
    if s.get("cross_group"):
        lines += ["", f"## Cross-group tasks (k={cfg.k}; other classes from any group)", "",
                  "| method | accuracy % |", "|---|---|"]
        lines += [f"| {m} | {_fmt(v)} |" for m, v in s["cross_group"].items()]
    fl = s["free_language"]
    lines += ["", "## Free-language descriptions (§5.1)", "",
              f"class names: {_fmt(fl['names_acc'])} %, definitions: "
              f"{_fmt(fl['definitions_acc'])} %, mixer cosine similarity: "
              f"{_fmt(fl['mixer_cosine'], False)}", "",
              "## Self-improvement without descriptions (§5.2)", "",
              "accuracy after 0..n unlabeled test batches: "
              + ", ".join(f"{100 * v:.1f}" for v in s["self_improvement"]), ""]
    if ablation:
        lines += ["## Ablations (Table 6 style, seed "
                  f"{ablation['seed']})", "", "| row | acc |", "|---|---|"]
        lines += [f"| {label} | {100 * ablation['main'][m]:.2f} |"
                  for m, label in ABLATION_ROWS if m in ablation["main"]]
        if cfg.naive_epochs and cfg.naive_epochs != cfg.budget:
            lines += ["", f"Row 3 (naive) was trained for {cfg.naive_epochs:g} epochs, not the "
                      f"full {cfg.budget:g}-epoch budget (CPU time ran out): a lower bound."]
    return "\n".join(lines) + "\n"


def write_report(out_dir: Path, cfg: TaperConfig, summary: dict, per_seed: dict,
                 methods: dict, class_names: list[str] | None = None) -> None:
    """report.md + PNGs (curves, mixer heatmap, basis similarity, self-improvement)."""
    from trainer.taper.plots import plot_all
    from trainer.taper.scoring import basis_similarity

    first_seed = next(iter(per_seed))
    first = per_seed[first_seed]
    ablation = {"seed": first_seed, "main": first["main"]} if "naive" in first["main"] else None
    summary["basis_similarity"] = basis_similarity(methods["taper"])
    (out_dir / "report.md").write_text(markdown(cfg, summary, ablation))
    curves = json.loads((out_dir / f"seed{first_seed}" / "curves.json").read_text())
    plot_all(out_dir, curves, first["mixers"], summary, class_names)
