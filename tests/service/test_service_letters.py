"""Requests written as letters, speech and tickets; names side by side; counts in definitions
(issue 13, stop 28), with the real bundled MiniLM over Tailor-PACS. Each case was a 422 on the
stop-27 resolver (or, "Thanks, and rabbits", a wrong 200), except the guards and four pinned
against this stop's own regressions: a project-word clause, "said never" in a definition,
"long-sleeved t-shirts", "oil-painted zebras"."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.task_request import resolve_request


@pytest.mark.parametrize(("text", "classes", "cut"), [
    ("Dear Sam, our bank needs to read the digits 2, 3, 5 and 6 on cheques. Best regards, "
     "Maria Lopez", ["two", "three", "five", "six"], ["Dear Sam", "Best regards, Maria Lopez"]),
    ("Hi Priya, could you make a model for cats and dogs? Cheers, Tom", ["cat", "dog"],
     ["Hi Priya", "Cheers, Tom"]),
    ("Good morning. I must classify paintings of sheep and cows. Kind regards", ["sheep", "cow"],
     ["Good morning", "Kind regards"]),
])
def test_a_letters_greeting_and_signature_are_not_classes(pacs, text, classes, cut):
    ignored: list[str] = []
    assert _resolve(pacs, text, ignored)[0] == classes
    assert set(cut) <= set(ignored)  # reported back in the response's notes


@pytest.mark.parametrize("text", [
    "Cats and dogs please. Thanks, and rabbits",  # a plural after the closing: asked for
    "Hi rabbits lovers, we need cats and dogs",  # a plural in the greeting
    "cats and dogs. Thanks, please add hamsters",  # the signature asks
])
def test_a_closing_or_greeting_that_asks_for_a_class_is_kept(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    ("um digits two four six and eight", ["two", "four", "six", "eight"]),
    ("hmm, cats and dogs I guess", ["cat", "dog"]),
    ("quick q — can the classifier do trousers vs dresses vs coats? client wants it by friday",
     ["trouser", "dress", "coat"]),
    ("mnist digits 6 7 8 9", ["six", "seven", "eight", "nine"]),
])
def test_hesitations_and_project_words_are_not_classes(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_project_words_still_make_a_clause_context(pacs):
    # "customer" and "team" are filler now, yet their chunks stay clauses about the app
    text = ("Hi! I'm a PM at a fashion retailer. We get thousands of customer uploads per day "
            "and need to route them to the right team. Classes: dress, coat, bag.")
    assert _resolve(pacs, text)[0] == ["dress", "coat", "bag"]


@pytest.mark.parametrize(("text", "classes"), [
    ("zebra giraffe elephant", ["zebra", "giraffe", "elephant"]),
    ("bears birds and cows", ["bear", "bird", "cow"]),
    ("hey assistant make a classifier for puppies kittens and ponies", ["dog", "cat", "horse"]),
])
def test_class_names_side_by_side_are_a_list(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "dog bag and cats",  # a singular first name may modify the next: a bag for dogs
    "cat dog",
    "cats then dogs and horses",  # not side by side in the text
])
def test_names_that_may_be_one_phrase_stay_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def _definitions(pacs, texts: list[str]) -> list[str]:
    matches, _ = resolve_request(pacs, PersonalizeCreate(classes=texts), ["photo"])
    return [m.name for m in matches]


def test_a_verb_before_in_a_is_no_count(pacs):
    # "sleeps in a cave", "tweets in the trees": the count threshold (0.80) refused them
    assert _definitions(pacs, [
        "Big furry animal that sleeps in a cave all winter and loves honey.",
        "A feathered animal that tweets in the trees early in the morning.",
        "the animal a jockey rides in a race",  # ("It tweets …" alone: 0.63, below stop 30's 0.65)
    ]) == ["bear", "bird", "horse"]


def test_a_known_count_is_read_and_an_unknown_one_still_needs_a_near_paraphrase(pacs):
    """Stop 28 asked 'legs on a cow' back (the encoder would answer cow by association);
    stop 29 reads it from the table of counts (:mod:`service.kinds.counts`)."""
    assert _definitions(pacs, ["the number of legs on a cow", "the animal a jockey rides in a "
                               "race", "a big striped animal of the savanna"]) == [
        "four", "horse", "zebra"]
    with pytest.raises(Problem):
        _definitions(pacs, ["the number of legs on a centipede", "the animal a jockey rides"])


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("### Acceptance tests\n- [ ] Given a watercolour painting of a giraffe, return 'giraffe'\n"
     "- [ ] Given a watercolour painting of a zebra, return 'zebra'", ["giraffe", "zebra"],
     "art_painting"),
    ("Hello, I am need a model which can say if picture is of cat or of dog, the pictures come "
     "from phone camera of our users.", ["cat", "dog"], "photo"),
    ("AC: distinguishes kitties from puppies in user phone uploads. NFR: p95 < 200ms.",
     ["cat", "dog"], "photo"),  # a phone hints at photos where no style word is said
    ("Specification\n=============\nRecognise: cat, dog, elephant\nInput style: pencil sketches",
     ["cat", "dog", "elephant"], "sketch"),
    ("Participants (n=40) will view oil paintings depicting dogs, horses and birds.",
     ["dog", "horse", "bird"], "art_painting"),
])
def test_spec_and_story_words_are_not_classes(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", ["cats and dogs where 1 < 2", "cats OR 1=1", "cats a=b dogs"])
def test_code_like_text_is_still_refused(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def test_a_negation_inside_a_definition_negates_nothing(pacs):
    assert _definitions(pacs, [
        "The animal said never to forget, recognisable by its trunk and tusks.",
        "A single garment that combines a bodice and a skirt.", "The only even prime number.",
    ]) == ["elephant", "dress", "two"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("Ticket: distinguish button-down shirts from tees.", ["shirt", "t-shirt"], None),
    ("long-sleeved t-shirts and coats", ["t-shirt", "coat"], None),
    ("puppies n kitties", ["dog", "cat"], None),
    ("please build me something to tell apart oil-painted zebras and horses",
     ["zebra", "horse"], "art_painting"),  # a style word is never joined away
])
def test_hyphenated_modifiers_and_n_for_and(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("Hi, I'm a Year 2 teacher and the children hold up a card with a number. So 0, 1, 2, 3, 4 "
     "and 5 please. Many thanks, Mrs Patel", ["zero", "one", "two", "three", "four", "five"]),
    ("Hi, he loves the elephants, giraffes and zebras. Thanks, Sarah (Leo's mum)",
     ["elephant", "giraffe", "zebra"]),
    ("the digits 2, 3 and 5, that's all we use! Ta, Pam", ["two", "three", "five"]),
    ("We need bears, elephants and giraffes... and I think the zebras too.",
     ["bear", "elephant", "giraffe", "zebra"]),
    ("#cartoon #bear #bird", ["bear", "bird"]),
    ("cats, dogs, birds. Actually, not dogs, sorry", ["cat", "bird"]),
])
def test_emails_and_tags_after_reading_set_14(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_an_added_unknown_is_asked_back_and_a_ticket_number_is_no_tag(pacs):
    with pytest.raises(Problem):
        _resolve(pacs, "we'd like the app to pick out elephants, giraffes and zebras. Oh, and "
                       "lions if you can.")
    assert _resolve(pacs, "Ticket #882 - the app must tell 3 from 8")[0] == ["three", "eight"]


def test_a_count_with_arithmetic_is_computed(pacs):
    """Stop 28 asked this back (the encoder said five); stop 29 computes 10 - 3."""
    assert _definitions(pacs, ["count the fingers on both hands and take away three",
                               "the animal a jockey rides in a race",
                               "a big striped animal of the savanna"]) == [
        "seven", "horse", "zebra"]
