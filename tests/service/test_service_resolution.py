"""Request → classes and domain with the real bundled MiniLM (issue 13: one test per failure
class of the old resolver, each of which it got wrong)."""

from __future__ import annotations

import pytest

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.core.settings import Settings
from service.kinds.parsing import parse
from service.kinds.resolution import ClassResolver
from service.kinds.task_request import resolve_request

NAMES = ["zero", "seven", "T-shirt/top", "Trouser", "Bag", "Ankle boot", "cat", "dog", "horse"]
SMALL = {
    "classes": [{"name": n, "group": "g", "definition": None} for n in NAMES],
    "domains": ["photo", "art_painting", "cartoon", "sketch"],
}


@pytest.fixture(scope="module")
def encoder():
    from service.kinds.taper import load_text_encoder

    return load_text_encoder(None, "cpu")


@pytest.fixture(scope="module")
def resolver(encoder):
    return ClassResolver(SMALL, encoder, threshold=0.55)


@pytest.fixture(scope="module")
def pacs(encoder):
    """The Tailor-PACS catalogue (aliases, definitions) at the service's default settings."""
    from trainer.data.catalogue import catalogue_json

    s = Settings()
    return ClassResolver(catalogue_json(), encoder, s.match_threshold, s.match_margin,
                         (s.match_described_threshold, s.match_described_margin))


def _resolve(resolver, **request) -> tuple[list[str], str | None]:
    matches, domain = resolve_request(resolver, PersonalizeCreate(**request), resolver.domains)
    return [m.name for m in matches], domain


def _refused(resolver, **request) -> Problem:
    with pytest.raises(Problem) as err:
        resolve_request(resolver, PersonalizeCreate(**request), resolver.domains)
    assert err.value.status == 422
    return err.value


def test_exact_and_plural_matches(resolver):
    got = resolver.match_many(["Cats", "DOGS", "t-shirt / top", "ankle boots", "horses"])
    assert [m.name for m in got] == ["cat", "dog", "T-shirt/top", "Ankle boot", "horse"]
    assert all(m.score == 1.0 for m in got)


def test_similar_phrases_resolve_with_scores(resolver):
    kitten, pony, handbag = resolver.match_many(["kitten", "pony", "handbag"])
    assert (kitten.name, pony.name, handbag.name) == ("cat", "horse", "Bag")
    assert 0.55 <= kitten.score < 1.0 and kitten.suggestions  # "did you mean" alternatives


def test_unknown_phrase_gets_suggestions(resolver):
    (m,) = resolver.match_many(["quantum physics"])
    assert m.name is None and m.score < 0.55 and len(m.suggestions) == 3


def test_instruction_clauses_are_not_glued_to_a_class(pacs):
    assert _resolve(pacs, description="I need to tell apart sneakers, sandals and ankle boots") \
        == (["sneaker", "sandal", "ankle boot"], None)  # fmt: skip
    assert _resolve(pacs, description="which one is the bear and which one is the elephant")[0] \
        == ["bear", "elephant"]  # fmt: skip
    assert parse("is it a cat or a dog?").mentions == ["cat", "dog"]


def test_numerals_and_number_words(pacs):
    assert _resolve(pacs, description="recognise handwritten 3, 5 and 8")[0] == \
        ["three", "five", "eight"]  # fmt: skip
    assert _resolve(pacs, description="tell 1 from 7")[0] == ["one", "seven"]
    assert _resolve(pacs, description="painted 4s and 9s") == (["four", "nine"], "art_painting")
    assert _resolve(pacs, description="the four digits 2, 4, 6 and 8")[0] == \
        ["two", "four", "six", "eight"]  # fmt: skip
    _refused(pacs, description="classify 11 and 12")  # numbers that are no class


def test_synonyms_and_hyponyms_through_aliases(pacs):
    assert _resolve(pacs, description="classify calves and lambs")[0] == ["cow", "sheep"]
    assert _resolve(pacs, description="tell trainers from sandals")[0] == ["sneaker", "sandal"]
    assert _resolve(pacs, description="felines versus canines")[0] == ["cat", "dog"]


def test_style_words_choose_the_domain_by_similarity(pacs):
    cases = {"charcoal drawings of horses and cows": "sketch",
             "oil paintings of sheep and cows": "art_painting",
             "comics featuring cats and dogs": "cartoon",
             "snapshots of birds and bears": "photo"}  # fmt: skip
    for text, domain in cases.items():
        assert _resolve(pacs, description=text)[1] == domain, text
    assert _resolve(pacs, description="recognise handwritten 3 and 5")[1] is None


