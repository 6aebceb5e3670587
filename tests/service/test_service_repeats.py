"""Mentions that repeat a class in a sentence about something else, since stop 33 (issue 13),
with the real bundled MiniLM over Tailor-PACS. Each case but the guards was a 422 on the
stop-32 resolver; the guards are 422s that must stay."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.repeats import in_context


@pytest.mark.parametrize(("text", "classes"), [
    ("need 3s and 8s, oh and 5s; those get mixed up with 3s on the forms",
     ["three", "eight", "five"]),  # "mixed 3s" beside "3s" was a clash
    ("We only need 0 and 8 for the first pass; 8 gets read as 0 by the scanner",
     ["zero", "eight"]),
])
def test_a_class_repeated_in_a_clause_is_asked_for_once(pacs, text, classes):
    ignored: list[str] = []
    assert _resolve(pacs, text, ignored)[0] == classes
    assert ignored  # the repeating clause is reported back as context


@pytest.mark.parametrize("text", [
    "cats, shirts and polo shirts",  # a qualified class word beside the class: distinguishes
    "check whether the frame shows a horse, a zebra or a unicorn horse",
    "kittens and cats and dogs",
    "I want bears and birds; the bears keep raiding the bird feeder",  # two classes at once
    "cats, dogs and cat-dog hybrids",  # (an outside review: dropped, a wrong 200)
    "zebras and giraffes, the zebras and the okapis keep fighting",  # okapi: not a repeat
])
def test_refused_a_clash_or_an_unknown_class(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def test_in_context_drops_only_repeats_of_a_bare_class_word(pacs):
    runs = {"3s", "polo shirts", "shirts", "horses"}  # words side by side in the text
    assert in_context(pacs, ["pass 3s", "3s", "mixed 3s"], runs) == ["pass 3s", "mixed 3s"]
    assert in_context(pacs, ["shirts", "polo shirts"], runs) == []  # two runs: a clash
    assert in_context(pacs, ["mixed 3s", "pass 3s"], runs) == []  # no bare "3s" to keep
    assert in_context(pacs, ["check horse", "unicorn horse"], {"unicorn horse"}) == []
    assert in_context(pacs, ["horses", "cows", "camera flagging horses cows"], runs) == []


def _resolved_with_notes(pacs, text):
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    notes: list[str] = []
    matches, _ = resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains,
                                 notes=notes)
    return [m.name for m in matches], notes


@pytest.mark.parametrize(("text", "classes"), [
    # held-out sets 52/53 (stop 45), each a 422 before: the class's own word again, in
    # another sentence or outside the lists ...
    ("Our school garden got visits from a bear, plus the usual birds and the neighbour's "
     "sheep. Would love a classifier for bear, bird and sheep.", ["bear", "bird", "sheep"]),
    ("We'd like the intake photos sorted into cats, dogs, and the occasional horse from our "
     "equine side.", ["cat", "dog", "horse"]),
    # ... or another word that its sentence says is the same thing
    ("Sort our photographs of garments into dresses, coats and pullovers (recorded as "
     "'jumpers' in our older records).", ["dress", "coat", "pullover"]),
    ("A screen that guesses what they drew: dog, cat or bird (parrots and budgies count as "
     "birds).", ["dog", "cat", "bird"]),
])
def test_a_class_named_again_apart_or_glossed_is_asked_for_once(pacs, text, classes):
    names, notes = _resolved_with_notes(pacs, text)
    assert names == classes
    assert any("name one class" in n for n in notes)  # said back to the user


@pytest.mark.parametrize("text", [
    "I need cats and dogs. Kittens are a separate class.",  # another word, asked apart
    "Sort shirts and trousers. Polo shirts should be their own class.",
    "Label coats and pullovers. Cardigans get their own label.",
    "dogs and cats. Add kittens.",
    "horses and cows. ponies too, as their own label",
    "dogs, cats, and what people call pups",
    "coats and winter coats",  # the own word, but two items of one list
    # an outside review of stop 45: the own word with a modifier, kept apart
    "Classify cats and dogs. Wild cats should be their own class.",
    "I need dogs and cats. Guide dogs need a separate label.",
    "Dogs and cats. Puppies, also known as pups, should be split out.",
])
def test_another_word_for_a_class_asked_apart_still_clashes(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    # held-out set 53: words near a class the request turns down were that class at 200
    ("[09:14] Dana: can we get a classifier for horses and cows?\n[09:20] Dana: also sheep\n"
     "[09:41] Dana: actually scrap the cows, the dairy side already has its own system",
     ["horse", "sheep"]),
    ("We have online shop of shoes, we sell sandals and ankle boots but not sneakers.",
     ["sandal", "ankle boot"]),
    # set 32: a class waved off by "don't bother with that one"
    ("Sort returns into sneakers, sandals and handbags. Our t-shirt merch basically never "
     "gets returned so don't bother with that one.", ["sneaker", "sandal", "bag"]),
])
def test_words_about_a_class_turned_down_are_not_that_class(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    # an outside review of stop 45: a kind of a class asked for as a class of its own (each
    # answered at 200 with the class alone before)
    "Sort shirts and trousers. Dress shirts are a separate category.",
    "Dogs and cats. Also dogs in costumes as a separate class.",
    "Horses and cows. Horses with riders should be their own category.",
    "Birds and bears. Birds of prey are a distinct class for our sanctuary.",
    "Cats and dogs, treating long-haired cats as a separate class.",
])
def test_a_kind_asked_as_its_own_class_is_asked_back(pacs, text):
    with pytest.raises(Problem, match="a class of its own"):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    ("Cats and dogs. Cats should be a separate class from dogs.", ["cat", "dog"]),  # guards
    ("Classify cats and dogs as separate classes.", ["cat", "dog"]),
    ("Classify cats and dogs. Each cat photo should get its own label.", ["cat", "dog"]),
])
def test_classes_kept_apart_from_each_other_are_read(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes
