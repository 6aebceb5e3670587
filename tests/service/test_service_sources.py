"""Words about where the images come from and who asks, read as context since stop 31 (issue
13; the read held-out sets), with the real bundled MiniLM over Tailor-PACS. Each case but the
guards was a 422 or a wrong class set (marked) on the stop-30 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.task_request import resolve_request


@pytest.mark.parametrize(("text", "classes"), [
    # a word right before a style or capture word says where the images come from
    ("Identify grizzlies, elephants and giraffes from our trail cameras.",
     ["bear", "elephant", "giraffe"]),
    ("nine and one for a lottery ticket scanner, phone pics", ["nine", "one"]),
    ("handbags + ankle boots, product photos", ["bag", "ankle boot"]),
    ("As a safari-tour app user, I want to point my phone camera at an animal and be told "
     "whether it is a zebra, a giraffe or an elephant", ["zebra", "giraffe", "elephant"]),
    ("Need: auto-tag listing images as dress, sandal, or handbag. Constraint: the images are "
     "watercolour fashion paintings", ["dress", "sandal", "bag"]),  # a group word: any lean
    ("need giraffe elephant zebra bear for safari game (cartoon graphics)",
     ["giraffe", "elephant", "zebra", "bear"]),
    # what a business deals in is no class asked for
    ("I run a small shoe shop and want to auto-sort our listings into sneakers, sandals and "
     "ankle boots.", ["sneaker", "sandal", "ankle boot"]),
    ("Hi, we are a small pet shop. We want to know when a customer sends a picture of a kitten "
     "or a puppy or a budgie.", ["cat", "dog", "bird"]),
    ("dress or coat or bag, thats the three things our closet app needs",
     ["dress", "coat", "bag"]),
    # a user story's role, or "X here.", is who asks, whatever class it sounds like
    ("Teacher here. Students write digits on tablets and keep mixing up their 1s and 7s, so I "
     "want a model just for those two.", ["one", "seven"]),
    ("As a birdwatcher I'd like my camera app to tell whether a snapshot from my garden shows "
     "a bird, a cat or a dog.", ["bird", "cat", "dog"]),
    # adverbs name nothing, and do not make a number a count
    ("can it tell a 3 from an 8? thats literally all i need", ["three", "eight"]),
    ("she wrote a two or a five or a seven correctly", ["two", "five", "seven"]),  # lost seven
    # a decimal is no digit
    ("distinguish elephants from giraffes in oil paintings; I've tried label smoothing 0.1",
     ["elephant", "giraffe"]),  # had one, at 200
    ("Need a model: zebras vs horses. Dataset: 8k images 256x256, F1 target 0.95",
     ["zebra", "horse"]),
    # "the number", "numeral" stand beside a list item like an article
    ("# classifier: numeral 5 vs numeral 6 (handwritten checks)", ["five", "six"]),
    # a list closed by "and" does not go on after a comma
    ("paintings of horses and dogs, renaissance-era mostly", ["horse", "dog"]),
    ("giraffe + zebra + elephant + bird, screenshots from an animated show",
     ["giraffe", "zebra", "elephant", "bird"]),
    # "don't need" negates; "don't forget", "can't tell", "don't want to miss" do not
    ("we don't need dogs, just cats and horses", ["cat", "horse"]),  # had dog, at 200
    ("We run a school-uniform webshop. Items: trousers, shirts, pullovers and school bags. We "
     "don't sell shoes so skip all of those.", ["trouser", "shirt", "pullover", "bag"]),
    ("Shirts and t-shirts -- no wait, t-shirts and pullovers. Shirts are out.",
     ["t-shirt", "pullover"]),  # both had a shirt or a sneaker, at 200 (held-out sets 26, 27)
    # a negation keeps the mentions of its own sentence only
    ("Need only the number 4 — wait no, 4 and 9, those get mixed up a lot", ["four", "nine"]),
])
def test_sources_roles_and_numbers_read_as_context(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "filter horses and cows from deer in our field cameras",  # not side by side: deer asked
    "recognise cats, dogs and sheep from llamas",  # "from" goes on after a closed list
    # "Every item in your clothing group except the footwear (…)": read since stop 35
    # (test_service_regroup.py), seven clothing classes
    "every item in our shop except sandals, sneakers, bags",  # both were the rest, at 200
    "cats, dogs, and hamsters for the pet store kiosk",  # a list item with its context: at 200
    "kinda want to sort my laundry pile into joggers, tees and sweaters lol",  # lost joggers
    "I own a small pet shop and want to sort customer photos of cats, dogs and hamsters.",
    # held-out sets 26 and 27, first read at this stop's end: wrong class sets at 200
    "Train on all ten digits. Exclude the even numbers. Also make sure 4 and 8 are in there.",
    "trousers and shirts. images will be a mix of catalog photos and fashion sketches",
    # an outside review of this stop's first version: each was a wrong class set at 200
    "cats, dogs and guinea pig photos",  # a coordinated item is asked for, not a source
    "cat pics, dog pics, fox pics",  # the same shape as the classes asked for
    "Cows, sheep and a llama here.",  # "X here" is a role only as the first mention
    "bags and sneakers, watches",  # a plural goes on a list closed by "and"
    "elephant, zebra and crocodile illustrations for a children's app",
])
def test_guards_asked_or_excluded_classes_are_still_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains)


@pytest.mark.parametrize(("text", "classes"), [
    ("kitty, doggo, birdie cartoons", ["cat", "dog", "bird"]),  # leans to bird: a mention
    ("Sneakers and sandals, and don't forget ankle boots", ["sneaker", "sandal", "ankle boot"]),
    ("I can't tell a 3 from an 8", ["three", "eight"]),
    ("We don't want to miss any zebras or giraffes", ["zebra", "giraffe"]),
    ("Shirts and t-shirts, except for one case (we also need pullovers)",  # brackets: no list
     ["shirt", "t-shirt", "pullover"]),
    ("we have thousands of anime screenshots and we'd like to know whether there's a dog, a cat "
     "or a bird in each one", ["dog", "cat", "bird"]),  # "screenshots" as a style word
])
def test_guards_what_was_right_stays_right(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes
