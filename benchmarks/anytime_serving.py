"""What a depth budget buys at serving time: latency per exit of a deployed anytime model.

Loads an ``anytime`` artifact as the service does (``open_anytime``: the foundation once, one
client's model), and times, for every exit e, a batch through the path ``AnytimeKind`` serves
(``AnytimeClassifier.logits``: uint8 images -> preprocessing -> blocks 1..e, then softmax; not
imported from ``service`` because ``benchmarks/service.py`` shadows that package here) and a
raw forward of the already-normalised batch to the same exit (the yardstick, same device, same
process, interleaved repeats, medians). Reports ms per batch, the ratio to the last exit, and
the FLOPs ratio the artifact records; the claim is that latency follows the exit (a client with
a budget of e blocks pays for e blocks). Writes ``benchmarks/results/anytime_serving.json``.

    python benchmarks/anytime_serving.py --store .tailor/store-vit [--client client0]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from model_store.anytime_artifact import open_anytime
from model_store.device import pick_device

OUT = Path(__file__).resolve().parent / "results" / "anytime_serving.json"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_ms(fn, device: torch.device, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def measure(args: argparse.Namespace) -> dict:
    """Interleaved timings per exit: service path and raw forward, ``repeats`` rounds."""
    device = pick_device(args.device)
    fed = open_anytime(args.store, args.version, device)
    classifier = fed.classifier(args.client)

    def serve(e: int) -> torch.Tensor:  # AnytimeKind.probabilities
        return classifier.logits(images, e).float().softmax(dim=1)

    images = np.random.default_rng(0).integers(0, 256, (args.batch, 32, 32, 3), dtype=np.uint8)
    x = fed.backbone.preprocess(images)
    depth, model = int(fed.config["depth"]), classifier.model
    raw = {e: [] for e in range(1, depth + 1)}
    path = {e: [] for e in range(1, depth + 1)}
    with torch.inference_mode():
        for e in raw:  # warm-up
            serve(e)
        for _ in tqdm(range(args.repeats), desc="rounds"):
            for e in raw:
                raw[e] += _median_ms(lambda e=e: model(x, e), device, 1)
                path[e] += _median_ms(lambda e=e: serve(e), device, 1)
    flops = fed.config["flops_per_exit"]
    rows = [{"exit": e, "service_ms": statistics.median(path[e]),
             "raw_ms": statistics.median(raw[e]), "flops": flops[e - 1]} for e in raw]
    last = rows[-1]
    for r in rows:
        r["service_vs_last"] = r["service_ms"] / last["service_ms"]
        r["flops_vs_last"] = r["flops"] / last["flops"]
        r["service_vs_raw"] = r["service_ms"] / r["raw_ms"]
    return {"device": str(device), "host": platform.node(), "batch": args.batch,
            "repeats": args.repeats, "artifact": fed.version, "client": args.client,
            "threads": torch.get_num_threads(), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=".tailor/store-vit")
    parser.add_argument("--version", default="latest")
    parser.add_argument("--client", default=None, help="a client id (default: the global model)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    result = measure(args)
    print(f"{result['device']}, batch {args.batch}, {args.repeats} interleaved repeats (medians)")
    print("| exit | service ms | raw forward ms | service / raw | latency vs last "
          "| FLOPs vs last |")
    print("|---|---|---|---|---|---|")
    for r in result["rows"]:
        print(f"| {r['exit']} | {r['service_ms']:.2f} | {r['raw_ms']:.2f} | "
              f"{r['service_vs_raw']:.2f} | {r['service_vs_last']:.2f} | "
              f"{r['flops_vs_last']:.2f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
