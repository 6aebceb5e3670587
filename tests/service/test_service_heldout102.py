"""Stop 61 (issue 13): wrong 200s of held-out sets 90-105 (read once 106-109 were scored
unread), each a general shape, with the real bundled MiniLM over Tailor-PACS. Each ``test_read``
case, reworded, was answered 200 with a wrong class set or domain by the stop-60 rules (the lone
numbers are in test_service_lone_digits); the guards hold on both."""

from __future__ import annotations

import numpy as np
import pytest
from service_testkit import resolve_description as _resolve

from service.kinds.domains import described_words, domain_of


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "illustrations" alone are the cartoon's (its description: "picture book illustrations")
    ("Cataloguing our collection: tag the illustrations by animal, bears, cats and birds.",
     ["bear", "cat", "bird"], "cartoon"),
    ("I need sandals and sneakers recognised in the lookbook illustrations.",
     ["sandal", "sneaker"], "cartoon"),
    # a request that says the style does not matter has no domain
    ("Please classify cows and horses in our picture book art. No preference on style.",
     ["cow", "horse"], None),
    ("Bags and coats in photos, no style preference", ["bag", "coat"], None),
    # radio talk and a struck item take classes back
    ("Need horse and dog. Negative on horse, add cow instead. Over.", ["dog", "cow"], None),
    ("Inventory: coats, dresses, sandals, bags. Strike sandals, those were sold.",
     ["coat", "dress", "bag"], None),
    # "pls" is no plural a number counts; a list's last digit before its style is no count
    ("the digits 2, 7 and 9 pls", ["two", "seven", "nine"], None),
    ("1 3 5 7 9 photos", ["one", "three", "five", "seven", "nine"], "photo"),
    # a spec's "num_classes: 2" declares the count, as "Number of classes: 2" does
    ("num_classes: 2\nclasses:\n  - coat\n  - dress\ndomain: photo", ["coat", "dress"],
     "photo"),
    # "Correction," opens a correction as "Correction:" does
    ("Targets: cat, dog. Correction, cat, dog, sheep. Over.", ["cat", "dog", "sheep"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a style word of another domain beside "illustrations" leaves it to similarity
    ("dresses vs coats in fashion illustrations done in pencil", ["dress", "coat"], "sketch"),
    ("winter tagger: coats, pullovers, ankle boots. all watercolour illustrations",
     ["coat", "pullover", "ankle boot"], "art_painting"),
    # a preference that is there stays
    ("cats and dogs, my preference is for sketches", ["cat", "dog"], "sketch"),
    # a count of photos is still no digit
    ("I have 2 photos of cats and dogs", ["cat", "dog"], "photo"),
    # a lightning strike takes nothing back, "strike that" takes back what came before
    # (an outside review of stop 61, as the rest of this list)
    ("cows and horses in photos taken after the lightning strike", ["cow", "horse"], "photo"),
    ("Cats, dogs, horses. Strike that, just cats and dogs", ["cat", "dog"], None),
    ("Classify cats, dogs and horses. Strike a balance between cats and dogs",
     ["cat", "dog", "horse"], None),
    # "correction," inside a sentence corrects nothing
    ("cats, dogs and horses in photos; no colour correction, please", ["cat", "dog", "horse"],
     "photo"),
    # no preference about the classes or about a style's details keeps the style
    ("Sketches of sandals and sneakers, no preference on type of shoe", ["sandal", "sneaker"],
     "sketch"),
    ("Oil paintings of horses and cows, no restrictions on the style of brushwork",
     ["horse", "cow"], "art_painting"),
])
def test_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_a_word_two_descriptions_say_is_left_to_similarity():
    words = described_words({"cartoon": "animated drawings", "sketch": "line drawings"})

    def similar(_text):
        raise AssertionError("no word lookup should reach the encoder here")
    assert domain_of(["animated"], ["cartoon", "sketch"], similar, words) == "cartoon"
    assert domain_of(["drawings"], ["cartoon", "sketch"],
                     lambda _t: np.array([[0.2, 0.9]]), words) == "sketch"


def test_a_description_turning_a_word_down_does_not_say_it():
    words = described_words({"street": "candid photos, not studio shots", "studio": "studio"})
    assert "studio" not in words["street"] and "candid" in words["street"]
