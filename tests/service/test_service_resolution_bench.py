"""benchmarks/resolution.py --no-sweep (stop 45): scores at the service's setting only, with
the real bundled MiniLM, on a few rows (the full run scores 5,033). Figures are not asserted;
the benchmark prints and writes them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/ is no package that
import benchmarks.resolution as bench  # noqa: E402  # is installed: run from the repository


def test_no_sweep_scores_once_at_the_service_setting(tmp_path, monkeypatch):
    rows = bench.load_rows(outside={"outside55": bench.OUTSIDE["outside55"]})
    few = [r for r in rows if r["split"] == "report" and r["kind"] == "natural"][:6] + \
        [r for r in rows if r["split"] == "outside55"][-6:]  # definition rows
    monkeypatch.setattr(bench, "load_rows", lambda: few)
    results = bench.main(["--no-sweep", "--out", str(tmp_path)])
    assert results["sweep"] == []
    assert list(results["scores"]) == [f"default {results['chosen_threshold'][0]}/"
                                       f"{results['chosen_threshold'][1]}"]
    saved = json.loads((tmp_path / "resolution.json").read_text())
    assert saved["rows"] == len(few)
    assert {o["id"] for o in saved["failures"]} <= {r["id"] for r in few}
