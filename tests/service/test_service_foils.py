"""Foils: everyday things a catalogue lacks, which keep a description of one from matching
the nearest class (stop 33, issue 13), with the real bundled MiniLM."""

from __future__ import annotations

import pytest

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.foils import FOILS
from service.kinds.resolution import ClassResolver
from service.kinds.task_request import resolve_request


def _classes(resolver, classes):
    matches, _ = resolve_request(resolver, PersonalizeCreate(classes=classes), resolver.domains)
    return [m.name for m in matches]


@pytest.mark.parametrize(("thing", "foil"), [  # each a wrong 200 on the stop-32 resolver
    ("a brimmed thing you wear on your head to keep the sun off", "hat"),  # was a pullover
    ("a farm animal with horns and a beard, kept for its milk and cheese", "goat"),  # a cow
    ("a shoe with a very high thin heel", "high heel"),  # an ankle boot
])
def test_a_description_of_something_the_catalogue_lacks_is_refused_and_named(pacs, thing,
                                                                            foil):
    with pytest.raises(Problem) as caught:
        _classes(pacs, [thing, "a rubber-soled lace-up shoe for running"])
    unknown = caught.value.extra["unknown"]
    assert [u["phrase"] for u in unknown] == [thing]
    assert unknown[0]["looks_like"] == foil and foil in caught.value.detail


def test_descriptions_of_catalogue_classes_still_match(pacs):
    assert _classes(pacs, ["the animal that gives wool and says baa",
                           "a rubber-soled lace-up shoe for running",
                           "the numeral after eight"]) == ["sheep", "sneaker", "nine"]


def test_a_catalogue_that_has_a_foil_drops_it(pacs):
    """A user's catalogue with hats: "hat" is a class there, never a foil."""
    catalogue = {"classes": [{"name": "hat", "definition": "a covering worn on the head"},
                             {"name": "sock", "definition": "a knitted covering for the foot"},
                             {"name": "glove", "definition": "a covering for the hand"}],
                 "domains": []}  # fmt: skip
    hats = ClassResolver(catalogue, pacs.encoder, pacs.threshold, pacs.margin, pacs.described)
    assert {"hat", "sock", "glove"}.isdisjoint(hats._foils.names)
    assert len(hats._foils.names) < len(FOILS) == len(pacs._foils.names)  # PACS has none
    assert _classes(hats, ["a brimmed thing you wear on your head to keep the sun off",
                           "a knitted covering worn on your foot"]) == ["hat", "sock"]


def test_names_never_meet_the_foils(pacs):
    """A name is matched exactly or by the threshold: "ponies" is a horse, however near a foil
    the encoder puts it."""
    assert _classes(pacs, ["ponies", "calves"]) == ["horse", "cow"]


def test_a_foil_named_like_a_class_goes_with_it(pacs):
    """A catalogue's "automobile" and "bunny" (0.87 and 0.86 from the foils "car" and
    "rabbit" by MiniLM) take those foils out; other foils stay."""
    catalogue = {"classes": [{"name": "automobile", "definition": "a road vehicle"},
                             {"name": "bunny", "definition": "a small long-eared animal"}],
                 "domains": []}  # fmt: skip
    cars = ClassResolver(catalogue, pacs.encoder, pacs.threshold, pacs.margin, pacs.described)
    assert {"car", "rabbit"}.isdisjoint(cars._foils.names)
    assert "truck" in cars._foils.names
