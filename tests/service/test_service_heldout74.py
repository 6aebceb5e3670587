"""Stop 54 (issue 13): shapes read from held-out sets 72-75 after their first unread score,
with the real bundled MiniLM over Tailor-PACS. Each ``test_read`` case failed on the stop-53
resolver (a 422 or a wrong class set at 200); the guards hold on both."""

from __future__ import annotations

import pytest
from service_testkit import resolve_classes
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds import senses


@pytest.mark.parametrize(("word", "thing"), [
    ("laugh", False), ("difficult", False), ("provenance", False), ("age", False),
    ("lions", True), ("outfits", True), ("hornbills", True), ("grandson", True),
    ("tomas", None), ("grandaughter", None),  # names and typos: WordNet lacks them
    ("slips", True), ("laughs", False),  # a plural counts any sense ("slip" is also a garment)
])
def test_wordnet_things(word, thing):
    """A word is a thing when one of its two commonest noun senses is (WordNet 3.0)."""
    assert senses.thing(word) is thing


@pytest.mark.parametrize(("text", "classes", "domain"), [
    # a leftover that names nothing an image shows is context, even where it asks
    ("lads keep drawing doodles of dogs and cats on the tactics board, want an app for it "
     "for a laugh", ["dog", "cat"], "sketch"),
    ("Please, I need to classify shirt and T-shirt. Sometimes it is difficult for me to tell "
     "the difference, so I humbly ask for your system's help.", ["shirt", "t-shirt"], None),
    # an email's signature block after a closing on its own line or the "--" delimiter
    ("Hi team,\n\nCould you set up a classifier for cats and birds? Photos from our backyard "
     "feeder cams.\n\nThanks,\nDana\n\n--\nDana Whitfield | Operations Lead\nBear Creek "
     "Wildlife Rescue\n123 Horse Hollow Rd\nPhone: (555) 014-7721", ["cat", "bird"], "photo"),
    ("Hello,\n\nFor our uniform store we need trousers and shirts told apart, nothing else.\n\n"
     "Best regards,\nMarco Bellini\nStore Manager - UniFit Workwear\nTel +39 011 555 0199\n"
     "Zero Waste Certified Business 2023\nSent from my iPhone", ["trouser", "shirt"], None),
    ("Please build one for the digits 3, 5 and 8 in the photos of the dials.\n\nCheers,\n"
     "Priya\n\nPriya Natarajan\nField Operations Analyst | Northgrid Utilities\nPlease "
     "consider the environment before printing this email.", ["three", "five", "eight"],
     "photo"),
    # "v" is versus; "et" and "aur" join a list as "and" does
    ("trainers v sandals. changing room floor is a disgrace", ["sneaker", "sandal"], None),
    ("Felis catus et Canis familiaris. Cartoons only.", ["cat", "dog"], "cartoon"),
    ("Mujhe cats aur dogs chahiye", ["cat", "dog"], None),
    # pipe-separated "key: value" fields are fields, not a shell pipe
    ("source: paintings (oil/acrylic) | subjects: cow, horse, dog | priority: high | owner: KM",
     ["cow", "horse", "dog"], "art_painting"),
    ("Ticket #4821 | Subject: classifier setup | Customer requests following classes: T-Shirt, "
     "Trousers, Dress. Priority: low.", ["t-shirt", "trouser", "dress"], None),
    # a Slack export's bracketed speakers, each message a sentence of its own
    ("[Nina 10:31] the kids' range uses cartoon art on the product pages. need to tag which "
     "animal is on each tee: "
     "bear, elephant, giraffe, cow\n[Tom 10:33] zebra?\n[Nina 10:34] zebra print is "
     "discontinued, skip\n[Tom 10:34] ok", ["bear", "elephant", "giraffe", "cow"], "cartoon"),
    ("[Ops-Lead] request for the apparel line: dress, coat, trouser\n[QA] not pullover?\n"
     "[Ops-Lead] no pullover, those go through the knitwear vendor", ["dress", "coat",
                                                                      "trouser"], None),
    # a stock list's columns; a sentence after the rows ends the table
    ("pasting from the Q3 buy plan:\nclass_name,units\ntrouser,1200\nshirt,800\nbag,300\n"
     "please drop bag, accessories team handles that separately", ["trouser", "shirt"], None),
    # a group word alone heads the classes named after it
    ("shoes!! sneakers and sandals for our summer lesson", ["sneaker", "sandal"], None),
    ("uh, shoes. um, all the shoes you have. sandals, sneakers, uh, ankle boots",
     ["sandal", "sneaker", "ankle boot"], None),
    ("PRD: Footwear auto-tagging v1\n- Goal: tag catalogue images by shoe type\n- Scope: "
     "sneakers, sandals, ankle boots", ["sneaker", "sandal", "ankle boot"], None),  # "shoe"
    # a one-word mention that names no thing is no class however near ("kick": sneaker at 200)
    ("horses and cows. kick off", ["horse", "cow"], None),
    # "line" alone is a business line, no style
    ("the pet line covers dogs and cats", ["dog", "cat"], None),
])
def test_read(pacs, text, classes, domain):
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize("text", [
    "cats, dogs and happiness",  # a list item is asked for, thing or not
    "cats and dogs, also emotions",
    # a number's unit is no thing, and its 422 is all that shows the 4 read as a class
    "sorry if wrong forum. my daughter write digits on the tablet, I want app to check 1, 2 "
    "and 3 only. she is 4 years.",
    "Make it detect handwritten plus and minus signs along with the digits 0-9",
    # a block after the closing that still asks, or holds code, is no signature
    "Thanks,\nDana\nP.S. also hamsters",
    "cats and dogs\n\nThanks,\n--\n<script>alert(1)</script>",
    "cat | grep dog",  # a pipe between words, no fields
    "shoes, sneakers and sandals",  # a group word in the list may be a class of its own
    # an outside review of stop 54: what follows a closing is cut only when every line is a
    # signature's; a counted plural with a garment sense is a thing; styles as pipe keys
    "Could you set up cats vs dogs for me?\n\nThanks,\nPriya\n\nForgot to mention, Rabbits "
    "are the main thing we need.",
    "Hi team, we need cats and dogs.\nBest,\nMarta\n\nLast thing: Zebras!",
    "Dresses and coats for the catalogue\nBest\nMaybe Bags later, but Lions for sure",
    "We sell dresses and coats. Slips as well.",
    "Photos: cats | Sketches: dogs",
    # a label's two letters name no class ("FR" was a dress at 200, set 74)
    "FR-1: distinguish t-shirt, shirt and pullover in product photos. FR-2: Outerwear (coats) "
    "is out of scope for v1.",
])
def test_still_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes", "domain"), [
    ("cats and dogs in line drawings", ["cat", "dog"], "sketch"),
    ("cats and dogs, line-art", ["cat", "dog"], "sketch"),
    ("Thanks for the cats and dogs model!\nBest,\nAna\nPS: add horses", None, None),
    ("cats and dogs\nThanks,\nAna\nCat Rescue League", ["cat", "dog"], None),
    ("cats and dogs\nThanks,\nAna\nZebras, Giraffes, Lions", None, None),
    ("cats and dogs\nThanks,\nAna\nAnkle Boots As Well", None, None),
    ("Smith et al. photographed cows and sheep", None, None),  # "smith" asked back
    ("[cat] [dog]", ["cat", "dog"], None),  # bracketed class words are no speakers
    ("Please do sneakers and sandals.\nCheers\nSorry - Ankle Boots as well!",
     ["sneaker", "sandal", "ankle boot"], None),
    ("Dresses with a V shaped back, and coats", ["dress", "coat"], None),  # "V" no "vs"
])
def test_guards(pacs, text, classes, domain):
    """Line drawings stay sketches; a signature's PS is still read; a capitalised class word
    in a signature is a name; "et al." adds no class."""
    if classes is None:
        with pytest.raises(Problem):
            _resolve(pacs, text)
        return
    assert _resolve(pacs, text) == (classes, domain)


@pytest.mark.parametrize(("definitions", "classes"), [
    (["the animal you bet on at the derby", "a striped equine"], ["horse", "zebra"]),
    (["man's best friend", "a curious pet that chases string and purrs"], ["dog", "cat"]),
])
def test_definitions_taken_rival(pacs, definitions, classes):
    """In a list of definitions, a runner-up class that another definition took is no rival:
    "a striped equine" is a zebra once "the animal you bet on at the derby" is the horse."""
    assert resolve_classes(pacs, definitions)[0] == classes


def test_gloss_in_another_language(pacs):
    """A class glossed by a word of another language is that class ("chemises")."""
    assert _resolve(pacs, "The t-shirts and the shirts (chemises). Also the sweaters.") \
        == (["t-shirt", "shirt", "pullover"], None)
