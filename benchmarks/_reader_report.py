"""The reader benchmark's table, JSON and plot (``benchmarks/reader.py``)."""

from __future__ import annotations

import json
from pathlib import Path


def report(results: dict[str, list[dict]], out: Path) -> None:
    """Print one table per measurement, write ``reader.json`` and ``reader.png`` (right
    answers gained against wrong 200s added, per 100 natural requests, per threshold)."""
    out.mkdir(parents=True, exist_ok=True)
    curves = {k: v for k, v in results.items() if k != "latency_ms"}
    for name, rows in curves.items():
        first = rows[0]
        print(f"\n{name}: {first['requests']} natural requests, rules right "
              f"{first['rules_right']} ({100 * first['rules_right'] / first['requests']:.1f} %)")
        print("| reader accepts from | +right | +wrong 200 | +right % | +wrong % |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['threshold']:.2f} | {r['right']} | {r['wrong']} | "
                  f"{r['right_pct']:.1f} | {r['wrong_pct']:.1f} |")
    (out / "reader.json").write_text(json.dumps(results, indent=1))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    if "latency_ms" in results:
        t = results["latency_ms"]
        print(f"\nlatency, p50 over {t['requests']} refused test requests: rules "
              f"{t['rules_p50']:.1f} ms, reader {t['reader_p50']:.2f} ms "
              f"({t['reader_over_rules']:.2f}x the rules)")
    for name, rows in curves.items():
        ax.plot([r["wrong_pct"] for r in rows], [r["right_pct"] for r in rows], marker="o",
                label=name)
    ax.set_xlabel("wrong 200s added, per 100 natural requests")
    ax.set_ylabel("right answers added, per 100")
    ax.set_title("learned reader of refused requests, by confidence threshold")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "reader.png", dpi=120)
    print(f"\nwrote {out / 'reader.json'} and {out / 'reader.png'}")
