"""Unknown words outside the request's lists are context; unknown classes in them are asked
for (issue 13, stop 30: ``service.kinds.listing``, ``leftovers.strays``), with the real bundled
MiniLM over Tailor-PACS. Each case but the guards was a 422 or a wrong class set on the
stop-29 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.parsing import parse


@pytest.mark.parametrize(("text", "classes", "context"), [
    ("Wildlife trust here. Tourists upload photos from our game drives and we'd like to tag "
     "elephants, giraffes and zebras automatically.", ["elephant", "giraffe", "zebra"],
     {"tourists", "game drives"}),
    ("zebras vs horses, our rangers upload them after each patrol", ["zebra", "horse"],
     {"rangers patrol"}),
])
def test_unknown_words_outside_the_list_are_context(pacs, text, classes, context):
    ignored: list[str] = []
    assert _resolve(pacs, text, ignored)[0] == classes
    assert context <= set(ignored)  # reported back in the response's notes


def test_a_digit_compared_with_another_is_kept(pacs):
    # "1s" read as a label ("confuses 1s") was dropped: a wrong 200 without one
    assert _resolve(pacs, "Our scanner confuses 1s with 7s and 4s with 9s, can we get those "
                    "four?")[0] == ["one", "seven", "four", "nine"]  # fmt: skip


def test_a_negation_pointing_at_nothing_named_is_asked_back(pacs):
    # was all ten digits at 200: "NOT this one" excludes 6-9, which no rule read
    with pytest.raises(Problem, match="NOT this one"):
        _resolve(pacs, "digits 0 to 5, numbers 6-9 are next sprint, NOT this one")


@pytest.mark.parametrize("text", [
    "sheep, cows and goats for the farm app",  # an item of the list: a class asked for
    "Cats and dogs. Also tigers.",  # a chunk that asks
    "cats vs dogs at the shelter, the hamsters we not need",  # says "not": about a class
    "Tender: recognition of elephant and giraffe in visitor photos. Lot 2 (bear enclosure) "
    "was withdrawn.",  # a class from outside the lists: the unknown words may explain it
    "cats and dogs, though ferrets would be nice",
    "Hi rabbits lovers, we need cats and dogs",  # near a class (0.48): not context
])
def test_guards_unknown_classes_outside_lists_are_still_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "listed"), [
    ("classify cows, sheep and goats", {"cows", "sheep", "goats"}),
    ("tell a 3 from an 8", {"3", "8"}),  # "from" joins where the sentence compares
    ("cats, dogs. Oh, and lions if you can", {"cats", "dogs", "lions"}),
    ("sneakers vs sandals, product photos from our shop", {"sneakers", "sandals"}),
    ("Guests upload photos from our game drives and we tag elephants, giraffes and zebras",
     {"elephants", "giraffes", "zebras"}),  # "elephants" ends its chunk, "game drives" opens none
])
def test_list_items_are_the_mentions_that_stand_side_by_side(text, listed):
    assert parse(text).listed == listed
