"""Shapes that stop 52 read (issue 13) from held-out set 68's wrong 200s (a developer pasting
YAML with comments, a toddler's parent), with the real bundled MiniLM over Tailor-PACS. Each
``test_read`` case was a wrong class set at 200 on the stop-51 resolver; the guards hold on
both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a commented-out item is off (the bag was asked for)
    ("# classifier config v2\nclasses:\n  - sneaker\n  - sandal\n  - ankle boot   # the short "
     "ones\n# - bag   (disabled for now)\ndomain: sketch", ["sneaker", "sandal", "ankle boot"],
     "sketch"),
    # a child's age said with "'s almost" (the digit three was added)
    ("For my daughter (she's almost 3): bears, birds and sheep, from real photos so she learns "
     "what they actually look like.", ["bear", "bird", "sheep"], "photo"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_a_trailing_comment_does_not_hide_an_unknown_item(pacs):
    """"- penguin   # kids love these": the comment goes, the penguin is asked back (it was
    read as context with the comment and dropped at 200)."""
    with pytest.raises(Problem):
        _resolve(pacs, "classes:\n  - elephant\n  - giraffe\n  - penguin   # kids love these\n"
                       "domain: cartoon")


@pytest.mark.parametrize(("text", "classes"), [
    ("# Cats and dogs\n- cats\n- dogs", ["cat", "dog"]),  # a heading, not a comment
    ("my son is nearly 7 and draws cats and dogs", ["cat", "dog"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_comment_that_negates_stays(pacs):
    """"windbreaker_jacket  # NOT a coat" keeps its comment (set 64: a coat at 200 without)."""
    with pytest.raises(Problem):
        _resolve(pacs, "targets:\n  - windbreaker_jacket  # NOT a coat, the light zip-up kind\n"
                       "  - hoodie\n  - t-shirt\ndomain: photo")