def test_definition_only_classes(pacs):
    got, _ = _resolve(pacs, classes=["a feathered creature with a beak that can fly",
                                     "a farm animal kept for its milk",
                                     "a heavy jacket for winter weather"])  # fmt: skip
    assert got == ["bird", "cow", "coat"]  # the old resolver: 422 (jacket matched nothing)


def test_negations_never_resolve(pacs):
    for text in ("not a cat at all", "a cat or not a cat", "anything but dogs and cats",
                 "no cats and no dogs"):  # fmt: skip
        _refused(pacs, description=text)
    assert _resolve(pacs, description="tell cats from dogs, not horses")[0] == ["cat", "dog"]
    _refused(pacs, classes=["not a cat", "dog"])


def test_injection_like_strings_never_resolve(pacs):
    for text in ('cat" OR 1=1 --', "'; DROP TABLE models; --", "<script>x</script> and dogs"):
        assert _refused(pacs, description=text).slug == "unreadable-description"
    assert _refused(pacs, classes=['cat" OR 1=1 --', "dog"]).slug == "unreadable-classes"


def test_duplicate_mentions_collapse_and_clashes_are_asked_back(pacs):
    assert _resolve(pacs, description="cat, cat, dog")[0] == ["cat", "dog"]
    assert _resolve(pacs, description="classify cats, dogs and cats again")[0] == ["cat", "dog"]
    clash = _refused(pacs, description="kittens, cats and dogs")
    assert clash.slug == "ambiguous-classes" and "cat" in clash.detail


def test_joint_assignment_gives_distinct_classes(pacs):  # behaviour, not an old failure
    matches = pacs.match_many(["a wild african animal like a horse with black and white stripes",
                               "horse"])  # fmt: skip
    assert [m.name for m in matches] == ["zebra", "horse"]


def test_review_findings_counts_headers_scripts_and_too_many_mentions(pacs):
    assert _resolve(pacs, description="two horses and a dog")[0] == ["horse", "dog"]
    assert _resolve(pacs, classes=["3 cats", "dog"])[0] == ["cat", "dog"]
    assert _resolve(pacs, description="Tell apart cats: dogs, horses")[0] == \
        ["cat", "dog", "horse"]  # a colon after a class is no header  # fmt: skip
    assert _resolve(pacs, description="pets: cat and dog")[0] == ["cat", "dog"]
    assert _resolve(pacs, description="ÉLÉPHANTS and giraffes")[0] == ["elephant", "giraffe"]
    for odd in ("猫", "!!!"):
        assert _refused(pacs, classes=["cat", "dog", odd]).slug == "unreadable-classes"
    crowd = [n for n in pacs.names if n != "cat"] + ["feline", "housecat"]  # 31 mentions
    assert _refused(pacs, classes=crowd).slug == "unknown-classes"
    assert _resolve(pacs, description="help me select between cats and dogs")[0] == ["cat", "dog"]


# ---- failure classes found by an outside-written request set (stop 25); each failed before --


def test_misspelt_names_and_instruction_words_are_corrected(pacs):
    assert _resolve(pacs, description="classifer for sneekers and girafes pls") \
        == (["sneaker", "giraffe"], None)  # fmt: skip
    assert _resolve(pacs, classes=["sneekers", "girafes"])[0] == ["sneaker", "giraffe"]
    _refused(pacs, description="goats and sheep")  # a real word is never respelt into "coats"


def test_numbers_listed_with_spaces_or_as_a_range(pacs):
    assert _resolve(pacs, description="classify the digits 2 4 6 8")[0] \
        == ["two", "four", "six", "eight"]  # fmt: skip
    assert _resolve(pacs, description="digits 0 through 4")[0] \
        == ["zero", "one", "two", "three", "four"]  # fmt: skip
    assert _resolve(pacs, description="handwritten numbers six to nine")[0] \
        == ["six", "seven", "eight", "nine"]  # fmt: skip
    _refused(pacs, description="two to three dogs")  # a count of dogs is no range of digits


