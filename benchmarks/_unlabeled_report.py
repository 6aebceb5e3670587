"""Tables and the Figure-3 curves of ``benchmarks/self_improvement.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

LINES = (("description", "description (upper)"), ("em_k_acc", "ours: k + domain estimated"),
         ("em_acc", "EM prior, k given"), ("relabel_acc", "paper loop + shortlist relabel"),
         ("count_acc", "paper loop (top-k counts)"), ("all_class", "all-class model (lower)"))


def _configs(rows) -> list[tuple[int, str]]:
    return sorted({(r["way"], r["scope"]) for r in rows})


def _mean(rows, key) -> float:
    vals = [float(r[key]) for r in rows if r.get(key) is not None]
    return float(np.mean(vals)) if vals else float("nan")


def plot(rows: list[dict], path: Path) -> None:
    """Accuracy against unlabeled images seen, one panel per (way, scope)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = _configs(rows)
    fig, axes = plt.subplots(1, len(configs), figsize=(4.2 * len(configs), 3.6), squeeze=False)
    for ax, (way, scope) in zip(axes[0], configs, strict=True):
        sub = [r for r in rows if r["way"] == way and r["scope"] == scope]
        ns = sorted({r["n"] for r in sub})
        for key, label in LINES:
            ys = [100 * _mean([r for r in sub if r["n"] == n], key) for n in ns]
            style = "--" if key in ("description", "all_class") else "-"
            ax.plot(ns, ys, style, marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{way}-way, {'one domain' if scope == 'domain' else 'mixed domains'}")
        ax.set_xlabel("unlabeled images seen")
        ax.set_ylabel("task accuracy (%)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _table(rows, n: int) -> list[str]:
    out = ["| task | description | **ours** | EM, k given | paper + relabel | paper | all-class "
           "| class set exact (ours / EM k given / paper) | recall (ours) | k right "
           "| domain right |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for way, scope in _configs(rows):
        sub = [r for r in rows if r["way"] == way and r["scope"] == scope and r["n"] == n]
        if not sub:
            continue
        pct = {k: 100 * _mean(sub, k) for k in ("description", "em_k_acc", "em_acc",
                                                 "relabel_acc", "count_acc", "all_class",
                                                 "em_k_exact", "em_exact", "count_exact",
                                                 "em_k_recall",
                                                 "k_ok", "domain_ok")}
        out.append(f"| {way}-way {scope} (n={n}, {len(sub)} tasks) | {pct['description']:.1f} | "
                   f"**{pct['em_k_acc']:.1f}** | {pct['em_acc']:.1f} | {pct['relabel_acc']:.1f} | "
                   f"{pct['count_acc']:.1f} | {pct['all_class']:.1f} | {pct['em_k_exact']:.0f} / "
                   f"{pct['em_exact']:.0f} / {pct['count_exact']:.0f} % | "
                   f"{pct['em_k_recall']:.1f} | {pct['k_ok']:.0f} % | "
                   f"{pct['domain_ok']:.0f} % |")
    return out


def report(result: dict) -> str:
    """The markdown report: choices on val, the n=128 table, curves summary, service."""
    rows, choice, svc = result["rows"], result["choice"], result["service"]
    lines = [f"# Self-improvement from unlabeled images ({result['artifact']}, method "
             f"{result['method']!r}, {result['seconds']:.0f} s, {result['device']})", "",
             f"Command: `{result['command']}`", "",
             f"Chosen on val tasks: min_share {choice['min_share']}, min_domain_conf "
             f"{choice['min_domain_conf']}. Val exact class sets by rule (k given, n in 32/64/"
             f"128): " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in
                                   choice["val_exact_by_rule_k_given"].items()), ""]
    lines += ["## Test tasks after 128 images", ""] + _table(rows, 128) + [""]
    lines += ["## Every n (mean over configurations)", "",
              "| n | description | ours | paper | all-class | exact (ours) | domain right |",
              "|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in rows}):
        sub = [r for r in rows if r["n"] == n]
        lines.append(f"| {n} | {100 * _mean(sub, 'description'):.1f} | "
                     f"{100 * _mean(sub, 'em_k_acc'):.1f} | {100 * _mean(sub, 'count_acc'):.1f} |"
                     f" {100 * _mean(sub, 'all_class'):.1f} | {100 * _mean(sub, 'em_k_exact'):.0f}"
                     f" % | {100 * _mean(sub, 'domain_ok'):.0f} % |")
    srows = svc["rows"]
    par, ref, old = (np.array([r[k] for r in srows]) for k in ("parent_acc", "refined_acc",
                                                               "old_refine_acc"))
    lines += ["", f"## /refine ({len(srows)} one-domain test tasks, {svc['refine_images']} "
              "images)", "", "| model | accuracy | ≥ parent |", "|---|---|---|",
              f"| parent (class names) | {100 * par.mean():.1f} | — |",
              f"| /refine (now) | {100 * ref.mean():.1f} | {np.mean(ref >= par - 1e-9):.0%} |",
              f"| old /refine (taper + pseudo-label weights) | {100 * old.mean():.1f} | "
              f"{np.mean(old >= par - 1e-9):.0%} |", "",
              f"/refine changed the model in {sum(r['refined_changed'] for r in srows)} of "
              f"{len(srows)} tasks.", "",
              "## Cost of an images-only /personalize (128 images, CPU)", "",
              f"Ratio to (/predict on the same images + a cold /personalize): median "
              f"**{svc['ratio_median']:.2f}**, ratio of sums {svc['ratio_of_sums']:.2f}; median "
              f"images-only {1000 * np.median([r['images_only_s'] for r in srows]):.0f} ms, "
              f"/predict {1000 * np.median([r['predict_s'] for r in srows]):.0f} ms, cold "
              f"/personalize {1000 * np.median([r['cold_personalize_s'] for r in srows]):.0f} ms."]
    return "\n".join(lines) + "\n"
