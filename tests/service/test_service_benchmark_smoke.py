"""Smoke test: benchmarks/service.py --quick runs end to end and its JSON has every field.

Timings are NOT asserted (speed claims live in the benchmark's own output); this checks that
the real stack (redis-server + uvicorn subprocesses) came up, every phase ran, and the report
the docs quote from is complete and finite.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "service.py"

LATENCY = ["bases_MB", "read_sum_s", "read_copy_s", "read_clone_s", "read_GBps",
           "cold_personalize_s", "cold_over_sum", "cold_over_copy", "cold_over_clone",
           "synthesis_s", "synthesis_over_sum", "synthesis_over_copy", "cold_minus_synthesis_s",
           "warm_personalize_p50_s", "warm_personalize_p90_s", "onnx_first_download_s"]  # fmt: skip
DOWNLOADS = [f"download_{f}_{u}" for f in ("safetensors_fp32", "safetensors_fp16", "onnx")
             for u in ("MB", "s", "MBps")]  # fmt: skip
PREDICT = ["batch", "raw_s"] + [f"{k}_{f}" for k in ("multipart", "base64")
                                for f in ("s", "over_raw", "decode_s", "transport_s")]  # fmt: skip
CONCURRENCY = ["callers"] + [f"{m}_{f}" for m in ("cold", "warm")
                             for f in ("requests", "per_s", "sustained_per_s", "p50_s",
                                       "p90_s")]  # fmt: skip
MEMORY = ["rss_points", "cold_personalize_s", "cold_over_sum", "rss_slope_MB_per_model",
          "plateau", "rss_final_MB", "rss_start_MB", "interleaved_cold_personalize_s",
          "interleaved_cold_over_sum"]  # fmt: skip
META = ["command", "quick", "workers", "q", "threads", "malloc", "malloc_env", "repeats", "cpus",
        "torch", "loadavg_before", "loadavg_after", "wall_s", "phase_s"]  # fmt: skip


def _finite(value) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


@pytest.mark.integration
def test_quick_service_benchmark_reports_every_field(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed (apt-get install redis-server)")
    env = {k: v for k, v in os.environ.items() if k != "TAILOR_BENCH_CHILD"}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=420)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "cold /personalize" in proc.stdout and "/predict base64 batch 8" in proc.stdout
    r = json.loads((tmp_path / "service.json").read_text())
    for key in LATENCY + DOWNLOADS:
        assert _finite(r[key]), key
    assert [p["batch"] for p in r["predict"]] == [1, 8]
    for row in r["predict"]:
        assert all(_finite(row[k]) for k in PREDICT), row
    assert [c["callers"] for c in r["concurrency"]] == [1, 2]
    for row in r["concurrency"]:
        assert all(_finite(row[k]) for k in CONCURRENCY) and row["cold_requests"] >= 1, row
    mem = r["memory"]["malloc_tuned"]
    assert set(MEMORY) <= set(mem)
    assert [n for n, _ in mem["rss_points"]] == [0, 1, 2, 3]
    assert all(mb > 50 for _, mb in mem["rss_points"])  # a process holding torch, really read
    assert isinstance(mem["plateau"], bool) and r["memory"]["budget_models"] == 1
    assert Path(r["memory"]["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(META) <= set(r["meta"]) and r["meta"]["quick"] is True
    assert {"setup", "server_start", "memory", "predict"} <= set(r["meta"]["phase_s"])
