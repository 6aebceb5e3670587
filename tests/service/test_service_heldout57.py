"""Shapes that held-out sets 56 and 57 (stop 46, issue 13) answered wrong at 200 or refused,
with the real bundled MiniLM over Tailor-PACS. Each case but the guards failed on the stop-45
resolver (a wrong class set or domain at 200 where marked, else a 422)."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

ANIMALS = ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "but no X no Y" leaves each out of the whole group (wrong 200: all ten animals)
    ("all animals but no zebras no giraffes no elephants. cartoony style",
     [a for a in ANIMALS if a not in ("zebra", "giraffe", "elephant")], "cartoon"),
    # "leave them out" waves off the class its sentence names (wrong 200: horse kept)
    ("For the Dutch Golden Age gallery (oils on canvas) we need cows, sheep, dogs and birds "
     "tagged. Horses are catalogued separately already, so leave them out.",
     ["cow", "sheep", "dog", "bird"], "art_painting"),
    # classes put off to later (wrong 200: bag and sneaker kept)
    ("We want auto-categorisation into t-shirts, shirts and coats. Bags and shoes come later, "
     "not in this version.", ["t-shirt", "shirt", "coat"], None),
    ("cats and dogs now; cows can wait.", ["cat", "dog"], None),
    # "trained" is the classifier's, not a trainer (wrong 200: sneaker added)
    ("Participants viewed watercolour renditions of four domestic quadrupeds (cat, dog, horse "
     "and sheep); the classifier was trained on the same four categories.",
     ["cat", "dog", "horse", "sheep"], "art_painting"),
    # a "line" is a sketch's only where nothing else names the style (wrong 200: sketch)
    ("Clients pick from my flash sheets: bird, cat, elephant or bear. All the flash is "
     "bold-line cartoon style.", ["bird", "cat", "elephant", "bear"], "cartoon"),
    # "far too many" asks for nothing (a 422 on "far")
    ("We'd want dog, cat, sheep, cow. Ignore birds, there are far too many of them.",
     ["dog", "cat", "sheep", "cow"], None),
    # a field cut as context still says how the images were taken (no domain at 200)
    ("SPEC-114. Label set: T-shirt/top, Shirt, Pullover. Source: product flat-lays shot on "
     "white background with a DSLR.", ["t-shirt", "shirt", "pullover"], "photo"),
    # an interjection is no class (a 422)
    ("Let's do cats and dogs. Ugh, and birds.", ["cat", "dog", "bird"], None),
    # a kind named with its class as an example of it, not a class of its own (422s)
    ("We inspect live animal shipments: parrots and other birds, horses, and the occasional "
     "crate of dogs.", ["bird", "horse", "dog"], None),
    ("Cats, dogs, cows. Oh, and birds too, we see a lot of budgies.",
     ["cat", "dog", "cow", "bird"], None),
    ("Cats and birds, e.g. budgies and parrots", ["cat", "bird"], None),
    # "forget them" waves off; a plain adjective keeps a glossed class word (422s)
    ("I want to flag bears, and deer - actually I see deer isn't on your list, so forget "
     "them. Bears, loose dogs and the odd horse.", ["bear", "dog", "horse"], None),
    ("line sketches of three livestock categories: bovine (cattle), ovine (sheep) and domestic "
     "equine (horse).", ["cow", "sheep", "horse"], "sketch"),
    # set 59: an exception list ends at its comma; "all the shoes" is the footwear (422s)
    ("All animals except cats and dogs, in watercolour.",
     [a for a in ANIMALS if a not in ("cat", "dog")], "art_painting"),
    ("need a footwear classifier: all the shoes you've got", ["sandal", "sneaker", "ankle boot"],
     None),
    # set 59: an unknown class turned down later is gone ("aren't" read as "not")
    ("Trail-cam photos from the ridge: bears and deer... actually the deer aren't necessary. "
     "Bears and birds.", ["bear", "bird"], "photo"),
    ("cats and dogs, horses aren't needed", ["cat", "dog"], None),  # was horse at 200
    # a full stop left alone once "wild ones" goes ends a sentence (all classes excluded)
    ("We'd like the animals we treat - so none of the wild ones. Cats, dogs, cows, sheep and "
     "horses.", ["cat", "dog", "cow", "sheep", "horse"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("line drawings of cats and dogs", ["cat", "dog"], "sketch"),  # "line" alone: a sketch
    ("Line-art colouring book app: we detect whether it shows a cat, a dog or a bird.",
     ["cat", "dog", "bird"], "sketch"),  # read set 9: "line art" stays a sketch
    ("all the animals but no cartoons please", ANIMALS, None),  # "but no" before no class
    ("Cats, dogs and cows, don't forget them", ["cat", "dog", "cow"], None),
    # read set 52: with "guesses" filler, "it." must end the sentence or "game" joins "zero"
    ("making a doodle game where players sketch a number and the game guesses it. need all "
     "ten digits, 0 through 9", ["zero", "one", "two", "three", "four", "five", "six", "seven",
                                 "eight", "nine"], "sketch"),
])
def test_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [  # an outside review of stop 46: each a
    # wrong 200 or a lost answer under the first version of these rules
    ("Cats, dogs, horses and cows and never leave them out", ["cat", "dog", "horse", "cow"]),
    ("We need cats and dogs and it would be a mistake to leave them out", ["cat", "dog"]),
    ("Pictures of cows and sheep sometimes include fences, just leave those out",
     ["cow", "sheep"]),
    ("Cats, dogs, cows and sheep and the API docs come later", ["cat", "dog", "cow", "sheep"]),
    ("I need cats and dogs and the invoice can wait.", ["cat", "dog"]),
    ("All the animals but no zebra crossings please", ANIMALS),
    ("Trousers, shirts, coats and dresses and when belts show up leave them out",
     ["trouser", "shirt", "coat", "dress"]),
])
def test_put_off_and_left_out_only_for_classes(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "Cats, dogs, horses and cows and the styling can wait.",  # the review's: then 2 classes
    "We want bears, birds, cats and the rest of the animals can wait",
    "Classify humans, dogs and cats",  # people are no filler in a list
    "Sort photos into bags, laptops and sneakers",
    "All digits, but no 1 vs 7 mistakes please",  # a class word qualifying a noun
    "Parrots and other birds should be their own class; also birds and dogs",
    # set 59: misspelt class words make a sentence no aside, so "zebr" is asked back (was
    # dropped as context: giraffe and elephant at 200)
    "pls make a clasifier for giraff, zebr and elefant, pictures r photoes from our safari",
    "All animals except birds of prey",  # a post-modifier with no comma stays unclear
    "all the shoes with heels",
    "cats, dogs and cows. actually the cows are not needed",  # was cow at 200; a clash now
    "cats, dogs and rabbits, too many to count",  # "too" grading: rabbits still asked back
    "cats and dogs and trains",  # an unknown class stays asked back
    "Pill-count labels only ever show 3, 6 or 9 tablets. We need just those numbers.",  # not
    # a device here: "tablet" is no filler (was three and six at 200 when it was)
    "Spec: classify every clothing category you offer EXCEPT bags and footwear (no sandals, "
    "sneakers or boots).",  # read set 11: a bare "no" after a group stays unclear
])
def test_still_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
