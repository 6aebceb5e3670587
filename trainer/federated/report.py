"""Write the federated benchmark report: FedCLIP Tables 1-3 shape, communication, curves.

Table 1 (generalisation): accuracy on the held-out domain's test split, per held-out domain.
Table 2 (personalisation): per task, each participant's test accuracy under the global model
(and, for FedCLIP, under its locally fine-tuned adapter). Table 3 (overall): per task, the mean
over all four clients (three participants + the unseen one). Every cell is mean ± std over seeds.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np


def _ms(values: list[float]) -> str:
    v = [x for x in values if x is not None and not np.isnan(x)]
    if not v:
        return "–"
    return f"{100 * np.mean(v):.1f} ± {100 * np.std(v):.1f}" if len(v) > 1 else f"{100 * v[0]:.1f}"


def _collect(rows: list[dict[str, Any]], zero: list[dict[str, Any]]) -> dict[str, Any]:
    """Index results as (method, held_out) -> lists over seeds."""
    unseen: dict = defaultdict(list)
    part: dict = defaultdict(list)
    overall: dict = defaultdict(list)
    for r in rows:
        key = (r["method"], r["held_out"])
        unseen[key].append(r["unseen_acc"])
        for name, acc in r["participant_acc"].items():
            part[(r["method"], r["held_out"], name)].append(acc)
        for name, acc in r.get("personal_acc", {}).items():
            part[(r["method"] + "+personal", r["held_out"], name)].append(acc)
        overall[key].append(np.mean([*r["participant_acc"].values(), r["unseen_acc"]]))
    for z in zero:  # zero-shot: the same client test splits, no training
        for held, _ in z["acc"].items():
            others = [a for n, a in z["acc"].items() if n != held]
            unseen[("zero_shot", held)].append(z["acc"][held])
            for n, a in z["acc"].items():
                if n != held:
                    part[("zero_shot", held, n)].append(a)
            overall[("zero_shot", held)].append(np.mean([*others, z["acc"][held]]))
    return {"unseen": unseen, "part": part, "overall": overall}


def _table(title: str, methods: list[str], domains: list[str], cell) -> list[str]:
    lines = [f"### {title}", "", "| method | " + " | ".join(domains) + " | AVG |",
             "|---" * (len(domains) + 2) + "|"]
    for m in methods:
        cells = [cell(m, d) for d in domains]
        flat = [x for c in cells for x in c]
        per_seed = np.mean([c for c in cells if c], axis=0).tolist() if all(cells) else flat
        lines.append(f"| {m} | " + " | ".join(_ms(c) for c in cells) + f" | {_ms(per_seed)} |")
    return lines + [""]


def tables(rows: list[dict[str, Any]], zero: list[dict[str, Any]], domains: list[str],
           methods: list[str]) -> str:
    """Markdown for Tables 1-3 (mean ± std over seeds, accuracy in %)."""
    idx = _collect(rows, zero)
    all_methods = ["zero_shot", *methods]
    out = _table("Table 1 — generalisation: accuracy on the unseen (held-out) domain",
                 all_methods, domains, lambda m, d: idx["unseen"].get((m, d), []))
    out += ["### Table 2 — personalisation: participants' test accuracy per task", ""]
    pmethods = all_methods + [m + "+personal" for m in methods]
    for held in domains:
        parts = [d for d in domains if d != held]
        out += _table(f"held out: {held}", pmethods, parts,
                      lambda m, d, h=held: idx["part"].get((m, h, d), []))
    out += _table("Table 3 — overall: mean over the 4 clients (3 participants + unseen)",
                  all_methods, domains, lambda m, d: idx["overall"].get((m, d), []))
    return "\n".join(out)


def comm_table(rows: list[dict[str, Any]], full_counts: dict[str, int]) -> str:
    """Parameters and bytes exchanged per round, as ratios three ways (issue 15).

    "Fewer parameters than full fine-tuning" depends on what full means: both towers (the text
    tower is frozen MiniLM here, most of the count), the image tower alone, or the projection-only
    FedAvg that this benchmark actually trains; all three ratios are printed.
    """
    per: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["comm"] and r["method"] not in per:
            c = r["comm"][0]
            per[r["method"]] = {"params": c["params_per_client"], "clients": c["clients"],
                                "bytes_round": c["bytes_up"] + c["bytes_down"]}
    proj = per.get("fedavg", {}).get("params")
    lines = ["### Communication per round", "",
             "| method | params per client per direction | bytes per round (all clients, up+down) "
             "| both towers / method | image tower / method | projection FedAvg / method |",
             "|---|---|---|---|---|---|"]
    for m, c in per.items():
        ratios = [f"{full_counts[k] / c['params']:.1f}×" for k in ("both_towers", "image_tower")]
        ratios.append(f"{proj / c['params']:.2f}×" if proj else "–")
        lines.append(f"| {m} | {c['params']:,} | {c['bytes_round']:,} | " + " | ".join(ratios)
                     + " |")
    for name, n in full_counts.items():
        lines.append(f"| full-backbone FedAvg ({name}, analytic, not trained) | {n:,} | "
                     f"{2 * 3 * 4 * n:,} (fp32, 3 clients) | – | – | – |")
    return "\n".join(lines + [""])


def selection_table(chosen: dict[str, Any]) -> str:
    """What each task chose on its participants' val: lr, mu, rounds and the val score."""
    lines = ["### Settings chosen per task on the participants' validation splits", "",
             "| task / method | lr | mu | rounds | val acc | candidates |",
             "|---|---|---|---|---|---|"]
    for key, c in chosen.items():
        if not key.startswith("_"):
            tried = len(chosen.get("_tried", {}).get(key, []))
            lines.append(f"| {key} | {c['lr']:.3g} | {c['mu']:.3g} | {c['rounds']} | "
                         f"{100 * c['val']:.1f} | {tried} |")
    return "\n".join(lines + [""])


