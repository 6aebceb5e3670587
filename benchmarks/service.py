"""Service benchmark (not a test): the API under real uvicorn (--workers N) + real redis-server.

One command measures, against a tiny-random but full-size artifact (ResNet-18 × Q bases):

* cold ``/personalize`` (never-seen task) ÷ the physical minimum (read the Q bases once and
  write one model; CPU goal ≤ 2), ÷ in-process synthesis (GPU goal ≤ 3), ÷ the read-only
  ``sum``; in-process synthesis ÷ ``sum`` (GPU goal ≤ 2); warm ``/personalize`` p50/p90.
  ``--device cuda`` runs the server and every yardstick on the GPU;
* weight download MB/s: safetensors fp32 and fp16, ONNX (and the first ONNX download: export);
* ``/predict`` at batch 1/8/64, multipart and base64 JSON, ÷ raw ``model(x)`` on the same batch
  (goal batch-64 ≤ 1.2), with the server's decode path timed in-process to split the overhead
  into decode and transport (HTTP, parsing, response);
* personalizations/s at 1/4/16 concurrent callers, cold (distinct tasks) and warm (repeated);
* server RSS (all processes, /proc) as N distinct tasks grow past the LRU budget
  (``TAILOR_MEMORY_CACHE_BYTES`` = a few models): must plateau; PNG of RSS vs N, with and
  without the glibc malloc settings of ``_server.MALLOC_TUNED`` (A/B).

Fairness: the server and this process both run torch with ``--threads`` intra-op threads
(default 1: two processes on a 2-core machine do not fight over cores, and "server ÷ raw" compares
the same kernels); the script re-executes itself with the server's thread and malloc environment.
Ratios come from medians of measurements interleaved within each repeat.

    .venv/bin/python benchmarks/service.py [--device cpu|cuda] [--workers 1] [--quick]

Prints a table; writes ``service.json`` and ``rss.png`` under ``benchmarks/results/service/``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, sys.path[0] is benchmarks/, where this file would shadow the `service`
# package: import from the repository root instead.
_HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == _HERE:
    sys.path[0] = str(_HERE.parent)
elif str(_HERE.parent) not in sys.path:
    sys.path.insert(0, str(_HERE.parent))
from benchmarks._server import MALLOC_TUNED, thread_env  # noqa: E402  (light: no torch)


def process_env(threads: int, malloc: str) -> dict[str, str]:
    """Thread and malloc environment shared by the server and this process."""
    return {**thread_env(threads), **(MALLOC_TUNED if malloc == "tuned" else {})}


def _reexec_with_server_env() -> None:
    """Run again with the server's thread/malloc environment (glibc reads it at start-up),
    before torch is imported, so the re-execution costs little."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--malloc", default="tuned")
    known, _ = p.parse_known_args(sys.argv[1:])
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_TUNED}
    env |= process_env(known.threads, known.malloc) | {"TAILOR_BENCH_CHILD": "1"}
    os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], env)


if __name__ == "__main__" and os.environ.get("TAILOR_BENCH_CHILD") != "1":
    _reexec_with_server_env()

import httpx  # noqa: E402
import torch  # noqa: E402

