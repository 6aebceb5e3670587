"""Wording read right since stop 30 (issue 13; held-out sets 22 and 23, once read), with the
real bundled MiniLM over Tailor-PACS. Each case but the guards was a 422 or a wrong class set
(marked) on the stop-29 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.task_request import resolve_request

ODD = ["one", "three", "five", "seven", "nine"]


@pytest.mark.parametrize(("text", "classes"), [
    ("Odd digits only, please, thanks", ODD),  # was the even ones, at 200
    ("even numbers 0-8 as handwritten digits", ["zero", "two", "four", "six", "eight"]),  # 0-8
    ("the odd digits from 3 to 7", ["three", "five", "seven"]),
    ("digits 1 through 3 on scanned checks; we process 2,500 checks a day",
     ["one", "two", "three"]),
    ("need the numbers 1 and 5 recognized on hand-filled forms", ["one", "five"]),
    ("shirt vs t-shirt vs dress on Android camera pics. Our latency budget is 50 ms.",
     ["shirt", "t-shirt", "dress"]),
    # an outside review's probes (stop 30): each was wrong once the rules above first landed
    ("even digits 0-8 except 4", ["zero", "two", "six", "eight"]),
    ("just the odd digits 1 and 7", ["one", "seven"]),
    ("Classify cats and dogs. Make it fast.", ["cat", "dog"]),
    ("our 2 licensed photographers shoot horses and cows", ["horse", "cow"]),
    ("Digits 1 and 7, actually make that 1 and 4", ["one", "four"]),
    # held-out sets 24 and 25, first read at this stop's end: wrong 200s once a stray
    # word no longer hid them
    ("I need digits 1, 4 and 7 -- actually scratch the 4, just one and seven", ["one", "seven"]),
    ("felines, canines, ovines. domain: sketch", ["cat", "dog", "sheep"]),
    ("dogs and cats — actually, make that dogs and horses", ["dog", "horse"]),
    ("cats and dogs. On second thought, cats and horses", ["cat", "horse"]),  # had dog, at 200
    ("we want elephants, giraffes, and, um, zebras, and, hmm, maybe bears too? yeah, bears.",
     ["elephant", "giraffe", "zebra", "bear"]),
    # "but not" opens a chunk of its own (stop 29 read "horses but not dogs" as one mention;
    # a guard of stop 27 only checked that no dog came back)
    ("Give me sheep, cows, and horses but not the dogs we discussed last week",
     ["sheep", "cow", "horse"]),
    ("sheep, cows, horses, farm animals but NOT dogs pls x", ["sheep", "cow", "horse"]),
])
def test_held_out_wording_reads_right(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    ("Detect stallions, foals & zebras.", ["horse", "zebra"]),
    ("bulls, heifers, rams", ["cow", "sheep"]),
    ("parrots, eagles, and cats", ["bird", "cat"]),
])
def test_kinds_of_one_class_are_that_class_and_said_so(pacs, text, classes):
    notes: list[str] = []
    matches, _ = resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains,
                                 notes=notes)  # fmt: skip
    assert [m.name for m in matches] == classes
    assert len(notes) == 1 and "kinds of one class" in notes[0]


@pytest.mark.parametrize("text", [
    "kittens, cats and dogs",  # the class named beside a kind of it: which is meant?
    "shirts and polo shirts, dresses",
    "digits 3, 7 and 12",  # a bare number may be a class asked for
    "cats and dogs, half of 10",  # a computed number is no measurement
    "cats, make it cows and sheep and 12",
    # an outside review's probes (stop 30): each was a wrong 200 once the rules first landed
    "handwritten 3s, 7s and 10s",  # a number in a list is no measurement
    "bags, coats and iPhone 15s",
    "cats, dogs and F-16s",
    "lion cubs, pandas and zebras",  # "lion cubs" is no bare alias of bear
    "Tell dogs with coats on from cats",  # "with" pairs only what is confused or mixed up
    "Our farm has cows, horses and sheep. The llamas should be recognised as well.",
    "horses, zebras and alpacas photographed at dusk",
])
def test_guards_clashes_and_bare_numbers_are_still_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
