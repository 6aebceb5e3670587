"""``tailor train phrase-reader`` on a small file written here, with the real bundled MiniLM:
what it reads, what it refuses, and that the saved model learnt its phrases."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model_store.phrase_model import PhraseModel
from trainer.reader.phrases import UNSEEN, fitted_negative, phrase_rows, phrases_main

ROWS = [
    {"kind": "definitions", "classes": ["the animal that says moo", "a pet that barks"],
     "expect": ["cow", "dog"], "domain": None},
    {"kind": "definitions", "classes": ["a dairy animal with udders", "a small pet that meows"],
     "expect": ["cow", "cat"], "domain": None},
    {"kind": "definitions", "classes": ["man's best friend", "a kitten grown up"],
     "expect": ["dog", "cat"], "domain": None},
    {"kind": "definitions", "classes": ["a black-and-white grazing animal on a farm",
                                        "a loyal hound"], "expect": ["cow", "dog"],
     "domain": None},
    {"kind": "definitions", "classes": ["a whiskered house pet", "a cattle beast"],
     "expect": ["cat", "cow"], "domain": None},
    {"kind": "definitions", "classes": ["a unicorn", "a pet that barks"], "expect": None,
     "domain": None},  # a refusal names no phrase's class
    {"kind": "definitions", "classes": ["one phrase"], "expect": ["cow", "dog"],
     "domain": None},  # lengths differ: not read
    {"kind": "natural", "description": "cats and dogs", "expect": ["cat", "dog"],
     "domain": None},
    # hard pairs: a thing the catalogue lacks beside a catalogue class ("c" is in the fitted
    # half, "a" is not: the test below checks), and a catalogue probe, never fitted on
    {"kind": "definitions", "classes": ["a pet hamster in a cage", "a pet that barks"],
     "accept": [], "partner": "dog", "note": "c"},
    {"kind": "definitions", "classes": ["a small rodent that squeaks", "a pet that barks"],
     "accept": [], "partner": "dog", "note": "a"},
    {"kind": "definitions", "classes": ["a milk cow", "a pet that barks"], "accept": ["cow"],
     "partner": "dog", "note": ""},
]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "resolution_small.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return path


def test_only_answerable_definitions_and_fitted_negatives_are_read(data):
    assert fitted_negative(ROWS[-3]) and not fitted_negative(ROWS[-2])
    phrases, labels = phrase_rows([data])
    assert len(phrases) == len(labels) == 11 and "a unicorn" not in phrases
    assert labels[:2] == ["cow", "dog"] and labels[-1] is None
    assert phrases[-1] == "a pet hamster in a cage" and "a milk cow" not in phrases


def test_the_saved_model_reads_its_phrases_and_never_picks_an_unseen_class(data, tmp_path):
    out = tmp_path / "p.safetensors"
    summary = phrases_main(["--data", str(data), "--out", str(out)])
    assert summary["phrases"] == 11 and summary["none"] == 1
    assert summary["files"] == ["resolution_small.jsonl"]
    model = PhraseModel.load(out)
    assert len(model.classes) == 30 and model.encoder.endswith("/384")
    seen = [model.classes.index(c) for c in ("cat", "cow", "dog")] + [30]  # 30: none
    unseen = [k for k in range(31) if k not in seen]
    assert np.all(model.bias[unseen] == UNSEEN) and not model.weight[unseen].any()
    from model_store.text import TextEncoder

    phrases, labels = phrase_rows([data])
    p = model.probabilities(TextEncoder(None, device="cpu").encode(phrases))
    assert [([*model.classes, None])[k] for k in p.argmax(1)] == labels


@pytest.mark.parametrize("extra, message", [
    (["--C", "0"], "--C must be positive"),
    (["--hold-out", "{data}"], "kept out of training"),
])
def test_bad_options_are_refused(data, tmp_path, extra, message):
    args = ["--data", str(data), "--out", str(tmp_path / "p.safetensors")]
    with pytest.raises(SystemExit, match=message):
        phrases_main(args + [e.format(data=data) for e in extra])


def test_files_without_usable_rows_or_with_foreign_labels_are_refused(tmp_path):
    empty = tmp_path / "natural.jsonl"
    empty.write_text(json.dumps(ROWS[-1]) + "\n")
    with pytest.raises(SystemExit, match="no labelled definitions"):
        phrases_main(["--data", str(empty), "--out", str(tmp_path / "p.safetensors")])
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps({**ROWS[0], "expect": ["cow", "unicorn"]}) + "\n")
    with pytest.raises(SystemExit, match="the catalogue lacks"):
        phrases_main(["--data", str(odd), "--out", str(tmp_path / "p.safetensors")])


def test_two_labels_make_a_reader_of_both(data, tmp_path):
    """scikit-learn fits two labels as one row of log-odds; both outputs must read it."""
    two = tmp_path / "two.jsonl"
    two.write_text("".join(json.dumps(r) + "\n" for r in ROWS if r.get("expect") and set(
        r["expect"]) == {"cow", "dog"} and len(r["classes"]) == 2))
    out = tmp_path / "p.safetensors"
    phrases_main(["--data", str(two), "--out", str(out)])
    model = PhraseModel.load(out)
    from model_store.text import TextEncoder

    phrases, labels = phrase_rows([two])
    p = model.probabilities(TextEncoder(None, device="cpu").encode(phrases))
    assert [model.classes[k] for k in p.argmax(1)] == labels and p.max(1).min() > 0.5
