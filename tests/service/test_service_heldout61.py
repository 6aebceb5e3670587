"""Shapes that held-out set 61 (stop 48, issue 13; first score natural 32/60, 5 wrong 200s)
answered wrong or refused, with the real bundled MiniLM over Tailor-PACS: dictated voice notes
("comma", "period"), a style before the pronoun "ones", a sub-group quantified in an exception
list, split compounds, and a bare question waved off by a pronoun. Each ``test_read`` case
failed on the stop-47 resolver (a wrong class set or domain at 200 where marked, else a 422);
the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.dictation import dictated, rejoined

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
CLOTHES = ["t-shirt", "trouser", "pullover", "dress", "coat", "shirt"]
FOOTWEAR = ["sandal", "sneaker", "ankle boot"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # dictation: spoken marks, and a digit's homophone in a run of digits (wrong 200: no eight)
    ("digits six seven ate and nine on the crate labels period photographed with the scanner "
     "gun camera", DIGITS[6:], "photo"),
    ("dresses comma coats comma shirts comma and uh tee shirts period the design team sends "
     "them over as pencil drawings period", ["dress", "coat", "shirt", "t-shirt"], "sketch"),
    ("sort the even labels period two four six and eight period", DIGITS[2:9:2], None),
    ("we need the scanner to sort the returns into sneakers comma sandals and ankle boots "
     "period camera photos off the dock period", ["sneaker", "sandal", "ankle boot"], "photo"),
    # a style before "ones" is the pronoun (wrong 200: one added), and stays a style
    ("bruh just horses and zebras, cartoon ones from my fav show", ["horse", "zebra"],
     "cartoon"),
    # "any kind of shoe" ends an exception list (wrong 200: the footwear kept)
    ("uh every clothing class except the bags and any kind of shoe period", CLOTHES, None),
    ("all clothing except bags and all footwear", CLOTHES, None),
    # a compound split in two
    ("all the foot wear period all of it period from the dock cam", FOOTWEAR, "photo"),
    # "with the exception of" is "except"; a bracketed time heads no header
    ("Summary: Animal painting triage. Description: Using the watercolour holdings, please "
     "classify every animal in your catalogue, with the exception of domestic pets (cats and "
     "dogs).", ["bear", "bird", "cow", "elephant", "giraffe", "horse", "sheep", "zebra"],
     "art_painting"),
    ("Ticket MUS-2318. Category: Digital Archive. Request: a classifier for the following "
     "costume items: shirt, pullover. Amendment (14:20): please add trousers to the scope.",
     ["shirt", "pullover", "trouser"], None),
    # "won't be needed" negates (wrong 200s found while mending the review)
    ("cats and dogs, birds won't be needed", ["cat", "dog"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("cartoon ones and zeros", ["one", "zero"]),  # the digit, from the dev set
    ("handwritten ones and sevens", ["one", "seven"]),
    ("cats and dogs over a period of time", ["cat", "dog"]),  # no dictation
    ("every clothing class except any kind of shoe", [*CLOTHES, "bag"]),
    ("hand bags and sneakers", ["bag", "sneaker"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    # an outside review of this stop's first version (104 probes: 13 new wrong 200s, these
    # among them): a "period" of time, a "for" or "won" that is no digit, a list of digits
    # before a styled "ones", a verb and its particle
    ("We label digits 1 and 7 for 2 weeks during the trial period", ["one", "seven"]),
    ("We need the digits one and two for three different clients period", ["one", "two"]),
    ("Digits 6 and 7 only comma the 7 ate half the labelling budget last period",
     ["six", "seven"]),
    ("We only need sixes, sevens and nines for the joke demo, you know, because seven ate nine "
     "period", ["six", "seven", "nine"]),
    ("Classify digits zero, one and two; batch two for one client, batch one for two clients, "
     "over the pilot period", ["zero", "one", "two"]),
    ("Our OCR keeps mistaking one for seven period we need to classify ones and sevens period",
     ["seven", "one"]),
    ("Digits: fours, sevens and pencil ones", ["four", "seven", "one"]),
    ("Sort the scanned digits: sevens vs photo ones vs nines", ["seven", "one", "nine"]),
    ("voice note classify horses and sheep and when you come back pack the results into a zip",
     ["horse", "sheep"]),
    # a bare question whose pronoun may mean some images of a class keeps the class
    ("Cats, dogs and birds. Got some blurry dog pics? Drop them.", ["cat", "dog", "bird"]),
    # one that names only classes skips them, even from a group asked for (was zebra at 200)
    ("All the animals. What about the zebras? Leave them out.",
     ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep"]),
])
def test_review_mends(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_two_class_words_are_not_joined(pacs):
    with pytest.raises(Problem):  # "sheep dogs": sheep and dogs, or sheepdogs? asked back
        _resolve(pacs, "cows, horses, sheep dogs")


def test_dictation_is_read_only_in_dictated_text():
    assert dictated("zero one two three comma for and five period") == \
        "zero one two three, four and five."
    assert dictated("the period of the photos") == "the period of the photos"
    text = "a trial period in may, cats and dogs"
    assert dictated(text) == text
    assert dictated("one for the team period. two") == "one for the team period. two"
    assert dictated("cats comma dogs new line horses") == "cats, dogs\n horses"


def test_split_compounds_join_only_into_a_class_word():
    known = {"pullover", "pullovers", "handbags", "sheepdogs", "sheep", "dogs", "backpack"}
    text = "coats and pull overs, foot wear, hand bags, cows sheep dogs"
    assert rejoined(text, known.__contains__, {"footwear"}) == \
        "coats and pullovers, footwear, handbags, cows sheep dogs"
    for text in ("pull over the van", "back pack the results", "drivers pull over"):
        assert rejoined(text, known.__contains__) == text  # a verb and its particle