from benchmarks._latency import downloads, personalize, predict  # noqa: E402
from benchmarks._load import memory_curve, plateau, plot, throughput  # noqa: E402
from benchmarks._measure import Baselines, Tasks, png, random_images  # noqa: E402
from benchmarks._report import report  # noqa: E402
from benchmarks._server import ADMIN, ROOT, Redis, Server, build_store  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "service"
NUM_CLASSES = 12
QUICK = {"q": 2, "repeats": 1, "warm_n": 3, "batches": [1, 8], "callers": [1, 2],
         "cold_per_caller": 1, "warm_per_caller": 2, "memory_tasks": 3, "cache_models": 1,
         "malloc_ab": False}  # fmt: skip


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; ``--quick`` shrinks every count for the smoke test."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    p.add_argument("--device", default="cpu",
                   help="the server's device (cpu, cuda, cuda:N); the yardsticks run there too")
    p.add_argument("--q", type=int, default=4, help="number of bases")
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--malloc", choices=["tuned", "default"], default="tuned")
    p.add_argument("--no-malloc-ab", dest="malloc_ab", action="store_false",
                   help="skip the memory/cold A/B against the other malloc setting")  # fmt: skip
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--warm-n", type=int, default=50)
    p.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    p.add_argument("--callers", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--cold-per-caller", type=int, default=3)
    p.add_argument("--warm-per-caller", type=int, default=20)
    p.add_argument("--memory-tasks", type=int, default=16)
    p.add_argument("--cache-models", type=int, default=4, help="LRU budget, in models")
    p.add_argument("--quick", action="store_true", help="tiny counts (smoke test, < 40 s)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    return args


def model_nbytes(num_classes: int) -> int:
    """Bytes of one served model (parameters + buffers), to express the LRU budget in models."""
    from model_store.resnet import build_resnet18

    with torch.device("meta"):
        net = build_resnet18(num_classes)
    return sum(t.numel() * t.element_size() for t in [*net.parameters(), *net.buffers()])


@contextlib.contextmanager
def _serve(args, work, store, redis, malloc: str, budget: int):
    """A server with the benchmark's environment, and an admin client for it."""
    env = {**process_env(args.threads, malloc), "TAILOR_MEMORY_CACHE_BYTES": str(budget)}
    headers = {"Authorization": f"Bearer {ADMIN}"}
    with Server(work, store, redis.url, workers=args.workers, env=env,
                device=args.device) as server:  # fmt: skip
        with httpx.Client(base_url=server.url, headers=headers, timeout=300) as http:
            yield server, http


def _memory(args, server, http, base, tasks, budget) -> dict:
    """RSS vs N distinct tasks on a server that has served nothing yet."""
    files = [("files", (f"{i}.png", png(im), "image/png")) for i, im in
             enumerate(random_images(8, seed=1))]  # fmt: skip
    curve = memory_curve(server, http, tasks, base, n_tasks=args.memory_tasks,
                         predict_files=files)  # fmt: skip
    model_mb = budget / args.cache_models / 1e6
    return curve | plateau(curve["rss_points"], args.cache_models * args.workers, model_mb)


def _cold_summary(figures: dict) -> dict:
    """The interleaved cold-personalize figures, kept per malloc setting for the A/B."""
    keys = ("cold_personalize_s", "cold_over_sum", "synthesis_s", "warm_personalize_p50_s")
    return {f"interleaved_{k}": figures[k] for k in keys}


def _phases(args, work, store, redis, base, tasks, budget) -> tuple[dict, dict[str, float]]:
    """Every measurement; the memory curve runs first, while the server is fresh (N from 0).

    With the malloc A/B, a second fresh server with the other setting repeats the memory curve.
    """
    clock: dict[str, float] = {}
    t0 = time.perf_counter()
    with _serve(args, work, store, redis, args.malloc, budget) as (server, http):
        clock["server_start"] = time.perf_counter() - t0
        memory = {f"malloc_{args.malloc}": _measure_phase(
            clock, "memory", lambda: _memory(args, server, http, base, tasks, budget))}
        figures, model = _measure_phase(clock, "personalize", lambda: personalize(
            http, tasks, base, repeats=args.repeats, warm_n=args.warm_n, workers=args.workers))
        memory[f"malloc_{args.malloc}"] |= _cold_summary(figures)
        server.wait_quiet()
        figures |= _measure_phase(clock, "downloads", lambda: downloads(
            http, model, repeats=args.repeats))
        server.wait_quiet()
        figures |= _measure_phase(clock, "predict", lambda: predict(
            http, model, batches=args.batches, repeats=args.repeats, workers=args.workers,
            device=base.device))
        figures |= _measure_phase(clock, "concurrency", lambda: throughput(
            server, http, tasks, levels=args.callers, cold_per_caller=args.cold_per_caller,
            warm_per_caller=args.warm_per_caller))
    if args.malloc_ab:
        other = {"tuned": "default", "default": "tuned"}[args.malloc]
        with _serve(args, work, store, redis, other, budget) as (server, http):
            memory[f"malloc_{other}"] = _measure_phase(
                clock, "memory_ab", lambda: _memory(args, server, http, base, tasks, budget))
            ab, _ = personalize(http, tasks, base, repeats=args.repeats, warm_n=args.warm_n,
                                workers=args.workers)  # same sequence as the main server's
            memory[f"malloc_{other}"] |= _cold_summary(ab)
    figures["memory"] = memory
    return figures, clock


def _measure_phase(clock: dict[str, float], name: str, fn):
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        clock[name] = time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict:
    """Build the artifact, start redis + uvicorn, measure every phase, report."""
    args = parse(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {args.device}: no CUDA device on this machine")
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    t_start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tailor-bench-"))
    redis = None
    try:
        store = build_store(work, q=args.q, num_classes=NUM_CLASSES,
                            use_encoder=not args.quick)
        redis = Redis(work)
        base = Baselines(store, NUM_CLASSES, args.device)
        tasks = Tasks([f"{c['name']}" for c in base.bundle.catalogue["classes"]])
        budget = args.cache_models * model_nbytes(3)
        setup_s = time.perf_counter() - t_start
        result, clock = _phases(args, work, store, redis, base, tasks, budget)
        clock["setup"] = setup_s
    finally:
        if redis is not None:
            redis.stop()
        shutil.rmtree(work, ignore_errors=True)
    result["memory"]["budget_models"] = args.cache_models
    result["memory"]["budget_bytes"] = budget
    result["meta"] = {
        "command": " ".join([".venv/bin/python", "benchmarks/service.py", *(argv or [])]),
        "quick": args.quick, "workers": args.workers, "q": args.q, "threads": args.threads,
        "malloc": args.malloc, "malloc_env": MALLOC_TUNED if args.malloc == "tuned" else {},
        "repeats": args.repeats, "num_classes_artifact": NUM_CLASSES, "task_classes": 3,
        "cpus": os.cpu_count(), "torch": torch.__version__, "machine": platform.machine(),
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "wall_s": time.perf_counter() - t_start, "phase_s": clock, "redis": True,
        "device": args.device,
        "gpu": torch.cuda.get_device_name(args.device) if args.device != "cpu" else None,
    }  # fmt: skip
    curves = {k: v["rss_points"] for k, v in result["memory"].items() if k.startswith("malloc_")}
    result["memory"]["png"] = str(plot(curves, args.cache_models, args.out / "rss.png"))
    report(result, args.out / "service.json")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
