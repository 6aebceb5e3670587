"""Is a federated run with partial participation repeatable? (issue 15, stop 46)

    .venv/bin/python benchmarks/federated_repeatability.py [--rounds 4] [--clients 4]

Runs one anytime federation (a tiny ViT foundation, synthetic clients, half the clients per
round) three times with one seed: twice on Flower's Ray engine, once on the in-process grid.
Prints the partitions each run sampled per round and the largest weight difference between
runs, and writes ``benchmarks/results/federated_repeatability.json``. Ray gives nodes random
ids; before stop 46 the same seed sampled other clients in every Ray run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model_store.testing import make_tiny_foundation  # noqa: E402
from trainer.anytime.federation import run_anytime  # noqa: E402
from trainer.federated.synthetic import synthetic_client  # noqa: E402

CLASSES = 3


def _max_diff(a: dict, b: dict) -> float:
    return max(float((a[k].float() - b[k].float()).abs().max()) for k in a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    ref, _ = make_tiny_foundation(tmp / "store", layers=3)
    spec = {"foundation": f"local-dir:{ref.path}", "method": "accumulator", "adapter_rank": 4,
            "num_classes": CLASSES}
    cfg = {"method": "fedavg", "weighting": "samples", "rounds": args.rounds, "lr": 3e-3,
           "local_epochs": 1, "batch_size": 8, "weight_decay": 0.05, "seed": args.seed,
           "fraction_train": 0.5, "exit_mode": "anytime", "personal_part": "client_token",
           "personal_epochs": 0}
    clients = [synthetic_client(i, 12 + 9 * i, CLASSES) for i in range(args.clients)]
    tiers = [min(3, 1 + i) for i in range(args.clients)]
    runs = {name: run_anytime(tmp / name, clients, tiers, spec, cfg, backend=backend)
            for name, backend in (("ray-1", "ray"), ("ray-2", "ray"), ("inline", "inline"))}
    sampled = {name: [r.get("partitions") for r in sink["rounds"]]  # None: before stop 46
               for name, sink in runs.items()}
    diffs = {f"{a} vs {b}": _max_diff(runs[a]["global_state"], runs[b]["global_state"])
             for a, b in (("ray-1", "ray-2"), ("ray-1", "inline"))}
    print("\n| run | partitions sampled per round |\n|---|---|")
    for name, rounds in sampled.items():
        print(f"| {name} | {' '.join(map(str, rounds))} |")
    for pair, d in diffs.items():
        print(f"max |weight difference| {pair}: {d:.2e}")
    out = ROOT / "benchmarks/results/federated_repeatability.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "sampled": sampled, "max_diff": diffs},
                              indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
