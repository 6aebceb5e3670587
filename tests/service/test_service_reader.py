"""The learned reader of refused descriptions: its forest, its file, its place in a request.

A real forest is fitted (scikit-learn, seconds) on the refused requests of two stored sets, with
the bundled MiniLM and the Tailor-PACS catalogue. The guards are driven by one-leaf forests
built here (one that says yes to every class, one that says no, one that breaks), which are
real forests of the same format, so the paths they take are the service's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.forest import Forest
from service.kinds.reader import (
    CONTEXT,
    CONTEXT_DIMS,
    N_FEATURES,
    Reader,
    configured,
    fitted_for,
    resolve_or_read,
)
from service.kinds.reader_features import VERSION, class_vectors, features, project, term_hits
from service.kinds.tokens import words
from trainer.data.catalogue import catalogue_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/ is no installed
from benchmarks._reader_report import report  # noqa: E402  # package: run from the repository
from benchmarks.reader import THRESHOLDS, curve, fit, readings, refused  # noqa: E402
from benchmarks.resolution import OUTSIDE, load_rows  # noqa: E402

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
REFUSED = "mice and dogs and cats"  # the rules: 422, no catalogue class matches 'mice'


def _leaf(value: float, feature: int = 0) -> Reader:
    """A reader whose forest is one tree: a leaf adding ``value`` (log-odds) to every class;
    with ``feature`` out of range, a split that fails when walked."""
    leaf = int(feature == 0)
    arrays = {"feature": np.array([feature]), "threshold": np.zeros(1), "left": np.zeros(1, int),
              "right": np.zeros(1, int), "leaf": np.array([leaf], np.uint8),
              "value": np.array([value]), "missing_left": np.zeros(1, np.uint8),
              "roots": np.zeros(1, int), "baseline": np.zeros(1),
              CONTEXT[0]: np.zeros(384), CONTEXT[1]: np.zeros((CONTEXT_DIMS, 384))}  # fmt: skip
    return Reader(Forest(arrays, N_FEATURES + CONTEXT_DIMS))


@pytest.fixture(scope="module")
def fitted(pacs, tmp_path_factory):
    """(reader loaded back from safetensors, the sklearn model, the refused rows, rows)."""
    rows = [r for r in load_rows(outside={s: OUTSIDE[s] for s in ("outside40", "outside41")})
            if r["kind"] == "natural" and r["split"] in ("outside40", "outside41")]
    items = refused(pacs, catalogue_json(), rows)
    model, reader = fit(items)
    path = tmp_path_factory.mktemp("reader") / "reader.safetensors"
    reader.forest.save(path, {"features": VERSION})
    return Reader.load(path), model, [i for i in items if "x" in i], rows


def test_forest_equals_sklearn(fitted):
    """The flattened trees give sklearn's own probabilities, after a safetensors round trip
    that keeps the class vectors' projection."""
    reader, model, items, _ = fitted
    x = np.concatenate([np.concatenate([i["x"], project(i["c"], reader.mean, reader.components)],
                                       axis=1) for i in items])  # fmt: skip
    assert x.shape[1] == N_FEATURES + CONTEXT_DIMS and reader.components.any()
    assert np.allclose(reader.forest.predict(x), model.predict_proba(x)[:, 1], atol=1e-9)
    first = len(items[0]["x"])  # the first request's rows, one per catalogue class
    assert np.allclose(reader.probabilities(items[0]["x"], items[0]["c"]),
                       model.predict_proba(x[:first])[:, 1], atol=1e-9)


def test_a_reader_fitted_for_other_classes_is_not_used(pacs, caplog):
    """A reader that records another catalogue or encoder offers nothing, and says so once."""
    reader = _leaf(10.0)
    request = PersonalizeCreate(description=REFUSED)
    reader.fitted_with["fitted_for"] = fitted_for(pacs)
    with pytest.raises(Problem) as fits:
        resolve_or_read(pacs, reader, 1.01, request, DOMAINS)
    assert "reading" in fits.value.extra
    reader.fitted_with["fitted_for"] = "0123456789abcdef/other-encoder/384"
    with caplog.at_level("WARNING", logger="service.kinds.reader"):
        for _ in range(2):
            with pytest.raises(Problem) as other:
                resolve_or_read(pacs, reader, 1.01, request, DOMAINS)
            assert "reading" not in other.value.extra
    assert caplog.text.count("it is not used") == 1


