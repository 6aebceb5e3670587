"""Where sentences end and which chunks are clauses, since stop 32 (issue 13; the read pool and
held-out sets 28 and 29), with the real bundled MiniLM over Tailor-PACS. Each case but the
guards was a 422 or a wrong class set (marked) on the stop-31 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.sentences import SENTENCE
from service.kinds.task_request import resolve_request


@pytest.mark.parametrize(("text", "pieces"), [
    ("cat vs dog. Also rabbits.", ["cat vs dog", " Also rabbits", ""]),  # a short word ends one
    ("two. Three", ["two", " Three"]),
    ("Mr. Li wants cats", ["Mr. Li wants cats"]),  # titles and abbreviations do not
    ("cats vs. Dogs", ["cats vs. Dogs"]),
    ("e.g. Cats", ["e.g. Cats"]),
    ("a cow. the end", ["a cow. the end"]),  # nor a short word before a lower-case word
])
def test_a_full_stop_after_a_short_word_ends_a_sentence_before_a_capital(text, pieces):
    assert SENTENCE.split(text) == pieces


@pytest.mark.parametrize("text", [
    "cat vs dog. Also rabbits if you can.",  # "dog rabbits" was dog, at 200
    "Only the animals please, no clothing at all. Include sneakers and bears.",  # at 200
    "We sell cats and dogs, no clothing. Add sneakers too.",
    "Give me a model with exactly two classes: cat, dog and bird.",  # a count, then three
])
def test_refused_a_class_outside_the_catalogue_or_a_whole_group_left_out(pacs, text):
    with pytest.raises(Problem):
        resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains)


@pytest.mark.parametrize(("text", "classes"), [
    # a chunk holding an object pronoun has a verb: a clause, never a list item
    ("I'm a Year 2 teacher and we're making a little app where the children hold up a card "
     "with a number and the tablet reads it out. We only go up to five at the moment, so 0, 1, "
     "2, 3, 4 and 5 please.", ["five", "zero", "one", "two", "three", "four"]),  # request order
    # "X is Y", "X are Y" is a sentence about the app, not a list of items
    ("Hola! necesitamos: dress, coat, shirt. The store is in Valencia, tablets are Samsung "
     "Galaxy Tab. Gracias", ["dress", "coat", "shirt"]),
    # a whole group left out excludes its classes; "no other animals" leaves those named
    ("Animals only, no clothing. Cats, dogs and horses.", ["cat", "dog", "horse"]),
    ("Enhancement: elephant / giraffe / bear classes for the zoo kiosk app. No other animals "
     "needed.", ["elephant", "giraffe", "bear"]),
    ("Scope (MVP): (a) zero (b) one (c) nine. Out of scope: all other digits.",
     ["zero", "one", "nine"]),
])
def test_clauses_and_groups_left_out_read_as_context(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    # corrections: "wait, no X" takes back X alone; a question turned down takes back itself
    ("I want bear, bird, and— wait, no bird — horse.", ["bear", "horse"]),  # bird, at 200
    ("just bear and bird. Also elephant? no, lol, we're in Canada. Just bear and bird.",
     ["bear", "bird"]),  # had elephant, at 200
    ("bear only? no... bear and dog. Final answer.", ["bear", "dog"]),
    ("sneakers and, um, what do you call them, high-top boots? no, ankle boots. And also "
     "sandals.", ["sneaker", "ankle boot", "sandal"]),
    # a retraction goes on over the bare classes listed after it
    ("digits 0-9. Hmm, on second thought remove 0 and 1, they never appear on our crates",
     ["two", "three", "four", "five", "six", "seven", "eight", "nine"]),  # was zero, one
    ("Need a model for bears and horses. Hmm, actually scratch the horses - make it bears, "
     "sheep and cows instead.", ["bear", "sheep", "cow"]),  # guard: a replacement list
    # "the even/odd ones" filters a list or range of digits
    ("Numbers 2 to 8, handwritten, but no odd ones", ["two", "four", "six", "eight"]),
    ("digits 1-6, but only the even ones", ["two", "four", "six"]),
    # brackets after "we don't need" name what is not needed
    ("Just the big animals: elephant, giraffe. Smaller ones we don't need (bird, cat).",
     ["elephant", "giraffe"]),  # had bird and cat, at 200
    # a digit after a verb of writing is asked for; "we have two" is no digit
    ("Grade 1 maths app: kids write 2, 4, 6 and 8 on tablet with finger",
     ["two", "four", "six", "eight"]),  # lost two, at 200
    ("she's obsessed with giraffes and zebras. Oh and cats, we have two.",
     ["giraffe", "zebra", "cat"]),  # had two, at 200
    ("I need three classes: elephant, bear, and giraffe.", ["elephant", "bear", "giraffe"]),
    # "or" after a negation stays negated, whatever it names
    ("Classes we need: zebra, giraffe, elephant. We do not want lions or buffalo detection.",
     ["zebra", "giraffe", "elephant"]),
    ("no lions or tigers please, only zebras and giraffes", ["zebra", "giraffe"]),
    ("Every animal you've got! It's for a zoo-and-farm trivia game my daughter and I are "
     "making over the holidays.", ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe",
                                   "horse", "sheep", "zebra"]),
])
def test_corrections_filters_and_counts(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # pasted documents: exclusions and groups are read, metadata with one value is left out
    ('{"classes": ["kittens", "puppies"], "exclude": ["horses"]}', ["cat", "dog"], None),
    ('{"classes": ["three", "fives"], "version": "7"}', ["three", "five"], None),
    ('{"labels": ["cow", "sheep", "horse"], "style": "photo", "farm_id": "NZ-0231"}',
     ["cow", "sheep", "horse"], "photo"),
    ('{"app": "PetPal", "want": ["dog", "cat"], "exclude": ["bird"], "device": "iPhone 12"}',
     ["dog", "cat"], None),
    ('{"include_groups": ["animal"], "exclude": ["cow", "sheep", "horse"], "comment": "farm '
     'stuff is handled by the agri team"}',
     ["bear", "bird", "cat", "dog", "elephant", "giraffe", "zebra"], None),
    # an environment file's assignments are fields; a spaced "=" between words says "means"
    ("TAILOR_CLASSES=dress,sandal,bag\nTAILOR_DOMAIN=photo\nSTORE=shop-17",
     ["dress", "sandal", "bag"], "photo"),
    ("jumpers and trousers (I'm from UK, jumpers = what you call sweaters)",
     ["pullover", "trouser"], None),
    ("need a kicks vs boots detector for our resale app. boots = the short ankle ones only, "
     "nothing else", ["sneaker", "ankle boot"], None),
])
def test_documents_and_assignments_are_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    # the catalogue's sub-group "footwear" is its three classes when none is named (stop 32;
    # outside sets 2, 5 and 21 had labelled three such rows a 422, thirteen others these)
    ("footwear only. that's it. the rest of our catalogue is handled by a different vendor",
     ["sandal", "sneaker", "ankle boot"]),
    ("AC: model distinguishes every kind of footwear in the catalogue.",
     ["sandal", "sneaker", "ankle boot"]),
    ("Everything from the clothing category except footwear.",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "shirt", "bag"]),
    ("all the clothing items but not footwear",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "shirt", "bag"]),
    ("We don't sell footwear, only coats and dresses", ["coat", "dress"]),
    # when the text names some of them, the word is context
    ("Line drawings of footwear: sneakers and ankle boots.", ["sneaker", "ankle boot"]),
    ("the footwear classes only (sandals, sneakers, ankle boots)",
     ["sandal", "sneaker", "ankle boot"]),
    # anywhere but where it asks or excludes, the word is context (a second outside review)
    ("We do not want footwear detection, only trousers and dresses", ["trouser", "dress"]),
    ("footwear is not needed, only coats and bags", ["coat", "bag"]),
    ("We don't do footwear yet. Shirts, t-shirts and pullovers please.",
     ["shirt", "t-shirt", "pullover"]),
])
def test_a_catalogue_sub_group_word(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_catalogue_without_sub_groups_refuses_the_word(pacs):
    """An artifact written before stop 32 has no "subgroups": the word stays unknown (422)."""
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver
    from trainer.data.catalogue import catalogue_json

    old = {k: v for k, v in catalogue_json().items() if k != "subgroups"}
    s = Settings()
    resolver = ClassResolver(old, pacs.encoder, s.match_threshold, s.match_margin)
    with pytest.raises(Problem):
        resolve_request(resolver, PersonalizeCreate(description="footwear only"), old["domains"])


@pytest.mark.parametrize(("text", "classes"), [
    # an outside review of this stop's first version: each was wrong at 200 or a 422 there
    ("cats, dogs, birds, wait, no birds, horses and cows", ["cat", "dog", "horse", "cow"]),
    ("sneakers, wait, no sandals, and bags", ["sandal", "bag"]),  # a correction, not a take-back
    ("cats, dogs, birds, skip birds, horses and cows too", ["cat", "dog", "horse", "cow"]),
    ("1, 2, 3, remove 3, 4 and 5 too", ["one", "two", "four", "five"]),
    ("remove the bags, coats and dresses stay", ["coat", "dress"]),
    ("cats and dogs wait no cats and horses", ["cat", "horse"]),
    ("TAILOR_CLASSES=cat,dog\nTAILOR_VERSION=2", ["cat", "dog"]),
    ("NUM_CLASSES=3\nCLASSES=cat,dog,bird", ["cat", "dog", "bird"]),
    ("There are two types of users. Classify cats, dogs and birds", ["cat", "dog", "bird"]),
    ("We tried two classes before (cats, dogs). Now we need cats, dogs and birds",
     ["cat", "dog", "bird"]),
    ("cats and dogs only, no animals besides those", ["cat", "dog"]),
    ("animals, esp. Cows and sheep", ["cow", "sheep"]),
    ("Ask Bo. He wants cows and sheep", ["cow", "sheep"]),
    ("My supervisor suggested using an API. The animals I care about are dogs, cats and horses.",
     ["dog", "cat", "horse"]),
    ("classes = three, eight, nine  # digit recognizer", ["three", "eight", "nine"]),
    ("zebra, giraffe, elephant, wait, no elephant. And horses", ["zebra", "giraffe", "horse"]),
    ("Drop 9, 8, 7 from the digits 0-9", ["zero", "one", "two", "three", "four", "five", "six"]),
    ("cats, dogs, horses. Remove horses, cows and sheep are fine",
     ["cat", "dog", "cow", "sheep"]),  # guard: the comma list keeps what it calls fine
    ("TAILOR_CLASSES=zebra,giraffe\nTAILOR_MAX_IMAGES=9", ["zebra", "giraffe"]),
    ("APP_NAME=petsnap\nTAILOR_CLASSES=cat,dog", ["cat", "dog"]),
    ('{"include_groups": ["digits"], "classes": ["cat"]}',
     ["cat", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    ("We need cats and dogs etc. Also horses", ["cat", "dog", "horse"]),
    # and wrong at 200 in both versions
    ("cats and dogs, ignore any animal that isn't one of these", ["cat", "dog"]),
    ("digits 0-9, even ones only", ["zero", "two", "four", "six", "eight"]),
    ("Not all animals, just cats and dogs", ["cat", "dog"]),  # "not all" leaves out no group
    ("Should we add birds? No idea yet. Cats and dogs for now.", ["cat", "dog"]),
    ("Any chance of horses? No? OK, cows and sheep then.", ["cow", "sheep"]),
    ("cats, dogs and birds. nvm birds", ["cat", "dog"]),  # Slack's "never mind" retracts
    ("cats, dogs and birds. Never mind the birds.", ["cat", "dog"]),
    ("sheep, cow, horse, and a few pigs. Actually, skip the pigs.", ["sheep", "cow", "horse"]),
    ("Pick one of these: cat, dog, bird", ["cat", "dog", "bird"]),
    ("dress, coat, bag, wait no dresses, shirts", ["coat", "bag", "shirt"]),
    ("cats and dogs and birds - wait, no birds - and horses", ["cat", "dog", "horse"]),
    ("Digits 0-9, we don't care about the odd ones",
     ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    ("we want cats and dogs, right? no, cats and horses", ["cat", "horse"]),
])
def test_review_findings(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "cats = yes, dogs = yes, birds = no",  # a value after "=": still an assignment
    "bird = not needed, cat and dog only",
    "CLASSES=shirt,coat\nSKIP=coat",  # one class left
    '{"include_groups": ["animals", "digits"], "exclude": ["cow"]}',  # which group loses cow?
    # a second outside review
    '{"classes": ["t-shirt", "dress"], "notes": "also coats"}',  # a note naming a class: unclear
    '{"classes": ["cat", "dog"], "notes": "horses were removed in v2"}',
    "cats = wanted, dogs = wanted, birds = excluded",  # "=" only glosses a class word
    "current = cats, dogs; requested = horses, cows",
    "TAILOR_CLASSES=cat,dog\nTAILOR_DISABLED_CLASSES=bird,horse",  # a list under metadata
    "bags, sneakers and other footwear",  # an open sub-group
    "CLASSES=cat,dog\nTAILOR_CLASSES=horse,cow",  # two settings for one field
])
def test_review_findings_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_request(pacs, PersonalizeCreate(description=text), pacs.domains)


@pytest.mark.parametrize(("text", "classes"), [
    # a header that asks for a group is content when what follows names no class
    ("even digits only (0 counts as even for us): for a maths worksheet checker",
     ["zero", "two", "four", "six", "eight"]),
    ("odd numbers written by hand by pupils: 1,3,5,7,9",
     ["one", "three", "five", "seven", "nine"]),  # guard: a label before its list
    # a gloss in brackets names the same class once
    ("Please include:\n- pullover\n- coat\n- ankle boots\n- bag (handbag)\nfor our boutique",
     ["pullover", "coat", "ankle boot", "bag"]),
    ("kittens (cats) and dogs", ["cat", "dog"]),
    # who asks and where from, in fields
    ("domain: sketch\nclasses: [sandal, sneaker]\nowner: qa-jonas\nreason: regression set for "
     "the designer sketch uploader", ["sandal", "sneaker"]),
    ("classes:\n  - kitty\n  - doggo\n  - birb\nsource: user uploads from PetMatch app",
     ["cat", "dog", "bird"]),
    # a Slack quote's "> " marks and a trailing "NOT"
    ("Slack #ml-requests, from Tom (QA):\n> can we get a model for office wear regression "
     "tests? shirts and trousers.\n> t-shirts explicitly NOT, they keep polluting the "
     "office-wear bucket\n> also not coats, it's summer in the test fixtures\nthx",
     ["shirt", "trouser"]),
    ("[10:42] Mehmet: we need zebras, giraffes and elephants\n[10:43] Ayse: ok I send to Tailor",
     ["zebra", "giraffe", "elephant"]),  # a chat log's speakers are no fields
])
def test_headers_glosses_and_fields(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_note_naming_a_class_says_where_classes_go(pacs):
    with pytest.raises(Problem) as err:
        resolve_request(pacs, PersonalizeCreate(description='{"classes": ["cat", "dog"], '
                                                '"notes": "also coats"}'), pacs.domains)
    assert err.value.status == 422 and "'notes' names a class" in err.value.detail
