"""Stop 35 (issue 13): groups with what they leave out, multiples, sounds, corrections after a
full stop, a style taken back, named animals the catalogue lacks, and "plus", with the real
bundled MiniLM over Tailor-PACS. Every case but the guards (marked) was a 422 or a wrong class
set or domain on the stop-34 resolver; most come from held-out sets 38 and 39, read at this
stop."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.kinds.ranges import multiples
from service.kinds.rewrites import restyled, sounded

CLOTHES = ["t-shirt", "trouser", "pullover", "dress", "coat", "shirt"]
ANIMALS = ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"]
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a group with what it leaves out: a bare group word, "minus" twice, "every item in …"
    ("digits, but skip 0 and 1", DIGITS[2:], None),
    ("animals except cows", [a for a in ANIMALS if a != "cow"], None),
    ("the whole apparel catalogue minus the footwear and minus the bag", CLOTHES, None),
    ("Every item in the clothing group except the footwear", CLOTHES + ["bag"], None),
    ("Every item in your clothing group except the footwear (sandals, sneakers, ankle boots).",
     CLOTHES + ["bag"], None),  # was a guard (refused) until "every item in" read a group
    ("every animal on your list but not bears and not birds",
     [a for a in ANIMALS if a not in ("bear", "bird")], None),
    ("all animals plus all digits", ANIMALS + DIGITS, None),
    ("cats plus dogs", ["cat", "dog"], None),
    # multiples, cut by a span after them
    ("digits that are multiples of 3, between 1 and 9", ["three", "six", "nine"], None),
    ("only the multiples of two", ["two", "four", "six", "eight"], None),
    # what an animal says, before a word for the animal
    ("mooing animal + neighing animal + barking animal", ["cow", "horse", "dog"], None),
    # a correction after a full stop and a short word; a style taken back
    ("Build a classifier: dog, cat. Actually no cat. Add horse instead.", ["dog", "horse"], None),
    ("Need: elephant, bird, zebra, cat. scratch the cat.", ["elephant", "bird", "zebra"], None),
    ("trousers, shirts, coats, pencil sketch style... actually no, make it real photos instead",
     ["trouser", "shirt", "coat"], "photo"),
    ("shirts vs t-shirts, shot on my iPhone", ["shirt", "t-shirt"], "photo"),
    ('{"labels": ["coat", "dress", "shirt"], "input_style": "watercolor paintings"}',
     ["coat", "dress", "shirt"], "art_painting"),
    ("fashion stuff: only the shoes and the bag", ["sandal", "sneaker", "ankle boot", "bag"],
     None),
    ("the even digits only, i.e. 2 and 4", ["two", "four"], None),
    # held-out sets 40 and 41, read after their unread score at this stop's end
    ("all clothing classes except bags and shoes", CLOTHES, None),
    ("tell apart a 6 from a 9, users sometimes upload them upside down", ["six", "nine"], None),
    ("mooing and neighing animals", ["cow", "horse"], None),
    ("odd digits, so 7 and 9 included", ["one", "three", "five", "seven", "nine"], None),
    # guards: what read right before still does
    ("all the animals except the zebra", ANIMALS[:-1], None),
    ("all the digits except 3 and also cats", [d for d in DIGITS if d != "three"] + ["cat"],
     None),
    ("just the running shoes and coats", ["sneaker", "coat"], None),
    ("a fox terrier and a cat", ["dog", "cat"], None),
    ("all animal line art", ANIMALS, "sketch"),  # "line" is no group suffix (review A)
    ("cats, dogs and a fish tank in the background", ["cat", "dog"], None),
    ("sneakers vs sandals, shot on a GoPro", ["sneaker", "sandal"], "photo"),  # not no domain
    ("fyi the team wants the digits one through five. they said the rest can wait till Q3. "
     "also who ate my yogurt", DIGITS[1:6], None),
])
def test_read(pacs, text, classes, domain):
    got, got_domain = resolve_description(pacs, text)
    assert sorted(got) == sorted(classes) and got_domain == domain


@pytest.mark.parametrize("text", [
    "cats vs dogs vs bunnies",  # "bunnies" was horse (0.60, through "pony") at 200
    "dogs and wolves", "cats, dogs and hamsters", "horses and donkeys",  # guards: refused
    # before by the threshold, now because the foil is named
    "Just the even digits, so 1, 3 and 5",  # a clash, was eight digits at 200
    "Need it to recognize the even numbers only, i.e. 3 and 5.",  # "i.e." lost its list
    "I wish that the machine knows my animals: the cows, the sheeps, and also the donkey "
    "which carries the water.",  # an item opening with an animal foil is asked for
    "Make it detect handwritten plus and minus signs along with the digits 0-9",  # guard
    "cats and dogs in multiples of 2 per image",  # not about digits
    # an outside review of this stop's first rules: each was a wrong answer at 200 then
    "digits and animals except cats",  # which group "except" leaves is unclear
    "Todo: 1. drop the cat class 2. add cow and horse",  # a numbered list, not "1"
    "the digit 3 plus 4", "multiples of 3 under 7", "cat. no, dog", "dog. no, sorry, cat",
    '{"classes": ["cat", "dog"], "style": "photo", "alt_style": "sketch"}',
    '{"classes": ["cat", "dog"], "unsupported_styles": "cartoon"}',
    "cats, dogs and a shot of espresso", "all digits except 6, not 9",
    "sketches of cats, no wait make it photos of dogs",
])
def test_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)


def test_rewrites_leave_what_they_do_not_read():
    assert multiples("the multiples of 3") == "3, 6, 9"
    assert multiples("want multiples of 4, between 5 and 9") == \
        "want multiples of 4, between 5 and 9"  # one multiple left: no list, as it was
    assert multiples("cats in multiples of 2 per image") == "cats in multiples of 2 per image"
    assert sounded("the barking dogs", lambda w: True) == "the barking dogs"
    assert sounded("a mooing animal", lambda w: w != "cow") == "a mooing animal"
    is_style = {"sketch", "photos", "pencil"}.__contains__
    assert restyled("cats in sketches, make it fast", is_style) == \
        "cats in sketches, make it fast"  # fmt: skip
