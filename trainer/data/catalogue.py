"""The Tailor-PACS class catalogue: 30 classes in 3 groups, 4 domains, prompts and definitions.

Prompts feed the text encoder (TAPER's mixer input); definitions never name their class so that
the free-language experiment (TAPER paper §5.1) can describe a class without its name.
`neighbours` orders the other classes of the same group from most to least similar; the task
sampler uses it to draw hard (near) negatives. It was computed once with
`prototype_neighbours` (cosine similarity of centred pixel-mean prototypes over the whole source
set) and is frozen here so that tasks never depend on which images a build happened to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from model_store.domains import DOMAIN_DESCRIPTIONS, DOMAINS
from trainer.data.descriptions import DESCRIPTIONS, MORE

GROUPS = ("digit", "clothing", "animal")
# Words that name several classes of one group and nothing else in the catalogue: the resolver
# reads "footwear only" as these classes when none of them is named (docs/results-resolution)
SUBGROUPS = {"footwear": ("sandal", "sneaker", "ankle boot"),
             # "mammals only, from the animal set" (four read outside rows, stop 36)
             "mammal": ("bear", "cat", "cow", "dog", "elephant", "giraffe", "horse", "sheep",
                        "zebra")}

_DIGITS = {
    "zero": "The numeral for nothing at all, drawn as a closed oval.",
    "one": "The first counting number, written as a single upright stroke.",
    "two": "The numeral for a pair, a curved hook resting on a flat line.",
    "three": "The numeral for a trio, written as a pair of stacked bumps open to the left.",
    "four": "The numeral for a quartet, an open triangle crossed by an upright stroke.",
    "five": "The numeral for the fingers of a hand, a flat top bar above a round belly.",
    "six": "The numeral for half a dozen, a loop at the bottom with a curved stem above it.",
    "seven": "The numeral for the days of a week, a top bar with a long diagonal stroke down.",
    "eight": "The numeral shaped like a snowman, a pair of small loops stacked vertically.",
    "nine": "The largest single-digit numeral, a round loop on top with a tail hanging down.",
}
_CLOTHING = {
    "t-shirt": "A casual short-sleeved top without collar or buttons, pulled on over the head.",
    "trouser": "A garment covering each leg separately from the waist down to the feet.",
    "pullover": "A knitted long-sleeved woollen top put on over the head and worn for warmth.",
    "dress": "A garment for a woman or girl made of a bodice and a skirt in a single piece.",
    "coat": "An outer garment with long sleeves worn over other clothes to keep warm outdoors.",
    "sandal": "An open beach shoe made of a sole held to the foot by straps.",
    "shirt": "A garment for the upper body with a collar, sleeves and buttons down the front.",
    "sneaker": "A soft rubber-soled sports shoe laced over the foot.",
    "bag": "A flexible container with a handle or strap for carrying things around.",
    "ankle boot": "Footwear that covers the foot and rises just above the joint of the lower leg.",
}
_ANIMALS = {
    "bear": "A large heavy mammal with thick fur, a short tail and strong claws.",
    "bird": "A warm-blooded egg-laying animal with feathers, wings and a beak.",
    "cat": "A small tame feline kept as a pet, with soft fur, whiskers and sharp claws.",
    "cow": "A large female farm animal kept for its milk.",
    "dog": "A tame carnivorous mammal that barks, kept as a pet or for herding and hunting.",
    "elephant": "A huge grey mammal with a long trunk, large ears and ivory tusks.",
    "giraffe": "A very tall African mammal with an extremely long neck and a spotted hide.",
    "horse": "A large hoofed mammal with a mane and a long tail, ridden or used to pull carts.",
    "sheep": "A woolly farm animal with a thick fleece, kept for its wool and meat.",
    "zebra": "An African wild equine with bold black and white stripes.",
}
_DEFINITIONS = {"digit": _DIGITS, "clothing": _CLOTHING, "animal": _ANIMALS}
# Other words people use for a class (synonyms, hyponyms, breeds, young and sexed forms): the
# request resolver matches them exactly. Written as a catalogue author would, from common usage.
# Words with a common other sense are left out (an outside review, stop 26: "fried chicken",
# "rubber duck", "water polo", "trail blazers", "bulldog clips", "joggers" were classes at 200).
_ALIASES = {
    "zero": ["nought", "naught", "nil"],
    "t-shirt": ["tee", "tee shirt", "tshirt"],
    "trouser": ["trousers", "pants", "slacks", "jeans", "chinos", "sweatpants", "khakis",
                "denims"],
    "pullover": ["sweater", "jumper", "jersey", "sweatshirt", "hoodie", "cardigan", "knitwear"],
    "dress": ["gown", "frock", "sundress"],
    "coat": ["jacket", "overcoat", "parka", "raincoat", "anorak", "windbreaker", "blazer"],
    "sandal": ["flip flop", "slide", "slipper sandal", "espadrille", "jandal"],
    "shirt": ["blouse", "button down", "dress shirt"],
    "sneaker": ["trainer", "running shoe", "tennis shoe", "sports shoe", "athletic shoe", "kicks",
                "plimsoll"],
    "bag": ["handbag", "purse", "tote", "backpack", "satchel", "shoulder bag", "rucksack",
            "duffel"],
    "ankle boot": ["boot", "bootie", "chelsea boot", "chukka"],
    "bear": ["grizzly", "brown bear", "polar bear", "cub", "panda", "ursine", "ursus arctos"],
    "bird": ["songbird", "sparrow", "parrot", "pigeon", "eagle", "owl", "robin", "chick",
             "budgie", "parakeet", "finch", "seagull", "gull", "pelican", "hummingbird",
             "blackbird", "bluebird", "magpie", "flamingo", "avian", "birb", "birdie"],
    "cat": ["kitten", "kitty", "feline", "tomcat", "moggy", "tabby", "siamese", "felis catus"],
    "cow": ["cattle", "calf", "bull", "ox", "heifer", "steer", "bovine", "holstein", "oxen",
            "bos taurus"],
    "dog": ["puppy", "pup", "hound", "canine", "doggy", "doggie", "pooch", "doggo", "labrador",
            "retriever", "beagle", "poodle", "terrier", "collie", "spaniel", "husky",
            "dachshund", "chihuahua", "corgi", "pug", "rottweiler", "sheepdog", "kelpie",
            "greyhound", "dalmatian", "whippet", "doberman", "mastiff",
            "canis familiaris"],  # not "canis lupus familiaris": "canis lupus" (a wolf) read as dog
    "elephant": ["pachyderm", "loxodonta africana"],
    "horse": ["pony", "stallion", "mare", "foal", "colt", "thoroughbred", "equine", "filly",
              "equus caballus", "equus ferus caballus"],
    "zebra": ["equus quagga"],
    "sheep": ["lamb", "ewe", "ram", "ovine", "ovis aries"],  # Latin adjectives and names (not
    # "giraffa" or "elephas": the speller took "giraff" and "elephan" for them)
}

# Frozen output of prototype_neighbours on the full sources (see module docstring).
_NEIGHBOURS = {
    "zero": "five eight three six two nine four seven one",
    "one": "eight two three five nine six seven four zero",
    "two": "eight six three five four one nine zero seven",
    "three": "five eight two nine zero one seven six four",
    "four": "nine eight seven six five two three zero one",
    "five": "eight three zero nine six four two seven one",
    "six": "two four eight five nine zero three seven one",
    "seven": "nine four eight five three two six zero one",
    "eight": "five three nine two four one six seven zero",
    "nine": "four seven eight five six three two zero one",
    "t-shirt": "shirt|dress|coat|trouser|pullover|bag|ankle boot|sandal|sneaker",
    "trouser": "dress|t-shirt|shirt|coat|pullover|bag|ankle boot|sneaker|sandal",
    "pullover": "coat|shirt|t-shirt|bag|dress|trouser|ankle boot|sandal|sneaker",
    "dress": "trouser|t-shirt|shirt|coat|pullover|bag|ankle boot|sneaker|sandal",
    "coat": "shirt|pullover|t-shirt|dress|bag|trouser|ankle boot|sandal|sneaker",
    "sandal": "sneaker|ankle boot|bag|coat|pullover|shirt|dress|t-shirt|trouser",
    "shirt": "coat|pullover|t-shirt|dress|bag|trouser|ankle boot|sandal|sneaker",
    "sneaker": "sandal|bag|ankle boot|coat|pullover|shirt|dress|trouser|t-shirt",
    "bag": "sandal|coat|ankle boot|sneaker|shirt|pullover|dress|t-shirt|trouser",
    "ankle boot": "sandal|bag|sneaker|coat|pullover|shirt|dress|t-shirt|trouser",
    "bear": "sheep elephant horse cow zebra bird dog cat giraffe",
    "bird": "dog bear sheep horse cat cow zebra elephant giraffe",
    "cat": "dog bird bear giraffe sheep horse zebra elephant cow",
    "cow": "sheep zebra horse elephant bear dog bird cat giraffe",
    "dog": "bird sheep bear cat horse zebra cow elephant giraffe",
    "elephant": "zebra cow sheep bear horse dog bird cat giraffe",
    "giraffe": "dog bird cat sheep zebra bear cow elephant horse",
    "horse": "cow sheep zebra bear elephant dog bird cat giraffe",
    "sheep": "cow zebra horse bear elephant dog bird cat giraffe",
    "zebra": "cow sheep elephant horse bear dog bird cat giraffe",
}

GENERIC_TEMPLATES = ("a photo of {}.", "a picture of {}.", "an image of {}.", "a drawing of {}.")
DOMAIN_TEMPLATES = {
    "photo": ("a photo of {}.", "a photograph of {}.", "a real photo of {}.",
              "a photo of {} in front of a busy background."),
    "art_painting": ("a painting of {}.", "an oil painting of {}.", "an artwork of {}.",
                     "a painted picture of {}."),
    "cartoon": ("a cartoon of {}.", "a cartoon drawing of {}.", "a colourful cartoon of {}.",
                "a clip art of {}."),
    "sketch": ("a sketch of {}.", "a pencil sketch of {}.", "a black and white sketch of {}.",
               "a line drawing of {}."),
}


def _noun_phrase(name: str, group: str | None) -> str:
    """'the digit five', 'an elephant', 'a t-shirt': how a class reads inside a prompt."""
    if group == "digit":
        return f"the digit {name}"
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _group_of(name: str) -> str | None:
    for group, defs in _DEFINITIONS.items():
        if name in defs:
            return group
    return None


def class_prompts(name: str, domain: str | None = None) -> list[str]:
    """Prompt set of a class, generic or for one domain; always len(GENERIC_TEMPLATES) prompts.

    Same length for every domain so prompt embeddings stack into (D, N, P, d) arrays.
    Unknown names (user datasets) are allowed: they are phrased as 'a <name>'.
    """
    if domain is not None and domain not in DOMAIN_TEMPLATES:
        raise ValueError(f"unknown domain {domain!r}; expected one of {DOMAINS}")
    templates = GENERIC_TEMPLATES if domain is None else DOMAIN_TEMPLATES[domain]
    phrase = _noun_phrase(name, _group_of(name))
    return [t.format(phrase) for t in templates]


def _split_neighbours(text: str) -> list[str]:
    return text.split("|") if "|" in text else text.split()


CLASSES: list[dict[str, Any]] = [
    {
        "name": name,
        "group": group,
        "prompts": class_prompts(name),
        "definition": definition,
        "aliases": list(_ALIASES.get(name, [])),
        "descriptions": [*DESCRIPTIONS[name], *MORE[name]],
        "neighbours": _split_neighbours(_NEIGHBOURS[name]),
    }
    for group in GROUPS
    for name, definition in _DEFINITIONS[group].items()
]
CLASS_NAMES = tuple(c["name"] for c in CLASSES)
_BY_NAME = {c["name"]: c for c in CLASSES}


def catalogue_for(names: Sequence[str]) -> list[dict[str, Any]]:
    """Catalogue entries for `names`, in that order; unknown names get group None.

    Neighbours are restricted to the given names so a sub-catalogue (e.g. the tiny build or a
    user dataset) never points outside itself.
    """
    present = set(names)
    entries = []
    for name in names:
        base = _BY_NAME.get(name)
        if base is None:
            entries.append({"name": name, "group": None, "prompts": class_prompts(name),
                            "definition": "", "aliases": [], "descriptions": [],
                            "neighbours": []})
            continue
        entry = dict(base)
        entry["neighbours"] = [n for n in base["neighbours"] if n in present]
        entries.append(entry)
    return entries


def catalogue_json(names: Sequence[str] = CLASS_NAMES) -> dict[str, Any]:
    """The `catalogue.json` document of a TAPER artifact (docs/architecture.md)."""
    present = set(names)
    return {"classes": catalogue_for(names), "groups": list(GROUPS), "domains": list(DOMAINS),
            "domain_descriptions": dict(DOMAIN_DESCRIPTIONS),
            "subgroups": {word: list(members) for word, members in SUBGROUPS.items()
                          if present.issuperset(members)}}


def prototype_neighbours(
    images: np.ndarray, labels: np.ndarray, names: Sequence[str]
) -> dict[str, list[str]]:
    """Order classes by cosine similarity of their centred mean images (nearest first).

    This is how `_NEIGHBOURS` was produced; kept so the frozen table can be re-derived and
    checked, and so new groups can be added the same way.
    """
    flat = images.reshape(len(images), -1).astype(np.float64) / 255.0
    protos = np.stack([flat[labels == c].mean(0) for c in range(len(names))])
    protos -= protos.mean(1, keepdims=True)
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    sim = protos @ protos.T
    return {
        names[c]: [names[i] for i in np.argsort(-sim[c], kind="stable") if i != c]
        for c in range(len(names))
    }
