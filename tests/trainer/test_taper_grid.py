"""benchmarks/taper_grid.py: what --collect tabulates from a grid's run files (issue 14 §6/§7)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "taper_grid.py"
_spec = importlib.util.spec_from_file_location("bench_taper_grid", SCRIPT)
taper_grid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(taper_grid)  # a script, not a package module (as the other benchmarks)


def _write(res, name, acc, plain=True):
    """A run's two files in the shapes `tailor train taper` and plain_images.py write."""
    per = {"mean": acc, "std": 0.0, "n": 1}
    summary = {"main": {"selection": per, "taper": per}, "val": {"selection": per, "taper": per},
               "k": 5, "dynamic": {"5": {"selection": per, "taper": per}},
               "cross_group": {"selection": per, "taper": per}, "runtime": "cpu"}
    (res / f"{name}-summary.json").write_text(json.dumps(summary))
    if plain:
        group = {"all_classes": 100 * acc, "within_group": 100 * acc, "images": 10}
        scores = {view: {"digit": group} for view in taper_grid.VIEWS}
        (res / f"{name}-plain.json").write_text(json.dumps({"scores": scores}))


def test_collect_averages_finished_seeds_and_skips_half_written_runs(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    _write(res, "p0-s0", 0.80)
    _write(res, "p0-s1", 0.90)
    _write(res, "p0-s2", 0.10, plain=False)  # interrupted before scoring: not a finished run
    _write(res, "dyn-s0", 0.70)
    rows = taper_grid.main(["--collect", "--out", str(tmp_path), "--variants", "p0,dyn,p0.2"])
    assert list(rows) == ["p0", "dyn"]  # p0.2 has no finished run
    test = rows["p0"]["tasks"]["taper"]["test"]
    assert test["n"] == 2 and test["mean"] == pytest.approx(85.0)
    assert test["std"] == pytest.approx(5.0)  # ddof 0, as every TAPER report
    inverted = rows["p0"]["plain_within_group"]["plain inverted"]["digit"]
    assert inverted["mean"] == pytest.approx(85.0)
    assert rows["dyn"]["settings"] == taper_grid.VARIANTS["dyn"]
    assert (tmp_path / "grid.png").stat().st_size > 0
    assert json.loads((tmp_path / "grid.json").read_text())["dyn"]["seeds"] == 1


def test_unknown_variant_and_empty_grid_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="unknown variants"):
        taper_grid.main(["--collect", "--out", str(tmp_path), "--variants", "p0,p9"])
    with pytest.raises(SystemExit, match="no finished runs"):
        taper_grid.main(["--collect", "--out", str(tmp_path), "--variants", "p0"])
