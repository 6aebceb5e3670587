"""A whole group asked for at once, with exceptions, and corrections (issue 13, stop 28), with the
real bundled MiniLM over Tailor-PACS. Each case but the guards was a 422 or a wrong 200 on the
stop-27 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

ANIMALS = ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"]
PETLESS = [a for a in ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep",
                        "zebra"] if a not in ("cat", "dog")]
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes"), [
    ("all the digits", DIGITS),
    ("the ten digits", DIGITS),
    ("all 10 handwritten digits", DIGITS),
    ("every animal", ANIMALS),
    ("Classify every animal except cats and dogs.", PETLESS),
    ("all ten digits except zero and one", DIGITS[2:]),
    ("every digit other than 0 and 1", DIGITS[2:]),
    ("the even digits", DIGITS[0::2]),
    ("odd numbers only", DIGITS[1::2]),
    ("all clothing except ankle boots and bags",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker"]),
    ("cats, dogs and all the other animals", ["cat", "dog", *PETLESS]),
])
def test_a_whole_group_is_spelt_out(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    ("all digits from 1 to 5", ["one", "two", "three", "four", "five"]),  # a range
    ("all animals in the photos are cats or dogs", ["cat", "dog"]),  # about the images
    ("Scope: zero, one, nine. Out of scope: all other digits.", ["zero", "one", "nine"]),
    ("Our literacy app pairs each animal with its word: sheep, cows and horses",
     ["sheep", "cow", "horse"]),  # "each" distributes, it asks for no group
])
def test_a_group_word_that_asks_for_no_group(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "all digits except those that look alike",  # which ones is unclear
    "all the clothing items but not footwears and hats",  # hats: no such class, ask back
    "cats, dogs and other animals",  # which others?
    "everything except cats",  # "everything" is no group of the catalogue
])
def test_an_open_group_is_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    ("sneakers and sandals, no wait, sneakers and ankle boots", ["sneaker", "ankle boot"]),
    ("hi, need detect bag and handbag?? no sorry i mean bag and the coat", ["bag", "coat"]),
    ("cats, dogs and horses, drop the horses", ["cat", "dog"]),
    ("cats and dogs and birds - actually forget the birds", ["cat", "dog"]),
    ("bag and coat, minus the coat, plus dress", ["bag", "dress"]),
    ("We need elephants, giraffes and zebras. Oh wait, also sheep and cows.",
     ["elephant", "giraffe", "zebra", "sheep", "cow"]),  # "oh wait" adds
    ("cats and dogs. No wait, also horses and birds", ["cat", "dog", "horse", "bird"]),
    ("all animals, but skip the cows and the sheep",
     [a for a in ANIMALS if a not in ("cow", "sheep")]),
])
def test_corrections_take_classes_back(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "horses and zebras, leave the zebras out",  # one class left
    "cats, dogs and horses, but not horses",  # a plain negation of a class asked for: a clash
    "cats and dogs, no wait, rabbits and dogs",  # what is left names an unknown class
])
def test_corrections_that_leave_a_question_are_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


# ---- an outside review's probes: each was a wrong 200 on the first stop-28 version ----------


@pytest.mark.parametrize(("text", "classes"), [
    ("Ignore all clothing items; classify cats and dogs", ["cat", "dog"]),
    ("Exclude all animals. Only digits 4 and 9.", ["four", "nine"]),
    ("Instead of all digits, just 4 and 9", ["four", "nine"]),
    ("All the animals we have are dogs and cats", ["dog", "cat"]),
    ("The entire animal dataset is cats and dogs", ["cat", "dog"]),
    ("For every animal image, tell if it's a horse or a zebra", ["horse", "zebra"]),
    ("all digits except 1-3", ["zero", *DIGITS[4:]]),
    ("all digits except 3 to 5", [*DIGITS[:3], *DIGITS[6:]]),
    ("every animal except cows, horses n sheep",
     [a for a in ANIMALS if a not in ("cow", "horse", "sheep")]),
])
def test_group_words_the_review_found(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "Avoid all animals; digits 1 2 3 only",  # "avoid" is no instruction to spell out
    "Nobody wants all animals. Give us cats.",
    "Previously we had all the animals; now we only want cats.",
    "All animals except cows are out of scope. Just cows.",
    "all the animals except the ones with stripes",
    "all animals except ones that fly",
    "all the animals except cows, and sneakers too",  # an exception outside the group
    "All the digits, but 7s are the tricky ones",
    "all animals except birds of prey",
    "even odd digits",
    "zebra finch giraffe", "bull dog cat", "jersey cow sheep",  # aliases side by side
    "Out of scope\n====\ncows\n\nIn scope\n====\ncats, dogs",  # an underline stays refused
    "Cats and dogs please. Thanks, and the ferret",
    "Hey could we get a hamster, cats and dogs?",
    "Dear team, we need t-shirts and trousers. Best, Luis PS a ferret",
    "cats, dogs, best of all a goat",
])
def test_review_probes_are_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def test_a_removed_field_negates(pacs):
    assert _resolve(pacs, "Removed: cows\nClasses: sheep, horses")[0] == ["sheep", "horse"]


@pytest.mark.parametrize(("text", "classes"), [
    ("all animals except cows, all digits except 0",
     [a for a in ANIMALS if a != "cow"] + DIGITS[1:]),  # a negation belongs to its own group
])
def test_two_groups_in_one_request(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    ("Classes: cat, dog, sheep. Sheep was taken out last sprint.", None),  # 'taken' stays
    ("For the MVP only digits 3 and 8; digit 5 comes in phase 2", ["three", "eight"]),
    ("ideally cats and dogs, maybe later horses", None),  # a hedge is no filler
    ("cats and dogs, horses sent to v2", None),
])
def test_words_that_carry_meaning_stay(pacs, text, classes):
    # each was a wrong 200 while the word was filler ('phase 2' labels a phase, no digit)
    if classes is None:
        with pytest.raises(Problem):
            _resolve(pacs, text)
    else:
        assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("We would like all the animals you have except bears, elephants, giraffes and zebras",
     ["bird", "cat", "cow", "dog", "horse", "sheep"], None),
    ("cats, dogs, no horses and zebras", ["cat", "dog"], None),  # the exclusion lists on
    ("sheep, cows, horses - not dogs, and birds too", ["sheep", "cow", "horse", "bird"], None),
    ("Removed: cows\nClasses: sheep, horses", ["sheep", "horse"], None),  # a field ends it
    ("visitors snap them on their phones: the cows, the sheep and our two horses",
     ["cow", "sheep", "horse"], "photo"),  # a phone hints at photos
    ("Museum guide: guests hold the phone up to a painting and we say whether it shows a "
     "horse, a dog or a cow", ["horse", "dog", "cow"], "art_painting"),  # a style word wins
])
def test_exclusions_continue_and_hints_set_a_domain(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    "all animals except cows (we already have a cow model)",  # excepted, then named: ask
])
def test_excepted_and_compound_classes_are_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("digits 0 (zero), 1 and 2", ["zero", "one", "two"], None),  # '0' and 'zero': one class
    ('{"labels": "1,2,3", "domain": "cartoon"}', ["one", "two", "three"], "cartoon"),
    ("cats, dogs, horses and zebras, leave the zebras out", ["cat", "dog", "horse"], None),
    ("cats and horses, er, I mean cats and dogs", ["cat", "dog"], None),
    ("Requirement: classify images of the following: bear, dog, sheep", ["bear", "dog", "sheep"],
     None),
])
def test_read_after_sets_14_and_15(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)
