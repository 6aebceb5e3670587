"""The tuned request reader beside the rules (service.kinds.tuned): it asks back an answer it
reads otherwise or finds far less likely than its own reading, answers a refusal it reads,
and changes nothing where it is unsure of everything, unfit or broken, or where the request is
a class list or unreadable.

The readers are real saved folders (model_store.request_model) around a tiny random encoder
whose heads are set by hand, so each reads the same classes and domain whatever the text:
the paths they take are the service's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model_store.request_model import load_reader
from model_store.testing_text import forced_reader
from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.reader import resolve_or_read
from service.kinds.tuned import Tuned, configured

DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
REFUSED = "mice and dogs and cats"  # the rules: 422, no catalogue class matches 'mice'


def _forced(folder: Path, names: list[str], reads: list[str], domain: str | None,
            sure: float = 12.0, head: str = "mean") -> Path:
    """A reader that reads ``reads`` and ``domain`` with logits of size ``sure`` (0: unsure)."""
    return forced_reader(folder, names, DOMAINS, reads, domain, sure, head)


@pytest.fixture(scope="module")
def readers(pacs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tuned")
    return {name: Tuned(load_reader(_forced(tmp / name, *args)), 0.7) for name, args in {
        "cat-dog": (pacs.names, ["cat", "dog"], None, 12.0, "label-attention"),
        "unsure": (pacs.names, ["cat", "dog"], None, 0.0),
        "fairly-sure": (pacs.names, ["cat", "dog"], None, 4.8),  # confidence ~0.78
        "nan": (pacs.names, ["cat", "dog"], None, float("nan")),
        "nothing": (pacs.names, [], None),
        "other-catalogue": (pacs.names[:-1] + ["quokka"], ["cat", "dog"], None),
    }.items()}


def _resolve(pacs, tuned, notes=None, **request):
    return resolve_or_read(pacs, None, 1.01, PersonalizeCreate(**request), DOMAINS, [],
                           notes, tuned)


def test_an_answer_both_read_alike_stands(pacs, readers):
    matches, domain = _resolve(pacs, readers["cat-dog"], description="cats and dogs")
    assert [m.name for m in matches] == ["cat", "dog"] and domain is None
    matches, _ = _resolve(pacs, readers["cat-dog"], description="dogs and cats")
    assert [m.name for m in matches] == ["dog", "cat"]  # the same set, in another order
    matches, domain = _resolve(pacs, readers["cat-dog"], description="cats and dogs",
                               domain="sketch")  # the request's own domain is kept
    assert [m.name for m in matches] == ["cat", "dog"] and domain == "sketch"


def test_an_answer_read_otherwise_with_confidence_is_asked_back(pacs, readers):
    cases = {"cats and cows": (["cat", "cow"], None, ["cat", "dog"]),  # other classes
             "sketches of dogs and cats": (["dog", "cat"], "sketch", ["dog", "cat"])}  # domain
    for text, (rules, domain, read) in cases.items():
        with pytest.raises(Problem) as asked:
            _resolve(pacs, readers["cat-dog"], description=text)
        problem = asked.value
        assert problem.status == 422 and problem.slug == "unsure-description", text
        assert problem.extra["rules_reading"] == {"classes": rules, "domain": domain}
        assert problem.extra["reading"]["classes"] == read  # in the request's order
        assert problem.extra["reading"]["domain"] is None
        assert problem.extra["reading"]["confidence"] > 0.99
    with pytest.raises(Problem) as asked:  # it reads nothing to answer: asked back too
        _resolve(pacs, readers["nothing"], description="cats and dogs")
    assert "no class set" in asked.value.detail


def test_a_refusal_it_reads_is_answered_in_request_order_with_a_note(pacs, readers):
    notes: list[str] = []
    matches, domain = _resolve(pacs, readers["cat-dog"], notes, description=REFUSED)
    assert [m.name for m in matches] == ["dog", "cat"] and domain is None
    assert any("tuned reader" in n and "mice" in n for n in notes)
    ignored: list[str] = ["before"]
    matches, domain = resolve_or_read(pacs, None, 1.01, PersonalizeCreate(
        description=REFUSED, domain="photo"), DOMAINS, ignored, [], readers["cat-dog"])
    assert domain == "photo" and ignored == ["before"]  # the refused pass's context dropped
    with pytest.raises(Problem) as refusal:  # a declared count it does not match: no answer
        _resolve(pacs, readers["cat-dog"], description="three classes: " + REFUSED)
    assert refusal.value.slug != "unsure-description"


def test_the_threshold_is_where_it_starts_to_overrule(pacs, readers):
    fairly = readers["fairly-sure"]
    for threshold, overrules in ((0.7, True), (0.8, False)):
        tuned = Tuned(fairly.reader, threshold, veto=0.0)
        if overrules:
            with pytest.raises(Problem, match="tuned reader reads cat, dog"):
                _resolve(pacs, tuned, description="cats and cows")
        else:
            matches, _ = _resolve(pacs, tuned, description="cats and cows")
            assert [m.name for m in matches] == ["cat", "cow"]


def test_below_the_threshold_an_answer_it_finds_far_less_likely_is_asked_back(pacs, readers):
    fairly = readers["fairly-sure"]  # cat, dog at ~0.99: cat, cow ~7e-5 as likely
    with pytest.raises(Problem, match="tuned reader reads cat, dog") as asked:
        _resolve(pacs, Tuned(fairly.reader, 0.8, veto=0.03), description="cats and cows")
    assert asked.value.extra["rules_reading"]["classes"] == ["cat", "cow"]
    matches, _ = _resolve(pacs, Tuned(fairly.reader, 0.8, veto=1e-5),
                          description="cats and cows")  # within the ratio: the rules stand
    assert [m.name for m in matches] == ["cat", "cow"]
    unsure = readers["unsure"]  # every class at 1/2: every reading equally likely, no veto
    matches, _ = _resolve(pacs, Tuned(unsure.reader, 0.7, veto=1.0), description="cats and cows")
    assert [m.name for m in matches] == ["cat", "cow"]


def test_the_veto_weighs_the_domain_unless_the_request_fixed_it(pacs, readers):
    fairly = Tuned(readers["fairly-sure"].reader, 0.8)  # no domain, P(sketch) ~7e-5
    for free in ({}, {"domain": ""}):  # "" fixes no domain: the rules read one from the text
        with pytest.raises(Problem) as asked:
            _resolve(pacs, fairly, description="sketches of cats and dogs", **free)
        assert asked.value.extra["rules_reading"] == {"classes": ["cat", "dog"],
                                                      "domain": "sketch"}
    matches, domain = _resolve(pacs, fairly, description="sketches of cats and dogs",
                               domain="sketch")  # the request's own domain: the answer stands
    assert [m.name for m in matches] == ["cat", "dog"] and domain == "sketch"


def test_probabilities_are_kept_per_text_and_read_with_or_without_the_domain(readers,
                                                                          monkeypatch):
    tuned = Tuned(readers["fairly-sure"].reader, 0.7)
    calls = []
    real = tuned.reader.probabilities
    monkeypatch.setattr(tuned.reader, "probabilities", lambda t: calls.append(t) or real(t))
    free, fixed = tuned.read("cats and dogs"), tuned.read("cats and dogs", domain_fixed=True)
    assert len(calls) == 1 and free[0] == fixed[0] and free[2] < fixed[2]
    assert tuned.chance("cats and dogs", [1], "collage") is None  # not its domain
    assert tuned.chance("cats and dogs", [-1], None) is None  # not its class


def test_a_refusal_is_answered_from_its_own_confidence(pacs, readers):
    fairly = readers["fairly-sure"]  # confidence ~0.78
    matches, _ = _resolve(pacs, Tuned(fairly.reader, 0.9, rescue_from=0.7), description=REFUSED)
    assert [m.name for m in matches] == ["dog", "cat"]
    with pytest.raises(Problem) as refusal:  # asks back from 0.7, but answers only from 0.8
        _resolve(pacs, Tuned(fairly.reader, 0.7, rescue_from=0.8), description=REFUSED)
    assert refusal.value.slug != "unsure-description"


def test_a_failed_reading_is_not_kept(pacs, readers, monkeypatch):
    tuned = Tuned(readers["cat-dog"].reader, 0.7)
    real = tuned.reader.probabilities
    monkeypatch.setattr(tuned.reader, "probabilities", lambda texts: 1 / 0)
    matches, _ = _resolve(pacs, tuned, description="cats and cows")  # the rules stand
    assert [m.name for m in matches] == ["cat", "cow"]
    monkeypatch.setattr(tuned.reader, "probabilities", real)
    with pytest.raises(Problem, match="tuned reader reads cat, dog"):  # read again, now
        _resolve(pacs, tuned, description="cats and cows")


def test_readings_are_kept_per_text(pacs, readers, monkeypatch):
    tuned = Tuned(readers["cat-dog"].reader, 0.7)
    calls = []
    real = tuned.reader.probabilities
    monkeypatch.setattr(tuned.reader, "probabilities", lambda t: calls.append(t) or real(t))
    for _ in range(3):
        _resolve(pacs, tuned, description="cats and dogs")
    assert len(calls) == 1


def test_unsure_unfit_or_broken_readers_and_class_lists_leave_the_rules(pacs, readers, caplog,
                                                                        monkeypatch):
    long = REFUSED + ", and then some more words about the farm" * 12  # past its 64 tokens
    with pytest.raises(Problem) as refusal:  # so no rescue: its end is not read
        _resolve(pacs, readers["cat-dog"], description=long)
    assert refusal.value.slug == "unknown-classes"
    for name in ("unsure", "nan", "other-catalogue"):
        matches, _ = _resolve(pacs, readers[name], description="cats and cows")
        assert [m.name for m in matches] == ["cat", "cow"], name
        with pytest.raises(Problem) as refusal:
            _resolve(pacs, readers[name], description=REFUSED)
        assert refusal.value.slug == "unknown-classes", name
    assert "trained for other classes" in caplog.text
    matches, _ = _resolve(pacs, readers["cat-dog"], classes=["cat", "cow"])
    assert [m.name for m in matches] == ["cat", "cow"]
    broken = Tuned(readers["cat-dog"].reader, 0.7)
    monkeypatch.setattr(broken.reader, "probabilities", lambda texts: 1 / 0)
    matches, _ = _resolve(pacs, broken, description="cats and cows")
    assert [m.name for m in matches] == ["cat", "cow"]
    assert "tuned request reader failed" in caplog.text


def test_markup_and_injection_stay_refused(pacs, readers):
    for text in ('cat" OR 1=1 --', "<script>cats and dogs</script>"):
        with pytest.raises(Problem) as refusal:
            _resolve(pacs, readers["cat-dog"], description=text)
        assert refusal.value.slug == "unreadable-description", text


def test_configured_loads_a_folder_and_leaves_a_damaged_one(readers, tmp_path, pacs, caplog):
    from service.core.settings import Settings

    assert configured(Settings(tuned_reader_path=tmp_path / "absent")) is None
    folder = _forced(tmp_path / "good", pacs.names, ["cat", "dog"], None)
    tuned = configured(Settings(tuned_reader_path=folder, tuned_reader_threshold=0.9,
                                tuned_reader_veto=0.1, tuned_reader_rescue=0.95,
                                tuned_reader_seconded=0.8))
    assert tuned is not None and (tuned.threshold, tuned.veto, tuned.rescue_from,
                                  tuned.seconded_from) == (0.9, 0.1, 0.95, 0.8)  # fmt: skip
    off = {"tuned_reader_threshold": 1.01, "tuned_reader_rescue": 1.01,
           "tuned_reader_seconded": 1.01}
    assert configured(Settings(tuned_reader_path=folder, **off)) is not None  # still vetoes
    assert configured(Settings(tuned_reader_path=folder, tuned_reader_veto=0, **off)) is None
    (folder / "weights.safetensors").write_bytes(b"not safetensors")
    assert configured(Settings(tuned_reader_path=folder)) is None
    assert "not loading the tuned request reader" in caplog.text


def test_the_api_asks_back_and_answers(run_live, make_settings, redis_server, tmp_path):
    """Over HTTP, on the tiny store's catalogue: problem JSON with both readings, then an
    answered refusal with the note."""
    from service_testkit import NUM_CLASSES

    from model_store.testing import tiny_catalogue

    names = [c["name"] for c in tiny_catalogue(NUM_CLASSES)["classes"]]
    folder = _forced(tmp_path / "api", names, ["cat", "dog"], None)
    settings = make_settings(f"sqlite:///{tmp_path / 't.db'}", redis_url=redis_server.url,
                             tuned_reader_path=folder)
    with run_live(settings) as live:
        asked = live.http.post("/v1/personalize", json={"description": "cats and horses"})
        answered = live.http.post("/v1/personalize", json={"description": REFUSED})
    assert asked.status_code == 422 and asked.headers["content-type"].startswith(
        "application/problem+json")
    body = asked.json()
    assert body["type"].endswith("unsure-description") and body["reading"]["classes"] == [
        "cat", "dog"] and body["rules_reading"]["classes"] == ["cat", "horse"]
    assert answered.status_code in (200, 201), answered.text
    assert any("tuned reader" in n for n in answered.json()["notes"])


def test_the_settings_defaults_are_the_chosen_knobs():
    from service.core.settings import Settings
    from service.kinds.tuned import RESCUE, SECONDED, THRESHOLD, VETO

    s = Settings()
    assert (s.tuned_reader_threshold, s.tuned_reader_veto, s.tuned_reader_rescue,
            s.tuned_reader_seconded) == (THRESHOLD, VETO, RESCUE, SECONDED)  # fmt: skip
