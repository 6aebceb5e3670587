"""Shapes that stop 53 read (issue 13) from held-out sets 70 (a teacher, a data scientist, a
tired parent dictating, a social-media manager) and 71 (a compliance memo, a game designer, a
texting teenager, a museum volunteer), and the wrong 200s of sets 72 and 73 (read after their
first score), with the real bundled MiniLM over Tailor-PACS. Each
``test_read`` case failed on the stop-52 resolver (a 422 or a wrong class set at 200); the
guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a memo's numbered clauses and dates are no digits (two and three were added at 200)
    ("1. Background: see prior correspondence. 2. Requirement: the system shall separate "
     "sketches of cats from sketches of dogs. 2.1 Amendment (review of 3 March): birds shall "
     "also be included. 3. Input style: pencil sketches only.", ["cat", "dog", "bird"],
     "sketch"),
    # bare names joined before a trailing negation are negated with it (cow kept at 200)
    ("cats, dogs. Cows and sheep are hereby excluded.", ["cat", "dog"], None),
    ("cats and dogs; cows and sheep are not needed", ["cat", "dog"], None),
    ("Need cats and dogs, cows and sheep are not needed", ["cat", "dog"], None),
    # an "Exclusions:" field excludes its items; "Exclusions: none" excludes nothing
    ("MEMO. 1. Scope: the tool shall distinguish coats, dresses and shirts. 2. Exclusions: "
     "T-shirts and pullovers. 3. Input: photographs.", ["coat", "dress", "shirt"], "photo"),
    ("Exclusions: none - we need all ten digits", _DIGITS, None),
    # "is hereby excluded" closing a sentence waves its classes off; "Nobody asked for" is no
    # asking (both wrong 200s of an outside review of stop 53)
    ("cats and dogs. cows and sheep are insured elsewhere and are hereby excluded.",
     ["cat", "dog"], None),
    ("Nobody asked for sheep; we need cows and horses.", ["cow", "horse"], None),
    # an outside review of stop 53: a list closed by its own "and" is not negated
    ("Bears, zebras and giraffes, horses and cows are excluded.", ["bear", "zebra", "giraffe"],
     None),
    # a digit before "drawn" is drawn, not counted; "drawn" gives way to the comic style
    ("Roguelike with numbered doors. The doors show the digits 3, 5 and 9 drawn in a comic "
     "book style. I just need a classifier for those three.", ["three", "five", "nine"],
     "cartoon"),
    # "jk" takes back the sentence before it (bird dropped at 200)
    ("cartoon animals for my edits: cats dogs n birds. wait no birds. jk keep birds lol",
     ["cat", "dog", "bird"], "cartoon"),
    # canvas before a class is a material (art_painting at 200)
    ("I sell hand-knit jumpers, a few canvas bags, and ankle boots for the muddy season. Want "
     "the thing to recognise those three.", ["pullover", "bag", "ankle boot"], None),
    # closing hashtags, bots and "you've"
    ("🐘🦒🦓 Safari week content incoming! Need a tool that tags our cartoon posts as "
     "elephant, giraffe or zebra #SafariWeek #ContentOps", ["elephant", "giraffe", "zebra"],
     "cartoon"),
    ("POV: you need a bot that knows 🐻 from 🐄 in cartoons 😂 #bear #cow #AnimationTwitter",
     ["bear", "cow"], "cartoon"),
    ("All the clothes categories please 👗👕👖👟 - every single fashion one you've got! #OOTD",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
      "ankle boot"], None),
    # sets 72 and 73's wrong 200s: "Just the two." counts, a person mixing digits up, an age
    ("Per our call: cows and sheep. Originally said goats too - drop goats. Just the two.",
     ["cow", "sheep"], None),
    ("Can it do numbers?? 🔢 Like 0 and 6 and 9!! My kiddos always flip 6 and 9 🙃😂",
     ["zero", "six", "nine"], None),
    ("Hello, I am writing this for my granddaughter Lily who is 6. She wants a computer game "
     "that knows her drawings of cats and dogs and horses. She draws them in pencil on paper.",
     ["cat", "dog", "horse"], "sketch"),
    # an article before each name is a list
    ("ok last thing before bed, the baby book has cartoon animals, the cat the dog the cow and "
     "the sheep, thats it, can it do those", ["cat", "dog", "cow", "sheep"], "cartoon"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("cats and dogs, horses not needed", ["cat", "dog"]),  # a list of its own
    ("canvas paintings of horses and cows", ["horse", "cow"]),
    ("Cats and dogs; sample numbers collected are 3 to 5.", ["cat", "dog"]),
    # a count before "painted" still counts (no digit four; the order is the mentions')
    ("4 painted cows and 2 sheep on the barn door, classify cows and sheep", ["sheep", "cow"]),
    ("nobody can tell cats from dogs", ["cat", "dog"]),
    ("Need 2, 3 and 5. May 8 be added too? Yes, add it.", ["two", "three", "five", "eight"]),
    ("Need cats and dogs. JK asked for birds and cows too.", ["cat", "dog", "bird", "cow"]),
    ("numbers 1 to 9 on the May 3 forms", _DIGITS[1:]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("Cats and horses drawn from life by my evening class", ["cat", "horse"], "sketch"),
    ("Gallery app: canvas horses and zebras by local painters", ["horse", "zebra"],
     "art_painting"),
])
def test_styles_kept(pacs, text, classes, domain):
    """"drawn" gives way only to a cartoon's or painting's word; "canvas" is a material only
    before bags and shoes (an outside review of stop 53)."""
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    "cats, dogs and hamsters #pets",
    # an outside review of stop 53: unknown tags, and things a list asks for, are asked back
    "#cows #sheep #goats",
    "Classify each photo as cat, dog or background",
    "Is it a bag, a sneaker or a tablet?",
    # an alias before a noun no class has ("slide deck" was a sandal at 200, set 70)
    "Can the tool spot the horses, cows, sheep and dogs? Those four are what's in our slide "
    "deck.",
    # a class asked and called redundant in one breath: a clash, not a 200
    "cats, dogs and horses; the horses are redundant",
    # undecided (set 72: three classes at 200)
    "Kindly, I would like the classifier for zebra and giraffe. Or maybe zebra and horse... I "
    "am sorry, I cannot decide. Either is fine for me.",
])
def test_still_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
