"""Requests written as specs (service.kinds.fields): tables, ``classes = …`` and field lines,
with the real bundled MiniLM over Tailor-PACS (issue 13, stop 27). The tables, the
assignment, the field lines and the context report were 422s on the stop-26 resolver; the
last two specs and the guards passed there too and pin that behaviour."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.fields import tabular


def test_tables_become_their_class_column():
    markdown = "| name | example |\n|:---|---:|\n| sandal | flip-flop |\n| bag | tote |"
    assert tabular(markdown) == "- sandal\n- bag"
    csv = "id,label,notes\n1,five,a handwritten 5\n2,six,a handwritten 6\nthanks"
    assert tabular(csv) == "- five\n- six\nthanks"
    assert tabular("no, table, here") == "no, table, here"  # no class header: prose


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("| class | example |\n|---|---|\n| sandal | flip-flop |\n| sneaker | trainer |\n"
     "| bag | tote |", ["sandal", "sneaker", "bag"], None),
    ("label,description\nfive,a handwritten 5\nsix,a handwritten 6", ["five", "six"], None),
    ("classes = three, eight, nine  # digit recognizer for a calculator app",
     ["three", "eight", "nine"], None),
    ("- Domain: cartoons\n- Classes: bear, dog, cat\n- Platform: iOS", ["bear", "dog", "cat"],
     "cartoon"),
    ("Spec v3 - labels: 'coat', 'bag'. Input: charcoal fashion sketches from our design team.",
     ["coat", "bag"], "sketch"),
    ("**Must have:** sneakers, t-shirts\n**Also needed:** trousers\n**Won't have:** dresses",
     ["sneaker", "t-shirt", "trouser"], None),
    ("Watercolour animals: cat, bird, elephant", ["cat", "bird", "elephant"], "art_painting"),
    ("## Requirements\n- classify pencil sketches\n- classes: zebra, giraffe",
     ["zebra", "giraffe"], "sketch"),
])
def test_specs_tables_and_fields(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_a_project_field_gives_no_style(pacs):
    # "Cartoon Network" is a team, not the images' style
    assert _resolve(pacs, "Classes: cats, dogs\nTeam: Cartoon Network") \
        == (["cat", "dog"], None)  # fmt: skip


def test_field_values_about_the_project_are_reported_as_context(pacs):
    ignored: list[str] = []
    text = "Classes: horses, cows\nLatency budget: under 50 ms\nInput: phone camera photos"
    assert _resolve(pacs, text, ignored) == (["horse", "cow"], "photo")
    assert ignored == ["under 50 ms", "phone"]


@pytest.mark.parametrize("text", [
    "| class | note |\n|---|---|\n| cat | ' OR 1=1 |\n| dog | x |",  # injection in any cell
    # an outside review's: tables read wrongly, fields that ask
    "| # | animal | notes |\n|---|---|---|\n| 1 | cat | |\n| 2 | dog | |\n| 3 | lion | |",
    "| class | include |\n|---|---|\n| cat | yes |\n| dog | maybe |\n| horse | no |",  # not y/n
    "| class | examples |\n|---|---|\n| dog | husky |\n| cat | tabby |\n| other | fox |",
    "Classes: cows, sheep, horses\nPriority: alpacas",
    "Classes: cats, dogs\nImages: mostly ferrets",
    "Classes: cats, dogs\nGoal: also recognise lions",  # a field that asks is no context
    "Animals: lions, tigers",
])
def test_guards_injection_in_a_table_and_fields_that_ask_are_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


def test_a_yes_no_column_chooses_the_rows():
    """Stop 28 refused an include column; stop 29 reads one whose cells are all yes or no."""
    from service.kinds.fields import tabular

    text = "| class | include |\n|---|---|\n| cat | yes |\n| dog | Y |\n| horse | no |"
    assert tabular(text) == "- cat\n- dog"
    assert tabular("animal,needed\ncow,y\nsheep,n\nhorse,y") == "- cow\n- horse"  # CSV


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("User story #7\nAs a shop owner\nI want cartoon icons sorted into coats and handbags",
     ["coat", "bag"], "cartoon"),  # a title line, a role line
    ("Scope (v1):\n(a) zero\n(b) one\n(c) nine", ["zero", "one", "nine"], None),  # letter bullets
    ("Bug 12: the model keeps mixing up 3 and 8. Please retrain it with just those.",
     ["three", "eight"], None),  # a digit ends a sentence before a capital
    ("Horses and cows, and we need those two told apart.", ["horse", "cow"], None),
    # an outside review's: prose with commas is no CSV; "removed" negates no coat
    ("Labels, in order of priority:\nzebra, giraffe, elephant\nbear, bird",
     ["zebra", "giraffe", "elephant", "bear", "bird"], None),
    ("t-shirts, shirts and coats with tags removed", ["t-shirt", "shirt", "coat"], None),
])
def test_documents_titles_and_letter_bullets(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


def test_a_short_negated_mention_never_resolves_by_similarity(pacs):
    # "handbags not" was bag at 0.78 once a leftover no longer refused the request
    assert _resolve(pacs, "Stories: detect sandals, detect ankle boots. Handbags are NOT part "
                          "of this epic.")[0] == ["sandal", "ankle boot"]  # fmt: skip
    with pytest.raises(Problem):
        _resolve(pacs, "sneakers, sandals and purses not")


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # held-out set 13's first score at c7b0ae5 lost these: a code comment is no Markdown title
    ("# TODO: bear vs bird classifier for our trail camera photos",
     ["bear", "bird"], "photo"),
    ("# classifier for watercolour paintings of dogs and horses", ["dog", "horse"],
     "art_painting"),
    ("# digit classifier restricted to 0, 3, 9", ["zero", "three", "nine"], None),  # "to 0"
])
def test_code_comments_name_classes(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)
