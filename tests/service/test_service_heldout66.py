"""Shapes that stop 52 read (issue 13) from held-out set 66 (claims adjusters' letters, zoo
keepers' notes, a retiree in capitals, a founder's buzzwords, forum posts with an "EDIT:", a
reseller's listings), with the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case
failed on the stop-51 resolver (a wrong class set at 200 where marked, else a 422); the guards
hold on both, and ``test_guards_refused`` are 422s that the first rules made wrong 200s."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "every single one" is a pronoun (wrong 200: the digit one added)
    ("Re: the image tool - all the animals pls, every single one, for the visitor photo wall.",
     ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"],
     "photo"),
    # "all ten" counts the digits it names
    ("We require a classifier for hand-written claim reference numbers. All ten digits (0 "
     "through 9) must be recognised.", ["zero", "one", "two", "three", "four", "five", "six",
                                        "seven", "eight", "nine"], None),
    ("illustrated lookbook: dress, coat, shirt. drop coat.", ["dress", "shirt"], "cartoon"),
    # a digit closing a list before a lowercase verb (wrong 200: the 0 read as a count)
    ("sizes on tags: 8, 9, 0. read em", ["eight", "nine", "zero"], None),
    # a name signed with a dash; a forum post's closing note about the post
    ("need to sort their pencil doodles - sheep, cows, horses. -Ana Lima",
     ["sheep", "cow", "horse"], "sketch"),
    ("Long time lurker, first post. Moving house and I've got like 40 bags of clothes that I "
     "photographed before packing because I'm an organised disaster. I want to sort them by "
     "type from the photos: t-shirts, shirts, trousers, dresses. Not doing shoes, those went to "
     "the charity shop already.\n\nEDIT: people asking why I do it this way. I have a bad "
     "back, ok?", ["t-shirt", "shirt", "trouser", "dress"], "photo"),
    ("a dog and a bear, pencil sketches. Please advise whether a tool can classify these "
     "drawings.", ["dog", "bear"], "sketch"),
    # a "not" before a dash that turns down no list
    ("Building the Uber for pet portraits. MVP scope: dogs + cats. Phase 2 maybe horses but "
     "let's not boil the ocean - just dogs and cats for now. Input is user-uploaded "
     "illustrations / clip art.",
     ["dog", "cat"], "cartoon"),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("We do not need these - cats, dogs. Just horses and cows.", ["horse", "cow"]),
    ("We don't want - cats, dogs. Just horses and cows.", ["horse", "cow"]),
    ("cats and dogs. -Cat", ["cat", "dog"]),
    ("Not needed for launch - birds, bears. Needed: cats, dogs", ["cat", "dog"]),  # a review's
    ("cats, dogs and birds.\nEDIT: no footwear", ["cat", "dog", "bird"]),
    ("cats, dogs and birds.\nEDIT: thanks for the award kind stranger", ["cat", "dog", "bird"]),
    ("each one of the digits 1, 7 and 4", ["one", "seven", "four"]),
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "Need zebras and giraffes. -Hamster",  # one word after a dash: a thing, maybe (a review)
    "Cows and sheep. -Koala",
    "We do not stock - sandals, sneakers, ankle boots. Classify all other clothing and birds.",
    "Items not in our store - dresses and coats",
    "Elephants and giraffes\nEDIT: lol forgot donkeys",  # "forgot" asks (a review)
    "Need horses and zebras.\nEDIT: thanks everyone, forgot hamsters",
    "Classes:\n- cat\n- dog\n-Hamster",  # a bullet's item, not a signature
    "- cat.\n- dog.\n-Hamster",
    "cats, dogs and birds.\nEDIT: hamsters",  # a postscript that asks
    "cats, dogs and birds.\nEDIT: thanks all, the ferret too",
])
def test_guards_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


def test_beach_shoe_is_a_sandal(pacs):
    """The catalogue's sandal definition says "beach" (set 66: "a shoe for the beach" was a
    sneaker at 200)."""
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    matches, _ = resolve_request(pacs, PersonalizeCreate(
        classes=["a purse or tote for carrying things", "a shoe for the beach"]), pacs.domains)
    assert [m.name for m in matches] == ["bag", "sandal"]


def test_lot_counts_and_pairs(pacs):
    """A lot's "sandals x2" counts items; "two pairs" as a whole definition is four."""
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    assert _resolve(pacs, "lot #112: sneakers x4, sandals x2, ankle boots x1. need sorter.")[0] \
        == ["sneaker", "sandal", "ankle boot"]
    assert _resolve(pacs, "we sell two pairs of sandals and bags")[0] == ["sandal", "bag"]
    matches, _ = resolve_request(pacs, PersonalizeCreate(
        classes=["two pairs", "half a dozen", "the number of legs on a spider"]), pacs.domains)
    assert [m.name for m in matches] == ["four", "six", "eight"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a list introduced by "covering" (a 422: the first item glued to the clause)
    ("For the travel insurance desk we need footwear recognition covering sandals, sneakers and "
     "ankle boots, from claimants' phone photos of lost luggage contents.",
     ["sandal", "sneaker", "ankle boot"], "photo"),
    # a list's closing ", all rescued from …" (a 422: "rescued" asked back)
    ("We have cows, sheep, horses and a couple of dogs, all rescued from bad situations. Photos "
     "please.", ["cow", "sheep", "horse", "dog"], "photo"),
])
def test_read_lists(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("birds in flight and dogs on the beach, all shot on my DSLR", ["bird", "dog"], "photo"),
    ("cats, dogs, all birds too", ["cat", "dog", "bird"], None),
    ("a blanket covering cats and dogs", ["cat", "dog"], None),
])
def test_list_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    # plural class words typed side by side without marks, as a list (422s before)
    ("SORTING OLD CLOTHES FOR CHURCH SALE DRESSES COATS PULLOVERS SHIRTS TROUSERS NOT THE SHOES",
     ["dress", "coat", "pullover", "shirt", "trouser"]),
    ("I COLLECT COMIC STRIPS WITH ANIMALS IN THEM WANT DOGS CATS BEARS AND ELEPHANTS WAIT NO "
     "ELEPHANTS", ["dog", "cat", "bear"]),
])
def test_read_runs(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", ["zebra finch giraffe", "bull dog cat", "cows horses sheep dogs"])
def test_runs_guards(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


def test_an_edit_that_says_not_takes_back(pacs):
    """"EDIT: not the birds" is a second thought, as "drop the birds" (was a clash, 422);
    "Edit: not sure about birds" takes nothing back."""
    assert _resolve(pacs, "cats, dogs and birds.\nEDIT: no birds")[0] == ["cat", "dog"]
    with pytest.raises(Problem):
        _resolve(pacs, "cats, dogs and birds.\nEdit: not sure about birds")


def test_what_was_done_before_now_is_history(pacs):
    """"Previously we did X but now Y" asks for Y (a 422 before: both lists read); "used to
    … but now also …" adds, so it is left as it was."""
    assert _resolve(pacs, "Previously we did cats and dogs but now we need horses and cows.")[0] \
        == ["horse", "cow"]
    assert _resolve(pacs, "previously the model did cats and dogs, now it should also do "
                          "horses")[0] == ["cat", "dog", "horse"]
    with pytest.raises(Problem):
        _resolve(pacs, "We used to sort cats, but now also dogs and horses")


def test_please_before_a_new_subject_ends_a_sentence(pacs):
    assert _resolve(pacs, "ALL THE NUMBERS 0 TO 9 PLEASE MY EYES ARE BAD")[0] == [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    assert _resolve(pacs, "cats and dogs please i need it soon")[0] == ["cat", "dog"]


@pytest.mark.parametrize(("text", "classes"), [
    # a self-review's probes of this stop's rules: wrong 200s of their first versions
    ("bears, zebras, giraffes.\nEDIT: thanks for the gold! lions", None),  # lions asked
    ("cats, dogs, all found in shelters, and rabbits", None),  # the aside ends at its comma
    ("cats, dogs, birds.\nEDIT: not birds, parrots only", None),  # parrots are birds: a clash
    ("numbers divisible by two from 0 to 8", ["zero", "two", "four", "six", "eight"]),
])
def test_self_review(pacs, text, classes):
    if classes is None:
        with pytest.raises(Problem):
            _resolve(pacs, text)
    else:
        assert _resolve(pacs, text)[0] == classes
