"""Load test (not a test): N concurrent users of mixed personalize / weights / predict traffic.

Starts a real stack (``uvicorn --workers W`` + Redis + SQLite, loopback only; ``livestack.py``)
and runs an asyncio httpx generator: every simulated user has its own client key (so the default
per-key rate limit of 1200/min applies unchanged; ``--rate-limit`` overrides it) and loops over

* ``POST /v1/personalize`` (40 %): a class set drawn from a fixed pool of ``--tasks`` tasks, so
  early calls synthesize (cold) and later ones hit the caches (warm);
* ``POST /v1/models/{id}/predict`` (40 %): a batch of 4 PNGs on one of the user's models;
* ``GET /v1/models/{id}/weights`` (20 %): a streamed download (fp16 or fp32).

Bounded in time (``--duration``) and count (``--max-requests``). Any response other than 2xx,
and any transport error, counts as an error (goal: 0). Prints p50/p99 per route and writes JSON
under ``benchmarks/results/load/``.

    .venv/bin/python benchmarks/load.py [--users 50] [--duration 60] [--workers 2] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import io
import json
import random
import statistics
import sys
import time
from pathlib import Path

import httpx
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the `service` package, not benchmarks/service.py
from benchmarks.livestack import LiveStack  # noqa: E402

MIX = (("personalize", 0.4), ("predict", 0.4), ("weights", 0.2))


class Tally:
    """Shared counters: latencies and statuses per route, errors with a few samples."""

    def __init__(self, max_requests: int, deadline: float) -> None:
        self.max_requests, self.deadline = max_requests, deadline
        self.latency: dict[str, list[float]] = collections.defaultdict(list)
        self.statuses: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.errors: collections.Counter[str] = collections.Counter()
        self.samples: list[str] = []
        self.sent = 0
        self.bytes = 0

    def more(self) -> bool:
        """Whether another request may start (time and count bounds)."""
        return self.sent < self.max_requests and time.monotonic() < self.deadline

    def record(self, route: str, seconds: float, status: int | str, detail: str = "") -> bool:
        self.latency[route].append(seconds)
        self.statuses[route][str(status)] += 1
        ok = isinstance(status, int) and 200 <= status < 300
        if not ok:
            self.errors[route] += 1
            if len(self.samples) < 10:
                self.samples.append(f"{route} {status} {detail[:300]}")
        return ok


def _pngs(n: int, seed: int) -> list[tuple[str, tuple[str, bytes, str]]]:
    rng = np.random.default_rng(seed)
    files = []
    for i in range(n):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(buf, "PNG")
        files.append(("files", (f"{i}.png", buf.getvalue(), "image/png")))
    return files


async def _timed(tally: Tally, route: str, call) -> httpx.Response | None:
    """Await ``call`` (a not-yet-started coroutine returning (response, bytes)) and record it."""
    tally.sent += 1
    t0 = time.perf_counter()
    try:
        resp, size = await call
    except httpx.HTTPError as exc:
        tally.record(route, time.perf_counter() - t0, type(exc).__name__, str(exc))
        return None
    tally.bytes += size
    ok = tally.record(route, time.perf_counter() - t0, resp.status_code, resp.text if
                      resp.status_code >= 300 else "")  # fmt: skip
    return resp if ok else None


async def _download(http: httpx.AsyncClient, url: str, dtype: str):
    size = 0
    async with http.stream("GET", url, params={"dtype": dtype}) as resp:
        if resp.status_code != 200:
            await resp.aread()  # keep the problem body for the error sample
            return resp, len(resp.content)
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
    return resp, size


async def user(i: int, url: str, key: str, tasks: list[list[str]], tally: Tally, seed: int):
    """One simulated client: its own key, its own models, a seeded random mix of calls."""
    rng = random.Random(seed * 1000 + i)
    files = _pngs(4, seed * 1000 + i)
    models: list[dict] = []
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as http:
        while tally.more():
            pick = rng.choices([m for m, _ in MIX], [w for _, w in MIX])[0]
            if pick == "personalize" or not models:
                body = {"classes": rng.choice(tasks)}
                call = _json(http.post("/v1/personalize", json=body))
                resp = await _timed(tally, "personalize", call)
                if resp is not None:
                    models = (models + [resp.json()])[-5:]
            elif pick == "predict":
                model = rng.choice(models)
                call = _json(http.post(model["predict_url"], files=files))
                await _timed(tally, "predict", call)
            else:
                model, dtype = rng.choice(models), rng.choice(["fp16", "fp32"])
                await _timed(tally, "weights", _download(http, model["weights_url"], dtype))


async def _json(request):
    resp = await request
    return resp, len(resp.content)


def _tasks(url: str, key: str, n: int, seed: int) -> list[list[str]]:
    """A fixed pool of ``n`` distinct 2-4 class tasks from the live catalogue."""
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as h:
        names = [c["name"] for c in h.get("/v1/catalogue").raise_for_status().json()["classes"]]
    rng, pool = random.Random(seed), set()
    while len(pool) < n:
        pool.add(tuple(sorted(rng.sample(names, rng.randint(2, 4)))))
    return [list(t) for t in sorted(pool)]


async def run_load(stack: LiveStack, users: int, duration: float, max_requests: int, n_tasks: int,
                   seed: int) -> dict:  # fmt: skip
    """Drive ``users`` concurrent users against ``stack`` and summarise per route."""
    keys = stack.make_keys(users)
    tasks = _tasks(stack.url, keys[0], n_tasks, seed)
    t0 = time.monotonic()
    tally = Tally(max_requests, t0 + duration)
    await asyncio.gather(*(user(i, stack.url, keys[i], tasks, tally, seed) for i in range(users)))
    elapsed = time.monotonic() - t0
    routes = {}
    for route, lat in sorted(tally.latency.items()):
        q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
        routes[route] = {"requests": len(lat), "errors": tally.errors[route],
                         "p50_ms": q[49] * 1e3, "p99_ms": q[98] * 1e3, "max_ms": max(lat) * 1e3,
                         "statuses": dict(tally.statuses[route])}  # fmt: skip
    with httpx.Client(base_url=stack.url, timeout=30) as http:
        metrics = http.get("/metrics").text
    return {"routes": routes, "requests": tally.sent, "errors": sum(tally.errors.values()),
            "error_samples": tally.samples, "seconds": elapsed, "rps": tally.sent / elapsed,
            "MB_received": tally.bytes / 1e6,
            "syntheses": _metric_total(metrics, "tailor_syntheses_total"),
            "rate_limited": _metric_total(metrics, "tailor_rate_limited_total")}  # fmt: skip


def _metric_total(text: str, name: str) -> float:
    """Sum of a counter's samples (one worker's view when --workers > 1)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and not line.startswith("#"))  # fmt: skip


