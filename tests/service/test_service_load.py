"""Smoke test: benchmarks/load.py's generator runs against a live app and writes its JSON.

A few users for ~2 s against the module's real uvicorn + Redis app (the full 60 s, 50-user run is
``benchmarks/load.py``); checks the report's shape and that light mixed traffic has no errors.
Timings are not asserted.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "load.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("bench_load", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Stack:
    """The two things ``run_load`` needs from a ``LiveStack``, backed by the test server."""

    def __init__(self, live) -> None:
        self.url, self._admin = live.url, live.admin

    def make_keys(self, n: int) -> list[str]:
        made = [self._admin.post("/v1/keys", json={"name": f"load-{i}"}) for i in range(n)]
        assert all(m.status_code == 201 for m in made)
        return [m.json()["key"] for m in made]


def test_load_generator_smoke(live, tmp_path):
    load = _load_script()
    result = asyncio.run(load.run_load(_Stack(live), users=3, duration=2.0, max_requests=60,
                                       n_tasks=2, seed=0))  # fmt: skip
    result.update(users=3, workers=1, tasks=2, redis=True, seed=0, rate_limit_per_minute=1200,
                  quick=True)  # fmt: skip
    path = load._report(result, tmp_path)
    saved = json.loads(Path(path).read_text())
    assert saved["errors"] == 0, saved["error_samples"]
    assert 0 < saved["requests"] <= 60
    assert saved["requests"] == sum(r["requests"] for r in saved["routes"].values())
    assert "personalize" in saved["routes"]  # every user starts by personalizing
    for route in saved["routes"].values():
        assert {"p50_ms", "p99_ms", "statuses"} <= set(route) and route["p99_ms"] >= route["p50_ms"]