def test_hyphenated_compounds_and_trailing_modifiers(pacs):
    assert _resolve(pacs, description="black-and-white pencil drawings of cows and horses") \
        == (["cow", "horse"], "sketch")  # fmt: skip
    assert _resolve(pacs, description="my farm app needs to recognise cows, sheep and horses "
                                      "in photos taken by the farmers") \
        == (["cow", "sheep", "horse"], "photo")  # fmt: skip
    assert _resolve(pacs, description="recognize the numbers one, two and four written by "
                                      "hand")[0] == ["one", "two", "four"]  # fmt: skip
    assert pacs.exact("the striped african horse") is None  # words before it: a description
    assert pacs.exact("cats near dogs") is None  # a second class after it: not one class


def test_question_clauses_leave_no_mention_behind(pacs):
    assert _resolve(pacs, description="oil paintings of horses and dogs, classify which animal "
                                      "is shown") == (["horse", "dog"], "art_painting")
    assert _resolve(pacs, description="my kid's doodles: sheep, cows and elephants — which one "
                                      "did she draw?") == (["sheep", "cow", "elephant"], "sketch")


def test_context_clauses_and_sentences_are_not_mentions(pacs):
    ignored: list[str] = []
    request = PersonalizeCreate(description="Museum guide: tourists hold the phone up to a "
                                            "painting and we say whether it shows a horse, a "
                                            "dog or a cow")
    matches, domain = resolve_request(pacs, request, pacs.domains, ignored)
    assert [m.name for m in matches] == ["horse", "dog", "cow"] and domain == "art_painting"
    assert ignored == ["tourists hold phone"]
    assert _resolve(pacs, description="Our app reads photos taken at the animal shelter. Mostly "
                                      "kittens and puppies!")[0] == ["cat", "dog"]  # fmt: skip
    _refused(pacs, description="cats, dogs and garage")  # one unknown word is a class asked for
    _refused(pacs, description="quantum physics lecture notes and chemistry lab reports")


# ---- an outside review's adversarial requests: each was a wrong class set at 200 once --------


def _custom(encoder, names: list[str]) -> ClassResolver:
    catalogue = {"classes": [{"name": n, "group": "g", "definition": None} for n in names],
                 "domains": ["photo"]}
    return ClassResolver(catalogue, encoder, 0.575, 0.08)


def test_class_names_made_of_stop_or_negation_words(encoder):
    trucks = _custom(encoder, ["fire truck", "truck", "police car", "top hat"])
    assert _resolve(trucks, description="fire trucks and police cars")[0] \
        == ["fire truck", "police car"]  # fmt: skip
    assert _resolve(trucks, description="top hats vs trucks")[0] == ["top hat", "truck"]
    grades = _custom(encoder, ["none", "mild", "severe"])
    assert _resolve(grades, description="none, mild or severe damage")[0] \
        == ["none", "mild", "severe"]  # fmt: skip


@pytest.mark.parametrize("description", [
    "mittens, coats and bags", "meerkats, cats and horses", "culottes, dresses and coats",
    "one piece swimsuits, dresses and coats", "four leaf clovers, cats and dogs",
    "bear claw pastries, cats and dogs", "dog walking service flyers, cats and horses",
    "cats, dogs and guinea pig babies", "size 2-4 shoes and sneakers",
    "cats then dogs and horses", "cats with dogs and horses",
])
def test_real_words_compounds_and_unknown_classes_are_refused(pacs, description):
    _refused(pacs, description=description)


@pytest.mark.parametrize(("description", "classes"), [
    ("photos of poodles, cats and horses", ["dog", "cat", "horse"]),
    ("cats and dogs, 5 to 9 per photo", ["cat", "dog"]),
    ("kids ages 3 to 5 draw cats and dogs", ["cat", "dog"]),
    ("I have 3 kids. Cats and dogs", ["cat", "dog"]),
    ("Version 2. cats and dogs", ["cat", "dog"]),
    ("Dr. Smith wants cats and dogs", ["cat", "dog"]),
    ("cats-and-dogs and horses", ["cat", "dog", "horse"]),
    ("Which of 4, 6 or 9 is written on the tag?", ["four", "six", "nine"]),
    ("can it tell cats from dogs? just need those two lol", ["cat", "dog"]),  # outside6, stop 26
    ("those two, three and four", ["two", "three", "four"]),
    ("need: two, four, six, eight. (even ones only)", ["two", "four", "six", "eight"]),  # o10
    ("could you make one for 4 vs 9? they look similar", ["four", "nine"]),  # outside10
    ("handwritten ones, fours and sevens", ["one", "four", "seven"]),
])
def test_counts_labels_abbreviations_and_compounds(pacs, description, classes):
    assert _resolve(pacs, description=description)[0] == classes