def _report(r: dict, out: Path) -> Path:
    print(f"\nTailor load test: {r['users']} users x {r['seconds']:.0f} s, "
          f"{r['workers']} uvicorn worker(s), redis={r['redis']}, {r['tasks']} tasks")  # fmt: skip
    head = ("route", "requests", "errors", "p50 ms", "p99 ms")
    print("  {:12s} {:>9s} {:>7s} {:>9s} {:>9s}  statuses".format(*head))
    for route, s in r["routes"].items():
        statuses = " ".join(f"{k}:{v}" for k, v in sorted(s["statuses"].items()))
        print(f"  {route:12s} {s['requests']:9d} {s['errors']:7d} {s['p50_ms']:9.1f} "
              f"{s['p99_ms']:9.1f}  {statuses}")  # fmt: skip
    print(f"  {'total':12s} {r['requests']:9d} {r['errors']:7d}   ({r['rps']:.1f} req/s, "
          f"{r['MB_received']:.0f} MB received)")  # fmt: skip
    for sample in r["error_samples"]:
        print("  error:", sample)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"load-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(r, indent=2))
    print(f"wrote {path}")
    return path


def main(argv: list[str] | None = None) -> dict:
    """Parse arguments, start the stack, run the load, print and save; exit 1 on any error."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    p.add_argument("--max-requests", type=int, default=200_000)
    p.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    p.add_argument("--tasks", type=int, default=12, help="distinct class sets in the pool")
    p.add_argument("--rate-limit", type=int, default=None, help="per-key requests/min override")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="5 users, 5 s, 3 tasks, 1 worker")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "load")
    a = p.parse_args(argv)
    if a.quick:
        a.users, a.duration, a.tasks, a.workers = 5, 5.0, 3, 1
    env = {} if a.rate_limit is None else {"TAILOR_RATE_LIMIT_PER_MINUTE": str(a.rate_limit)}
    with LiveStack(workers=a.workers, env=env) as stack:
        result = asyncio.run(run_load(stack, a.users, a.duration, a.max_requests, a.tasks, a.seed))
        redis = stack.redis_url is not None
    result.update(users=a.users, workers=a.workers, tasks=a.tasks, redis=redis, seed=a.seed,
                  rate_limit_per_minute=a.rate_limit or 1200, quick=a.quick)  # fmt: skip
    result["path"] = str(_report(result, a.out))
    return result


if __name__ == "__main__":
    raise SystemExit(1 if main()["errors"] else 0)
