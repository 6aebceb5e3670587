"""Stop 38 (issue 13): labels, pastes and asides read as their writers meant them, with the real
bundled MiniLM over Tailor-PACS. Every case but the guards (marked) was a 422 or a wrong class
set at 200 on the stop-37 resolver; most come from held-out set 46, read at this stop: a range
that labels a sprint or counts weeks ("Sprint 3-4:", "(2-3 weeks)"), "from" after a clause
("… that customers upload from their phones"), "cos" and "because", "numbers from 5 until 9",
glosses after a word ("dogs (the sheepdogs)"), brackets that describe ("shirts (with buttons
and collar)"), a code fence, a JSON body after a label, a forwarded email's "From:" line,
German joiners, pipe-separated class lists, the parity within a range, "… goes to another
team", sums that do not compute, "a square's corners", short relative clauses and stick-shaped
digits."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.task_request import resolve_request

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("Sprint 3-4: classify cats and dogs", ["cat", "dog"], None),  # had three, four at 200
    ("Week 3-4: cats and dogs", ["cat", "dog"], None),
    ("For the release (2-3 weeks), cats and dogs", ["cat", "dog"], None),
    ("Version 1-2: digits 5 to 9", DIGITS[5:], None),  # had one, two
    ("weeks 1-2 we only need the digits 0-3", DIGITS[:4], None),  # had zero, three
    ("I run a small farm shop website and want to auto-tag the pics of cows, sheep and horses "
     "that customers upload from their phones", ["cow", "sheep", "horse"], "photo"),
    ("i need seven and one cos people write them similar in europe", ["seven", "one"], None),
    ("Hello, I am teacher in primary school. I want app which recognise the numbers from 5 "
     "until 9 that children write on paper. Thank you very much.", DIGITS[5:], None),
    ("Email fwd:\n> From: Maria\n> We need the thing that recognises sheep and cows from the "
     "drone pics. Also dogs (the sheepdogs).\n> Thx", ["sheep", "cow", "dog"], "photo"),
    ("Could you make a classifier for: t-shirts, shirts (with buttons and collar), trousers, "
     "dresses and coats?", ["t-shirt", "shirt", "trouser", "dress", "coat"], None),
    ("numbers 0 and 8 as cartoon characters (like in a kids' counting show)",
     ["zero", "eight"], "cartoon"),
    ("config paste:\n```yaml\nclasses: [tshirt, shirt]\nstyle: clipart\n```",
     ["t-shirt", "shirt"], "cartoon"),
    ('API request body: {"task": "classify", "labels": ["dog", "horse", "cow"], "images": '
     '"phone camera"}', ["dog", "horse", "cow"], "photo"),
    ("Sandalen und Sneaker bitte, Fotos", ["sandal", "sneaker"], "photo"),
    ("Spec: Dress | Coat | Trouser | Bag", ["dress", "coat", "trouser", "bag"], None),
    ("labels: cat|dog|horse", ["cat", "dog", "horse"], None),
    ("only the even numbers, handwritten, 0 through 8", DIGITS[0::2], None),  # had all nine
    ("odd digits between 3 and 9", ["three", "five", "seven", "nine"], None),
    ("cats, dogs and horses, the dogs went to another team", ["cat", "horse"], None),
    ("cats and horses; dogs are handled by another team", ["cat", "horse"], None),
    ("cats and dogs; the model goes to another team", ["cat", "dog"], None),  # guard
    ("Guten Tag, I want to classify paintings of elephants and giraffes, like in the museum, "
     "oil on canvas.", ["elephant", "giraffe"], "art_painting"),
    ("Hola, need to classify pictures of vacas and caballos... sorry, cows and horses, the "
     "photos are taken from a drone over the farm", ["cow", "horse"], "photo"),
    ("all animals but the farm ones (cow, sheep, horse)",
     ["bear", "bird", "cat", "dog", "elephant", "giraffe", "zebra"], None),
    ("cats and dogs... sorry for the delay", ["cat", "dog"], None),  # guard
    # an outside review of this stop's first rules: each was a wrong set at 200
    ("even digits apart from 0 to 4", ["six", "eight"], None),
    ("odd digits on pages 2 to 8", DIGITS[1::2], None),
    ("even digits, photos with 2 to 6 per image", DIGITS[0::2], "photo"),
    ("cats und dogs, nicht horses", ["cat", "dog"], None),
    ("the dogs go to a separate model, so cats and horses", ["cat", "horse"], None),
    ("cats, dogs, horses (which we don't need)", ["cat", "dog"], None),
    ("sheep, cows (which are out of scope), horses", ["sheep", "horse"], None),
    ("numbers from 1 to 3 per image: cats and dogs", ["cat", "dog"], None),
    ("cats and dogs (ignore the backgrounds)", ["cat", "dog"], None),  # guard
    ("I want cats and dogs, but also the wild ones (bear, zebra)",  # a second review: was cat,
     ["cat", "dog", "bear", "zebra"], None),  # dog at 200 in this stop's first rules; then
    # asked back over a stray "but" until stop 49, which reads the brackets' list
    # a second outside review: each was a wrong set at 200 in this stop's first rules
    ("cats, dogs and horses (bounding boxes not needed)", ["cat", "dog", "horse"], None),
    ("horses (breed not needed), cows and sheep", ["horse", "cow", "sheep"], None),
    ("cats, dogs, horses (not needed in v1 but needed now)", ["cat", "dog", "horse"], None),
    ("odd numbers only from 3-7 handwritten on forms", ["three", "five", "seven"], None),
    ("digits 0-4 now, 5-9 next sprint", DIGITS, None),
    ("digits 1-4 this week and 5-8 next week", DIGITS[1:9], None),
    ("week 1: 0-4, week 2: 5-9", DIGITS, None),  # was 5-9 or 0, 4, 5-9 at 200
    ("digits 0-4. digits 5-9", DIGITS, None),  # was zero, four, five, nine
    ("a farm selling horses, classify cows and sheep", ["cow", "sheep"], None),  # had horse
    ("a shop selling bags and coats, sort them into bags and coats", ["bag", "coat"], None),
    ("we sell cats, classify dogs and birds too", ["cat", "dog", "bird"], None),  # guard
    ("we sell purses and gowns, tell them apart in customer photos", ["bag", "dress"],
     "photo"),  # guard: the task points back to the goods
    ("a shop selling tote bags and tees", ["bag", "t-shirt"], None),  # guard (stop 37)
    ("MVP scope\n```\nclasses: [four, five, six]\ndomain: any\n```", ["four", "five", "six"],
     None),
    ("shirt vs t-shirt vs dress on Android camera pics, 50 ms latency budget",
     ["shirt", "t-shirt", "dress"], "photo"),
    ("um i want to tell apart the number seven and the number one they get mixed up a lot "
     "when people write them", ["seven", "one"], None),
    ("class\tinclude\nT-shirt\tyes\nShirt\tyes\nPullover\tno\nCoat\tyes",
     ["t-shirt", "shirt", "coat"], None),
    ("tell a 3 from an 8", ["three", "eight"], None),  # guard: "from" still compares
    ("cats and dogs (in sketches)", ["cat", "dog"], "sketch"),  # guard: a style stays
    ("I need jumpers (sweaters) and coats", ["pullover", "coat"], None),  # guard
    ("Sprint 3: classify cats and dogs", ["cat", "dog"], None),  # guard
    ("I need digits 0-3 today", DIGITS[:4], None),  # guard: a project word after the range
    ("digits 5-9 team wants them by friday", DIGITS[5:], None),  # guard
])
def test_read(pacs, text, classes, domain):
    got, got_domain = resolve_description(pacs, text)
    assert sorted(got) == sorted(classes) and got_domain == domain


@pytest.mark.parametrize("text", [
    "sprint 3-4",  # was three, four at 200
    "recognise cats from llamas",  # guard: llamas still asked back
    "big cats (cats) and dogs",  # guard: a modifier before the gloss is not dropped
    "cats and wolves (dogs)",  # guard
    "cat | rm -rf",  # guard: a pipe to no class is still refused as code
    "cats | dogs | 1=1",  # guard
    "cats and dogs pls. hmm actually make it just the cats, the dog set goes to a separate "
    "model",  # was cat, dog at 200; one class is too few
    "cats and dogs, the photos are of foxes",  # guard: said of the images, but a class
    # an outside review of this stop's first rules: each was a wrong set at 200
    "all clothing (without footwear)", "grep cat | grep dog", "ls cats | grep dogs",
    'cats: {"labels": ["dog", {"a": 1}]}',  # guard: a document after a label is still checked
])
def test_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)


@pytest.mark.parametrize(("classes", "expect"), [
    (["fingers on both hands minus a pair", "half of ten"], ["eight", "five"]),  # was nine
    (["what you get when you subtract a number from itself", "the count of sides on a "
      "triangle", "a square's corners"], ["zero", "three", "four"]),
    (["pet that meows", "animal with a mane that pulls carriages"], ["cat", "horse"]),
    (["the digit shaped like a stick", "the digit shaped like a snowman"], ["one", "eight"]),
])
def test_definitions(pacs, classes, expect):
    matches, _ = resolve_request(pacs, PersonalizeCreate(classes=classes), pacs.domains)
    assert [m.name for m in matches] == expect


@pytest.mark.parametrize("classes", [
    ["legs on a spider plus some", "half of ten"],  # was eight at 200
    ["seven plus a bit", "half of ten"],
    ["a spider's legs minus a few", "a square's corners"],  # an outside review
])
def test_sums_that_do_not_compute_are_asked_back(pacs, classes):
    with pytest.raises(Problem):
        resolve_request(pacs, PersonalizeCreate(classes=classes), pacs.domains)
