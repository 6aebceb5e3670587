"""Stop 44 (issue 13): a mention that failed only because context stayed glued to its one
class word (service.kinds.heads), read with the real bundled MiniLM over Tailor-PACS. Every
case but the guards (marked) was a 422 on the stop-43 resolver; each guard is a request whose
retraction, exclusion or comparison that 422 was hiding, so it must stay a 422; and no class
word standing outside the request's one list may be added (an outside review's probes)."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.heads import _lists, head_class
from service.kinds.task_request import resolve_request


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("Hi, my sister runs the church thrift store and the volunteers keep mixing up shirts and "
     "t-shirts when they sort donations. Could you build something that tells the two apart?",
     ["shirt", "t-shirt"], None),  # also: "the two" is the two classes, not the digit
    ("Our current model confuses coats, pullovers and shirts all the time. Could you give us "
     "a dedicated 3-class classifier for just those?", ["coat", "pullover", "shirt"], None),
    ("Smart wardrobe project: a camera inside the closet recognises the shirts, t-shirts, "
     "trousers and coats hanging up.", ["shirt", "t-shirt", "trouser", "coat"], "photo"),
    ("sneakers vs sandals vs ankle boots for a shoe resale site",
     ["sneaker", "sandal", "ankle boot"], None),
])
def test_a_plural_class_word_among_context_words_is_read(pacs, text, classes, domain):
    got, got_domain = resolve_description(pacs, text)
    assert sorted(got) == sorted(classes) and got_domain == domain


def test_what_was_read_is_said_in_the_notes(pacs):
    notes: list[str] = []
    resolve_request(pacs, PersonalizeCreate(description="Our current model confuses coats, "
                                            "pullovers and shirts all the time."),
                    pacs.domains, notes=notes)
    assert any("as shirt" in n for n in notes)


@pytest.mark.parametrize("text", [
    # guards: the 422 was hiding a retraction, an exclusion or a comparison
    "hey team, for the kiosk pilot in the Lisbon store we need the classifier to tell apart "
    "sneakers, sandals and ankle boots. nothing else, seriously, don't add bags just in case.",
    "Priya: for the pet-insurance onboarding demo we need a classifier for cats, dogs and "
    "horses. Marco: legal says horses are out of scope for the pilot. Priya: ok, cats and dogs.",
    "EDIT 2: originally I asked for horse, cow and sheep, but the client dropped sheep last "
    "night. So the request is now: horses and cows, in oil paintings.",
    "Now I want it to tell birds from cats (the neighbour's tabby keeps stalking) and from "
    "squirrels. All frames are camera photos.",
])
def test_a_request_that_takes_back_or_compares_keeps_its_422(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)


@pytest.mark.parametrize(("text", "extra"), [
    # an outside review of this module's first version (each was a 200 with the extra class)
    ("Classify cats and dogs, avoid flagging horses", "horse"),
    ("Classify coats and dresses, the kind the fashion house's top dogs approve", "dog"),
    ("Tell apart trousers and shirts, our current model is a dog's breakfast", "dog"),
    ("Classify sandals and sneakers, each box bears a barcode", "bear"),
    ("Recognise cows and sheep, and the robotic dogs the farm is testing", "dog"),
    ("v1 shipped with birds and horses, v3 needs birds and dogs", "horse"),
    ("Sort coats and dresses, like last season when the model confused coats with bags", "bag"),
])
def test_a_class_word_outside_the_requests_list_is_not_added(pacs, text, extra):
    try:
        names, _ = resolve_description(pacs, text)
    except Problem:
        return  # asking back is right too
    assert extra not in names


def test_only_one_class_named_in_the_plural_is_read(pacs):
    shirt = pacs.names.index("shirt")
    assert head_class(pacs, "volunteers mixing shirts") == shirt
    assert head_class(pacs, "main cast dog") is None  # singular: maybe a modifier or a story
    assert head_class(pacs, "dogs cats park") is None  # two classes: which one?
    assert head_class(pacs, "farm collies setting") == pacs.names.index("dog")  # an alias
    for other in ("frozen food aisle hot dogs", "kids love teddy bears", "rain boots shop"):
        assert head_class(pacs, other) is None  # the word before makes it another thing


@pytest.mark.parametrize(("text", "classes"), [
    # the same review's probes of the rest of the resolver: each had horse at 200 (stop 43)
    ("Classify cats and dogs, ignoring horses entirely", ["cat", "dog"]),
    ("Classify cats and dogs, skipping horses for now", ["cat", "dog"]),
    ("Sort cows and sheep, omitting horses in this release", ["cow", "sheep"]),
    ("Classify cats and dogs, barring horses", ["cat", "dog"]),
])
def test_a_participle_that_excludes_negates_its_chunk(pacs, text, classes):
    assert sorted(resolve_description(pacs, text)[0]) == classes


def test_a_possessive_is_no_list_item_whatever_its_apostrophe(pacs):
    cat, dog = pacs.names.index("cat"), pacs.names.index("dog")
    for text in ("cats and the dog's bowls", "cats and the dog\u2019s bowls"):
        assert _lists(pacs, text) == [{cat}]
    assert _lists(pacs, "cats, dogs and the birds' feeder") == [{cat, dog}]
