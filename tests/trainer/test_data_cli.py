"""`tailor data build|preview` through the real typer app, and the preview grid's geometry."""

from __future__ import annotations

import numpy as np
from PIL import Image
from typer.testing import CliRunner

from trainer.cli import app
from trainer.data import preview as pv


def test_build_and_preview_tiny(tiny_pacs, tiny_data_dir, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["data", "build", "--size", "tiny", "--data-dir",
                                 str(tiny_data_dir)])
    assert result.exit_code == 0, result.output
    assert tiny_pacs.fingerprint[:16] in result.output and "400/80/160" in result.output
    out = tmp_path / "grid.png"
    result = runner.invoke(app, ["data", "preview", "--size", "tiny", "--data-dir",
                                 str(tiny_data_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    img = Image.open(out)
    side = 32 * pv.SCALE
    assert img.size == (pv.LABEL_W + 4 * (4 * side + pv.GAP), pv.HEADER_H + 20 * side)
    # the first cell holds a rendered image, not blank paper
    cell = img.crop((pv.LABEL_W, pv.HEADER_H, pv.LABEL_W + side, pv.HEADER_H + side))
    assert len(np.unique(np.asarray(cell).reshape(-1, 3), axis=0)) > 10


def test_bad_size_exits_with_message(tmp_path):
    result = CliRunner().invoke(app, ["data", "build", "--size", "huge", "--data-dir",
                                      str(tmp_path)])
    assert result.exit_code == 2 and "unknown size" in result.output


def test_train_subapp_is_registered():
    result = CliRunner().invoke(app, ["--help"])
    assert "data" in result.output and "train" in result.output
