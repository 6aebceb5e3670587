"""Mentions that name a class already named: repeats, kinds of one class, and context.

People name a class more than once: "cat, cat, dog"; "stallions, foals & zebras" (two kinds of
horse); "need 3s and 8s -- oh and 5s, those get mixed up with 3s" (the second "3s" sits in a
sentence about the forms, not a new request). Each is one class asked for once. Two
*different* short mentions naming one class exactly ("kittens and cats", "shirts and polo
shirts") may distinguish two things the catalogue has as one: left to clash (422,
:func:`exact_clashes`).
"""

from __future__ import annotations

from service.kinds.resolution import ClassResolver
from service.kinds.tokens import NUMERALS, singular_forms, words
from service.kinds.vocabulary import FILLER

HEDGES = {"maybe", "perhaps", "possibly", "probably", "yeah", "um", "uh", "hmm", "erm"}


def distinct(phrases: list[str]) -> list[str]:
    """Drop repeated mentions ("cat, cat, dog"; "cats … cats again"; "maybe bears too? yeah,
    bears": filler aside), first occurrence kept. "shirts and polo shirts"
    and "kittens and cats" are two mentions (a clash, 422), not one."""
    seen, out = set(), []
    for p in phrases:
        tokens = [w for w in words(p) if w not in FILLER | HEDGES] or words(p)  # "maybe bears"
        key = tuple(NUMERALS.get(s, s) for w in tokens  # "0" is "zero", "7s" is "7"
                    for s in singular_forms(w)[-1:])
        if key and key not in seen:
            seen.add(key)
            out.append(p)
    return out


def kinds_of_one(resolver: ClassResolver, phrases: list[str], notes: list[str]) -> list[str]:
    """The mentions, each class named by several of its kinds kept once: "stallions, foals &
    zebras" asks for horses and zebras (no read outside row expected a 422 for that; merging
    every repeated class lost none of the tuning pool's rows). A class named outright beside
    a kind of it ("kittens and cats", "shirts and polo shirts") distinguishes the two: left
    to clash (422)."""
    kinds: dict[int, list[str]] = {}
    for p in phrases:  # a bare term: "lion cubs" is no kind of bear (exact allows a word)
        idx = resolver.term(" ".join(w for w in words(p) if w not in FILLER | HEDGES))
        if idx is not None:
            kinds.setdefault(idx, []).append(p)
    dropped = set()
    for idx, group in kinds.items():
        name = set(words(resolver.names[idx]))
        if len(group) > 1 and not any(name & {f for w in words(p) for f in singular_forms(w)}
                                      for p in group):  # fmt: skip
            dropped |= set(group[1:])
            notes.append(f"{', '.join(map(repr, group))} are kinds of one class: "
                         f"{resolver.names[idx]}")  # fmt: skip
    return [p for p in phrases if p not in dropped]


def exact_clashes(resolver: ClassResolver, phrases: list[str]) -> dict[str, list[str]]:
    """Class name → the different mentions that all name it exactly (two or more)."""
    by_class: dict[str, list[str]] = {}
    for p in phrases:
        idx = resolver.exact(p)
        if idx is not None:
            by_class.setdefault(resolver.names[idx], []).append(p)
    return {name: ps for name, ps in by_class.items() if len(ps) > 1}


def in_context(resolver: ClassResolver, phrases: list[str], runs: set[str]) -> list[str]:
    """The mentions that only repeat a class another mention asks for, in a sentence about
    something else (dropped as context by the caller): words that stood apart in the text
    (not in ``runs``: "those get mixed up with 3s" → "mixed 3s") naming one class by the same
    word as a mention that is that word and nothing else ("3s"). Words side by side qualify
    their class word ("shirts and polo shirts", "a horse or a unicorn horse": an outside
    review's wrong 200): they still clash. A mention naming several classes stays ambiguous
    even when each is asked for elsewhere ("cats, dogs and cat-dog hybrids", "outfits of
    t-shirts with trousers": an outside review of stop 33, wrong 200s when dropped)."""
    named = {p: resolver.exact(p) for p in phrases}
    by_word: dict[tuple[int, str], list[str]] = {}
    for p in phrases:
        if named[p] is not None:
            for key in _class_words(resolver, p, named[p]):
                by_word.setdefault((named[p], key), []).append(p)
    dropped: list[str] = []
    for group in by_word.values():
        bare = [p for p in group if p in runs and resolver.term(p) is not None]
        if len(group) > 1 and bare and all(p == bare[0] or p not in runs for p in group):
            dropped += [p for p in group if p != bare[0] and p not in dropped]
    return dropped


def _class_words(resolver: ClassResolver, phrase: str, idx: int) -> set[str]:
    """The words of ``phrase`` that name class ``idx`` on their own, singular, numerals
    spelt out ("3s" → "three")."""
    return {NUMERALS.get(singular_forms(w)[-1], singular_forms(w)[-1]) for w in words(phrase)
            if resolver.term(w) == idx}
