"""Text encoder runtime A/B: the resolver on PyTorch vs ONNX Runtime, same rows, one run.

Hypothesis (issue 13): MiniLM's eager forward is most of a definition request's latency, and
ONNX Runtime runs the same fp32 graph about twice as fast on a CPU without moving a single
answer. Both resolvers resolve every request of ``benchmarks/resolution.py``'s rows (the
development set and every outside set), alternating per request so machine noise falls on both
alike. Printed per request kind: p50 / p90 latency of each runtime, their ratio, and how many
answers (status, classes, domain) differ. Writes
``benchmarks/results/resolution/text_runtime.json``.

    python benchmarks/text_runtime.py            # every row (~4 500 requests, a few minutes)
    python benchmarks/text_runtime.py --every 10   # every tenth row: both kinds, all sets
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent))  # run as a script from anywhere

from benchmarks.resolution import OUT, load_rows, resolve, tailor_pacs_catalogue  # noqa: E402

RUNTIMES = ("torch", "onnx")


def resolvers(catalogue: dict) -> dict:
    """One service-default resolver per runtime, over separately loaded encoders."""
    from model_store.text import TextEncoder
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver

    s = Settings()
    described = (s.match_described_threshold, s.match_described_margin)
    return {rt: ClassResolver(catalogue, TextEncoder(device="cpu", runtime=rt),
                              s.match_threshold, s.match_margin, described)
            for rt in RUNTIMES}  # fmt: skip


def measure(catalogue: dict, rows: list[dict]) -> list[dict]:
    """Per row: each runtime's answer and milliseconds, the order alternating row by row."""
    by_rt = resolvers(catalogue)
    assert by_rt["onnx"].encoder.runtime == "onnx", "ONNX Runtime fell back to torch"
    for rt in RUNTIMES:  # warm-up: first calls pay lazy imports and allocator growth
        for row in rows[:5]:
            resolve(by_rt[rt], catalogue, row)
    out = []
    for i, row in enumerate(tqdm(rows, desc="torch vs onnx")):
        rec = {"kind": row["kind"], "split": row["split"]}
        for rt in RUNTIMES if i % 2 else RUNTIMES[::-1]:
            t0 = time.perf_counter()
            rec[rt] = resolve(by_rt[rt], catalogue, row)
            rec[f"{rt}_ms"] = (time.perf_counter() - t0) * 1e3
        rec["differ"] = json.dumps(rec["torch"]) != json.dumps(rec["onnx"])
        out.append(rec)
    return out


def summarise(records: list[dict]) -> dict:
    """Latency quantiles per runtime and the number of differing answers, per request kind."""
    groups = {}
    for kind in ("natural", "definitions", "all"):
        recs = [r for r in records if kind in ("all", r["kind"])]
        if not recs:
            continue
        g = {"rows": len(recs), "differing_answers": sum(r["differ"] for r in recs)}
        for rt in RUNTIMES:
            ms = sorted(r[f"{rt}_ms"] for r in recs)
            g[f"{rt}_p50_ms"] = statistics.median(ms)
            g[f"{rt}_p90_ms"] = ms[int(0.9 * (len(ms) - 1))]
        g["p50_ratio_torch_over_onnx"] = g["torch_p50_ms"] / g["onnx_p50_ms"]
        groups[kind] = g
    return groups


def table(groups: dict) -> str:
    lines = [f"{'kind':<12} {'rows':>5} {'torch p50':>9} {'onnx p50':>9} {'torch p90':>9} "
             f"{'onnx p90':>9} {'ratio':>6} {'differ':>6}"]  # fmt: skip
    for kind, g in groups.items():
        lines.append(f"{kind:<12} {g['rows']:5d} {g['torch_p50_ms']:9.1f} {g['onnx_p50_ms']:9.1f} "
                     f"{g['torch_p90_ms']:9.1f} {g['onnx_p90_ms']:9.1f} "
                     f"{g['p50_ratio_torch_over_onnx']:6.2f} {g['differing_answers']:6d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--every", type=int, default=1,
                   help="every N-th row only (the rows are grouped by set and kind)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    import torch

    catalogue = tailor_pacs_catalogue()
    rows = load_rows()[:: args.every]
    records = measure(catalogue, rows)
    groups = summarise(records)
    results = {"threads": torch.get_num_threads(), "groups": groups,
               "differing": [r for r in records if r["differ"]]}
    print(table(groups))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "text_runtime.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out / 'text_runtime.json'}")
    return results


if __name__ == "__main__":
    main()