def test_class_vectors_are_zero_for_classes_not_named(pacs):
    """Each named class gets the mean vector of its terms in context; the rest zeros, which
    stay zeros after the projection."""
    tokens = words("cats and dogs, not horses, and a cat again")
    vectors = class_vectors(pacs.encoder, tokens, term_hits(pacs, tokens))
    named = {pacs.names[k] for k in np.flatnonzero(vectors.any(axis=1))}
    assert named == {"cat", "dog", "horse"}
    word = pacs.encoder.word_vectors(tokens)
    cat = pacs.names.index("cat")
    at = [i for i, t in enumerate(tokens) if t in ("cats", "cat")]
    assert len(at) == 2 and np.allclose(vectors[cat], word[at].mean(axis=0))
    z = project(vectors, np.ones(384, np.float32), np.ones((CONTEXT_DIMS, 384), np.float32))
    assert not z[pacs.names.index("bird")].any() and z[cat].any()
    long = ["cats"] + ["and"] * 300 + ["dogs"]  # the dogs past the encoder's limit
    far = class_vectors(pacs.encoder, long, term_hits(pacs, long))
    assert far[cat].any() and not far[pacs.names.index("dog")].any()


def test_features_have_the_readers_width(pacs):
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, None, 1.01, PersonalizeCreate(description=REFUSED), DOMAINS)
    assert refusal.value.slug == "unknown-classes"
    trace: dict = {}
    with pytest.raises(Problem):
        from service.kinds.task_request import resolve_request

        resolve_request(pacs, PersonalizeCreate(description=REFUSED), DOMAINS, trace=trace)
    x = features(pacs, REFUSED, trace, "unknown-classes", refusal.value.extra["unknown"])
    assert x.shape == (len(pacs.names), N_FEATURES)


def test_stale_or_foreign_files_are_not_loaded(fitted, tmp_path, make_settings):
    """A file with no forest, or a forest over other features, is refused at load; the
    service then answers with the rules alone instead of failing on every refusal."""
    reader = fitted[0]
    other = tmp_path / "other.safetensors"
    save_file({"weight": np.zeros(3, dtype=np.float32)}, str(other))
    with pytest.raises(ValueError, match="no forest"):
        Forest.load(other)
    stale = tmp_path / "stale.safetensors"
    reader.forest.save(stale, {"features": "an older version"})
    with pytest.raises(ValueError, match="refit"):
        Reader.load(stale)
    with pytest.raises(ValueError, match="features"):
        Reader(Forest(reader.forest.a, N_FEATURES - 1))
    with pytest.raises(ValueError, match="no projection"):  # a forest without class vectors
        Reader(Forest({k: v for k, v in reader.forest.a.items() if k not in CONTEXT},
                      N_FEATURES + CONTEXT_DIMS))
    with pytest.raises(ValueError, match="features"):
        reader.forest.predict(np.zeros((2, 3), dtype=np.float32))
    assert configured(make_settings("sqlite://", reader_path=stale)) is None
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(stale.read_bytes()[:200])  # a truncated copy: safetensors' own error
    assert configured(make_settings("sqlite://", reader_path=damaged)) is None


def test_refusal_offers_the_reading_in_request_order(pacs):
    """Below ``accept`` the 422 stays, with the whole reading; the named classes first, in
    the order the request names them."""
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, _leaf(10.0), 1.01, PersonalizeCreate(description=REFUSED), DOMAINS)
    reading = refusal.value.extra["reading"]
    assert reading["classes"][:2] == ["dog", "cat"] and len(reading["classes"]) == 30
    assert reading["confidence"] > 0.99
    with pytest.raises(Problem) as none:  # no class above one half: nothing to offer
        resolve_or_read(pacs, _leaf(-10.0), 1.01, PersonalizeCreate(description=REFUSED), DOMAINS)
    assert "reading" not in none.value.extra


