"""The learned reader of refused descriptions: its forest, its features, its place in a request.

A real forest is fitted (scikit-learn, seconds) on the refused requests of two stored sets, with
the bundled MiniLM and the Tailor-PACS catalogue; nothing is mocked.
"""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from benchmarks.reader import fit, refused
from benchmarks.resolution import OUTSIDE, load_rows
from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.forest import Forest
from service.kinds.reader import Reader, resolve_or_read
from trainer.data.catalogue import catalogue_json


@pytest.fixture(scope="module")
def fitted(pacs, tmp_path_factory):
    """(reader loaded back from safetensors, the sklearn model, the refused rows)."""
    catalogue = catalogue_json()
    rows = [r for r in load_rows(outside={s: OUTSIDE[s] for s in ("outside40", "outside41")})
            if r["kind"] == "natural" and r["split"] in ("outside40", "outside41")]
    items = refused(pacs, catalogue, rows)
    model = fit(items)
    path = tmp_path_factory.mktemp("reader") / "reader.safetensors"
    Forest.from_sklearn(model).save(path)
    return Reader.load(path), model, [i for i in items if "x" in i], rows


def test_forest_equals_sklearn(fitted):
    """The flattened trees give sklearn's own probabilities, after a safetensors round trip."""
    reader, model, items, _ = fitted
    x = np.concatenate([i["x"] for i in items])
    assert np.allclose(reader.forest.predict(x), model.predict_proba(x)[:, 1], atol=1e-9)


def test_forest_refuses_other_files_and_shapes(fitted, tmp_path):
    reader, *_ = fitted
    path = tmp_path / "other.safetensors"
    save_file({"weight": np.zeros(3, dtype=np.float32)}, str(path))
    with pytest.raises(ValueError, match="not a forest"):
        Forest.load(path)
    with pytest.raises(ValueError, match="features"):
        reader.forest.predict(np.zeros((2, 3), dtype=np.float32))


def _a_read_refusal(pacs, fitted):
    """A stored request the rules refuse and the reader reads as two or more classes."""
    reader, _, items, rows = fitted
    by_id = {r["id"]: r for r in rows}
    for item in items:
        text = by_id[item["id"]]["description"]
        with pytest.raises(Problem) as refusal:
            resolve_or_read(pacs, reader, 1.01, PersonalizeCreate(description=text),
                            ["photo", "art_painting", "cartoon", "sketch"])
        if "reading" in refusal.value.extra:
            return text, refusal.value.extra["reading"]
    raise AssertionError("the reader read none of the refused requests as two classes")


def test_refusal_carries_the_reading_below_accept(pacs, fitted):
    """Below ``accept`` the 422 stays, with the whole reading to confirm."""
    _, reading = _a_read_refusal(pacs, fitted)
    assert len(reading["classes"]) >= 2 and 0 <= reading["confidence"] < 1.01
    assert set(reading["classes"]) <= set(pacs.names)


def test_reading_is_the_answer_from_accept(pacs, fitted):
    """From ``accept`` the same reading is the answer (200), said in a note."""
    reader = fitted[0]
    text, reading = _a_read_refusal(pacs, fitted)
    notes: list[str] = []
    matches, _ = resolve_or_read(pacs, reader, reading["confidence"],
                                 PersonalizeCreate(description=text),
                                 ["photo", "art_painting", "cartoon", "sketch"], notes=notes)
    assert [m.name for m in matches] == reading["classes"]
    assert any("learned reader" in n for n in notes)


@pytest.mark.parametrize("text", ['cat" OR 1=1 --', "<script>cats and dogs</script>"])
def test_unreadable_descriptions_stay_refused(pacs, fitted, text):
    """Markup and SQL are refused before any reading, even at accept 0."""
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, fitted[0], 0.0, PersonalizeCreate(description=text),
                        ["photo"])
    assert "reading" not in refusal.value.extra


def test_rules_answer_first(pacs, fitted):
    """A request the rules answer never reaches the reader, even at accept 0."""
    notes: list[str] = []
    matches, _ = resolve_or_read(pacs, fitted[0], 0.0,
                                 PersonalizeCreate(description="cats and dogs"), ["photo"],
                                 notes=notes)
    assert [m.name for m in matches] == ["cat", "dog"] and notes == []


def test_the_service_loads_the_reader_it_is_given(make_settings, fitted, tmp_path):
    """``TAILOR_READER_PATH``: the taper kind reads refusals again with that reader, at
    ``TAILOR_READER_ACCEPT``; with none (or no file there) the rules alone answer."""
    from service.kinds.taper import TaperKind

    path = tmp_path / "reader.safetensors"
    fitted[0].forest.save(path)
    kind = TaperKind.load(make_settings("sqlite://", reader_path=path, reader_accept=0.8), None)
    assert kind.reader is not None and kind.reader_accept == 0.8
    for missing in (None, tmp_path / "absent.safetensors"):
        assert TaperKind.load(make_settings("sqlite://", reader_path=missing), None).reader is None
