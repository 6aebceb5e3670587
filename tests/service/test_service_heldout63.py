"""Shapes that held-out sets 62 and 63 (stop 49, issue 13; first scores natural 30/60 with 1
wrong 200 and 32/60 with 5) answered wrong or refused, with the real bundled MiniLM over
Tailor-PACS: Markdown specs (struck items, ticked boxes with asides, titles and headings over a
body, field lines in a bullet list, a "subject" table, GitHub labels), corrections ("not five
but six"), letters' sign-offs, places after a preposition, counts that name no digit ("That's
the two.", a child's age) and bounded parity groups. Each ``test_read`` case failed on the
stop-48 resolver (a wrong class set or domain at 200 where marked, else a 422); the guards
hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem

ANIMALS = ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"]
CLOTHES = ["t-shirt", "trouser", "pullover", "dress", "coat", "shirt"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # Markdown: a struck item (wrong 200: the trouser kept), a ticked list with an aside
    ("**Feature**: inventory icons need auto-labelling\n\nItems in the loot table:\n1. bag\n"
     "2. sneaker\n3. t-shirt\n4. ~~trouser~~ (cut from the game, drop it)\n\nIcons are "
     "cartoon style.", ["bag", "sneaker", "t-shirt"], "cartoon"),
    ("## Classifier for pet NPCs\n\n- [x] cat\n- [x] dog\n- [ ] bird (postponed to v2, do NOT "
     "include)\n\nArt is pencil sketch concept art.", ["cat", "dog"], "sketch"),
    # a title or heading naming no more than the body; field lines of their own
    ("PRD: Summer Edit\n- Items: sandals, dresses, t-shirts, bags\n- Creative: cartoon "
     "illustrations for the kids' line", ["sandal", "dress", "t-shirt", "bag"], "cartoon"),
    ("PRD - Returns triage\n- Auto-classify returned items: shirts, t-shirts, dresses, coats, "
     "bags\n- Update: coats handled by partner; remove coats\n- Images: warehouse camera "
     "photos", ["shirt", "t-shirt", "dress", "bag"], "photo"),
    ("Spec: Winter campaign\n- Classify: coats, pullovers, ankle boots\n- Creative: "
     "hand-painted watercolour assets\n- Exclude: all summer items (sandals, t-shirts)",
     ["coat", "pullover", "ankle boot"], "art_painting"),
    ("# Farm animals ticket: cows keep showing as horses\nTrain on cows, horses and sheep.",
     ["cow", "horse", "sheep"], None),  # a heading naming no more than the body
    ("## Why the zebra model flops on stripes\nWe need zebras and horses told apart in photos.",
     ["zebra", "horse"], "photo"),
    ("PRD: Bottoms & Dresses\n- Classes in scope: trousers, dresses, skirts\n- Update: skirts "
     "aren't supported by the vendor, remove them\n- Image source: product photography",
     ["trouser", "dress"], "photo"),
    ("## Feature: auto-tag concept paintings\n\nTag these subjects:\n\n| subject |\n|---|\n"
     "| horse |\n| dog |\n| cow |", ["horse", "dog", "cow"], "art_painting"),
    ("PRD: Bags & Shoes widget\n- Recognise handbags and trainers in user-generated content\n"
     "- UGC = photos from Instagram", ["bag", "sneaker"], "photo"),
    ("### Minigame\nNeed:\n- giraffe\n- zebra\n- elephant\n\nLabel: `enhancement`",
     ["giraffe", "zebra", "elephant"], None),
    # corrections (wrong 200s: five kept, dogs kept)
    ("the numerals zero and five - on reconsideration, not five but six", ["zero", "six"],
     None),
    ("cats and dogs. Actually not dogs but horses.", ["cat", "horse"], None),
    ("not only cats but also dogs", ["cat", "dog"], None),
    ("Can you do the cow, sheep and horse but skip the bird?", ["cow", "sheep", "horse"], None),
    ("ok so my game has horses n cows n sheep but its all cartoon style, can the ai tell em "
     "apart?? thx", ["horse", "cow", "sheep"], "cartoon"),  # a "but" before all-filler words
    # a letter's sign-off; a place after a preposition; who sends the images
    ("Dear Sirs,\n\nThe numerals of interest are the prime digits only: two, three, five and "
     "seven.\n\nYours faithfully,\nN. Hargreaves (retd.)", ["two", "three", "five", "seven"],
     None),
    ("Include bird, cat, cow, dog, horse and sheep - we don't see many others in Iowa. Ha.",
     ["bird", "cat", "cow", "dog", "horse", "sheep"], None),
    ("yo can u make it tell cats from dogs lol my sis draws them in her sketchbook w pencil",
     ["cat", "dog"], "sketch"),
    # counts naming no digit (wrong 200s: two, seven), a bounded parity group (all ten at 200)
    ("The dairy co-op wants a model that sees cows. Also dogs, since the herding dogs are "
     "always in the shot. That's the two.", ["cow", "dog"], None),
    ("my son is 7 and draws animals all day in pencil. his favourites are elephants and cats",
     ["elephant", "cat"], "sketch"),
    ("need smth that knows all the odd numbers 0-9 for my math app ty",
     ["one", "three", "five", "seven", "nine"], None),
    # groups: "everything in <group>" (wrong 200: a class lost), "any kind of shoe" asked
    ("Everything in clothing but not the t-shirts and any kind of shoe",
     ["trouser", "pullover", "dress", "coat", "shirt", "bag"], None),
    ("Cats and dogs, apart from those, any kind of shoe is welcome too",
     ["cat", "dog", "sandal", "sneaker", "ankle boot"], None),
    # a chat's turns are no project fields (wrong 200: the photo domain lost)
    ("Customer: hi, I need a classifier for my shop's returns desk\nAgent: Sure! Which items?\n"
     "Customer: sneakers and sandals mostly. oh and ankle boots\nAgent: Got it. What kind of "
     "images?\nCustomer: product photos from the warehouse camera",
     ["sneaker", "sandal", "ankle boot"], "photo"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("For my seminar on animals in Dutch Golden Age oil painting I'd like to auto-tag my "
     "slides: cows, sheep and horses. Yes, let's add the dogs.", ["cow", "sheep", "horse", "dog"]),
    ("I'm Jonas from Lindqvist Outdoor in Gothenburg. We need coats and bags.", ["coat", "bag"]),
    ("Ranch in Montana. Trail cam photos show horses, cattle and a grizzly. Want them sorted.",
     ["horse", "cow", "bear"]),
    ("cats and dogs, not photos but sketches", ["cat", "dog"]),
    # an outside review of this stop's first rules: each was wrong at 200 there
    ("- [x] zebra (incl. foals)\n- [x] giraffe\n- [ ] elephant (next sprint)",
     ["zebra", "giraffe"]),  # a ticked item's aside names no class
    ("Dogs, cats — not horses but maybe cows later", ["dog", "cat"]),  # no swap for a maybe
    ("Bags and coats but scrap that, just bags and dresses", ["bag", "dress"]),
    ("Owner: Maria (data)\nOwner: Tom (model)\nClasses: cats, dogs, horses",
     ["cat", "dog", "horse"]),  # a repeated field is no chat speaker (422 there)
    ("## Cats\nSource: shelter photos\n## Dogs\nSource: owner uploads\n## Horses\n"
     "Source: stable cameras", ["cat", "dog", "horse"]),
    ("It's not cats but dogs that confuse the model; classify cats, dogs and birds",
     ["cat", "dog", "bird"]),  # a cleft sentence is no swap
    ("Cats and dogs, both of which go to their own folder", ["cat", "dog"]),  # (422 there)
    ("Dresses and coats, plus bags, which are handled by a separate process",
     ["dress", "coat"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "Cats, Dogs and Ferrets from Iowa",  # a writer who capitalises classes: no place dropped
    "bag / coat / dress / trouser / shirt / t-shirt / pullover / sandal / sneaker / ankle boot "
    "-- basically the full clothing set but skip the last one in that list",  # which one? (all
    # ten at 200 on stop 48; the others were refused there too)
    "yo can u do the 0-9 thing but only the top half, like 5 and up",
    "we never used the odd numbers 0-9",
    "cats, dogs and horses. That's the two.",  # a count that disagrees (two at 200 there)
    "Every species in the animal catalogue is represented in our engraving collection save "
    "the household pets, dog and cat, which belong to a separate fonds. Please cover the "
    "remainder.",  # set 62's wrong 200 (dog, cat): what is waved off reaches past "which"
    # the outside review's: wrong at 200 in this stop's first rules
    "- [x] dog (and cat)\n- [ ] horse\n- [x] sheep",  # an aside that adds: no form
    "- [x] sheep\n- [x] cow\n- [ ] horse (actually yes, include it after all)",
    "Spec: v2 drops horses\nCurrent classes:\n- cats\n- dogs\n- horses",  # a title that acts
    "PRD: Remove horses\n- cats\n- dogs\n- horses",
    "Train a model on cats, dogs and also on Foxes.",  # a capital after "also on" is asked
    "Our shop sells everything in clothing but we only need the shoes",
    "Customer: cats and dogs please\nAgent: and horses?\nCustomer: no\nAgent: ok, cats and dogs",
])
def test_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422
