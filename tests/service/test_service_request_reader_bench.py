"""benchmarks/request_reader.py on a four-row set and two readers set by hand (stop 58): every
configuration is scored as the service answers, the paths each reader takes are known in
advance, and a reader trained on a scored set is refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/ is no package that
import benchmarks.request_reader as bench  # noqa: E402  # is installed: run from the repository
from model_store.testing_text import forced_reader  # noqa: E402

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
ROWS = [("cats and dogs", ["cat", "dog"], None),
        ("cats and cows", ["cat", "cow"], None),
        ("mice and dogs and cats", None, None),  # the rules refuse 'mice'
        ("sketches of cats and dogs", ["cat", "dog"], "sketch")]


@pytest.fixture(scope="module")
def scored(pacs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    data = tmp / "resolution_tiny.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{i}", "kind": "natural", "description": text,
                                        "expect": expect, "domain": domain}) + "\n"
                            for i, (text, expect, domain) in enumerate(ROWS)))  # fmt: skip
    readers = [forced_reader(tmp / "sure", pacs.names, DOMAINS, ["cat", "dog"], None),
               forced_reader(tmp / "unsure", pacs.names, DOMAINS, ["cat", "dog"], None, 0.0)]
    bench.OUTSIDE["tiny"] = data
    try:
        full = bench.main(["--reader", *map(str, readers), "--sets", "tiny=tiny", "--out",
                           str(tmp / "out")])  # fmt: skip
    finally:
        bench.OUTSIDE.pop("tiny")
    return tmp, full


def test_each_configuration_is_scored_as_the_service_answers(scored):
    tmp, full = scored
    sure, unsure = (full[str(tmp / name)]["tiny"] for name in ("sure", "unsure"))
    for result in (sure, unsure):
        assert set(result["configurations"]) == set(bench.configurations(0.03))
        assert all(c["right"] + c["wrong"] + c["asked"] == len(ROWS)
                   for c in result["configurations"].values())  # fmt: skip
        assert result["configurations"]["rules alone"] == {
            **result["configurations"]["rules alone"], "right": 4, "wrong": 0, "asked": 0}
    # the sure reader reads cat, dog, no domain, everywhere: it asks back 'cats and cows' and
    # the sketches, and answers the refusal (wrong) from a rescue confidence of 0.7
    assert {k: sure["configurations"]["stop 57 (0.7 / 0.7, no veto)"][k]
            for k in ("right", "wrong", "asked")} == {"right": 1, "wrong": 1, "asked": 2}
    assert sure["alone"] == {"right": 1, "wrong": 3, "asked": 0}
    # the unsure one (every class at one half) reads no class set: no ask-back, no veto, no
    # rescue; the rules' answers stand everywhere
    assert all({k: c[k] for k in ("right", "wrong", "asked")} == {"right": 4, "wrong": 0,
                                                                  "asked": 0}
               for c in unsure["configurations"].values())  # fmt: skip
    saved = json.loads((tmp / "out" / "request_reader.json").read_text())
    assert saved["veto"] == 0.03 and set(saved["readers"]) == set(full)
    assert (tmp / "out" / "request_reader.png").stat().st_size > 0


def test_a_reader_trained_on_a_scored_set_is_refused(scored):
    tmp, _ = scored
    config = json.loads((tmp / "sure" / "reader.json").read_text())
    (tmp / "sure" / "reader.json").write_text(json.dumps({**config, "files": [
        "resolution_tiny.jsonl"]}))  # fmt: skip
    with pytest.raises(SystemExit, match="trained on"):
        bench.score_reader(tmp / "sure", {"t": ("tiny",)}, "onnx", 0.03)


def test_the_forest_seconds_rescues_and_one_fitted_on_a_scored_set_is_refused(
        scored, named_forest, tmp_path, pacs):
    from service.kinds.reader_features import VERSION

    tmp, _ = scored
    groups, forest = {"t": ("tiny",)}, named_forest.forest
    with pytest.raises(SystemExit, match="does not load"):
        bench._forest(tmp_path / "absent.safetensors", groups)
    forest.save(tmp_path / "none.safetensors", {"features": VERSION})
    with pytest.raises(SystemExit, match="records no sets"):
        bench._forest(tmp_path / "none.safetensors", groups)
    forest.save(tmp_path / "seen.safetensors", {"features": VERSION, "sets": json.dumps([
        "tiny", "tune"])})  # fmt: skip
    with pytest.raises(SystemExit, match="fitted on \\['tiny'\\]"):
        bench._forest(tmp_path / "seen.safetensors", groups)
    forest.save(tmp_path / "ok.safetensors", {"features": VERSION, "sets": json.dumps(["tune"])})
    fair = forced_reader(tmp_path / "fair", pacs.names, DOMAINS, ["dog", "cat"], None, 4.8)
    bench.OUTSIDE["tiny"] = tmp / "resolution_tiny.jsonl"
    try:
        full = bench.main(["--reader", str(fair), "--sets", "tiny=tiny", "--forest",
                           str(tmp_path / "ok.safetensors"), "--out", str(tmp_path / "out")])
    finally:
        bench.OUTSIDE.pop("tiny")
    got = full[str(fair)]["tiny"]["configurations"]
    assert set(got) == set(bench.configurations(0.03, forest=True))
    # the refusal ('mice and dogs and cats', to ask back) is answered when the forest seconds
    # the fairly sure reading (~0.78): one more wrong 200 than without it
    assert got["ask 0.5 / rescue 0.9 / forest 0.7"]["wrong"] == \
        got["ask 0.5 / rescue 0.9"]["wrong"] + 1  # fmt: skip