def test_lists_on_lines_and_sentences_about_the_app(pacs):
    assert _resolve(pacs, description="Please build:\n1) giraffes\n2) zebras\n- cows")[0] \
        == ["giraffe", "zebra", "cow"]  # fmt: skip
    ignored: list[str] = []
    request = PersonalizeCreate(description="We run a small rescue centre. Sort the photos into "
                                            "sheep, cows and horses. Night shots too.")
    matches, domain = resolve_request(pacs, request, pacs.domains, ignored)
    assert [m.name for m in matches] == ["sheep", "cow", "horse"] and domain == "photo"
    assert set(ignored) == {"small rescue centre", "night"}  # "shots": a style word
    _refused(pacs, description="Cats and dogs. Also tigers.")  # a short sentence: a class asked
    _refused(pacs, description="Is it possible to detect meerkats, tabbies and horses?")
    _refused(pacs, description="I only care about one thing: is there a dog in it or not?")


def test_random_requests_answer_200_or_a_422_problem(pacs):
    """Seeded fuzz over the parser's vocabulary (class words, filler, numbers, ranges, bullets,
    punctuation, misspellings): every request resolves to >= 2 distinct classes or raises a
    422 Problem, never another exception (a 500)."""
    import random

    rng = random.Random(25)
    vocab = ["cats", "dog", "ankle boots", "t-shirt", "3", "sevens", "zero", "through", "to",
             "2-4", "and", "or", "vs.", "not", "except", "other than", "one thing", "the",
             "please", "classify", "sneekers", "girafes", "in", "near", "for", "sketches",
             "photos", "Dr.", "version 2.", "\n- ", "\n1) ", ",", ".", "!", "?", ":", " — ",
             "cats-and-dogs", "black-and-white", "guinea pig", "we run a zoo.", "x" * 30]
    for _ in range(200):
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 14)))
        try:
            matches, _ = resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains)
        except Problem as err:
            assert err.status == 422, text
            continue
        names = [m.name for m in matches]
        assert len(names) >= 2 and len(set(names)) == len(names), text


@pytest.mark.parametrize(("description", "classes", "domain"), [
    ("Watercolours -> giraffes, zebras, cows", ["giraffe", "zebra", "cow"], "art_painting"),
    ("we want to auto-sort our stock into coats, bags and sandals", ["coat", "bag", "sandal"],
     None),
    ("Trail camera photos: bears, birds, dogs (yes, we live in Alaska).",
     ["bear", "bird", "dog"], "photo"),
    ("trousers and dresses, for a laundry folding robot", ["trouser", "dress"], None),
    ("Number recognition for digits 4 through 6 only.", ["four", "five", "six"], None),
    ("I have a folder of pencil sketches of cats and horses, want them labelled.",
     ["cat", "horse"], "sketch"),
])
def test_arrows_introducing_clauses_asides_and_cued_ranges(pacs, description, classes, domain):
    assert _resolve(pacs, description=description) == (classes, domain)


def test_plural_style_words_name_the_domain(pacs):
    assert _resolve(pacs, description="cats and dogs on our trail cameras") \
        == (["cat", "dog"], "photo")  # fmt: skip


def test_text_runtime_setting_picks_the_encoder_and_answers_alike(make_settings, tmp_path):
    """``TAILOR_TEXT_RUNTIME``: ONNX Runtime by default, PyTorch on request; the resolver gives
    the same classes and scores either way (the encoders agree to ~1e-7)."""
    from service.kinds.taper import TaperKind

    phrases = ["felines", "the animal that barks at strangers", "charcoal drawings of houses"]
    answers = {}
    for runtime in ("onnx", "torch"):
        settings = make_settings(f"sqlite:///{tmp_path / runtime}.db", text_runtime=runtime)
        kind = TaperKind.load(settings, None)
        assert kind.resolver.encoder.runtime == runtime
        answers[runtime] = kind.resolver.match_many(phrases)
    assert [m.name for m in answers["onnx"]] == [m.name for m in answers["torch"]]
    assert [m.score for m in answers["onnx"]] == pytest.approx(
        [m.score for m in answers["torch"]], abs=1e-5)
    assert make_settings("sqlite://").text_runtime == "onnx"
