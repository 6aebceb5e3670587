"""benchmarks/glyph_catalogue.py and taper_regime.py: the fine-grained catalogue is a valid
``--data`` tree with its catalogue file, and the regime table keys runs by catalogue and width."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

from trainer.data.imagefolder import read_imagefolder
from trainer.data.user_catalogue import build_catalogue, read_catalogue_file

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a script, not a package module (as the other benchmarks)
    return module


glyphs = _script("glyph_catalogue")
regime = _script("taper_regime")


def test_no_class_shares_its_letter_with_another_script():
    chars = [e["char"] for e in glyphs.classes()]
    assert len(chars) == len(set(chars)) == 67
    assert not set(glyphs.SCRIPTS["greek"]) & set("οκνρυ")  # Latin look-alikes are left out
    assert not set(glyphs.SCRIPTS["cyrillic"]) & set("аеорсухкп")
    assert {e["folder"] for e in glyphs.classes()} >= {"greek_alpha", "cyrillic_zhe", "latin_q"}


def test_the_tree_reads_as_user_data_with_script_groups(tmp_path):
    assert glyphs.build(tmp_path, per_cell=3, seed=0) == 67 * 3 * 3
    data = read_imagefolder(tmp_path / "images")
    assert data.images.shape == (603, 32, 32, 3) and data.domain_names == ("mono", "sans", "serif")
    spec = read_catalogue_file(tmp_path / "catalogue.json")
    cat = build_catalogue(list(data.class_names), list(data.domain_names), spec,
                          lambda texts: np.ones((len(texts), 4)), None)
    assert cat.groups == ["cyrillic", "greek", "latin"]
    alpha = next(e for e in cat.entries if e["name"] == "greek alpha")
    assert "α" in alpha["definition"] and alpha["group"] == "greek"
    # the letters are drawn: every image has ink brighter than its paper
    flat = data.images.reshape(len(data.images), -1)
    assert (flat.max(1).astype(int) - flat.min(1) > 40).all()


def test_a_rebuild_is_identical(tmp_path):
    glyphs.build(tmp_path / "a", per_cell=2, seed=3)
    glyphs.build(tmp_path / "b", per_cell=2, seed=3)
    a = sorted((tmp_path / "a").rglob("*.png"))
    assert a and all(p.read_bytes() == (tmp_path / "b" / p.relative_to(tmp_path / "a"))
                     .read_bytes() for p in a)


def _summary(out: Path, name: str, taper: float, selection: float) -> None:
    run = out / name
    run.mkdir(parents=True)
    per = lambda v: {"mean": v, "std": 0.0, "n": 1}  # noqa: E731
    ratio = (1 - taper) / (1 - selection)
    run.joinpath("summary.json").write_text(json.dumps(
        {"ratio": per(ratio), "main": {"taper": per(taper), "selection": per(selection),
                                       "routed": per(taper)}, "wall_seconds": 1.0}))


def test_collect_keys_runs_by_catalogue_and_width_and_reads_pre_width_runs(tmp_path):
    _summary(tmp_path, "glyphs-w16-b12-s0", 0.80, 0.75)
    _summary(tmp_path, "glyphs-w16-b12-s1", 0.70, 0.75)
    _summary(tmp_path, "default-b12-s0", 0.9, 0.9)  # written before the width axis: width 64
    rows = regime.main(["--data", str(tmp_path / "glyphs" / "images"), "--widths", "16,32",
                        "--budgets", "12", "--seeds", "0,1", "--out", str(tmp_path), "--collect"])
    assert [(r["size"], r["width"], r["ratio"]["n"]) for r in rows] == [("glyphs", 16, 2)]
    assert abs(rows[0]["ratio"]["mean"] - (0.8 + 1.2) / 2) < 1e-9
    rows = regime.main(["--sizes", "default", "--budgets", "12", "--seeds", "0",
                        "--out", str(tmp_path), "--collect"])
    assert [(r["size"], r["width"]) for r in rows] == [("default", 64)]
    assert (tmp_path / "regime.png").exists()
