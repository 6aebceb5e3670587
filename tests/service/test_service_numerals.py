"""Digits computed, named by a property or drawn in words, bounds ("bigger than 6"), counts,
corrections that take classes back, and leftovers read as context (stop 34, issue 13), with
the real bundled MiniLM over Tailor-PACS. Every case but the guards (marked) was a 422 or a
wrong class set on the stop-33 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.arithmetic import evaluate
from service.kinds.numbers import digit_in, digit_of
from service.kinds.numerals import digit_named
from service.kinds.task_request import resolve_request


@pytest.mark.parametrize(("phrase", "digit"), [
    ("100 / 20", 5), ("two cubed", 8), ("2^3", 8), ("the digit you get from 3 x 3", 9),
    ("the digit after the digit after seven", 9), ("a baker's dozen minus four", 9),
    ("7 squared minus 42", 7), ("the numeral equal to 2+2", 4), ("The square of two.", 4),
    ("the numeral you get after adding 3 and 4", 7),  # "after" a step, not one more
    ("I come after two and before four", 3), ("I am the number of days in a week", 7),
    ("the single-digit number just below two", 1), ("(2+1)*3", 9),
    # guards: a list, a range, a bare number, words that are not arithmetic
    ("8/2", None), ("10-8", None), ("six", None), ("two cats", None), ("the 3 of us", None),
    ("after 4 and before 9", None), ("the number after ten", None),
])
def test_arithmetic_in_words(phrase, digit):
    assert digit_of(phrase) == digit


def test_an_expression_needs_an_operator_or_a_known_count():
    assert evaluate("the number 3") is None and evaluate("7", facts=1) == 7.0
    assert evaluate("3 + (4") is None and evaluate("4 / 0") is None


@pytest.mark.parametrize(("definition", "digit"), [
    ("the smallest prime number", 2), ("the only even prime", 2), ("the loneliest number", 1),
    ("the multiplicative identity", 1), ("The additive identity.", 0),
    ("the largest single digit", 9), ("the smallest odd digit", 1),
    ("the numeral meaning a pair", 2),
    ("the digit that looks like a snowman", 8), ("the digit that looks like a sailboat", 4),
    ("a numeral made of two stacked circles", 8), ("the digit cero", 0),
    ("the digit that, turned upside down, becomes 6", 9),
    ("the number after five (paanch ke baad)", 6), ("class_id 1: the multiplicative identity", 1),
    ("the number of months in a quarter", 3), ("how many legs a snake has, written as a digit", 0),
    # guards: letters, shapes and compared properties are no digit, nor a pair of something
    ("the lowercase letter l, a single vertical line", None), ("a circle shape", None),
    ("an oval shape", None), ("The smallest prime greater than five.", None),
    ("a warm-blooded, egg-laying vertebrate", None), ("a pair of trousers", None),
    ("a bird shaped like a swan", None),
    # an outside review: a count word, shape or property about something else, or computed on
    ("a pair you wear on the beach", None), ("an hourglass-figure evening gown", None),
    ("a tote with nothing at all printed on it", None), ("the smallest prime squared", None),
    ("the loneliest number plus one", None), ("the last digit of 2023", None),
    ("the highest number on a d20 die", None), ("the digit next to 5", None),
])
def test_digits_by_property_shape_or_another_language(definition, digit):
    assert digit_in(definition) == digit


def test_a_shape_is_read_only_when_the_definition_says_digit():
    assert digit_named("looks like a snowman") is None
    assert digit_named("the numeral that looks like a snowman") == 8


def test_listed_digit_definitions_resolve(pacs):
    request = PersonalizeCreate(classes=["the only even prime number", "two cubed",
                                         "the square root of sixteen"])
    matches, _ = resolve_request(pacs, request, pacs.domains)
    assert [m.name for m in matches] == ["two", "eight", "four"]


@pytest.mark.parametrize(("text", "classes"), [
    ("cats, dogs and horses. oh wait, the horses went to another team, remove them.",
     ["cat", "dog"]),  # was all three, at 200
    ("cats and dogs please. hmm, make it just the cats and birds", ["cat", "bird"]),  # at 200
    ("need zebra, giraffe, elephant... scratch elephant, add bird instead",
     ["zebra", "giraffe", "bird"]),  # at 200
    ("0, 1, 2, 3. Not 3 actually.", ["zero", "one", "two"]),  # at 200
    ("digits 1 to 5. Update: we also need 6.",
     ["one", "two", "three", "four", "five", "six"]),
    ("sheep, cows and horses. Correction: no horses, we only have sheep and cows.",
     ["sheep", "cow"]),
    # guards: "ignore it" leaves out its own clause's horse, not the horse asked for before
    ("cats and horses. My logo is a horse, ignore it.", ["cat", "horse"]),
    ("Digits 0-9. The envelopes have cat stickers on them, ignore those.",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
])
def test_corrections_take_classes_back(pacs, text, classes):
    assert sorted(resolve_description(pacs, text)[0]) == sorted(classes)


@pytest.mark.parametrize(("text", "classes"), [
    ("just the digits bigger than 6", ["seven", "eight", "nine"]),
    ("the handwritten numbers five and above", ["five", "six", "seven", "eight", "nine"]),
    ("digits 0-5. wait no, 0-3 is enough", ["zero", "one", "two", "three"]),  # 0, 3 at 200
    ("kitties, puppies and bunnies? oh wait, scratch the bunnies, just the first two",
     ["cat", "dog"]),  # "two" at 200
    ("pullover, coat, shirt - the three that always get mixed up",
     ["pullover", "coat", "shirt"]),  # "three" at 200
    ("even digits, and yes count 0 as even", ["zero", "two", "four", "six", "eight"]),
    ("every animal on your list except the horse and the cow",
     ["bear", "bird", "cat", "dog", "elephant", "giraffe", "sheep", "zebra"]),
    ("exclude cats, include dogs and birds", ["dog", "bird"]),  # all three at 200
    ("cats, dogs and horses, ignore the horses", ["cat", "dog"]),  # all three at 200
    ("dresses and coats, replace coats with shirts", ["dress", "shirt"]),
    ("I want dogs instead of cats, and horses", ["dog", "horse"]),
    ("Digits 0-9. Our company mascot is a zebra btw, irrelevant to this.",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    # guards: bounds before a unit or after a negation stay as they were
    ("I need more than 2 animals: cats, dogs, cows", ["cat", "dog", "cow"]),
    ("the three that I need are cats, dogs and birds", ["cat", "dog", "bird"]),
    ("digits bigger than 2 and smaller than 6", ["three", "four", "five"]),  # two, six
    ("cats, dogs, horses. Correction: no horses, cows.", ["cat", "dog", "cow"]),
    ("give me all the clothes and all the animals but leave the numbers out entirely",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
      "ankle boot", "bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep",
      "zebra"]),
])
def test_bounds_counts_and_leftovers(pacs, text, classes):
    assert sorted(resolve_description(pacs, text)[0]) == sorted(classes)


@pytest.mark.parametrize("text", [
    "animals in impressionist paintings - cats, dogs, and whatever else, you choose",  # at 200
    "Only clothing, no shoes of any kind - I need t-shirts, dresses and sneakers.",  # at 200
    "no footwear of any kind. I need t-shirts, dresses and sneakers.",  # at 200
    "Give me the digits 3 to 6, but nothing above 4 and nothing below 5.",  # guard
    "cows and horses, and also cows, the sea kind (manatees)",  # guard: a hedge is no context
    "dogs and horses, and horses, the sawhorse kind for carpentry",  # guard: a compound
    "cats and dogs, half of 10",  # guard: a computed number
    # an outside review's findings on this stop's first rules (wrong sets at 200 there)
    "horses and goats",  # a foil named outright (horse, sheep at 200 since stop 26)
    "Cats and dogs. We also need field mice.", "digits 2 and 7, plus the letter Z",
    "digits 2 and 3, plus the number 22", "cats, dogs... and a hamster!",
    "cats, dogs, horses. Correction: no horses, but llamas",
    "the digit one less than 8",
])
def test_open_or_contradictory_requests_are_asked_back(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)
