"""Stop 55 (issue 13): the wrong 200s of held-out sets 78-83, read after their unread scores,
with the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case was answered 200 with a
wrong class set or domain by the stop-54 resolver; the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a retracting verb's pronoun points back at the classes named before it in its sentence
    ("I make the paintings of animals of the countryside - cows, the sheeps, horses. Ah no, the "
     "horses I don't paint anymore, remove them please.", ["cow", "sheep"], "art_painting"),
    ("Smart-closet startup. We need coats, pullovers and dresses detected from the photos users "
     "snap of their wardrobe. Trousers were in the v1 deck but we cut them.",
     ["coat", "pullover", "dress"], "photo"),
    ("We need to identify animals in the comic panels - specifically dogs and cats. Birds were "
     "considered but the curatorial team decided against them.", ["dog", "cat"], "cartoon"),
    # a retraction told as done
    ("ray: set up the shoe classifier for the new client\nvic: which shoes exactly\nray: "
     "sandal + sneaker, they dropped ankle boot", ["sandal", "sneaker"], None),
    # a correction marker after "wait"
    ("dog and cat. wait actually make it dog and sheep, my uncle has sheep and thats way cooler",
     ["dog", "sheep"], None),
    ("Classify elephants and giraffes. The zebras from the old brief, we scrapped them.",
     ["elephant", "giraffe"], None),
    # "do not need" as "don't need"
    ("I need the recognition of sheeps and cows on our farm photos. Horses we do not need, they "
     "are in a other stable.", ["sheep", "cow"], "photo"),
    # "clip art" is one style word before fields are read; taking pictures is a camera's
    ("Issue: need classifier. Items: sneaker, sandal, ankle boot, bag. Style: clip art from our "
     "website icons.", ["sneaker", "sandal", "ankle boot", "bag"], "cartoon"),
    ("t shirts shirts and pull overs I'm taking pictures of the kids old clothes to sell them "
     "online", ["t-shirt", "shirt", "pullover"], "photo"),
    # the pronoun's own chunk names the class; a dismissal that ends with "already"
    ("For now we only need the tops: tees, shirts, pullovers and coats. Dresses go to a "
     "different charity partner so skip those, and trousers are sorted by a separate machine "
     "already.", ["t-shirt", "shirt", "pullover", "coat"], None),
    ("cats and dogs. Bears and birds were in the old app but we cut them", ["cat", "dog"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a pronoun with no class before it in its sentence names nothing
    ("Cats and dogs. The vet removed it from the wall.", ["cat", "dog"], None),
    # a pronoun takes back the nearest chunk's classes, "it" the last one
    ("cats and dogs please; the owner's horse shows up sometimes but ignore it",
     ["cat", "dog"], None),
    # a style word still beats the camera hint
    ("cats and dogs, I'm taking pictures of my pencil drawings", ["cat", "dog"], "sketch"),
    ("sneakers and sandals, on reflection also bags", ["sneaker", "sandal", "bag"], None),
])
def test_guards(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    # a document's "No. 1" is no negation, and "but I need instead …" asks: no longer a wrong
    # class set at 200, but the request stays unclear (422)
    "Requirement R-12: The solution shall classify cartoon and clip-art renderings of the "
    "following livestock: cow, sheep, horse. Amendment No. 1 to this RFP adds 'zebra' to the "
    "list.",
    "I make a mistake before: I asked for bears and birds, but I need instead zebras and "
    "giraffes. Only these two.",
])
def test_no_longer_wrong(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("### Safari Snap\nNeed:\n- giraffe\n- zebra\n- elephant\n- ~~lion~~ not in catalogue, "
     "skip", ["giraffe", "zebra", "elephant"], None),  # "skip" points at the lion's line
    ("Need digits 0-9 for the handwriting benchmark. Hmm, on reflection the 6/9 rotation issue "
     "breaks our pipeline, so drop six and nine. Everything else stays.",
     ["zero", "one", "two", "three", "four", "five", "seven", "eight"], None),
    ("cats, dogs. Item No. 3: zebras", ["cat", "dog", "zebra"], None),  # (422 before)
    ("RFE: animal classifier for dog, horse, cow, sheep, bird.\n\nEdit: removed bird after "
     "discussion with @maintainer, we don't need it.", ["dog", "horse", "cow", "sheep"], None),
    ("cats and dogs, no 1s", ["cat", "dog"], None),
])
def test_guards_after_review_of_the_pool(pacs, text, classes, domain):
    """Read-pool rows the first version of these rules got wrong, and the designator's
    bounds."""
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("text", "classes"), [
    ("Keep cats and dogs, there is no reason to drop them.", ["cat", "dog"]),
    ("Cats and dogs; birds too, there is no reason to drop them.", ["cat", "dog", "bird"]),
    ("Cats and dogs matter; it would be a mistake to remove them.", ["cat", "dog"]),
    ("Dogs and cats: why would anyone skip them?", ["dog", "cat"]),
    ("Classify cats and dogs, and birds; sketches were considered but we decided against "
     "them.", ["cat", "dog", "bird"]),
    ("Classify cats and dogs with a watermark, we removed it.", ["cat", "dog"]),
    ("Cut paper silhouettes of horses and cows - which is which?", ["horse", "cow"]),
    ("They dropped off dogs and cats at the shelter; sort the photos into dog and cat.",
     ["dog", "cat"]),
    ("Horses and cows. But I need neither sheep nor goats.", ["horse", "cow"]),
    ("Classify birds, cats and dogs. Birds were considered but the team decided against them.",
     ["cat", "dog"]),
])
def test_guards_from_the_outside_review(pacs, text, classes):
    """An outside review's probes of the first version: a hypothetical or negated retraction,
    a pronoun pointing at a style or a thing, a verb with a particle, "but I need neither"."""
    assert sorted(_resolve(pacs, text)[0]) == sorted(classes)
