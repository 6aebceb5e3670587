"""Write the anytime benchmark's report: the paper's Tables 1-2 rows, multi-tier, exchange,
personalisation per client, and accuracy-vs-exit / vs-FLOPs curves (PNG)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from trainer.federated.task import gated_epoch


def _ms(values: list[float]) -> str:
    v = [x for x in values if not np.isnan(x)]
    if not v:
        return "–"
    return f"{100 * np.mean(v):.1f} ± {100 * np.std(v):.1f}" if len(v) > 1 else f"{100 * v[0]:.1f}"


def _by(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict = defaultdict(list)
    for r in rows:
        out[(r["method"], r["setting"])].append(r)
    return out


def headline_table(rows: list[dict[str, Any]], methods: list[str], settings: list[str],
                   full_params: int) -> list[str]:
    """Mean ± std over seeds of each setting's headline number, plus what a round exchanges."""
    groups = _by(rows)
    head = ["| method | " + " | ".join(settings) + " | params / round | vs full FT |",
            "|---" * (len(settings) + 3) + "|"]
    for m in methods:
        cells = [_ms([r["headline"] for r in groups[(m, s)]]) for s in settings]
        params = next((r["params_per_round"] for s in settings for r in groups[(m, s)]), 0)
        head.append(f"| {m} | " + " | ".join(cells)
                    + f" | {params:,} | {100 * params / full_params:.1f} % |")
    return head


def exit_table(rows: list[dict[str, Any]], methods: list[str], setting: str) -> list[str]:
    """Test accuracy at every exit (mean ± std over seeds) in one setting."""
    groups = _by(rows)
    depth = max(len(r["exit_acc"]) for r in rows)
    lines = ["| method | " + " | ".join(f"exit {e}" for e in range(1, depth + 1)) + " |",
             "|---" * (depth + 1) + "|"]
    for m in methods:
        runs = groups[(m, setting)]
        if runs:
            cells = [_ms([r["exit_acc"][e] for r in runs]) for e in range(depth)]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines


# a test score equal up to float summation order is unchanged, not worse: the anytime score
# averages per-exit accuracies, and the same hits summed in another order differ by ~1e-8
TIE = 1e-6


def personal_table(rows: list[dict[str, Any]], methods: list[str], setting: str) -> list[str]:
    """Personalised minus global test accuracy per client, over seeds: mean, min, share >= 0."""
    groups = _by(rows)
    lines = ["| method | mean gain | worst client | clients not worse | not worse beyond test "
             "noise |", "|---|---|---|---|---|"]
    for m in methods:
        gains = [p - g for r in groups[(m, setting)]
                 for g, p in zip(r["client_global"], r["client_personal"], strict=True)
                 if not (np.isnan(g) or np.isnan(p))]
        kept = [c for r in groups[(m, setting)] for c in r.get("client_personal_curve", [])
                if c.get("val")]
        if gains:
            lines.append(f"| {m} | {100 * np.mean(gains):+.1f} | {100 * min(gains):+.1f} | "
                         f"{sum(g >= -TIE for g in gains)}/{len(gains)} | "
                         f"{_not_worse_beyond_noise(kept, [c['epoch'] for c in kept])} |")
    return lines if len(lines) > 2 else []  # runs from before the per-epoch record


GATES = (0.0, 1.0, 1.64, 2.13, 2.33)  # one-sided 50 / 84 / 95 / 99 % of a normal z; 2.13 is
# 95 % of a t with 4 degrees of freedom, the fold-clustered z of 5 folds


def gate_table(rows: list[dict[str, Any]], methods: list[str], setting: str) -> list[str]:
    """Personalisation replayed under gates of growing strictness (``min_z``) from the
    per-epoch record: test is read only to report the outcome, never to choose the gate. A
    cross-fitted run (``--personal-gate crossfit``) is replayed beside its val gate's record,
    both on the same federations."""
    groups = _by(rows)
    lines = ["| method | gate | min z | kept personalised | mean gain | worst client | not worse "
             "| not worse beyond test noise |", "|---|---|---|---|---|---|---|---|"]
    for m in methods:
        for gate, curves in _gate_records(groups[(m, setting)]):
            for z in GATES:
                picks = [gated_epoch(c, z) for c in curves]
                gains = [c["test"][e] - c["test"][0] for c, e in zip(curves, picks, strict=True)]
                lines.append(f"| {m} | {gate} | {z:g} | {sum(e > 0 for e in picks)}/{len(picks)} "
                             f"| {100 * np.mean(gains):+.1f} | {100 * min(gains):+.1f} | "
                             f"{sum(g >= -TIE for g in gains)}/{len(gains)} | "
                             f"{_not_worse_beyond_noise(curves, picks)} |")
    return lines if len(lines) > 2 else []  # runs from before the per-epoch record


