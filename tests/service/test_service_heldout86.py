"""Stop 56 (issue 13): three wrong 200s of held-out sets 78-83 that stop 55 left, each a general
shape, with the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case was answered 200
with a wrong class set or domain by the stop-55 resolver; the guards hold on both."""

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
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a header's "not" with no style of its own still turns down the list after it
    ("Not needed for launch - birds, bears. Cats and dogs in photos", ["cat", "dog"], "photo"),
    ("No paintings — horses and dogs", ["horse", "dog"], None),
    # a number before a real plural still counts it
    ("cats and dogs, five kids use it", ["cat", "dog"], None),
])
def test_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    # the exception asked for again is a contradiction, not a pronoun's antecedent
    "Build a model for all animals except the cow, and make sure cows are detected too",
])
def test_still_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)
