"""Shapes that held-out sets 64 and 65 (stop 50, issue 13; first scores natural 37/60 with 3
wrong 200s and 36/60 with 2) answered wrong or refused, with the real bundled MiniLM over
Tailor-PACS: exceptions after a listed class ("birds excluding horses", "excl. 0"), a group
skipped beside a class ("Skip footwear and bags"), "those two" as a count, a pasted diff of a
list, a negating field over bullets, "wait no bears in Kenya", second thoughts that turn a
class down ("Actually we don't need the bear"), "u have". Each ``test_read`` case failed on the
stop-49 resolver (a wrong class set at 200 where marked, else a 422); the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # exceptions (wrong 200s: a listed class lost, zero kept, a bag kept)
    ("cats, dogs, birds excluding horses", ["cat", "dog", "bird"], None),
    ("# even digits excl 0. src: photos of house numbers", ["two", "four", "six", "eight"],
     "photo"),
    ("# multiples of 3 (excl. 0)", ["three", "six", "nine"], None),
    ("Classify seller uploads: trousers, t-shirts, shirts, pullovers, dresses, coats. Skip "
     "footwear and bags.", ["trouser", "t-shirt", "shirt", "pullover", "dress", "coat"], None),
    ("need tag for every animal u have except bears cats n dogs. safari only vibe",
     ["bird", "cow", "elephant", "giraffe", "horse", "sheep", "zebra"], None),
    # "those two" counts the classes just named (wrong 200: the digit two)
    ("Good afternoon. One persistent nuisance in my hobby (restoring mechanical calculators) is "
     "telling a handwritten 1 from a 7 (the continental crossbar helps, but not always). Could "
     "your service build a classifier for those two and, while you are at it, the 4 and the 9, "
     "which suffer from much the same problem?", ["one", "seven", "four", "nine"], None),
    # a pasted diff (wrong 200: the removed classes kept), a negating field over bullets (an
    # outside review of stop 49: all kept at 200)
    ("Here's the diff for the label set:\n- - elephant\n- - giraffe\n+ - cow\n+ - sheep\n"
     "  - horse\nImages are comic-strip panels.", ["cow", "sheep", "horse"], "cartoon"),
    ("Needed: coats, dresses\nNot needed:\n- sandals\n- Sneakers: handled by old model\n"
     "- ankle boots", ["coat", "dress"], None),
    ("Do not include:\n- zebras\n- Giraffes: too few images\n- elephants\nInclude: bears, "
     "birds", ["bear", "bird"], None),
    # second thoughts
    ("hey so kids safari app has cartoon animals - zebra, giraffe, elephant, bear. wait no "
     "bears in Kenya lol remove bear", ["zebra", "giraffe", "elephant"], "cartoon"),
    ("Hallo! The children love the Zoo book with the comic animals. Please: elephant, giraffe, "
     "zebra, bear. Ah no, the bear we don't need, it makes them scared.",
     ["elephant", "giraffe", "zebra"], "cartoon"),
    ("Please: elephant, giraffe, zebra, bear. Actually we don't need the bear.",
     ["elephant", "giraffe", "zebra"], None),
    # a second parity group (wrong 200: the even digits lost), "the odd" as now and then
    ("the odd digits and the even ones", ["one", "three", "five", "seven", "nine", "zero", "two",
                                          "four", "six", "eight"], None),
    ("Heres my setup: hide by the pond, camera on tripod. Visitors: birds (obviously), the odd "
     "dog off lead, and once a horse got loose from the next field. Sort into those three pls.",
     ["bird", "dog", "horse"], "photo"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("sneakers, wait no sandals and bags please", ["sandal", "bag"]),  # a correction, as before
    ("those two and three, and four", ["two", "three", "four"]),  # digits in a list
    ("cats and dogs. Actually I don't want it to be slow.", ["cat", "dog"]),
    ("all the digits except 0", ["one", "two", "three", "four", "five", "six", "seven", "eight",
                                 "nine"]),
    ("Needed: coats\nNot needed: sandals\n- dresses\n- bags", ["coat", "dress", "bag"]),
    ("digits 1-9, even ones only", ["two", "four", "six", "eight"]),  # narrows the range
    # an outside review of this stop's first rules: each was wrong at 200 there
    ("Sneakers, sandals and ankle boots except the ankle boots", ["sneaker", "sandal"]),
    ("bird, bear, cat, cow excluding the cow and dog", ["bird", "bear", "cat"]),
    ("Classes: coats, shirts\nDon't forget:\n- sandals\n- bags",
     ["coat", "shirt", "sandal", "bag"]),  # a field that asks, over bullets
    ("Digits 0-9. Actually we don't need perfect accuracy on 7",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    ("Sort cats and dogs by number, and the odd ones go to review", ["cat", "dog"]),
    ("Classify the odd handwritten digits only", ["one", "three", "five", "seven", "nine"]),
    ("handwritten digits: both two and the 5, they get confused a lot", ["two", "five"]),
    # self-review: a negated dropping verb spells the group out plainly; a blank line inside a
    # negating field's list; a second thought that names no class takes nothing back
    ("bags and coats, please don't drop footwear",
     ["bag", "coat", "sandal", "sneaker", "ankle boot"]),
    ("Needed: coats, dresses\nNot needed:\n\n- sandals\n- bags", ["coat", "dress"]),
    ("cats, dogs and horses. Actually we don't want that.", ["cat", "dog", "horse"]),
    ("the odd digits please", ["one", "three", "five", "seven", "nine"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "Clothing classifier, exclude footwear",  # the review's: two of three kept at 200
    "Animals: drop mammals, keep birds",
    "Dresses except wedding dresses, coats, and bags",  # coats lost at 200
])
def test_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


@pytest.mark.parametrize("descriptions", [
    ["a number bigger than five", "a big grey animal with a trunk"],  # five at 200 (set 65)
    ["a digit smaller than three", "a striped horse"],
])
def test_refused_definitions(pacs, descriptions):
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    with pytest.raises(Problem) as err:
        resolve_request(pacs, PersonalizeCreate(classes=descriptions), pacs.domains)
    assert err.value.status == 422


def test_a_superlative_bound_still_names_its_digit(pacs):
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    matches, _ = resolve_request(pacs, PersonalizeCreate(
        classes=["the smallest prime greater than five", "a big grey animal with a trunk"]),
        pacs.domains)
    assert [m.name for m in matches] == ["seven", "elephant"]
