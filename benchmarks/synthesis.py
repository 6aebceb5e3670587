"""Synthesis speed vs the memory-bandwidth bound (not a test; run by hand).

For Q in {4, 8} full-size ResNet-18 bases (num_classes=30, ~11.2M params, ~45 MB each) this
times ``synthesize`` on pre-stacked bases (the service's fast path, under ``torch.no_grad`` as in
``TaperBundle.personalize``) and divides it by the time torch needs to read the same stacked
bytes once: a ``clone`` of every stacked tensor (read + fresh allocation) and, stricter, a
``copy_`` into preallocated buffers (read + write, no allocation) and, strictest, a ``sum``
(read only), all over the contiguous memory that holds the bases. ``per-tensor`` is the layout
before ``model_store.stacked`` (one GEMV per state-dict tensor), kept as a control. Timings are
interleaved and the median of the repeats is reported. Product goal: synthesis <= 2.0x the read
time. Prints a table and writes ``benchmarks/results/synthesis.json``.

``faults`` counts minor page faults per synthesis call: in a fresh process glibc hands freed
output memory back to the OS, so every call re-faults ~45 MB (+~40 ms here) until the heap
settles; a long-running service reaches the fault-free steady state, or gets it from the start
with ``MALLOC_TRIM_THRESHOLD_=536870912 MALLOC_MMAP_THRESHOLD_=33554432`` in its environment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from model_store.device import pick_device
from model_store.resnet import build_resnet18
from model_store.stacked import StackedBases
from model_store.synthesis import stack_bases, synthesize

NUM_CLASSES = 30
TASK = [3, 17, 0, 25, 9]
OUT = Path(__file__).resolve().parent / "results" / "synthesis.json"


def _no_sync() -> None:
    """CPU work is synchronous: nothing to wait for."""


def _interleaved_medians(
    fns: dict[str, Callable[[], object]], repeats: int, device: torch.device, warmup: int = 5
) -> dict[str, float]:
    """Median wall time per function, timing them in turn within each repeat.

    Interleaving makes background load (this machine is shared) hit every candidate alike, so
    the ratios stay meaningful even when absolute times drift.
    """
    sync: Callable[[], None] = torch.cuda.synchronize if device.type == "cuda" else _no_sync
    for fn in fns.values():  # warm-up: allocator caches, page faults, GEMV kernels
        for _ in range(warmup):
            fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def measure(q: int, repeats: int, device: torch.device) -> dict[str, float]:
    """Time synthesis and the two read baselines for ``q`` random full-size bases."""
    torch.manual_seed(q)
    stacked = stack_bases([build_resnet18(NUM_CLASSES).state_dict() for _ in range(q)])
    per_key = {k: v.to(device).contiguous() for k, v in stacked.items()}  # unpacked layout
    stacked = StackedBases(per_key)
    memory = stacked.storage()  # contiguous: the bound reads the bytes at full speed
    mixers = torch.softmax(torch.randn(4, q), dim=-1)
    nbytes = sum(v.numel() * v.element_size() for v in memory)
    buffers = [torch.empty_like(v) for v in memory]

    def clone() -> object:
        return [v.clone() for v in memory]

    def copy_into() -> None:
        for src, dst in zip(memory, buffers, strict=True):
            dst.copy_(src)

    def read_sum() -> object:
        return [v.sum() for v in memory if v.is_floating_point()]

    def synth() -> object:
        with torch.no_grad():
            return synthesize(stacked, mixers, TASK)

    def synth_per_tensor() -> object:  # the layout before packing: one GEMV per tensor
        with torch.no_grad():
            return synthesize(per_key, mixers, TASK)

    med = _interleaved_medians(
        {"clone": clone, "copy": copy_into, "sum": read_sum, "synth": synth,
         "per_tensor": synth_per_tensor}, repeats, device,
    )  # fmt: skip
    t_clone, t_copy, t_sum, t_synth = med["clone"], med["copy"], med["sum"], med["synth"]
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        synth()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0) / 3
    return {
        "Q": q,
        "stacked_mb": nbytes / 1e6,
        "synthesis_ms": t_synth * 1e3,
        "clone_ms": t_clone * 1e3,
        "copy_ms": t_copy * 1e3,
        "sum_ms": t_sum * 1e3,
        "ratio_vs_clone": t_synth / t_clone,
        "ratio_vs_copy": t_synth / t_copy,
        "ratio_vs_sum": t_synth / t_sum,
        "per_tensor_ms": med["per_tensor"] * 1e3,
        "per_tensor_ratio_vs_sum": med["per_tensor"] / t_sum,
        "synthesis_page_faults_per_call": faults,
        "read_gb_per_s_copy": nbytes / t_copy / 1e9,
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print a table, write JSON; returns the JSON payload."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (pick_device)")
    parser.add_argument("--bases", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    device = pick_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [measure(q, args.repeats, device) for q in args.bases]
    print(f"synthesis vs read-once (device={device}, threads={torch.get_num_threads()}, "
          f"median of {args.repeats})")  # fmt: skip
    print(
        "  Q | stacked MB | synth ms | clone ms | copy ms | sum ms | /clone | /copy | /sum | faults"
        " | per-tensor /sum"
    )
    for r in rows:
        print(f"{r['Q']:3d} | {r['stacked_mb']:10.1f} | {r['synthesis_ms']:8.2f} | "
              f"{r['clone_ms']:8.2f} | {r['copy_ms']:7.2f} | {r['sum_ms']:6.2f} | "
              f"{r['ratio_vs_clone']:6.2f} | {r['ratio_vs_copy']:5.2f} | "
              f"{r['ratio_vs_sum']:4.2f} | {r['synthesis_page_faults_per_call']:6.0f} | "
              f"{r['per_tensor_ratio_vs_sum']:4.2f}")  # fmt: skip
    payload = {
        "goal": "synthesis_ms / read_ms <= 2.0",
        "device": str(device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "num_classes": NUM_CLASSES,
        "task_size": len(TASK),
        "repeats": args.repeats,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {args.out}")
    return payload


if __name__ == "__main__":
    main()
