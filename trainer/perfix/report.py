"""Write the FedPerfix benchmark's report: the paper's Table 2 per setting (accuracy, storage,
FLOPs, parameters exchanged), the per-client gain over Local (density PNG, the paper's Fig. 3),
and Vanilla Prefix vs FedPerfix under other initial draws (§5.3)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

LOCAL = "local"


def _by(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict = defaultdict(list)
    for r in rows:
        out[(r["method"], r["setting"])].append(r)
    return out


def _ms(values: list[float]) -> str:
    return f"{100 * np.mean(values):.1f} ± {100 * np.std(values):.1f}" if values else "–"


def gains_over_local(rows: list[dict[str, Any]], method: str, setting: str) -> list[float]:
    """Per-client test accuracy minus Local's, same seed and client, pooled over seeds."""
    groups = _by(rows)
    local = {r["seed"]: r["client_test"] for r in groups[(LOCAL, setting)]}
    return [a - b for r in groups[(method, setting)] if r["seed"] in local
            for a, b in zip(r["client_test"], local[r["seed"]], strict=True)]


def table(rows: list[dict[str, Any]], methods: list[str], setting: str,
          res: dict[str, dict[str, int]]) -> list[str]:
    """Table 2 for one setting; resources relative to FedAvg (its stored model, FLOPs, sent)."""
    groups, base = _by(rows), res.get("fedavg") or next(iter(res.values()))
    lines = ["| method | mean client acc (± std over seeds) | std over clients | gain over Local "
             "| clients ≥ Local | storage | FLOPs | sent / round | lr |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in methods:
        runs = groups[(m, setting)]
        if not runs:
            continue
        gains, r = gains_over_local(rows, m, setting), res[m]
        spread = np.mean([np.std(x["client_test"]) for x in runs])
        gain = f"{100 * np.mean(gains):+.1f}" if gains and m != LOCAL else "–"
        share = f"{sum(g >= 0 for g in gains)}/{len(gains)}" if gains and m != LOCAL else "–"
        lines.append(
            f"| {m} | {_ms([x['mean_test'] for x in runs])} | {100 * spread:.1f} | {gain} | "
            f"{share} | {r['stored'] / 1e6:.2f} M ({100 * r['stored'] / base['stored']:.0f} %) | "
            f"{r['flops'] / 1e6:.0f} M ({100 * r['flops'] / base['flops']:.0f} %) | "
            f"{runs[0]['params_per_round']:,} ({100 * r['sent'] / max(1, base['sent']):.0f} %) | "
            f"{runs[0]['lr']:.1e} |")
    return lines


def plot_gains(rows: list[dict[str, Any]], methods: list[str], setting: str, path: Path) -> None:
    """Density of per-client gain over Local (Gaussian kernel, Scott's bandwidth)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    grid = np.linspace(-60, 60, 241)
    for m in methods:
        g = 100 * np.asarray(gains_over_local(rows, m, setting))
        if m == LOCAL or len(g) < 2:
            continue
        bw = max(1.06 * g.std() * len(g) ** -0.2, 1.0)
        dens = np.exp(-0.5 * ((grid[:, None] - g[None]) / bw) ** 2).sum(1) / (len(g) * bw
                                                                             * np.sqrt(2 * np.pi))
        ax.plot(grid, dens, label=f"{m} (mean {g.mean():+.1f})")
    ax.axvline(0, color="gray", lw=0.8)
    ax.set(xlabel="client test accuracy gain over Local (points)", ylabel="density",
           title=f"gain over Local per client — {setting}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def stability_table(payload: dict[str, Any]) -> list[str]:
    """Mean client accuracy per initial draw of the local part (first seed, label skew)."""
    main = {r["method"]: r for r in payload["rows"]
            if r["setting"] == "label" and r["seed"] == payload["rows"][0]["seed"]}
    lines = ["| method | init draws | mean client acc per draw | spread (max − min) |",
             "|---|---|---|---|"]
    for m in ("vanilla_prefix", "fedperfix"):
        runs = ([main[m]] if m in main else []) + [r for r in payload["stability"]
                                                   if r["method"] == m]
        accs = [100 * r["mean_test"] for r in runs]
        if accs:
            lines.append(f"| {m} | {', '.join(str(r['init_seed']) for r in runs)} | "
                         f"{', '.join(f'{a:.1f}' for a in accs)} | {max(accs) - min(accs):.1f} |")
    return lines


def write_report(out: Path, payload: dict[str, Any]) -> None:
    """``results.json``, ``report.md`` and one gain-density PNG per setting under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(payload, indent=1))
    rows, methods = payload["rows"], payload["methods"]
    lines = ["# Prefix personalization of ViT clients on Tailor-PACS (FedPerfix paper §4)", "",
             f"Command: `{payload['command']}`", "",
             f"Foundation `{payload['foundation']}`; {payload['protocol']}", "",
             "Storage, FLOPs and sent parameters relative to FedAvg (a client of any method "
             "stores its whole model; sent = what one client uploads per round).", ""]
    for s in payload["settings"]:
        lines += [f"## {s} skew", "", *table(rows, methods, s, payload["resources"]), "",
                  f"![gain over Local]({s}-gain.png)", ""]
        plot_gains(rows, methods, s, out / f"{s}-gain.png")
    if payload["stability"]:
        lines += ["## Initialisation stability (§5.3): other draws of the local part", "",
                  *stability_table(payload), ""]
    if payload["selection"]:
        lines += ["## Learning rates chosen on validation (first seed)", "",
                  "| setting/method | chosen | val mean client acc per lr |", "|---|---|---|"]
        lines += [f"| {k} | {v['lr']:.1e} | "
                  + ", ".join(f"{lr}: {100 * a:.1f}" for lr, a in v["val"].items()) + " |"
                  for k, v in payload["selection"].items()]
        lines.append("")
    lines += ["## Wall time", "", f"{payload['seconds']:.0f} s in total.", ""]
    (out / "report.md").write_text("\n".join(lines))