NOISE_Z = 1.64  # one-sided 95 %: a test loss this many paired standard errors below 0 is real


def _not_worse_beyond_noise(curves: list[dict[str, Any]], picks: list[int]) -> str:
    """Clients whose kept epoch is not worse than the received model on test by more than
    ``NOISE_Z`` paired standard errors (``test_z``, stop 51 on; "–" for older records). A
    client's test split is ~45 images, where one or two images are a point or more each: this
    separates a real loss from that noise. Analysis only; no gate reads test."""
    if not curves or not all(c.get("test_z") for c in curves):
        return "–"
    fine = sum(c["test_z"][e] >= -NOISE_Z for c, e in zip(curves, picks, strict=True))
    return f"{fine}/{len(curves)}"


def _gate_records(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """``[(gate, curves)]``: the val gate's per-client records and, for cross-fitted runs,
    the cross-fitted ones (the kept record; the val gate's is then ``client_valgate_curve``),
    also replayed on their fold-clustered z where recorded (``z_fold``, stop 50 on)."""
    kept = [c for r in rows for c in r.get("client_personal_curve", []) if c.get("val")]
    val = [c for r in rows for c in r.get("client_valgate_curve", []) if c.get("val")]
    if not val:
        return [("val", kept)] if kept else []
    records = [("val", val), ("cross-fitted", kept)]
    if kept and all("z_fold" in c for c in kept):
        records.append(("cross-fitted, fold z", [{**c, "z": c["z_fold"]} for c in kept]))
    return records


def plot_exits(rows: list[dict[str, Any]], methods: list[str], setting: str,
               flops: dict[str, list[int]], path: Path) -> None:
    """Accuracy vs exit and vs GFLOPs per image, one line per method (mean over seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _by(rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for m in methods:
        runs = groups[(m, setting)]
        if not runs:
            continue
        acc = 100 * np.nanmean([r["exit_acc"] for r in runs], axis=0)
        exits = np.arange(1, len(acc) + 1)
        axes[0].plot(exits, acc, marker="o", label=m)
        axes[1].plot(np.asarray(flops[m]) / 1e9, acc, marker="o", label=m)
    axes[0].set(xlabel="exit (blocks run)", ylabel="test accuracy (%)", title=setting)
    axes[1].set(xlabel="GFLOPs per image", ylabel="test accuracy (%)", title=setting)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rounds(rows: list[dict[str, Any]], methods: list[str], setting: str,
                path: Path) -> None:
    """The setting's validation headline after every round, one line per method (mean over
    seeds): whether a method leads for good or only converges first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _by(rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in methods:
        curves = [r["val_curve"] for r in groups[(m, setting)] if r.get("val_curve")]
        if curves:
            n = min(map(len, curves))
            val = 100 * np.mean([c[:n] for c in curves], axis=0)
            ax.plot(np.arange(1, n + 1), val, label=m)
    ax.set(xlabel="round", ylabel="validation headline (%)", title=setting)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_gates(rows: list[dict[str, Any]], methods: list[str], setting: str,
               path: Path) -> bool:
    """Clients worse on test and mean test gain vs ``min z``, one line per method and gate
    (solid: val, dashed: cross-fitted, dotted: its fold-clustered z); False (no file) when no
    run recorded its epochs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups, drawn = _by(rows), False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, m in enumerate(methods):
        for gate, curves in _gate_records(groups[(m, setting)]):
            gains = np.array([[c["test"][gated_epoch(c, z)] - c["test"][0] for c in curves]
                              for z in GATES])  # fmt: skip
            ls = {"val": "-", "cross-fitted": "--"}.get(gate, ":")
            style = dict(color=f"C{i}", marker="o", ls=ls,
                         label=f"{m} ({gate})")
            axes[0].plot(GATES, (gains < -TIE).sum(1), **style)
            axes[1].plot(GATES, 100 * gains.mean(1), **style)
            drawn = True
    axes[0].set(xlabel="min z", ylabel="clients worse on test", title=setting)
    axes[1].set(xlabel="min z", ylabel="mean test gain (points)", title=setting)
    axes[1].axhline(0, color="grey", lw=0.5)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    if drawn:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return drawn


def write_report(out: Path, payload: dict[str, Any]) -> None:
    """``results.json``, ``report.md`` and one PNG per setting under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(payload, indent=1))
    rows, methods, settings = payload["rows"], payload["methods"], payload["settings"]
    lines = ["# Anytime federated learning on Tailor-PACS (Accumulator paper §5)", "",
             f"Command: `{payload['command']}`", "",
             f"Foundation `{payload['foundation']}`; {payload['protocol']}", "",
             "## Headline per setting (test accuracy, mean ± std over seeds)", "",
             "conventional: last exit; anytime: mean over exits; multitier: each client at its "
             "own exit (its depth budget).", "",
             *headline_table(rows, methods, settings, payload["full_params"]), "",
             "Control: the frozen foundation's zero-shot test accuracy over the same clients "
             f"(CLIP prompts, no training): {_ms(list(payload['zero_shot'].values()))} %.", ""]
    for s in settings:
        lines += [f"## Accuracy at every exit — {s}", "", *exit_table(rows, methods, s), "",
                  f"![{s}]({s}.png)", "", f"## Personalisation gain per client — {s}", "",
                  *personal_table(rows, methods, s), ""]
        if gates := gate_table(rows, methods, s):
            lines += ["Replayed under gates (a personalised epoch is kept only when its "
                      "paired gain exceeds `min z` standard errors, `--personal-min-z`; val: "
                      "on the client's val split; cross-fitted: on every train+val image held "
                      "out once, `--personal-gate crossfit`):", "", *gates, ""]
            if plot_gates(rows, methods, s, out / f"{s}-gates.png"):
                lines += [f"![{s} personalisation gates]({s}-gates.png)", ""]
        plot_exits(rows, methods, s, payload["flops"], out / f"{s}.png")
        plot_rounds(rows, methods, s, out / f"{s}-rounds.png")
        lines += [f"![{s} per round]({s}-rounds.png)", ""]
    if payload.get("selection"):
        lines += ["## Learning rate and rounds chosen on validation (first seed)", "",
                  "| setting/method | lr | rounds | best val headline per lr (at round) |",
                  "|---|---|---|---|"]
        lines += [f"| {k} | {v['lr']:.1e} | {v.get('rounds', '–')} | "
                  + ", ".join(f"{lr}: {100 * a:.1f} ({v.get('best_round', {}).get(lr, '–')})"
                              for lr, a in v["val"].items()) + " |"
                  for k, v in payload["selection"].items()]
        lines.append("")
    lines += ["## Wall time", "", f"{payload['seconds']:.0f} s in total.", ""]
    (out / "report.md").write_text("\n".join(lines))


def protocol_text(args: Any) -> str:
    """One paragraph of what every method got (the same for all)."""
    clients = ("one client per domain" if getattr(args, "partition", "") == "domains" else
               f"{args.num_clients} clients, Dirichlet alpha={args.alpha}")
    return (f"{clients} over "
            f"{args.per_class} images/class, split 60/20/20; {args.fraction:.0%} of clients per "
            f"round; {'up to ' if args.select else ''}{args.rounds} rounds x "
            f"{args.local_epochs} local epochs, batch {args.batch_size}; lr "
            + ("and rounds chosen per setting and method (lr from {0.3, 1, 3} x the default, "
               "rounds: that lr's best round) on the clients' validation splits (first seed)"
               if args.select else
               f"{args.lr} (finetune {args.lr_finetune}), not selected")
            + f"; PA rank "
            f"{args.adapter_rank}; personalisation {args.personal_epochs} epochs (client token "
            f"for the Accumulator, everything trainable otherwise), epoch chosen on val; "
            f"seeds {args.seeds}.")
