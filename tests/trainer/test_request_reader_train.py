"""`tailor train request-reader` on a tiny real encoder: it learns labelled requests, saves a
folder the model store loads back to the same outputs, and refuses bad rows and folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model_store.request_model import CONFIG, WEIGHTS, load_reader, reading
from model_store.testing_text import make_tiny_encoder
from trainer.reader.train import (
    JOINS,
    definition_rows,
    natural_rows,
    outcomes,
    reader_main,
    targets,
)

CLASSES = ["cat", "dog", "zero", "one"]
DOMAINS = ["photo", "sketch"]
ROWS = [("cats and dogs please", ["cat", "dog"], None),
        ("photos of cats and dogs", ["cat", "dog"], "photo"),
        ("zeros and ones", ["zero", "one"], None),
        ("sketches of zeros and ones", ["zero", "one"], "sketch"),
        ("what is the weather like", None, None)]


def _write(path: Path, rows, start: int = 0) -> Path:
    lines = [json.dumps({"id": f"r{start + i}", "kind": "natural", "description": text,
                         "expect": expect, "domain": domain})
             for i, (text, expect, domain) in enumerate(rows)]  # fmt: skip
    lines.append(json.dumps({"id": "d0", "kind": "definitions", "classes": ["a pet that purrs"],
                             "expect": ["cat"], "domain": None}))  # skipped: no description
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("request-reader")
    catalogue = tmp / "catalogue.json"
    catalogue.write_text(json.dumps({"classes": [{"name": c} for c in CLASSES],
                                     "domains": DOMAINS}))
    data = _write(tmp / "train.jsonl", ROWS * 8)
    val = _write(tmp / "val.jsonl", ROWS, 100)
    summary = reader_main(["--data", str(data), "--val", str(val), "--catalogue", str(catalogue),
                           "--base", str(make_tiny_encoder(tmp / "encoder")), "--epochs", "6",
                           "--lr", "2e-3", "--head-lr", "1e-2", "--batch-size", "8",
                           "--device", "cpu", "--out", str(tmp / "out"),
                           "--counterfactuals", "0", "--foreign", "0"])
    return tmp, summary


def test_it_learns_the_rows_and_logs_each_epoch(trained):
    _, summary = trained
    assert summary["rows"] == 40 and [e["epoch"] for e in summary["epochs"]] == list(range(1, 7))
    assert summary["epochs"][-1]["loss"] < summary["epochs"][0]["loss"] / 2
    assert summary["epochs"][-1]["val_exact"] == 1.0


def test_the_saved_folder_reads_each_request_as_trained(trained):
    tmp, _ = trained
    reader = load_reader(tmp / "out")
    assert reader.classes == CLASSES and reader.domains == DOMAINS
    pc, pd = reader.probabilities([text for text, _, _ in ROWS])
    for (text, expect, domain), c, d in zip(ROWS, pc, pd, strict=True):
        chosen, got_domain, confidence = reading(c, d, DOMAINS)
        assert (sorted(CLASSES[k] for k in chosen) or None) == (sorted(expect) if expect else None)
        assert got_domain == domain and 0.0 < confidence <= 1.0, text
    rows = natural_rows([tmp / "val.jsonl"])
    assert outcomes(reader, rows) == {"right": 5, "wrong": 0, "asked": 0}
    assert outcomes(reader, [{**rows[0], "expect": ["cat", "one"]}, {**rows[4], "expect": [
        "zero", "one"]}]) == {"right": 0, "wrong": 1, "asked": 1}  # fmt: skip
    again = load_reader(tmp / "out").probabilities(["cats and dogs please"])
    np.testing.assert_allclose(again[0], pc[:1], atol=1e-6)


def test_a_folder_of_another_version_or_with_foreign_weights_is_refused(trained, tmp_path):
    import shutil

    from safetensors.torch import load_file, save_file

    tmp, _ = trained
    folder = shutil.copytree(tmp / "out", tmp_path / "old")
    config = json.loads((folder / CONFIG).read_text())
    (folder / CONFIG).write_text(json.dumps({**config, "version": "request-reader-0"}))
    with pytest.raises(ValueError, match="version"):
        load_reader(folder)
    (folder / CONFIG).write_text(json.dumps({**config, "classes": CLASSES[:3]}))
    with pytest.raises(ValueError, match="do not fit"):
        load_reader(folder)
    (folder / CONFIG).write_text(json.dumps({**config, "classes": CLASSES[::-1]}))
    with pytest.raises(ValueError, match="other classes"):  # same shapes, rows relabelled
        load_reader(folder)
    (folder / CONFIG).write_text(json.dumps({**config, "max_length": 100_000}))
    with pytest.raises(ValueError, match="positions"):
        load_reader(folder)
    (folder / CONFIG).write_text(json.dumps(config))
    state = load_file(str(folder / WEIGHTS))
    state.pop("class_head.bias")
    save_file(state, str(folder / WEIGHTS))
    with pytest.raises(ValueError, match="do not fit"):
        load_reader(folder)
    (folder / WEIGHTS).write_bytes(b"\x00" * 64)  # damaged
    with pytest.raises(ValueError, match="do not fit"):
        load_reader(folder)


def test_rows_naming_a_class_or_domain_outside_the_catalogue_are_an_error(tmp_path):
    path = _write(tmp_path / "a.jsonl", [("cats and mice", ["cat", "mouse"], None)])
    with path.open("a") as f:  # a hard negative's row: no domain label, so not read
        f.write(json.dumps({"id": "h0", "kind": "natural", "description": "cats", "expect": None})
                + "\n")
    rows = natural_rows([path])
    assert [r["id"] for r in rows] == ["r0"] and rows[0]["split"] == "a"
    with pytest.raises(ValueError, match="mouse"):
        targets(rows, CLASSES, DOMAINS)
    rows = natural_rows([_write(tmp_path / "b.jsonl", [("oil cats", ["cat", "dog"], "oil")])])
    with pytest.raises(ValueError, match="oil"):
        targets(rows, CLASSES, DOMAINS)


def test_default_files_leave_out_the_held_sets_and_explicit_ones_may_not_name_them(tmp_path):
    from trainer.reader.train import DATA, training_files

    held = [DATA / "resolution_outside90.jsonl", DATA / "resolution_outside93.jsonl"]
    files = training_files(None, held)
    assert DATA / "resolution_dev.jsonl" in files and DATA / "resolution_outside91.jsonl" in files
    assert not set(files) & set(held) and len(files) == len(list(DATA.glob("resolution_*"))) - 2
    with pytest.raises(SystemExit, match="outside90"):
        training_files([DATA / "resolution_dev.jsonl", held[0]], held)


def test_a_loss_that_is_not_finite_stops_training(tmp_path):
    data = _write(tmp_path / "t.jsonl", ROWS)
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"classes": CLASSES, "domains": DOMAINS}))
    with pytest.raises(FloatingPointError, match="loss"):
        reader_main(["--data", str(data), "--catalogue", str(catalogue), "--lr", "nan",
                     "--base", str(make_tiny_encoder(tmp_path / "enc")), "--epochs", "2",
                     "--device", "cpu", "--out", str(tmp_path / "out")])


def test_onnx_runtime_reads_as_torch_does_and_a_failed_export_stays_on_torch(trained,
                                                                            monkeypatch):
    tmp, _ = trained
    reader = load_reader(tmp / "out")
    texts = [text for text, _, _ in ROWS] + ["a much longer request " * 10]
    want = reader.torch_probabilities(texts)
    assert reader.use_onnx() == "onnx"
    for got, ref in zip(reader.probabilities(texts), want, strict=True):
        np.testing.assert_allclose(got, ref, atol=1e-5)
    import model_store.request_onnx as ro

    monkeypatch.setattr(ro, "_session", lambda r: 1 / 0)
    again = load_reader(tmp / "out")
    assert again.use_onnx() == "torch" and again.probabilities(texts)[0].shape == want[0].shape


def test_a_label_attention_reader_learns_saves_and_reads_alike_on_onnx(tmp_path):
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"classes": CLASSES, "domains": DOMAINS}))
    summary = reader_main([
        "--data", str(_write(tmp_path / "train.jsonl", ROWS * 8)), "--head", "label-attention",
        "--val", str(_write(tmp_path / "val.jsonl", ROWS, 100)), "--catalogue", str(catalogue),
        "--base", str(make_tiny_encoder(tmp_path / "enc")), "--epochs", "6", "--lr", "2e-3",
        "--head-lr", "1e-2", "--batch-size", "8", "--device", "cpu", "--out",
        str(tmp_path / "out"), "--counterfactuals", "0", "--foreign", "0"])  # fmt: skip
    assert summary["recipe"]["head"] == "label-attention"
    assert summary["epochs"][-1]["val_exact"] == 1.0
    reader = load_reader(tmp_path / "out")
    assert reader.model.head == "label-attention"
    assert reader.model.class_read.abs().sum() > 0  # the attention's logits were trained
    texts = [text for text, _, _ in ROWS]
    want = reader.torch_probabilities(texts)
    assert reader.use_onnx() == "onnx"
    for got, ref in zip(reader.probabilities(texts), want, strict=True):
        np.testing.assert_allclose(got, ref, atol=1e-4)
    config = json.loads((tmp_path / "out" / CONFIG).read_text())
    (tmp_path / "out" / CONFIG).write_text(json.dumps({**config, "head": "max"}))
    with pytest.raises(ValueError, match="head"):
        load_reader(tmp_path / "out")
    config.pop("head")  # a stop-57 folder names no head: mean pooling, and these weights
    (tmp_path / "out" / CONFIG).write_text(json.dumps(config))  # are more than it has
    with pytest.raises(ValueError, match="do not fit"):
        load_reader(tmp_path / "out")


def test_definitions_rows_become_one_request_each_in_varied_wordings(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": f"d{i}", "kind": "definitions", "classes": ["a pet that purrs.", "man's best friend",
         "the first digit"][: 2 + i % 2], "expect": None if i == 3 else ["cat", "dog", "zero"][
             : 2 + i % 2], "domain": "sketch" if i == 1 else None} for i in range(12)] + [
        {"id": "n0", "kind": "natural", "description": "cats", "expect": None, "domain": None},
        {"id": "x0", "kind": "definitions", "classes": ["a pet"], "expect": ["cat"]}]))
    rows = definition_rows([path])  # the natural row and the one without a domain: not read
    assert [r["id"] for r in rows] == [f"d{i}" for i in range(12)]
    assert rows[0]["description"] in {j.format("a pet that purrs and man's best friend")
                                      for j in JOINS}  # fmt: skip
    assert "a pet that purrs, man's best friend and the first digit" in rows[1]["description"]
    assert rows[1]["domain"] == "sketch" and rows[3]["expect"] is None
    assert len({r["description"].replace("the first digit", "")[:6] for r in rows}) > 2
    assert definition_rows([path]) == rows  # the wording is the row's, not the run's
    y, d = targets(rows, CLASSES, DOMAINS)
    assert y[1].tolist() == [1.0, 1.0, 1.0, 0.0] and d[1].item() == 2 and y[3].sum() == 0


def test_a_readings_confidence_is_its_chance_and_any_other_reading_is_less_likely():
    from model_store.request_model import chance

    pc, pd = np.array([0.9, 0.8, 0.3, 0.5]), np.array([0.1, 0.7, 0.2])
    chosen, domain, confidence = reading(pc, pd, DOMAINS)
    assert (chosen, domain) == ([0, 1], "photo")
    assert confidence == pytest.approx(0.9 * 0.8 * 0.7 * 0.5 * 0.7)
    assert chance(pc, pd, DOMAINS, chosen, domain) == pytest.approx(confidence)
    assert chance(pc, pd, DOMAINS, [0], None) == pytest.approx(0.9 * 0.2 * 0.7 * 0.5 * 0.1)
    assert chance(pc, pd, DOMAINS, [0, 2], "sketch", with_domain=False) == pytest.approx(
        0.9 * 0.2 * 0.3 * 0.5)  # fmt: skip
