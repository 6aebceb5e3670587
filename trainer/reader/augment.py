"""Counterfactual training requests: a class named but not asked for, or a thing the
catalogue lacks asked for.

Why: on sets 94-97 (stop 59) about half of the reader's own errors were a class the
request named and then excluded ("…scratch the bears", "drop: pullover, coat", "horses also
appear but are out of scope", "MVP: sneaker vs sandal, DON'T add boots"). The reader counts
what a request mentions; few training rows show a mention that is not a request. Each
counterfactual copies a labelled request and appends a clause that names one more class and
rules it out (the label is unchanged), or names one of the asked classes and drops it (the
label loses it). Another copies a request and also asks for something the catalogue lacks
(the label becomes "ask back"). The clauses are varied and the class's surface form too
(name, plural, alias, numeral), so no one wording is learnt.
"""

from __future__ import annotations

import random
from typing import Any

# "{c}": a class's surface form; the label stays the request's own.
EXCLUDE = ("No {c} though.", "Not {c}.", "{c} are out of scope.", "Skip {c}.",
           "We don't need {c}.", "Leave out the {c}.", "{c}: not needed.", "Ignore {c} for now.",
           "{c} can wait until v2.", "(without {c})", "{c} also show up, but we don't care "
           "about them.", "Nothing with {c}, please.", "but not the {c}", "- minus {c}",
           "{c}? No.", "exclude {c}", "Don't add {c}.", "{c} are handled elsewhere.",
           "forget the {c}", "PS: {c} not required.")
# "{c}": one of the asked classes, which the label then loses.
DROP = ("Actually, drop the {c}.", "Wait, scratch the {c}.", "On second thought, no {c}.",
        "Remove {c} from that list.", "Update: {c} is cancelled.", "Correction: without {c}.",
        "Never mind the {c}.", "...minus the {c}, we don't have those.", "Edit: take out {c}.",
        "Oh and {c} isn't needed after all.")
# Things outside Tailor-PACS and not a kind of any of its classes (no "puppy", "penguin",
# "heels", "backpack"; no "ten" or "VIII", which requests use for digits), asked for beside the
# request's classes: the label becomes "ask back". Only for the Tailor-PACS catalogue.
FOREIGN = {"animal": ("lions", "tigers", "rabbits", "unicorns", "foxes", "wolves", "monkeys",
                      "pigs", "goats", "kangaroos", "snakes", "frogs", "dolphins", "turtles"),
           "clothing": ("hats", "caps", "scarves", "gloves", "socks", "belts", "ties",
                        "sunglasses", "watches", "necklaces", "earrings", "umbrellas"),
           "digit": ("the number 10", "the number 11", "two-digit numbers", "the letter A",
                     "letters", "plus signs", "the hash sign", "question marks")}
ASK = ("Also {x}.", "and {x} too", "Plus {x}, please.", "Oh, and {x}.", "+ {x}",
       "We also need {x}.", "{x} as well.", "Can you add {x}?")
NUMERALS = {w: str(i) for i, w in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"))}


def surface(entry: dict[str, Any], rng: random.Random, aliases: bool = True) -> str:
    """One way a request names the class ``entry`` (a catalogue class: ``name`` and optional
    ``aliases``): its name or plural, or one of its first three aliases (with ``aliases``;
    not for a class dropped from a request, where most aliases name a narrower kind: "no pup"
    does not drop every dog). A digit is named by its plural, numeral or "the digit …", never
    by a bare word ("no one", "nil") that reads as plain English."""
    name = entry["name"]
    if name in NUMERALS:
        n = NUMERALS[name]
        return rng.choice((_plural(name), n, n + "s", f"the digit {name}"))
    return rng.choice([name, _plural(name), *((entry.get("aliases") or [])[:3] if aliases
                                              else ())])


def _plural(name: str) -> str:
    """English plural, enough for class names ("dresses", "sheep", "ankle boots")."""
    if name in ("sheep", "deer", "fish") or name.endswith("s") and not name.endswith("ss"):
        return name
    if name.endswith("y") and name[-2:-1] not in tuple("aeiou"):
        return name[:-1] + "ies"  # a user catalogue's "butterfly"
    return name + ("es" if name.endswith(("ss", "sh", "ch", "x")) else "s")


def _own(entry: dict[str, Any], classes: list[dict]) -> list[str]:
    """``entry``'s aliases less those naming another class as a word ("dress shirt" is a
    shirt, but says "dress")."""
    others = {c["name"] for c in classes if c is not entry}
    return [a for a in entry.get("aliases") or []
            if not any(f" {o} " in f" {a} " for o in others)]


def counterfactuals(rows: list[dict], classes: list[dict], share: float, seed: int
                    ) -> list[dict]:
    """New rows: for about ``share`` of the answerable ``rows`` (two or more classes), a copy
    that excludes a class of the same group that is not asked (label unchanged), or, when
    three or more are asked, drops one of them (label without it): half and half where both
    can be made. A two-class request whose group has no other class is left alone."""
    rng = random.Random(seed)
    by_name = {c["name"]: {**c, "aliases": _own(c, classes)} for c in classes}
    classes = list(by_name.values())
    out = []
    for row in rows:
        asked = row.get("expect") or []
        if len(asked) < 2 or rng.random() >= share or not set(asked) <= set(by_name):
            continue
        groups = {by_name[a].get("group") for a in asked}
        others = [c for c in classes if c["name"] not in asked and c.get("group") in groups]
        if len(asked) >= 3 and (not others or rng.random() < 0.5):
            gone = rng.choice(asked)
            clause, expect = rng.choice(DROP).format(c=surface(by_name[gone], rng, False)), \
                [a for a in asked if a != gone]  # fmt: skip
        elif others:
            clause = rng.choice(EXCLUDE).format(c=surface(rng.choice(others), rng))
            expect = list(asked)
        else:
            continue
        clause = clause[0].upper() + clause[1:] if clause[0].islower() and rng.random() < .5 \
            else clause  # fmt: skip
        out.append({**row, "id": f"{row.get('id')}+cf", "expect": expect,
                    "description": f"{row['description'].rstrip()} {clause}"})
    return out


def foreign(rows: list[dict], classes: list[dict], share: float, seed: int) -> list[dict]:
    """New rows: for about ``share`` of the answerable ``rows`` whose classes are all of one
    Tailor-PACS group, a copy that also asks for something of that kind the catalogue lacks
    ("…and rabbits too"), labelled "ask back". Why: the reader answered such requests with
    the classes it knew (stop 59: "unicorn", "caps", "ten and eleven"), and a confident
    rescue of a refusal is a wrong 200."""
    rng = random.Random(seed + 1)
    group = {c["name"]: c.get("group") for c in classes}
    out = []
    for row in rows:
        asked = row.get("expect") or []
        kinds = {group.get(a) for a in asked}
        if len(asked) < 2 or len(kinds) != 1 or rng.random() >= share:
            continue
        kind = next(iter(kinds))
        if kind not in FOREIGN:
            continue
        clause = rng.choice(ASK).format(x=rng.choice(FOREIGN[kind]))
        out.append({**row, "id": f"{row.get('id')}+foreign", "expect": None,
                    "description": f"{row['description'].rstrip()} {clause}"})
    return out
