"""Stop 62 (issue 13): wrong 200s and refusals of held-out sets 106-109 (read once 110-113
were scored unread) that share a shape with rows of earlier sets, with the real bundled MiniLM
over Tailor-PACS. Each ``test_read`` case, reworded, was answered wrongly (a wrong class set at
200, or a 422) by the stop-61 rules; the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

EVERY = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
         "ankle boot", "bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse",
         "sheep", "zebra"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a group word, then "all of them", is the whole group
    ("- digits, all of them\n- plus cats and dogs (for a promo)\n- sketches",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "cat",
      "dog"], "sketch"),
    ("the animals, all of them that you have. style: pencil drawing",
     ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"],
     "sketch"),
    # "don't bother with X" leaves X out
    ("The feeder cam sees our cat all day, so don't bother with cats, only birds and dogs.",
     ["bird", "dog"], "photo"),
    ("sheep, cows and horses. Do not bother with cows, we know those.", ["sheep", "horse"],
     None),
    # "bc" is "because": what follows is a reason, not a class list
    ("the digits 0-9 but no 3 bc that key is broken", ["zero", "one", "two", "four", "five",
                                                       "six", "seven", "eight", "nine"], None),
    ("need 4 and 9 bc the kids mix them up", ["four", "nine"], None),
    # a command line's flags: an exclusion, a style
    ("dress, coat, bag --exclude coat", ["dress", "bag"], None),
    ("digits 1-4 --style cartoon", ["one", "two", "three", "four"], "cartoon"),
    # a spaced "--" is a dash: it ends what "skip" takes back
    ("skip the horses -- just cows and sheep.", ["cow", "sheep"], None),
    # "all 30" where the catalogue holds 30 classes is every class; "got." ends a sentence
    ("all 30 classes pls", EVERY, None),
    ("Whatever you got. all thirty of them, as cartoons", EVERY, "cartoon"),
    ("cats and dogs, all 30 of them in photos", ["cat", "dog"], "photo"),  # was a 422
    # a sub-group with an exception that names its own classes; a collective "all of it"
    ("footwear but NOT the boots", ["sandal", "sneaker"], None),
    ("I need all the footwear except ankle boots recognised", ["sandal", "sneaker"], None),
    ("apparel only, all of it, for the shop's stock list", EVERY[10:20], None),
    # an exception described, then listed
    ("every animal except the wild ones, so no bears, elephants, giraffes or zebras",
     ["bird", "cat", "cow", "dog", "horse", "sheep"], None),
    ("all the animals except the pets, so no cats and no dogs",
     ["bear", "bird", "cow", "elephant", "giraffe", "horse", "sheep", "zebra"], None),
    # a relative is no class the catalogue lacks
    ("all the animals please, my grandchild wants an animal book", EVERY[20:], None),
    # two styles of different domains as alternatives: no one domain
    ("coats vs dresses; the input is either a photo or a sketch", ["coat", "dress"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "all of them" after classes, or after a count, changes nothing
    ("dogs, cats and birds, all of them in sketches", ["dog", "cat", "bird"], "sketch"),
    ("the numbers zero to nine, all of them", ["zero", "one", "two", "three", "four", "five",
                                               "six", "seven", "eight", "nine"], None),
    ("cats and dogs, all of them black", ["cat", "dog"], None),
    # "don't worry about" something that is no class leaves the classes as they are
    ("Don't worry about the lighting, just tell cats from dogs", ["cat", "dog"], None),
    ("sneakers and sandals. Our t-shirt merch never comes back, so don't bother with that one.",
     ["sneaker", "sandal"], None),  # a pronoun: left to the rules that read it (set 32)
    # "all 30" of something else, or a count that is not the catalogue's, is no catalogue
    ("all 30 photos show cats or dogs; classify cats and dogs", ["dog", "cat"], "photo"),
    # a count that is not the catalogue's size is no catalogue: "all twenty of them" are photos
    ("cats and dogs, all twenty of them in photos", ["cat", "dog"], "photo"),
    # an outside review of stop 62: a style negated or answered, a worry that goes on, a list
    # after "all of them", and "--" as a list separator keep their old reading
    ("cats and dogs in paintings, not photos or sketches", ["cat", "dog"], "art_painting"),
    ("cats, dogs and bears. Don't worry about bears much, they're rare", ["cat", "dog", "bear"],
     None),
    ("Don't bother with the digits being rotated; classify 6 and 9", ["six", "nine"], None),
    ("My dataset has pictures of clothes, all of them shirts and coats.", ["shirt", "coat"],
     None),
    ("cats -- dogs -- horses", ["cat", "dog", "horse"], None),
    # alternatives within one domain keep it
    ("cats and dogs, cartoons or comics", ["cat", "dog"], "cartoon"),
])
def test_guard(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    # "footwear but not boots" said of a shop is context: it spells out no sandals
    "Bags only. Our shop sells footwear but not boots.",
    # a described exception with no list, or a list reaching outside the group, stays unclear
    "all animals except the farm ones, so we can sell them",
    "all animals except the farm ones (cows, sheep and sneakers)",
    # a list after "so" may be what is kept; a bare "but" ranks (the outside review)
    "all animals except the wild ones, so cats, dogs, cows, horses and sheep",
    "I want footwear, but sneakers especially",
])
def test_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
