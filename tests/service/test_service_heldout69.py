"""Shapes that stop 53 read (issue 13) from held-out set 69 (a vet's receptionist, a Discord
robotics club, a wedding planner, a dispatcher, a Spanish speaker, user stories), with the real
bundled MiniLM over Tailor-PACS. Each ``test_read`` case failed on the stop-52 resolver (a 422
or a wrong class set at 200); the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_classes as _listed
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "everything" after a class word excludes nothing (the dogs were lost at 200)
    ("Please recognize cows, sheep, horses, and also dogs since the farm dogs show up in "
     "everything. No cats needed.", ["cow", "sheep", "horse", "dog"], None),
    # a reported correction ("she said forget the cats": the cat was kept at 200)
    ("Dr. Patel asked for birds and cats... actually she said forget the cats, just birds and "
     "dogs.", ["bird", "dog"], None),
    ("birds, cats and dogs. my boss told us to drop the cats.", ["bird", "dog"], None),
    # a name reporting the request
    ("hey so Maya says we need all the animals for the zoo bot thing, every single one the "
     "model knows", ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse",
                     "sheep", "zebra"], None),
    # the people around the app are no classes
    ("Horses for the carriage, sheep and cows in the pasture. I want to auto-tag the photos "
     "the guests upload.", ["horse", "sheep", "cow"], "photo"),
    ("My son like very much the comics. He want a app for know which comic have a bear and "
     "which have a bird.", ["bear", "bird"], "cartoon"),
    # what the people around the app do with the images
    ("read hand-written dock door #s 4 5 6, drivers scribble them in pencil",
     ["four", "five", "six"], "sketch"),
    ("My daughter doodles cats, dogs and birds all over her school notebook.",
     ["cat", "dog", "bird"], "sketch"),
    # a range said of numbers named before it, and "read them" as the task
    ("table numbers for the reception are hand-lettered 1 to 9, need to read them",
     ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"], None),
    # "odd only" after odd digits confirms them
    ("zone codes are single digits 1,3,5,7,9 — odd only. need reader.",
     ["one", "three", "five", "seven", "nine"], None),
    # a list word's "=" and classes handled elsewhere (bag was kept at 200 without the "=")
    ("Cross-dock 12: outbound apparel = coats, pullovers, t-shirts, trousers, shirts, dresses. "
     "Footwear & bags handled elsewhere. Pls confirm.",
     ["coat", "pullover", "t-shirt", "trouser", "shirt", "dress"], None),
    ("coats, pullovers, bags handled elsewhere", ["coat", "pullover"], None),
    ("Patel asked for birds and cats, also dogs", ["bird", "cat", "dog"], None),
    # found by the outside review of stop 53, wrong 200s on both: a retraction's reason, "not
    # needed" after a comma or "but"
    ("Digits 0-9. My colleague told me to skip 7 because it is rare in our data.",
     ["zero", "one", "two", "three", "four", "five", "six", "eight", "nine"], None),
    ("Sheep, cows and horses. Zebras mentioned in passing but not needed.",
     ["sheep", "cow", "horse"], None),
    ("Sheep, cows and horses. Zebras, not needed.", ["sheep", "cow", "horse"], None),
    ("table numbers are 1 to 9", ["one", "two", "three", "four", "five", "six", "seven", "eight",
                                  "nine"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_definitions_read(pacs):
    """A closing style ("…, drawn in pencil") is the domain, the definition kept whole when
    that separates its class better (an outside review: "the tallest animal" alone was a 422);
    "four, doubled" computes."""
    assert _listed(pacs, ["a barking pet, drawn in pencil",
                          "a mooing farm animal, drawn in pencil"]) == (["dog", "cow"], "sketch")
    assert _listed(pacs, ["the animal with black and white stripes, painted in oils",
                          "the tallest animal, painted in oils"]) == (["zebra", "giraffe"],
                                                                      "art_painting")
    assert _listed(pacs, ["four, doubled", "two plus two", "ten minus seven"])[0] \
        == ["eight", "four", "three"]


@pytest.mark.parametrize(("text", "classes"), [
    ("cats, dogs, anything but horses", ["cat", "dog"]),  # "anything" before a class excludes
    ("horses, and cows since the cows get out a lot", ["horse", "cow"]),
    # an outside review of stop 53: reports of nothing taken back, "even"/"odd" as plain words,
    # counts that are no digits
    ("We need cats, dogs and birds. Nobody said to drop the birds, so keep all three.",
     ["cat", "dog", "bird"]),
    ("Who said to forget the coats? We need coats, dresses and bags.", ["coat", "dress", "bag"]),
    ("Read digits 0 to 9 from meter photos. The lighting there is often not even.",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    ("Digits 0 to 9. Some of the handwriting is just odd.",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    ("Cats and dogs; sample numbers collected are 3 to 5.", ["cat", "dog"]),
    ("Cats and dogs for sure. Horses mentioned too, so add them.", ["cat", "dog", "horse"]),
    ("my son wants cats and dogs", ["cat", "dog"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "cats, dogs, hamsters, you get the idea",  # an unknown named in the examples: asked back
    "Hats, scarves, gloves, you get the idea. Plus coats and pullovers.",
    # people in a list are asked for (an outside review of stop 53: dropped at 200)
    "Spot cats, dogs and guests in our party photos.",
    "Sort pictures of my son, our cat and our dog.",
    "Classify bags, sneakers and golf drivers for the pro shop.",
    "Was: animals = cats, dogs. Now: animals = horses, cows.",
    "A store of shoes and bags; classify sneakers vs sandals.",
    "my son likes hamsters and cats",  # what the person likes is asked for
    "current = cats, dogs",  # an assignment to no list word: still refused as code
    "ages 3 to 5, cats and dogs",  # a range said of ages is no digits
    # a digit filter left unread is asked back, never dropped as context (all nine at 200)
    "numbers from 0 until 8, the ones you can divide by three",
])
def test_still_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
