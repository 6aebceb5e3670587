"""The phrase reader of refused class lists: its reading, its guards, its place in a request.

A real phrase reader is fitted (scikit-learn, seconds) on the definitions of the development
set and sets 40-45 and the fitted half of the hard pairs (its *none of these*), with the
bundled MiniLM and the Tailor-PACS catalogue; on so few phrases C = 64 (the service's is
fitted on thousands with C = 4) gives readings sure enough to act on. Every request below is
one the rules alone refuse. The API test uses a reader made here for the tiny store's classes
whose bias names one class, so the path it takes is the service's own.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from model_store.phrase_model import PhraseModel, encoder_key
from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.phrases import ACCEPT, Phrases, configured
from service.kinds.reader import resolve_or_read
from trainer.reader.phrases import UNSEEN, fit, phrase_rows

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
DESCRIBED = ["a large gray animal with a trunk", "the animal jockeys ride at the racetrack"]


@pytest.fixture(scope="module")
def model(pacs) -> PhraseModel:
    files = [DATA / "resolution_dev.jsonl", DATA / "resolution_hard.jsonl",
             *(DATA / f"resolution_outside{n}.jsonl" for n in range(40, 46))]  # fmt: skip
    phrases, labels = phrase_rows(files)
    weight, bias = fit(pacs.encoder.encode(phrases), labels, pacs.names, c=64.0)
    return PhraseModel(pacs.names, weight, bias, encoder_key(pacs.encoder))


def _resolve(resolver, classes, phrases, notes=None):
    return resolve_or_read(resolver, None, 1.01, PersonalizeCreate(classes=classes), DOMAINS,
                           [], notes, None, phrases)


def test_a_refused_list_of_definitions_is_answered(pacs, model):
    with pytest.raises(Problem) as refused:
        _resolve(pacs, DESCRIBED, None)
    assert refused.value.slug == "unknown-classes"
    notes: list[str] = []
    matches, domain = _resolve(pacs, DESCRIBED, Phrases(model), notes)
    assert [(m.phrase, m.name) for m in matches] == [(DESCRIBED[0], "elephant"),
                                                     (DESCRIBED[1], "horse")]
    assert domain is None and matches[1].score >= ACCEPT
    assert matches[0].score < matches[1].score  # the rules' own similarity, kept
    assert any(f"phrase reader (least probability {matches[1].score:.2f})" in n
               and "no catalogue class matches" in n for n in notes)


def test_a_phrase_the_rules_placed_keeps_their_match(pacs, model):
    rules = pacs.match_many(["cat"], listed=True)[0]
    matches, _ = _resolve(pacs, ["cat", DESCRIBED[1]], Phrases(model))
    assert [m.name for m in matches] == ["cat", "horse"] and matches[0] == rules


@pytest.mark.parametrize("lacking", [["a small rodent that squeaks", DESCRIBED[1]],
                                     ["a pet hamster", "a lace-up athletic shoe"]])
def test_a_thing_the_catalogue_lacks_stays_a_422(pacs, model, lacking):
    """Read by classes alone, a rodent or a hamster is a cat more likely than not: the
    reader's *none of these* output keeps the rules' 422 even at the lowest setting."""
    for accept in (0.5, ACCEPT):
        with pytest.raises(Problem) as asked:
            _resolve(pacs, lacking, Phrases(model, accept=accept))
        assert asked.value.slug == "unknown-classes"
    bias = model.bias.copy()
    bias[-1] = UNSEEN  # the same reader without its none output
    blind = PhraseModel(model.classes, model.weight, bias, model.encoder)
    assert [m.name for m in _resolve(pacs, lacking, Phrases(blind, accept=0.5))[0]][0] == "cat"


def test_a_phrase_whose_class_is_taken_is_not_handed_another(pacs, model):
    """The rules place dog and horse and leave "a pet that barks"; its class is taken, so the
    assignment could only give it one it reads unlikely: the 422 stands."""
    listed = ["dog", "a pet that barks", DESCRIBED[1]]
    with pytest.raises(Problem) as asked:
        _resolve(pacs, listed, Phrases(model, accept=0.5))
    assert asked.value.slug == "unknown-classes"
    with pytest.raises(Problem):
        _resolve(pacs, DESCRIBED, Phrases(model, accept=0.9999))


def _one_class(pacs, name: str) -> PhraseModel:
    """A reader that reads every phrase as ``name`` (its bias) and knows no other."""
    bias = np.where(np.array([*pacs.names, "none"]) == name, 20.0, 0.0)
    return PhraseModel(pacs.names, np.zeros((len(pacs.names) + 1, pacs.encoder.dim)), bias,
                       encoder_key(pacs.encoder))


def test_a_phrase_nearer_a_thing_the_catalogue_lacks_stays_a_422(pacs):
    """The rules find the phrase nearer twenty (a foil) than any class: a reader sure it is
    five is not asked."""
    listed = ["the number of fingers and toes a person has altogether", "dog"]
    with pytest.raises(Problem) as refused:
        _resolve(pacs, listed, Phrases(_one_class(pacs, "five"), accept=0.5))
    assert refused.value.extra["unknown"][0].get("looks_like")


def test_a_single_phrase_or_a_description_is_not_read(pacs):
    """One phrase is too few classes, and a description is the tuned reader's, however sure
    this reader is."""
    horse = Phrases(_one_class(pacs, "horse"), accept=0.5)
    with pytest.raises(Problem):
        _resolve(pacs, ["the qwxz blorp"], horse)
    with pytest.raises(Problem) as refused:  # the rules: no catalogue class matches 'mice'
        resolve_or_read(pacs, None, 1.01, PersonalizeCreate(description="mice and dogs and cats"),
                        DOMAINS, [], [], None, horse)
    assert refused.value.slug == "unknown-classes"


def test_no_assignment_when_fewer_classes_are_left_than_phrases(pacs, model):
    from service.kinds.phrases import _assign

    left_one = set(range(len(pacs.names))) - {pacs.names.index("horse")}
    assert _assign(model, pacs, [DESCRIBED[1], DESCRIBED[1]], left_one) == ([], 0.0)
    chosen, least = _assign(model, pacs, [DESCRIBED[1]], left_one)
    assert chosen == [(pacs.names.index("horse"), least)] and least > 0.5


def test_a_reader_for_other_classes_is_not_used(pacs, model, caplog):
    other = PhraseModel(list(reversed(pacs.names)), model.weight, model.bias, model.encoder)
    elsewhere = PhraseModel(pacs.names, model.weight, model.bias, "another-encoder/384")
    for foreign in (other, elsewhere):
        with caplog.at_level(logging.WARNING), pytest.raises(Problem):
            _resolve(pacs, DESCRIBED, Phrases(foreign, accept=0.5))
    assert caplog.text.count("phrase reader was fitted for other classes") == 2


def test_configured_loads_a_file_and_leaves_a_damaged_one(model, tmp_path, caplog):
    from service.core.settings import Settings

    path = tmp_path / "phrases.safetensors"
    assert configured(Settings(phrase_reader_path=path)) is None
    model.save(path)
    loaded = configured(Settings(phrase_reader_path=path, phrase_reader_accept=0.8))
    assert loaded is not None and loaded.accept == 0.8
    assert np.allclose(loaded.model.weight, model.weight)
    assert configured(Settings(phrase_reader_path=path, phrase_reader_accept=1.01)) is None
    assert Settings().phrase_reader_accept == ACCEPT
    with pytest.raises(ValueError):  # below one half a phrase's class need not be its likeliest
        Settings(phrase_reader_accept=0.4)
    path.write_bytes(b"not safetensors")
    assert configured(Settings(phrase_reader_path=path)) is None
    assert "not loading the phrase reader" in caplog.text


def test_the_api_answers_a_refused_list(run_live, make_settings, redis_server, tmp_path, pacs):
    """Over HTTP, on the tiny store's catalogue: a list with a phrase no class matches is a
    422 without the reader and a 200 with its note with it (a reader whose bias says dog)."""
    from service_testkit import NUM_CLASSES

    from model_store.testing import tiny_catalogue

    names = [c["name"] for c in tiny_catalogue(NUM_CLASSES)["classes"]]
    bias = np.where(np.array([*names, "none"]) == "dog", 20.0, 0.0)
    path = tmp_path / "phrases.safetensors"
    PhraseModel(names, np.zeros((len(names) + 1, pacs.encoder.dim)), bias,
                encoder_key(pacs.encoder)).save(path)
    request = {"classes": ["cat", "the qwxz blorp"]}
    answers = []
    for reader in (None, path):
        settings = make_settings(f"sqlite:///{tmp_path / f'{reader is None}.db'}",
                                 redis_url=redis_server.url, phrase_reader_path=reader)
        with run_live(settings) as live:
            answers.append(live.http.post("/v1/personalize", json=request))
    assert answers[0].status_code == 422, answers[0].text
    assert answers[0].headers["content-type"].startswith("application/problem+json")
    assert answers[1].status_code in (200, 201), answers[1].text
    body = answers[1].json()
    assert [r["name"] for r in body["resolution"]] == ["cat", "dog"]
    assert any("phrase reader" in n for n in body["notes"])
