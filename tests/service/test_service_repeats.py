"""Mentions that repeat a class in a sentence about something else, since stop 33 (issue 13),
with the real bundled MiniLM over Tailor-PACS. Each case but the guards was a 422 on the
stop-32 resolver; the guards are 422s that must stay."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.repeats import in_context


@pytest.mark.parametrize(("text", "classes"), [
    ("need 3s and 8s, oh and 5s; those get mixed up with 3s on the forms",
     ["three", "eight", "five"]),  # "mixed 3s" beside "3s" was a clash
    ("We only need 0 and 8 for the first pass; 8 gets read as 0 by the scanner",
     ["zero", "eight"]),
])
def test_a_class_repeated_in_a_clause_is_asked_for_once(pacs, text, classes):
    ignored: list[str] = []
    assert _resolve(pacs, text, ignored)[0] == classes
    assert ignored  # the repeating clause is reported back as context


@pytest.mark.parametrize("text", [
    "cats, shirts and polo shirts",  # a qualified class word beside the class: distinguishes
    "check whether the frame shows a horse, a zebra or a unicorn horse",
    "kittens and cats and dogs",
    "I want bears and birds; the bears keep raiding the bird feeder",  # two classes at once
    "cats, dogs and cat-dog hybrids",  # (an outside review: dropped, a wrong 200)
    "zebras and giraffes, the zebras and the okapis keep fighting",  # okapi: not a repeat
])
def test_refused_a_clash_or_an_unknown_class(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def test_in_context_drops_only_repeats_of_a_bare_class_word(pacs):
    runs = {"3s", "polo shirts", "shirts", "horses"}  # words side by side in the text
    assert in_context(pacs, ["pass 3s", "3s", "mixed 3s"], runs) == ["pass 3s", "mixed 3s"]
    assert in_context(pacs, ["shirts", "polo shirts"], runs) == []  # two runs: a clash
    assert in_context(pacs, ["mixed 3s", "pass 3s"], runs) == []  # no bare "3s" to keep
    assert in_context(pacs, ["check horse", "unicorn horse"], {"unicorn horse"}) == []
    assert in_context(pacs, ["horses", "cows", "camera flagging horses cows"], runs) == []
