"""How long serialising one model stalls the worker's other Python threads (not a test).

A ticker thread spins in Python and records the longest gap between two of its iterations
while another thread serialises a full-size ResNet-18 state dict (45 MB): the gap is how long
the serialiser held the GIL at a stretch, i.e. how long a request thread in the same worker
could not run. Compares ``safetensors.torch.save`` / ``load`` (what the service used) with
``service.cache.tensorbytes.serialize`` / ``deserialize`` (same bytes, same tensors), plus
``time.sleep`` as the no-GIL control.
Medians of interleaved repeats; 1 torch thread.

    .venv/bin/python benchmarks/gil_stalls.py [--repeats 9]

Prints a table; writes ``benchmarks/results/gil_stalls.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == _HERE:
    sys.path[0] = str(_HERE.parent)

import torch  # noqa: E402
from safetensors.torch import load as st_load  # noqa: E402
from safetensors.torch import save as st_save  # noqa: E402

from model_store.resnet import build_resnet18  # noqa: E402
from service.cache import tensorbytes  # noqa: E402

OUT = _HERE / "results" / "gil_stalls.json"


def stall(fn) -> tuple[float, float]:
    """(longest stall, wall time of ``fn``) in seconds, ``fn`` running in a second thread."""
    gaps: list[float] = []
    done = threading.Event()
    elapsed: list[float] = []

    def work() -> None:
        time.sleep(0.005)
        t0 = time.perf_counter()
        fn()
        elapsed.append(time.perf_counter() - t0)
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    last = time.perf_counter()
    while not done.is_set():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    thread.join()
    return max(gaps), elapsed[0]


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    torch.set_num_threads(1)
    state = build_resnet18(5).state_dict()
    assert bytes(tensorbytes.serialize(state)) == st_save(state)  # also caches the header
    blob = st_save(state)
    fns = {
        "safetensors.torch.save": lambda: st_save(state),
        "tensorbytes.serialize": lambda: tensorbytes.serialize(state),
        "safetensors.torch.load": lambda: st_load(blob),
        "tensorbytes.deserialize": lambda: tensorbytes.deserialize(blob),
        "time.sleep(30 ms) (control)": lambda: time.sleep(0.03),
    }
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    for _ in range(args.repeats):
        for name, fn in fns.items():
            runs[name].append(stall(fn))
    result = {
        name: {"max_stall_ms": statistics.median(s for s, _ in v) * 1e3,
               "wall_ms": statistics.median(w for _, w in v) * 1e3}
        for name, v in runs.items()
    }  # fmt: skip
    print(f"{'serialiser (45 MB ResNet-18)':32} {'longest stall':>14} {'wall':>10}")
    for name, r in result.items():
        print(f"{name:32} {r['max_stall_ms']:11.2f} ms {r['wall_ms']:7.1f} ms")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result | {"repeats": args.repeats}, indent=2))
    return result


if __name__ == "__main__":
    main()
