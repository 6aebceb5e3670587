"""Shapes that held-out sets 58 and 60 (read at stop 47, issue 13) answered wrong at 200, with
the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case failed on the stop-46 resolver;
the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "up to and including" is a range (wrong 200: zero and four)
    ("Reception-class kids learn the numbers from zero up to and including four first, so "
     "that's our set. The numbers are drawn as pencil sketches.", DIGITS[:5], "sketch"),
    ("numbers 3 to and including 6", DIGITS[3:7], None),
    # a bound glossed by its list in brackets (wrong 200: five added)
    ("MATH-19 Digit OCR for worksheets\nAC: recognises only digits greater than 5 (6, 7, 8, "
     "9). Input is a phone photo of the worksheet.", DIGITS[6:], "photo"),
    # a header of a deeper quote and a question turned down (wrong 200: cat from "Tom",
    # trouser from the question)
    ("FYI see below, can you set this up?\n\n> From: Priya\n> Let's do the classifier for the "
     "winter range: coats, pullovers and ankle boots.\n>> From: Tom\n>> Should we add "
     "trousers?\n> No, keep it to those three.", ["coat", "pullover", "ankle boot"], None),
    ("Cats and dogs. Should we add horses? No. Photos.", ["cat", "dog"], "photo"),
    ("cows and sheep\nwhat about horses?\nnope", ["cow", "sheep"], None),
    # "don't include it" waves off like "don't need it"
    ("Supported: bear, bird, cat, dog. (Stretch goal was zebra, so don't include it.)",
     ["bear", "bird", "cat", "dog"], None),
    # set 60: "even numbers, zero up to eight" (wrong 200: all nine digits)
    ("kids hold up cartoon number cards. I only need the even numbers, zero up to eight.",
     ["zero", "two", "four", "six", "eight"], "cartoon"),
    # set 60: images in no particular style have no domain (wrong 200: sketch)
    ("we sort returns into bag, sandal, sneaker, ankle boot and coat. No particular image "
     "type, some are photos, some are scans of drawings.",
     ["bag", "sandal", "sneaker", "ankle boot", "coat"], None),
    ("cats and dogs in any style", ["cat", "dog"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("Cats and dogs. Also horses? Yes.", ["cat", "dog", "horse"]),  # an offer taken
    ("Cats, dogs. Should we add cows? Not sure. Cows.", ["cat", "dog", "cow"]),  # no "no"
    ("the digits greater than 5", DIGITS[6:]),
    ("digits 2 to 4", DIGITS[2:5]),
    # probes aimed at these rules (stop 47); the first four were wrong at 200 on the stop-46 code
    (">>> From: Tom\n>>> horses and cows please", ["horse", "cow"]),
    ("numbers 1 up to and including 3", DIGITS[1:4]),
    ("digits less than 4 (0, 1, 2, 3)", DIGITS[:4]),
    ("odd numbers 1 up to 9, sketches", ["one", "three", "five", "seven", "nine"]),
    ("cows, sheep. add horses? no. add dogs? yes.", ["cow", "sheep", "dog"]),
    ("Is it a cat? No, a dog. I need cats and dogs in photos", ["dog", "cat"]),  # a question
    # answered no that offers nothing stays as it is
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    # an outside review of stop 47 (wrong at 200 on the rules' first version): "don't
    # include them" after "if"/"would" asks for the classes; a bound only before a digit word
    ("Sandals and sneakers and it would be a shame if you don't include them.",
     ["sandal", "sneaker"]),
    ("Classify cats as well. Bears and birds matter most and we fail if you don't include "
     "them!", ["cat", "bear", "bird"]),
    ("Classify cats and dogs; horses appear in the background sometimes, don't include them.",
     ["cat", "dog"]),
    ("Horses and cows. The sheep, don't include them.", ["horse", "cow"]),
    ("Use 1 up to and including 3 images of each: cats and dogs", ["cat", "dog"]),
    # a bare question answered by a pronoun that waves it off (wrong 200: trousers)
    ("Pullovers and coats. Trousers? Don't include them.", ["pullover", "coat"]),
    ("Pullovers and coats. What about trousers? No, leave them out.", ["pullover", "coat"]),
    ("Horses and cows.\nSheep?\nskip them", ["horse", "cow"]),
    ("Pullovers and coats. Trousers? Don't include them if blurry.",
     ["pullover", "coat", "trouser"]),  # a condition: not a turn-down
    ("Cats? Dogs? Don't forget them!", ["cat", "dog"]),
])
def test_review_mends(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("we sell all kinds of shoes: sandals and sneakers, photos", ["sandal", "sneaker"],
     "photo"),  # kinds of things, not of images
    ("sandals and sneakers, all types, as pencil sketches", ["sandal", "sneaker"], "sketch"),
])
def test_style_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    # the review's mends, wrong at 200 on the rules' first version: a question that keeps a
    # class is no offer ("no" keeps zebras); "Nope:" answers; "(inclusive)" moves the bound.
    # Asking back is allowed, a wrong answer is not.
    ("Horses, giraffes\nDo we want to leave out zebras?\nNo", ["horse", "giraffe", "zebra"]),
    ("Sandals and sneakers. Do you want bags too? Nope: bags are a different app.",
     ["sandal", "sneaker"]),
    ("digits greater than 5 (inclusive)", DIGITS[5:]),
])
def test_right_or_asked_back(pacs, text, classes):
    try:
        assert _resolve(pacs, text)[0] == classes
    except Problem:
        pass


@pytest.mark.parametrize("text", [
    "sizes 2 up to and including 4 shoes",  # sizes, not digits
    "Cats and dogs. Should we add horses? No horses.",  # offered and excluded: a clash
])
def test_still_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
