"""What a description says besides its classes: words about the app, read as context.

People wrap the classes they want in sentences about their app, users and data ("As a maths
teacher, I want an app that checks whether each answer box contains a zero, a two …"). Left as
mentions, those words are unknown classes and the request a 422; dropped too eagerly, an
unknown class the user asked for disappears and the answer is a wrong 200. The rules here drop
only words that name no class, lean to none, and stand where context stands (see each
function); what they drop is reported back in the response's ``notes``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from service.kinds.numbers import value_of
from service.kinds.resolution import ClassResolver
from service.kinds.tokens import is_number, words
from service.kinds.vocabulary import FILLER, GENERIC, GROUPS, NEGATIONS

# Words before a numeral that lean to no class are about something else ("a child holds up a
# card showing" 3: 0.21). Chosen when names could end such a mention too: on the tuning pool
# of benchmarks/resolution.py 0.35, 0.40 and 0.45 fixed 8, 9 and 9 requests and made none
# wrong; the lowest of the best.
PREFIX_MAX_SIMILARITY = 0.40
# An unknown mention outside the request's lists may still be a class asked for ("Hi rabbits
# lovers", "Images: mostly ferrets": 0.47-0.48 from the nearest class); below 0.45 it is
# context. Looser bounds fixed more of the tuning pool (0.45: 28 requests, 0.6: 40) with no
# wrong class set there, but let those written guards through; 69 % of 177 everyday things
# named bare (animals, clothes, numbers, vehicles, food) are 0.45 or more from some class.
STRAY_MAX_SIMILARITY = 0.45
_DIGITS = re.compile(r"\d")
_DIGIT_CLASS = re.compile(r"\d(?:s)?")  # "7", "7s"
_BARE_NUMBER = re.compile(r"\d+s?")  # "12", "16s": maybe a class asked for, never a stray
GROUP_SIMILARITY = 0.5  # the classes a group word leans to ("farm": cow 0.58, sheep 0.51)


def context(resolver: ClassResolver, clauses: set[str], asides: set[str],
            wordy: Iterable[str] = (), roles: Iterable[str] = ()) -> list[str]:
    """The mentions that are about the app, not a class: no class word among them, no
    class similar enough to accept, and either from a clause (a chunk of five or more
    words) with three or more content words (words about the project such as "customer"
    count: ``parsing``), from a sentence without any class word
    ("Night shots included."), or any mention in ``wordy``: from a chunk of four or more
    words, passed only when two or more mentions name classes outright ("digits 1/7/9
    only pls, our users keep mixing them up": the user names classes, so "mixing" is not
    one; issue 13's outside sets 6–11 failed mostly on such leftovers). An unknown class
    is a few words in a list ("guinea pig babies", "tigers"), so it stays a mention and
    gets its 422. Similarity here ignores the descriptions: they mention habitats and uses
    ("savanna", "barn") that context sentences share with no intent to name a class."""
    wordy, roles = set(wordy), set(roles)
    candidates = [c for c in dict.fromkeys([*clauses, *asides, *wordy, *roles])
                  if not any(resolver.class_word(w) and (c not in roles or w not in GENERIC)
                             for w in words(c))]  # a "shoe" shop: a word for several classes
    if not candidates:
        return []
    best = resolver.similarities(candidates, core=True).max(axis=1)
    return [c for c, b in zip(candidates, best, strict=True) if b < resolver.threshold
            or c in roles]


def tails(resolver: ClassResolver, mentions: list[str]) -> list[tuple[str, str]]:
    """``(mention, context)`` per mention: a longer mention that ends in a numeral after
    words about something else ("a child holds up a card showing 3", "my toddler writes a
    0") becomes that numeral, and those words context. Only when no class or negation comes
    before it and those words lean to no class (similarity below ``PREFIX_MAX_SIMILARITY``).
    Numerals only: names ended too many other phrases ("frozen food aisle hot dogs", "a
    unicorn horse": an outside review's wrong classes at 200)."""
    found = {}
    for i, mention in enumerate(mentions):
        *before, last = words(mention) or [""]
        if len(before) < 2 or not is_number(last) or resolver.term(last) is None \
                or resolver.exact(mention) is not None:  # fmt: skip
            continue
        if not any(resolver.term(t) is not None or t in NEGATIONS for t in before) \
                and not resolver.classes_in(" ".join(before)):  # fmt: skip
            found[i] = (last, " ".join(before))
    out = [(m, "") for m in mentions]
    if found:
        sims = resolver.similarities([before for _, before in found.values()], core=True)
        for (i, tail), row in zip(found.items(), sims, strict=True):
            if row.max() < PREFIX_MAX_SIMILARITY:
                out[i] = tail
    return out


def groups(resolver: ClassResolver, mentions: list[str]) -> list[str]:
    """The mentions that name a group the request's other classes already cover ("pencil
    drawings of farm animals … sort them into cows, sheep and horses": "farm"): only group
    words (``GROUPS``), and every class it leans to (similarity 0.5 or more) named outright
    by another mention, so that dropping it loses no class ("cats, dogs and farm animals"
    keeps "farm" and gets its 422)."""
    named = {resolver.exact(m) for m in mentions} - {None}
    found = [m for m in mentions if resolver.exact(m) is None and words(m)
             and set(words(m)) <= GROUPS | FILLER and set(words(m)) & GROUPS]  # fmt: skip
    if not found:
        return []
    sims = resolver.similarities(found, core=True)
    return [m for m, row in zip(found, sims, strict=True)
            if set(np.flatnonzero(row >= GROUP_SIMILARITY)) <= named
            and (row >= GROUP_SIMILARITY).any()]  # fmt: skip


def strays(resolver: ClassResolver, phrases: list[str], kept: set[str]) -> list[str]:
    """The unknown mentions that are words about the app, not classes asked for ("Guests
    upload photos from our game drives and we'd like to tag elephants, giraffes and
    zebras"): none of ``kept`` (list items, "cows, sheep and goats"; mentions from a chunk
    that asks, "Also tigers."; ``parsing.Parsed``), naming no class, saying no "not" ("the
    lion we not need" is about a class) and leaning to no class (similarity below
    ``STRAY_MAX_SIMILARITY``, which a measured number outside the lists need not be:
    :func:`_measured`).
    Issue 13's read outside sets failed mostly on such leftovers (113 of their 210 natural
    422s would have been right without them)."""
    candidates = [p for p in phrases if not within(p, kept)
                  and (_measured(p) or not _BARE_NUMBER.fullmatch(p))  # "F-16s": a class?
                  and not NEGATIONS & set(words(p))
                  and not any(resolver.term(w) is not None for w in words(p))]  # "1s 7s"
    if not candidates:
        return []
    best = resolver.similarities(candidates, core=True).max(axis=1)
    return [c for c, b in zip(candidates, best, strict=True) if b < STRAY_MAX_SIMILARITY
            or _measured(c)]  # "q3" is 0.48 from three: a measure, whatever its similarity


def _measured(phrase: str) -> bool:
    """A number that is no digit, with a unit or label ("meter ids 12000", "7th graders",
    "q3", "10k"): its similarity says nothing ("q3" is 0.48 from three). In a list it may
    be a class asked for ("3s, 7s and 10s", "iPhone 15s", "4x4 trucks": an outside review's
    wrong 200s when it counted there too), and "half of 10" computes a digit."""
    tokens = words(phrase)
    numbers = [t for t in tokens if _DIGITS.search(t) and not _DIGIT_CLASS.fullmatch(t)]
    return bool(numbers) and (len(tokens) > 1 or not _BARE_NUMBER.fullmatch(numbers[0])) \
        and value_of(phrase) is None  # "half of 10" computes a number: asked back


def within(phrase: str, listed: set[str]) -> bool:
    """Whether ``phrase`` is one of the ``listed`` mentions or part of one."""
    return any(f" {phrase} " in f" {m} " for m in listed)
