"""Specs, tickets and app-store copy (issue 13, stop 29), with the real bundled MiniLM over
Tailor-PACS. Each case failed on the stop-28 resolver: a 422, or a wrong 200 where noted; they
come from the held-out sets 18 and 19 once read."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes"), [
    # "Non-goals:" excludes what it lists, as "Won't have:" does
    ("Feature: Closet Sorter. The model needs to label trousers, dresses, coats, bags and "
     "sneakers from user uploads. Non-goals: jewellery and watches.",
     ["trouser", "dress", "coat", "bag", "sneaker"]),
    # "scratch" takes a class back, as "drop" and "scrap" do
    ("Need a model for bears and horses. Hmm, actually scratch the horses - make it bears, "
     "sheep and cows instead.", ["bear", "sheep", "cow"]),
    # "7" and "7s" are one class, not a clash
    ("we need 7, 8 and 9 for the ticket scanner; people keep confusing their 1s and 7s",
     ["seven", "eight", "nine", "one"]),
    # a field naming the product is no class ("App: Sketch-a-Zoo")
    ("Specification\nApp: Sketch-a-Zoo\nRecognise: cat, dog, elephant", ["cat", "dog", "elephant"]),
    # "our catalogue" is about the shop, neither a class nor photos
    ("Need to sort a shoe catalogue into Chelsea boots, flip-flops and trainers.",
     ["ankle boot", "sandal", "sneaker"]),
])
def test_spec_wording_reads_right(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_catalogue_is_no_photo_style(pacs):
    """Wrong 200 (domain photo) on three of set 19's rows."""
    assert _resolve(pacs, "Requirement R-12: distinguish coats, dresses and bags in our "
                          "catalogue.") == (["coat", "dress", "bag"], None)  # fmt: skip


def test_a_spaced_dash_before_a_number_separates_and_a_spaced_range_stays(pacs):
    """'a number card — 1, 2 or 3 —' read 'card 1' as a label and answered two, three at 200;
    it is asked back now ('hold up a card' is no class). A spaced range is no header: stop 28
    read 'digits 1 - 4' as the header 'digits 1' and '4' (one, four at 200)."""
    with pytest.raises(Problem):
        _resolve(pacs, "Hold up a number card — 1, 2 or 3 — and the app shouts it out loud.")
    for text in ("digits 1 – 4 please", "digits 1 - 4 please"):
        assert _resolve(pacs, text)[0] == ["one", "two", "three", "four"]
    assert _resolve(pacs, "pets — cats and dogs — in sketches") == (["cat", "dog"], "sketch")


@pytest.mark.parametrize("text", [
    "Feature: pet classifier. Detect cats and dogs, plus foxes.",  # the value ends; foxes stay
    "Non-goals: cats. We need dogs and cats.",  # excluded and asked for: a clash
])
def test_naming_and_non_goal_fields_do_not_hide_a_class(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    # "that one" before more numbers is the digit, not a pronoun (two, three, four at 200)
    ("make me a classifier for the numbers one two and three no wait make that one two three "
     "and four", ["one", "two", "three", "four"]),
    # "no, just …" takes back what came before (all ten digits at 200)
    ("zero through nine? no, just the even ones: 0 2 4 6 8", ["zero", "two", "four", "six",
                                                             "eight"]),
    # "about" bounds no number in a list (zero was dropped at 200)
    ("We only care about 0, 2, 4, 6 and 8 on the meter readouts.", ["zero", "two", "four", "six",
                                                                   "eight"]),
    ("which one, cats or dogs? cats and dogs please", ["cat", "dog"]),  # still a pronoun
])
def test_wrong_200s_of_the_read_pool_are_mended(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_letters_the_catalogue_lacks_are_asked_back(pacs):
    """'0-9 and A-F' answered the ten digits at 200, the letters unread."""
    with pytest.raises(Problem, match="letters"):
        _resolve(pacs, "Need hex digit recognition for a debugging tool: 0-9 and A-F.")
    assert _resolve(pacs, "t-shirts and shirts")[0] == ["t-shirt", "shirt"]  # no range


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # an outside review of this stop's first version: each was a wrong 200 or a 422 there
    ("My daughter is about 5 and loves cats and dogs", ["cat", "dog"], None),  # an age
    ("Which one, 3 or 8? Both, please: 3 and 8", ["three", "eight"], None),
    ("Photos of sheep, cows and horses? No, just sheep and cows", ["sheep", "cow"], "photo"),
    ("We're building a model from scratch for sneakers, sandals and ankle boots",
     ["sneaker", "sandal", "ankle boot"], None),
    ("Non-goals: birds. Goals: cats and dogs.", ["cat", "dog"], None),
    ("Codename: Zebra. Classes: horses, cows.", ["horse", "cow"], None),
    ("Name: Sheep Counter. Classes: sheep, cows.", ["sheep", "cow"], None),
    ("t-shirts in sizes S to L, and dresses", ["t-shirt", "dress"], None),  # no letters asked
    ("I need the digits 2 – 4 – 6 – 8", ["two", "four", "six", "eight"], None),  # no ranges
    ("digits one – five", ["one", "two", "three", "four", "five"], None),  # a spaced range
])
def test_review_findings(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_swimwear_for_the_catalogue_is_still_asked_for(pacs):
    """'catalogue' names no domain but is no clause about the app either."""
    with pytest.raises(Problem):
        _resolve(pacs, "t-shirts, trousers, and swimwear for the summer catalogue")


@pytest.mark.parametrize(("text", "classes"), [
    # held-out set 21, once read: chats and spreadsheets
    ("class_name,include\nt-shirt,yes\ndress,yes\nsandal,no\nbag,yes", ["t-shirt", "dress", "bag"]),
    ("hey @dana can u set up the classifier w/ tshirts + dresses + shirts? for the resale app",
     ["t-shirt", "dress", "shirt"]),
    ("@jules quick one — can the api do 1, 4 and 7? the digits I mean", ["one", "four", "seven"]),
])
def test_chats_and_spreadsheets(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    # wrong 200s of set 21: a negated header ("shall not classify: …", all three at 200), a
    # word for several classes ("shoes" was an ankle boot; "footwear" has been the catalogue's
    # sub-group since stop 32), a yes/no column with other values
    "Requirement R-9: The model shall not classify any of the following: cats, dogs, birds.",
    "@here we need a model for shoes vs bags for the marketplace",
    "class,status\ncat,done\ndog,todo",
])
def test_set_21_wrong_200s_are_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
