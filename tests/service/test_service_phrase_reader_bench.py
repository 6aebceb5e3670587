"""benchmarks/phrase_reader.py on a four-row set and a reader set by hand: every configuration
is scored as the service answers, the paths it takes are known in advance, and a reader fitted
on a scored set, or recording no files, is refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/ is no package that
import benchmarks.phrase_reader as bench  # noqa: E402  # is installed: run from the repository
from model_store.phrase_model import PhraseModel, encoder_key  # noqa: E402
from trainer.reader.phrases import fitted_negative  # noqa: E402

ROWS = [(["cat", "dog"], ["cat", "dog"]),  # the rules answer it
        (["cat", "the qwxz blorp"], ["cat", "horse"]),  # refused; the reader says horse: right
        (["cat", "the zzyzx thing"], None),  # refused, rightly; the reader answers: wrong
        (["dog", "a qwxz frob"], ["dog", "cow"])]  # refused; the reader says horse: wrong


def _horse(pacs, path: Path, files: list[str] | None) -> Path:
    """A reader that reads every phrase as horse (its bias), saved at ``path``."""
    bias = np.where(np.array([*pacs.names, "none"]) == "horse", 20.0, 0.0)
    PhraseModel(pacs.names, np.zeros((len(pacs.names) + 1, pacs.encoder.dim)), bias,
                encoder_key(pacs.encoder), {} if files is None else {"files": files}).save(path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("phrase-bench")
    data = tmp / "resolution_tiny.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{i}", "kind": "definitions", "classes": said,
                                        "expect": expect, "domain": None}) + "\n"
                            for i, (said, expect) in enumerate(ROWS)))  # fmt: skip
    bench.OUTSIDE["tiny"] = data
    yield tmp
    bench.OUTSIDE.pop("tiny")


def test_each_configuration_is_scored_as_the_service_answers(pacs, tiny):
    model = _horse(pacs, tiny / "horse.safetensors", ["resolution_dev.jsonl"])
    out = bench.main(["--model", str(model), "--sets", "tiny=tiny", "--accept", "0.9",
                      "--no-hard", "--out", str(tiny / "out")])
    counts = {k: (c["right"], c["wrong"], c["asked"])
              for k, c in out["tiny"]["configurations"].items()}  # fmt: skip
    assert counts == {"rules alone": (2, 0, 2), "phrase reader from 0.9": (2, 2, 0)}
    saved = json.loads((tiny / "out" / "phrase_reader.json").read_text())
    assert saved["fitted_on"] == {"files": ["resolution_dev.jsonl"]}
    assert (tiny / "out" / "phrase_reader.png").stat().st_size > 0


@pytest.mark.parametrize("files, message", [(["resolution_tiny.jsonl"], "was fitted on"),
                                            (None, "records no files")])
def test_a_reader_fitted_on_a_scored_set_or_saying_nothing_is_refused(pacs, tiny, files,
                                                                      message):
    model = _horse(pacs, tiny / "refused.safetensors", files)
    with pytest.raises(SystemExit, match=message):
        bench.main(["--model", str(model), "--sets", "tiny=tiny", "--no-hard"])


def test_unknown_sets_are_refused(pacs, tiny, capsys):
    model = _horse(pacs, tiny / "any.safetensors", [])
    with pytest.raises(SystemExit):
        bench.main(["--model", str(model), "--sets", "g=no-such-set", "--no-hard"])
    assert "no outside-written sets named ['no-such-set']" in capsys.readouterr().err


def test_the_hard_pairs_scored_are_never_the_fitted_ones():
    rows = bench.hard_rows()
    lacking = [r for r in rows if not r["accept"]]
    assert len(rows) - len(lacking) == 334 and 150 < len(lacking) < 223
    assert not any(fitted_negative(r) for r in lacking)
