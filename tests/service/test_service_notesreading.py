"""Stop 37 (issue 13): notes and long requests read as their writers meant them, with the real
bundled MiniLM over Tailor-PACS. Every case but the guards (marked) was a 422 or a wrong class
set at 200 on the stop-36 resolver; most come from held-out sets 43 and 45, read at this stop:
a business after the last class ("fish for the pet store app"), a class glossed by its sort
("shirts (the button-up kind)"), "images = phone camera" in notes, the request's own verbs
("pick out", "keep getting mixed up"), "N-way" and "binary" as counts, "ones with pigs" as a
pronoun, "from two up to six", "the digits, five and above", a header that names a range,
prime digits, Latin names and more dog breeds, and a listed definition that is a kind word
and examples of one class ("legwear like chinos or slacks")."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.counted import declared_count
from service.kinds.task_request import resolve_request

CLOTHES = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
           "ankle boot"]
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("shirts (the button-up kind) and tees", ["shirt", "t-shirt"], None),
    ("Jeans, slacks and chinos, plus dresses — cartoon-style icons like in a shopping game.",
     ["trouser", "dress"], "cartoon"),
    ("Hack night notes\n* vet app for rural clinics\n* classifier: calf / lamb / foal / puppy\n"
     "* images = phone camera, often blurry", ["cow", "sheep", "horse", "dog"], "photo"),
    ("The subjects are nearly always cattle, sheep, horses, and now and then a sheepdog lying "
     "by the gate. Could a small model sort the canvases?", ["cow", "sheep", "horse", "dog"],
     "art_painting"),
    ("digits from two up to six inclusive", DIGITS[2:7], None),  # was two, six at 200
    ("Handwritten 4s and 9s keep getting mixed up in our forms - need a model for just those "
     "two.", ["four", "nine"], None),
    ("Kindly develop one model to differentiate ladies' dresses, gents' shirts and trousers.",
     ["dress", "shirt", "trouser"], None),
    ("We require a ten-way classifier covering all of the apparel categories in your "
     "catalogue, to be evaluated on studio product photographs.", CLOTHES, "photo"),
    ("Binary task: Equus quagga vs Equus ferus caballus, photographic domain.",
     ["zebra", "horse"], "photo"),
    ("she wants them sorted into ones with horses and ones with cows", ["horse", "cow"], None),
    ("Every clothing category except the footwear ones.",
     [c for c in CLOTHES if c not in ("sandal", "sneaker", "ankle boot")], None),
    ("the top half of the digits, five and above", DIGITS[5:], None),
    ("I teach Year 3 in Leeds. I just need the handwritten numbers 0 through 9 - all ten of "
     "them.", DIGITS, None),
    ("cows, horses or sheep, with the occasional hunting dog in the foreground",
     ["cow", "horse", "sheep", "dog"], None),
    ("a shop selling tote bags and tees", ["bag", "t-shirt"], None),
    ("kelpies and jandals", ["dog", "sandal"], None),
    ("cows, the horse and our sheepdog", ["cow", "horse", "dog"], None),  # a 422 from stop 27
    # to 36 (test_service_wholes): "sheepdog" is now a dog's alias, as "labrador" is
    ("cows grazing and horses running", ["cow", "horse"], None),
    ("For my Year 8 maths class: the prime single-digit numbers only.",
     ["two", "three", "five", "seven"], None),
    ("prime digits except 2", ["three", "five", "seven"], None),
    ("Every item in the clothing group apart from the three kinds of footwear.",
     [c for c in CLOTHES if c not in ("sandal", "sneaker", "ankle boot")], None),
    ("The team wants the scanner to recognise shirts (the button-up kind) and tees. Also "
     "dresses.", ["shirt", "t-shirt", "dress"], None),
    ("cats and dogs for my app", ["cat", "dog"], None),  # guard
    ("3s 5s and 7s", ["three", "five", "seven"], None),  # guard: plural digits still digits
    ("binary classifier: cats vs dogs", ["cat", "dog"], None),
    ("sort my photos into bags vs t-shirts so I can upload them to the listings faster",
     ["bag", "t-shirt"], "photo"),
    ("pants and shirts, for a laundry sorting app", ["trouser", "shirt"], None),  # guard: a
    # story verb before a business leaves the business context
    ("sheep, cows, horses — farm animals but NOT dogs pls", ["sheep", "cow", "horse"], None),
    # guard: the "sheepdog" alias once pulled "farm" toward dog (a 422)
])
def test_read(pacs, text, classes, domain):
    got, got_domain = resolve_description(pacs, text)
    assert sorted(got) == sorted(classes) and got_domain == domain


@pytest.mark.parametrize("text", [
    "cats and dogs and birds and fish for the pet store app",  # was cat, dog, bird at 200
    "sorted into ones with horses, ones with cows, and ones with pigs. Doable?",  # had "one"
    "a 3-way classifier for cats and dogs",  # the count and the classes disagree
    "photos = cats, dogs",  # guard: an assignment of classes is still refused
    "cats and dogs, input = 1=1",  # guard
    "digits, more than 5 please",  # guard: "more than 5" may count classes
    "prime animals",  # guard: primes are digits
    "dog walking service flyers, cats and horses",  # guard: no participle before a noun
    # an outside review of this stop's first rules: each was a wrong set or domain at 200
    "cats and dogs, cartoon = no", "horses and zebras; sketch = false",
    "classify cats vs dogs vs building", "Canis lupus vs Felis catus",
    "all clothing except the two kinds of footwear",
])
def test_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)


@pytest.mark.parametrize(("classes", "expect"), [
    (["legwear like chinos or slacks", "a collared button-down top for the office"],
     ["trouser", "shirt"]),
    (["footwear such as trainers, kicks and plimsolls", "cats"], ["sneaker", "cat"]),
    (["an animal like a horse but striped", "a cat"], ["zebra", "cat"]),  # guard: no example
    # guards from an outside review: examples of something else, and young names, are no name
    (["a tall spotted animal whose young are called calves", "a cat"], ["giraffe", "cat"]),
    (["a shoe that covers the ankle, not like sandals or slides", "a cat"],
     ["ankle boot", "cat"]),
])
def test_definitions_naming_their_class(pacs, classes, expect):
    matches, _ = resolve_request(pacs, PersonalizeCreate(classes=classes), pacs.domains)
    assert [m.name for m in matches] == expect


def test_compound_aliases_get_no_encoder_view(pacs):
    dog, cow = pacs.names.index("dog"), pacs.names.index("cow")
    assert pacs._compound_of_other("sheepdog", dog)  # sheep + dog
    assert not pacs._compound_of_other("cattle", cow)  # only opens with "cat"
    assert not pacs._compound_of_other("labrador", dog)


def test_declared_counts():
    assert declared_count("a ten-way classifier for clothes") == (10, "a   classifier for clothes")
    assert declared_count("Binary task: cats vs dogs")[0] == 2
    assert declared_count("a two way street sign, cats")[0] is None  # no task after it
    assert declared_count("cats and dogs") == (None, "cats and dogs")
