"""Smoke test: benchmarks/text_runtime.py runs end to end, and on real requests of both kinds
the ONNX Runtime resolver gives exactly the PyTorch resolver's answers.

Timings are not asserted (speed claims live in the benchmark's output); the equality of the
answers is the behaviour the service's default runtime rests on.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_onnx_and_torch_resolvers_answer_every_sampled_request_alike(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "text_runtime.py"),
                           "--every", "100", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "text_runtime.json").read_text())
    groups = report["groups"]
    assert groups["natural"]["rows"] > 10 and groups["definitions"]["rows"] > 10
    assert groups["all"]["differing_answers"] == 0, report["differing"]
    for g in groups.values():
        assert all(math.isfinite(g[k]) and g[k] > 0 for k in g if k.endswith("_ms"))
    assert "definitions" in done.stdout and "ratio" in done.stdout