def curves_png(rows: list[dict[str, Any]], path: Path) -> None:
    """Unseen-domain and participant accuracy vs round (mean over seeds and tasks)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    by_m: dict[str, list] = defaultdict(list)
    by_p: dict[str, list] = defaultdict(list)
    for r in rows:
        by_m[r["method"]].append([a for _, a in r["unseen_curve"]])
        by_p[r["method"]].append(r["participant_curve"])
    for m in by_m:  # unseen curves start at round 0 (before training), client evals at 1
        for ax, series, first in ((axes[0], by_m[m], 0), (axes[1], by_p[m], 1)):
            n = min(len(s) for s in series)
            if n:
                ax.plot(range(first, first + n),
                        100 * np.mean([s[:n] for s in series], axis=0), label=m, marker=".")
    axes[0].set_title("unseen domain (test), round 0 = before training")
    axes[1].set_title("participants (test, global model after each round)")
    for ax in axes:
        ax.set_xlabel("round")
        ax.set_ylabel("accuracy %")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def four_client_table(runs: list[dict[str, Any]]) -> str:
    """The 4-client runs (every domain federating; Dirichlet label skew): global and
    personalised test accuracy per client, with the settings chosen on their validation."""
    lines = ["### Four-client runs (seed 0; settings chosen on these clients' val)", "",
             "| setting | method | lr | rounds | client: global → personalised |",
             "|---|---|---|---|---|"]
    for r in runs:
        cells = ", ".join(f"{c} {100 * a:.1f} → {100 * r['personal_acc'].get(c, float('nan')):.1f}"
                          for c, a in sorted(r["participant_acc"].items()))
        lines.append(f"| {r['held_out']} | {r['method']} | {r['lr']:g} | {r['rounds']} | "
                     f"{cells} |")
    return "\n".join(lines + [""])


def write_report(out_dir: Path, payload: dict[str, Any], domains: list[str],
                 methods: list[str]) -> Path:
    """Write results.json, report.md and curves.png; return the report path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1, default=float))
    note = ("With `--select`, lr, FedProx's mu and the rounds of each task are the chosen ones "
            "in the selection table; `rounds`, `lr_*` and `mu` below are the grid centres."
            if payload.get("selection", {}).get("chosen") else "")
    md = [f"# Federated benchmark ({payload['setting']})", "", note, "",
          "```", json.dumps(payload["config"], indent=1, default=str), "```", "",
          tables(payload["rows"], payload["zero_shot"], domains, methods),
          comm_table(payload["rows"], payload["full_backbone_params"])]
    if payload.get("selection", {}).get("chosen"):
        md.append(selection_table(payload["selection"]["chosen"]))
    if payload.get("extra", {}).get("four_client_runs"):
        md.append(four_client_table(payload["extra"]["four_client_runs"]))
    (out_dir / "report.md").write_text("\n".join(md))
    if payload["rows"]:
        curves_png(payload["rows"], out_dir / "curves.png")
    return out_dir / "report.md"


def save_outputs(out_dir: Path, cfg: dict[str, Any], sink: dict[str, Any],
                 client_names: list[str]) -> dict[str, Any]:
    """Write what a deployed federation produced (see the module docstring); return the JSON."""
    from safetensors.torch import save_file

    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in sink["global_state"].items()},
              str(out_dir / "global.safetensors"))
    for pid, rec in sink.get("personal", {}).items():
        save_file({k: v.contiguous() for k, v in rec["state"].items()},
                  str(out_dir / f"personal_{client_names[pid]}.safetensors"))
    result = {
        "config": cfg, "clients": client_names, "rounds": sink["rounds"],
        "client_eval": [{client_names[p]: m for p, m in e.items()} for e in sink["client_eval"]],
        "personal": {client_names[p]: r["metrics"] for p, r in sink.get("personal", {}).items()},
        "errors": sink["errors"]}
    tmp = out_dir / "result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(out_dir / "result.json")  # readers polling for result.json never see half
    return result
