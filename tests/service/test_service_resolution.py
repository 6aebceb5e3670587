"""Phrase → class resolution with the real bundled MiniLM text encoder."""

from __future__ import annotations

import pytest

from service.kinds.resolution import ClassResolver

NAMES = ["zero", "seven", "T-shirt/top", "Trouser", "Bag", "Ankle boot", "cat", "dog", "horse"]
CATALOGUE = {
    "classes": [{"name": n, "group": "g", "definition": None} for n in NAMES],
    "domains": ["photo", "art_painting", "cartoon", "sketch"],
}


@pytest.fixture(scope="module")
def resolver():
    from service.kinds.taper import load_text_encoder

    return ClassResolver(CATALOGUE, load_text_encoder(None, "cpu"), threshold=0.55)


def test_exact_and_plural_matches(resolver):
    got = resolver.match_many(["Cats", "DOGS", "t-shirt / top", "ankle boots", "horses"])
    assert [m.name for m in got] == ["cat", "dog", "T-shirt/top", "Ankle boot", "horse"]
    assert all(m.score == 1.0 for m in got)


def test_similar_phrases_resolve_with_scores(resolver):
    kitten, pony, handbag = resolver.match_many(["kitten", "pony", "handbag"])
    assert (kitten.name, pony.name, handbag.name) == ("cat", "horse", "Bag")
    assert 0.55 <= kitten.score < 1.0 and kitten.suggestions  # "did you mean" alternatives


def test_unknown_phrase_gets_suggestions(resolver):
    (m,) = resolver.match_many(["quantum physics"])
    assert m.name is None and m.score < 0.55 and len(m.suggestions) == 3


def test_description_parsing(resolver):
    phrases, domain = resolver.parse_description("Classify sketches of cats, dogs and horses.")
    assert domain == "sketch"
    assert [m.name for m in resolver.match_many(phrases)] == ["cat", "dog", "horse"]
    phrases, domain = resolver.parse_description("tell apart bags vs trousers")
    assert domain is None and [m.name for m in resolver.match_many(phrases)] == ["Bag", "Trouser"]
