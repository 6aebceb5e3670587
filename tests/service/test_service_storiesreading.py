"""Stop 39 (issue 13): requests that tell a story around their classes, read as their writers
meant them, with the real bundled MiniLM over Tailor-PACS. Every case but the guards (marked)
was a 422 or a wrong answer at 200 on the stop-38 resolver; most come from held-out set 49,
read at this stop: numbers past nine dropped as stop words ("seven, eight, nine, ten" was 7-9),
"real ones" read as the digit one, a place after "from" matched by its spelling ("safari park"
was a parka), style words lost in a range or beside "everything", "holiday snaps",
"pen-and-ink", "sheep" inside a run of plurals, a school's "class", a range before an "as"
clause, brackets that restate a class, a relative clause listing classes, a shop's goods,
idioms ("bear with me"), purpose clauses ("so we can throw them out") and a digit "like a
single stick"."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds.task_request import resolve_request

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
ANIMALS = ["bear", "bird", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep", "zebra"]


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("Bears and elephants (real ones, not teddies!) from photos of our school trip to the zoo.",
     ["bear", "elephant"], "photo"),  # had one at 200
    ("cats and dogs from the safari park", ["cat", "dog"], None),  # had coat ("parka")
    ("Every single animal you've got - they're all in my holiday snaps from the zoo and the "
     "safari park.", ANIMALS, "photo"),  # had coat, and no domain
    ("I run a small second-hand clothes shop and take photos of everything for the website on "
     "my phone. I need them sorted into dresses, coats and jumpers.",
     ["dress", "coat", "pullover"], "photo"),  # had no domain
    ("pencil sketches of digits 2 to 4", DIGITS[2:5], "sketch"),  # had no domain
    ("cows sheep horses dogs", ["cow", "sheep", "horse", "dog"], None),
    ("Even numbers only please (0 counts as even, my class insisted).", DIGITS[::2], None),
    ("the numbers 0 through 9 as people scribble them on our delivery slips", DIGITS, None),
    ("Camera-trap stills from the wetland reserve: birds, cattle and horses (the horses are "
     "semi-feral ponies).", ["bird", "cow", "horse"], "photo"),
    ("Pen-and-ink field sketches from a 1920s expedition notebook; the classes needed are "
     "elephant and bird.", ["elephant", "bird"], "sketch"),
    ("Our gallery holds a collection of nineteenth-century oil paintings in which horses, a few "
     "hounds and the odd cat appear. We would like to sort the digitised canvases according to "
     "which of these animals is shown.", ["horse", "dog", "cat"], "art_painting"),
    ("My shop sells children's and adults' footwear. I photograph every pair on a white "
     "background and need to know which are sandals, which are sneakers and which are ankle "
     "boots.", ["sandal", "sneaker", "ankle boot"], "photo"),
    ("I'm a behavioural ecologist, not a programmer, so please bear with me. We have about "
     "12,000 stills from motion-triggered cameras placed along a river corridor in Kenya. The "
     "animals that show up that we care about are elephants, giraffes and zebras. Birds trigger "
     "the cameras constantly, and we want those labelled too so we can throw them out.",
     ["elephant", "giraffe", "zebra", "bird"], "photo"),
    ("please bear with me: cats and dogs", ["cat", "dog"], None),  # had bear at 200
    ("cats and dogs, we don't need anything else", ["cat", "dog"], None),  # was asked back
    # from set 48 (unread until scored at the end of this stop's set-49 rules)
    ("for my app i need dog, gato... sorry, cat, and horse. fotos from smartphone",
     ["dog", "cat", "horse"], "photo"),  # dog was taken back at 200
    ("sneakers and sandals, actually no, make it sneakers and ankle boots",
     ["sneaker", "ankle boot"], None),  # sandal was kept at 200
    ("numbers seven and one are always confused by our OCR, make a model only for those two",
     ["seven", "one"], None),
    ("Snapshots of zebras and giraffes from my trip, want to auto-sort my album",
     ["zebra", "giraffe"], "photo"),
    ("my weekend hobby project: sorting my scanned pencil doodles of birds and cats into "
     "folders", ["bird", "cat"], "sketch"),
    ("the nine nonzero digits", DIGITS[1:], None),
    ("photos of cows from the farm and horses", ["cow", "horse"], "photo"),
    # guards: counts past nine still count, a purpose that states the task stays
    ("We keep about forty ewes and twenty cows", ["sheep", "cow"], None),
    ("cats and dogs, ten photos each", ["cat", "dog"], "photo"),
    ("whole clothing group pls, all ten", ["t-shirt", "trouser", "pullover", "dress", "coat",
                                           "sandal", "shirt", "sneaker", "bag", "ankle boot"],
     None),
    ("we have photos so we can sort cats and dogs", ["cat", "dog"], "photo"),
    ("vacas and caballos... sorry, cows and horses", ["cow", "horse"], None),
    ("cats, dogs and horses, actually no dogs", ["cat", "horse"], None),
    ("sort cats from dogs", ["cat", "dog"], None),
    ("cats are needed and dogs", ["cat", "dog"], None),
    ("cats and dogs so I can sort my pencil sketches", ["cat", "dog"], "sketch"),
])
def test_read(pacs, text, classes, domain):
    got, got_domain = resolve_description(pacs, text)
    assert sorted(got) == sorted(classes) and got_domain == domain


@pytest.mark.parametrize("text", [
    "seven, eight, nine, ten",  # was seven, eight, nine at 200
    # guards
    "numbers eleven and two",
    "digits 1 to 3 as well as 7",  # not 1-3: "as well as" adds
    "sheep dogs and cats",  # "sheep dogs" may be sheepdogs
    "cats, dogs and anything else, you choose",
    "recognise cats from llamas",
    # guards from an outside review of this stop's first version (each was wrong at 200)
    "cows horses sheep dogs",  # "sheep dogs" may be sheepdogs
    "cats, dogs and horses (the horses are dropped)",
    "bags, coats and sandals (the sandals are being discontinued)",
    "shirts and dresses (the shirts are mostly t-shirts)",
    "the digits 1 to 4 as cartoons and 9 as a sketch",
    "cats and dogs; don't know about anything else yet",
    "We sell hats and scarves. Classify those plus bags and coats",
    "cats and dogs from the Elephant and Castle branch",
    "a dog sorting game with cats",
])
def test_refused(pacs, text):
    with pytest.raises(Problem):
        resolve_description(pacs, text)


def test_a_digit_like_a_single_stick_is_one(pacs):
    classes = ["the digit that looks like a snowman", "the digit that looks like a single stick"]
    matches, _ = resolve_request(pacs, PersonalizeCreate(classes=classes), pacs.domains)
    assert [m.name for m in matches] == ["eight", "one"]  # was asked back (set 49)
