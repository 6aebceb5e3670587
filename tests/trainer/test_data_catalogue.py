"""Catalogue: 30 classes in 3 groups, prompt sets, name-free definitions, frozen neighbours."""

from __future__ import annotations

import re

import numpy as np
import pytest

from trainer.data import catalogue as cat
from trainer.data import sources


def test_thirty_classes_in_three_groups_of_ten():
    assert len(cat.CLASSES) == 30 and len(set(cat.CLASS_NAMES)) == 30
    for group in cat.GROUPS:
        assert sum(c["group"] == group for c in cat.CLASSES) == 10
    assert cat.DOMAINS == ("photo", "art_painting", "cartoon", "sketch")


@pytest.mark.parametrize("entry", cat.CLASSES, ids=lambda c: c["name"])
def test_definition_never_names_its_class(entry):
    words = [w for w in re.split(r"[ -]", entry["name"]) if len(w) >= 3]
    assert entry["definition"]
    for word in words:
        assert word not in entry["definition"].lower(), (entry["name"], entry["definition"])


def test_prompts_same_count_for_every_domain_and_mention_the_class():
    for name in cat.CLASS_NAMES:
        sets = [cat.class_prompts(name)] + [cat.class_prompts(name, d) for d in cat.DOMAINS]
        assert len({len(s) for s in sets}) == 1
        assert all(name in p for s in sets for p in s)
    assert cat.class_prompts("elephant", "sketch")[0] == "a sketch of an elephant."
    assert "the digit five" in cat.class_prompts("five")[0]
    with pytest.raises(ValueError, match="unknown domain"):
        cat.class_prompts("cat", "watercolour")


def test_neighbours_are_the_rest_of_the_group():
    for entry in cat.CLASSES:
        group = {c["name"] for c in cat.CLASSES if c["group"] == entry["group"]}
        assert sorted(entry["neighbours"]) == sorted(group - {entry["name"]})


def test_catalogue_for_restricts_neighbours_and_allows_unknown_names():
    sub = cat.catalogue_for(["zero", "one", "two", "guitar"])
    assert sub[0]["neighbours"] == ["two", "one"]  # frozen order restricted to present names
    assert sub[3]["group"] is None and sub[3]["prompts"][0] == "a photo of a guitar."
    doc = cat.catalogue_json()
    assert [c["name"] for c in doc["classes"]] == list(cat.CLASS_NAMES)


@pytest.mark.parametrize("group,source", [("digit", "mnist"), ("animal", "animal"),
                                          ("clothing", "fashion")])
def test_frozen_neighbours_match_prototypes(group, source):
    if not sources.source_available(source):
        pytest.skip(f"{source} not installed")
    images, labels = sources.load_source(source)
    names = [c["name"] for c in cat.CLASSES if c["group"] == group]
    derived = cat.prototype_neighbours(images, labels, names)
    frozen = {c["name"]: c["neighbours"] for c in cat.CLASSES if c["group"] == group}
    assert derived == frozen
    assert np.all(labels < 10)
