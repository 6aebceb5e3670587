"""Concurrent callers and memory: personalizations/s at 1/4/16 callers, RSS vs distinct tasks."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from benchmarks._latency import await_write_behind
from benchmarks._measure import Baselines, Tasks, median, percentile, timed
from benchmarks._server import Server


def _run_concurrently(url: str, headers: dict, bodies: list[dict], callers: int) -> dict:
    """POST the bodies from ``callers`` threads, each with its own keep-alive client (built
    before the clock starts: an httpx client costs tens of ms to create); wall-clock rate.

    ``sustained_per_s`` also waits for every new model's write-behind to land (its digest in
    SQL): responses return before it, so the response rate alone flatters a burst.
    """
    clients = [httpx.Client(base_url=url, headers=headers, timeout=300) for _ in range(callers)]
    latencies: list[float] = []
    ids: set[str] = set()
    start = threading.Barrier(callers + 1)

    def caller(i: int) -> None:
        start.wait()
        http = clients[i]
        for body in bodies[i::callers]:
            t0 = time.perf_counter()
            resp = http.post("/v1/personalize", json=body)
            resp.raise_for_status()
            latencies.append(time.perf_counter() - t0)
            ids.add(resp.json()["id"])

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for model_id in ids:  # responses return before the write-behind (serialise + Redis SET)
        await_write_behind(clients[0], model_id)
    drained = time.perf_counter() - t0
    for c in clients:
        c.close()
    if len(latencies) != len(bodies):
        raise RuntimeError(f"{len(bodies) - len(latencies)} of {len(bodies)} requests failed")
    return {"requests": len(bodies), "per_s": len(bodies) / wall,
            "sustained_per_s": len(bodies) / drained,
            "p50_s": median(latencies), "p90_s": percentile(latencies, 90)}  # fmt: skip


def throughput(server: Server, http: httpx.Client, tasks: Tasks, *, levels: list[int],
               cold_per_caller: int, warm_per_caller: int) -> dict:  # fmt: skip
    """Personalizations/s: distinct tasks (every one synthesized) and one repeated task (cache)."""
    rows = []
    warm_body = {"classes": tasks.next()}
    for _ in range(2 * server.workers):
        http.post("/v1/personalize", json=warm_body).raise_for_status()
    for callers in levels:
        server.wait_quiet()  # the previous level's write-behinds must not count here
        cold = [{"classes": tasks.next()} for _ in range(callers * cold_per_caller)]
        row = {"callers": callers}
        row |= {f"cold_{k}": v for k, v in
                _run_concurrently(server.url, http.headers, cold, callers).items()}  # fmt: skip
        server.wait_quiet()
        warm = [warm_body] * (callers * warm_per_caller)
        row |= {f"warm_{k}": v for k, v in
                _run_concurrently(server.url, http.headers, warm, callers).items()}  # fmt: skip
        rows.append(row)
    return {"concurrency": rows}


def memory_curve(server: Server, http: httpx.Client, tasks: Tasks, base: Baselines, *,
                 n_tasks: int, predict_files: list) -> dict:  # fmt: skip
    """RSS of the server after each of ``n_tasks`` distinct personalizations (+ one /predict on
    each), on a fresh server whose LRU budget is a few models; also times each cold request
    alternately with the read-the-bases yardstick (so a malloc A/B gets a latency figure too)."""
    server.wait_quiet()
    points = [(0, server.rss_bytes())]
    cold, read = [], []
    for n in range(1, n_tasks + 1):
        resp = None

        def request() -> None:
            nonlocal resp
            resp = http.post("/v1/personalize", json={"classes": tasks.next()})
            resp.raise_for_status()

        cold.append(timed(request))
        model = resp.json()
        http.post(model["predict_url"], files=predict_files).raise_for_status()
        await_write_behind(http, model["id"])
        read.append(timed(base.read_sum))
        points.append((n, server.rss_bytes()))
    return {"rss_points": [[n, b / 1e6] for n, b in points],
            "cold_personalize_s": median(cold), "cold_over_sum": median(cold) / median(read)}


def plateau(points: list[list[float]], budget_models: int, model_mb: float) -> dict:
    """Growth per extra model once the LRU is full (second half of the points past the budget).

    "plateau" = that slope is under 10 % of a model's size: memory stops following N.
    """
    tail = [p for p in points if p[0] >= 2 * budget_models] or points[-2:]
    if len(tail) < 2:
        tail = points[-2:]
    (n0, r0), (n1, r1) = tail[0], tail[-1]
    slope = (r1 - r0) / max(1, n1 - n0)
    return {"rss_slope_MB_per_model": slope, "plateau": slope < 0.1 * model_mb,
            "rss_final_MB": points[-1][1], "rss_start_MB": points[0][1]}  # fmt: skip


def plot(curves: dict[str, list[list[float]]], budget_models: int, path: Path) -> Path:
    """PNG of RSS vs distinct tasks, one line per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    for label, points in curves.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", ms=3, label=label)
    ax.axvline(budget_models, color="grey", ls="--", lw=1, label="LRU budget (models)")
    ax.set_xlabel("distinct tasks personalized (N)")
    ax.set_ylabel("server RSS (MB, all processes)")
    ax.set_title("Resident memory vs N (must plateau)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
