"""Shapes that stop 51 read (issue 13): the outside review of stop 50, held-out set 67 and the
outside review of this stop's rules, with the real bundled MiniLM over Tailor-PACS. Each
``test_read`` case and the refusals failed on the stop-50 resolver (a wrong class set at 200
where marked, else a 422), as did ``test_read_more`` but for its emoji decoration and keycap
cases; the guards hold on both, the review's cases were wrong 200s of the first rules."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # "wait no X" approving X keeps it (wrong 200s: X dropped); "needed after all" drops it
    ("cats and dogs, wait no dogs are fine, add horses too", ["cat", "dog", "horse"], None),
    ("horses, cows, wait no horses are ok, plus sheep", ["horse", "cow", "sheep"], None),
    ("cats, dogs, wait no cats should stay", ["cat", "dog"], None),
    ("cats, dogs, wait no dogs needed after all, horses", ["cat", "horse"], None),
    # a count given as a field (wrong 200: the digit three)
    ("Sneakers, sandals, and the odd ones out: ankle boots. Number of classes: 3",
     ["sneaker", "sandal", "ankle boot"], None),
    ("Classes: sneakers, sandals. Num classes: 2", ["sneaker", "sandal"], None),
    # a turned-down question that runs on after a comma (wrong 200s: the class kept); a "no"
    # that goes on to agree declines nothing (wrong 200s: the class dropped)
    ("Cats and dogs. Should we include birds, too? No.", ["cat", "dog"], None),
    ("Bags and sneakers. What about shirts, do we add those? No.", ["bag", "sneaker"], None),
    ("Bears and elephants. Is adding giraffes a problem? No, go ahead.",
     ["bear", "elephant", "giraffe"], None),
    ("Do you want bags in a separate model? No, same model please, along with sandals and "
     "sneakers.", ["bag", "sandal", "sneaker"], None),
    # set 67: notes as context, chat times, a bare "remove", emoji, a header's earlier aside
    ("labels: sheep, horse, cow\nnote: drone photos, farm survey", ["sheep", "horse", "cow"],
     "photo"),
    ("classes: elephant|bear\nnote: binary. watercolour set", ["elephant", "bear"],
     "art_painting"),
    ("[9:14] need t-shirts vs shirts for the returns flow\n[9:15] photos from the warehouse cam "
     "btw\n[9:21] also trousers pls", ["t-shirt", "shirt", "trouser"], "photo"),
    ("[16:20] wildlife set: elephant, giraffe, zebra, bear\n[16:22] edit: bears aren't in the "
     "savanna lol, remove\n[16:23] keep the rest", ["elephant", "giraffe", "zebra"], None),
    ("\U0001f418\U0001f992\U0001f993 savanna speedrun! just those three lol. Photos from our "
     "zoo trip \U0001f4f8", ["elephant", "giraffe", "zebra"], "photo"),
    ("yo \U0001f44b our game is a fashion runway roguelike (don't ask \U0001f602). classify: "
     "dress \U0001f457, sandal, bag \U0001f45c. Cartoony sprites.", ["dress", "sandal", "bag"],
     "cartoon"),
    ("no cat/dog, just cow, horse and sheep", ["cow", "horse", "sheep"], None),
    ("we pivoted \U0001f504 from pets to farm: no more cat/dog, now it's cow \U0001f404 + horse "
     "\U0001f40e + sheep \U0001f411. don't ask about the chicken \U0001f414 (cut for scope)",
     ["cow", "horse", "sheep"], None),  # wrong 200: the dog kept
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("bears, birds, wait no bears in Kenya lol, add zebras", ["bird", "zebra"]),
    ("cats, dogs, wait, no dogs, horses", ["cat", "horse"]),
    ("sneakers, wait no sandals and bags please", ["sandal", "bag"]),  # a correction
    ("digits bigger than five", ["six", "seven", "eight", "nine"]),  # a range, as before
])
def test_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    # an outside review of this stop's first rules (each a wrong 200 there)
    ("Cats and dogs. Should we include birds, too? No, keep it simple.", ["cat", "dog"]),
    ("Classify cats, dogs, horses and cows. We don't want anything but real photos for the "
     "horses and cows, no drawings.", ["cat", "dog", "horse", "cow"]),
    ("Classes: cats, dogs, horses\nNote: scrap horses", ["cat", "dog"]),
    ("[11:59] Cats and dogs.\n[12:00] Also 2 and 5? lol no", ["cat", "dog"]),
    ("Sneakers and sandals, without ankle boots it doesn't need to handle winter",
     ["sneaker", "sandal"]),
    ("My kid asks if it is a number bigger than five. Need a classifier for all digits 0-9.",
     ["six", "seven", "eight", "nine", "zero", "one", "two", "three", "four", "five"]),
    ("always a number higher than 6, so classify 7, 8 and 9.", ["seven", "eight", "nine"]),
])
def test_review_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "\U0001f410\U0001f411\U0001f404 farm sim",  # the goat touches class emoji: asked back
    "Classify bags and ankle boots.\nAlso flag sneakers and sandals the moderator should remove",
    "horse, cow, sheep\nsheep look too much like cows tbh, drop",  # two classes: which?
    "The model must not output the following. Blocklist: horses, cows\nClasses: cats, dogs, "
    "horses, cows",
])
def test_review_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


@pytest.mark.parametrize("text", [
    # "nothing but horses" is one class (wrong 200: all three kept)
    "Cats, dogs, horses. Actually I don't want anything but horses",
    "Sneakers, sandals, and ankle boots. Number of classes: 2",  # a count that disagrees
    # one number bounded, not named (wrong 200s: the range 6-9)
    "a number bigger than five",
    "I only need a number bigger than 5",
    "only a digit more than 4",
    # an unknown class listed and asked for again (set 67, wrong 200: the pig dropped)
    "I need classify the animals of the farm: cow, horse and sheep, and the pig also, and the "
    "chicken. Without the pig and chicken the app don't make sense for us.",
])
def test_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, text)
    assert err.value.status == 422


@pytest.mark.parametrize(("text", "classes"), [
    ("cats, dogs and horses. Without the horses it doesn't work", ["cat", "dog", "horse"]),
    ("classes: cats, dogs, horses\nnote: remove the horses", ["cat", "dog"]),  # it changes
    ("lbls -> sneaker;sandal;ankle boot;bag\nimgs: cartoon clipart\nnote: drop 'bag' actually, "
     "client removed it in v2", ["sneaker", "sandal", "ankle boot"]),  # read before too
    ("cat \U0001f431, dog \U0001f436 and bird", ["cat", "dog", "bird"]),  # decoration
    ("@ml-bot cats n dogs pls \U0001f431\U0001f436", ["cat", "dog"]),  # named before
    ("digits 4\ufe0f\u20e3 5\ufe0f\u20e3 6\ufe0f\u20e3", ["four", "five", "six"]),  # keycaps
])
def test_read_more(pacs, text, classes):
    if classes is None:
        with pytest.raises(Problem):
            _resolve(pacs, text)
    else:
        assert _resolve(pacs, text)[0] == classes


def test_nothing_but_keeps_only_what_it_names(pacs):
    assert _resolve(pacs, "Cats, dogs, horses. Actually we don't want anything but cats and "
                          "horses")[0] == ["cat", "horse"]


@pytest.mark.parametrize(("text", "classes"), [
    # stop 52: set 67's leftovers, each a wrong 200 (or a 422) on the stop-51 resolver
    ("Eae, quick one: classifier for the even numbers only, the ones you can divide by two, "
     "from 0 until 8. Images are cartoon style, tipo comic book.",
     ["zero", "two", "four", "six", "eight"]),  # "what even means" between parity and range
    ("even digits, i.e. multiples of two, 0 through 6", ["zero", "two", "four", "six"]),
    ("cats \u2705 dogs \u2705 birds \u274c", ["cat", "dog"]),  # a checklist's cross
    ("classes:\n\u2705 cat\n\u2705 dog\n\u274c horse\n\u2705 cow", ["cat", "dog", "cow"]),
    ("\U0001f431 \u2705 \U0001f436 \u2705 \U0001f434 \u274c", ["cat", "dog"]),
    ("\U0001f45f\u2705 \U0001f461\u2705 \U0001f45c\u274c", ["sneaker", "sandal"]),
    ("cats and dogs for now, later horses", ["cat", "dog"]),  # put off after "for now"
    ("cats and dogs for now, maybe horses and cows later", ["cat", "dog"]),
    ("cats and dogs for now; horses in phase 2", ["cat", "dog"]),
    ("To start: cats, dogs and horses, later maybe more", ["cat", "dog", "horse"]),  # a 422
])
def test_read_leftovers(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    ("cats and dogs for now, and horses", ["cat", "dog", "horse"]),  # nothing put off
    ("cats \u2705 dogs \u2705 horses \u2705", ["cat", "dog", "horse"]),
    ("even numbers from 2 to 8", ["two", "four", "six", "eight"]),
])
def test_leftover_guards(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_checklist_cross_on_an_unknown_class_still_asks_back_a_tick(pacs):
    assert _resolve(pacs, "cats \u2705 dogs \u2705 hamsters \u274c")[0] == ["cat", "dog"]
    with pytest.raises(Problem):
        _resolve(pacs, "cats \u2705 dogs \u2705 hamsters \u2705")
