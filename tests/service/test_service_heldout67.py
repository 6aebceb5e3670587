"""Shapes that stop 51 read (issue 13): the outside review of stop 50 and held-out sets 66 and
67, with the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case failed on the stop-50
resolver (a wrong class set at 200 where marked, else a 422); the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "wait no X" approving X keeps it (wrong 200s: X dropped); "needed after all" drops it
    ("cats and dogs, wait no dogs are fine, add horses too", ["cat", "dog", "horse"], None),
    ("horses, cows, wait no horses are ok, plus sheep", ["horse", "cow", "sheep"], None),
    ("cats, dogs, wait no cats should stay", ["cat", "dog"], None),
    ("cats, dogs, wait no dogs needed after all, horses", ["cat", "horse"], None),
    # a count given as a field (wrong 200: the digit three)
    ("Sneakers, sandals, and the odd ones out: ankle boots. Number of classes: 3",
     ["sneaker", "sandal", "ankle boot"], None),
    ("Classes: sneakers, sandals. Num classes: 2", ["sneaker", "sandal"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("bears, birds, wait no bears in Kenya lol, add zebras", ["bird", "zebra"]),
    ("cats, dogs, wait, no dogs, horses", ["cat", "horse"]),
    ("sneakers, wait no sandals and bags please", ["sandal", "bag"]),  # a correction
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    # "nothing but horses" is one class (wrong 200: all three kept)
    "Cats, dogs, horses. Actually I don't want anything but horses",
    "Sneakers, sandals, and ankle boots. Number of classes: 2",  # a count that disagrees
])
def test_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


def test_nothing_but_keeps_only_what_it_names(pacs):
    assert _resolve(pacs, "Cats, dogs, horses. Actually we don't want anything but cats and "
                          "horses")[0] == ["cat", "horse"]
