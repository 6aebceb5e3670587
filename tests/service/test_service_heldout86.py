"""Stop 56 (issue 13): wrong 200s of held-out sets 78-87, each a general shape, with the real
bundled MiniLM over Tailor-PACS: three that stop 55 left in sets 78-83, then those of sets 84-87
(read after their unread scores). Each ``test_read`` case, most of them reworded, was answered
200 with a wrong class set or domain by the stop-55 resolver; the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a group's exception is what a pronoun after it points at, not the group's last class
    ("Please make classifier for all the animals you have, except the bear, we don't need it.",
     ["bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"], None),
    ("every digit except 0 and 1, we don't need them. Also pencil sketches please",
     ["two", "three", "four", "five", "six", "seven", "eight", "nine"], "sketch"),
    # "that's" without its apostrophe is no plural a number counts
    ("can you make one for numbers one two three four five thats all she knows so far period",
     ["one", "two", "three", "four", "five"], None),
    # a header that turns down its own style leaves what follows it alone
    ("Not photos this time — I've been scanning my old charcoal studies. Horses and dogs "
     "mostly, just those two.", ["horse", "dog"], "sketch"),
    # a count of the classes just named, closing its sentence, is no digit
    ("They painted zebras and horses. Want a classifier for the two.", ["zebra", "horse"],
     "art_painting"),
    ("mostly birds, once in a while a bear. Would like those doodles split into the two.",
     ["bird", "bear"], "sketch"),
    ("coat, bag, trouser. Ah, and also dress please. Total is four.",
     ["coat", "bag", "trouser", "dress"], None),
    ("pullover vs coat. those are the only two that get confused", ["pullover", "coat"], None),
    ("I need a classifier for the two: cats and dogs", ["cat", "dog"], None),
    # a thread's numbering
    ("1/ love comic-style animals 2/ need a classifier: bears, elephants, giraffes 3/ cartoon "
     "only", ["bear", "elephant", "giraffe"], "cartoon"),
    ("1/ doodle bot idea: you doodle a bear or a bird, it guesses which 2/ that's the whole "
     "app lol", ["bear", "bird"], "sketch"),  # a 422 in test_service_heldout74 until stop 56
    # one word signed with a dash that is no dictionary thing
    ("Odd numbers only: 1, 3, 5, 7, 9. Photos from a phone camera. - Kev",
     ["one", "three", "five", "seven", "nine"], "photo"),
    # "book" alone names no style; a style word naming none leaves the camera hint
    ("We only need 4, 5 and 6, since the series is themed around a kids' counting book.",
     ["four", "five", "six"], None),
    ("zebra or horse? night cam at the safari park", ["zebra", "horse"], "photo"),
    # a class said descoped
    ("Supports t-shirt, shirt, coat. Dress was descoped in grooming.",
     ["t-shirt", "shirt", "coat"], None),
    # "or rather" corrects what comes before it
    ("Sneakers and sandals, or rather sneakers and ankle boots", ["sneaker", "ankle boot"], None),
    # digits listed in order and continued to an end
    ("the model needs nine, eight, seven... all the way down to zero", [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"], None),
    ("1, 2, 3... up to 6 please", ["one", "two", "three", "four", "five", "six"], None),
    # a whole-catalogue phrase beside a group is that group
    ("all the clothes, every single category you have, photos from my shoots", [
        "t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
        "ankle boot"], "photo"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a header's "not" with no style of its own still turns down the list after it
    ("Not needed for launch - birds, bears. Cats and dogs in photos", ["cat", "dog"], "photo"),
    ("No paintings — horses and dogs", ["horse", "dog"], None),
    # a number before a real plural still counts it
    ("cats and dogs, five kids use it", ["cat", "dog"], None),
    # digits written with slashes are no thread's numbering (an outside review)
    ("Digits I need: 1/ 2/ 3/ 4", ["one", "two", "three", "four"], None),
    # a colouring book's pages are line drawings; "book" alone is weak, not gone
    ("kids' colouring book pages (just the outlines) of dogs and birds", ["dog", "bird"],
     "sketch"),
    # a class dropped as an event, or descoped then brought back, stays (an outside review)
    ("cats and dogs that were dropped off at the shelter", ["cat", "dog"], None),
    ("Photos of bags that were dropped on the floor, plus sandals and sneakers. Tell the three "
     "apart", ["bag", "sandal", "sneaker"], "photo"),
    ("Coats, pullovers and shirts. The shirts were deprioritized last sprint but they're back in "
     "scope now.", ["coat", "pullover", "shirt"], None),
    # a closing count where other digits are named is the digit
    ("Recognise handwritten 3 and 8, and also train it on the two.", ["three", "eight", "two"],
     None),
    # "rather than" corrects nothing; a group after the whole catalogue is part of it
    ("Label each photo as cat or dog, or rather than guessing, mark it as unsure",
     ["cat", "dog"], "photo"),
    ("The whole catalogue please, all the animals included", [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "t-shirt",
        "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot",
        "bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"],
     None),
    # "comic book" is a cartoon; a list that does not step by one is not continued
    ("cats and dogs from a comic book", ["cat", "dog"], "cartoon"),
    ("every class you have please", [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "t-shirt",
        "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot",
        "bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"],
     None),
    # an emoji is no place a camera hint can override; a count of classes is no range
    ("cat and dog emoji typed on a smartphone", ["cat", "dog"], None),
    ("we narrowed it from 9 down to 3 classes: cats, dogs and birds", ["cat", "dog", "bird"],
     None),
    # "or rather" before a possessive or an article, "descoped to just …"
    ("cats, dogs and birds, or rather their photos", ["cat", "dog", "bird"], "photo"),
    ("Can it tell whether it's a sheep or rather a cow?", ["sheep", "cow"], None),
    ("Our scope was descoped to just cats and dogs", ["cat", "dog"], None),
])
def test_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    # a code review's probes: the whole catalogue after a group that is no apposition
    "I want all the animals. Actually no, make it the full catalogue.",
    "every animal, every digit, basically every class you have",
    "all the animals, plus every class in the catalogue",
])
def test_whole_catalogue_guards(pacs, text):
    got, domain = _resolve(pacs, text)
    assert sorted(got) == sorted(pacs.names) and domain is None


@pytest.mark.parametrize("text", [
    # the exception asked for again is a contradiction, not a pronoun's antecedent
    "Build a model for all animals except the cow, and make sure cows are detected too",
    "cats, dogs. - Hamster",  # a thing signed with a dash is asked for (unknown)
    "Sneakers, sandals and ankle boots. - Birkenstocks",  # and a plural (an outside review)
])
def test_still_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