def test_reading_is_the_answer_from_accept(pacs):
    """From ``accept`` the reading is the answer, with the reader's note only: the refused
    pass's notes and context described a reading that is not the answer."""
    notes, ignored = ["kept from before"], []
    matches, domain = resolve_or_read(
        pacs, _leaf(10.0), 0.9, PersonalizeCreate(description=f"{REFUSED}, in sketches"),
        DOMAINS, ignored, notes)
    assert [m.name for m in matches][:2] == ["dog", "cat"] and domain == "sketch"
    assert notes[0] == "kept from before" and len(notes) == 2 and "learned reader" in notes[1]
    assert ignored == []


def test_fitted_reader_offers_what_it_would_answer(pacs, fitted):
    """For the fitted reader too: the reading a 422 offers is the answer just below it."""
    reader, _, items, rows = fitted
    by_id = {r["id"]: r["description"] for r in rows}
    offered = []
    for item in items:
        with pytest.raises(Problem) as refusal:
            resolve_or_read(pacs, reader, 1.01, PersonalizeCreate(description=by_id[item["id"]]),
                            DOMAINS)
        if "reading" in refusal.value.extra:
            offered.append((by_id[item["id"]], refusal.value.extra["reading"]))
    assert offered, "the reader offered no reading on its own training requests"
    text, reading = offered[0]
    matches, _ = resolve_or_read(pacs, reader, reading["confidence"] - 1e-4,
                                 PersonalizeCreate(description=text), DOMAINS)
    assert [m.name for m in matches] == reading["classes"]


@pytest.mark.parametrize("text", ['cat" OR 1=1 --', "<script>cats and dogs</script>"])
def test_unreadable_descriptions_stay_refused(pacs, text):
    """Markup and SQL are refused before any reading, even by a reader that says yes to
    everything at accept 0."""
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, _leaf(10.0), 0.0, PersonalizeCreate(description=text), DOMAINS)
    assert refusal.value.slug == "unreadable-description"
    assert "reading" not in refusal.value.extra


def test_rules_answer_first_and_a_broken_reader_changes_nothing(pacs):
    """A request the rules answer never reaches the reader; a reader that fails leaves the
    rules' 422 as it was (never a 500)."""
    matches, _ = resolve_or_read(pacs, _leaf(10.0), 0.0,
                                 PersonalizeCreate(description="cats and dogs"), DOMAINS)
    assert [m.name for m in matches] == ["cat", "dog"]
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, _leaf(10.0, feature=10_000), 0.0,
                        PersonalizeCreate(description=REFUSED), DOMAINS)
    assert refusal.value.slug == "unknown-classes" and "reading" not in refusal.value.extra


def test_the_api_offers_and_answers_by_settings(run_live, make_settings, redis_server,
                                                tmp_path):
    """Over HTTP: ``TAILOR_READER_PATH`` loads the reader; at the default accept a refused
    description's problem JSON carries ``reading``; at a lower one it is answered, with a
    note. No file: the rules' 422, no reading."""
    path = tmp_path / "yes.safetensors"
    _leaf(10.0).forest.save(path, {"features": VERSION})
    body = {"description": "zorblaxes and quuxes"}
    for accept, missing in ((1.01, False), (0.5, False), (1.01, True)):
        settings = make_settings(f"sqlite:///{tmp_path / f'{accept}{missing}.db'}",
                                 redis_url=redis_server.url, reader_accept=accept,
                                 reader_path=tmp_path / "absent" if missing else path)
        with run_live(settings) as live:
            answer = live.http.post("/v1/personalize", json=body)
        if missing:
            assert answer.status_code == 422 and "reading" not in answer.json()
        elif accept > 1:
            assert answer.status_code == 422, answer.text
            assert len(answer.json()["reading"]["classes"]) >= 2
        else:
            assert answer.status_code in (200, 201), answer.text
            assert any("learned reader" in n for n in answer.json()["notes"])


def test_only_binary_numeric_forests_are_flattened():
    """A multi-class forest has several trees per step, which the flat walk cannot sum."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.random.default_rng(0).normal(size=(60, 3))
    model = HistGradientBoostingClassifier(max_iter=3).fit(x, np.arange(60) % 3)
    with pytest.raises(ValueError, match="binary"):
        Forest.from_sklearn(model)


def test_a_reader_fitted_under_other_match_settings_is_loaded_with_a_warning(fitted, tmp_path,
                                                                             caplog):
    path = tmp_path / "reader.safetensors"
    fitted[0].forest.save(path, {"features": VERSION, "match": "0.1/0.1/0.1/0.1"})
    with caplog.at_level("WARNING", logger="service.kinds.reader"):
        assert Reader.load(path, "0.575/0.08/0.65/0.06").fitted_with["match"] == "0.1/0.1/0.1/0.1"
    assert "fitted with match settings" in caplog.text


def test_benchmark_curve_and_report(pacs, fitted, tmp_path):
    """``benchmarks/reader.py``'s table: per threshold, lower thresholds answer at least as
    many refusals, and the counts add up to the readings offered; JSON and PNG are written."""
    reader, _, items, rows = fitted
    found = readings(reader.probabilities, items, pacs.names)
    table = curve(found, [{"rule_right": False}] * len(rows))
    answered = [r["right"] + r["wrong"] for r in table]
    assert [r["threshold"] for r in table] == list(THRESHOLDS)
    assert answered == sorted(answered) and answered[-1] == len(found) > 0
    report({"out_of_fold": table}, tmp_path)
    assert (tmp_path / "reader.json").exists() and (tmp_path / "reader.png").exists()


def test_a_fairly_sure_tuned_reading_is_the_answer_when_the_forest_reads_it_too(
        pacs, tmp_path, monkeypatch, named_forest):
    from model_store.request_model import load_reader
    from model_store.testing_text import forced_reader
    from service.kinds.tuned import Tuned

    folder = forced_reader(tmp_path / "fair", pacs.names, DOMAINS, ["cat", "dog"], "cartoon",
                           4.8)
    tuned = Tuned(load_reader(folder), 0.5, 0.03, rescue_from=0.9, seconded_from=0.7)
    assert 0.7 <= tuned.read(REFUSED)[2] < 0.9  # fairly sure: the forest must second it
    request = PersonalizeCreate(description=REFUSED)
    with pytest.raises(Problem):  # no forest: no answer
        resolve_or_read(pacs, None, 1.01, request, DOMAINS, [], [], tuned)
    notes: list[str] = []
    matches, domain = resolve_or_read(pacs, named_forest, 1.01, request, DOMAINS, [], notes,
                                      tuned)
    assert [m.name for m in matches] == ["dog", "cat"] and "tuned reader" in notes[-1]
    assert domain == "cartoon"  # the tuned reader's: the forest seconds the classes only
    calls = []
    every = _leaf(10.0)  # reads all thirty classes: not the same reading, so no answer, and
    real = every.read  # its own 422 offers its reading, read once for both
    monkeypatch.setattr(every, "read", lambda *a: calls.append(a) or real(*a))
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, every, 1.01, request, DOMAINS, [], [], tuned)
    assert len(refusal.value.extra["reading"]["classes"]) == 30 and len(calls) == 1
    calls.clear()  # below its seconded_from the forest's agreement is not asked: only its 422
    with pytest.raises(Problem):
        resolve_or_read(pacs, every, 1.01, request, DOMAINS, [], [],
                        Tuned(tuned.reader, 0.5, 0.03, 0.9, 0.8))
    assert len(calls) == 1
    broken = _leaf(10.0, feature=10_000)  # a forest that fails: the rules' 422, never a 500
    with pytest.raises(Problem) as refusal:
        resolve_or_read(pacs, broken, 1.01, request, DOMAINS, [], [], tuned)
    assert refusal.value.status == 422 and "reading" not in refusal.value.extra
    sure = forced_reader(tmp_path / "sure", pacs.names, DOMAINS, ["cat", "dog"], None)
    calls.clear()  # a sure tuned reading answers alone: the forest is not asked
    resolve_or_read(pacs, every, 1.01, request, DOMAINS, [], [], Tuned(load_reader(sure)))
    assert calls == []
